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
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ragmetrics._util.registries import add_entry
from ragmetrics.errors import InvalidParameterError, RagMetricsError

__all__ = [
    "BOOTSTRAP",
    "RANDOMIZATION",
    "T_TEST",
    "PairedTestSpec",
    "adjust",
    "bootstrap_ci",
    "bootstrap_cis",
    "bootstrap_test",
    "effect_size",
    "paired_interval",
    "paired_test",
    "paired_tests",
    "randomization_test",
    "register_test",
    "student_t_sf2",
    "t_test",
]

_BATCH = 2_000  # permutations per vectorized batch (bounds memory at batch x queries)
# the signs (+1 for a set bit, -1 for a clear one) of the eight bits of each byte, low first
_BYTE_SIGNS = ((np.arange(256)[:, None] >> np.arange(8)) & 1) * 2.0 - 1.0
_BYTE_SIGN_SUMS = _BYTE_SIGNS.sum(axis=1).astype(np.int8)  # their sum, -8..8
_FLIP_ROWS = 1_000  # permutations drawn at a time
_FLIP_GROUPS = 128  # groups of eight queries looked up at a time (a 256 KB slice of the table)
_BYTE_OFFSETS = np.arange(_FLIP_GROUPS, dtype=np.int64) * 256


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
    return _SignFlips(d, n_permutations, seed).p_value(0.0)


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
    """

    name: str
    title: str
    draws: str | None
    run: Callable[[np.ndarray, float, int, int], tuple[float, float, float]]


_PAIRED_TESTS: dict[str, PairedTestSpec] = {}


def register_test(spec: PairedTestSpec) -> PairedTestSpec:
    """Make ``spec`` a test of :func:`~ragmetrics.compare` (``test=spec.name``)."""
    return add_entry(_PAIRED_TESTS, spec.name, spec, "a paired test")


def paired_tests() -> dict[str, PairedTestSpec]:
    """name -> :class:`PairedTestSpec` of every registered paired test."""
    return dict(_PAIRED_TESTS)


def paired_test(name: str) -> PairedTestSpec:
    """The registered test ``name``; refused with the valid names otherwise."""
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
        >>> p, low, high = paired_interval(np.array([0.5, 0.6, 0.7, 0.4]), np.zeros(4),
        ...                              test="t-test", alpha=0.05)
        >>> bool(p < 0.05), bool(low > 0)
        (True, True)
    """
    spec = paired_test(test)
    d = _differences(a, b)
    if len(d) == 0:
        return math.nan, math.nan, math.nan
    p, low, high = spec.run(d, alpha, n_resamples, seed)
    return p, *_agreeing(p, alpha, low, high)


def _randomization(
    d: np.ndarray, alpha: float, n_resamples: int, seed: int
) -> tuple[float, float, float]:
    """The shifts ``delta`` whose sign-flip test of ``d - delta`` gives ``p >= alpha`` (the
    same permutations as the test)."""
    null = _SignFlips(d, n_resamples, seed)
    return null.p_value(0.0), *null.interval(alpha)


def _t(d: np.ndarray, alpha: float, n_resamples: int, seed: int) -> tuple[float, float, float]:
    """``mean +- t(1 - alpha / 2, n - 1) * sd / sqrt(n)``."""
    p = t_test(d, np.zeros_like(d))
    if len(d) < 2:
        return p, math.nan, math.nan
    half = _t_quantile(alpha, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))
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


def _t_quantile(alpha: float, df: float) -> float:
    """``t`` with ``P(|T| >= t) = alpha`` for Student's t with ``df`` degrees of freedom."""
    low, high = 0.0, 1.0
    while student_t_sf2(high, df) > alpha:
        high *= 2.0
    for _ in range(100):
        middle = (low + high) / 2.0
        if student_t_sf2(middle, df) > alpha:
            low = middle
        else:
            high = middle
    return high


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
    return _bootstrap_p(d, _bootstrap_extremes(d, n_resamples, seed))


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
    """``(1 + #{|M| >= |mean d|}) / (1 + n)``, never 0."""
    observed = abs(float(d.mean()))
    tolerance = 1e-12 * max(1.0, observed)
    return (int((extremes >= observed - tolerance).sum()) + 1) / (len(extremes) + 1)


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


RANDOMIZATION = register_test(
    PairedTestSpec("randomization", "paired randomization test", "permutations", _randomization)
)
T_TEST = register_test(PairedTestSpec("t-test", "paired t-test", None, _t))
BOOTSTRAP = register_test(
    PairedTestSpec("bootstrap", "paired bootstrap test", "resamples", _bootstrap)
)
