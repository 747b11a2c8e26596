"""Where each query's nuggets are found in a run: the first rank of a supporting doc of each
nugget, for the nugget metrics (``JudgedRun.nuggets``)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat

import numpy as np

from ragmetrics._util.arrays import offsets_of, spans
from ragmetrics.data._nuggets import Nuggets
from ragmetrics.data._order import rank_of
from ragmetrics.data._precision import ScorePrecision
from ragmetrics.data._run import Run
from ragmetrics.data._store import store_of
from ragmetrics.metrics.judged import NuggetHits

__all__ = ["locate_nuggets"]

_FEW = 16  # fewer evaluated queries than 1/16 of the nuggets': only theirs are looked up


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
    are the run's own order (score descending, then doc id descending, as trec_eval).

    The supporting docs of every query (each once) are located in the rankings as judged
    docs are (``Store.find``, all queries at once), then each doc found gives its rank to
    every nugget it supports; a nugget keeps the lowest."""
    n_queries = len(query_ids)
    few = n_queries * _FEW < len(nuggets)  # a few queries (one scored at a time)
    table = nuggets.support(query_ids if few else None)
    supporting = table.docs
    # the nugget rows evaluated, and each one's query among those evaluated
    if few:
        found_at = supporting.rows(query_ids)
        evaluated = np.flatnonzero(found_at >= 0)
        kept, rows = found_at[evaluated], evaluated
        searched, searched_rows = supporting.take(kept), rows
        in_run = run_rows[rows]
    else:  # every row of the nuggets looked at once (queries not evaluated: no ranking)
        place = dict(zip(query_ids, range(n_queries)))
        every = map(place.get, supporting.query_ids, repeat(-1))
        searched_rows = np.fromiter(every, dtype=np.int64, count=len(supporting))
        kept = np.flatnonzero(searched_rows >= 0)
        searched, rows = supporting, searched_rows[kept]
        in_run = np.where(searched_rows >= 0, run_rows[np.maximum(searched_rows, 0)], -1)
    counts = np.zeros(n_queries, dtype=np.int64)
    counts[rows] = table.counts[kept]
    width = max(int(counts.max(initial=0)), 1)
    vital = np.zeros((n_queries, width), dtype=bool)
    starts = offsets_of(table.counts)[:-1]
    which, columns, at = spans(starts[kept], table.counts[kept])
    vital[rows[which], columns] = table.vital[at]
    first = np.full((n_queries, width), np.inf)
    results = store_of(run)
    found_rows, positions, found = results.find(searched, in_run)
    ranks = positions
    if results.scored:  # the results are in input order: count each doc's rank
        ranks = rank_of(results, in_run[found_rows], positions, score_precision)
    if depth is not None:
        within = ranks < depth
        found_rows, ranks, found = found_rows[within], ranks[within], found[within]
    docs = found.astype(np.int64)
    which, _, at = spans(table.starts[docs], table.sizes[docs])
    targets = (searched_rows[found_rows[which]], table.pair_nuggets[at])
    np.minimum.at(first, targets, ranks[which])
    return NuggetHits(first, vital, counts)
