"""The careful TREC reader, and shared helpers for flat columns.

``read_trec_maps`` reads a qrels or run file line by line, so that any error names the file
and the line. Plain files (ASCII, one record per line) are first tried by the vectorized
reader of ``_trec_fast``, which hands over to this one for anything else.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from itertools import chain
from typing import Any

import numpy as np

from ragmetrics._convert import not_utf8, unreadable
from ragmetrics.errors import InputFormatError

PathLike = str | os.PathLike[str]


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
    """Read a whitespace-separated TREC file straight into ``{query: {doc: value}}``.

    Blank lines and lines whose first non-blank character is ``#`` are skipped. Any other
    line must have exactly ``n_columns`` fields (at least, with ``extra_fields``: trec_eval
    reserves trailing text of a run line for future use and ignores it), and its value field
    must parse as ``value_kind`` ("int" or "float", not NaN). Otherwise an
    :class:`InputFormatError` names the file, the line number, the line and the layout.

    A doc repeated within a query keeps its highest value (``on_repeat="max"``: the best
    ranked copy of a run) or must repeat the same value (``"same"``: qrels); the repeats
    dropped are counted per query.
    """
    convert: Callable[[str], Any] = int if value_kind == "int" else float
    maps: dict[str, dict[str, Any]] = {}
    repeats: dict[str, int] = {}
    current_query: str | None = None
    current: dict[str, Any] = {}
    number = 0
    try:
        # utf-8-sig: a leading byte-order mark is not part of the first query id
        handle = open(path, encoding="utf-8-sig")  # noqa: SIM115 - closed in finally
    except OSError as error:
        raise unreadable(path, error) from None
    try:
        for number, line in enumerate(handle, start=1):
            fields = line.split()
            if len(fields) != n_columns:
                if not fields or fields[0].startswith("#"):
                    continue
                if not (extra_fields and len(fields) > n_columns):
                    expected = f"at least {n_columns}" if extra_fields else str(n_columns)
                    raise InputFormatError(
                        f"{os.fspath(path)}, line {number}: expected {expected} "
                        f"whitespace-separated fields ({layout}), found {len(fields)}: "
                        f"{line.strip()!r}."
                    )
            elif fields[0][0] == "#":
                continue
            query_id = fields[0]
            if query_id != current_query:
                current = maps.setdefault(query_id, {})
                current_query = query_id
            value = convert(fields[value_col])
            doc_id = fields[doc_col]
            if doc_id in current:
                _repeat(current, doc_id, value, on_repeat, query_id, path, number)
                repeats[query_id] = repeats.get(query_id, 0) + 1
            else:
                current[doc_id] = value
    except UnicodeDecodeError:  # before ValueError, of which it is a kind
        raise _not_utf8(path) from None
    except ValueError as error:
        if isinstance(error, InputFormatError):
            raise
        token = line.split()[value_col]
        kind = "an integer" if value_kind == "int" else "a number"
        raise InputFormatError(
            f"{os.fspath(path)}, line {number}: field {value_col + 1} must be {kind}, got "
            f"{token!r} (expected layout: {layout})."
        ) from None
    except OSError as error:  # e.g. a directory, which opens but cannot be read
        raise unreadable(path, error) from None
    finally:
        handle.close()
    if value_kind == "float":
        _check_finite(maps, path)
    return maps, repeats


def _not_utf8(path: PathLike) -> InputFormatError:
    """The error for a file that is not UTF-8, naming the line of its first bad byte."""
    with open(path, "rb") as handle:
        data = handle.read()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        return not_utf8(path, data, error.start)
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


def _check_finite(maps: dict[str, dict[str, Any]], path: PathLike) -> None:
    """Reject NaN scores (a NaN has no place in a ranking), naming the line."""
    values = np.fromiter(chain.from_iterable(map(dict.values, maps.values())), dtype=np.float64)
    if not np.isnan(values).any():
        return
    with open(path, encoding="utf-8-sig") as handle:
        for number, line in enumerate(handle, start=1):
            fields = line.split()
            if len(fields) >= 5 and fields[4].lower() in {"nan", "-nan", "+nan"}:
                raise InputFormatError(
                    f"{os.fspath(path)}, line {number}: the score is NaN; give every result "
                    f"a real number."
                )
    raise InputFormatError(f"{os.fspath(path)}: a score is NaN; give every result a number.")


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
    block_queries: list[str], block_lengths: list[int], doc_ids: list[str], values: np.ndarray
) -> tuple[list[str], np.ndarray, list[str], np.ndarray]:
    """Group rows by query (given as runs of equal query ids), keeping the first-seen order of
    queries and the order of rows within each query.

    Returns ``(queries, lengths, doc_ids, values)`` with each query's rows contiguous.
    """
    lengths = np.asarray(block_lengths, dtype=np.int64)
    first_seen = dict.fromkeys(block_queries)
    if len(first_seen) == len(block_queries):
        return list(block_queries), lengths, doc_ids, values
    # Some query's rows are split across the file: regroup them, keeping row order.
    code_of = {query: code for code, query in enumerate(first_seen)}
    codes = np.repeat(np.fromiter(map(code_of.__getitem__, block_queries), np.int64), lengths)
    order = np.argsort(codes, kind="stable")
    regrouped = list(map(doc_ids.__getitem__, order.tolist()))
    queries = list(first_seen)
    regrouped_lengths = np.bincount(codes, minlength=len(queries))
    return queries, regrouped_lengths, regrouped, values[order]


def runs_of(column: list[str]) -> tuple[list[str], list[int]]:
    """The run-length encoding of a column of query ids."""
    queries: list[str] = []
    lengths: list[int] = []
    _extend_runs(queries, lengths, column)
    return queries, lengths
