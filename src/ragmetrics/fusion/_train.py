"""What the trained fusion methods learn from judged training queries: per run, how likely
a doc at each rank (or in each segment of ranks) is relevant, or its log-odds, or its MAP.

Training reads each run as fused (after normalization), over the judged queries taken in
sorted order of their ids: probabilities averaged query by query are added in that order, as
ranx adds them, so the learned values agree with ranx's to the last bit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import pairwise

import numpy as np

from ragmetrics._util.arrays import offsets_of
from ragmetrics.data._qrels import Qrels
from ragmetrics.fusion._table import Rows, Table

__all__ = [
    "BAYES_CUTOFFS",
    "SEGFUSE_BOUNDS",
    "HitLists",
    "hit_lists",
    "log_odds",
    "position_probs",
    "relevant_candidates",
    "segfuse_probs",
    "segment_probs",
]

SEGFUSE_BOUNDS = np.array([0] + [10 * 2 ** (k - 1) - 5 for k in range(1, 11)], dtype=np.int64)
BAYES_CUTOFFS = (0, 5, 10, 15, 20, 30, 100, 200, 500, 1000)

HitLists = list[np.ndarray]  # one 0/1 array per training query, over the run's ranks


def relevant_candidates(table: Table, qrels: Qrels, threshold: int) -> np.ndarray:
    """True for each candidate whose doc is judged at ``threshold`` or above."""
    marks = np.zeros(table.n_cand, dtype=bool)
    starts = offsets_of(table.cand_lengths).tolist()
    docs = table.doc_ids()
    for q, query_id in enumerate(table.query_ids):
        if query_id not in qrels:
            continue
        relevant = qrels.relevant(query_id, relevance_threshold=threshold)
        if relevant:
            start, end = starts[q], starts[q + 1]
            marks[start:end] = [doc in relevant for doc in docs[start:end]]
    return marks


def hit_lists(table: Table, rows: Rows, marks: np.ndarray, training: Sequence[str]) -> HitLists:
    """The run's hit list (1 where the doc at that rank is relevant) for each training query,
    in the order given; a query the run did not answer has an empty list."""
    where = {query_id: q for q, query_id in enumerate(table.query_ids)}
    hits = marks[rows.cand].astype(np.float64)
    bounds = rows.offsets.tolist()
    empty = np.zeros(0)
    return [
        hits[bounds[where[query_id]] : bounds[where[query_id] + 1]] if query_id in where else empty
        for query_id in training
    ]


def position_probs(lists: HitLists) -> np.ndarray:
    """For each rank, the share of training queries reaching it whose doc there is
    relevant (posfuse, slidefuse)."""
    longest = max((len(h) for h in lists), default=0)
    hits = np.zeros(longest)
    reached = np.zeros(longest)
    for h in lists:
        hits[: len(h)] += h
        reached[: len(h)] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return hits / reached


def segment_probs(lists: HitLists, n_segments: int) -> np.ndarray:
    """ProbFuse: each query's ranking cut into ``n_segments`` equal parts (``ceil(n /
    n_segments)`` docs each); per part, its precision averaged over the queries."""
    probs = np.zeros(n_segments)
    for h in lists:
        size = math.ceil(len(h) / n_segments)
        for k in range(n_segments):
            part = h[k * size : (k + 1) * size]
            if len(part):
                probs[k] += _added(part) / len(part)
    return probs / max(len(lists), 1) if lists else probs


def segfuse_probs(lists: HitLists) -> np.ndarray:
    """SegFuse: segments of growing size (5, 10, 20, ... docs); per segment, its precision
    (relevant docs over the segment's size) averaged over the queries."""
    probs = np.zeros(len(SEGFUSE_BOUNDS) - 1)
    sizes = np.diff(SEGFUSE_BOUNDS)
    for h in lists:
        for k in range(len(sizes)):
            probs[k] += _added(h[SEGFUSE_BOUNDS[k] : SEGFUSE_BOUNDS[k + 1]]) / sizes[k]
    return probs / max(len(lists), 1) if lists else probs


def log_odds(lists: HitLists) -> np.ndarray:
    """BayesFuse: per segment of ranks (0-5, 5-10, ..., 500-1000), the log-odds of relevance
    from the mean precision over the queries (0 and 1 moved 0.001 inward)."""
    odds = np.zeros(BAYES_CUTOFFS[-1])
    count = len(lists)
    for start, end in pairwise(BAYES_CUTOFFS):
        mean = 0.0
        for h in lists:
            mean += (_added(h[start:end]) / (end - start)) / count
        if mean == 0:
            mean += 0.001
        rest = 1 - mean
        if rest == 0:
            rest += 0.001
        odds[start:end] = math.log(mean / rest)
    return odds


def _added(values: np.ndarray) -> float:
    """A plain left-to-right sum (0/1 values: exact in any order, kept plain for clarity)."""
    return float(values.sum())
