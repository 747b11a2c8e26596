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

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ragmetrics.analysis._ppi_math import (
    PPIEstimate,
    estimate,
    ppi_mean,
    ppi_of_pairs,
    ppi_of_result,
    ppi_rows,
)
from ragmetrics.errors import InvalidParameterError

__all__ = [
    "PPIEstimate",
    "ppi_compare",
    "ppi_evaluate",
    "ppi_mean",
    "ppi_of_pairs",
    "ppi_of_result",
    "ppi_rows",
]


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
    position = {q: i for i, q in enumerate(every)}
    on_llm_sample = {m: v[[position[q] for q in sample]] for m, v in on_llm.items()}
    on_human = _columns(human, run, names, sample, **options)
    return [estimate(m, on_llm[m], on_llm_sample[m], on_human[m], alpha) for m in on_llm]


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
    position = {q: i for i, q in enumerate(every)}
    at = [position[q] for q in sample]
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
            out.append(estimate(metric, diff_all, diff_all[at], diff_human, alpha, (a, b)))
    return out
