"""Validation helpers shared by the constructors of Qrels and Run."""

from __future__ import annotations

import math
import os
import struct
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from operator import pos
from typing import Any

import numpy as np

from ragmetrics.errors import InputFormatError
from ragmetrics.formats._rules import INT64_MAX, INT64_MIN


def require_mapping(value: object, what: str, example: str) -> Mapping[Any, Any]:
    """Raise unless ``value`` is a mapping; ``what`` must be ``example``."""
    if not isinstance(value, Mapping):
        raise InputFormatError(f"{what} must be {example}; got {type(value).__name__}.")
    return value


def check_ids(ids: Iterable[object], what: str, context: str) -> None:
    """Raise unless every id is a ``str`` (every one is looked at)."""
    ids = ids if isinstance(ids, (list, tuple, Mapping)) else list(ids)
    if set(map(type, ids)) <= {str}:
        if "" in ids:
            raise InputFormatError(
                f"{what} {context} must not be empty; one is ''. Give every query and doc "
                f"an id (a missing id usually means a field was not set upstream)."
            )
        return
    bad = next((i for i in ids if not isinstance(i, str)), _NONE)
    if bad is _NONE:
        if "" in ids:  # str subclasses only
            check_ids([str(i) for i in ids], what, context)
        return
    raise InputFormatError(
        f"{what} {context} must be strings; got {bad!r} of type {type(bad).__name__}. "
        f"Convert ids with str() before building."
    )


def check_doc_ids(per_query: Sequence[Any], query_ids: Iterable[str], context: str) -> None:
    """Raise unless every doc id of every query is a ``str``, naming the query and the id."""
    for query_id, docs in zip(query_ids, per_query, strict=True):
        bad = next((d for d in docs if not isinstance(d, str)), _NONE)
        if bad is not _NONE:
            raise InputFormatError(
                f"Doc ids {context} must be strings; query '{query_id}' has {bad!r} of "
                f"type {type(bad).__name__}. Convert ids with str() before building."
            )


_NONE = object()
# "".startswith(ids) looks at every id of a tuple at C speed and raises TypeError at the
# first that is not a str; it returns True early only at an empty id, whose tuple is then
# checked one by one. Called on a tuple just built, it costs next to nothing.
_ALL_STR = "".startswith


def plain_ids(ids: tuple[Any, ...]) -> bool:
    """True when every id of ``ids`` is a non-empty ``str`` (looked at at C speed)."""
    try:
        return not _ALL_STR(ids)
    except TypeError:
        return False


def checked_ids(
    per_query: Sequence[Any], query_ids: Sequence[str], context: str, *, copies: bool = False
) -> list[Any]:
    """Each query's doc ids as a tuple (or, with ``copies``, a copy of its dict), every id
    checked to be a ``str``, naming the query and id of the first that is not."""
    made: list[Any] = []
    keep = made.append
    try:
        for docs in per_query:
            if copies:
                item = docs.copy()
                ids = tuple(item)
            else:
                item = ids = tuple(docs)
            if _ALL_STR(ids):
                check_ids(ids, "Doc ids", context)
            keep(item)
    except (TypeError, InputFormatError):
        check_doc_ids(per_query, query_ids, context)
        raise
    return made


def scored_snapshot(
    per_query: Sequence[Mapping[Any, Any]], query_ids: Sequence[str], context: str
) -> tuple[list[tuple[str, ...]], np.ndarray]:
    """Each query's doc ids as a tuple, and every score as float64, flat.

    Every id must be a ``str`` and every score a real number (ints, floats, numpy numbers;
    +-inf allowed): ``None``, strings, NaN and anything else raise, naming the query and the
    doc. The scores are packed query by query with ``struct`` (``PyFloat_AsDouble`` on each:
    it refuses strings and ``None``, where ``np.fromiter`` would parse ``"0.5"`` and read
    ``None`` as NaN), right after the ids, while they are in the cache; the whole check costs
    no more than ``np.fromiter`` alone.
    """
    total = sum(map(len, per_query))
    buffer = bytearray(8 * total)
    snapshot: list[tuple[str, ...]] = []
    keep = snapshot.append
    packers: dict[int, Callable[..., None]] = {}
    offset = 0
    try:
        for docs in per_query:
            ids = tuple(docs)
            if _ALL_STR(ids):
                check_ids(ids, "Doc ids", context)
            keep(ids)
            size = len(ids)
            pack = packers.get(size)
            if pack is None:
                pack = packers[size] = struct.Struct(f"{size}d").pack_into
            pack(buffer, offset, *docs.values())
            offset += 8 * size
    except (TypeError, struct.error, InputFormatError):
        check_doc_ids(per_query, query_ids, context)
        for query_id, docs in zip(query_ids, per_query, strict=True):
            for doc_id, value in docs.items():
                check_real(value, f"The score of '{doc_id}' for query '{query_id}'")
        raise
    scores = np.frombuffer(buffer, dtype=np.float64)
    if offset != len(buffer):
        raise InputFormatError(f"The results {context} changed while they were read.")
    nan = np.flatnonzero(np.isnan(scores))
    if len(nan):
        starts = np.cumsum([0, *map(len, snapshot)])
        row = int(np.searchsorted(starts, nan[0], side="right")) - 1
        doc_id = snapshot[row][int(nan[0] - starts[row])]
        check_real(math.nan, f"The score of '{doc_id}' for query '{query_ids[row]}'")
    return snapshot, scores


def float_values(
    values: Sequence[Any], locate: Iterator[tuple[str, str, object]], what: str
) -> np.ndarray:
    """``values`` as float64; each must be a real number (see :func:`check_real`), and the
    first that is not is named by its query and doc (from ``locate``)."""
    try:
        array = np.fromiter(map(pos, values), dtype=np.float64, count=len(values))
    except (TypeError, ValueError, ArithmeticError):
        array = None
    if array is None or np.isnan(array).any():
        for query_id, doc_id, value in locate:
            check_real(value, f"The {what} of '{doc_id}' for query '{query_id}'")
        raise InputFormatError(f"The {what}s could not be read as {len(values)} numbers.")
    return array


def check_real(value: object, where: str) -> float:
    """``value`` as a float if it is a real number and not NaN; raises otherwise."""
    try:
        number = float(pos(value))  # type: ignore[arg-type]
    except (TypeError, ValueError, ArithmeticError):
        raise InputFormatError(
            f"{where} must be a real number; got {value!r} of type {type(value).__name__}."
        ) from None
    if number != number:
        raise InputFormatError(f"{where} is NaN; give every result a real number (or drop it).")
    return number


def real_grade(value: object, query_id: str, doc_id: str) -> int | float:
    """A grade that may be real-valued (an LLM judge's 0.37): an integral value as an int
    (:func:`int_grade`), a finite non-integral float as itself; NaN, infinities and
    non-numbers are a clear error."""
    if isinstance(value, (float, np.floating)) and not float(value).is_integer():
        grade = float(value)
        if grade == grade and grade not in (float("inf"), float("-inf")):
            return grade
        raise InputFormatError(
            f"The grade of '{doc_id}' for query '{query_id}' is {value!r}; a grade must be a "
            f"finite number."
        )
    return int_grade(value, query_id, doc_id)


def int_grade(value: object, query_id: str, doc_id: str) -> int:
    """Accept ints, bools and integral floats within int64 as grades; anything else is a
    clear error."""
    grade: int | None = None
    if isinstance(value, (bool, np.bool_, int, np.integer)) or (
        isinstance(value, (float, np.floating)) and float(value).is_integer()
    ):
        grade = int(value)
    if grade is not None:
        if INT64_MIN <= grade <= INT64_MAX:
            return grade
        raise InputFormatError(
            f"The grade of '{doc_id}' for query '{query_id}' is {grade}, outside the signed "
            f"64-bit range grades must fit in; use small integers (e.g. 0..3 or 1..5)."
        )
    raise InputFormatError(
        f"The grade of '{doc_id}' for query '{query_id}' must be a number (an integer, 0 or "
        f"negative for non-relevant, or a real-valued gain for the metrics that take one); "
        f"got {value!r} of type {type(value).__name__}."
    )


def record_id(value: object, what: str, source: str, number: int) -> str:
    """An id read from a JSON record: a string (not empty), or an integer written as one."""
    if isinstance(value, str):
        if not value:
            raise InputFormatError(
                f"{source}, record {number}: the {what} is empty; every record needs one "
                f"(a missing id usually means a field was not set upstream)."
            )
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise InputFormatError(
        f"{source}, record {number}: the {what} must be a string (or an integer); got "
        f"{value!r} of type {type(value).__name__}."
    )


def iter_items(data: Mapping[str, Mapping[str, object]]) -> Iterator[tuple[str, str, object]]:
    for query_id, docs in data.items():
        for doc_id, value in docs.items():
            yield query_id, doc_id, value


def read_json_or_jsonl(path: str | os.PathLike[str]) -> Any:
    """Load a JSON document, or a JSONL file as a list of records (lines split at LF only:
    a JSON string may hold U+2028 raw). A key given twice in one object, or nesting too deep
    to be a run or qrels, is an error naming the file."""
    import json  # here, as in loads_strict: reading a TREC file never loads it

    text = read_text(path)
    stripped = text.lstrip()
    if not stripped:
        raise InputFormatError(f"{os.fspath(path)}: the file is empty.")
    as_lines = os.fspath(path).lower().endswith(".jsonl")
    try:
        try:
            if as_lines:
                raise json.JSONDecodeError("JSON Lines", text, 0)
            return loads_strict(text, path)
        except json.JSONDecodeError as whole_error:
            records = []
            decoder = _strict_decoder()  # one decoder for every line
            scan, decode = decoder.scan_once, decoder.decode
            for number, line in enumerate(text.split("\n"), start=1):
                try:
                    try:  # a line that is one value, as most are: read by the scanner alone
                        value, end = scan(line, 0)
                    except (StopIteration, json.JSONDecodeError):
                        end = -1
                    if end != len(line):  # blank, spaced, or not one value: read whole
                        if not line.strip():
                            continue
                        value = decode(line)
                    records.append(value)
                except _RepeatedKeyError as repeated:
                    raise repeated.error(path, number) from None
                except json.JSONDecodeError as exc:
                    if number == 1 and stripped.startswith(("{", "[")) and "\n" not in stripped:
                        raise InputFormatError(
                            f"{os.fspath(path)}: not valid JSON ({whole_error.msg} at line "
                            f"{whole_error.lineno}, column {whole_error.colno})."
                        ) from None
                    raise InputFormatError(
                        f"{os.fspath(path)}, line {number}: not valid JSON or JSONL "
                        f"({exc.msg}, column {exc.colno})."
                    ) from None
            return records
    except RecursionError:
        raise InputFormatError(
            f"{os.fspath(path)}: the JSON is nested too deeply to be a run, qrels or data set."
        ) from None


def loads_strict(text: str, source: object = "<text>", line: int | None = None) -> Any:
    """``json.loads``, refusing an object that gives one key twice (``json`` keeps the last
    silently: a second judgment of a doc would replace the first unseen)."""
    try:
        return _strict_decoder().decode(text)
    except _RepeatedKeyError as repeated:
        raise repeated.error(source, line) from None


class _RepeatedKeyError(Exception):
    """A key given twice in one JSON object (raised inside the decoder, named outside)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key

    def error(self, source: object, line: int | None) -> InputFormatError:
        where = os.fspath(source) if isinstance(source, (str, os.PathLike)) else str(source)
        where += f", line {line}" if line is not None else ""
        return InputFormatError(
            f"{where}: the key {self.key!r} appears twice in one JSON object; JSON keeps only "
            f"the last, so one of them would be dropped unseen. Keep one."
        )


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    made = dict(pairs)
    if len(made) != len(pairs):
        seen: set[str] = set()
        key = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise _RepeatedKeyError(key)
    return made


def _strict_decoder() -> Any:
    """A ``json.JSONDecoder`` that refuses an object giving one key twice (made once a read:
    ``json.loads`` with a hook makes one a call, half the time of 500,000 JSONL records)."""
    import json  # here: reading a TREC file never loads it

    return json.JSONDecoder(object_pairs_hook=_unique)


def record_columns(records: list[Any], keys: Sequence[tuple[str, ...]]) -> list[list[Any]] | None:
    """The columns of a list of JSON records, one per group of ``keys`` (each group's names
    in the order :func:`pick_key` tries them), read at C speed; None unless every record is
    a ``dict`` holding the name the first record uses of each group and no name tried before
    it, and every id column (all but the last) holds non-empty strings: the caller then reads
    record by record, and names the first record at fault."""
    if not records or type(records[0]) is not dict:
        return None
    first = records[0]
    columns = []
    for names in keys:
        name = next((n for n in names if n in first), None)
        if name is None:
            return None
        earlier = names[: names.index(name)]
        if earlier and any(n in record for record in records for n in earlier):
            return None  # a record that pick_key would read by another name
        try:
            columns.append([record[name] for record in records])
        except (KeyError, TypeError):  # a record without it, or not an object
            return None
    for ids in columns[:-1]:
        if set(map(type, ids)) != {str} or "" in ids:
            return None
    return columns


def pick_key(record: Mapping[str, Any], names: tuple[str, ...], path: str, line: int) -> Any:
    for name in names:
        if name in record:
            return record[name]
    raise InputFormatError(
        f"{path}, record {line}: expected one of the keys {', '.join(names)}; "
        f"found {', '.join(map(str, record)) or 'none'}."
    )


def read_text(path: str | os.PathLike[str]) -> str:
    """A whole UTF-8 text file (a leading byte-order mark dropped), with one-line errors for
    a missing, unreadable or non-UTF-8 file and for a directory."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as error:
        raise unreadable(path, error) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise not_utf8(path, data, error.start) from None


def unreadable(path: str | os.PathLike[str], error: OSError) -> InputFormatError:
    """The error for a path that cannot be opened for reading."""
    name = os.fspath(path)
    if isinstance(error, FileNotFoundError):
        return InputFormatError(f"No such file: '{name}'.")
    if isinstance(error, IsADirectoryError):
        return InputFormatError(f"'{name}' is a directory; give the path of a file in it.")
    if isinstance(error, PermissionError):
        return InputFormatError(f"Cannot read '{name}': permission denied.")
    return InputFormatError(f"Cannot read '{name}': {error.strerror or error}.")


def not_utf8(
    path: str | os.PathLike[str], data: bytes, at: int, first_line: int = 1
) -> InputFormatError:
    """The error for a file whose byte ``at`` does not decode as UTF-8, naming its line
    (``data`` starts at line ``first_line``)."""
    line = data.count(b"\n", 0, at) + first_line
    column = at - (data.rfind(b"\n", 0, at) + 1) + 1
    return InputFormatError(
        f"{os.fspath(path)}, line {line}: byte 0x{data[at]:02x} at column {column} is not "
        f"UTF-8 text; save the file as UTF-8 (or convert it, e.g. with iconv)."
    )


def require_columns(frame: Any, names: tuple[str, ...]) -> None:
    """Raise unless the DataFrame has every column of ``names``."""
    missing = [name for name in names if name not in frame.columns]
    if missing:
        raise InputFormatError(
            f"The DataFrame lacks the column(s) {', '.join(map(repr, missing))}; it has "
            f"{', '.join(map(repr, frame.columns))}. Name the columns with the *_col keywords."
        )


def id_column(frame: Any, name: str) -> list[str]:
    """A DataFrame column of ids as strings: strings or integers; an empty cell (NaN, None)
    or a column of floats (``7.0``, what an integer column with a gap becomes) raises."""
    column = frame[name]
    empty = column.isna().to_numpy()
    if empty.any():
        row = int(np.flatnonzero(empty)[0])
        raise InputFormatError(
            f"The column '{name}' is empty (NaN or None) at row {row}; every row needs an id."
        )
    kind = column.dtype.kind
    if kind == "b":
        first = column.iloc[:1].tolist()[0]
        raise InputFormatError(
            f"The column '{name}' holds booleans (e.g. {first!r}); ids must be strings or "
            f"integers. Is it the right column?"
        )
    if kind == "f":
        raise InputFormatError(
            f"The column '{name}' holds floats (e.g. {column.iloc[0]!r}); ids must be strings or "
            f"integers, or '7.0' would not match '7'. Convert it, e.g. "
            f"frame['{name}'].astype('int64').astype(str)."
        )
    if kind == "O":
        values = column.tolist()
        kinds = set(map(type, values))
        if not kinds <= {str, int}:
            bad_rows = (
                (i, v)
                for i, v in enumerate(values)
                if not isinstance(v, (str, int)) or isinstance(v, bool)
            )
            row, bad = next(bad_rows, (-1, None))
            if row >= 0:
                raise InputFormatError(
                    f"The column '{name}' has {bad!r} of type {type(bad).__name__} at row "
                    f"{row}; ids must be strings or integers."
                )
        # the column's own strings: pandas' astype(str) would copy each into a new column
        # and back (chunk texts as ids: 0.15 s for 100,000 of them)
        ids: list[str] = values if kinds <= {str} else list(map(str, values))
    else:
        ids = column.astype(str).tolist()
    if "" in ids:
        raise InputFormatError(
            f"The column '{name}' has an empty id at row {ids.index('')}; every row needs an "
            f"id (a missing id usually means a field was not set upstream)."
        )
    return ids


def score_column(frame: Any, name: str, query_ids: list[str], doc_ids: list[str]) -> np.ndarray:
    """A DataFrame column of scores as float64; every cell must be a real number."""
    column = frame[name]
    if column.dtype.kind in "iufb":
        values: np.ndarray = column.to_numpy(dtype=np.float64, na_value=np.nan)
        if not np.isnan(values).any():
            return values
    cells = column.tolist()
    return float_values(cells, zip(query_ids, doc_ids, cells), "score")
