"""Relevance judgments: graded grades per (query, document), optionally in evidence groups."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping, Sequence
from itertools import chain, islice, repeat
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmetrics._util.arrays import lengths_of
from ragmetrics._util.gc import without_gc
from ragmetrics.data._store import Store, Stored
from ragmetrics.errors import InputFormatError
from ragmetrics.formats import _packed
from ragmetrics.formats._atomic import open_atomic, write_text
from ragmetrics.formats._convert import (
    check_ids,
    checked_ids,
    id_column,
    int_grade,
    iter_items,
    pick_key,
    read_json_or_jsonl,
    real_grade,
    record_columns,
    record_id,
    require_columns,
    require_mapping,
)
from ragmetrics.formats._io import (
    PathLike,
    close_bytes,
    group_contiguous,
    open_bytes,
    read_trec_maps,
    runs_of,
)
from ragmetrics.formats._rules import INT64_MAX, check_trec_ids, warn_format_loss
from ragmetrics.formats._trec_fast import read_plain_trec_packed

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Groups",
    "Qrels",
]

Groups = tuple[tuple[str, ...], ...]

_QUERY_KEYS = ("query_id", "qid", "query-id", "query")
_DOC_KEYS = ("doc_id", "docid", "corpus-id", "corpus_id", "docno", "document_id")
_GRADE_KEYS = ("relevance", "grade", "rel", "score", "label")


class Qrels(Stored, Mapping[str, Mapping[str, int]]):
    """Graded relevance judgments, immutable once built.

    ``qrels[qid]`` is a read-only mapping of doc id to integer grade; a grade of 0 or less is
    non-relevant at the default threshold. Evidence groups (``from_groups``) state that a
    question needs one document of each group; they drive ``group_recall@k`` and
    ``recall_all@k``.

    Example:
        >>> qrels = Qrels.from_dict({"q1": {"d1": 2, "d2": 0}})
        >>> qrels["q1"]["d1"], len(qrels), qrels.query_ids
        (2, 1, ('q1',))
    """

    __slots__ = ("_groups",)
    _groups: dict[str, Groups]

    def __init__(
        self,
        judgments: Mapping[str, Mapping[str, int]],
        *,
        groups: Mapping[str, Groups] | None = None,
    ) -> None:
        """Prefer the ``from_*`` constructors; this one validates and copies a dict."""
        require_mapping(judgments, "Qrels", "a mapping of query id to {doc_id: grade}")
        check_ids(judgments, "Query ids", "of the qrels")
        per_query: list[Any] = list(judgments.values())
        grades: np.ndarray | None = None
        if set(map(type, per_query)) <= {dict}:
            # the common case: dicts of int grades, copied with every id checked; the grades
            # are read from the copies (what the store keeps), each within int64 at C speed
            maps = checked_ids(per_query, list(judgments), "of the qrels", copies=True)
            if set(map(type, chain.from_iterable(map(dict.values, maps)))) <= {int}:
                with contextlib.suppress(OverflowError):  # the slow path names it
                    grades = np.fromiter(chain.from_iterable(map(dict.values, maps)), np.int64)
        if grades is None:
            maps = []
            real = False
            for query_id, docs in judgments.items():
                if isinstance(docs, (list, tuple)):
                    raise InputFormatError(
                        f"The judgments of query '{query_id}' must be a mapping of doc id to "
                        f"grade; got a {type(docs).__name__}. For lists of relevant doc ids "
                        f"(grade 1 each) use Qrels.from_dict, which reads them as such."
                    )
                require_mapping(
                    docs, f"The judgments of query '{query_id}'", "a mapping of doc id to grade"
                )
                check_ids(docs, "Doc ids", f"of query '{query_id}'")
                graded = {d: real_grade(g, query_id, d) for d, g in docs.items()}
                real = real or any(isinstance(g, float) for g in graded.values())
                maps.append(graded)
        else:
            real = False
        self._store = Store.from_maps(list(judgments), maps, real=real, values=grades)
        self._groups = dict(groups) if groups else {}

    @classmethod
    def _make(cls, store: Store) -> Qrels:
        """Qrels holding ``store`` (validated: each doc once per query, int grades)."""
        qrels = cls.__new__(cls)
        qrels._store, qrels._groups = store, {}
        return qrels

    # --- construction -------------------------------------------------------------------

    @classmethod
    def from_dict(
        cls, judgments: Mapping[str, Mapping[str, int]] | Mapping[str, Sequence[str]]
    ) -> Qrels:
        """Build from ``{query_id: {doc_id: grade}}`` (grades are integers), or from
        ``{query_id: [doc_id, ...]}``: the relevant docs of each query, grade 1 each."""
        if (
            isinstance(judgments, Mapping)
            and judgments
            and all(isinstance(v, (list, tuple)) for v in judgments.values())
        ):
            for query_id, docs in judgments.items():
                check_ids(docs, "Doc ids", f"of query '{query_id}'")
            return cls({q: dict.fromkeys(docs, 1) for q, docs in judgments.items()})  # type: ignore[arg-type]
        return cls(judgments)  # type: ignore[arg-type]

    @classmethod
    def from_groups(
        cls,
        groups: Mapping[str, Sequence[Sequence[str] | Mapping[str, int]]],
        *,
        grade: int = 1,
    ) -> Qrels:
        """Build from evidence groups: a question needs one document of *each* group.

        ``{"q": [["a", "b"], ["c"]]}`` reads "a or b, and c". A group may be a mapping of
        doc id to grade (``[{"a": 5, "b": 4}, {"c": 3}]``); plain ids get ``grade``. A doc in
        several groups keeps its highest grade.
        """
        require_mapping(groups, "Evidence groups", "a mapping of query id to a list of groups")
        judgments: dict[str, dict[str, int]] = {}
        kept: dict[str, Groups] = {}
        for query_id, query_groups in groups.items():
            if isinstance(query_groups, (str, Mapping)) or not isinstance(query_groups, Sequence):
                raise InputFormatError(
                    f"The evidence groups of query '{query_id}' must be a list of groups, "
                    f'e.g. [["a", "b"], ["c"]]; got {type(query_groups).__name__}.'
                )
            grades: dict[str, int] = {}
            normalized: list[tuple[str, ...]] = []
            for position, group in enumerate(query_groups):
                if isinstance(group, str):
                    raise InputFormatError(
                        f"Group {position} of query '{query_id}' is the string {group!r}; "
                        f'write a list of ids instead, e.g. ["{group}"].'
                    )
                members = dict(group) if isinstance(group, Mapping) else dict.fromkeys(group, grade)
                if not members:
                    raise InputFormatError(
                        f"Group {position} of query '{query_id}' is empty; every group "
                        f"needs at least one document."
                    )
                for doc_id, value in members.items():
                    g = int_grade(value, query_id, doc_id)
                    grades[doc_id] = max(g, grades.get(doc_id, g))
                normalized.append(tuple(members))
            judgments[query_id] = grades
            kept[query_id] = tuple(normalized)
        return cls(judgments, groups=kept)

    @classmethod
    def from_trec(cls, path: PathLike) -> Qrels:
        """Read a TREC qrels file: ``query_id iteration doc_id grade`` per line."""
        plain = read_plain_trec_packed(path, n_columns=4, doc_col=2, value_col=3, integer=True)
        if plain is not None:
            queries, lengths, ids, grades = plain
            packed = cls._from_packed(queries, lengths, ids, grades)
            if packed is not None:
                return packed
            try:  # a query split across the file, or a doc judged twice: as strings
                columns = (queries, lengths, _packed.decode(ids), grades)
                return cls._from_columns(*columns, source=os.fspath(path))
            except InputFormatError:
                pass  # judged twice with two grades: the careful reader names the line
        maps, _ = read_trec_maps(
            path,
            n_columns=4,
            doc_col=2,
            value_col=3,
            value_kind="int",
            layout="query_id iteration doc_id grade",
            on_repeat="same",
        )
        return cls._make(Store.from_maps(list(maps), list(maps.values())))

    @classmethod
    def from_tsv(cls, path: PathLike) -> Qrels:
        """Read 3-column qrels, ``query_id doc_id grade`` per line, separated by tabs or
        spaces: BEIR's ``qrels/test.tsv``. A first line whose grade field is not a number
        (BEIR's ``query-id corpus-id score``) is a header and skipped."""
        from ragmetrics.formats._io import not_utf8_file, parse_value, trec_lines
        from ragmetrics.formats._rules import path_name

        plain = read_plain_trec_packed(
            path, n_columns=3, doc_col=1, value_col=2, integer=True, header=_tsv_header(path)
        )
        if plain is not None:  # as a plain TREC file is read: no Python string per line
            packed = cls._from_packed(*plain)
            if packed is not None:
                return packed  # else a query apart or a doc judged twice: read line by line

        layout = "query_id doc_id grade"
        maps: dict[str, dict[str, int]] = {}
        first_record = True
        try:
            with trec_lines(path) as pieces:
                for first, lines, _ in pieces:
                    for number, line in enumerate(lines, start=first):
                        fields = line.split()
                        if not fields or fields[0][0] == "#":
                            continue
                        if first_record:
                            first_record = False
                            if len(fields) == 3 and not _is_number(fields[2]):
                                continue  # the header
                        if len(fields) != 3:
                            hint = (
                                " Four fields are TREC qrels: read them with Qrels.from_trec."
                                if len(fields) == 4
                                else ""
                            )
                            raise InputFormatError(
                                f"{path_name(path)}, line {number}: expected 3 fields ({layout}), "
                                f"found {len(fields)}: {line[:200]!r}.{hint}"
                            )
                        grade = parse_value(fields[2], "int", 2, layout, path, number)
                        docs = maps.setdefault(fields[0], {})
                        if docs.get(fields[1], grade) != grade:
                            raise InputFormatError(
                                f"{path_name(path)}, line {number}: doc {fields[1]!r} of query "
                                f"{fields[0]!r} is judged twice, {docs[fields[1]]} and {grade}; "
                                f"keep one grade."
                            )
                        docs[fields[1]] = grade
        except UnicodeDecodeError:
            raise not_utf8_file(path) from None
        return cls(maps)

    @classmethod
    def _from_table_columns(cls, packed: Any, source: str) -> Qrels | None:
        """Qrels from a table's columns (``_columnar.Packed``): kept as bytes
        (:meth:`_from_packed`; None as there), or, where the doc ids could not be packed
        (a NUL, or too wide to pad), built from their strings as a file's are."""
        queries, lengths, ids, grades, dictionary, _ = packed
        if isinstance(ids, list):
            return cls._from_columns(queries, lengths, ids, grades, source)
        return cls._from_packed(queries, lengths, ids, grades, dictionary)

    @classmethod
    def _from_packed(
        cls,
        queries: list[str],
        lengths: Sequence[int] | np.ndarray,
        ids: np.ndarray,
        grades: np.ndarray,
        dictionary: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> Qrels | None:
        """Qrels kept as fixed-width bytes (``_packed``), or None when a query comes back
        later or a doc is judged twice (the caller reads those as strings, with checks)."""
        if len(set(queries)) != len(queries):
            return None
        counts = np.asarray(lengths, np.int64)
        store = Store.from_bytes(queries, counts, ids, grades, dictionary=dictionary)
        return None if store.has_repeats() else cls._make(store)

    @classmethod
    @without_gc
    def _from_columns(
        cls,
        block_queries: list[str],
        block_lengths: Sequence[int] | np.ndarray,
        doc_ids: list[str],
        grades: np.ndarray,
        source: object,
    ) -> Qrels:
        queries, lengths, docs, values = group_contiguous(
            block_queries, block_lengths, doc_ids, grades
        )
        maps = _cut_maps(lengths, docs, values.tolist())
        ends = np.cumsum(lengths)
        for i in np.flatnonzero(lengths_of(maps) != lengths).tolist():  # a doc judged twice
            start, end = int(ends[i] - lengths[i]), int(ends[i])
            _check_conflicts(queries[i], docs[start:end], values[start:end].tolist(), source)
        return cls._make(Store.from_maps(queries, maps))

    @property
    def _data(self) -> dict[str, dict[str, int]]:
        """The judgments as ``{query: {doc: grade}}`` (the store's dicts, not copies)."""
        return dict(zip(self._store.query_ids, self._store.maps()))

    @classmethod
    def from_json(cls, path: PathLike) -> Qrels:
        """Read JSON ``{qid: {doc: grade}}``, ``{qid: [doc, ...]}`` (the relevant docs, grade
        1 each), the ``to_json`` form (with groups), or JSONL records ``{"query_id": ...,
        "doc_id": ..., "relevance": ...}``."""
        from ragmetrics.formats import _columnar

        # JSON Lines records read by Arrow, if it can
        packed = _columnar.jsonl_packed(path, (_QUERY_KEYS, _DOC_KEYS, _GRADE_KEYS), integer=True)
        made = None if packed is None else cls._from_table_columns(packed, os.fspath(path))
        if made is not None:
            return made
        return cls.from_obj(read_json_or_jsonl(path), source=os.fspath(path))

    @classmethod
    def from_obj(cls, obj: Any, *, source: str = "<object>") -> Qrels:
        """Build from parsed JSON (see :meth:`from_json`)."""
        # "ragmetrics.qrels": the same document, as written before the modules moved
        if isinstance(obj, Mapping) and obj.get("format") in (
            "ragmetrics.data._qrels",
            "ragmetrics.qrels",
        ):
            if "judgments" not in obj:
                raise InputFormatError(
                    f"{source}: a 'ragmetrics.data._qrels' document needs a 'judgments' object "
                    f"{{qid: {{doc: grade}}}}; it has {', '.join(map(repr, obj)) or 'no key'}."
                )
            groups = obj.get("groups") or {}
            if not isinstance(groups, Mapping) or not all(
                isinstance(gs, list) and all(isinstance(g, list) for g in gs)
                for gs in groups.values()
            ):
                raise InputFormatError(
                    f"{source}: 'groups' must map each query id to a list of lists of doc ids."
                )
            base = cls(obj["judgments"])
            if groups:
                base._groups = {q: tuple(tuple(g) for g in gs) for q, gs in groups.items()}
            return base
        if isinstance(obj, Mapping):
            if obj and all(
                isinstance(v, list) and all(isinstance(d, str) for d in v) for v in obj.values()
            ):  # {"q1": ["d1", "d2"]}: the relevant docs of each query, grade 1 each
                return cls({q: dict.fromkeys(docs, 1) for q, docs in obj.items()})
            return cls(obj)
        if isinstance(obj, list):
            alike = cls._from_records_alike(obj, source)
            if alike is not None:
                return alike
            query_ids, doc_ids, grades = [], [], []
            for number, record in enumerate(obj, start=1):
                if not isinstance(record, Mapping):
                    raise InputFormatError(f"{source}, record {number}: expected an object.")
                query_ids.append(
                    record_id(
                        pick_key(record, _QUERY_KEYS, source, number), "query id", source, number
                    )
                )
                doc_ids.append(
                    record_id(pick_key(record, _DOC_KEYS, source, number), "doc id", source, number)
                )
                value = pick_key(record, _GRADE_KEYS, source, number)
                grades.append(real_grade(value, query_ids[-1], doc_ids[-1]))
            if any(isinstance(g, float) for g in grades):  # real-valued gains
                return cls(
                    {
                        q: dict(zip(d, g, strict=True))
                        for q, d, g in _grouped(query_ids, doc_ids, grades)
                    }
                )
            return cls._from_columns(
                *runs_of(query_ids), doc_ids, np.asarray(grades, np.int64), source
            )
        raise InputFormatError(
            f"{source}: qrels JSON must be an object {{qid: {{doc: grade}}}} or a list of "
            f"records; got {type(obj).__name__}."
        )

    @classmethod
    def _from_records_alike(cls, records: list[Any], source: str) -> Qrels | None:
        """Qrels from JSON records alike (``_convert.record_columns``) with integer grades,
        read column by column; None for any other list (read record by record)."""
        columns = record_columns(records, (_QUERY_KEYS, _DOC_KEYS, _GRADE_KEYS))
        if columns is None or set(map(type, columns[2])) != {int}:
            return None
        try:
            grades = np.array(columns[2], dtype=np.int64)
        except OverflowError:  # past int64: named record by record
            return None
        return cls._from_columns(*runs_of(columns[0]), columns[1], grades, source)

    @classmethod
    def from_pandas(
        cls,
        frame: pd.DataFrame,
        *,
        query_col: str = "query_id",
        doc_col: str = "doc_id",
        grade_col: str = "relevance",
    ) -> Qrels:
        """Build from a DataFrame with one row per judgment."""
        require_columns(frame, (query_col, doc_col, grade_col))
        # ids pandas keeps in Arrow, integer grades: read as Arrow reads them
        from ragmetrics.formats import _columnar

        packed = _columnar.packed_from_pandas(
            frame, query_col, doc_col, grade_col, integer=True, strings=True
        )
        if packed is not None:
            made = cls._from_table_columns(packed, "DataFrame")
            if made is not None:
                return made
        query_ids = id_column(frame, query_col)
        doc_ids = id_column(frame, doc_col)
        grades = frame[grade_col].to_numpy()
        if grades.dtype.kind == "u" and len(grades) and int(grades.max()) > INT64_MAX:
            row = int(np.argmax(grades > INT64_MAX))
            int_grade(int(grades[row]), query_ids[row], doc_ids[row])  # raises, naming it
        if grades.dtype.kind not in "iub":
            checked = [
                real_grade(g, q, d)
                for q, d, g in zip(query_ids, doc_ids, frame[grade_col].tolist(), strict=True)
            ]
            if any(isinstance(g, float) for g in checked):  # real-valued gains
                return cls(
                    {
                        q: dict(zip(docs, grades_of, strict=True))
                        for q, docs, grades_of in _grouped(query_ids, doc_ids, checked)
                    }
                )
            grades = np.asarray(checked, dtype=np.int64)
        return cls._from_columns(*runs_of(query_ids), doc_ids, grades.astype(np.int64), "DataFrame")

    @classmethod
    def from_arrow(
        cls,
        table: Any,
        *,
        query_col: str | None = None,
        doc_col: str = "doc_id",
        grade_col: str | None = None,
    ) -> Qrels:
        """Build from a pyarrow Table or RecordBatch, or any object with the Arrow C stream
        interface (a Polars DataFrame, a DuckDB result), with one row per judgment: the query
        column ``query_id`` or ranx's ``q_id``, grades in ``relevance``, ``grade`` or ranx's
        ``score``, unless named."""
        from ragmetrics.formats import _columnar

        table = _columnar.as_table(table)
        query = _columnar.needed_column(table, query_col, _columnar.QUERY_COLUMNS, "query id")
        _columnar.needed_column(table, doc_col, (), "doc id")
        grade = _columnar.needed_column(table, grade_col, _columnar.GRADE_COLUMNS, "grade")
        _columnar.check_column_types(table, (query, doc_col), grade, "grades")
        if grade_col is None and grade == "score":
            _columnar.refuse_run_scores(table, grade)
        packed = _columnar.packed_columns(table, query, doc_col, grade, integer=True, strings=True)
        if packed is not None:  # no Python string per row, as from a plain TREC file
            made = cls._from_table_columns(packed, "the table")
            if made is not None:
                return made
        # regrouping, repeats and every check of a bad row: the DataFrame constructor's
        return cls.from_pandas(
            _columnar.decoded(table).to_pandas(), query_col=query, doc_col=doc_col, grade_col=grade
        )

    @classmethod
    def from_parquet(
        cls,
        path: PathLike,
        *,
        query_col: str | None = None,
        doc_col: str = "doc_id",
        grade_col: str | None = None,
    ) -> Qrels:
        """Read a Parquet file (or a folder of them): see :meth:`from_arrow` for columns."""
        from ragmetrics.formats import _columnar

        table = _columnar.read_ids_table(path, query_col, doc_col)

        def alone(file: Any) -> object:
            return cls.from_parquet(file, query_col=query_col, doc_col=doc_col, grade_col=grade_col)

        with _columnar.naming_the_file(path, alone):  # a bad row: its file named
            return cls.from_arrow(table, query_col=query_col, doc_col=doc_col, grade_col=grade_col)

    def to_parquet(self, path: PathLike) -> None:
        """Write ``query_id``, ``doc_id`` and ``relevance`` (int64), one row per judgment."""
        from ragmetrics.formats import _columnar

        store = self._store
        _columnar.write_table(
            path,
            {
                "query_id": np.repeat(np.asarray(store.query_ids, dtype=object), store.lengths),
                "doc_id": store.flat_docs(),
                "relevance": self._grades().astype(
                    np.float64 if self.has_real_grades else np.int64
                ),
            },
        )

    # --- export --------------------------------------------------------------------------

    def to_dict(self) -> dict[str, dict[str, int]]:
        """A fresh ``{query_id: {doc_id: grade}}`` dict."""
        return {q: dict(d) for q, d in self._data.items()}

    def to_json(self, path: PathLike | None = None) -> str:
        """Serialize (evidence groups included); write to ``path`` when given."""
        import json  # here: reading TREC files never needs it

        payload: dict[str, Any] = {"format": "ragmetrics.data._qrels", "version": 1}
        payload["judgments"] = self._data
        if self._groups:
            payload["groups"] = {q: [list(g) for g in gs] for q, gs in self._groups.items()}
        text = json.dumps(payload, ensure_ascii=False)
        if path is not None:
            write_text(path, text)
        return text

    def to_trec(self, path: PathLike) -> None:
        """Write the standard 4-column TREC qrels file (atomically). An id a TREC file cannot
        hold (empty, or with whitespace or a control character) is refused before anything
        is written: write JSON or Parquet for such ids."""
        if self.has_real_grades:
            raise InputFormatError(
                f"Cannot write real-valued grades to the TREC file {os.fspath(path)!r}: a TREC "
                f"qrels grade is an integer, and trec_eval would read 0.37 as 0. Write JSON or "
                f"Parquet instead (to_json, to_parquet), which keep them."
            )
        check_trec_ids(self._store.query_ids, "the query id", path)
        check_trec_ids(self._store.flat_docs(), "the doc id", path)
        empty = self._store.empty_query_ids()
        if empty:
            warn_format_loss(empty, "no judgment", path)
        with open_atomic(path) as handle:
            for query_id, doc_id, grade in iter_items(self._data):
                handle.write(f"{query_id} 0 {doc_id} {grade}\n")

    def to_pandas(self) -> pd.DataFrame:
        """A DataFrame with columns ``query_id``, ``doc_id``, ``relevance``."""
        from ragmetrics._util.optional import import_pandas

        pandas = import_pandas()
        rows = list(iter_items(self._data))
        frame: pd.DataFrame = pandas.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])
        return frame

    # --- access --------------------------------------------------------------------------

    def __getitem__(self, query_id: str) -> Mapping[str, int]:
        return MappingProxyType(self._store.maps()[self._store.index[query_id]])

    @property
    def n_judgments(self) -> int:
        """How many (query, doc) pairs are judged."""
        return self._store.n_docs

    @property
    def n_positive(self) -> int:
        """How many judgments have a grade above 0 (trec_eval's ``num_rel`` under ``-c``)."""
        return int(np.count_nonzero(self._grades() > 0))

    @property
    def has_groups(self) -> bool:
        """True when evidence groups were given (``from_groups``)."""
        return bool(self._groups)

    def given_groups(self, query_id: str) -> Groups | None:
        """The evidence groups given for a query (``from_groups``); None when none were."""
        return self._groups.get(query_id)

    def groups(self, query_id: str, *, relevance_threshold: int = 1) -> Groups:
        """The evidence groups of a query; without explicit groups, each relevant doc is one."""
        if query_id in self._groups:
            return self._groups[query_id]
        judged = self.get(query_id, {})
        return tuple((d,) for d, g in judged.items() if g >= relevance_threshold)

    def relevant(self, query_id: str, *, relevance_threshold: int = 1) -> frozenset[str]:
        """The docs of a query whose grade is at least ``relevance_threshold``."""
        judged = self.get(query_id, {})
        return frozenset(d for d, g in judged.items() if g >= relevance_threshold)

    def grade_values(self) -> np.ndarray:
        """The distinct grades judged anywhere in the qrels, ascending (integer grades of a
        range no wider than their count: from their counts, a pass each, not a sort)."""
        grades = self._grades()
        if grades.dtype.kind == "i" and len(grades):
            low, high = int(grades.min()), int(grades.max())
            if high - low <= len(grades):
                present = np.bincount(grades - low, minlength=high - low + 1)
                counted: np.ndarray = (np.flatnonzero(present) + low).astype(grades.dtype)
                return counted
        values: np.ndarray = np.unique(grades)
        return values

    def max_grade(self) -> int | float | None:
        """The highest grade judged for any query (None when nothing is judged)."""
        grades = self._grades()
        if not len(grades):
            return None
        return float(grades.max()) if self.has_real_grades else int(grades.max())

    @property
    def has_real_grades(self) -> bool:
        """True when some grade is not an integer (a real-valued gain, 0.37): only the
        metrics whose formula takes such a gain accept these qrels."""
        return self._grades().dtype.kind == "f"

    def _grades(self) -> np.ndarray:
        grades = self._store.values
        assert grades is not None  # qrels always have grades
        return grades

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Qrels):
            return NotImplemented
        return self._data == other._data and self._groups == other._groups

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        extra = f", groups for {len(self._groups)} queries" if self._groups else ""
        return f"Qrels({len(self)} queries, {self.n_judgments} judgments{extra})"


def _cut_maps(counts: np.ndarray, docs: list[str], grades: list[int]) -> list[dict[str, int]]:
    """One doc -> grade dict per query, cut from flat columns at C speed (a doc repeated
    within a query keeps its last grade)."""
    doc_rest, grade_rest = iter(docs), iter(grades)
    lengths = counts.tolist()
    cut = map(zip, map(islice, repeat(doc_rest), lengths), map(islice, repeat(grade_rest), lengths))
    return list(map(dict, cut))


def _check_conflicts(query_id: str, docs: list[str], grades: list[int], source: object) -> None:
    seen: dict[str, int] = {}
    for doc_id, grade in zip(docs, grades, strict=True):
        if doc_id in seen and seen[doc_id] != grade:
            raise InputFormatError(
                f"{source}: '{doc_id}' is judged twice for query '{query_id}' with different "
                f"grades ({seen[doc_id]} and {grade}); keep one judgment per pair."
            )
        seen[doc_id] = grade


def _tsv_header(path: PathLike) -> bool:
    """True when the first line of ``path`` is BEIR's header: three fields, the last not a
    number (the fast reader then starts after it; any other first line it reads itself)."""
    if os.fspath(path) == "-":
        return False
    try:
        handle = open_bytes(path)  # plain or gzip
    except InputFormatError:
        return False  # the reader names it
    try:
        first = handle.readline(1 << 16)
    except Exception:  # a broken gzip stream, say: the reader names it
        return False
    finally:
        close_bytes(handle)
    try:
        fields = first.decode("utf-8").split()
    except UnicodeDecodeError:
        return False
    return len(fields) == 3 and not _is_number(fields[2])


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def _grouped(
    query_ids: list[str], doc_ids: list[str], grades: list[Any]
) -> Iterator[tuple[str, list[str], list[Any]]]:
    """Rows regrouped by query, in order of first appearance; a doc given twice for a query
    must have the same grade both times (it is kept once)."""
    by_query: dict[str, dict[str, Any]] = {}
    for q, d, g in zip(query_ids, doc_ids, grades, strict=True):
        judged = by_query.setdefault(q, {})
        if judged.get(d, g) != g:
            raise InputFormatError(
                f"Doc {d!r} of query {q!r} is judged twice, {judged[d]} and {g}; keep one grade."
            )
        judged[d] = g
    for q, judged in by_query.items():
        yield q, list(judged), list(judged.values())
