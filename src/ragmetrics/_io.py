"""Readers for the TREC qrels and run formats, and shared helpers for flat columns.

The TREC readers split whole blocks of lines at C speed (``map(str.split, lines)``) and
only fall back to a line-by-line pass for a block that holds a comment, a blank line or a
malformed line, so that the error can name the file and the line number.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter
from typing import Any

import numpy as np

from ragmetrics.errors import InputFormatError

PathLike = str | os.PathLike[str]

_BLOCK_BYTES = 1 << 23  # lines are read and split in blocks of about 8 MB


@dataclass(frozen=True)
class FlatColumns:
    """Query ids, doc ids and values of a table of judgments or results, in file order."""

    query_ids: list[str]
    doc_ids: list[str]
    values: np.ndarray


def read_trec_columns(
    path: PathLike,
    *,
    n_columns: int,
    query_col: int,
    doc_col: int,
    value_col: int,
    value_kind: str,
    layout: str,
    extra_fields: bool = False,
) -> FlatColumns:
    """Read a whitespace-separated TREC file into flat columns.

    Blank lines and lines whose first non-blank character is ``#`` are skipped. Any other
    line must have exactly ``n_columns`` fields (at least, with ``extra_fields``: trec_eval
    reserves trailing text of a run line for future use and ignores it); the value field
    must parse as ``value_kind`` ("int" or "float"). A line that does not gets an
    :class:`InputFormatError` naming the file, the line number, the line and the expected layout.
    """
    dtype = np.int64 if value_kind == "int" else np.float64
    fast = _read_whole_file(path, n_columns, query_col, doc_col, value_col, dtype)
    if fast is not None:
        return fast
    query_ids: list[str] = []
    doc_ids: list[str] = []
    value_blocks: list[np.ndarray] = []
    first_line = 1
    try:
        handle = open(path, encoding="utf-8")  # noqa: SIM115 - closed in finally
    except FileNotFoundError:
        raise InputFormatError(f"No such file: '{os.fspath(path)}'.") from None
    try:
        while True:
            try:
                lines = handle.readlines(_BLOCK_BYTES)
            except UnicodeDecodeError as exc:
                raise InputFormatError(
                    f"{os.fspath(path)}: the file is not UTF-8 text ({exc.reason})."
                ) from None
            if not lines:
                break
            rows = list(map(str.split, lines))
            clean = set(map(len, rows)) == {n_columns}
            if clean:
                columns = _columns(rows, n_columns)
                # A token that starts with '#' in the first column marks a comment line.
                clean = "\n#" not in "\n" + "\n".join(columns[0])
            if clean:
                values = _parse_values(columns[value_col], dtype)
                if values is None:
                    clean = False
            if not clean:
                rows, values = _parse_block_slowly(
                    path,
                    lines,
                    rows,
                    first_line,
                    n_columns,
                    value_col,
                    dtype,
                    layout,
                    extra_fields,
                )
                if not rows:
                    first_line += len(lines)
                    continue
                columns = _columns(rows, n_columns)
            assert values is not None
            query_ids.extend(columns[query_col])
            doc_ids.extend(columns[doc_col])
            value_blocks.append(values)
            first_line += len(lines)
    finally:
        handle.close()
    values_all = np.concatenate(value_blocks) if value_blocks else np.zeros(0, dtype=dtype)
    return FlatColumns(query_ids, doc_ids, values_all)


def _columns(rows: list[list[str]], n_columns: int) -> list[list[str]]:
    return [list(map(itemgetter(i), rows)) for i in range(n_columns)]


def _read_whole_file(
    path: PathLike, n_columns: int, query_col: int, doc_col: int, value_col: int, dtype: type
) -> FlatColumns | None:
    """Split the whole file at once; None when it needs the careful line-by-line pass.

    Taken only when every line is a plain record: no blank or comment line, as many tokens as
    ``n_columns`` times the lines, and constant second and last columns (the ``Q0``/iteration
    and tag fields), which rules out lines with too few and too many fields cancelling out.
    """
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError):
        return None
    if not text or text.startswith("#") or "\n#" in text or "\n\n" in text:
        return None
    n_lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    tokens = text.split()
    del text
    if len(tokens) != n_columns * n_lines:
        return None
    constant = [1] if n_columns == 4 else [1, n_columns - 1]
    for column in constant:
        field = tokens[column::n_columns]
        if field.count(field[0]) != len(field):
            return None
    values = _parse_values(tokens[value_col::n_columns], dtype)
    if values is None:
        return None
    return FlatColumns(tokens[query_col::n_columns], tokens[doc_col::n_columns], values)


def _parse_values(tokens: Sequence[str], dtype: type) -> np.ndarray | None:
    try:
        if dtype is np.int64:
            return np.fromiter(map(int, tokens), dtype=np.int64, count=len(tokens))
        values = np.fromiter(map(float, tokens), dtype=np.float64, count=len(tokens))
    except ValueError:
        return None
    if np.isnan(values).any():
        return None
    return values


def _parse_block_slowly(
    path: PathLike,
    lines: list[str],
    rows: list[list[str]],
    first_line: int,
    n_columns: int,
    value_col: int,
    dtype: type,
    layout: str,
    extra_fields: bool,
) -> tuple[list[list[str]], np.ndarray]:
    kept: list[list[str]] = []
    values: list[float | int] = []
    convert: Callable[[str], Any] = int if dtype is np.int64 else float
    kind = "an integer" if dtype is np.int64 else "a number"
    for offset, (line, fields) in enumerate(zip(lines, rows, strict=True)):
        if not fields or fields[0].startswith("#"):
            continue
        where = f"{os.fspath(path)}, line {first_line + offset}"
        if len(fields) != n_columns and not (extra_fields and len(fields) > n_columns):
            expected = f"at least {n_columns}" if extra_fields else str(n_columns)
            raise InputFormatError(
                f"{where}: expected {expected} whitespace-separated fields ({layout}), "
                f"found {len(fields)}: {line.strip()!r}."
            )
        fields = fields[:n_columns]
        token = fields[value_col]
        try:
            value = convert(token)
        except ValueError:
            raise InputFormatError(
                f"{where}: field {value_col + 1} must be {kind}, got {token!r} "
                f"(expected layout: {layout})."
            ) from None
        if value != value:  # NaN
            raise InputFormatError(f"{where}: the score is NaN; give every result a real number.")
        kept.append(fields)
        values.append(value)
    return kept, np.asarray(values, dtype=dtype)


def group_contiguous(
    query_ids: list[str], doc_ids: list[str], values: np.ndarray
) -> tuple[list[str], np.ndarray, list[str], np.ndarray]:
    """Group flat rows by query, keeping the first-seen order of queries and of rows.

    Returns ``(queries, lengths, doc_ids, values)`` with each query's rows contiguous.
    """
    n = len(query_ids)
    if n == 0:
        return [], np.zeros(0, dtype=np.int64), [], values
    column = np.empty(n, dtype=object)
    column[:] = query_ids
    starts = np.concatenate(([0], np.flatnonzero(column[1:] != column[:-1]) + 1))
    block_queries = column[starts].tolist()
    lengths = np.diff(np.append(starts, n))
    first_seen = dict.fromkeys(block_queries)
    if len(first_seen) == len(block_queries):
        return block_queries, lengths, doc_ids, values
    # Some query's rows are split across the file: regroup them, keeping row order.
    code_of = {query: code for code, query in enumerate(first_seen)}
    codes = np.repeat(np.fromiter(map(code_of.__getitem__, block_queries), np.int64), lengths)
    order = np.argsort(codes, kind="stable")
    regrouped = list(map(doc_ids.__getitem__, order.tolist()))
    queries = list(first_seen)
    regrouped_lengths = np.bincount(codes, minlength=len(queries))
    return queries, regrouped_lengths, regrouped, values[order]


def lookup_values(mapping: dict[str, Any], keys: Sequence[str], default: float) -> list[Any]:
    """``[mapping.get(k, default) for k in keys]`` at C speed."""
    return list(map(mapping.get, keys, repeat(default)))
