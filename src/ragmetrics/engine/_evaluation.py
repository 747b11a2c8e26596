"""``evaluate()``: check the arguments, select the queries, locate the judged docs once,
call the kernels, count, and hold the result."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ragmetrics._util.gc import without_gc
from ragmetrics._util.threads import map_threaded
from ragmetrics.data._precision import ScorePrecision
from ragmetrics.data._qrels import Qrels
from ragmetrics.data._run import Run
from ragmetrics.engine._id_warnings import warn_if_ids_do_not_meet
from ragmetrics.engine._locate import locate_judged
from ragmetrics.engine._result import EvaluationResult, Inputs
from ragmetrics.engine._selection import count, select_queries
from ragmetrics.engine._settings import (
    MissingPolicy,
    Settings,
    check_settings,
    checked_inputs,
    resolve_metrics,
)
from ragmetrics.errors import RagMetricsError
from ragmetrics.metrics import Cutoff, Metric
from ragmetrics.metrics.judged import JudgedRun

__all__ = [
    "depth_needed",
    "evaluate",
    "evaluate_checked",
    "score_queries",
]


def out_of_memory() -> RagMetricsError:
    """The error for an evaluation that ran out of memory, with the way out."""
    return RagMetricsError(
        "The evaluation ran out of memory. evaluate_stream(qrels, path, metrics) evaluates a "
        "run of any size in bounded memory (from a TREC or Parquet file, or batches); on the "
        "command line, --stream."
    )


def evaluate(
    qrels: Qrels | Mapping[str, Mapping[str, int]],
    run: Run | Mapping[str, Any],
    metrics: str | Sequence[str],
    *,
    relevance_threshold: int | None = None,
    missing: MissingPolicy = "zero",
    pool: Run | Mapping[str, Any] | None = None,
    err_max_grade: float | None = None,
    rarity_alpha: float | None = None,
    cap4: float | None = None,
    cap3: float | None = None,
    grade_map: Mapping[int, int] | None = None,
    score_precision: ScorePrecision = "float64",
    progress: bool | None = None,
    judged_only: bool = False,
    **params: Any,
) -> EvaluationResult:
    """Evaluate a run against qrels on several metrics at once.

    Args:
        qrels: the judgments (a :class:`Qrels`, or a ``{qid: {doc: grade}}`` dict).
        run: the rankings (a :class:`Run`, or a dict of scores or of ranked lists).
        metrics: names such as ``"ndcg@10"``, ``"P_5"``, ``"P(rel=2)@5"`` or ``"ra_nwg@5"``;
            results are keyed by the name as written.
        relevance_threshold: the lowest grade that counts as relevant (inclusive; default 1)
            for every metric whose name does not set ``rel``.
        missing: what a judged query with no ranking scores: ``"zero"`` (counted, every
            metric 0), ``"skip"`` (left out, as trec_eval) or ``"error"``.
        pool: for PROC@k and %PROC@k, the candidate run the ranking was selected from;
            by default each query's full ranking.
        err_max_grade: fixes ``max_grade`` of ERR (default: the highest grade judged).
        rarity_alpha, cap4, cap3: the rarity weighting of the RAG set metrics (defaults 1,
            1, 0.25; a metric name may set its own, ``ra_nwg(alpha=0.5)@5``). ``alpha`` is
            refused here: in :func:`~ragmetrics.compare` it is the significance level.
        grade_map: raw grade -> utility grade 1..5, for the RAG set metrics.
        score_precision: ``"float64"`` compares scores as doubles (trec_eval 10);
            ``"float32"`` rounds them to 32-bit floats first (trec_eval <= 9, pytrec_eval).
        progress: a progress bar while judging; by default shown from 200,000 queries on.
        judged_only: rank only the docs the qrels judge (grade >= 0; a negative grade counts
            as unjudged), dropping the rest from each ranking first: trec_eval's ``-J``.
        **params: the keyword of any other registered metric parameter
            (:func:`~ragmetrics.metrics.registry.register_param`).

    Returns:
        An :class:`EvaluationResult` with ``aggregate``, ``per_query`` and ``counts``.

    Raises:
        UnknownMetricError: a metric name is not registered.
        InvalidParameterError: a keyword, cutoff or parameter is out of range.
        GradeScaleError: a RAG set metric was asked for on qrels that are not utility
            grades 1..5 (the message proposes a ``grade_map``).
        MissingQueryError: ``missing="error"`` and a judged query has no ranking.
        RagMetricsError: empty qrels or run.

    Warns:
        IdMismatchWarning: the run and the qrels share no query id, or no retrieved doc is
            judged; UndefinedMetricWarning: the qrels judge no document.

    Example:
        >>> qrels = {"q1": {"a": 1, "b": 1}}
        >>> result = evaluate(qrels, {"q1": {"a": 0.9, "x": 0.5}}, ["P@2", "mrr"])
        >>> result.aggregate
        {'P@2': 0.5, 'mrr': 1.0}
    """
    settings = check_settings(
        relevance_threshold=relevance_threshold,
        err_max_grade=err_max_grade,
        rarity_alpha=rarity_alpha,
        cap4=cap4,
        cap3=cap3,
        missing=missing,
        pool=pool,
        grade_map=grade_map,
        score_precision=score_precision,
        progress=progress,
        judged_only=judged_only,
        **params,
    )
    resolved = resolve_metrics(metrics, settings)
    try:
        result = evaluate_checked(qrels, run, resolved, settings)
    except MemoryError as exc:
        raise out_of_memory() from exc
    return result


@without_gc
def evaluate_checked(
    qrels: Qrels | Mapping[str, Mapping[str, int]],
    run: Run | Mapping[str, Any],
    parsed: list[Metric],
    settings: Settings,
    *,
    id_hint: str = "",
) -> EvaluationResult:
    """:func:`evaluate` with the metrics and keywords already checked (adapters check them
    before retrieving); ``id_hint`` ends the warning given when no retrieved doc is judged
    (an adapter names its own fix: ``id_key=...``, ``id_field="ref_doc_id"``)."""
    qrels, run = checked_inputs(qrels, run, parsed, settings)
    selected = select_queries(qrels, run, settings.missing)
    progress = _show_progress(settings.progress, len(selected.query_ids))
    judged, values = score_queries(
        qrels, run, selected.query_ids, selected.run_rows, parsed, settings, progress=progress
    )
    warn_if_ids_do_not_meet(qrels, run, judged, selected, settings, id_hint)
    tallies = [m.spec.aggregate.tally(values[:, i]) for i, m in enumerate(parsed)]
    return EvaluationResult(
        metrics=parsed,
        query_ids=tuple(selected.query_ids),
        values=values,
        counts=count(
            counted=len(selected.query_ids),
            judged=len(selected.judged_ids),
            in_run=len(run),
            missing=len(selected.missing_ids),
            not_judged=len(selected.unjudged_ids),
            empty_rankings=int(np.count_nonzero(judged.in_run & (judged.lengths == 0))),
            repeated_ids_dropped=sum(run.duplicates.values()),
            metrics=parsed,
            tallies=tallies,
        ),
        missing_query_ids=selected.missing_ids,
        unjudged_query_ids=selected.unjudged_ids,
        settings=settings.to_dict(),
        inputs=Inputs(qrels, run, settings.pool, settings.grade_map, settings.score_precision),
        run_name=run.name,
        tallies=tallies,
    )


def score_queries(
    qrels: Qrels,
    run: Run,
    query_ids: list[str],
    run_rows: np.ndarray,
    parsed: Sequence[Metric],
    settings: Settings,
    *,
    progress: bool = False,
) -> tuple[JudgedRun, np.ndarray]:
    """The kernel every entry point shares: judge ``query_ids`` (each at its ``run_rows``
    row of ``run``, -1 for none) and compute every metric; values are queries x metrics."""
    depth = depth_needed(parsed)
    judged = locate_judged(
        qrels,
        run,
        query_ids,
        depth=depth,
        grade_map=settings.grade_map,
        pool=settings.pool,
        with_pool=any(metric.spec.needs_pool for metric in parsed),
        score_precision=settings.score_precision,
        progress=progress,
        run_rows=run_rows,
    )
    if settings.nuggets is not None and any(m.spec.needs_nuggets for m in parsed):
        from ragmetrics.engine._nuggets import locate_nuggets  # only when asked for

        found = locate_nuggets(
            settings.nuggets,
            run,
            query_ids,
            run_rows,
            depth=depth,
            score_precision=settings.score_precision,
        )
        judged = replace(judged, nuggets=found)
    values = np.empty((len(query_ids), len(parsed)))
    # pure kernels side by side on threads (numpy lets go of the interpreter) when they have
    # enough to do to repay starting the threads; the others (a plug-in's, which may keep
    # state) here, one after another
    big = len(judged.hit_rows) >= _SIDE_BY_SIDE_HITS
    pure = [column for column, metric in enumerate(parsed) if metric.spec.pure and big]
    for column, computed in zip(pure, map_threaded(lambda c: parsed[c].compute(judged), pure)):
        values[:, column] = computed
    for column, metric in enumerate(parsed):
        if column not in pure:
            values[:, column] = metric.compute(judged)
    return judged, values


# judged docs located from which kernels run side by side (measured: 10 queries take 0.35 ms
# one after another, 1.0 ms side by side; 200,000 docs the same; 1.3 million 20% less)
_SIDE_BY_SIDE_HITS = 1 << 19


def _show_progress(progress: bool | None, n_queries: int) -> bool:
    """A progress bar when asked, or by default from 200,000 queries on."""
    return progress if progress is not None else n_queries >= 200_000


def depth_needed(metrics: Sequence[Metric]) -> int | None:
    """How deep each ranking must be judged; None for the whole ranking."""
    depth = 0
    for metric in metrics:
        if metric.cutoff is None or metric.spec.cutoff is Cutoff.NONE:
            return None
        depth = max(depth, metric.cutoff)
    return depth
