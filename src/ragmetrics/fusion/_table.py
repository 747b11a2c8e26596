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
from itertools import chain
from typing import Any

import numpy as np

from ragmetrics._util.arrays import offsets_of
from ragmetrics.data._run import Run, packed_columns
from ragmetrics.formats import _packed

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
    # the doc id of each candidate, grouped by query: their UTF-8 bytes (an ``S`` array;
    # sort them through :meth:`sortable`) or, where some run's ids cannot be packed, the
    # strings (an object array); read them as strings with :meth:`doc_ids`
    docs: np.ndarray
    runs: list[Rows]

    @property
    def n_cand(self) -> int:
        return len(self.docs)

    def doc_ids(self, at: np.ndarray | slice = slice(None)) -> list[str]:
        """The doc ids of the candidates ``at``, as strings."""
        picked = self.docs[at]
        return _packed.decode(picked) if picked.dtype.kind == "S" else list(picked.tolist())

    def sortable(self, at: np.ndarray) -> np.ndarray:
        """The doc ids of the candidates ``at`` (of any shape) as an array that sorts as the
        strings do: their bytes, or their strings where an id past ``_packed.WIDEST``
        stands in among them (its bytes do not sort as its string)."""
        picked: np.ndarray = self.docs[at]
        return _packed.sortable(picked) if picked.dtype.kind == "S" else picked

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

    A (query, doc) pair is found across runs by sorting keys made of the query and the
    hash of the doc id (see :func:`_pairs`); candidates are grouped by query, in no
    particular order within one. The doc ids are compared as the bytes each run keeps for
    its evaluation (no string per row is made), or as strings when some run's cannot be
    packed (:func:`ragmetrics.data._run.packed_columns`)."""
    packed = [packed_columns(run) for run in runs]
    columns: list[tuple[Sequence[str], np.ndarray, Any, np.ndarray, np.ndarray | None]]
    columns = [c for c in packed if c is not None]
    if len(columns) < len(runs):  # some run's ids are strings
        columns = [run.ranked_columns() for run in runs]
    query_index: dict[str, int] = {}
    for query_ids, *_ in columns:
        for query_id in query_ids:
            query_index.setdefault(query_id, len(query_index))
    n_queries = len(query_index)
    row_query = []
    for query_ids, lengths, *_ in columns:
        where = np.fromiter(map(query_index.__getitem__, query_ids), np.int64, len(query_ids))
        row_query.append(np.repeat(where, lengths))
    queries = np.concatenate(row_query) if row_query else np.zeros(0, dtype=np.int64)
    docs = _joined([c[2] for c in columns])
    inverse, first = _pairs(queries, docs)
    cand_lengths = np.bincount(queries[first], minlength=n_queries).astype(np.int64)
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
    return Table(list(query_index), cand_lengths, docs[first], rows)


def _joined(docs: list[Any]) -> np.ndarray:
    """The runs' doc ids, flat: one ``S`` array (the widest id's width) when each run's are
    bytes, else an object array of strings."""
    if all(isinstance(d, np.ndarray) for d in docs):
        return np.concatenate(docs) if docs else np.zeros(0, dtype="S8")
    every = list(chain.from_iterable(docs))
    joined = np.empty(len(every), dtype=object)
    joined[:] = every
    return joined


_QUERY_BITS = 24  # queries numbered in the top bits of a key (16.7M queries)


def _pairs(queries: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Number the distinct (query, doc) pairs of the rows, grouped by query: each row's
    number, and the first row of each number.

    Each row gets a key: its query's number in the top bits, the top bits of its doc id's
    hash below (of its bytes, for ``docs`` an ``S`` array; else of the string). Sorting
    the keys groups the rows by query and brings a pair's rows together; rows whose keys
    meet are checked to hold the same doc id, and should two ids ever meet by their hashes
    alone, the ids themselves are numbered instead (:func:`_pairs_exactly`)."""
    if not len(docs):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    if int(queries.max()) >= 1 << _QUERY_BITS:
        return _pairs_exactly(queries, docs)
    if docs.dtype.kind == "S":
        hashes = _packed.hashes(docs, _packed.n_words(docs))
    else:
        hashes = np.fromiter(map(hash, docs), np.int64, len(docs)).view(np.uint64)
    keys = (queries.astype(np.uint64) << np.uint64(64 - _QUERY_BITS)) | (
        hashes >> np.uint64(_QUERY_BITS)
    )
    order = np.argsort(keys)
    ordered = keys[order]
    same = ordered[1:] == ordered[:-1]
    meeting = order[np.flatnonzero(same)]
    following = order[np.flatnonzero(same) + 1]
    if len(meeting) and not _same_ids(docs[meeting], docs[following]).all():
        return _pairs_exactly(queries, docs)
    return _numbered(order, same)


def _same_ids(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """``left == right``, id by id."""
    if left.dtype.kind == "S":
        return _packed.equal(left, right)
    return np.asarray(left == right)


def _pairs_exactly(queries: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_pairs` by numbering the doc ids themselves (exact, slower; as strings where
    an id stands in, which another run may hold as its bytes)."""
    if docs.dtype.kind == "S":
        docs = _packed.sortable(docs)
    _, codes = np.unique(docs, return_inverse=True)
    codes = codes.ravel()
    order = np.lexsort((codes, queries))
    same = (queries[order][1:] == queries[order][:-1]) & (codes[order][1:] == codes[order][:-1])
    return _numbered(order, same)


def _numbered(order: np.ndarray, same: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's pair number and each pair's first row, for rows sorted by ``order`` in
    which ``same`` marks a row whose pair is the previous row's."""
    starts = np.concatenate([[True], ~same])
    numbers = np.empty(len(order), dtype=np.int64)
    numbers[order] = np.cumsum(starts) - 1
    return numbers, order[starts]


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
