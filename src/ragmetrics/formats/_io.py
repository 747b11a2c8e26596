"""The careful TREC reader, and shared helpers for flat columns.

``read_trec_maps`` reads a qrels or run file line by line, so that any error names the file
and the line. Plain files (ASCII, one record per line) are first tried by the vectorized
reader of ``_trec_fast``, which hands over to this one for anything else.
"""

from __future__ import annotations

import codecs
import io
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Any, BinaryIO

import numpy as np

from ragmetrics._util.arrays import runs_in_order, stable_order
from ragmetrics.errors import InputFormatError
from ragmetrics.formats._convert import not_utf8, unreadable
from ragmetrics.formats._rules import (
    INT64_MAX,
    INT64_MIN,
    checked_lines,
    parse_float,
    parse_int,
    path_name,
    text_chunks,
)

PathLike = str | os.PathLike[str]
GZIP_MAGIC = b"\x1f\x8b"


def open_bytes(path: PathLike) -> BinaryIO:
    """A file for reading bytes: ``-`` is standard input, a gzip file (found by its magic
    bytes, whatever its name) is decompressed as it is read, never whole."""
    if os.fspath(path) == "-":
        return sys.stdin.buffer
    try:
        handle = open(path, "rb")  # noqa: SIM115 - returned to the caller
        head = handle.peek(2)[:2]
    except OSError as error:
        raise unreadable(path, error) from None
    if head == GZIP_MAGIC:
        return gzip_module().GzipFile(fileobj=handle, mode="rb")  # type: ignore[no-any-return]
    return handle


def gzip_module() -> ModuleType:
    """The gzip reader: zlib-ng's where the optional ``zlib-ng`` package is installed
    (``pip install ragmetrics[gzip]``; it decompresses a run 2.6 times as fast as the standard
    library: 0.95 s against 2.5 s for 1 GB), else the standard library's. Both give the same
    bytes and check the same CRC."""
    try:
        from zlib_ng import gzip_ng
    except ImportError:
        import gzip  # here: a plain file never loads it

        return gzip
    return gzip_ng


def close_bytes(handle: BinaryIO) -> None:
    """Close a handle of :func:`open_bytes` (and the file under a gzip stream)."""
    if handle is sys.stdin.buffer:
        return
    inner = getattr(handle, "fileobj", None)
    handle.close()
    if inner is not None:
        inner.close()


@contextmanager
def reading(path: PathLike) -> Iterator[None]:
    """Turn a corrupt or truncated gzip stream, or a read that fails, into one error."""
    try:
        yield
    except Exception as error:
        if isinstance(error, (EOFError, *_gzip_errors())):
            raise InputFormatError(
                f"{os.fspath(path)}: the gzip stream is corrupt or truncated ({error}); "
                f"check the file with `gzip -t`."
            ) from None
        if isinstance(error, OSError):
            raise unreadable(path, error) from None
        raise


def _gzip_errors() -> tuple[type[Exception], ...]:
    """The errors of a bad gzip stream, of the readers a gzip read has loaded (a plain file
    loads none): the standard library's and zlib-ng's."""
    errors: list[type[Exception]] = []
    for name, attribute in (
        ("zlib", "error"),
        ("gzip", "BadGzipFile"),
        ("zlib_ng.zlib_ng", "error"),
    ):
        module = sys.modules.get(name)
        if module is not None:
            errors.append(getattr(module, attribute))
    return tuple(errors)


@contextmanager
def trec_lines(path: PathLike) -> Iterator[Iterator[tuple[int, list[str], bool]]]:
    """The lines of a TREC file (plain, gzip or ``-``) checked against the line rule of
    ``_rules``, in pieces ``(number of the first line, lines, odd)`` (see
    ``_rules.checked_lines``): UTF-8, a leading byte-order
    mark dropped, lines split at LF only, read with a bound. Standard input is left open for
    the caller's process."""
    handle = open_bytes(path)
    text = io.TextIOWrapper(handle, encoding="utf-8-sig", newline="\n")
    try:
        with reading(path):
            yield checked_lines(text_chunks(text), path)
    finally:
        if handle is sys.stdin.buffer:
            text.detach()
        else:
            close_bytes(handle)


def read_trec_maps(
    path: PathLike,
    *,
    n_columns: int,
    doc_col: int,
    value_col: int,
    value_kind: str,
    layout: str,
    extra_fields: bool = False,
    on_repeat: str = "max",
) -> tuple[dict[str, dict[str, Any]], dict[str, int]]:
    """Read a TREC file (plain or gzip) straight into ``{query: {doc: value}}``.

    Lines follow the line rule of ``_rules`` (blank and ``#`` lines skipped). Any other line
    must have exactly ``n_columns`` fields (at least, with ``extra_fields``: trec_eval
    reserves trailing text of a run line for future use and ignores it), and its value field
    must parse as ``value_kind`` ("int": ASCII digits within int64; "float": an ASCII number,
    not NaN). Otherwise an :class:`InputFormatError` names the file, the line number, the
    line and the layout.

    A doc repeated within a query keeps its highest value (``on_repeat="max"``: the best
    ranked copy of a run) or must repeat the same value (``"same"``: qrels); the repeats
    dropped are counted per query.
    """
    maps: dict[str, dict[str, Any]] = {}
    repeats: dict[str, int] = {}
    current_query: str | None = None
    current: dict[str, Any] = {}
    integer = value_kind == "int"
    convert: Callable[[str], Any] = int if integer else float
    try:
        with trec_lines(path) as pieces:
            for first, lines, odd in pieces:
                for number, line in enumerate(lines, start=first):
                    fields = line.split()
                    if not fields or fields[0][0] == "#":
                        continue
                    if len(fields) != n_columns and not (extra_fields and len(fields) > n_columns):
                        _check_width(fields, n_columns, extra_fields, layout, path, number)
                    query_id = fields[0]
                    if query_id != current_query:
                        current = maps.setdefault(query_id, {})
                        current_query = query_id
                    token = fields[value_col]
                    try:  # inline: this loop runs once per line of a file that is not plain
                        value = convert(token)
                        valid = value == value and (
                            not odd or (token.isascii() and "_" not in token)
                        )
                        if integer and not INT64_MIN <= value <= INT64_MAX:
                            valid = False
                    except ValueError:
                        valid = False
                    if not valid:  # the checked reading, which names what is wrong
                        parse_value(token, value_kind, value_col, layout, path, number)
                    doc_id = fields[doc_col]
                    if doc_id in current:
                        _repeat(current, doc_id, value, on_repeat, query_id, path, number)
                        repeats[query_id] = repeats.get(query_id, 0) + 1
                    else:
                        current[doc_id] = value
    except UnicodeDecodeError:
        raise not_utf8_file(path) from None
    return maps, repeats


def _check_width(
    fields: list[str], n_columns: int, extra: bool, layout: str, path: PathLike, number: int
) -> None:
    if len(fields) == n_columns or (extra and len(fields) > n_columns):
        return
    expected = f"at least {n_columns}" if extra else str(n_columns)
    raise InputFormatError(
        f"{os.fspath(path)}, line {number}: expected {expected} whitespace-separated fields "
        f"({layout}), found {len(fields)}: {' '.join(fields)[:200]!r}.{_near_miss(fields, layout)}"
    )


def _near_miss(fields: list[str], layout: str) -> str:
    """A hint naming the reader of a file that is close to the layout expected."""
    if layout.startswith("query_id iteration doc_id grade") and len(fields) == 3:
        return (
            " Three fields are qrels without the iteration column (BEIR's qrels/*.tsv, "
            "query_id doc_id grade): read them with Qrels.from_tsv."
        )
    if layout.startswith("query_id Q0 doc_id") and len(fields) == 4:
        return " Four fields are TREC qrels, not a run: read them with Qrels.from_trec."
    if layout.startswith("query_id Q0 doc_id") and len(fields) == 3:
        return (
            " Three fields (query_id doc_id score) are not a TREC run: read them with "
            "pandas and Run.from_pandas, or write the 6 TREC columns."
        )
    return ""


def parse_value(
    token: str, value_kind: str, value_col: int, layout: str, path: object, number: int
) -> Any:
    """A score (``"float"``) or grade (``"int"``) field under the number rule; a NaN score,
    a grade outside int64 or anything but an ASCII number is an error naming the line."""
    try:
        value = parse_int(token) if value_kind == "int" else parse_float(token)
    except ValueError:
        kind = "an integer (ASCII digits, within int64)" if value_kind == "int" else "a number"
        raise InputFormatError(
            f"{path_name(path)}, line {number}: field {value_col + 1} must be {kind}, got "
            f"{token!r} (expected layout: {layout})."
        ) from None
    if value != value:
        raise InputFormatError(
            f"{path_name(path)}, line {number}: the score is NaN; give every result a real number."
        )
    return value


def not_utf8_file(path: PathLike) -> InputFormatError:
    """The error for a file that is not UTF-8, naming the line of its first bad byte (read
    in blocks: a huge file is not loaded whole to find it)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    line = 1
    handle = open_bytes(path)
    try:
        with reading(path):
            while block := handle.read(1 << 20):
                try:
                    decoder.decode(block)
                except UnicodeDecodeError as error:
                    return not_utf8(path, error.object, error.start, line)
                line += block.count(b"\n")
    finally:
        close_bytes(handle)
    return InputFormatError(f"{os.fspath(path)}: the file is not UTF-8 text.")


def _repeat(
    current: dict[str, Any],
    doc_id: str,
    value: Any,
    on_repeat: str,
    query_id: str,
    path: PathLike,
    number: int,
) -> None:
    if on_repeat == "max":
        if value > current[doc_id]:
            current[doc_id] = value
    elif current[doc_id] != value:
        raise InputFormatError(
            f"{os.fspath(path)}, line {number}: '{doc_id}' is judged twice for query "
            f"'{query_id}' with different grades ({current[doc_id]} and {value}); keep one "
            f"judgment per pair."
        )


def _extend_runs(query_ids: list[str], query_lengths: list[int], column: list[str]) -> None:
    """Append ``column`` to a run-length encoding of query ids."""
    if not column:
        return
    values = np.empty(len(column), dtype=object)
    values[:] = column
    starts = np.concatenate(([0], np.flatnonzero(values[1:] != values[:-1]) + 1))
    lengths = np.diff(np.append(starts, len(column))).tolist()
    firsts = values[starts].tolist()
    if query_ids and query_ids[-1] == firsts[0]:
        query_lengths[-1] += lengths[0]
        firsts, lengths = firsts[1:], lengths[1:]
    query_ids.extend(firsts)
    query_lengths.extend(lengths)


def group_contiguous(
    block_queries: list[str],
    block_lengths: Sequence[int] | np.ndarray,
    doc_ids: list[str],
    values: np.ndarray,
) -> tuple[list[str], np.ndarray, list[str], np.ndarray]:
    """Group rows by query (given as runs of equal query ids), keeping the first-seen order of
    queries and the order of rows within each query.

    Returns ``(queries, lengths, doc_ids, values)`` with each query's rows contiguous.
    """
    lengths = np.asarray(block_lengths, dtype=np.int64)
    regrouping = regroup_order(block_queries, lengths)
    if regrouping is None:
        return list(block_queries), lengths, doc_ids, values
    # Some query's rows are split across the file: regroup them, keeping row order.
    queries, regrouped_lengths, order = regrouping
    regrouped = list(map(doc_ids.__getitem__, order.tolist()))
    return queries, regrouped_lengths, regrouped, values[order]


def regroup_order(
    block_queries: list[str], block_lengths: np.ndarray
) -> tuple[list[str], np.ndarray, np.ndarray] | None:
    """For rows given as runs of equal query ids: None when each query is one run (the rows
    are grouped already), else the queries in the order first seen, their lengths, and the
    order that takes the rows to them (each query's rows together, in their order)."""
    first_seen = dict.fromkeys(block_queries)
    if len(first_seen) == len(block_queries):
        return None
    code_of = {query: code for code, query in enumerate(first_seen)}
    codes = np.fromiter(map(code_of.__getitem__, block_queries), np.int64, len(block_queries))
    lengths = np.asarray(block_lengths, dtype=np.int64)
    # whole runs put in order, not rows: a run per query of a block, many rows each
    order = runs_in_order(lengths, stable_order(codes, len(code_of)))
    counts = np.bincount(codes, weights=lengths, minlength=len(code_of)).astype(np.int64)
    return list(first_seen), counts, order


def runs_of(column: list[str]) -> tuple[list[str], list[int]]:
    """The run-length encoding of a column of query ids."""
    queries: list[str] = []
    lengths: list[int] = []
    _extend_runs(queries, lengths, column)
    return queries, lengths
