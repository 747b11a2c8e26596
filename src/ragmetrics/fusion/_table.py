"""The runs of one fusion laid side by side: every (query, doc) any run retrieved is a
*candidate*, and each run is its rows (one per doc it ranked) pointing at candidates.

Everything after this step is array arithmetic: a normalization maps a run's scores row by
row (whole queries at a time), a method turns rows into per-candidate columns and combines
the columns of the runs. Candidates are grouped by query, in the order the queries first
appear across the runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter

import numpy as np

from ragmetrics._util.arrays import offsets_of
from ragmetrics.data.run import Run

__all__ = ["Rows", "Table", "align", "positions", "sequential_sums"]


@dataclass(frozen=True)
class Rows:
    """One run's results over the fusion's queries: ``lengths[q]`` rows for query ``q``
    (zero where the run has none), best first; ``cand`` the candidate of each row and
    ``values`` its score (``None`` for a run of ranked lists)."""

    cand: np.ndarray
    lengths: np.ndarray
    values: np.ndarray | None

    @property
    def offsets(self) -> np.ndarray:
        return offsets_of(self.lengths) if len(self.lengths) else np.zeros(1, dtype=np.int64)

    @property
    def query(self) -> np.ndarray:
        """The query of each row."""
        return np.repeat(np.arange(len(self.lengths)), self.lengths)

    def with_values(self, values: np.ndarray) -> Rows:
        return Rows(self.cand, self.lengths, values)


@dataclass(frozen=True)
class Table:
    """The candidates of a fusion and each run's rows."""

    query_ids: list[str]
    cand_lengths: np.ndarray  # candidates per query
    docs: np.ndarray  # the doc id of each candidate (object array), grouped by query
    runs: list[Rows]

    @property
    def n_cand(self) -> int:
        return len(self.docs)

    @property
    def cand_query(self) -> np.ndarray:
        """The query of each candidate."""
        return np.repeat(np.arange(len(self.cand_lengths)), self.cand_lengths)


def positions(lengths: np.ndarray) -> np.ndarray:
    """Each row's 0-based rank within its query."""
    total = int(lengths.sum())
    starts = offsets_of(lengths)[:-1] if len(lengths) else np.zeros(0, dtype=np.int64)
    ranks: np.ndarray = np.arange(total, dtype=np.int64) - np.repeat(starts, lengths)
    return ranks


def sequential_sums(values: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The sum of each query's values added one by one from the first (the order a plain
    loop adds them, which fixes the last bit): one pass per rank, over the queries that
    reach it."""
    sums = np.zeros(len(lengths))
    if not len(lengths):
        return sums
    starts = offsets_of(lengths)[:-1]
    order = np.argsort(-lengths, kind="stable")
    reach = lengths[order]
    for rank in range(int(reach[0]) if len(reach) else 0):
        active = order[: int(np.searchsorted(-reach, -rank, side="left"))]
        sums[active] += values[starts[active] + rank]
    return sums


def align(runs: Sequence[Run]) -> Table:
    """Lay ``runs`` side by side (see the module docstring).

    A (query, doc) pair is found across runs by sorting the rows by query and by the hash
    of the doc id; rows whose hashes meet are checked to hold the same id, and should two
    ids ever share a hash, the ids themselves are numbered instead."""
    query_index: dict[str, int] = {}
    columns = []
    for run in runs:
        query_ids, lengths, docs, order, values = run.ranked_columns()
        for query_id in query_ids:
            query_index.setdefault(query_id, len(query_index))
        columns.append((query_ids, lengths, docs, order, values))
    n_queries = len(query_index)
    every_doc: list[str] = []
    row_query = []
    for query_ids, lengths, docs, _, _ in columns:
        where = np.fromiter(map(query_index.__getitem__, query_ids), np.int64, len(query_ids))
        row_query.append(np.repeat(where, lengths))
        every_doc.extend(docs)
    queries = np.concatenate(row_query) if row_query else np.zeros(0, dtype=np.int64)
    inverse, first = _pairs(queries, every_doc)
    cand_lengths = np.bincount(queries[first], minlength=n_queries).astype(np.int64)
    docs_array = np.empty(len(first), dtype=object)
    if len(first):
        picked = itemgetter(*first.tolist())(every_doc)
        docs_array[:] = [picked] if len(first) == 1 else picked
    rows: list[Rows] = []
    start = 0
    for (_, lengths, _, order, values), where_rows in zip(columns, row_query, strict=True):
        n = len(where_rows)
        cand = inverse[start : start + n][order]
        start += n
        ranked_values = None if values is None else np.asarray(values, dtype=np.float64)[order]
        rows.append(
            _in_query_order(cand, where_rows, np.asarray(lengths), ranked_values, n_queries)
        )
    return Table(list(query_index), cand_lengths, docs_array, rows)


_MIX = np.uint64(0x9E3779B97F4A7C15)  # odd: spreads query numbers over the 64 bits


def _pairs(queries: np.ndarray, docs: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Number the distinct (query, doc) pairs of the rows, grouped by query: each row's
    number, and the first row of each number."""
    if not docs:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    hashes = np.fromiter(map(hash, docs), np.int64, len(docs)).view(np.uint64)
    keys = hashes + queries.astype(np.uint64) * _MIX
    order = np.argsort(keys)
    same = keys[order][1:] == keys[order][:-1]
    meeting = np.flatnonzero(same)
    if len(meeting):
        first, second = order[meeting], order[meeting + 1]
        left = itemgetter(*first.tolist())(docs)
        right = itemgetter(*second.tolist())(docs)
        if len(meeting) == 1:
            left, right = (left,), (right,)
        if not (
            np.array_equal(queries[first], queries[second]) and all(map(str.__eq__, left, right))
        ):  # two pairs share a key: number the ids exactly instead
            code_of = dict(zip(docs, range(len(docs))))
            codes = np.fromiter(map(code_of.__getitem__, docs), np.int64, len(docs))
            order = np.lexsort((codes, queries))
            same = (queries[order][1:] == queries[order][:-1]) & (
                codes[order][1:] == codes[order][:-1]
            )
    starts = np.concatenate([[True], ~same])
    numbers = np.cumsum(starts) - 1
    firsts = order[starts]
    # number the pairs again in query order (then in order of first appearance)
    by_row = np.argsort(firsts)  # each run's new pairs come in query order: a few sorted
    regroup = by_row[np.argsort(queries[firsts[by_row]], kind="stable")]  # stretches
    renumber = np.empty(len(regroup), dtype=np.int64)
    renumber[regroup] = np.arange(len(regroup))
    inverse = np.empty(len(docs), dtype=np.int64)
    inverse[order] = renumber[numbers]
    return inverse, firsts[regroup]


def _in_query_order(
    cand: np.ndarray,
    row_query: np.ndarray,
    lengths: np.ndarray,
    values: np.ndarray | None,
    n_queries: int,
) -> Rows:
    """A run's rows regrouped in the fusion's query order (most runs already are)."""
    full = np.zeros(n_queries, dtype=np.int64)
    if not len(row_query):
        return Rows(cand, full, None if values is None else np.asarray(values, dtype=np.float64))
    query_of_segment = row_query[offsets_of(lengths)[:-1][lengths > 0]]
    full[query_of_segment] = lengths[lengths > 0]
    scores = None if values is None else np.asarray(values, dtype=np.float64)
    if np.all(np.diff(row_query) >= 0):
        return Rows(cand, full, scores)
    order = np.argsort(row_query, kind="stable")
    return Rows(cand[order], full, None if scores is None else scores[order])
