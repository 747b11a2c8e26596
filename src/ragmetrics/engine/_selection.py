"""Which queries an evaluation counts, which it leaves out and why, and the counts that
say so; the same code serves :func:`~ragmetrics.evaluate` and the merge of streamed
batches."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress

import numpy as np

from ragmetrics.data._qrels import Qrels
from ragmetrics.data._run import Run
from ragmetrics.data._store import store_of
from ragmetrics.engine._result import Counts
from ragmetrics.engine._settings import MissingPolicy
from ragmetrics.errors import MissingQueryError
from ragmetrics.metrics import Metric
from ragmetrics.metrics.registry import Tally

__all__ = [
    "Batch",
    "Selection",
    "check_missing",
    "count",
    "judged_rows",
    "select_batch",
    "select_queries",
]


@dataclass(frozen=True)
class Selection:
    """Which queries an evaluation counts, and which it leaves out.

    Attributes:
        judged_ids: the qrels' queries with at least one judgment (trec_eval never sees a
            query whose judgments are empty).
        query_ids: the queries counted: ``judged_ids``, less the missing with ``"skip"``.
        run_rows: each counted query's row in the run, -1 when the run lacks it.
        missing_ids: judged queries the run has no ranking for.
        unjudged_ids: queries of the run with no judgment (always left out).
    """

    judged_ids: list[str]
    query_ids: list[str]
    run_rows: np.ndarray
    missing_ids: tuple[str, ...]
    unjudged_ids: tuple[str, ...]


def select_queries(qrels: Qrels, run: Run, missing: MissingPolicy) -> Selection:
    """The queries to count under the ``missing`` policy (see :class:`Selection`)."""
    all_ids = store_of(qrels).query_ids
    rows = judged_rows(qrels)
    judged_ids = list(all_ids) if len(rows) == len(all_ids) else [all_ids[i] for i in rows.tolist()]
    run_rows = store_of(run).rows(judged_ids)
    in_run = run_rows >= 0
    missing_ids = tuple(compress(judged_ids, (~in_run).tolist()))
    ranked_and_judged = np.zeros(len(run), dtype=bool)
    ranked_and_judged[run_rows[in_run]] = True
    unjudged_ids = tuple(compress(run.query_ids, (~ranked_and_judged).tolist()))
    check_missing(missing_ids, missing)
    query_ids = judged_ids
    if missing == "skip" and missing_ids:
        query_ids, run_rows = list(compress(judged_ids, in_run.tolist())), run_rows[in_run]
    return Selection(judged_ids, query_ids, run_rows, missing_ids, unjudged_ids)


@dataclass(frozen=True)
class Batch:
    """The queries of one batch of whole queries that a streamed evaluation scores.

    Attributes:
        query_ids: the batch's queries that the qrels judge, in the batch's order.
        run_rows: their rows in the batch.
        qrels_rows: their rows in the qrels (where the merge puts them back in order).
        unjudged_ids: the batch's queries with no judgment (left out, and counted).
    """

    query_ids: list[str]
    run_rows: np.ndarray
    qrels_rows: np.ndarray
    unjudged_ids: tuple[str, ...]


def select_batch(qrels: Qrels, run: Run) -> Batch:
    """The queries of ``run`` (a batch) to score; which judged queries no batch held is
    settled once all are merged (:func:`check_missing`)."""
    judgments = store_of(qrels)
    rows = judgments.rows(run.query_ids)
    judged = rows >= 0
    judged[judged] = judgments.lengths[rows[judged]] > 0
    return Batch(
        query_ids=list(compress(run.query_ids, judged.tolist())),
        run_rows=np.flatnonzero(judged),
        qrels_rows=rows[judged].astype(np.int64),
        unjudged_ids=tuple(compress(run.query_ids, (~judged).tolist())),
    )


def count(
    *,
    counted: int,
    judged: int,
    in_run: int,
    missing: int,
    not_judged: int,
    empty_rankings: int,
    repeated_ids_dropped: int,
    metrics: Sequence[Metric],
    tallies: Sequence[Tally],
) -> Counts:
    """The :class:`Counts` of an evaluation, in memory or merged from partial results:
    queries counted, left out, empty, and per metric defined or NA (from its tally)."""
    labels = [m.label for m in metrics]
    return Counts(
        queries=counted,
        judged=judged,
        in_run=in_run,
        missing_from_run=missing,
        not_judged=not_judged,
        empty_rankings=empty_rankings,
        repeated_ids_dropped=repeated_ids_dropped,
        valid={label: t.defined for label, t in zip(labels, tallies, strict=True)},
        na={label: t.na for label, t in zip(labels, tallies, strict=True)},
    )


def judged_rows(qrels: Qrels) -> np.ndarray:
    """The rows of the qrels' queries that hold at least one judgment (trec_eval never sees
    a query whose judgments are empty)."""
    return np.flatnonzero(store_of(qrels).lengths > 0)


def check_missing(missing_ids: Sequence[str], missing: MissingPolicy) -> None:
    """Raise the error of ``missing="error"`` when judged queries have no ranking."""
    if missing == "error" and missing_ids:
        shown = ", ".join(map(repr, missing_ids[:5])) + (" ..." if len(missing_ids) > 5 else "")
        raise MissingQueryError(
            f"{len(missing_ids)} judged queries have no ranking in the run ({shown}). "
            f"Pass missing='zero' to score them 0 or missing='skip' to leave them out."
        )
