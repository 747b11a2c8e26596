"""The arithmetic of prediction-powered inference, apart from evaluation (see
:mod:`ragmetrics.analysis.ppi`): ``evaluate`` and ``compare`` call it on their results, and
the module that evaluates for itself builds on it."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmetrics._util.warn import warn
from ragmetrics.analysis._distributions import normal_quantile
from ragmetrics.analysis._ties import as_values, in_unit_interval
from ragmetrics.errors import InvalidParameterError, UndefinedMetricWarning

if TYPE_CHECKING:
    from ragmetrics.engine._result import EvaluationResult

__all__ = [
    "MIN_HUMAN",
    "PPIEstimate",
    "PPIPlan",
    "estimate",
    "ppi_mean",
    "ppi_of_pairs",
    "ppi_of_result",
    "ppi_plan",
    "ppi_rows",
    "tuned_mean",
]

# The interval rests on the spread of the differences between people and the LLM on the
# sample. Two or three labels that agree with the LLM show no spread and would give an
# interval of zero width: below this many, no interval is made.
MIN_HUMAN = 10


@dataclass(frozen=True)
class PPIEstimate:
    """A prediction-powered estimate and its ``1 - alpha`` interval, beside the naive one
    (the LLM's labels taken as the truth) and the one from the human sample alone. The
    estimate and its interval are NaN (NA, with a warning) when fewer than
    :data:`MIN_HUMAN` human-graded queries define the metric; ``n_human`` counts them.

    ``metric`` names the metric (and ``pair`` the two runs of a difference, b - a;
    ``segment`` the slice of queries, when estimated per segment). ``tuning`` is the weight
    ``lambda`` the LLM's labels were given (PPI++): 0 leaves people's labels alone, 1 is
    classic PPI."""

    metric: str
    estimate: float
    low: float
    high: float
    naive: float
    naive_low: float
    naive_high: float
    human_only: float
    human_low: float
    human_high: float
    n_all: int
    n_human: int
    pair: tuple[str, str] | None = None
    run: str | None = None
    tuning: float = math.nan
    segment: str | None = None


def ppi_mean(
    llm_all: Sequence[float] | np.ndarray,
    llm_sample: Sequence[float] | np.ndarray,
    human_sample: Sequence[float] | np.ndarray,
    *,
    alpha: float = 0.05,
    tuning: float | None = None,
) -> tuple[float, float, float]:
    """``(estimate, low, high)``: the prediction-powered mean of a quantity measured by
    people on a random sample (``human_sample``) and by the LLM on every query (``llm_all``)
    and on the same sample (``llm_sample``, aligned with ``human_sample``); a normal interval
    at ``1 - alpha``.

    ``llm_all`` holds the sample's queries too: the LLM's mean is taken over the queries
    people did not grade, so that the two terms of the estimate are independent.
    Power-tuned (PPI++, Angelopoulos, Duchi and Zrnic 2023) by default: the LLM's labels
    are weighted by the ``lambda`` in [0, 1] that makes the interval narrowest, so it is
    never wider than the interval from people's labels alone (``lambda = 0``), and as narrow
    as classic PPI (``lambda = 1``, ``tuning=1.0``) where the LLM agrees well with people.
    ``tuning`` fixes ``lambda`` instead. At least :data:`MIN_HUMAN` (10) human values are
    needed: fewer cannot show how far the LLM is from people, however well they agree.

    Example:
        >>> llm = [0.6, 0.8, 0.7, 0.9, 0.5, 0.6, 0.7, 0.8, 0.4, 0.9, 0.7, 0.6]
        >>> people = [0.5, 0.7, 0.7, 0.9, 0.5, 0.5, 0.6, 0.8, 0.4, 0.8]
        >>> est, low, high = ppi_mean(llm, llm[:10], people)
        >>> round(est, 3), low < est < high
        (0.62, True)
    """
    return tuned_mean(llm_all, llm_sample, human_sample, alpha=alpha, tuning=tuning)[:3]


def tuned_mean(
    llm_all: Sequence[float] | np.ndarray,
    llm_sample: Sequence[float] | np.ndarray,
    human_sample: Sequence[float] | np.ndarray,
    *,
    alpha: float = 0.05,
    tuning: float | None = None,
) -> tuple[float, float, float, float]:
    """:func:`ppi_mean`, and the ``lambda`` it used."""
    f_all, f_n, y_n = _checked_inputs(llm_all, llm_sample, human_sample, alpha)
    if tuning is not None and (
        isinstance(tuning, bool) or not isinstance(tuning, int | float) or not 0 <= tuning <= 1
    ):
        raise InvalidParameterError(f"tuning must be a number in [0, 1] (or None); got {tuning!r}.")
    rest = _Rest.of(f_all, f_n)
    lam = _power_tuning(rest, f_n, y_n) if tuning is None else float(tuning)
    variance = _variance(rest, f_n, y_n, lam)
    if tuning is None and not variance <= _variance(rest, f_n, y_n, 0.0):
        lam, variance = 0.0, _variance(rest, f_n, y_n, 0.0)  # rounding: never wider
    estimate = float(lam * rest.mean + (y_n - lam * f_n).mean()) if lam else float(y_n.mean())
    half = normal_quantile(1 - alpha / 2) * math.sqrt(variance)
    return estimate, estimate - half, estimate + half, lam


def _checked_inputs(
    llm_all: Any, llm_sample: Any, human_sample: Any, alpha: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three vectors of :func:`ppi_mean` as float arrays, refused when they cannot make
    an estimate: unequal sample vectors, too few human labels, a sample longer than every
    query, a value that is not finite, or ``alpha`` outside (0, 1)."""
    f_all = as_values(llm_all, "llm_all")
    f_n = as_values(llm_sample, "llm_sample")
    y_n = as_values(human_sample, "human_sample")
    if f_n.shape != y_n.shape:
        raise InvalidParameterError(
            "llm_sample and human_sample must be equal-length vectors (the same queries)."
        )
    if len(y_n) < MIN_HUMAN or len(f_all) < 2:
        raise InvalidParameterError(
            f"PPI needs {MIN_HUMAN} or more human-graded queries (got {len(y_n)}) and two or "
            f"more LLM-graded ones (got {len(f_all)}): fewer human labels cannot show how far "
            f"the LLM's are from people's, however well they agree."
        )
    if len(f_n) > len(f_all):
        raise InvalidParameterError(
            "llm_all holds every LLM-graded query, the human-graded sample included; it is "
            f"shorter ({len(f_all)}) than the sample ({len(f_n)})."
        )
    if not (np.isfinite(f_all).all() and np.isfinite(f_n).all() and np.isfinite(y_n).all()):
        raise InvalidParameterError("PPI needs finite values; some are NaN or infinite.")
    in_unit_interval(alpha, "alpha")
    return f_all, f_n, y_n


@dataclass(frozen=True)
class _Rest:
    """The LLM's values on the queries people did not grade: ``llm_all`` minus the sample,
    which must be among them (the estimate's two terms are then independent)."""

    n: int
    mean: float
    var: float

    @classmethod
    def of(cls, f_all: np.ndarray, f_n: np.ndarray) -> _Rest:
        n = len(f_all) - len(f_n)
        if n < 2:
            return cls(n, 0.0, 0.0)
        shift = float(f_all.mean())  # sums of squares about the mean: no cancellation
        total = float((f_all - shift).sum() - (f_n - shift).sum())
        squares = float(((f_all - shift) ** 2).sum() - ((f_n - shift) ** 2).sum())
        mean = total / n
        var = max(0.0, (squares - n * mean**2) / (n - 1))
        return cls(n, mean + shift, var)


def _variance(rest: _Rest, f_n: np.ndarray, y_n: np.ndarray, lam: float) -> float:
    """The variance of the estimate with the LLM's labels weighted by ``lam``."""
    labelled = float((y_n - lam * f_n).var(ddof=1)) / len(y_n)
    return labelled + (lam**2 * rest.var / rest.n if lam else 0.0)


def _power_tuning(rest: _Rest, f_n: np.ndarray, y_n: np.ndarray) -> float:
    """The ``lambda`` in [0, 1] that minimizes :func:`_variance`: ``Cov(y, f) / (Var(f) +
    (n / N) Var_rest(f))`` on the sample (N the queries people did not grade), clipped: the
    variance is a parabola in lambda."""
    if rest.n < 2:
        return 0.0  # every query graded by people: their mean is the estimate
    spread = float(f_n.var(ddof=1)) + len(f_n) / rest.n * rest.var
    if not spread > 0:
        return 0.0  # the LLM's labels do not vary: they say nothing
    covariance = float(np.cov(y_n, f_n, ddof=1)[0, 1])
    return float(min(1.0, max(0.0, covariance / spread)))


@dataclass(frozen=True)
class PPIPlan:
    """How many human-graded queries a target interval width needs, from a pilot sample.

    Attributes:
        width: the full width (high - low) asked for.
        n_human: the smallest number of human-graded queries whose power-tuned interval is
            expected to be that narrow; None when even grading every query but two is not
            enough (then ``n_people_only`` says what people alone would need).
        n_people_only: what an interval from people's labels alone would need.
        expected_width: the width expected at ``n_human`` (or with every query graded).
        tuning: the weight of the LLM's labels expected at ``n_human``.
        n_all: the LLM-graded queries; n_pilot: the pilot's human-graded ones.
    """

    width: float
    n_human: int | None
    n_people_only: int
    expected_width: float
    tuning: float
    n_all: int
    n_pilot: int


def ppi_plan(
    llm_all: Sequence[float] | np.ndarray,
    llm_sample: Sequence[float] | np.ndarray,
    human_sample: Sequence[float] | np.ndarray,
    *,
    width: float,
    alpha: float = 0.05,
) -> PPIPlan:
    """How many queries people must grade for a power-tuned interval of ``width`` (full
    width, at ``1 - alpha``), from a pilot: the LLM's values on every query (``llm_all``)
    and on the pilot's queries (``llm_sample``), and people's on those (``human_sample``).

    The pilot gives the spread of the LLM's values, of people's, and how far they move
    together; for each candidate n the interval's expected width is worked out with the
    ``lambda`` best for that n (PPI++), and the smallest n that reaches ``width`` is
    returned, beside what people's labels alone would need. A plan is an expectation: the
    width found after grading varies around it.

    Example:
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> truth = rng.beta(2, 3, 2000)
        >>> llm = np.clip(truth + rng.normal(0, 0.05, 2000), 0, 1)
        >>> plan = ppi_plan(llm, llm[:30], truth[:30], width=0.05)
        >>> plan.n_human < plan.n_people_only
        True
    """
    f_all, f_n, y_n = _checked_inputs(llm_all, llm_sample, human_sample, alpha)
    if isinstance(width, bool) or not isinstance(width, int | float) or not width > 0:
        raise InvalidParameterError(f"width must be a number above 0; got {width!r}.")
    if not math.isfinite(width):
        raise InvalidParameterError(f"width must be finite; got {width!r}.")
    z = normal_quantile(1 - alpha / 2)
    var_f, var_y = float(f_all.var(ddof=1)), float(y_n.var(ddof=1))
    var_fn = float(f_n.var(ddof=1))
    cov = float(np.cov(y_n, f_n, ddof=1)[0, 1])
    people_only = max(MIN_HUMAN, math.ceil((2 * z * math.sqrt(var_y) / width) ** 2))
    big_n = len(f_all)

    def expected(n: int) -> tuple[float, float]:
        rest = big_n - n
        spread = var_fn + n / rest * var_f
        lam = min(1.0, max(0.0, cov / spread)) if spread > 0 else 0.0
        labelled = max(0.0, var_y - 2 * lam * cov + lam**2 * var_fn) / n
        return 2 * z * math.sqrt(labelled + lam**2 * var_f / rest), lam

    for n in range(MIN_HUMAN, big_n - 1):  # expected() is cheap: a scan reads plainly
        got, lam = expected(n)
        if got <= width:
            return PPIPlan(width, n, people_only, got, lam, big_n, len(y_n))
    got, lam = expected(max(MIN_HUMAN, big_n - 2))
    return PPIPlan(width, None, people_only, got, lam, big_n, len(y_n))


def _normal_interval(values: np.ndarray, alpha: float) -> tuple[float, float, float]:
    mean = float(values.mean())
    half = normal_quantile(1 - alpha / 2) * math.sqrt(values.var(ddof=1) / len(values))
    return mean, mean - half, mean + half


def estimate(
    label: str,
    f_all: np.ndarray,
    f_n: np.ndarray,
    y_n: np.ndarray,
    alpha: float,
    pair: tuple[str, str] | None = None,
    run: str | None = None,
    *,
    tuning: float | None = None,
    segment: str | None = None,
) -> PPIEstimate:
    keep_all = ~np.isnan(f_all)
    keep_n = ~(np.isnan(f_n) | np.isnan(y_n))
    if keep_n.sum() < MIN_HUMAN or keep_all.sum() < 2:
        # too few queries define this metric on both sides: NA, counted in n_human
        what = f"{label} ({pair[1]} - {pair[0]})" if pair else label
        warn(
            f"The prediction-powered interval of {what} is NA: {int(keep_n.sum())} human-graded "
            f"queries define it, and PPI needs {MIN_HUMAN}. Grade more of the sample.",
            UndefinedMetricWarning,
        )
        nan = math.nan
        naive = _normal_interval(f_all[keep_all], alpha) if keep_all.sum() >= 2 else (nan,) * 3
        human = _normal_interval(y_n[keep_n], alpha) if keep_n.sum() >= 2 else (nan,) * 3
        return PPIEstimate(
            label,
            nan,
            nan,
            nan,
            *naive,
            *human,
            int(keep_all.sum()),
            int(keep_n.sum()),
            pair,
            run,
            segment=segment,
        )
    estimate, low, high, lam = tuned_mean(
        f_all[keep_all], f_n[keep_n], y_n[keep_n], alpha=alpha, tuning=tuning
    )
    naive = _normal_interval(f_all[keep_all], alpha)
    human = _normal_interval(y_n[keep_n], alpha)
    return PPIEstimate(
        label,
        estimate,
        low,
        high,
        *naive,
        *human,
        int(keep_all.sum()),
        int(keep_n.sum()),
        pair,
        run,
        lam,
        segment,
    )


def _aligned_sample(llm: EvaluationResult, human: EvaluationResult) -> tuple[list[int], list[int]]:
    """Positions, in each result, of the queries people graded (every one must be among the
    queries the LLM graded: a sample of them)."""
    on_llm = {q: i for i, q in enumerate(llm.query_ids)}
    unknown = [q for q in human.query_ids if q not in on_llm]
    if unknown:
        shown = ", ".join(map(repr, unknown[:3])) + (", ..." if len(unknown) > 3 else "")
        raise InvalidParameterError(
            f"{len(unknown)} of the {len(human.query_ids)} human-graded queries are not among "
            f"the queries the LLM graded ({shown}); people grade a sample of the LLM-graded "
            f"queries. Check that both use the same query ids (case, prefixes)."
        )
    sample = [(on_llm[q], i) for i, q in enumerate(human.query_ids)]
    if len(sample) < MIN_HUMAN:
        raise InvalidParameterError(
            f"PPI needs people's grades for {MIN_HUMAN} or more of the queries the LLM graded; "
            f"got {len(sample)}."
        )
    return [a for a, _ in sample], [b for _, b in sample]


def _slices(
    every: Sequence[str], at_llm: Sequence[int], segments: Mapping[str, Any] | None
) -> list[tuple[str | None, np.ndarray, np.ndarray]]:
    """The whole set, then each segment: its name, which of ``every`` query it holds, and
    which of the human sample (a query the mapping leaves out is in no segment)."""
    whole = np.ones(len(every), dtype=bool)
    out: list[tuple[str | None, np.ndarray, np.ndarray]] = [(None, whole, whole[at_llm])]
    if segments is None:
        return out
    if not isinstance(segments, Mapping):
        raise InvalidParameterError(
            f"segments maps each query id to its segment; got {type(segments).__name__}."
        )
    labels = [segments.get(q) for q in every]
    for name in dict.fromkeys(str(label) for label in labels if label is not None):
        inside = np.array([label is not None and str(label) == name for label in labels])
        out.append((name, inside, inside[at_llm]))
    return out


def ppi_of_result(
    llm: EvaluationResult,
    human: EvaluationResult,
    *,
    alpha: float = 0.05,
    segments: Mapping[str, Any] | None = None,
) -> list[PPIEstimate]:
    """Each metric of a run scored on the LLM's labels (``llm``, every query) and on
    people's (``human``, their sample): the prediction-powered estimate of its mean; then,
    with ``segments`` (query id -> segment), the same within each segment."""
    at_llm, at_human = _aligned_sample(llm, human)
    out = []
    for segment, inside, sampled in _slices(llm.query_ids, at_llm, segments):
        for metric in llm.metrics:
            f_all = np.asarray(llm.column(metric), dtype=np.float64)
            y_n = np.asarray(human.column(metric), dtype=np.float64)[at_human]
            f_n = f_all[at_llm]
            out.append(
                estimate(
                    metric,
                    f_all[inside],
                    f_n[sampled],
                    y_n[sampled],
                    alpha,
                    run=llm.run_name,
                    segment=segment,
                )
            )
    return out


def ppi_of_pairs(
    llm: Mapping[str, EvaluationResult],
    human: Mapping[str, EvaluationResult],
    pairs: Sequence[tuple[str, str]],
    *,
    alpha: float = 0.05,
    segments: Mapping[str, Any] | None = None,
) -> list[PPIEstimate]:
    """Each pair's difference (b - a, query by query) on each metric, from each run's
    result on the LLM's labels and on people's: prediction-powered estimates; then, with
    ``segments``, within each segment."""
    first = next(iter(llm))
    every = list(llm[first].query_ids)
    sampled = list(human[first].query_ids)

    def column(result: EvaluationResult, metric: str, order: list[str]) -> np.ndarray:
        values = np.asarray(result.column(metric), dtype=np.float64)
        if list(result.query_ids) == order:
            return values
        where = {q: i for i, q in enumerate(result.query_ids)}
        return np.array([values[where[q]] if q in where else np.nan for q in order])

    at_llm, at_human = _aligned_sample(llm[first], human[first])
    out = []
    for segment, inside, in_sample in _slices(every, at_llm, segments):
        for metric in llm[first].metrics:
            for a, b in pairs:
                f_all = column(llm[b], metric, every) - column(llm[a], metric, every)
                y_all = column(human[b], metric, sampled) - column(human[a], metric, sampled)
                f_n, y_n = f_all[at_llm], y_all[at_human]
                out.append(
                    estimate(
                        metric,
                        f_all[inside],
                        f_n[in_sample],
                        y_n[in_sample],
                        alpha,
                        (a, b),
                        segment=segment,
                    )
                )
    return out


def ppi_rows(estimates: Sequence[PPIEstimate]) -> tuple[list[str], list[list[Any]]]:
    """Headers and one row per estimate: the prediction-powered value and interval beside
    the naive one (LLM labels as truth) and the human sample's alone."""

    def interval(low: float, high: float) -> str:
        return f"[{low:.4f}, {high:.4f}]"

    headers = [
        "metric",
        "of",
        "PPI",
        "PPI CI",
        "naive",
        "naive CI",
        "people only",
        "people CI",
        "n LLM",
        "n people",
    ]
    rows = [
        [
            e.metric,
            f"{e.pair[1]} - {e.pair[0]}" if e.pair else (e.run or "run"),
            e.estimate,
            interval(e.low, e.high),
            e.naive,
            interval(e.naive_low, e.naive_high),
            e.human_only,
            interval(e.human_low, e.human_high),
            e.n_all,
            e.n_human,
        ]
        for e in estimates
    ]
    return headers, rows
