"""``ragmetrics.evaluate``: the engine's evaluation, with the analysis it can be asked for
(segments, prediction-powered estimates) composed on top, here above the engine."""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

from ragmetrics.data._qrels import Qrels
from ragmetrics.data._run import Run
from ragmetrics.engine import _evaluation as engine
from ragmetrics.engine._result import EvaluationResult
from ragmetrics.engine._settings import as_run

__all__ = ["evaluate"]

_ANALYSIS_ARGS = """\
        segments: slices of the queries (query id -> segment, a pandas Series by query id,
            or a function of the query id; None or NA leaves a query out of every slice,
            counted): ``result.segments`` then holds each metric per segment with its
            interval (:func:`ragmetrics.by_segment`).
        human_qrels: when ``qrels`` are an LLM's labels, people's grades for a random
            sample of the queries: ``result.ppi`` then holds each metric's
            prediction-powered estimate with its 95% interval, valid whatever the LLM's
            bias, beside the naive one (see :mod:`ragmetrics.analysis.ppi`).
"""


def evaluate(
    qrels: Qrels | Mapping[str, Mapping[str, int]],
    run: Run | Mapping[str, Any],
    metrics: str | Sequence[str],
    *,
    segments: Any = None,
    human_qrels: Qrels | Mapping[str, Mapping[str, int]] | None = None,
    **options: Any,
) -> EvaluationResult:
    # the docstring is the engine's, with the two keywords above (set below)
    if segments is None and human_qrels is None:
        return engine.evaluate(qrels, run, metrics, **options)
    from ragmetrics.analysis._segments import by_segment, check_segments

    if segments is not None:  # refused before any evaluation
        check_segments(segments)
    run = as_run(run)
    result = engine.evaluate(qrels, run, metrics, **options)
    table = None if segments is None else by_segment(result, segments)
    ppi = None
    if human_qrels is not None:
        from ragmetrics.analysis._ppi_math import ppi_of_result

        ppi = ppi_of_result(result, engine.evaluate(human_qrels, run, metrics, **options))
    return result.replace(segments=table, ppi=ppi)


def _composed_doc() -> str:
    doc = engine.evaluate.__doc__ or ""
    marker = "        **params:"
    return doc.replace(marker, _ANALYSIS_ARGS + marker, 1)


def _composed_signature() -> inspect.Signature:
    """The engine's keywords and this function's own, in one signature (for ``help()``, the
    editors, and the contract suite that walks every keyword)."""
    own = inspect.signature(evaluate).parameters
    base = list(inspect.signature(engine.evaluate).parameters.values())
    extra = [own["segments"], own["human_qrels"]]
    return inspect.Signature([*base[:-1], *extra, base[-1]], return_annotation=EvaluationResult)


evaluate.__doc__ = _composed_doc()
evaluate.__signature__ = _composed_signature()  # type: ignore[attr-defined]
