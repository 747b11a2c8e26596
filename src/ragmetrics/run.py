"""Ranked results per query (a "run"), immutable once built.

A scored run is ranked by score descending with ties broken by doc id descending, the rule of
trec_eval; a run built from lists keeps the order it was given. A doc id repeated within one
ranking keeps its first position; later copies are dropped and counted in ``duplicates``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from itertools import chain, islice, repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmetrics import _packed
from ragmetrics._convert import (
    check_ids,
    check_real,
    checked_ids,
    id_column,
    pick_key,
    read_json_or_jsonl,
    record_id,
    require_columns,
    require_mapping,
    score_column,
    scored_snapshot,
)
from ragmetrics._gc import without_gc
from ragmetrics._io import PathLike, group_contiguous, read_trec_maps, runs_of
from ragmetrics._precision import as_float32, check_score_precision
from ragmetrics._trec_fast import read_plain_trec_packed
from ragmetrics.errors import InputFormatError, InvalidParameterError, UsageError

if TYPE_CHECKING:
    import pandas as pd

_QUERY_KEYS = ("query_id", "qid", "query-id", "query")
_DOC_KEYS = ("doc_id", "docid", "corpus-id", "corpus_id", "docno", "document_id")
_SCORE_KEYS = ("score", "similarity", "relevance_score")


class Run(Mapping[str, tuple[str, ...]]):
    """Ranked results per query.

    ``run[qid]`` is the ranking, best first, as a tuple of doc ids; ``run.scores(qid)`` the
    matching scores (``None`` for a run built from lists).

    Example:
        >>> run = Run.from_dict({"q1": {"d1": 0.9, "d3": 0.4, "d2": 0.9}})
        >>> run["q1"]
        ('d2', 'd1', 'd3')
    """

    __slots__ = (
        "_duplicates",
        "_index_cache",
        "_input",
        "_lengths",
        "_offsets_cache",
        "_packed",
        "_query_ids",
        "_ranked_cache",
        "_scored",
        "name",
    )

    _query_ids: tuple[str, ...]  # each once: every constructor groups a query's results
    _index_cache: dict[str, int] | None  # query id -> position, made on first use
    _lengths: np.ndarray  # distinct docs per query, aligned with _query_ids
    _offsets_cache: np.ndarray  # where each query's scores start in the flat score array
    _scored: bool
    # A scored run keeps its results as given: a tuple of doc ids per query, in input order,
    # and their scores flat. The engine judges it without sorting; the ranking is made on
    # demand. (A snapshot, not the caller's dicts: the run stays immutable.)
    _input: tuple[list[tuple[str, ...]], np.ndarray] | None
    # A run read from a plain TREC file keeps its doc ids as bytes (``_packed``, aligned with
    # the scores) and makes the tuples of ``_input`` only when something asks for strings.
    _packed: tuple[np.ndarray, np.ndarray, np.ndarray] | None
    # the rankings and their scores per score precision, sorted on first use
    _ranked_cache: dict[str, tuple[list[tuple[str, ...]], np.ndarray | None]]
    _duplicates: dict[str, int]
    name: str | None

    def __init__(self) -> None:
        raise UsageError(
            "Build a Run with Run.from_dict, Run.from_lists, Run.from_trec, Run.from_json "
            "or Run.from_pandas."
        )

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
        lengths = np.fromiter(map(len, snapshot), dtype=np.int64, count=len(snapshot))
        return cls._from_scored(list(results), snapshot, scores, {}, name, lengths=lengths)

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
    @without_gc
    def from_trec(cls, path: PathLike, *, name: str | None = None) -> Run:
        """Read a TREC run file: ``query_id Q0 doc_id rank score tag`` per line.

        The rank column is ignored, as trec_eval does: the ranking comes from the scores.
        """
        label = name or Path(path).stem
        plain = read_plain_trec_packed(path, n_columns=6, doc_col=2, value_col=4, integer=False)
        if plain is not None:
            queries, lengths, ids, scores = plain
            if len(set(queries)) == len(queries):
                return cls._from_packed(queries, np.asarray(lengths, np.int64), ids, scores, label)
            # a query whose lines are split across the file: regroup as strings
            grouped = group_contiguous(queries, lengths, _packed.decode(ids), scores)
            return cls._from_scored_columns(*grouped, label)
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
    def _from_packed(
        cls,
        query_ids: list[str],
        lengths: np.ndarray,
        ids: np.ndarray,
        scores: np.ndarray,
        name: str | None,
    ) -> Run:
        """A scored run from doc ids as bytes, grouped by query (each query once)."""
        hashed = _packed.hashes(ids, _packed.n_words(ids))
        if _packed.may_repeat(ids, lengths, hashed):
            # a doc repeated within a query: the string path keeps its best copy and counts
            return cls._from_scored_columns(query_ids, lengths, _packed.decode(ids), scores, name)
        run = object.__new__(cls)
        run._set_ids(query_ids, lengths, name)
        run._scored = True
        run._input = None
        run._packed = (ids, scores, hashed)
        run._ranked_cache = {}
        run._duplicates = {}
        return run

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
        scores = np.fromiter(chain.from_iterable(map(_values, maps)), np.float64, total)
        return cls._from_scored(query_ids, docs, scores, duplicates, name)

    @classmethod
    def _from_scored(
        cls,
        query_ids: list[str],
        docs: list[tuple[str, ...]],
        scores: np.ndarray,
        duplicates: dict[str, int],
        name: str | None,
        *,
        lengths: np.ndarray | None = None,
    ) -> Run:
        """A scored run from validated doc tuples (each doc once) and their scores flat
        (``lengths``: the tuples' lengths, when the caller has them)."""
        run = object.__new__(cls)
        run._set_ids(query_ids, _lengths_of(docs) if lengths is None else lengths, name)
        run._scored = True
        run._input = (docs, scores)
        run._packed = None
        run._ranked_cache = {}
        run._duplicates = duplicates
        return run

    @classmethod
    def from_json(cls, path: PathLike, *, name: str | None = None) -> Run:
        """Read JSON ``{qid: {doc: score}}`` or ``{qid: [doc, ...]}``, or JSONL records
        ``{"query_id": ..., "doc_id": ..., "score": ...}``."""
        return cls.from_obj(
            read_json_or_jsonl(path), name=name or Path(path).stem, source=os.fspath(path)
        )

    @classmethod
    def from_obj(cls, obj: Any, *, name: str | None = None, source: str = "<object>") -> Run:
        """Build from parsed JSON (see :meth:`from_json`)."""
        if isinstance(obj, Mapping):
            if obj and all(isinstance(v, (list, tuple)) for v in obj.values()):
                return cls.from_lists(obj, name=name)
            return cls.from_dict(obj, name=name)
        if isinstance(obj, list):
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
        query_ids = id_column(frame, query_col)
        doc_ids = id_column(frame, doc_col)
        if score_col is None:
            values = np.zeros(len(query_ids))
        else:
            values = score_column(frame, score_col, query_ids, doc_ids)
        queries, lengths, docs, scores = group_contiguous(*runs_of(query_ids), doc_ids, values)
        if score_col is None:
            per_query = _split(docs, lengths)
            return cls._from_ranked_lists(queries, per_query, name)
        return cls._from_scored_columns(queries, lengths, docs, scores, name)

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
        per_query = _split(docs, counts)
        distinct = np.fromiter(map(len, map(set, per_query)), dtype=np.int64, count=len(counts))
        repeated = np.flatnonzero(distinct != counts).tolist()
        if not repeated:
            return cls._from_scored(query_ids, per_query, scores, {}, name)
        bounds = np.concatenate(([0], np.cumsum(counts))).tolist()
        maps = [
            dict(zip(t, scores[bounds[i] : bounds[i + 1]].tolist(), strict=True))
            for i, t in enumerate(per_query)
        ]
        duplicates: dict[str, int] = {}
        for i in repeated:
            best: dict[str, float] = {}
            for doc, value in zip(
                per_query[i], scores[bounds[i] : bounds[i + 1]].tolist(), strict=True
            ):
                if doc not in best or value > best[doc]:
                    best[doc] = value  # a repeated doc keeps its best-ranked copy
            maps[i] = best
            duplicates[query_ids[i]] = int(counts[i]) - len(best)
        return cls._from_maps(query_ids, maps, duplicates, name)

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
        run = object.__new__(cls)
        run._set_ids(query_ids, _lengths_of(docs), name)
        run._scored = False
        run._input = None
        run._packed = None
        run._ranked_cache = {"float64": (docs, None)}
        run._duplicates = duplicates
        return run

    def _set_ids(self, query_ids: list[str], lengths: np.ndarray, name: str | None) -> None:
        self._query_ids = tuple(query_ids)
        self._index_cache = None
        lengths.flags.writeable = False  # handed out by the ``lengths`` property
        self._lengths = lengths
        self._offsets_cache = np.zeros(len(self._lengths) + 1, dtype=np.int64)
        np.cumsum(self._lengths, out=self._offsets_cache[1:])
        self.name = name

    @property
    def _index(self) -> dict[str, int]:
        """Each query id's position (``run[qid]`` and the engine's lookups)."""
        index = self._index_cache
        if index is None:
            index = self._index_cache = dict(zip(self._query_ids, range(len(self._query_ids))))
        return index

    @without_gc
    def _ranked(
        self, score_precision: str = "float64"
    ) -> tuple[list[tuple[str, ...]], np.ndarray | None]:
        """The rankings (a tuple of doc ids per query) and their scores flat, sorted from the
        input on first use; a run from lists is its own ranking at either precision."""
        cached = self._ranked_cache.get(score_precision)
        if cached is None:
            check_score_precision(score_precision)
            if not self._scored:
                return self._ranked_cache["float64"]
            docs, scores = self._scored_input()
            flat = list(chain.from_iterable(docs))
            if flat:
                compared = as_float32(scores) if score_precision == "float32" else scores
                order = _rank_by_score(compared, self._lengths, self._offsets_cache, flat)
                if not np.array_equal(order, np.arange(len(order))):
                    docs = _split(list(map(flat.__getitem__, order.tolist())), self._lengths)
                    scores = scores[order]
            cached = (docs, scores)
            self._ranked_cache[score_precision] = cached
        return cached

    @property
    def _docs(self) -> list[str]:
        """Every ranked doc id, flat."""
        return list(chain.from_iterable(self._ranked()[0]))

    @property
    def _scores(self) -> np.ndarray | None:
        return self._ranked()[1]

    @property
    def _offsets(self) -> np.ndarray:
        return self._offsets_cache

    # --- export --------------------------------------------------------------------------

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{query_id: {doc_id: score}}``; a run from lists gets scores n, n-1, ..., 1."""
        return {q: dict(zip(self[q], self._scores_of(q), strict=True)) for q in self._query_ids}

    def to_lists(self) -> dict[str, list[str]]:
        """``{query_id: [doc_id, ...]}``, best first."""
        return {q: list(self[q]) for q in self._query_ids}

    def to_json(self, path: PathLike | None = None) -> str:
        """Serialize as ``{qid: {doc: score}}`` (scored) or ``{qid: [doc, ...]}`` (lists)."""
        payload: Any = self.to_lists() if self._scores is None else self.to_dict()
        text = json.dumps(payload, ensure_ascii=False)
        if path is not None:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
        return text

    def to_trec(self, path: PathLike, *, tag: str | None = None) -> None:
        """Write the standard 6-column TREC run file."""
        label = tag or self.name or "ragmetrics"
        with open(path, "w", encoding="utf-8") as handle:
            for query_id in self._query_ids:
                for rank, (doc_id, score) in enumerate(
                    zip(self[query_id], self._scores_of(query_id), strict=True), start=1
                ):
                    handle.write(f"{query_id} Q0 {doc_id} {rank} {score!r} {label}\n")

    def to_pandas(self) -> pd.DataFrame:
        """A DataFrame with columns ``query_id``, ``doc_id``, ``rank`` and ``score``."""
        from ragmetrics._optional import import_pandas

        pandas = import_pandas()
        lengths = self._lengths
        docs = self._docs
        frame: pd.DataFrame = pandas.DataFrame(
            {
                "query_id": np.repeat(np.asarray(self._query_ids, dtype=object), lengths),
                "doc_id": docs,
                "rank": np.arange(len(docs)) - np.repeat(self._offsets[:-1], lengths) + 1,
                "score": self._scores if self._scores is not None else np.full(len(docs), np.nan),
            }
        )
        return frame

    # --- access --------------------------------------------------------------------------

    def __getitem__(self, query_id: str) -> tuple[str, ...]:
        return self._ranked()[0][self._index[query_id]]

    def __iter__(self) -> Iterator[str]:
        return iter(self._query_ids)

    def __len__(self) -> int:
        return len(self._query_ids)

    def __contains__(self, query_id: object) -> bool:
        return query_id in self._index

    @property
    def query_ids(self) -> tuple[str, ...]:
        """The queries of the run, in the order they were given."""
        return self._query_ids

    @property
    def is_scored(self) -> bool:
        """True when the run carries scores (built from dicts, TREC files or scored JSON)."""
        return self._scored

    @property
    def duplicates(self) -> Mapping[str, int]:
        """Per query, how many repeated doc ids were dropped (only queries with some)."""
        return dict(self._duplicates)

    @property
    def n_results(self) -> int:
        """The total number of (query, doc) results."""
        return int(self._lengths.sum())

    @property
    def lengths(self) -> np.ndarray:
        """The number of distinct docs ranked for each query, aligned with ``query_ids``."""
        return self._lengths

    def _judging_view(self) -> tuple[list[tuple[str, ...]], np.ndarray | None]:
        """``(docs, scores)`` for the engine, without sorting: a tuple of doc ids per query
        and the scores flat (offsets: ``lengths``).

        A scored run gives its docs in input order with their scores (a doc's rank is
        counted from them); a run from lists gives its rankings and ``None``.
        """
        if self._scored:
            return self._scored_input()
        return self._ranked()[0], None

    @without_gc
    def _scored_input(self) -> tuple[list[tuple[str, ...]], np.ndarray]:
        """A scored run's doc ids per query in input order (as strings), and its scores."""
        if self._input is None:
            assert self._packed is not None
            ids, scores, _ = self._packed
            self._input = (_split(_packed.decode(ids), self._lengths), scores)
        return self._input

    def _packed_view(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """For the engine: ``(doc ids as bytes, scores, their hashes)``, flat in input order,
        for a run read from a plain TREC file (hashes as ``_packed.hashes(ids,
        _packed.n_words(ids))``); None for any other run."""
        return self._packed

    def rankings(self, *, score_precision: str = "float64") -> list[tuple[str, ...]]:
        """Every query's ranking, best first, aligned with ``query_ids``.

        ``score_precision="float32"`` compares scores rounded to 32-bit floats, as trec_eval
        up to 9.0.8 and pytrec_eval do: scores equal in float32 tie, and ties go to the doc
        id that sorts last. The default compares 64-bit doubles, as trec_eval 10 does.
        """
        return self._ranked(score_precision)[0]

    def ranking(self, query_id: str, *, score_precision: str = "float64") -> tuple[str, ...]:
        """The ranking of one query (``run[query_id]`` at the default precision)."""
        return self._ranked(score_precision)[0][self._index[query_id]]

    def scores(self, query_id: str) -> tuple[float, ...] | None:
        """The scores of ``run[query_id]``, or ``None`` for a run built from lists."""
        if self._scores is None:
            return None
        position = self._index[query_id]
        return tuple(self._scores[self._offsets[position] : self._offsets[position + 1]].tolist())

    def _scores_of(self, query_id: str) -> list[float]:
        scored = self.scores(query_id)
        if scored is not None:
            return list(scored)
        n = len(self[query_id])
        return [float(n - i) for i in range(n)]

    def truncate(self, depth: int) -> Run:
        """A new run with each ranking cut to its first ``depth`` docs."""
        if not isinstance(depth, int) or depth < 1:
            raise InvalidParameterError(f"The depth must be an int >= 1. Got {depth!r} instead.")
        rankings = {q: self[q][:depth] for q in self._query_ids}
        if self._scores is None:
            return Run.from_lists(rankings, name=self.name)
        return Run.from_dict(
            {q: dict(zip(r, self._scores_of(q), strict=False)) for q, r in rankings.items()},
            name=self.name,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Run):
            return NotImplemented
        return self.to_lists() == other.to_lists() and (
            (self._scores is None) == (other._scores is None)
            and (
                self._scores is None
                or other._scores is None
                or np.array_equal(self._scores, other._scores)
            )
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        label = f"{self.name!r}, " if self.name else ""
        kind = "scored" if self._scored else "ranked lists"
        dropped = sum(self._duplicates.values())
        extra = f", {dropped} repeated ids dropped" if dropped else ""
        return f"Run({label}{len(self)} queries, {self.n_results} results, {kind}{extra})"


def _values(mapping: Mapping[str, float]) -> Any:
    return mapping.values()


def _split(flat: list[str], lengths: np.ndarray) -> list[tuple[str, ...]]:
    """Cut a flat list of doc ids into one tuple per query (at C speed)."""
    rest = iter(flat)
    return list(map(tuple, map(islice, repeat(rest), lengths.tolist())))


def _rank_by_score(
    scores: np.ndarray, lengths: np.ndarray, offsets: np.ndarray, docs: list[str]
) -> np.ndarray:
    """The permutation that sorts each query by score descending, ties by doc id descending."""
    n_queries = len(lengths)
    total = len(scores)
    query_of = np.repeat(np.arange(n_queries), lengths)
    depth = int(lengths.max())
    if n_queries * depth <= 4 * total + 4096:
        # One padded matrix argsort is an order of magnitude faster than a lexsort.
        column = np.arange(total) - np.repeat(offsets[:-1], lengths)
        padded = np.full((n_queries, depth), np.inf)
        padded[query_of, column] = -scores
        ranked = np.argsort(padded, axis=1, kind="stable") + offsets[:-1, None]
        order = ranked[np.arange(depth)[None, :] < lengths[:, None]]
    else:
        order = np.asarray(np.lexsort((-scores, query_of)))
    ranked_scores = scores[order]
    ties = np.flatnonzero(ranked_scores[1:] == ranked_scores[:-1])
    if len(ties):
        ties = ties[query_of[ties] == query_of[ties + 1]]
    if len(ties):
        order = order.copy()
        # Contiguous runs of tied positions: sort each run by doc id descending (trec_eval).
        breaks = np.flatnonzero(np.diff(ties) != 1)
        run_starts = np.concatenate(([ties[0]], ties[breaks + 1]))
        run_ends = np.concatenate((ties[breaks], [ties[-1]])) + 2
        for start, end in zip(run_starts.tolist(), run_ends.tolist(), strict=True):
            block = order[start:end].tolist()
            block.sort(key=docs.__getitem__, reverse=True)
            order[start:end] = block
    ranked_order: np.ndarray = order
    return ranked_order


def _lengths_of(docs: list[tuple[str, ...]]) -> np.ndarray:
    return np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
