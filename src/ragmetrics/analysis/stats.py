"""Paired significance tests over per-query scores, vectorized and seeded.

Every test takes the per-query values of two systems on the same queries and returns a
two-sided p-value for "the mean difference is 0":

- :func:`randomization_test`: Fisher's paired randomization (sign-flip) test; the null
  distribution is built from random sign flips of the differences, many permutations at once.
- :func:`t_test`: Student's paired t-test (same value as ``scipy.stats.ttest_rel``).
- :func:`bootstrap_test`: the paired bootstrap test (Efron & Tibshirani), resampling queries.
- :func:`wilcoxon_test`: the Wilcoxon signed-rank test (ranks, not values: robust to a few
  extreme queries; tests the location of the differences rather than their mean).

Corrections for multiple comparisons are registered beside them (:func:`corrections`):
Bonferroni, Holm and Holm-Sidak bound the family-wise error; Benjamini-Hochberg and
Benjamini-Yekutieli the false discovery rate.

Smucker, Allan & Carterette (2007) found the randomization and t-tests to agree closely on
IR data and the bootstrap to be slightly anti-conservative; randomization is the default.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ragmetrics._util.plugins import load_plugins
from ragmetrics._util.registries import add_entry
from ragmetrics._util.warn import warn
from ragmetrics.analysis._distributions import student_t_sf2, t_quantile
from ragmetrics.analysis._ties import (
    TIE_TOLERANCE,
    as_values,
    checked_seed,
    count_of_draws,
    in_unit_interval,
    no_spread,
    noise_free,
)
from ragmetrics.analysis.systems import tukey_family
from ragmetrics.errors import InvalidParameterError, RagMetricsError, UndefinedMetricWarning

__all__ = [
    "BOOTSTRAP",
    "RANDOMIZATION",
    "TIE_TOLERANCE",
    "TUKEY_HSD",
    "T_TEST",
    "WILCOXON",
    "CorrectionSpec",
    "PairedTestSpec",
    "adjust",
    "bootstrap_ci",
    "bootstrap_cis",
    "bootstrap_test",
    "correction_spec",
    "corrections",
    "effect_size",
    "paired_differences",
    "paired_interval",
    "paired_test",
    "paired_tests",
    "randomization_test",
    "register_correction",
    "register_test",
    "t_test",
    "wilcoxon_test",
]

_BATCH = 2_000  # permutations per vectorized batch (bounds memory at batch x queries)
# the signs (+1 for a set bit, -1 for a clear one) of the eight bits of each byte, low first
_BYTE_SIGNS = ((np.arange(256)[:, None] >> np.arange(8)) & 1) * 2.0 - 1.0
_BYTE_SIGN_SUMS = _BYTE_SIGNS.sum(axis=1).astype(np.int8)  # their sum, -8..8
_FLIP_ROWS = 1_000  # permutations drawn at a time
_FLIP_GROUPS = 128  # groups of eight queries looked up at a time (a 256 KB slice of the table)
_BYTE_OFFSETS = np.arange(_FLIP_GROUPS, dtype=np.int64) * 256


def paired_differences(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a - b`` per query, checked (two equal-length vectors of finite numbers), with the
    differences of float noise (within :data:`TIE_TOLERANCE`) set to exactly 0."""
    a = as_values(a, "The first system's values")
    b = as_values(b, "The second system's values")
    if a.shape != b.shape:
        raise RagMetricsError(
            f"A paired test needs two equal-length vectors of per-query values; got shapes "
            f"{a.shape} and {b.shape}."
        )
    for side, values in (("first", a), ("second", b)):
        bad = np.flatnonzero(~np.isfinite(values))
        if len(bad):
            raise InvalidParameterError(
                f"The {side} system's value at position {int(bad[0])} is "
                f"{float(values[bad[0]])!r}; per-query values must be finite numbers (leave "
                f"out the queries where a metric is undefined, on both sides)."
            )
    with np.errstate(over="ignore", invalid="ignore"):
        differences = noise_free(a, b)
    if not np.isfinite(differences).all():
        at = int(np.flatnonzero(~np.isfinite(differences))[0])
        raise InvalidParameterError(
            f"The difference of the values at position {at} ({float(a[at])!r} and "
            f"{float(b[at])!r}) is beyond float64; scale the values down."
        )
    return differences


def randomization_test(
    a: np.ndarray, b: np.ndarray, *, n_permutations: int = 10_000, seed: int = 0
) -> float:
    """Two-sided p-value of the paired randomization test on ``mean(a - b)``.

    ``p = (1 + #{|mean of sign-flipped d| >= |mean d|}) / (1 + n_permutations)``, so it is
    never 0. Seeded: the same inputs and seed give the same p-value.
    """
    d = paired_differences(a, b)
    n_permutations = count_of_draws(n_permutations, "n_permutations")
    if len(d) == 0:
        return math.nan
    return _SignFlips(d, n_permutations, checked_seed(seed)).p_value(0.0)


class _SignFlips:
    """The randomization test's null distribution, kept as two numbers per permutation (the
    sign-flipped sum of the differences and the sum of the signs), so that the test of any
    shifted difference ``d - delta`` costs one pass over the permutations: what inverting the
    test into a confidence interval needs.

    A permutation is a random bit per query (1: +, 0: -), drawn as bytes. The signed sums of
    each group of eight queries under all 256 bytes are tabled once, so a permutation costs
    one table lookup per eight queries instead of a product per query, looked up a slice
    of the table at a time (10,000 permutations of 100,000 queries: 0.7 s, where a product
    per query took 5.5 s)."""

    def __init__(self, d: np.ndarray, n_permutations: int, seed: int) -> None:
        rng = np.random.default_rng(seed)
        n = len(d)
        groups = -(-n // 8)
        padded = np.zeros(groups * 8)
        padded[:n] = d
        # table[g, byte]: the sum of group g's differences signed by the byte's bits
        table = padded.reshape(groups, 8) @ _BYTE_SIGNS.T
        # the last group's padding bits are no queries: its sign sums count real bits only
        live = np.zeros(8)
        live[: n - 8 * (groups - 1)] = 1.0
        last_signs = _BYTE_SIGNS @ live
        sums, signs_summed = [], []
        for done in range(0, n_permutations, _FLIP_ROWS):
            size = min(_FLIP_ROWS, n_permutations - done)
            flips = rng.integers(0, 256, size=(size, groups), dtype=np.uint8)
            summed = np.zeros(size)
            # a slice of the table at a time, small enough to stay in the cache
            for first in range(0, groups, _FLIP_GROUPS):
                block = table[first : first + _FLIP_GROUPS]
                at = flips[:, first : first + _FLIP_GROUPS] + _BYTE_OFFSETS[: len(block)]
                summed += block.ravel()[at].sum(axis=1)
            sums.append(summed)
            counted = _BYTE_SIGN_SUMS[flips[:, :-1]].sum(axis=1, dtype=np.int64)
            signs_summed.append(counted + last_signs[flips[:, -1]])
        self.n, self.mean = n, float(d.mean())
        self.sums = np.concatenate(sums)
        self.signs = np.concatenate(signs_summed).astype(np.float64)

    def p_value(self, delta: float) -> float:
        """The test's p-value for "the mean difference is ``delta``"."""
        observed = abs(self.mean - delta)
        means = np.abs(self.sums - delta * self.signs) / self.n
        tolerance = 1e-12 * max(1.0, observed)
        extreme = int((means >= observed - tolerance).sum())
        return (extreme + 1) / (len(self.sums) + 1)

    def interval(self, alpha: float) -> tuple[float, float]:
        """Every ``delta`` the test does not reject at ``alpha``: the p-value falls
        monotonically on each side of the mean, so each bound is found by bisection."""
        spread = float(np.abs(self.sums).max()) / self.n + abs(self.mean) + 1.0
        return (
            _boundary(lambda x: self.p_value(x) >= alpha, self.mean, self.mean - spread),
            _boundary(lambda x: self.p_value(x) >= alpha, self.mean, self.mean + spread),
        )


def _boundary(kept: Callable[[float], bool], inside: float, outside: float) -> float:
    """The edge between ``inside`` (kept) and ``outside``, by bisection; infinite when even
    ``outside``, far out, is kept."""
    for _ in range(8):  # push outside out until it is rejected
        if not kept(outside):
            break
        outside = inside + 4.0 * (outside - inside)
    else:
        return math.copysign(math.inf, outside - inside)
    for _ in range(60):
        middle = (inside + outside) / 2.0
        if kept(middle):
            inside = middle
        else:
            outside = middle
    return inside


@dataclass(frozen=True)
class PairedTestSpec:
    """A paired significance test, declared once: :func:`~ragmetrics.compare` runs it, the
    report and the legend say its name, and the command line offers it (``--test``).

    Attributes:
        name: the value of ``test=`` and ``--test``.
        title: how tables and reports name it (``"paired t-test"``).
        draws: what its random draws are called (``"permutations"``), ``None`` when it draws
            nothing (its ``n_resamples`` and ``seed`` are then unused).
        run: ``(d, alpha, n_resamples, seed) -> (p, low, high)``, given the non-empty
            per-query differences: the two-sided p-value of ``mean(d) = 0`` and the
            ``1 - alpha`` interval of the mean difference that inverts the same test.
        family: for a test of all systems at once (Tukey HSD), ``(matrix, alpha,
            n_resamples, seed) -> (p, half)`` from the systems x queries values: every
            pair's p-value (a square matrix) and the half-width of the simultaneous
            interval of a difference of means. Its p-values need no correction; a table
            marks its results as groups of systems that do not differ.
    """

    name: str
    title: str
    draws: str | None
    run: Callable[[np.ndarray, float, int, int], tuple[float, float, float]]
    family: Callable[[np.ndarray, float, int, int], tuple[np.ndarray, float]] | None = None


_PAIRED_TESTS: dict[str, PairedTestSpec] = {}


def register_test(spec: PairedTestSpec) -> PairedTestSpec:
    """Make ``spec`` a test of :func:`~ragmetrics.compare` (``test=spec.name``)."""
    return add_entry(_PAIRED_TESTS, spec.name, spec, "a paired test")


def paired_tests() -> dict[str, PairedTestSpec]:
    """name -> :class:`PairedTestSpec` of every registered paired test (plug-ins' too)."""
    load_plugins()
    return dict(_PAIRED_TESTS)


def paired_test(name: str) -> PairedTestSpec:
    """The registered test ``name``; refused with the valid names otherwise."""
    spec = _PAIRED_TESTS.get(name) if isinstance(name, str) else None
    if spec is None and isinstance(name, str) and load_plugins():
        spec = _PAIRED_TESTS.get(name)
    if spec is None:
        raise InvalidParameterError(
            f"test must be one of {', '.join(map(repr, _PAIRED_TESTS))}; got {name!r}."
        )
    return spec


def paired_interval(
    a: np.ndarray,
    b: np.ndarray,
    *,
    test: str,
    alpha: float,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> tuple[float, float, float]:
    """``(p, low, high)``: the test's p-value for ``mean(a - b) = 0`` and the
    ``1 - alpha`` confidence interval of the mean difference made by inverting the same
    test, so the interval leaves out 0 exactly when ``p < alpha`` (up to ties at the edge).

    Example:
        >>> gains = np.array([0.5, 0.6, 0.7, 0.4, 0.5, 0.6, 0.3, 0.5])
        >>> p, low, high = paired_interval(gains, np.zeros(8), test="t-test", alpha=0.05)
        >>> bool(p < 0.05), bool(low > 0)
        (True, True)
    """
    spec = paired_test(test)
    d = paired_differences(a, b)
    n_resamples = count_of_draws(n_resamples, "n_resamples")
    seed = checked_seed(seed)
    in_unit_interval(alpha, "alpha")
    if len(d) == 0:
        return math.nan, math.nan, math.nan
    p, low, high = spec.run(d, alpha, n_resamples, seed)
    if not math.isnan(p):
        p = max(float(p), exact_floor(len(d)))
    return p, *_agreeing(p, alpha, low, high)


def exact_floor(n: int) -> float:
    """``2 / 2^n``: the smallest p-value the exact sign-flip test of ``n`` queries can give.
    No test in :func:`compare` reports less: with 5 queries or fewer (at alpha = 0.05) the
    data cannot rule out chance, whatever a test assumes."""
    return min(1.0, 2.0 ** (1 - n))


def _randomization(
    d: np.ndarray, alpha: float, n_resamples: int, seed: int
) -> tuple[float, float, float]:
    """The shifts ``delta`` whose sign-flip test of ``d - delta`` gives ``p >= alpha`` (the
    same permutations as the test)."""
    null = _SignFlips(d, n_resamples, seed)
    low, high = null.interval(alpha)
    if (d == 0.0).any():
        # with ties the p-value jumps at a shift of exactly 0 (every query that differs
        # differs one way: any shift past 0 puts all of them on one side); bisection lands
        # within its tolerance of that edge, which is 0
        low, high = (0.0 if abs(end) < 1e-9 else end for end in (low, high))
    return null.p_value(0.0), low, high


def _t(d: np.ndarray, alpha: float, n_resamples: int, seed: int) -> tuple[float, float, float]:
    """``mean +- t(1 - alpha / 2, n - 1) * sd / sqrt(n)``."""
    p = t_test(d, np.zeros_like(d))
    if len(d) < 2:
        return p, math.nan, math.nan
    half = t_quantile(alpha, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))
    return p, float(d.mean() - half), float(d.mean() + half)


def _bootstrap(
    d: np.ndarray, alpha: float, n_resamples: int, seed: int
) -> tuple[float, float, float]:
    """``mean +- q``, ``q`` the ``1 - alpha`` quantile of the absolute resampled means of
    the centred differences (the test's own resamples, one draw for test and interval)."""
    extremes = _bootstrap_extremes(d, n_resamples, seed)
    return _bootstrap_p(d, extremes), *_bootstrap_interval(d, alpha, extremes)


def _bootstrap_interval(d: np.ndarray, alpha: float, extremes: np.ndarray) -> tuple[float, float]:
    """``mean +- h``: ``h`` the largest distance from the mean that the bootstrap test (its
    own resamples, ``extremes``, and its own count) does not reject at ``alpha``."""
    ordered = np.sort(extremes)[::-1]
    # p(delta) = (1 + #{|M| >= |mean - delta|}) / (1 + n) >= alpha needs this many |M| above
    needed = max(1, math.ceil(alpha * (len(ordered) + 1) - 1 - 1e-9))
    if needed > len(ordered):
        return float(d.mean()), float(d.mean())
    half = float(ordered[needed - 1]) + 1e-12 * max(1.0, abs(float(d.mean())))
    return float(d.mean()) - half, float(d.mean()) + half


def _agreeing(p: float, alpha: float, low: float, high: float) -> tuple[float, float]:
    """The interval, its bounds nudged where rounding put them on the wrong side of 0 (a
    bound within a few ulps of 0), so that it holds 0 exactly when ``p >= alpha``."""
    if math.isnan(p) or math.isnan(low) or math.isnan(high):
        return low, high
    if p >= alpha:
        return min(low, 0.0), max(high, 0.0)
    if low <= 0.0 <= high:  # rejected, yet 0 inside by a rounding hair: step past it
        if abs(low) < abs(high):
            low = float(np.nextafter(0.0, 1.0))
        else:
            high = float(np.nextafter(0.0, -1.0))
    return low, high


def _batches(total: int) -> list[int]:
    return [min(_BATCH, total - start) for start in range(0, total, _BATCH)]


def t_test(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided p-value of Student's paired t-test (1 when every difference is 0)."""
    d = paired_differences(a, b)
    n = len(d)
    if n < 2:
        return math.nan
    sd = d.std(ddof=1)
    if no_spread(sd, d):
        # every query differs by the same amount: t is undefined (infinite); the exact
        # sign-flip test of such differences gives 2 / 2^n
        return 1.0 if not d.any() else exact_floor(n)
    t = d.mean() / (sd / math.sqrt(n))
    return student_t_sf2(abs(t), n - 1)


def bootstrap_test(
    a: np.ndarray, b: np.ndarray, *, n_resamples: int = 10_000, seed: int = 0
) -> float:
    """Two-sided p-value of the paired bootstrap test: resample queries from the differences
    shifted to mean 0, and count means at least as extreme as the observed one."""
    d = paired_differences(a, b)
    n_resamples = count_of_draws(n_resamples, "n_resamples")
    if len(d) == 0:
        return math.nan
    return _bootstrap_p(d, _bootstrap_extremes(d, n_resamples, checked_seed(seed)))


def _bootstrap_extremes(d: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """The absolute means of the centred differences over ``n_resamples`` resamples of the
    queries (seeded): the bootstrap test's null distribution."""
    rng = np.random.default_rng(seed)
    centred = d - d.mean()
    return np.concatenate(
        [
            np.abs(centred[rng.integers(0, len(d), size=(size, len(d)))].mean(axis=1))
            for size in _batches(n_resamples)
        ]
    )


def _bootstrap_p(d: np.ndarray, extremes: np.ndarray) -> float:
    """``(1 + #{|M| >= |mean d|}) / (1 + n)``, never 0, and never below ``2 / 2^q`` for
    ``q`` queries: the smallest p-value the exact sign-flip test of the same queries can
    give. With few queries the resampled means barely vary (one query: not at all), and
    the raw count would call a difference of one or two queries significant."""
    if not d.any():
        return 1.0
    observed = abs(float(d.mean()))
    tolerance = 1e-12 * max(1.0, observed)
    raw = (int((extremes >= observed - tolerance).sum()) + 1) / (len(extremes) + 1)
    return max(raw, exact_floor(len(d)))


def bootstrap_ci(
    values: np.ndarray, *, n_resamples: int = 1_000, level: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean of ``values``."""
    return bootstrap_cis([values], n_resamples=n_resamples, level=level, seed=seed)[0]


def bootstrap_cis(
    columns: Sequence[np.ndarray],
    *,
    n_resamples: int = 1_000,
    level: float = 0.95,
    seed: int = 0,
) -> list[tuple[float, float]]:
    """:func:`bootstrap_ci` of each column: columns of one length share the resamples (the
    ones a call per column would draw with the same seed), counted once and applied to all
    of them as one matrix product."""
    if isinstance(columns, (str, bytes)) or not isinstance(columns, Sequence):
        raise InvalidParameterError(f"columns must be a list of vectors; got {columns!r}.")
    columns = [as_values(c, f"Column {i}") for i, c in enumerate(columns)]
    n_resamples = count_of_draws(n_resamples, "n_resamples")
    seed = checked_seed(seed)
    in_unit_interval(level, "level")
    for i, column in enumerate(columns):
        if not np.isfinite(column).all():
            raise InvalidParameterError(f"Column {i} holds NaN or infinite values.")
    out: list[tuple[float, float]] = [(math.nan, math.nan)] * len(columns)
    by_length: dict[int, list[int]] = {}
    for i, column in enumerate(columns):
        by_length.setdefault(len(column), []).append(i)
    quantiles = [(1 - level) / 2, 1 - (1 - level) / 2]
    for n, members in by_length.items():
        if n == 0:
            continue
        matrix = np.stack([np.asarray(columns[i], dtype=np.float64) for i in members], axis=1)
        rng = np.random.default_rng(seed)
        kind = np.uint32 if n < 2**32 else np.int64
        # a few resamples at a time: how often each query is drawn (counted resample by
        # resample, in a count array that stays in the cache), times the values
        rows = max(1, min(n_resamples, (1 << 21) // n))
        counts = np.empty((rows, n))
        means = []
        for done in range(0, n_resamples, rows):
            size = min(rows, n_resamples - done)
            drawn = rng.integers(0, n, size=(size, n), dtype=kind)
            for row in range(size):
                counts[row] = np.bincount(drawn[row], minlength=n)
            means.append(counts[:size] @ matrix / n)
        bounds = np.quantile(np.concatenate(means), quantiles, axis=0)
        for j, i in enumerate(members):
            out[i] = (float(bounds[0, j]), float(bounds[1, j]))
    return out


def effect_size(a: np.ndarray, b: np.ndarray) -> float:
    """Paired Cohen's d (d_z): mean difference / standard deviation of the differences.

    NaN (undefined) for fewer than two queries, and for differences that do not vary but
    are not all 0 (every query +0.25): a standardized effect has no finite value there, and
    an :class:`UndefinedMetricWarning` says so; 0 when no query differs."""
    d = paired_differences(a, b)
    value = standardized_effect(d)
    if math.isnan(value) and len(d) >= 2:
        warn(
            f"Every query differs by the same {float(d.mean()):g}: the standardized effect "
            f"size d_z (mean / sd of the differences) is undefined, reported as NaN. Report "
            f"the difference itself.",
            UndefinedMetricWarning,
        )
    return value


def standardized_effect(d: np.ndarray) -> float:
    """d_z of checked differences, NaN where undefined (what a table shows as n/a)."""
    if len(d) < 2:
        return math.nan
    sd = d.std(ddof=1)
    if no_spread(sd, d):
        return 0.0 if not d.any() else math.nan
    return float(d.mean() / sd)


@dataclass(frozen=True)
class CorrectionSpec:
    """A correction for multiple comparisons, declared once: :func:`~ragmetrics.compare`
    applies it per metric, the legend names it, the command line offers it
    (``--correction``).

    Attributes:
        name: the value of ``correction=`` and ``--correction``.
        title: how the legend names it.
        controls: what it bounds: ``"FWER"`` (the chance of any false discovery) or
            ``"FDR"`` (the expected share of false discoveries among the discoveries).
        adjust: raw p-values -> adjusted p-values (same order).
    """

    name: str
    title: str
    controls: str
    adjust: Callable[[np.ndarray], np.ndarray]


_CORRECTIONS: dict[str, CorrectionSpec] = {}


def register_correction(spec: CorrectionSpec) -> CorrectionSpec:
    """Make ``spec`` a correction of :func:`~ragmetrics.compare` (``correction=spec.name``)."""
    return add_entry(_CORRECTIONS, spec.name, spec, "a correction")


def corrections() -> dict[str, CorrectionSpec]:
    """name -> :class:`CorrectionSpec` of every registered correction (plug-ins' too)."""
    load_plugins()
    return dict(_CORRECTIONS)


def correction_spec(name: str | None) -> CorrectionSpec:
    """The registered correction ``name`` (None: ``"none"``); refused with the valid names."""
    key = "none" if name is None else name
    spec = _CORRECTIONS.get(key) if isinstance(key, str) else None
    if spec is None and isinstance(key, str) and load_plugins():
        spec = _CORRECTIONS.get(key)
    if spec is None:
        raise InvalidParameterError(
            f"correction must be one of {', '.join(map(repr, _CORRECTIONS))} or None; got {name!r}."
        )
    return spec


def adjust(p_values: Sequence[float], method: str | None) -> list[float]:
    """Adjust p-values for multiple comparisons with a registered correction (None, "none",
    "bonferroni", "holm", "holm-sidak", "bh", "by")."""
    spec = correction_spec(method)
    p = as_values(p_values, "The p-values")
    if not len(p):
        return []
    outside = np.flatnonzero(~np.isnan(p) & ~((p >= 0) & (p <= 1)))
    if len(outside):
        at = int(outside[0])
        raise InvalidParameterError(
            f"A p-value must lie in [0, 1]; got {float(p[at])!r} at position {at}."
        )
    # NaN marks a test that was not run (no shared query): it is no comparison of the
    # family, so it neither counts in m nor moves the others
    ran = ~np.isnan(p)
    out = np.full(len(p), math.nan)
    if ran.any():
        adjusted = np.asarray(spec.adjust(p[ran]), dtype=np.float64)
        if (
            adjusted.shape != (int(ran.sum()),)
            or not (np.isfinite(adjusted).all() and (adjusted >= p[ran] - 1e-12).all())
            or (adjusted > 1).any()
        ):
            raise RagMetricsError(
                f"The correction {spec.name!r} returned {adjusted!r} for p-values "
                f"{p[ran]!r}; a correction returns one p-value in [p, 1] per p-value."
            )
        out[ran] = adjusted
    return [float(x) for x in out]


def _step_down(
    p: np.ndarray, per_rank: Callable[[np.ndarray, np.ndarray], np.ndarray]
) -> np.ndarray:
    """Holm-style: sort ascending, adjust the i-th smallest with ``per_rank(p_i, m - i)``,
    carry the running maximum, cap at 1."""
    order = np.argsort(p, kind="stable")
    remaining = np.arange(len(p), 0, -1, dtype=np.float64)
    stepped = np.minimum(np.maximum.accumulate(per_rank(p[order], remaining)), 1.0)
    out = np.empty_like(p)
    out[order] = stepped
    return out


def _step_up(p: np.ndarray, factor: float) -> np.ndarray:
    """Benjamini-Hochberg style: the i-th smallest times ``factor m / i``, then the running
    minimum from the largest down, capped at 1."""
    m = len(p)
    order = np.argsort(p, kind="stable")
    scaled = p[order] * factor * m / np.arange(1, m + 1)
    stepped = np.minimum(np.minimum.accumulate(scaled[::-1])[::-1], 1.0)
    out = np.empty_like(p)
    out[order] = stepped
    return out


def _sidak(p: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``1 - (1 - p)^k``, accurate for small p; a p of 1 stays 1 (log1p(-1) is -inf)."""
    with np.errstate(divide="ignore"):
        result: np.ndarray = -np.expm1(np.log1p(-p) * k)
    return result


register_correction(CorrectionSpec("none", "no", "nothing", lambda p: p.copy()))
register_correction(
    CorrectionSpec("bonferroni", "Bonferroni", "FWER", lambda p: np.minimum(p * len(p), 1.0))
)
register_correction(
    CorrectionSpec("holm", "Holm", "FWER", lambda p: _step_down(p, lambda x, k: x * k))
)
register_correction(
    CorrectionSpec(
        "holm-sidak",
        "Holm-Sidak",
        "FWER",
        lambda p: _step_down(p, _sidak),
    )
)
register_correction(CorrectionSpec("bh", "Benjamini-Hochberg", "FDR", lambda p: _step_up(p, 1.0)))
register_correction(
    CorrectionSpec(
        "by",
        "Benjamini-Yekutieli",
        "FDR",
        lambda p: _step_up(p, float(np.sum(1.0 / np.arange(1, len(p) + 1)))),
    )
)


def wilcoxon_test(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided p-value of the Wilcoxon signed-rank test of ``a - b`` (zero differences
    dropped, ties given average ranks): exact for up to 50 differences without ties or
    zeros, by enumeration of every sign for up to 13 with them, else the normal
    approximation with the tie correction (as ``scipy.stats.wilcoxon`` by default)."""
    d = paired_differences(a, b)
    return _wilcoxon_p(d)


def _signed_ranks(d: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """The nonzero differences' average ranks of ``|d|``, their signs, and whether any
    ranks tie."""
    nonzero = d[d != 0]
    magnitudes = np.abs(nonzero)
    order = np.argsort(magnitudes, kind="stable")
    ranks = np.empty(len(nonzero))
    sorted_values = magnitudes[order]
    starts = np.flatnonzero(np.concatenate([[True], sorted_values[1:] != sorted_values[:-1]]))
    ends = np.concatenate([starts[1:], [len(nonzero)]])
    average = (starts + ends + 1) / 2.0  # 1-based ranks starts+1 .. ends, averaged
    ranks[order] = np.repeat(average, ends - starts)
    return ranks, np.sign(nonzero), bool(np.any(ends - starts > 1))


def _wilcoxon_p(d: np.ndarray) -> float:
    if len(d) == 0:
        return math.nan
    ranks, signs, tied = _signed_ranks(d)
    n = len(ranks)
    if n == 0:
        return 1.0
    r_plus = float(ranks[signs > 0].sum())
    zeros = len(d) - n
    if len(d) <= 50 and not tied and not zeros:
        pmf = _signed_rank_pmf(n)
        low = float(pmf[: math.ceil(r_plus) + 1].sum())
        high = float(pmf[math.floor(r_plus) :].sum())
        return min(1.0, 2.0 * min(low, high))
    if len(d) <= 13:  # every sign pattern of the nonzero ranks, counted
        patterns = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(bool)
        sums = patterns.astype(np.float64) @ ranks
        tolerance = 1e-14 * max(1.0, abs(r_plus))
        low = float(np.mean(sums <= r_plus + tolerance))
        high = float(np.mean(sums >= r_plus - tolerance))
        return min(1.0, 2.0 * min(low, high))
    _, counts = np.unique(np.abs(d[d != 0]), return_counts=True)
    mean = n * (n + 1) / 4.0
    variance = (n * (n + 1) * (2 * n + 1) - float(np.sum(counts**3 - counts)) / 2.0) / 24.0
    if variance <= 0:
        return 1.0
    z = (r_plus - mean) / math.sqrt(variance)
    return min(1.0, math.erfc(abs(z) / math.sqrt(2.0)))


def _signed_rank_pmf(n: int) -> np.ndarray:
    """The exact null distribution of the sum of positive ranks 1..n (no ties)."""
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1.0
    for rank in range(1, n + 1):
        counts[rank:] = counts[rank:] + counts[:-rank].copy()
    return counts / 2.0**n


def _wilcoxon(
    d: np.ndarray, alpha: float, n_resamples: int, seed: int
) -> tuple[float, float, float]:
    """The p-value, and the shifts ``delta`` whose test of ``d - delta`` gives ``p >= alpha``
    (an interval of the location of the differences: the pseudo-median, the median of the
    pairwise averages, where the t-test's interval is of the mean)."""
    p = _wilcoxon_p(d)
    centre = float(np.median(d))
    spread = float(np.ptp(d)) + 1.0

    def kept(x: float) -> bool:
        return _wilcoxon_p(d - x) >= alpha

    if not kept(centre):
        return p, centre, centre
    return p, _boundary(kept, centre, centre - spread), _boundary(kept, centre, centre + spread)


RANDOMIZATION = register_test(
    PairedTestSpec("randomization", "paired randomization test", "permutations", _randomization)
)
T_TEST = register_test(PairedTestSpec("t-test", "paired t-test", None, _t))
BOOTSTRAP = register_test(
    PairedTestSpec("bootstrap", "paired bootstrap test", "resamples", _bootstrap)
)
WILCOXON = register_test(PairedTestSpec("wilcoxon", "Wilcoxon signed-rank test", None, _wilcoxon))
TUKEY_HSD = register_test(
    PairedTestSpec(
        "tukey-hsd",
        "randomized Tukey HSD test",
        "permutations",
        _randomization,  # two systems: permuting within a query is flipping a sign
        tukey_family,
    )
)
