"""When two per-query values are one value: the single rule every paired test, the wins,
ties and losses, the effect sizes and the ANOVA share; and the checks of the numbers every
statistic takes (vectors of values, counts of random draws)."""

from __future__ import annotations

import numpy as np

from ragmetrics.errors import InvalidParameterError

__all__ = ["MAX_DRAWS", "TIE_TOLERANCE", "as_values", "count_of_draws", "no_spread", "noise_free"]

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
