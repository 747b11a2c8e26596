"""When two per-query values are one value: the single rule every paired test, the wins,
ties and losses, the effect sizes and the ANOVA share."""

from __future__ import annotations

import numpy as np

__all__ = ["TIE_TOLERANCE", "no_spread", "noise_free"]

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
