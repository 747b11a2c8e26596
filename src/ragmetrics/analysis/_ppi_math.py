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
    "estimate",
    "ppi_mean",
    "ppi_of_pairs",
    "ppi_of_result",
    "ppi_rows",
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

    ``metric`` names the metric (and ``pair`` the two runs of a difference, b - a)."""

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


def ppi_mean(
    llm_all: Sequence[float] | np.ndarray,
    llm_sample: Sequence[float] | np.ndarray,
    human_sample: Sequence[float] | np.ndarray,
    *,
    alpha: float = 0.05,
) -> tuple[float, float, float]:
    """``(estimate, low, high)``: the prediction-powered mean of a quantity measured by
    people on a random sample (``human_sample``) and by the LLM on every query (``llm_all``)
    and on the same sample (``llm_sample``, aligned with ``human_sample``); a normal interval
    at ``1 - alpha``.

    At least :data:`MIN_HUMAN` (10) human values are needed: fewer cannot show how far
    the LLM is from people, however well they agree.

    Example:
        >>> llm = [0.6, 0.8, 0.7, 0.9, 0.5, 0.6, 0.7, 0.8, 0.4, 0.9, 0.7, 0.6]
        >>> people = [0.5, 0.7, 0.7, 0.9, 0.5, 0.5, 0.6, 0.8, 0.4, 0.8]
        >>> est, low, high = ppi_mean(llm, llm[:10], people)
        >>> round(est, 3), low < est < high
        (0.633, True)
    """
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
    if not (np.isfinite(f_all).all() and np.isfinite(f_n).all() and np.isfinite(y_n).all()):
        raise InvalidParameterError("PPI needs finite values; some are NaN or infinite.")
    in_unit_interval(alpha, "alpha")
    rectifier = y_n - f_n
    estimate = float(f_all.mean() + rectifier.mean())
    variance = f_all.var(ddof=1) / len(f_all) + rectifier.var(ddof=1) / len(y_n)
    half = normal_quantile(1 - alpha / 2) * math.sqrt(variance)
    return estimate, estimate - half, estimate + half


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
            label, nan, nan, nan, *naive, *human, int(keep_all.sum()), int(keep_n.sum()), pair, run
        )
    estimate, low, high = ppi_mean(f_all[keep_all], f_n[keep_n], y_n[keep_n], alpha=alpha)
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


def ppi_of_result(
    llm: EvaluationResult, human: EvaluationResult, *, alpha: float = 0.05
) -> list[PPIEstimate]:
    """Each metric of a run scored on the LLM's labels (``llm``, every query) and on
    people's (``human``, their sample): the prediction-powered estimate of its mean."""
    at_llm, at_human = _aligned_sample(llm, human)
    out = []
    for metric in llm.metrics:
        f_all = np.asarray(llm.column(metric), dtype=np.float64)
        y_n = np.asarray(human.column(metric), dtype=np.float64)[at_human]
        out.append(estimate(metric, f_all, f_all[at_llm], y_n, alpha, run=llm.run_name))
    return out


def ppi_of_pairs(
    llm: Mapping[str, EvaluationResult],
    human: Mapping[str, EvaluationResult],
    pairs: Sequence[tuple[str, str]],
    *,
    alpha: float = 0.05,
) -> list[PPIEstimate]:
    """Each pair's difference (b - a, query by query) on each metric, from each run's
    result on the LLM's labels and on people's: prediction-powered estimates."""
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
    for metric in llm[first].metrics:
        for a, b in pairs:
            f_all = column(llm[b], metric, every) - column(llm[a], metric, every)
            y_all = column(human[b], metric, sampled) - column(human[a], metric, sampled)
            out.append(estimate(metric, f_all, f_all[at_llm], y_all[at_human], alpha, (a, b)))
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
