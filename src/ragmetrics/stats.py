"""Paired significance tests over per-query scores, vectorized and seeded.

Every test takes the per-query values of two systems on the same queries and returns a
two-sided p-value for "the mean difference is 0":

- :func:`randomization_test`: Fisher's paired randomization (sign-flip) test; the null
  distribution is built from random sign flips of the differences, many permutations at once.
- :func:`t_test`: Student's paired t-test (same value as ``scipy.stats.ttest_rel``).
- :func:`bootstrap_test`: the paired bootstrap test (Efron & Tibshirani), resampling queries.

Smucker, Allan & Carterette (2007) found the randomization and t-tests to agree closely on
IR data and the bootstrap to be slightly anti-conservative; randomization is the default.
"""

from __future__ import annotations

import math

import numpy as np

from ragmetrics.errors import InvalidParameterError, RagMetricsError

_BATCH = 2_000  # permutations per vectorized batch (bounds memory at batch x queries)


def _differences(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise RagMetricsError(
            f"A paired test needs two equal-length vectors of per-query values; got shapes "
            f"{a.shape} and {b.shape}."
        )
    differences: np.ndarray = a - b
    return differences


def randomization_test(
    a: np.ndarray, b: np.ndarray, *, n_permutations: int = 10_000, seed: int = 0
) -> float:
    """Two-sided p-value of the paired randomization test on ``mean(a - b)``.

    ``p = (1 + #{|mean of sign-flipped d| >= |mean d|}) / (1 + n_permutations)``, so it is
    never 0. Seeded: the same inputs and seed give the same p-value.
    """
    d = _differences(a, b)
    if len(d) == 0:
        return math.nan
    observed = abs(d.mean())
    rng = np.random.default_rng(seed)
    extreme = 0
    done = 0
    tolerance = 1e-12 * max(1.0, observed)
    while done < n_permutations:
        size = min(_BATCH, n_permutations - done)
        signs = rng.integers(0, 2, size=(size, len(d)), dtype=np.int8) * 2 - 1
        means = np.abs(signs @ d) / len(d)
        extreme += int((means >= observed - tolerance).sum())
        done += size
    return (extreme + 1) / (n_permutations + 1)


def t_test(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided p-value of Student's paired t-test (1 when every difference is 0)."""
    d = _differences(a, b)
    n = len(d)
    if n < 2:
        return math.nan
    sd = d.std(ddof=1)
    if sd == 0:
        return 1.0 if d.mean() == 0 else 0.0
    t = d.mean() / (sd / math.sqrt(n))
    return student_t_sf2(abs(t), n - 1)


def bootstrap_test(
    a: np.ndarray, b: np.ndarray, *, n_resamples: int = 10_000, seed: int = 0
) -> float:
    """Two-sided p-value of the paired bootstrap test: resample queries from the differences
    shifted to mean 0, and count means at least as extreme as the observed one."""
    d = _differences(a, b)
    if len(d) == 0:
        return math.nan
    observed = abs(d.mean())
    shifted = d - d.mean()
    rng = np.random.default_rng(seed)
    extreme = 0
    done = 0
    tolerance = 1e-12 * max(1.0, observed)
    while done < n_resamples:
        size = min(_BATCH, n_resamples - done)
        picks = rng.integers(0, len(d), size=(size, len(d)))
        extreme += int((np.abs(shifted[picks].mean(axis=1)) >= observed - tolerance).sum())
        done += size
    return (extreme + 1) / (n_resamples + 1)


def bootstrap_ci(
    values: np.ndarray, *, n_resamples: int = 1_000, level: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean of ``values``."""
    values = np.asarray(values, dtype=np.float64)
    if len(values) == 0:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(n_resamples, len(values)))].mean(axis=1)
    low, high = np.quantile(means, [(1 - level) / 2, 1 - (1 - level) / 2])
    return float(low), float(high)


def effect_size(a: np.ndarray, b: np.ndarray) -> float:
    """Paired Cohen's d (d_z): mean difference / standard deviation of the differences."""
    d = _differences(a, b)
    if len(d) < 2:
        return math.nan
    sd = d.std(ddof=1)
    if sd == 0:
        return 0.0 if d.mean() == 0 else math.copysign(math.inf, d.mean())
    return float(d.mean() / sd)


def adjust(p_values: list[float], method: str | None) -> list[float]:
    """Adjust p-values for multiple comparisons: None, ``"bonferroni"`` or ``"holm"``."""
    if method is None:
        return list(p_values)
    m = len(p_values)
    if method == "bonferroni":
        return [min(1.0, p * m) for p in p_values]
    if method == "holm":
        order = sorted(range(m), key=lambda i: p_values[i])
        adjusted = [0.0] * m
        running = 0.0
        for rank, i in enumerate(order):
            running = max(running, min(1.0, (m - rank) * p_values[i]))
            adjusted[i] = running
        return adjusted
    raise InvalidParameterError(f"correction must be None, 'holm' or 'bonferroni'; got {method!r}.")


def student_t_sf2(t: float, df: float) -> float:
    """Two-sided tail probability ``P(|T| >= t)`` of Student's t with ``df`` degrees of freedom:
    the regularized incomplete beta ``I_{df / (df + t^2)}(df / 2, 1 / 2)``."""
    if t == 0:
        return 1.0
    return _incomplete_beta(df / (df + t * t), df / 2.0, 0.5)


def _incomplete_beta(x: float, a: float, b: float) -> float:
    """Regularized incomplete beta I_x(a, b) by its continued fraction (modified Lentz)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x > (a + 1.0) / (a + b + 2.0):  # the fraction converges fast on this side only
        return 1.0 - _incomplete_beta(1.0 - x, b, a)
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 500):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return math.exp(log_front) * result / a
