"""The kernels' input: a run judged against qrels (:class:`JudgedRun`), made once per
evaluation by ``engine.locate.locate_judged`` and read by every kernel in this folder.

It lives here, below the kernels, so that a kernel (or a plug-in's) depends on the type it
reads and not on the engine that makes it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from threading import Lock
from typing import Any, TypeVar

import numpy as np

from ragmetrics._util.arrays import pad_rows, run_starts
from ragmetrics.data._precision import ScorePrecision

__all__ = [
    "Evidence",
    "JudgedRun",
    "NuggetHits",
    "OneRanking",
    "ideal_of",
    "log2_ranks_list",
    "log2_ranks_table",
]

T = TypeVar("T")


@dataclass(frozen=True, eq=False)
class Evidence:
    """Where the members of the evidence groups given in the qrels were located.

    Attributes:
        given: per row, True where groups were given for the query (``Qrels.from_groups``);
            the other rows count each doc graded at the threshold or above as a group.
        n_given: per row, how many groups were given (0 for the other rows).
        member_hits: for each located member, its index among the hits (``hit_rows``, ...).
        member_columns: the group it belongs to; a doc of several groups is listed once for
            each.
    """

    given: np.ndarray
    n_given: np.ndarray
    member_hits: np.ndarray
    member_columns: np.ndarray


@dataclass(frozen=True, eq=False)
class NuggetHits:
    """Where each query's nuggets were first found, one row per query of a judged run.

    Attributes:
        first: the 0-based rank at which a supporting doc of each nugget first appears
            (``inf``: none within the judged depth, and in the padding past a query's last
            nugget); one column per nugget, in the order the nuggets were given.
        vital: True for the vital nuggets (False in the padding).
        counts: how many nuggets each query has (0: the nugget metrics are NA).
    """

    first: np.ndarray
    vital: np.ndarray
    counts: np.ndarray

    @property
    def real(self) -> np.ndarray:
        """True in the columns that hold a nugget (False in the padding)."""
        real: np.ndarray = np.arange(self.first.shape[1])[None, :] < self.counts[:, None]
        return real

    @property
    def n_vital(self) -> np.ndarray:
        """Per query, how many vital nuggets."""
        counts: np.ndarray = self.vital.sum(axis=1)
        return counts


_MAKING = object()  # tags the cache's locks: (_MAKING, key) guards the making of key


@dataclass(frozen=True, eq=False)
class JudgedRun:
    """A run judged against qrels, to the depth the metrics need: everything a kernel reads.

    Attributes:
        query_ids: the counted queries, one per row.
        hit_rows, hit_ranks, hit_grades: every judged doc within the depth: its query's
            row, its 0-based rank and its grade, sorted by row then rank.
        lengths: how many docs each query ranks within the depth.
        in_run: True for the queries the run has a ranking for (possibly empty).
        depth: the width of the dense views (the longest ranking, cut at the depth).
        judged_counts, judged_grades: how many docs each query has judged, and all their
            grades flat (query by query), for the ideal rankings.
        max_grade: the highest grade judged anywhere in the qrels (ERR's default scale).
        grade_map: raw grade -> utility grade 1..5, for the RAG set metrics (None: as is).
        score_precision: how scores were compared when ranking (see :func:`locate_judged`).
        n_located: how many retrieved docs are judged, at any depth.
        evidence: where the members of given evidence groups were found (None: the qrels
            give no groups).
        pool: the candidate pool of PROC@k judged in full (see :meth:`pooled`); None when no
            metric asked for it, or when it is this judged run itself (``pool_is_self``).
        hit_tied: per hit, True when its score equals that of the hit just above it (the
            same query): tied judged docs, which the ranking orders by doc id descending.
            None for rankings without scores (no ties).
        nuggets: where each query's nuggets were found (None: no nugget metric was asked).
    """

    query_ids: tuple[str, ...]
    hit_rows: np.ndarray
    hit_ranks: np.ndarray
    hit_grades: np.ndarray
    lengths: np.ndarray
    in_run: np.ndarray
    depth: int
    judged_counts: np.ndarray
    judged_grades: np.ndarray
    max_grade: float
    grade_map: Mapping[int, int] | None = None
    score_precision: ScorePrecision = "float64"
    n_located: int = 0
    evidence: Evidence | None = None
    pool: JudgedRun | None = None
    pool_is_self: bool = False
    hit_tied: np.ndarray | None = None
    nuggets: NuggetHits | None = None
    cache: dict[Any, Any] = field(default_factory=dict)

    @property
    def has_groups(self) -> bool:
        """True when the qrels give evidence groups (``Qrels.from_groups``)."""
        return self.evidence is not None

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    # --- dense views --------------------------------------------------------------------

    def _dense(self, values: np.ndarray, dtype: type) -> np.ndarray:
        matrix: np.ndarray = np.zeros((self.n_queries, self.depth), dtype=dtype)
        matrix[self.hit_rows, self.hit_ranks] = values
        return matrix

    @cached_property
    def grades(self) -> np.ndarray:
        """The grade of the doc at each rank; 0 where unjudged or in the padding."""
        return self._dense(self.hit_grades, np.float64)

    @cached_property
    def judged(self) -> np.ndarray:
        """True where the doc at that rank has a judgment for its query."""
        return self._dense(np.ones(len(self.hit_rows), dtype=bool), np.bool_)

    @cached_property
    def retrieved(self) -> np.ndarray:
        """True where a doc is ranked (False in the padding)."""
        retrieved: np.ndarray = np.arange(self.depth)[None, :] < self.lengths[:, None]
        return retrieved

    @cached_property
    def gains(self) -> np.ndarray:
        """``max(grade, 0)`` at each rank: the linear nDCG gain (trec_eval)."""
        gains: np.ndarray = np.maximum(self.grades, 0.0)
        return gains

    @cached_property
    def ideal_gains(self) -> np.ndarray:
        """Per query, the judged grades clipped at 0, sorted descending (padded with 0)."""
        return ideal_of(self.judged_counts, self.judged_grades)

    # --- sparse views -------------------------------------------------------------------

    @cached_property
    def log2_ranks(self) -> np.ndarray:
        """``log2(rank + 1)`` for ranks 1..max(depth, ideal depth): nDCG divides each gain
        by it, as trec_eval does (a reciprocal multiplied would differ in the last bit)."""
        longest = int(self.judged_counts.max()) if self.n_queries else 0
        return log2_ranks_table(max(self.depth, longest, 1))

    def cached(self, key: Hashable, make: Callable[[], T]) -> T:
        """``make()``, computed on first use per ``key`` and kept with this judged run (the
        views kernels share: each is made once per evaluation, also when kernels running
        side by side on threads ask for it at once: the second waits for the first)."""
        cache = self.cache
        if key not in cache:
            with cache.setdefault((_MAKING, key), Lock()):  # one lock per key
                if key not in cache:
                    cache[key] = make()
        kept: T = cache[key]
        return kept

    def relevant_at(self, rel: int) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, ranks)`` of every doc graded ``rel`` or above, by query then rank."""

        def make() -> tuple[np.ndarray, np.ndarray]:
            relevant = self.hit_grades >= rel
            return self.hit_rows[relevant], self.hit_ranks[relevant]

        return self.cached(("relevant_at", rel), make)

    def hits(self, cutoff: int | None, rel: int) -> np.ndarray:
        """Docs graded ``rel`` or above within the first ``cutoff`` ranks (all when None)."""
        rows, ranks = self.relevant_at(rel)
        if self.n_queries == 1:  # one ranking (single-query scoring): a count will do
            found = len(ranks) if cutoff is None else int(np.count_nonzero(ranks < cutoff))
            return np.array([found])
        if cutoff is not None:
            rows = rows[ranks < cutoff]
        counts: np.ndarray = np.bincount(rows, minlength=self.n_queries)
        return counts

    def n_relevant(self, rel: int) -> np.ndarray:
        """``R``: per query, the judged docs graded ``rel`` or above."""
        return self.cached(("n_relevant", rel), lambda: self._n_judged(rel, None))

    def n_nonrelevant(self, rel: int) -> np.ndarray:
        """Per query, the judged docs graded 0 or above but below ``rel`` (bpref's N;
        negative grades mark docs judged as not to be counted)."""
        return self.cached(("n_nonrelevant", rel), lambda: self._n_judged(0, rel))

    def _n_judged(self, low: int, high: int | None) -> np.ndarray:
        """Per query, the judged docs graded ``low`` or above (and below ``high``)."""
        grades = self.judged_grades
        within = grades >= low if high is None else (grades >= low) & (grades < high)
        if self.n_queries == 1:
            return np.array([np.count_nonzero(within)])
        ends = np.cumsum(self.judged_counts)
        before = np.concatenate(([0], np.cumsum(within)))
        counts: np.ndarray = before[ends] - before[ends - self.judged_counts]
        return counts

    def group_first_ranks(self, rel: int) -> tuple[np.ndarray, np.ndarray]:
        """Per query and evidence group, the 0-based rank where a member first appears.

        Returns ``(first_rank, n_groups)``; ``first_rank`` is ``inf`` for a group with no
        member in the ranking and for the padding past a query's last group. Without
        given groups, each doc graded ``rel`` or above is a group.
        """
        return self.cached(("group_first_ranks", rel), lambda: self._group_first_ranks(rel))

    def _group_first_ranks(self, rel: int) -> tuple[np.ndarray, np.ndarray]:
        evidence = self.evidence
        if evidence is None:
            given, n_groups = np.zeros(self.n_queries, dtype=bool), self.n_relevant(rel)
        else:
            given = evidence.given
            n_groups = np.where(given, evidence.n_given, self.n_relevant(rel))
        width = int(n_groups.max()) if self.n_queries else 0
        first = np.full((self.n_queries, max(width, 1)), np.inf)
        if evidence is not None and len(evidence.member_hits):
            hits = evidence.member_hits
            where = (self.hit_rows[hits], evidence.member_columns)
            np.minimum.at(first, where, self.hit_ranks[hits].astype(np.float64))
        # the other rows: each relevant doc is a group, numbered in rank order
        own = ~given[self.hit_rows] & (self.hit_grades >= rel)
        rows, ranks = self.hit_rows[own], self.hit_ranks[own]
        first[rows, np.arange(len(rows)) - run_starts(rows)] = ranks
        return first, n_groups

    def pooled(self) -> JudgedRun:
        """The candidate pool of PROC@k judged in full, one row per query of this run: the
        ``pool`` run, or the query's own whole ranking where the pool does not cover it.
        Located by the same step as this run (``with_pool=True``), never later."""
        if self.pool_is_self:
            return self
        if self.pool is None:
            raise RuntimeError(
                "The candidate pool was not located: a metric whose spec has needs_pool=True "
                "was computed on a run located without with_pool=True."
            )
        return self.pool


_LOG2_RANKS: list[np.ndarray] = [np.empty(0)]
_LOG2_LIST: list[list[float]] = [[]]


@dataclass(frozen=True)
class OneRanking:
    """One ranking judged, as the single-ranking twins of the kernels read it.

    An adapter's plug-in scores one ranking a call; there, setting up a kernel's arrays costs
    more than the sums themselves. A metric whose spec has a ``single`` function computes
    from this instead, in plain Python, with the same operations in the same order as its
    kernel (a randomized test holds each twin to its kernel, value for value).

    Attributes:
        hits: ``(rank, grade)`` of each judged doc in the ranking, by rank (0-based).
        judged: every judged grade of the query.
        length: how many docs the ranking holds (repeats dropped).
    """

    hits: tuple[tuple[int, float], ...]
    judged: tuple[float, ...]
    length: int

    @classmethod
    def of(cls, judgments: Mapping[str, float], ranking: tuple[str, ...]) -> OneRanking:
        """``ranking`` (each doc once) judged by ``judgments`` (doc id -> grade)."""
        get = judgments.get
        hits = tuple(
            (rank, float(grade))
            for rank, doc in enumerate(ranking)
            if (grade := get(doc)) is not None
        )
        return cls(hits, tuple(map(float, judgments.values())), len(ranking))

    def relevant_ranks(self, rel: float, cutoff: int | None = None) -> list[int]:
        """The ranks of the docs graded ``rel`` or above, within the first ``cutoff``."""
        return [
            rank for rank, grade in self.hits if grade >= rel and (cutoff is None or rank < cutoff)
        ]

    def n_relevant(self, rel: float) -> int:
        """``R``: the judged docs graded ``rel`` or above."""
        return sum(1 for grade in self.judged if grade >= rel)


def log2_ranks_list(size: int) -> list[float]:
    """:func:`log2_ranks_table` as Python floats (the same values), for the twins."""
    table = _LOG2_LIST[0]
    if len(table) < size:
        table = log2_ranks_table(max(size, 1024)).tolist()
        _LOG2_LIST[0] = table
    return table


def log2_ranks_table(size: int) -> np.ndarray:
    """``log2(rank + 1)`` for ranks 1..size: a read-only slice of a table kept for the
    process (elementwise, so a slice has the values a table of its own size would)."""
    table = _LOG2_RANKS[0]
    if len(table) < size:
        table = np.log2(np.arange(2, max(size, 1024) + 2))
        table.flags.writeable = False
        _LOG2_RANKS[0] = table
    return table[:size]


def ideal_of(counts: np.ndarray, grades: np.ndarray) -> np.ndarray:
    """Per query, the judged grades clipped at 0 sorted descending (padded with 0)."""
    if len(counts) == 1:  # one query: its grades are the row
        row: np.ndarray = np.sort(np.maximum(grades, 0.0))[::-1]
        return row.reshape(1, len(row))
    ideal: np.ndarray = np.sort(pad_rows(counts, np.maximum(grades, 0.0)), axis=1)[:, ::-1]
    return ideal
