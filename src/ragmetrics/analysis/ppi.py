"""Intervals that stay valid when the labels come from an LLM: prediction-powered inference.

A golden set graded by an LLM gives every query a metric value, but the LLM errs, and an
interval computed as if its labels were the truth is centred on the wrong value. People grade
a sample of the queries (the audit's sample). Prediction-powered inference (Angelopoulos,
Bates, Fannjiang, Jordan and Zrnic, Science 2023) combines both: the mean over all queries
with the LLM's labels, corrected by the mean, over the human sample, of how far the LLM's
value of a query is from the people's,

    estimate = mean_all(m_llm) + mean_sample(m_human - m_llm)

with the variance of both terms added. The interval is valid whatever the LLM's bias, as long
as the human sample is a random sample of the queries; it is narrower than an interval from
the human sample alone when the LLM agrees well with people. Oosterhuis et al. (2024) apply
it to IR metrics, ARES (Saad-Falcon et al. 2024) to RAG judges. The same holds for the
difference of two runs, query by query.

:func:`ppi_mean` is the estimator on numbers; :func:`ppi_evaluate` and :func:`ppi_compare`
compute the metrics under both labelings and apply it to each metric and each pair.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragmetrics.analysis.distributions import normal_quantile
from ragmetrics.errors import InvalidParameterError

__all__ = ["PPIEstimate", "ppi_compare", "ppi_evaluate", "ppi_mean"]


@dataclass(frozen=True)
class PPIEstimate:
    """A prediction-powered estimate and its ``1 - alpha`` interval, beside the naive one
    (the LLM's labels taken as the truth) and the one from the human sample alone.

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

    Example:
        >>> est, low, high = ppi_mean([0.6, 0.8, 0.7, 0.9], [0.6, 0.8], [0.5, 0.7])
        >>> round(est, 3)
        0.65
    """
    f_all = np.asarray(llm_all, dtype=np.float64)
    f_n = np.asarray(llm_sample, dtype=np.float64)
    y_n = np.asarray(human_sample, dtype=np.float64)
    if f_n.shape != y_n.shape or f_n.ndim != 1:
        raise InvalidParameterError(
            "llm_sample and human_sample must be equal-length vectors (the same queries)."
        )
    if len(y_n) < 2 or len(f_all) < 2:
        raise InvalidParameterError("PPI needs two or more human-graded and LLM-graded values.")
    if not 0 < alpha < 1:
        raise InvalidParameterError(f"alpha must be in (0, 1); got {alpha!r}.")
    rectifier = y_n - f_n
    estimate = float(f_all.mean() + rectifier.mean())
    variance = f_all.var(ddof=1) / len(f_all) + rectifier.var(ddof=1) / len(y_n)
    half = normal_quantile(1 - alpha / 2) * math.sqrt(variance)
    return estimate, estimate - half, estimate + half


def _normal_interval(values: np.ndarray, alpha: float) -> tuple[float, float, float]:
    mean = float(values.mean())
    half = normal_quantile(1 - alpha / 2) * math.sqrt(values.var(ddof=1) / len(values))
    return mean, mean - half, mean + half


def _columns(
    qrels: Any, run: Any, metrics: Sequence[str], query_ids: Sequence[str], **options: Any
) -> dict[str, np.ndarray]:
    from ragmetrics.engine.evaluation import evaluate

    result = evaluate(qrels, run, list(metrics), missing="zero", **options)
    where = {q: i for i, q in enumerate(result.query_ids)}
    out = {}
    for metric in result.metrics:
        column = result.column(metric)
        out[metric] = np.array([column[where[q]] if q in where else np.nan for q in query_ids])
    return out


def _sample(
    llm_qrels: Mapping[str, Any], human_qrels: Mapping[str, Any]
) -> tuple[list[str], list[str]]:
    every = list(llm_qrels)
    sample = [q for q in human_qrels if q in llm_qrels]
    if len(sample) < 2:
        raise InvalidParameterError(
            "PPI needs people's grades for two or more of the queries the LLM graded; "
            f"{len(sample)} of the human-graded queries are among them."
        )
    return every, sample


def _estimate(
    label: str,
    f_all: np.ndarray,
    f_n: np.ndarray,
    y_n: np.ndarray,
    alpha: float,
    pair: tuple[str, str] | None = None,
) -> PPIEstimate:
    keep_all = ~np.isnan(f_all)
    keep_n = ~(np.isnan(f_n) | np.isnan(y_n))
    estimate, low, high = ppi_mean(f_all[keep_all], f_n[keep_n], y_n[keep_n], alpha=alpha)
    naive = _normal_interval(f_all[keep_all], alpha)
    human = _normal_interval(y_n[keep_n], alpha)
    return PPIEstimate(
        label, estimate, low, high, *naive, *human, int(keep_all.sum()), int(keep_n.sum()), pair
    )


def ppi_evaluate(
    llm_qrels: Any,
    human_qrels: Any,
    run: Any,
    metrics: str | Sequence[str],
    *,
    alpha: float = 0.05,
    **options: Any,
) -> list[PPIEstimate]:
    """Each metric of ``run`` estimated with prediction-powered inference: every query the
    LLM graded (``llm_qrels``), corrected by the queries people graded too
    (``human_qrels``, a random sample of them). ``options`` as in :func:`evaluate`."""
    from ragmetrics.engine.settings import as_qrels

    llm, human = as_qrels(llm_qrels), as_qrels(human_qrels)
    every, sample = _sample(llm, human)
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    on_llm = _columns(llm, run, names, every, **options)
    on_llm_sample = {m: v[[every.index(q) for q in sample]] for m, v in on_llm.items()}
    on_human = _columns(human, run, names, sample, **options)
    return [_estimate(m, on_llm[m], on_llm_sample[m], on_human[m], alpha) for m in on_llm]


def ppi_compare(
    llm_qrels: Any,
    human_qrels: Any,
    runs: Mapping[str, Any],
    metrics: str | Sequence[str],
    *,
    baseline: str | None = None,
    alpha: float = 0.05,
    **options: Any,
) -> list[PPIEstimate]:
    """Each paired difference (``b - a``, query by query) of ``runs`` on each metric,
    estimated with prediction-powered inference (see :func:`ppi_evaluate`): against
    ``baseline``, or every pair."""
    from ragmetrics.engine.settings import as_qrels

    llm, human = as_qrels(llm_qrels), as_qrels(human_qrels)
    every, sample = _sample(llm, human)
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    at = [every.index(q) for q in sample]
    on_llm = {r: _columns(llm, run, names, every, **options) for r, run in runs.items()}
    on_human = {r: _columns(human, run, names, sample, **options) for r, run in runs.items()}
    order = list(runs)
    if baseline is not None and baseline not in runs:
        raise InvalidParameterError(f"The baseline {baseline!r} is not one of the runs.")
    pairs = (
        [(baseline, r) for r in order if r != baseline]
        if baseline is not None
        else [(order[i], order[j]) for i in range(len(order)) for j in range(i + 1, len(order))]
    )
    out = []
    for metric in on_llm[order[0]]:
        for a, b in pairs:
            diff_all = on_llm[b][metric] - on_llm[a][metric]
            diff_human = on_human[b][metric] - on_human[a][metric]
            out.append(_estimate(metric, diff_all, diff_all[at], diff_human, alpha, (a, b)))
    return out
