"""Intervals that stay valid when the labels come from an LLM: prediction-powered inference.

A golden set graded by an LLM gives every query a metric value, but the LLM errs, and an
interval computed as if its labels were the truth is centred on the wrong value. People grade
a sample of the queries (the audit's sample). Prediction-powered inference (Angelopoulos,
Bates, Fannjiang, Jordan and Zrnic, Science 2023) combines both: the mean over all queries
with the LLM's labels, corrected by the mean, over the human sample, of how far the LLM's
value of a query is from the people's,

    estimate = lambda * mean_rest(m_llm) + mean_sample(m_human - lambda * m_llm)

with the variance of both terms added (``mean_rest`` over the queries people did not grade).
Classic PPI takes ``lambda = 1``; power tuning (PPI++, Angelopoulos, Duchi and Zrnic 2023)
takes the ``lambda`` in [0, 1] that makes the interval narrowest, which is never wider than
the interval from people's labels alone (``lambda = 0``): a poor LLM costs nothing. The
interval is valid whatever the LLM's bias, as long as the human sample is a random sample of
the queries; it is narrower than an interval from the human sample alone when the LLM agrees
well with people. Oosterhuis et al. (2024) apply
it to IR metrics, ARES (Saad-Falcon et al. 2024) to RAG judges. The same holds for the
difference of two runs, query by query, and within each segment of the queries.
:func:`ppi_plan` says, from a pilot, how many queries people must grade for a target width.

:func:`ppi_mean` is the estimator on numbers; :func:`ppi_evaluate` and :func:`ppi_compare`
compute the metrics under both labelings and apply it to each metric and each pair.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragmetrics.analysis._ppi_math import (
    PPIEstimate,
    PPIPlan,
    ppi_mean,
    ppi_of_pairs,
    ppi_of_result,
    ppi_plan,
    ppi_rows,
)
from ragmetrics.engine._evaluation import evaluate
from ragmetrics.engine._settings import metric_list
from ragmetrics.errors import InvalidParameterError

__all__ = [
    "PPIEstimate",
    "PPIPlan",
    "ppi_compare",
    "ppi_evaluate",
    "ppi_mean",
    "ppi_of_pairs",
    "ppi_of_result",
    "ppi_plan",
    "ppi_rows",
]


def _results(qrels: Any, run: Any, metrics: str | Sequence[str], options: Any) -> Any:
    """``run`` evaluated on ``qrels``: every judged query counted (one the run lacks scores
    0), unless the caller says otherwise with ``missing=``."""
    names = metric_list(metrics)
    return evaluate(qrels, run, names, **{"missing": "zero", **options})


def ppi_evaluate(
    llm_qrels: Any,
    human_qrels: Any,
    run: Any,
    metrics: str | Sequence[str],
    *,
    alpha: float = 0.05,
    segments: Mapping[str, Any] | None = None,
    **options: Any,
) -> list[PPIEstimate]:
    """Each metric of ``run`` estimated with prediction-powered inference: every query the
    LLM graded (``llm_qrels``), corrected by the queries people graded too
    (``human_qrels``, a random sample of them); then, with ``segments`` (query id ->
    segment), each segment's own estimate (``PPIEstimate.segment``), from the people's
    labels in that segment. Power-tuned (PPI++): never wider than the interval from the
    people's labels alone. ``options`` as in :func:`evaluate`."""
    on_llm = _results(llm_qrels, run, metrics, options)
    on_human = _results(human_qrels, run, metrics, options)
    return ppi_of_result(on_llm, on_human, alpha=alpha, segments=segments)


def ppi_compare(
    llm_qrels: Any,
    human_qrels: Any,
    runs: Mapping[str, Any],
    metrics: str | Sequence[str],
    *,
    baseline: str | None = None,
    alpha: float = 0.05,
    segments: Mapping[str, Any] | None = None,
    **options: Any,
) -> list[PPIEstimate]:
    """Each paired difference (``b - a``, query by query) of ``runs`` on each metric,
    estimated with prediction-powered inference (see :func:`ppi_evaluate`): against
    ``baseline``, or every pair; with ``segments``, within each segment too."""
    if not isinstance(runs, Mapping) or len(runs) < 2:
        raise InvalidParameterError(
            "ppi_compare needs two or more runs, as a mapping of name to run; got "
            f"{type(runs).__name__}."
        )
    if baseline is not None and (not isinstance(baseline, str) or baseline not in runs):
        raise InvalidParameterError(f"The baseline {baseline!r} is not one of the runs.")
    order = list(runs)
    pairs = (
        [(baseline, r) for r in order if r != baseline]
        if baseline is not None
        else [(order[i], order[j]) for i in range(len(order)) for j in range(i + 1, len(order))]
    )
    on_llm = {name: _results(llm_qrels, run, metrics, options) for name, run in runs.items()}
    on_human = {name: _results(human_qrels, run, metrics, options) for name, run in runs.items()}
    return ppi_of_pairs(on_llm, on_human, pairs, alpha=alpha, segments=segments)
