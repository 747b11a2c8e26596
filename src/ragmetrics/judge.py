"""Judge a run once: turn ``Run`` + ``Qrels`` into aligned arrays for every metric kernel.

Row ``i`` of every matrix is query ``query_ids[i]``; column ``j`` is rank ``j + 1``. Rankings
shorter than the common depth are padded (``retrieved`` is False there, grade 0).
"""

from __future__ import annotations

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
        max_grade: the highest grade judged in the whole qrels.
    """

    query_ids: tuple[str, ...]
    grades: np.ndarray
    judged: np.ndarray
    retrieved: np.ndarray
    relevant: np.ndarray
    n_relevant: np.ndarray
    ideal_gains: np.ndarray
    max_grade: float
    relevance_threshold: int
    qrels: Qrels
    run: Run
    options: dict[str, Any] = field(default_factory=dict)
    cache: dict[str, Any] = field(default_factory=dict)

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
    relevant = judged & (grades >= relevance_threshold)

    n_relevant, ideal = _ideal(judgments, query_ids, relevance_threshold)
    all_grades = np.fromiter(
        chain.from_iterable(d.values() for d in judgments.values()), dtype=np.float64
    )
    return JudgedRun(
        query_ids=tuple(query_ids),
        grades=grades,
        judged=judged,
        retrieved=retrieved,
        relevant=relevant,
        n_relevant=n_relevant,
        ideal_gains=ideal,
        max_grade=float(all_grades.max()) if len(all_grades) else 0.0,
        relevance_threshold=relevance_threshold,
        qrels=qrels,
        run=run,
        options=dict(options or {}),
    )


def _ideal(
    judgments: Any, query_ids: list[str], relevance_threshold: int
) -> tuple[np.ndarray, np.ndarray]:
    per_query = [judgments[q] for q in query_ids]
    lengths = np.fromiter(map(len, per_query), dtype=np.int64, count=len(per_query))
    total = int(lengths.sum())
    flat = np.fromiter(
        chain.from_iterable(d.values() for d in per_query), dtype=np.float64, count=total
    )
    rows = np.repeat(np.arange(len(per_query)), lengths)
    n_relevant = np.bincount(
        rows, weights=(flat >= relevance_threshold), minlength=len(per_query)
    ).astype(np.int64)
    width = int(lengths.max()) if len(per_query) else 0
    padded = np.zeros((len(per_query), width))
    starts = np.cumsum(lengths) - lengths
    padded[rows, np.arange(total) - np.repeat(starts, lengths)] = np.maximum(flat, 0.0)
    ideal = -np.sort(-padded, axis=1)
    return n_relevant, ideal
