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


def align(runs: Sequence[Run], *, score_precision: str = "float64") -> Table:
    """Lay ``runs`` side by side (see the module docstring)."""
    del score_precision  # fusion reads the scores as given (float64)
    query_index: dict[str, int] = {}
    columns = []
    for run in runs:
        query_ids, lengths, docs, values = run.ranked_columns()
        for query_id in query_ids:
            query_index.setdefault(query_id, len(query_index))
        columns.append((query_ids, lengths, docs, values))
    n_queries = len(query_index)
    every_doc: list[str] = []
    row_query = []
    for query_ids, lengths, docs, _ in columns:
        where = np.fromiter(map(query_index.__getitem__, query_ids), np.int64, len(query_ids))
        row_query.append(np.repeat(where, lengths))
        every_doc.extend(docs)
    code_of = dict(zip(every_doc, range(len(every_doc))))
    codes = np.fromiter(map(code_of.__getitem__, every_doc), np.int64, len(every_doc))
    n_codes = max(len(every_doc), 1)
    queries = np.concatenate(row_query) if row_query else np.zeros(0, dtype=np.int64)
    keys = queries * n_codes + codes
    unique, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    cand_lengths = np.bincount(unique // n_codes, minlength=n_queries).astype(np.int64)
    docs_array = np.asarray(every_doc, dtype=object) if every_doc else np.zeros(0, dtype=object)
    rows: list[Rows] = []
    start = 0
    for (_, lengths, _, values), where_rows in zip(columns, row_query, strict=True):
        n = len(where_rows)
        cand = inverse[start : start + n].astype(np.int64)
        start += n
        rows.append(_in_query_order(cand, where_rows, np.asarray(lengths), values, n_queries))
    return Table(list(query_index), cand_lengths, docs_array[first], rows)


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
