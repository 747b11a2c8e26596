"""When two per-query values are one value: the single rule every paired test, the wins,
ties and losses, the effect sizes and the ANOVA share; and the checks of the numbers every
statistic takes (vectors of values, counts of random draws)."""

from __future__ import annotations

import numpy as np

from ragmetrics.errors import InvalidParameterError

__all__ = [
    "MAX_DRAWS",
    "TIE_TOLERANCE",
    "as_values",
    "checked_seed",
    "count_of_draws",
    "in_unit_interval",
    "no_spread",
    "noise_free",
]

# Two per-query values closer than this (relative to their size, at least 1) are one value
# written twice by float arithmetic (0.1 + 0.2 against 0.3): their difference counts as 0.
TIE_TOLERANCE = 1e-12


def noise_free(b: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``b - a`` with the differences of float noise (within :data:`TIE_TOLERANCE`) set to
    exactly 0."""
    d: np.ndarray = b - a
    d[np.abs(d) <= TIE_TOLERANCE * np.maximum(1.0, np.maximum(abs(a), abs(b)))] = 0.0
    return d


def no_spread(sd: np.ndarray | float, d: np.ndarray) -> np.ndarray:
    """Whether a standard deviation ``sd`` of the differences ``d`` (along the last axis)
    is float noise: every query differs by the same amount, up to rounding (``b + 0.25 -
    b`` varies in the 17th digit)."""
    scale = np.maximum(1.0, np.abs(d).max(axis=-1, initial=0.0))
    return np.asarray(sd <= TIE_TOLERANCE * scale)


def as_values(values: object, what: str) -> np.ndarray:
    """``values`` as a flat float64 vector, or an :class:`InvalidParameterError` naming
    ``what`` when they are not numbers (a string, None, a nested list)."""
    if isinstance(values, (str, bytes)) or values is None:
        raise InvalidParameterError(f"{what} must be a sequence of numbers; got {values!r}.")
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise InvalidParameterError(
            f"{what} must be a sequence of numbers; got {type(values).__name__}."
        ) from None
    if array.ndim != 1:
        raise InvalidParameterError(
            f"{what} must be a flat sequence of numbers; got shape {array.shape}."
        )
    return array


def count_of_draws(value: object, what: str) -> int:
    """A number of permutations or resamples: an integer from 1 to 10 million (a bound that
    keeps a call finite; 10,000 is the default everywhere)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, np.integer))
        or not (1 <= value <= MAX_DRAWS)
    ):
        raise InvalidParameterError(
            f"{what} must be an integer from 1 to {MAX_DRAWS:,}; got {value!r}."
        )
    return int(value)


MAX_DRAWS = 10_000_000


def checked_seed(seed: object) -> int:
    """A random seed: an integer >= 0."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InvalidParameterError(f"seed must be an integer >= 0; got {seed!r}.")
    return int(seed)


def in_unit_interval(value: object, name: str) -> float:
    """A level, a power or an alpha: a number strictly between 0 and 1."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float, np.number))
        or not 0 < value < 1
    ):
        raise InvalidParameterError(f"{name} must be a number in (0, 1); got {value!r}.")
    return float(value)
