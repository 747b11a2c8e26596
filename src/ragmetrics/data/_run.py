"""Ranked results per query (a "run"), immutable once built.

A scored run is ranked by score descending with ties broken by doc id descending, the rule of
trec_eval; a run built from lists keeps the order it was given. A doc id repeated within one
ranking keeps its first position; later copies are dropped and counted in ``duplicates``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from itertools import chain, islice, repeat
from operator import pos
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmetrics._util.arrays import lengths_of, offsets_of, packed_in_order, split
from ragmetrics._util.gc import without_gc
from ragmetrics._util.paths import file_stem
from ragmetrics.data._precision import check_score_precision
from ragmetrics.data._store import Store, Stored, store_of
from ragmetrics.errors import InputFormatError, InvalidParameterError, UsageError
from ragmetrics.formats._atomic import open_atomic, write_text
from ragmetrics.formats._convert import (
    check_ids,
    check_real,
    checked_ids,
    id_column,
    pick_key,
    read_json_or_jsonl,
    record_columns,
    record_id,
    require_columns,
    require_mapping,
    score_column,
    scored_snapshot,
)
from ragmetrics.formats._io import (
    PathLike,
    group_contiguous,
    read_trec_maps,
    regroup_order,
    runs_of,
)
from ragmetrics.formats._rules import check_trec_ids, warn_format_loss
from ragmetrics.formats._trec_fast import read_plain_trec_packed

if TYPE_CHECKING:
    import pandas as pd

    from ragmetrics.data._qrels import Qrels

__all__ = [
    "Run",
]

_QUERY_KEYS = ("query_id", "qid", "query-id", "query")
_DOC_KEYS = ("doc_id", "docid", "corpus-id", "corpus_id", "docno", "document_id")
_SCORE_KEYS = ("score", "similarity", "relevance_score")


_SORTED_ALONE = 64  # single-query rankings sorted alone before the whole run is ranked


class Run(Stored, Mapping[str, tuple[str, ...]]):
    """Ranked results per query.

    ``run[qid]`` is the ranking, best first, as a tuple of doc ids; ``run.scores(qid)`` the
    matching scores (``None`` for a run built from lists).

    Example:
        >>> run = Run.from_dict({"q1": {"d1": 0.9, "d3": 0.4, "d2": 0.9}})
        >>> run["q1"]
        ('d2', 'd1', 'd3')
    """

    __slots__ = ("_duplicates", "_lookups", "_ranked", "name")

    # The store keeps the results as given, in input order (a scored run is judged without
    # sorting); ``_ranked`` caches the ranked order per score precision, made on first use.
    _ranked: dict[str, Store]
    _lookups: int  # rankings of single queries sorted alone (see ``ranking``)
    _duplicates: dict[str, int]
    name: str | None

    def __init__(self) -> None:
        raise UsageError(
            "Build a Run with Run.from_dict, Run.from_lists, Run.from_trec, Run.from_json "
            "or Run.from_pandas."
        )

    @classmethod
    def _make(cls, store: Store, duplicates: dict[str, int], name: str | None) -> Run:
        """The one constructor: a store (each doc once per query) and what was dropped."""
        run = object.__new__(cls)
        run._store = store
        run._ranked = {} if store.scored else {"float64": store, "float32": store}
        run._duplicates = duplicates
        run._lookups = 0
        run.name = name
        return run

    # --- construction -------------------------------------------------------------------

    @classmethod
    @without_gc
    def from_dict(
        cls, results: Mapping[str, Mapping[str, float]], *, name: str | None = None
    ) -> Run:
        """Build from ``{query_id: {doc_id: score}}``; higher scores rank first."""
        require_mapping(results, "A run", "a mapping of query id to {doc_id: score}")
        check_ids(results, "Query ids", "of the run")
        per_query = list(results.values())
        plain = set(map(type, per_query)) <= {dict}
        if not plain:  # plain dicts need no check one by one
            for query_id, docs in zip(results, per_query, strict=True):
                if not isinstance(docs, Mapping):
                    hint = (
                        " For ranked lists without scores use Run.from_lists."
                        if isinstance(docs, (list, tuple))
                        else ""
                    )
                    raise InputFormatError(
                        f"The results of query '{query_id}' must be a mapping of doc id to "
                        f"score; got {type(docs).__name__}.{hint}"
                    )
        snapshot, scores = scored_snapshot(per_query, list(results), "of the run")
        return cls._make(Store.from_tuples(list(results), snapshot, scores), {}, name)

    @classmethod
    @without_gc
    def from_lists(cls, rankings: Mapping[str, Sequence[str]], *, name: str | None = None) -> Run:
        """Build from ``{query_id: [doc_id, ...]}``, best first; the order is kept as given."""
        require_mapping(rankings, "A run", "a mapping of query id to a list of doc ids")
        check_ids(rankings, "Query ids", "of the run")
        per_query = list(rankings.values())
        for query_id, docs in zip(rankings, per_query, strict=True):
            if isinstance(docs, (str, Mapping)) or not isinstance(docs, Sequence):
                hint = " For scored results use Run.from_dict." if isinstance(docs, Mapping) else ""
                raise InputFormatError(
                    f"The ranking of query '{query_id}' must be a list of doc ids; "
                    f"got {type(docs).__name__}.{hint}"
                )
        ranked: list[tuple[str, ...]] = checked_ids(per_query, list(rankings), "of the run")
        return cls._from_ranked_lists(list(rankings), ranked, name)

    @classmethod
    def from_trec(cls, path: PathLike, *, name: str | None = None) -> Run:
        """Read a TREC run file: ``query_id Q0 doc_id rank score tag`` per line.

        The rank column is ignored, as trec_eval does: the ranking comes from the scores.
        """
        label = name or file_stem(path)
        plain = read_plain_trec_packed(path, n_columns=6, doc_col=2, value_col=4, integer=False)
        if plain is not None:
            return cls._from_packed(*plain, label)
        maps, repeats = read_trec_maps(
            path,
            n_columns=6,
            doc_col=2,
            value_col=4,
            value_kind="float",
            layout="query_id Q0 doc_id rank score tag",
            extra_fields=True,
            on_repeat="max",
        )
        return cls._from_maps(list(maps), list(maps.values()), repeats, label)

    @classmethod
    def _from_maps(
        cls,
        query_ids: list[str],
        maps: list[dict[str, float]],
        duplicates: dict[str, int],
        name: str | None,
    ) -> Run:
        """A scored run from one validated doc -> score dict per query."""
        docs = list(map(tuple, maps))
        total = sum(map(len, docs))
        scores = np.fromiter(chain.from_iterable(map(dict.values, maps)), np.float64, total)
        return cls._make(Store.from_tuples(query_ids, docs, scores), duplicates, name)

    @classmethod
    def from_json(cls, path: PathLike, *, name: str | None = None) -> Run:
        """Read JSON ``{qid: {doc: score}}`` or ``{qid: [doc, ...]}``, or JSONL records
        ``{"query_id": ..., "doc_id": ..., "score": ...}``."""
        from ragmetrics.formats import _columnar

        label = name or file_stem(path)
        # JSON Lines records read by Arrow, if it can
        packed = _columnar.jsonl_packed(path, (_QUERY_KEYS, _DOC_KEYS, _SCORE_KEYS))
        if packed is not None:
            queries, lengths, ids, scores, dictionary, _ = packed
            return cls._from_columns(queries, lengths, ids, scores, label, dictionary)
        return cls.from_obj(read_json_or_jsonl(path), name=label, source=os.fspath(path))

    @classmethod
    def from_obj(cls, obj: Any, *, name: str | None = None, source: str = "<object>") -> Run:
        """Build from parsed JSON (see :meth:`from_json`)."""
        if isinstance(obj, Mapping):
            if obj and all(isinstance(v, (list, tuple)) for v in obj.values()):
                return cls.from_lists(obj, name=name)
            return cls.from_dict(obj, name=name)
        if isinstance(obj, list):
            columns = record_columns(obj, (_QUERY_KEYS, _DOC_KEYS, _SCORE_KEYS))
            if columns is not None:  # records alike: read column by column
                queries_read, docs_read, values_read = columns
                try:
                    array = np.fromiter(map(pos, values_read), np.float64, len(values_read))
                except (TypeError, ValueError, ArithmeticError):
                    array = None  # not all numbers: named record by record below
                if array is not None and not np.isnan(array).any():
                    grouped = group_contiguous(*runs_of(queries_read), docs_read, array)
                    return cls._from_scored_columns(*grouped, name)
            query_ids: list[str] = []
            doc_ids: list[str] = []
            scores: list[float] = []
            for number, record in enumerate(obj, start=1):
                if not isinstance(record, Mapping):
                    raise InputFormatError(f"{source}, record {number}: expected an object.")
                query_id = record_id(
                    pick_key(record, _QUERY_KEYS, source, number), "query id", source, number
                )
                doc_id = record_id(
                    pick_key(record, _DOC_KEYS, source, number), "doc id", source, number
                )
                value = pick_key(record, _SCORE_KEYS, source, number)
                scores.append(
                    check_real(
                        value,
                        f"{source}, record {number}: the score of '{doc_id}' for query "
                        f"'{query_id}'",
                    )
                )
                query_ids.append(query_id)
                doc_ids.append(doc_id)
            array = np.asarray(scores, dtype=np.float64)
            queries, lengths, docs, values = group_contiguous(*runs_of(query_ids), doc_ids, array)
            return cls._from_scored_columns(queries, lengths, docs, values, name)
        raise InputFormatError(
            f"{source}: run JSON must be an object {{qid: {{doc: score}}}} or "
            f"{{qid: [doc, ...]}}, or a list of records; got {type(obj).__name__}."
        )

    @classmethod
    def from_pandas(
        cls,
        frame: pd.DataFrame,
        *,
        query_col: str = "query_id",
        doc_col: str = "doc_id",
        score_col: str | None = "score",
        name: str | None = None,
    ) -> Run:
        """Build from a DataFrame with one row per result.

        With ``score_col=None`` the row order within each query is the ranking.
        """
        needed = (query_col, doc_col) + ((score_col,) if score_col else ())
        require_columns(frame, needed)
        from ragmetrics.formats import _columnar

        # ids pandas keeps in Arrow, Python strings, integers: read as Arrow reads them
        packed = _columnar.packed_from_pandas(frame, query_col, doc_col, score_col, strings=True)
        if packed is not None:
            queries, lengths, ids, scores, dictionary, _ = packed
            if score_col is None:
                return cls._from_ranked_columns(queries, lengths, ids, name, dictionary)
            return cls._from_columns(queries, lengths, ids, scores, name, dictionary)
        query_ids = id_column(frame, query_col)
        doc_ids = id_column(frame, doc_col)
        if score_col is None:
            values = np.zeros(len(query_ids))
        else:
            values = score_column(frame, score_col, query_ids, doc_ids)
        queries, lengths, docs, scores = group_contiguous(*runs_of(query_ids), doc_ids, values)
        if score_col is None:
            per_query = split(docs, lengths)
            return cls._from_ranked_lists(queries, per_query, name)
        return cls._from_scored_columns(queries, lengths, docs, scores, name)

    @classmethod
    def from_arrow(
        cls,
        table: Any,
        *,
        query_col: str | None = None,
        doc_col: str = "doc_id",
        score_col: str | None = None,
        name: str | None = None,
    ) -> Run:
        """Build from a pyarrow Table or RecordBatch, or any object with the Arrow C stream
        interface (a Polars DataFrame, a DuckDB result), with one row per result.

        The query column is ``query_id`` or ranx's ``q_id`` unless named; the scores are
        ``score`` when present, else the row order within each query is the ranking.
        """
        from ragmetrics.formats import _columnar

        table = _columnar.as_table(table)
        query = _columnar.needed_column(table, query_col, _columnar.QUERY_COLUMNS, "query id")
        _columnar.needed_column(table, doc_col, (), "doc id")
        score = _columnar.find_column(table, score_col, _columnar.SCORE_COLUMNS)
        _columnar.check_column_types(table, (query, doc_col), score, "scores")
        packed = _columnar.packed_columns(table, query, doc_col, score, strings=True)
        if packed is not None:  # no Python string per row, as from a plain TREC file
            queries, lengths, ids, scores, dictionary, _ = packed
            if score is None:
                run = cls._from_ranked_columns(queries, lengths, ids, name, dictionary)
            else:
                run = cls._from_columns(queries, lengths, ids, scores, name, dictionary)
        else:
            run = cls.from_pandas(
                _columnar.decoded(table).to_pandas(),
                query_col=query,
                doc_col=doc_col,
                score_col=score,
                name=name,
            )
        empty = _columnar.empty_rankings(table.schema)
        return run._with_empty_rankings(empty) if empty else run

    def _with_empty_rankings(self, query_ids: Sequence[str]) -> Run:
        """This run and an empty ranking for each of ``query_ids`` it does not rank, after
        its own; its docs, scores and dropped copies are kept as they are."""
        added = list(dict.fromkeys(q for q in query_ids if q not in self))
        if not added:
            return self
        return with_rankings(self, {query_id: {} for query_id in added})

    @classmethod
    def from_parquet(
        cls,
        path: PathLike,
        *,
        query_col: str | None = None,
        doc_col: str = "doc_id",
        score_col: str | None = None,
        name: str | None = None,
    ) -> Run:
        """Read a Parquet file (or a folder of them): see :meth:`from_arrow` for columns."""
        from ragmetrics.formats import _columnar

        table = _columnar.read_ids_table(path, query_col, doc_col)

        def alone(file: Any) -> object:
            return cls.from_parquet(file, query_col=query_col, doc_col=doc_col, score_col=score_col)

        with _columnar.naming_the_file(path, alone):  # a bad row: its file named
            return cls.from_arrow(
                table,
                query_col=query_col,
                doc_col=doc_col,
                score_col=score_col,
                name=name or file_stem(path),
            )

    @classmethod
    def from_grouped(
        cls,
        query_ids: list[str],
        lengths: Sequence[int] | np.ndarray,
        doc_ids: np.ndarray | list[str],
        scores: np.ndarray | None,
        *,
        name: str | None = None,
        distinct: bool = False,
    ) -> Run:
        """A run from flat columns grouped by query, as readers make them: each query
        once with its number of rows, then the doc ids (strings, or a fixed-width ``S`` array
        of their UTF-8 bytes) and scores of every row, query by query. A repeated doc keeps
        its best score (counted in ``duplicates``). The values are taken as checked;
        ``distinct``: the caller knows no doc repeats within a query and each query comes
        once (fusion's candidates), so neither is looked for. ``scores`` None: each query's
        rows are its ranking, in order (a repeated doc keeps its first place), and the run
        has no scores."""
        if scores is None:
            return cls._from_ranked_columns(query_ids, lengths, doc_ids, name)
        if distinct:
            counts = np.asarray(lengths, dtype=np.int64)
            if isinstance(doc_ids, np.ndarray):
                store = Store.from_bytes(query_ids, counts, doc_ids, scores)
                return cls._make(store, {}, name)
            per_query = split(doc_ids, counts)
            return cls._make(Store.from_tuples(query_ids, per_query, scores, counts), {}, name)
        return cls._from_columns(query_ids, lengths, doc_ids, scores, name)

    @classmethod
    def _from_columns(
        cls,
        queries: list[str],
        lengths: Sequence[int] | np.ndarray,
        ids: np.ndarray | list[str],
        scores: np.ndarray,
        name: str | None,
        dictionary: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> Run:
        """A scored run from runs of query ids and their doc ids: fixed-width bytes
        (:meth:`_from_packed`), or Python strings where the ids could not be packed (a NUL,
        or too wide to pad), grouped and deduplicated as the other string readers do."""
        if isinstance(ids, list):
            return cls._from_scored_columns(*group_contiguous(queries, lengths, ids, scores), name)
        return cls._from_packed(queries, lengths, ids, scores, name, dictionary)

    @classmethod
    def _from_packed(
        cls,
        queries: list[str],
        lengths: Sequence[int] | np.ndarray,
        ids: np.ndarray,
        scores: np.ndarray,
        name: str | None,
        dictionary: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> Run:
        """A scored run from runs of query ids and fixed-width doc ids (``_packed``): kept as
        bytes unless a query comes back later or a doc repeats, which are regrouped and
        deduplicated as strings. ``dictionary``: see ``Store.from_bytes``."""
        counts = np.asarray(lengths, dtype=np.int64)
        regrouping = regroup_order(queries, counts)
        if regrouping is not None:  # a query's rows apart (a join, a sort by doc id)
            queries, counts, order = regrouping
            ids, scores, dictionary = packed_in_order(order, ids, scores, dictionary)
        store = Store.from_bytes(queries, counts, ids, scores, dictionary=dictionary)
        repeated = store.repeated_rows()
        if not len(repeated):
            return cls._make(store, {}, name)
        store, dropped = store.without_repeats(repeated)  # those queries alone
        return cls._make(store, dropped, name)

    @classmethod
    def _from_ranked_columns(
        cls,
        queries: list[str],
        lengths: Sequence[int] | np.ndarray,
        ids: np.ndarray | list[str],
        name: str | None,
        dictionary: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> Run:
        """An unscored run from runs of query ids and their doc ids in rank order (the rows'
        order): fixed-width bytes kept as bytes, only the queries that repeat a doc read as
        Python objects (each keeps its first place, as :meth:`_from_ranked_lists` does);
        Python strings (ids that could not be packed) as ranked lists."""
        counts = np.asarray(lengths, dtype=np.int64)
        if isinstance(ids, list):
            queries, counts, docs, _ = group_contiguous(queries, counts, ids, np.zeros(len(ids)))
            return cls._from_ranked_lists(queries, split(docs, counts), name)
        regrouping = regroup_order(queries, counts)
        if regrouping is not None:  # a query's rows apart: brought together in their order
            queries, counts, order = regrouping
            ids, _, dictionary = packed_in_order(order, ids, np.zeros(len(ids)), dictionary)
        # each doc's place as its value, the first place the highest: a repeated doc keeps
        # its first copy by the same rule that keeps a scored doc's best
        places = (np.repeat(offsets_of(counts)[:-1], counts) - np.arange(len(ids))).astype(
            np.float64
        )
        store = Store.from_bytes(queries, counts, ids, places, dictionary=dictionary)
        repeated = store.repeated_rows()
        dropped: dict[str, int] = {}
        if len(repeated):
            store, dropped = store.without_repeats(repeated)
        return cls._make(store.without_values(), dropped, name)

    @classmethod
    @without_gc
    def _from_scored_columns(
        cls,
        query_ids: list[str],
        lengths: np.ndarray,
        docs: list[str],
        scores: np.ndarray,
        name: str | None,
    ) -> Run:
        """A scored run from flat columns grouped by query (kept unsorted).

        A doc repeated within a query keeps its highest score (its best-ranked copy); the
        copies dropped are counted in ``duplicates``.
        """
        counts = np.asarray(lengths, dtype=np.int64)
        per_query = split(docs, counts)
        repeated = np.flatnonzero(lengths_of(list(map(set, per_query))) != counts).tolist()
        if not repeated:
            return cls._make(Store.from_tuples(query_ids, per_query, scores, counts), {}, name)
        # only the queries that hold a doc twice are rebuilt: each doc once, where it first
        # appears, with its best score (its best-ranked copy)
        bounds = offsets_of(counts).tolist()
        pieces: list[np.ndarray] = []
        done = 0
        counts = counts.copy()
        duplicates: dict[str, int] = {}
        for i in repeated:
            best: dict[str, float] = {}
            for doc, value in zip(
                per_query[i], scores[bounds[i] : bounds[i + 1]].tolist(), strict=True
            ):
                if doc not in best or value > best[doc]:
                    best[doc] = value
            per_query[i] = tuple(best)
            pieces += [scores[done : bounds[i]], np.fromiter(best.values(), np.float64, len(best))]
            done = bounds[i + 1]
            duplicates[query_ids[i]] = int(counts[i]) - len(best)
            counts[i] = len(best)
        kept = np.concatenate([*pieces, scores[done:]])
        return cls._make(Store.from_tuples(query_ids, per_query, kept, counts), duplicates, name)

    @classmethod
    def _from_ranked_lists(
        cls, query_ids: list[str], docs: list[tuple[str, ...]], name: str | None
    ) -> Run:
        """An unscored run: the order given is the ranking; repeats keep their first place."""
        duplicates: dict[str, int] = {}
        sizes = map(len, map(set, docs))
        for i in [i for i, (n, d) in enumerate(zip(sizes, docs)) if n != len(d)]:
            distinct = tuple(dict.fromkeys(docs[i]))  # first occurrences, in order
            duplicates[query_ids[i]] = len(docs[i]) - len(distinct)
            docs[i] = distinct
        return cls._make(Store.from_tuples(query_ids, docs, None), duplicates, name)

    def _ranked_store(self, score_precision: str = "float64") -> Store:
        """The rankings, sorted from the input on first use (per score precision)."""
        ranked = self._ranked.get(score_precision)
        if ranked is None:
            precision = check_score_precision(score_precision)
            ranked = self._ranked[precision] = self._store.ranked(precision)
        return ranked

    # --- export --------------------------------------------------------------------------

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{query_id: {doc_id: score}}``; a run from lists gets scores n, n-1, ..., 1."""
        ranked = self._ranked_store()
        return dict(
            zip(ranked.query_ids, map(dict, map(zip, ranked.tuples(), self._score_lists())))
        )

    def ranked_columns(
        self,
    ) -> tuple[tuple[str, ...], np.ndarray, list[str], np.ndarray, np.ndarray | None]:
        """The run as flat columns, for code that works on whole runs at once: the query ids,
        how many docs each ranks, every doc id query by query (in the order the run holds
        them), the permutation that puts them in rank order (``docs[order[i]]`` is the i-th
        doc in rank order; within each query's span), and the scores in the order held
        (``None`` for a run from lists)."""
        store, order = self._columns_store()
        values = store.values if store.scored else None
        return store.query_ids, store.lengths, store.flat_docs(), order, values

    def _columns_store(self) -> tuple[Store, np.ndarray]:
        """The store :meth:`ranked_columns` reads and its rank order."""
        ranked = self._ranked.get("float64")
        store = ranked if ranked is not None else self._store
        order = (
            store.ranked_order("float64")
            if ranked is None and store.scored and store.n_docs
            else np.arange(store.n_docs, dtype=np.int64)
        )
        return store, order

    def to_lists(self) -> dict[str, list[str]]:
        """``{query_id: [doc_id, ...]}``, best first."""
        ranked = self._ranked_store()
        return dict(zip(ranked.query_ids, map(list, ranked.tuples())))

    def to_json(self, path: PathLike | None = None) -> str:
        """Serialize as ``{qid: {doc: score}}`` (scored) or ``{qid: [doc, ...]}`` (lists)."""
        import json  # here: reading TREC files never needs it

        payload: Any = self.to_dict() if self.is_scored else self.to_lists()
        text = json.dumps(payload, ensure_ascii=False)
        if path is not None:
            write_text(path, text)
        return text

    def to_trec(self, path: PathLike, *, tag: str | None = None) -> None:
        """Write the standard 6-column TREC run file (atomically). An id a TREC file cannot
        hold (empty, or with whitespace or a control character) is refused before anything
        is written: write JSON or Parquet for such ids."""
        label = tag or self.name or "ragmetrics"
        ranked = self._ranked_store()
        check_trec_ids(ranked.query_ids, "the query id", path)
        check_trec_ids(ranked.flat_docs(), "the doc id", path)
        check_trec_ids([label], "the tag", path)
        empty = ranked.empty_query_ids()
        if empty:
            warn_format_loss(empty, "an empty ranking", path)
        with open_atomic(path) as handle:
            for query_id, docs, scores in zip(
                ranked.query_ids, ranked.tuples(), self._score_lists(), strict=True
            ):
                for rank, (doc_id, score) in enumerate(zip(docs, scores, strict=True), start=1):
                    handle.write(f"{query_id} Q0 {doc_id} {rank} {score!r} {label}\n")

    def to_parquet(self, path: PathLike) -> None:
        """Write ``query_id``, ``doc_id`` and ``score`` (float64, exact) in ranked order; a run
        from ranked lists has no ``score`` column (its row order is the ranking)."""
        from ragmetrics.formats import _columnar

        ranked = self._ranked_store()
        columns: dict[str, Any] = {
            "query_id": np.repeat(np.asarray(ranked.query_ids, dtype=object), ranked.lengths),
            "doc_id": ranked.flat_docs(),
        }
        if ranked.values is not None:
            columns["score"] = ranked.values
        empty = ranked.empty_query_ids()
        _columnar.write_table(path, columns, empty)

    def to_pandas(self) -> pd.DataFrame:
        """A DataFrame with columns ``query_id``, ``doc_id``, ``rank`` and ``score``."""
        from ragmetrics._util.optional import import_pandas

        pandas = import_pandas()
        ranked = self._ranked_store()
        lengths = ranked.lengths
        scores = ranked.values
        frame: pd.DataFrame = pandas.DataFrame(
            {
                "query_id": np.repeat(np.asarray(ranked.query_ids, dtype=object), lengths),
                "doc_id": ranked.flat_docs(),
                "rank": np.arange(ranked.n_docs) - np.repeat(ranked.offsets[:-1], lengths) + 1,
                "score": scores if scores is not None else np.full(ranked.n_docs, np.nan),
            }
        )
        return frame

    # --- access --------------------------------------------------------------------------

    def __getitem__(self, query_id: str) -> tuple[str, ...]:
        return self.ranking(query_id)

    @property
    def is_scored(self) -> bool:
        """True when the run carries scores (built from dicts, TREC files or scored JSON)."""
        return self._store.scored

    @property
    def duplicates(self) -> Mapping[str, int]:
        """Per query, how many repeated doc ids were dropped (only queries with some)."""
        return dict(self._duplicates)

    @property
    def n_results(self) -> int:
        """The total number of (query, doc) results."""
        return self._store.n_docs

    @property
    def lengths(self) -> np.ndarray:
        """The number of distinct docs ranked for each query, aligned with ``query_ids``."""
        return self._store.lengths

    def rankings(self, *, score_precision: str = "float64") -> list[tuple[str, ...]]:
        """Every query's ranking, best first, aligned with ``query_ids``.

        ``score_precision="float32"`` compares scores rounded to 32-bit floats, as trec_eval
        up to 9.0.8 and pytrec_eval do: scores equal in float32 tie, and ties go to the doc
        id that sorts last. The default compares 64-bit doubles, as trec_eval 10 does.
        """
        return self._ranked_store(score_precision).tuples()

    def ranking(self, query_id: str, *, score_precision: str = "float64") -> tuple[str, ...]:
        """The ranking of one query (``run[query_id]`` at the default precision)."""
        store, row = self._ranked_row(query_id, score_precision)
        return store.tuples()[row]

    def scores(self, query_id: str) -> tuple[float, ...] | None:
        """The scores of ``run[query_id]``, or ``None`` for a run built from lists."""
        ranked, row = self._ranked_row(query_id, "float64")
        if ranked.values is None:
            return None
        return tuple(ranked.values[ranked.offsets[row] : ranked.offsets[row + 1]].tolist())

    def _ranked_row(self, query_id: str, score_precision: str) -> tuple[Store, int]:
        """A ranked store holding ``query_id`` and its row there. The first few queries asked
        one by one are sorted alone (a report looks at five queries of a run of 100,000);
        past those, the whole run is ranked once."""
        row = self._store.index[query_id]
        if score_precision not in self._ranked and self._lookups < _SORTED_ALONE:
            self._lookups += 1
            precision = check_score_precision(score_precision)
            return self._store.take(np.array([row])).ranked(precision), 0
        return self._ranked_store(score_precision), row

    def _score_lists(self) -> Iterator[list[float]]:
        """The scores of each ranking, in order; a run from lists gets n, n-1, ..., 1."""
        ranked = self._ranked_store()
        if ranked.values is None:
            return (list(map(float, range(n, 0, -1))) for n in ranked.lengths.tolist())
        return map(list, map(islice, repeat(iter(ranked.values.tolist())), ranked.lengths.tolist()))

    def truncate(self, depth: int) -> Run:
        """A new run with each ranking cut to its first ``depth`` docs."""
        if not isinstance(depth, int) or depth < 1:
            raise InvalidParameterError(f"The depth must be an int >= 1. Got {depth!r} instead.")
        ranked = self._ranked.get("float64")  # in rank order: a row's first docs are its best
        store = self._store.top(depth, "float64") if ranked is None else ranked.prefixes(depth)
        return Run._make(store, dict(self._duplicates), self.name)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Run):
            return NotImplemented
        mine, theirs = self._ranked_store().values, other._ranked_store().values
        return self.to_lists() == other.to_lists() and (
            (mine is None) == (theirs is None)
            and (mine is None or theirs is None or np.array_equal(mine, theirs))
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        label = f"{self.name!r}, " if self.name else ""
        kind = "scored" if self.is_scored else "ranked lists"
        dropped = sum(self._duplicates.values())
        extra = f", {dropped} repeated ids dropped" if dropped else ""
        return f"Run({label}{len(self)} queries, {self.n_results} results, {kind}{extra})"


def with_rankings(run: Run, rankings: Mapping[str, Mapping[str, float]]) -> Run:
    """``run`` and, after its own, the ``rankings`` of queries it does not rank (their scores
    ignored by a run from lists); its docs, scores and dropped copies kept as they are (ids
    read as bytes stay bytes when the new ones can be too)."""
    docs = [tuple(ranking) for ranking in rankings.values()]
    scores = [score for ranking in rankings.values() for score in ranking.values()]
    values = np.asarray(scores, dtype=np.float64) if run.is_scored else None
    store = run._store.with_rows(list(rankings), docs, values)
    return Run._make(store, dict(run._duplicates), run.name)


def judged_docs_only(run: Run, qrels: Qrels) -> Run:
    """``run`` with only the docs ``qrels`` judge with a grade >= 0, each ranking's in their
    order (trec_eval's ``-J``: a negative grade is "unjudged" there too); its name and
    dropped copies kept. Used by ``evaluate(judged_only=True)``, the stream, the trec_eval
    command and both ports. The judged docs are found as evaluation finds them (ids as bytes
    stay bytes), not by reading the run as dicts."""
    store = run._store
    judged = store_of(qrels)
    run_rows = store.rows(judged.query_ids)
    rows, positions, grades = store.find(judged, run_rows)
    keep = np.zeros(store.n_docs, dtype=bool)
    keep[(store.offsets[run_rows[rows]] + positions)[grades >= 0]] = True
    return Run._make(store.kept(keep), dict(run._duplicates), run.name)


def restricted(run: Run, query_ids: Sequence[str]) -> Run:
    """``run``'s rankings of ``query_ids`` only (each ranked here), in that order, as they
    were read (ids as bytes stay bytes), with their dropped copies."""
    wanted = set(query_ids)
    dropped = {q: n for q, n in run._duplicates.items() if q in wanted}
    return Run._make(run._store.take(run._store.rows(query_ids)), dropped, run.name)


def packed_columns(
    run: Run,
) -> tuple[tuple[str, ...], np.ndarray, np.ndarray, np.ndarray, np.ndarray | None] | None:
    """:meth:`Run.ranked_columns` with the doc ids as bytes (a fixed-width ``S`` array of
    their UTF-8, as the evaluation compares them; kept with the run), or None when they
    cannot be packed (an id holding a NUL or a lone surrogate, or ids too uneven to pad):
    code that works on whole runs then takes the strings."""
    store, order = run._columns_store()
    ids = store.encoded()
    if ids is None:
        return None
    values = store.values if store.scored else None
    return store.query_ids, store.lengths, ids, order, values
