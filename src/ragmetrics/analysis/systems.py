"""Statistics over several systems at once, and for planning an experiment.

- :func:`tukey_hsd`: the randomized Tukey HSD test over all systems (Carterette 2012): one
  null distribution (of the largest difference between system means under random
  permutations of the systems within each query) for every pair, so the family-wise error
  holds however many systems are compared; :meth:`TukeyHSD.groups` gives the compact letter
  display (systems sharing a letter do not differ significantly).
- :func:`anova_two_way`: two-way ANOVA without replication (system x query), the variance
  decomposition behind topic-set-size design.
- :func:`tost`: the paired equivalence test (two one-sided t-tests): is ``b`` within
  ``delta`` of ``a``?
- :func:`effect_size_interval`: the paired standardized effect (d_z, and Hedges' g_z) with a
  bootstrap interval: at thousands of queries every difference is "significant", and the
  effect size says whether it matters.
- :func:`topic_set_size`: how many queries a paired t-test needs to detect a difference of
  ``min_diff`` with a given power, from the variance of a pilot (Sakai 2016), with the
  t-test's exact power (the noncentral t distribution, integrated numerically).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ragmetrics._util.warn import warn
from ragmetrics.analysis._distributions import (
    f_sf,
    noncentral_t_cdf,
    normal_quantile,
    student_t_sf2,
    t_quantile,
)
from ragmetrics.analysis._ties import (
    TIE_TOLERANCE,
    as_values,
    checked_seed,
    count_of_draws,
    in_unit_interval,
    no_spread,
    noise_free,
)
from ragmetrics.errors import InvalidParameterError, UndefinedMetricWarning

__all__ = [
    "Anova",
    "EffectSize",
    "Tost",
    "TukeyHSD",
    "anova_two_way",
    "effect_size_interval",
    "paired_t_power",
    "topic_set_size",
    "tost",
    "tukey_hsd",
]

_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_CELLS = 1 << 22  # permutation cells drawn at a time (bounds memory)


def _matrix(scores: Mapping[str, Sequence[float] | np.ndarray]) -> tuple[list[str], np.ndarray]:
    """Systems x queries, checked: two or more systems, the same number of queries each, no
    NaN."""
    if not isinstance(scores, Mapping):
        raise InvalidParameterError(
            f"scores must map each system's name to its per-query values; got "
            f"{type(scores).__name__}."
        )
    names = list(scores)
    if len(names) < 2:
        raise InvalidParameterError(f"This needs two or more systems; got {len(names)}.")
    columns = [as_values(scores[name], f"The values of {name!r}") for name in names]
    lengths = {len(c) for c in columns}
    if len(lengths) != 1:
        raise InvalidParameterError(
            "Every system needs a value for the same queries, in the same order; got "
            + ", ".join(f"{n}: {len(c)}" for n, c in zip(names, columns, strict=True))
            + " values."
        )
    matrix = np.stack(columns)
    if matrix.shape[1] < 2:
        raise InvalidParameterError("This needs two or more queries.")
    if np.isnan(matrix).any():
        raise InvalidParameterError(
            "Some per-query values are NaN (a metric undefined on a query); leave those "
            "queries out of every system first."
        )
    if not np.isfinite(matrix).all():
        raise InvalidParameterError("Per-query values must be finite numbers; some are infinite.")
    return names, matrix


@dataclass(frozen=True)
class TukeyHSD:
    """The randomized Tukey HSD test of several systems.

    Attributes:
        systems: the systems, in the order given; ``means`` their means.
        p_values: ``(a, b)`` -> the p-value of "a and b have the same mean" (both orders).
        alpha: the level :meth:`groups` and ``significant`` use.
        n_permutations: the permutations drawn.
    """

    systems: tuple[str, ...]
    means: tuple[float, ...]
    p_values: Mapping[tuple[str, str], float]
    alpha: float
    n_permutations: int
    higher_is_better: bool = True
    _ranges: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))

    def significant(self, a: str, b: str) -> bool:
        return self.p_values[(a, b)] < self.alpha

    def groups(self) -> dict[str, str]:
        """System -> its letters: systems that share a letter do not differ significantly.
        The best system's group is ``a``. (A pair differs exactly when its means are
        further apart than one critical distance, so each group is a run of systems
        consecutive in rank.)"""
        return letter_groups(
            self.systems,
            self.means,
            lambda a, b: self.significant(a, b),
            higher_is_better=self.higher_is_better,
        )


def letter_groups(
    systems: Sequence[str],
    means: Sequence[float],
    differ: Callable[[str, str], bool],
    *,
    higher_is_better: bool = True,
) -> dict[str, str]:
    """The compact letter display: systems ranked by mean, each maximal run of consecutive
    systems whose first and last do not ``differ`` gets a letter (``a`` for the best)."""
    order = sorted(range(len(systems)), key=lambda i: -means[i] if higher_is_better else means[i])
    runs: list[tuple[int, int]] = []
    for start in range(len(order)):
        end = start
        while end + 1 < len(order) and not differ(systems[order[start]], systems[order[end + 1]]):
            end += 1
        if not runs or end > runs[-1][1]:
            runs.append((start, end))
    letters = dict.fromkeys(systems, "")
    for k, (start, end) in enumerate(runs):
        for i in order[start : end + 1]:
            letters[systems[i]] += _LETTERS[k % 26]
    return letters


def tukey_hsd(
    scores: Mapping[str, Sequence[float] | np.ndarray],
    *,
    n_permutations: int = 10_000,
    alpha: float = 0.05,
    seed: int = 0,
    higher_is_better: bool = True,
) -> TukeyHSD:
    """The randomized Tukey HSD test (Carterette 2012) of systems on the same queries.

    Each permutation shuffles the systems' values within every query (under the null
    hypothesis the systems are exchangeable) and keeps the range of the system means; the
    p-value of a pair is ``(1 + #{range >= |mean a - mean b|}) / (1 + n_permutations)``.

    Example:
        >>> result = tukey_hsd({"a": [0.9, 0.8, 0.7, 0.9], "b": [0.1, 0.2, 0.1, 0.3],
        ...                     "c": [0.8, 0.9, 0.8, 0.7]}, n_permutations=2000)
        >>> result.groups()
        {'a': 'a', 'b': 'b', 'c': 'a'}
    """
    names, matrix = _matrix(scores)
    n_permutations = count_of_draws(n_permutations, "n_permutations")
    _check_level("alpha", alpha)
    checked_seed(seed)
    systems, queries = matrix.shape
    by_query = matrix.T  # queries x systems
    rng = np.random.default_rng(seed)
    per_batch = max(1, _CELLS // (systems * queries))
    ranges = []
    for done in range(0, n_permutations, per_batch):
        size = min(per_batch, n_permutations - done)
        shuffle = rng.random((size, queries, systems)).argsort(axis=2)
        permuted = np.take_along_axis(np.broadcast_to(by_query, shuffle.shape), shuffle, axis=2)
        means = permuted.mean(axis=1)
        ranges.append(means.max(axis=1) - means.min(axis=1))
    null = np.sort(np.concatenate(ranges))
    observed = matrix.mean(axis=1)
    p_values: dict[tuple[str, str], float] = {}
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if i == j:
                continue
            gap = abs(float(observed[i] - observed[j]))
            tolerance = 1e-12 * max(1.0, gap)
            extreme = len(null) - int(np.searchsorted(null, gap - tolerance, side="left"))
            p_values[(a, b)] = (extreme + 1) / (len(null) + 1)
    return TukeyHSD(
        tuple(names),
        tuple(float(m) for m in observed),
        p_values,
        alpha,
        n_permutations,
        higher_is_better,
        null,
    )


@dataclass(frozen=True)
class Anova:
    """Two-way ANOVA without replication (system x query).

    Attributes:
        f_system, p_system: the F statistic and p-value of "the systems have equal means".
        f_query, p_query: the same for the queries (usually huge: queries differ).
        residual_variance: the residual mean square (``sigma^2`` of topic-set-size design).
        df_system, df_query, df_residual: degrees of freedom.
        ss_system, ss_query, ss_residual: sums of squares.
    """

    f_system: float
    p_system: float
    f_query: float
    p_query: float
    residual_variance: float
    df_system: int
    df_query: int
    df_residual: int
    ss_system: float
    ss_query: float
    ss_residual: float


def anova_two_way(scores: Mapping[str, Sequence[float] | np.ndarray]) -> Anova:
    """Two-way ANOVA without replication of systems x queries (the same value as an OLS
    fit of ``value ~ C(system) + C(query)``)."""
    _, matrix = _matrix(scores)
    systems, queries = matrix.shape
    grand = matrix.mean()
    ss_system = queries * float(((matrix.mean(axis=1) - grand) ** 2).sum())
    ss_query = systems * float(((matrix.mean(axis=0) - grand) ** 2).sum())
    residuals = matrix - matrix.mean(axis=1, keepdims=True) - matrix.mean(axis=0) + grand
    ss_residual = float((residuals**2).sum())
    # sums of squares of float noise (values equal up to TIE_TOLERANCE) are 0, as the paired
    # tests and the wins, ties and losses count such differences
    noise = matrix.size * (TIE_TOLERANCE * max(1.0, float(np.abs(matrix).max()))) ** 2
    ss_system, ss_query, ss_residual = (
        0.0 if ss <= noise else ss for ss in (ss_system, ss_query, ss_residual)
    )
    df_s, df_q = systems - 1, queries - 1
    df_r = df_s * df_q
    ms_residual = ss_residual / df_r
    if ms_residual > 0:
        f_s = (ss_system / df_s) / ms_residual
        f_q = (ss_query / df_q) / ms_residual
    else:
        f_s = math.inf if ss_system > 0 else math.nan
        f_q = math.inf if ss_query > 0 else math.nan
    return Anova(
        f_s,
        1.0 if ss_system == 0 else f_sf(f_s, df_s, df_r),
        f_q,
        1.0 if ss_query == 0 else f_sf(f_q, df_q, df_r),
        ms_residual,
        df_s,
        df_q,
        df_r,
        ss_system,
        ss_query,
        ss_residual,
    )


def _paired(
    a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, what: str
) -> tuple[np.ndarray, np.ndarray]:
    """Two systems' per-query values, checked: equal lengths, two or more."""
    x = as_values(a, f"{what}'s first values")
    y = as_values(b, f"{what}'s second values")
    if x.shape != y.shape or len(x) < 2:
        raise InvalidParameterError(f"{what} needs two equal-length vectors of two or more values.")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise InvalidParameterError(
            f"{what} needs finite per-query values; some are NaN or infinite (leave out the "
            f"queries where a metric is undefined, on both sides)."
        )
    return x, y


def _t_sf(t: float, df: float) -> float:
    """One-sided ``P(T >= t)``."""
    half = student_t_sf2(abs(t), df) / 2.0
    return half if t >= 0 else 1.0 - half


@dataclass(frozen=True)
class Tost:
    """The paired equivalence test of ``b`` against ``a`` within ``delta``.

    ``p_value`` is the larger of the two one-sided p-values (``p_lower``: "b - a <=
    -delta", ``p_upper``: "b - a >= delta"); below ``alpha``, the systems are equivalent
    within ``delta``. ``low`` and ``high`` bound the ``1 - 2 alpha`` interval of the mean
    difference, which lies inside ``[-delta, delta]`` exactly when they are."""

    diff: float
    delta: float
    p_lower: float
    p_upper: float
    p_value: float
    low: float
    high: float
    equivalent: bool
    n: int


def tost(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    delta: float,
    *,
    alpha: float = 0.05,
) -> Tost:
    """Two one-sided paired t-tests (Schuirmann): is the mean of ``b - a`` within ``delta``?

    Example:
        >>> r = tost([0.5, 0.6, 0.55, 0.7, 0.65], [0.51, 0.6, 0.56, 0.69, 0.66], 0.05)
        >>> r.equivalent
        True
    """
    x, y = _paired(a, b, "tost")
    _check_level("alpha", alpha)
    if not (isinstance(delta, (int, float)) and math.isfinite(delta) and delta > 0):
        raise InvalidParameterError(f"delta must be a positive number; got {delta!r}.")
    d = noise_free(y, x)
    n = len(d)
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    se = sd / math.sqrt(n)
    df = n - 1
    if no_spread(sd, d):
        inside = abs(mean) < delta
        p_lower = 0.0 if mean > -delta else 1.0
        p_upper = 0.0 if mean < delta else 1.0
        return Tost(mean, delta, p_lower, p_upper, max(p_lower, p_upper), mean, mean, inside, n)
    p_lower = _t_sf((mean + delta) / se, df)
    p_upper = 1.0 - _t_sf((mean - delta) / se, df)
    half = t_quantile(2 * alpha, df) * se
    p = max(p_lower, p_upper)
    return Tost(mean, float(delta), p_lower, p_upper, p, mean - half, mean + half, p < alpha, n)


@dataclass(frozen=True)
class EffectSize:
    """The paired standardized effect of ``b - a``: ``d_z`` (mean / sd of the differences),
    ``g_z`` (d_z with Hedges' small-sample correction), and the bootstrap percentile
    interval of d_z at ``level``."""

    d_z: float
    g_z: float
    low: float
    high: float
    level: float
    n: int


def effect_size_interval(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    level: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> EffectSize:
    """d_z of ``b - a`` with a percentile bootstrap interval (queries resampled)."""
    x, y = _paired(a, b, "effect_size_interval")
    n_resamples = count_of_draws(n_resamples, "n_resamples")
    checked_seed(seed)
    in_unit_interval(level, "level")
    d = noise_free(y, x)
    n = len(d)

    def dz(values: np.ndarray) -> np.ndarray:
        """d_z of each row; a row whose differences do not vary has none: 0 if they are
        all 0, else +-inf (the limit of mean / sd as the spread shrinks)."""
        sd = values.std(axis=-1, ddof=1)
        mean = values.mean(axis=-1)
        spread = ~no_spread(sd, values)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(spread, mean / np.where(spread, sd, 1.0), np.sign(mean) * np.inf)
        out = np.where(~spread & (mean == 0), 0.0, out)
        return np.asarray(out, dtype=np.float64)

    correction = 1.0 - 3.0 / (4.0 * (n - 1) - 1.0) if n > 2 else math.nan
    point = float(dz(d))
    if not math.isfinite(point):
        warn(
            f"Every query differs by the same {float(d.mean()):g}: d_z (mean / sd of the "
            f"differences) is undefined, reported as NaN with a NaN interval. Report the "
            f"difference itself.",
            UndefinedMetricWarning,
        )
        return EffectSize(math.nan, math.nan, math.nan, math.nan, level, n)
    rng = np.random.default_rng(seed)
    rows = max(1, _CELLS // n)
    draws = []
    for done in range(0, n_resamples, rows):
        size = min(rows, n_resamples - done)
        draws.append(dz(d[rng.integers(0, n, size=(size, n))]))
    drawn = np.concatenate(draws)
    quantiles = [(1 - level) / 2, 1 - (1 - level) / 2]
    if np.isfinite(drawn).all():
        low, high = np.quantile(drawn, quantiles)
    else:  # resamples without spread: bounds taken from the draws, never interpolated
        low, high = (
            np.quantile(drawn, quantiles[0], method="lower"),
            np.quantile(drawn, quantiles[1], method="higher"),
        )
    return EffectSize(point, point * correction, float(low), float(high), level, n)


def _check_design(name: str, value: float, *, positive: bool = False, zero: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        raise InvalidParameterError(f"{name} must be a number; got {value!r}.")
    if not math.isfinite(value) or (positive and value <= 0) or (value == 0 and not zero):
        need = "a positive" if positive else "a finite" if zero else "a nonzero"
        need += " number"
        raise InvalidParameterError(f"{name} must be {need}; got {value!r}.")
    return float(value)


def _check_level(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        raise InvalidParameterError(f"{name} must be a number in (0, 1); got {value!r}.")
    if not 1e-12 <= value < 1:
        raise InvalidParameterError(
            f"{name} must be in [1e-12, 1); got {value!r} (smaller levels are beyond the "
            f"precision of the t distribution's tail here)."
        )
    return float(value)


def paired_t_power(n: int, min_diff: float, sd: float, *, alpha: float = 0.05) -> float:
    """The power of the two-sided paired t-test at level ``alpha`` with ``n`` queries, when
    the true mean difference is ``min_diff`` and the differences' sd is ``sd`` (0 for fewer
    than two queries)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise InvalidParameterError(f"n must be a whole number of queries; got {n!r}.")
    _check_design("min_diff", min_diff, zero=True)
    _check_design("sd", sd, positive=True)
    _check_level("alpha", alpha)
    return _power(int(n), min_diff, sd, alpha)


def _power(n: int, min_diff: float, sd: float, alpha: float) -> float:
    if n < 2:
        return 0.0
    df = n - 1
    critical = t_quantile(alpha, df)
    nc = math.sqrt(n) * abs(min_diff) / sd
    power = (1.0 - noncentral_t_cdf(critical, df, nc)) + noncentral_t_cdf(-critical, df, nc)
    return min(1.0, max(0.0, power))


MAX_QUERIES = 10**9  # topic_set_size answers up to this many queries


def topic_set_size(
    min_diff: float,
    *,
    sd: float | None = None,
    pilot: tuple[Sequence[float] | np.ndarray, Sequence[float] | np.ndarray] | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
) -> int:
    """The number of queries a paired t-test needs to detect a mean difference of
    ``min_diff`` with probability ``power`` at level ``alpha`` (Sakai 2016).

    Give the standard deviation of the per-query differences, ``sd``, or a ``pilot``: the
    per-query values of two systems on a pilot set of queries, from which it is estimated.
    The starting point is Sakai's normal approximation; the answer is the smallest ``n``
    whose exact power reaches ``power`` (found by bisection, as power grows with ``n``). A
    design that needs more than a billion queries is refused.

    Example:
        >>> topic_set_size(0.05, sd=0.2)
        128
    """
    if sd is None:
        if pilot is None:
            raise InvalidParameterError("Give sd (of the per-query differences) or a pilot.")
        x, y = _paired(pilot[0], pilot[1], "A pilot")
        sd = float((y - x).std(ddof=1))
    _check_level("alpha", alpha)
    in_unit_interval(power, "power")
    _check_design("min_diff", min_diff)
    if (
        isinstance(sd, bool)
        or not isinstance(sd, (int, float, np.number))
        or not (math.isfinite(sd) and sd > 0)
    ):
        raise InvalidParameterError(
            f"The sd of the differences must be positive; got {sd!r} (a pilot whose systems "
            f"never differ cannot size a study)."
        )
    z_alpha = -normal_quantile(alpha / 2.0)
    z_beta = normal_quantile(power)
    ratio = sd / abs(min_diff)
    guess = ((z_alpha + z_beta) * ratio) ** 2 + z_alpha**2 / 2.0 if ratio < 1e150 else math.inf
    if not guess < MAX_QUERIES:
        raise InvalidParameterError(
            f"Detecting a difference of {min_diff!r} with sd {sd!r} at alpha={alpha!r} and "
            f"power={power!r} needs more than {MAX_QUERIES:,} queries: no test collection "
            f"that size exists. Aim for a larger difference."
        )

    def enough(n: int) -> bool:
        return _power(n, min_diff, sd, alpha) >= power

    low, high = 1, max(2, math.ceil(guess))  # low: too few (1 query has no power)
    while not enough(high):
        low, high = high, high * 2
        if high > 2 * MAX_QUERIES:
            raise InvalidParameterError(
                f"The design needs more than {MAX_QUERIES:,} queries; aim for a larger difference."
            )
    while high - low > 1:
        middle = (low + high) // 2
        if enough(middle):
            high = middle
        else:
            low = middle
    return high


def tukey_family(
    matrix: np.ndarray, alpha: float, n_permutations: int, seed: int
) -> tuple[np.ndarray, float]:
    """Every pair's Tukey HSD p-value, and the critical distance of two means."""
    names = [str(i) for i in range(len(matrix))]
    result = tukey_hsd(
        dict(zip(names, matrix, strict=True)), n_permutations=n_permutations, alpha=alpha, seed=seed
    )
    p = np.ones((len(names), len(names)))
    for (a, b), value in result.p_values.items():
        p[int(a), int(b)] = value
    ranges = result._ranges
    needed = max(1, math.ceil(alpha * (len(ranges) + 1) - 1 - 1e-9))
    half = float(np.sort(ranges)[::-1][needed - 1]) if needed <= len(ranges) else 0.0
    return p, half
