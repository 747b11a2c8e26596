"""Judge a run once: turn ``Run`` + ``Qrels`` into aligned arrays for every metric kernel.

Row ``i`` of every matrix is query ``query_ids[i]``; column ``j`` is rank ``j + 1``. Rankings
shorter than the common depth are padded (``retrieved`` is False there, grade 0).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain, repeat
from typing import Any

import numpy as np

from ragmetrics.qrels import Qrels
from ragmetrics.run import Run

_NOT_JUDGED = float("nan")


@dataclass(frozen=True, eq=False)
class JudgedRun:
    """A run judged against qrels, as matrices over (query, rank).

    Attributes:
        query_ids: the counted queries, one per row.
        grades: judged grade of the doc at each rank; 0 where unjudged or padding.
        judged: True where the doc at that rank has a judgment for its query.
        retrieved: True where a doc is ranked (False in the padding).
        relevant: True where the grade is at least ``relevance_threshold``.
        n_relevant: ``R``, the number of judged docs at or above the threshold, per query.
        ideal_gains: the judged grades clipped at 0, sorted descending, per query.
    """

    query_ids: tuple[str, ...]
    grades: np.ndarray
    judged: np.ndarray
    retrieved: np.ndarray
    relevant: np.ndarray
    n_relevant: np.ndarray
    ideal_gains: np.ndarray
    relevance_threshold: int
    qrels: Qrels
    run: Run
    options: dict[str, Any] = field(default_factory=dict)
    cache: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def max_grade(self) -> float:
        """The highest grade judged in the whole qrels (ERR's default scale)."""
        grades = np.fromiter(
            chain.from_iterable(d.values() for d in self.qrels.raw().values()), dtype=np.float64
        )
        return float(grades.max()) if len(grades) else 0.0

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def depth(self) -> int:
        return int(self.grades.shape[1])

    @cached_property
    def gains(self) -> np.ndarray:
        """``max(grade, 0)`` at each rank: the linear nDCG gain (trec_eval)."""
        gains: np.ndarray = np.maximum(self.grades, 0.0)
        return gains

    @cached_property
    def discounts(self) -> np.ndarray:
        """``1 / log2(rank + 1)`` for ranks 1..max(depth, ideal depth)."""
        size = max(self.depth, self.ideal_gains.shape[1], 1)
        return 1.0 / np.log2(np.arange(2, size + 2, dtype=np.float64))

    @cached_property
    def relevant_cumsum(self) -> np.ndarray:
        """Number of relevant docs within the first j+1 ranks."""
        return np.cumsum(self.relevant, axis=1, dtype=np.int64)

    def hits(self, cutoff: int | None) -> np.ndarray:
        """Relevant docs within the first ``cutoff`` ranks (all ranks when None)."""
        if self.depth == 0:
            return np.zeros(self.n_queries, dtype=np.int64)
        last = self.depth if cutoff is None else min(cutoff, self.depth)
        return self.relevant_cumsum[:, last - 1]

    @cached_property
    def group_first_ranks(self) -> tuple[np.ndarray, np.ndarray]:
        """Per query and evidence group, the 0-based rank where a member first appears.

        Returns ``(first_rank, n_groups)``; ``first_rank`` is ``inf`` for a group with no
        member in the ranking and for the padding past a query's last group.
        """
        threshold = self.relevance_threshold
        groups = [self.qrels.groups(q, relevance_threshold=threshold) for q in self.query_ids]
        n_groups = np.fromiter(map(len, groups), dtype=np.int64, count=len(groups))
        width = int(n_groups.max()) if len(groups) else 0
        first = np.full((len(groups), max(width, 1)), np.inf)
        docs, offsets, index = self.run.slices()
        for row, (query_id, query_groups) in enumerate(zip(self.query_ids, groups, strict=True)):
            position = index.get(query_id)
            if position is None or not query_groups:
                continue
            start, end = int(offsets[position]), int(offsets[position + 1])
            rank_of = dict(zip(docs[start:end], range(end - start), strict=True))
            for column, members in enumerate(query_groups):
                ranks = [rank_of[d] for d in members if d in rank_of]
                if ranks:
                    first[row, column] = min(ranks)
        return first, n_groups


def judge(
    qrels: Qrels,
    run: Run,
    query_ids: list[str],
    *,
    depth: int | None,
    relevance_threshold: int,
    options: dict[str, Any] | None = None,
    progress: bool = False,
) -> JudgedRun:
    """Judge the first ``depth`` docs (all when None) of ``run`` for each of ``query_ids``.

    A query absent from the run gets an empty ranking.
    """
    judgments = qrels.raw()
    per_query = [judgments[q] for q in query_ids]
    counts = np.fromiter(map(len, per_query), dtype=np.int64, count=len(per_query))
    flat_grades = np.fromiter(
        chain.from_iterable(map(dict.values, per_query)), dtype=np.float64, count=int(counts.sum())
    )
    matrices = _judge_sparse(per_query, counts, flat_grades, run, query_ids, depth)
    if matrices is None:
        matrices = _judge_dense(judgments, run, query_ids, depth, progress)
    grades, judged, retrieved = matrices
    relevant = judged & (grades >= relevance_threshold)

    n_relevant, ideal = _ideal(counts, flat_grades, relevance_threshold)
    return JudgedRun(
        query_ids=tuple(query_ids),
        grades=grades,
        judged=judged,
        retrieved=retrieved,
        relevant=relevant,
        n_relevant=n_relevant,
        ideal_gains=ideal,
        relevance_threshold=relevance_threshold,
        qrels=qrels,
        run=run,
        options=dict(options or {}),
    )


Matrices = tuple[np.ndarray, np.ndarray, np.ndarray]


def _judge_dense(
    judgments: Mapping[str, dict[str, int]],
    run: Run,
    query_ids: list[str],
    depth: int | None,
    progress: bool,
) -> Matrices:
    """Look up the grade of every ranked doc (up to ``depth``), in rank order."""
    docs, offsets, index = run.slices()
    bounds = offsets.tolist()
    n_queries = len(query_ids)
    lengths = np.zeros(n_queries, dtype=np.int64)
    grade_lists: list[Any] = []
    rows_of_queries: Any = enumerate(query_ids)
    if progress:
        from ragmetrics.progress import progress_bar

        rows_of_queries = progress_bar(rows_of_queries, total=n_queries, desc="judging")
    for row, query_id in rows_of_queries:
        position = index.get(query_id)
        if position is None:
            continue
        start, end = bounds[position], bounds[position + 1]
        if depth is not None:
            end = min(end, start + depth)
        lengths[row] = end - start
        grade_lists.append(map(judgments[query_id].get, docs[start:end], repeat(_NOT_JUDGED)))
    total = int(lengths.sum())
    flat = np.fromiter(chain.from_iterable(grade_lists), dtype=np.float64, count=total)
    width = int(lengths.max()) if n_queries else 0
    rows = np.repeat(np.arange(n_queries), lengths)
    starts = np.cumsum(lengths) - lengths
    columns = np.arange(total) - np.repeat(starts, lengths)
    is_judged = ~np.isnan(flat)
    grades = np.zeros((n_queries, width))
    grades[rows, columns] = np.where(is_judged, flat, 0.0)
    judged = np.zeros((n_queries, width), dtype=bool)
    judged[rows, columns] = is_judged
    retrieved = np.zeros((n_queries, width), dtype=bool)
    retrieved[rows, columns] = True
    return grades, judged, retrieved


_BLOCK_CELLS = 1 << 24  # comparisons per vectorized block of the sparse judge


def _judge_sparse(
    per_query: list[dict[str, int]],
    counts: np.ndarray,
    flat_grades: np.ndarray,
    run: Run,
    query_ids: list[str],
    depth: int | None,
) -> Matrices | None:
    """Judge a run built from score dicts without sorting it.

    Metrics only see the ranks of judged docs, and the rank of a judged doc is the number of
    docs of its query with a higher score, plus those with an equal score and a greater doc id
    (trec_eval's order). So only the judged docs are looked up, and their ranks are counted
    against the query's scores, vectorized. Returns None when this would not pay off (most
    retrieved docs judged, or infinite scores that collide with the padding); the dense path
    then applies.
    """
    source = run.score_maps()
    if source is None:
        return None
    maps, scores = source
    if len(scores) and np.isinf(scores).any():
        return None
    index = run._index
    run_rows = np.fromiter(
        map(index.get, query_ids, repeat(-1)), dtype=np.int64, count=len(query_ids)
    )
    present = run_rows >= 0
    lengths = np.where(present, run.lengths[np.maximum(run_rows, 0)], 0)
    n_queries = len(query_ids)
    full_width = int(lengths.max()) if n_queries else 0
    # judged docs: their scores in the run (NaN when not retrieved) and grades, all looked up
    # at C speed: map(dict.get, owning score dict repeated per judged doc, doc ids)
    total_judged = len(flat_grades)
    no_scores: dict[str, float] = {}
    owners = [maps[r] if r >= 0 else no_scores for r in run_rows.tolist()]
    judged_scores = np.fromiter(
        map(
            dict.get,
            chain.from_iterable(map(repeat, owners, counts.tolist())),
            chain.from_iterable(per_query),
            repeat(_NOT_JUDGED),
        ),
        dtype=np.float64,
        count=total_judged,
    )
    hit = np.flatnonzero(~np.isnan(judged_scores))
    if len(hit) * full_width > 8 * int(lengths.sum()) + 4096:
        return None  # dense judgments: sorting once is cheaper
    judged_grades = flat_grades
    judged_rows = np.repeat(np.arange(n_queries), counts)[hit]
    hit_scores = judged_scores[hit]
    padded = _padded_scores(run, scores, run_rows, present, lengths, full_width)
    above = np.empty(len(hit), dtype=np.int64)
    equal = np.empty(len(hit), dtype=np.int64)
    step = max(1, _BLOCK_CELLS // max(full_width, 1))
    for start in range(0, len(hit), step):
        block = padded[judged_rows[start : start + step]]
        value = hit_scores[start : start + step, None]
        above[start : start + step] = (block > value).sum(axis=1)
        equal[start : start + step] = (block == value).sum(axis=1) - 1
    rank = above
    tied = np.flatnonzero(equal > 0)
    if len(tied):
        judged_docs = list(chain.from_iterable(per_query))
        for t in tied.tolist():
            doc = judged_docs[int(hit[t])]
            tie_score = float(hit_scores[t])
            scored = maps[int(run_rows[judged_rows[t]])]
            rank[t] += sum(1 for other, s in scored.items() if s == tie_score and other > doc)
    width = full_width if depth is None else min(full_width, depth)
    keep = rank < width
    grades = np.zeros((n_queries, width))
    judged = np.zeros((n_queries, width), dtype=bool)
    grades[judged_rows[keep], rank[keep]] = judged_grades[hit][keep]
    judged[judged_rows[keep], rank[keep]] = True
    retrieved = np.arange(width)[None, :] < np.minimum(lengths, width)[:, None]
    return grades, judged, retrieved


def _padded_scores(
    run: Run,
    scores: np.ndarray,
    run_rows: np.ndarray,
    present: np.ndarray,
    lengths: np.ndarray,
    width: int,
) -> np.ndarray:
    """The scores of each judged query in input order, padded with -inf to ``width``."""
    all_lengths = run.lengths
    if len(all_lengths) and (all_lengths == all_lengths[0]).all() and all_lengths[0] == width:
        # every ranking has the same length (top-k retrieval): a reshape and a row gather
        gathered: np.ndarray = scores.reshape(len(all_lengths), width)[np.maximum(run_rows, 0)]
        gathered[~present] = -np.inf
        return gathered
    offsets = np.zeros(len(all_lengths) + 1, dtype=np.int64)
    np.cumsum(all_lengths, out=offsets[1:])
    kept = lengths[present]
    rows = np.repeat(np.flatnonzero(present), kept)
    columns = np.arange(int(kept.sum())) - np.repeat(np.cumsum(kept) - kept, kept)
    padded = np.full((len(run_rows), width), -np.inf)
    padded[rows, columns] = scores[np.repeat(offsets[run_rows[present]], kept) + columns]
    return padded


def _ideal(
    counts: np.ndarray, flat: np.ndarray, relevance_threshold: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per query: R, and the judged grades clipped at 0 sorted descending (padded with 0)."""
    n_queries = len(counts)
    total = len(flat)
    rows = np.repeat(np.arange(n_queries), counts)
    n_relevant = np.bincount(
        rows, weights=(flat >= relevance_threshold), minlength=n_queries
    ).astype(np.int64)
    width = int(counts.max()) if n_queries else 0
    padded = np.zeros((n_queries, width))
    starts = np.cumsum(counts) - counts
    padded[rows, np.arange(total) - np.repeat(starts, counts)] = np.maximum(flat, 0.0)
    ideal = -np.sort(-padded, axis=1)
    return n_relevant, ideal
