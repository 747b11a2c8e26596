"""Where each query's nuggets are found in a run: the first rank of a supporting doc of each
nugget, for the nugget metrics (``JudgedRun.nuggets``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragmetrics.data._nuggets import Nuggets
from ragmetrics.data._precision import ScorePrecision
from ragmetrics.data._run import Run
from ragmetrics.metrics.judged import NuggetHits

__all__ = ["locate_nuggets"]


def locate_nuggets(
    nuggets: Nuggets,
    run: Run,
    query_ids: Sequence[str],
    run_rows: np.ndarray,
    *,
    depth: int | None,
    score_precision: ScorePrecision = "float64",
) -> NuggetHits:
    """For each of ``query_ids`` (its ranking at ``run_rows``, -1 for none), the 0-based rank
    at which each of its nuggets first has a supporting doc, within ``depth``; the rankings
    are the run's own order (score descending, then doc id descending, as trec_eval)."""
    width = max([len(nuggets.get(q, ())) for q in query_ids] or [0]) or 1
    first = np.full((len(query_ids), width), np.inf)
    vital = np.zeros((len(query_ids), width), dtype=bool)
    counts = np.zeros(len(query_ids), dtype=np.int64)
    rankings = run.rankings(score_precision=score_precision) if len(query_ids) else []
    for row, (query_id, run_row) in enumerate(zip(query_ids, run_rows.tolist(), strict=True)):
        of_query = nuggets.get(query_id)
        if not of_query:
            continue
        ranking = rankings[run_row] if run_row >= 0 else ()
        if depth is not None:
            ranking = ranking[:depth]
        position = {doc: rank for rank, doc in enumerate(ranking)}  # each doc once
        for column, nugget in enumerate(of_query.values()):
            ranks = [position[doc] for doc in nugget.support if doc in position]
            if ranks:
                first[row, column] = min(ranks)
            vital[row, column] = nugget.vital
        counts[row] = len(of_query)
    return NuggetHits(first, vital, counts)
