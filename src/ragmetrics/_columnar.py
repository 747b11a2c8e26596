"""Parquet files and Arrow tables for runs and qrels (pyarrow: the ``[parquet]`` extra).

Columns are ours (``query_id``, ``doc_id``, ``score``; ``relevance`` for qrels) or ranx's
(``q_id``, ``doc_id``, ``score``), found by name. A table goes through the validated
DataFrame constructors, so every id and value is checked as from pandas.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragmetrics._optional import import_pyarrow
from ragmetrics.errors import InputFormatError

QUERY_COLUMNS = ("query_id", "q_id")
SCORE_COLUMNS = ("score",)
GRADE_COLUMNS = ("relevance", "grade", "score")


def as_table(value: Any) -> Any:
    """``value`` as a pyarrow Table, or an error saying what it is."""
    pyarrow = import_pyarrow()
    if isinstance(value, pyarrow.RecordBatch):
        return pyarrow.Table.from_batches([value])
    if not isinstance(value, pyarrow.Table):
        raise InputFormatError(
            f"Expected a pyarrow Table or RecordBatch; got {type(value).__name__}. Read a file "
            f"with from_parquet(path)."
        )
    return value


def read_table(path: Any) -> Any:
    """A Parquet file or dataset folder as one Arrow table."""
    pyarrow = import_pyarrow()
    try:
        return pyarrow.parquet.read_table(path)
    except FileNotFoundError:
        raise InputFormatError(f"No such file: {str(path)!r}.") from None
    except pyarrow.ArrowInvalid as error:
        raise InputFormatError(f"{path}: not a Parquet file ({error}).") from None


def find_column(table: Any, given: str | None, candidates: Sequence[str]) -> str | None:
    """The name of a column of ``table`` (or of a list of column names): ``given`` (which
    must exist), else the first of ``candidates`` the table has, else None."""
    names = list(table) if isinstance(table, list) else list(table.column_names)
    if given is not None:
        if given not in names:
            raise InputFormatError(
                f"The table has no column {given!r}; it has {', '.join(map(repr, names))}."
            )
        return given
    return next((name for name in candidates if name in names), None)


def needed_column(table: Any, given: str | None, candidates: Sequence[str], what: str) -> str:
    """:func:`find_column`, or an error naming the columns looked for and those there."""
    name = find_column(table, given, candidates)
    if name is None:
        names = list(table) if isinstance(table, list) else list(table.column_names)
        raise InputFormatError(
            f"The table has no {what} column: looked for {', '.join(map(repr, candidates))}; it "
            f"has {', '.join(map(repr, names))}. Name it with the *_col keywords."
        )
    return name


def write_table(path: Any, columns: dict[str, Any]) -> None:
    """Write ``columns`` (name -> list or array) as one Parquet file."""
    pyarrow = import_pyarrow()
    pyarrow.parquet.write_table(pyarrow.table(columns), path)


def packed_columns(
    table: Any, query: str, doc: str, score: str
) -> tuple[list[str], Any, Any, Any] | None:
    """``(queries, lengths, ids, scores)`` straight from Arrow's buffers, with the doc ids as
    fixed-width ASCII bytes (``_packed``): no Python string per row. ``None`` when the table
    needs the careful path (nulls, empty or non-ASCII ids, scores that are not finite
    numbers), which then names the problem."""
    import numpy as np

    pyarrow = import_pyarrow()
    compute = pyarrow.compute
    queries_column = table.column(query).combine_chunks()
    scores_column = table.column(score).combine_chunks()
    if not pyarrow.types.is_floating(scores_column.type) and not pyarrow.types.is_integer(
        scores_column.type
    ):
        return None
    if scores_column.null_count or queries_column.null_count:
        return None
    scores = scores_column.to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
    if not np.isfinite(scores).all():
        return None
    ids = _fixed_width(table.column(doc).combine_chunks())
    n = len(queries_column)
    if ids is None or n == 0 or not _is_text(queries_column.type):
        return None
    changes = compute.not_equal(queries_column.slice(1), queries_column.slice(0, n - 1))
    starts = np.concatenate(([0], np.flatnonzero(changes.to_numpy(zero_copy_only=False)) + 1))
    lengths = np.diff(np.append(starts, n)).astype(np.int64)
    names = queries_column.take(pyarrow.array(starts)).to_pylist()
    return names, lengths, ids, scores


def _fixed_width(column: Any) -> Any:
    """A string column as a zero-padded ``S`` array, or None (nulls, empty or non-ASCII).

    Arrow pads every id to the longest with NUL bytes, in C++; the padded buffer is then the
    array itself, without a Python string per row."""
    import numpy as np

    pyarrow = import_pyarrow()
    compute = pyarrow.compute
    if column.null_count or not _is_text(column.type) or not len(column):
        return None
    sizes = compute.binary_length(column)
    if compute.min(sizes).as_py() == 0 or not compute.all(compute.string_is_ascii(column)).as_py():
        return None
    width = compute.max(sizes).as_py()
    padded = compute.utf8_rpad(column, width=width, padding="\x00")
    _, offsets, data = padded.buffers()
    offset_type = np.dtype(np.int64 if pyarrow.types.is_large_string(padded.type) else np.int32)
    first = int(
        np.frombuffer(
            offsets, dtype=offset_type, count=1, offset=offset_type.itemsize * padded.offset
        )[0]
    )
    return np.frombuffer(data, dtype=f"S{width}", count=len(padded), offset=first)


def _is_text(kind: Any) -> bool:
    pyarrow = import_pyarrow()
    return bool(pyarrow.types.is_string(kind) or pyarrow.types.is_large_string(kind))
