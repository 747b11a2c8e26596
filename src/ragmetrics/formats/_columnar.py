"""Parquet files and Arrow tables for runs and qrels (pyarrow: the ``[parquet]`` extra).

Columns are ours (``query_id``, ``doc_id``, ``score``; ``relevance`` for qrels) or ranx's
(``q_id``, ``doc_id``, ``score``), found by name. A table goes through the validated
DataFrame constructors, so every id and value is checked as from pandas.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NamedTuple

from ragmetrics._util.arrays import packed_in_order, runs_in_order, stable_order
from ragmetrics._util.optional import import_pyarrow
from ragmetrics._util.threads import map_threaded
from ragmetrics.errors import InputFormatError, MissingDependencyError
from ragmetrics.formats._packed import (
    STANDIN_WIDTH,
    WIDEST,
    outlier_width,
    rows_with_standins,
    standin_cut,
    utf8,
)

if TYPE_CHECKING:
    import numpy as np

QUERY_COLUMNS = ("query_id", "q_id")
SCORE_COLUMNS = ("score",)
GRADE_COLUMNS = ("relevance", "grade", "score")


def as_table(value: Any) -> Any:
    """``value`` as a pyarrow Table: a Table, a RecordBatch, or anything that offers the
    Arrow C stream or array interface (``__arrow_c_stream__``: Polars frames, DuckDB
    results, pyarrow readers; read without a detour through pandas). String views (Polars'
    strings) become strings. Anything else is an error saying what it is."""
    pyarrow = import_pyarrow()
    if isinstance(value, pyarrow.RecordBatch):
        value = pyarrow.Table.from_batches([value])
    elif not isinstance(value, pyarrow.Table):
        if hasattr(value, "__arrow_c_stream__"):  # pyarrow.table() would look for pandas
            value = arrow_batches(value).read_all()
        elif hasattr(value, "__arrow_c_array__"):
            value = pyarrow.Table.from_batches([pyarrow.record_batch(value)])
        else:
            raise InputFormatError(
                f"Expected a pyarrow Table or RecordBatch, or an object with the Arrow C stream "
                f"interface (a Polars DataFrame, a DuckDB result); got {type(value).__name__}. "
                f"Read a file with from_parquet(path)."
            )
    return without_views(value)


def without_views(table: Any) -> Any:
    """``table`` with its string-view columns as large strings (the same text: Polars and
    DuckDB hand out views, which the id readers take as plain strings)."""
    pyarrow = import_pyarrow()
    view = getattr(pyarrow.types, "is_string_view", None)
    if view is None or not any(view(field.type) for field in table.schema):
        return table
    fields = [
        pyarrow.field(f.name, pyarrow.large_string(), f.nullable, f.metadata) if view(f.type) else f
        for f in table.schema
    ]
    return table.cast(pyarrow.schema(fields, metadata=table.schema.metadata))


def arrow_batches(value: Any) -> Any:
    """The record batches of an object with the Arrow C stream interface, read one at a
    time (pyarrow's ``RecordBatchReader.from_stream``)."""
    pyarrow = import_pyarrow()
    reader = getattr(pyarrow.RecordBatchReader, "from_stream", None)
    if reader is None:
        raise InputFormatError(
            "Reading an Arrow C stream needs pyarrow 15 or newer: pip install -U pyarrow."
        )
    return reader(value)


def read_table(path: Any, text_columns: Sequence[str] = ()) -> Any:
    """A Parquet file or dataset folder as one Arrow table; ``text_columns`` (those present)
    are read dictionary-encoded where the file stores them so: a repeated id is then decoded
    once, not once per row. Where the writer gave up its dictionary (mostly distinct ids:
    UUIDs, or ids from a corpus of millions), they are read as plain strings: asking for a
    dictionary would make pyarrow build one, which costs several times the read."""
    files = parquet_files(path)  # a missing file is named before pyarrow is looked for
    pyarrow = import_pyarrow()
    footers = []
    for file in files:  # each file's footer read once: its schema, row groups and sizes
        with parquet_errors(file):
            footers.append(pyarrow.parquet.read_metadata(file))
    schemas = [footer.schema.to_arrow_schema() for footer in footers]
    schema = schemas[0]
    for other, other_schema in zip(files[1:], schemas[1:], strict=True):
        if not other_schema.equals(schema):
            raise InputFormatError(
                f"{path}: the Parquet files of this folder have different columns or "
                f"types ({files[0].name}: {_describe(schema)}; {other.name}: "
                f"{_describe(other_schema)}); write them alike."
            )
    with parquet_errors(files[0] if len(files) == 1 else path):
        present = [c for c in text_columns if c in set(schema.names)]
        wanted = stored_as_dictionary(footers, present)
        # memory-mapped: the file's pages are read from the page cache, not copied into
        # fresh memory first (about 110 MB less at the peak for a run of 10M results); the
        # columns are decoded into memory of their own, so a file written over later never
        # changes a run
        table = pyarrow.parquet.read_table(
            files if len(files) > 1 else files[0],
            read_dictionary=wanted or None,
            memory_map=True,
        )
    return _with_every_files_empty_rankings(table, files, schemas) if len(files) > 1 else table


def _with_every_files_empty_rankings(
    table: Any, files: Sequence[Any], schemas: Sequence[Any]
) -> Any:
    """``table``, read from several files, with the queries that any of them lists as
    ranked with no result (``EMPTY_RANKINGS_KEY``, in file order): pyarrow keeps the first
    file's schema metadata only, which would leave the others' empty rankings out (their
    queries then counted missing from the run, not ranked with nothing)."""
    import json

    listed: dict[str, None] = {}
    for file, schema in zip(files, schemas, strict=True):
        try:
            listed.update(dict.fromkeys(empty_rankings(schema)))
        except InputFormatError as error:
            raise InputFormatError(f"{file}: {error}") from None
    if not listed:
        return table
    metadata = dict(table.schema.metadata or {})
    metadata[EMPTY_RANKINGS_KEY] = json.dumps(list(listed)).encode()
    return table.replace_schema_metadata(metadata)


def stored_as_dictionary(footers: Sequence[Any], columns: Sequence[str]) -> list[str]:
    """Those of ``columns`` whose pages hold dictionary codes: under 4 bytes a value (codes
    are at most 32 bits; a plain string costs its 4-byte length and its bytes), from the
    files' footers (``pyarrow.parquet.read_metadata``), over every row group."""
    size = dict.fromkeys(columns, 0)
    values = dict.fromkeys(columns, 0)
    for metadata in footers:
        index = {metadata.schema.column(i).path: i for i in range(metadata.num_columns)}
        for column in columns:
            if column not in index:
                size[column] = values[column] = -1  # absent from a file: read it plain
            if values[column] < 0:
                continue
            for group in range(metadata.num_row_groups):
                chunk = metadata.row_group(group).column(index[column])
                size[column] += chunk.total_uncompressed_size
                values[column] += chunk.num_values
    return [
        c for c in columns if values[c] >= 0 and size[c] < _DICTIONARY_BYTES * max(values[c], 1)
    ]


_DICTIONARY_BYTES = 4  # bytes a value under which a column is read as a dictionary


def parquet_files(path: Any) -> list[Any]:
    """A Parquet file, or the Parquet files of a folder (nested too) in name order; hidden
    and ``_`` files (Spark's ``_SUCCESS``) are left out."""
    from pathlib import Path

    root = Path(path)
    if root.is_dir():
        files = sorted(
            p for p in root.rglob("*") if p.is_file() and not p.name.startswith((".", "_"))
        )
        if not files:
            raise InputFormatError(f"'{path}' holds no Parquet file.")
        not_parquet = [p for p in files if not _looks_like_parquet(p)]
        if not_parquet:
            shown = ", ".join(p.name for p in not_parquet[:3])
            raise InputFormatError(
                f"'{path}' is a folder, and a folder is read as a Parquet dataset; it holds "
                f"{len(not_parquet)} file(s) that are not Parquet ({shown}). Give the run "
                f"file itself, or a folder of Parquet files only."
            )
        return files
    if not root.exists():
        raise InputFormatError(f"No such file: {str(path)!r}.")
    return [root]


def _looks_like_parquet(path: Any) -> bool:
    """A Parquet file starts with the bytes ``PAR1`` (and ends with them)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(4) == b"PAR1"
    except OSError:
        return False


@contextmanager
def parquet_errors(path: Any) -> Iterator[None]:
    """Turn what pyarrow raises on a file it cannot read into one error naming the file."""
    pyarrow = import_pyarrow()
    try:
        yield
    except (pyarrow.ArrowException, OSError) as error:
        raise InputFormatError(
            f"{path}: cannot be read as Parquet ({str(error).strip()}). Is it a Parquet "
            f"file, whole and undamaged?"
        ) from None


@contextmanager
def naming(path: Any, first_row: int = 0) -> Iterator[None]:
    """Put the file (and the row its batch starts at) before what is found wrong in the rows
    read from it, whose messages count rows from the start of what was read and say where
    as a DataFrame would ("DataFrame: ...")."""
    try:
        yield
    except InputFormatError as error:
        message = str(error)
        if str(path) in message:
            raise
        where = f"{path}" + (f", the rows from row {first_row:,} on" if first_row else "")
        message = message.removeprefix("DataFrame: ")
        raise InputFormatError(f"{where}: {message}") from None


@contextmanager
def naming_the_file(path: Any, read_alone: Callable[[Any], object]) -> Iterator[None]:
    """:func:`naming` for a Parquet file or folder read in memory. In a folder, the file that
    holds the bad row is found by reading each file alone (``read_alone``, only once
    something is wrong): its own error names it, with the row counted in it. A fault that
    only the files together hold (a doc judged in two of them with two grades) names the
    folder."""
    try:
        with naming(os.fspath(path)):
            yield
    except InputFormatError:
        files = parquet_files(path)
        if len(files) > 1:
            for file in files:
                read_alone(file)  # raises for the first file that holds the bad row
        raise


def _describe(schema: Any) -> str:
    return ", ".join(f"{field.name}: {field.type}" for field in schema)


def refuse_run_scores(table: Any, column: str) -> None:
    """Grades found in a ``score`` column (ranx's name for them) that are not whole numbers
    are a run's scores: a run file given where qrels were meant is refused, not scored."""
    pyarrow = import_pyarrow()
    import pyarrow.compute as pc

    values = table.column(column)
    if not pyarrow.types.is_floating(values.type) or not len(values):
        return
    fractional = pc.not_equal(values, pc.floor(values))
    if pc.any(fractional).as_py():
        example = values.filter(fractional)[0].as_py()
        raise InputFormatError(
            f"The column 'score' holds values that are not whole numbers (such as {example!r}): "
            f"these are a run's scores, not grades. Give the qrels first and the run second; "
            f"for real-valued gains in a column named 'score', name it (grade_col='score')."
        )


def check_column_types(
    table: Any, ids: Sequence[str], values: str | None, what: str, source: object = None
) -> None:
    """Raise unless the id columns hold strings or integers and the value column numbers,
    naming the column, its type and the fix (a list column is one row per query, not per
    result)."""
    pyarrow = import_pyarrow()
    types = pyarrow.types
    schema = table if isinstance(table, pyarrow.Schema) else table.schema
    where = "" if source is None else f"{source}: "
    for name in ids:
        kind = schema.field(name).type
        if types.is_dictionary(kind):
            kind = kind.value_type
        if not (types.is_string(kind) or types.is_large_string(kind) or types.is_integer(kind)):
            hint = (
                " One row per result is needed: explode the lists first (pandas "
                "DataFrame.explode, or pyarrow.compute.list_flatten)."
                if types.is_list(kind) or types.is_large_list(kind)
                else " Cast it to strings."
            )
            raise InputFormatError(
                f"{where}the column {name!r} holds {kind}; ids must be strings or integers.{hint}"
            )
    if values is not None:
        kind = schema.field(values).type
        if not (types.is_integer(kind) or types.is_floating(kind) or types.is_boolean(kind)):
            raise InputFormatError(
                f"{where}the column {values!r} holds {kind}; {what} must be numbers, one per row."
            )


def read_ids_table(path: Any, query_col: str | None, doc_col: str) -> Any:
    """:func:`read_table` with the query and doc id columns read dictionary-encoded."""
    return read_table(path, (*QUERY_COLUMNS, query_col or "", doc_col))


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


def jsonl_table(path: Any, groups: Sequence[tuple[str, ...]]) -> Any | None:
    """A JSON Lines file of records as a table read by Arrow's JSON reader, with one column
    for each group of key names (the one name of the group the records use, renamed to the
    group's first name); or None when the careful reader must read it (it names what is
    wrong): a file not named ``.jsonl`` that is not two or more objects a line (a JSON
    document), no pyarrow, a file Arrow does not parse (invalid JSON, a key given twice in
    an object, a value whose type changes down a column), a group none or several of whose
    names are used, a line that is not one object.

    Arrow's reader refuses what the careful one refuses but for two objects on one line,
    which it reads as two records: the rows are counted against the lines that are not
    blank. The columns' types are the caller's to check (``packed_columns`` takes text ids
    and real scores only; ids written as integers are left to the careful reader)."""
    try:
        pyarrow = import_pyarrow()
        from pyarrow import json as arrow_json
    except (MissingDependencyError, ImportError):
        return None
    named = os.fspath(path).lower().endswith(".jsonl")
    try:
        with open(path, "rb") as handle:
            head = handle.read(_HEAD_BYTES)
            if not named and not _records_ahead(head):
                return None  # a JSON document, not a record a line
            data = head + handle.read()
        lines, most_opened = _line_shape(data)
        if most_opened > _MOST_OPENED:
            return None  # Arrow's parser recurses: a deep enough nest would crash it
        table = arrow_json.read_json(pyarrow.BufferReader(data))
        present = set(table.column_names)  # a key not UTF-8 fails here, when it is decoded
    except (OSError, ValueError, pyarrow.ArrowException):  # ValueError: bytes not UTF-8
        return None  # the careful reader says what is wrong
    used = []
    for names in groups:
        found = [name for name in names if name in present]
        if len(found) != 1:
            return None
        used.append(found[0])
    if table.num_rows != lines:
        return None
    return table.select(used).rename_columns([names[0] for names in groups])


def jsonl_packed(
    path: Any, groups: Sequence[tuple[str, ...]], *, integer: bool = False
) -> Packed | None:
    """:func:`packed_columns` of a JSON Lines file's records (:func:`jsonl_table`), the
    columns named by each group's first name; None when the careful reader must read it."""
    table = jsonl_table(path, groups)
    if table is None:
        return None
    query, doc, value = (names[0] for names in groups)
    return packed_columns(table, query, doc, value, integer=integer, strings=True)


def _records_ahead(head: bytes) -> bool:
    """Whether the first bytes of a file not named ``.jsonl`` look like JSON Lines: an
    object first, and the next line that is not blank starts another. One object alone is a
    JSON document, which the careful reader reads as one (a run or qrels as a mapping)."""
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n")
    second = text.partition(b"\n")[2].lstrip(b" \t\r\n")
    return text.startswith(b"{") and second.startswith(b"{")


_HEAD_BYTES = 1 << 16


def _line_shape(data: bytes) -> tuple[int, int]:
    """The lines of ``data`` that are not blank (JSON's whitespace only), and a bound on the
    brackets any one line opens (those in strings counted too), both at C speed: the lines
    are told by their first byte (``{``, a byte-order mark before the first), the few others
    looked at one by one. The bound is 0 when no line is longer than ``_MOST_OPENED``
    bytes (none can open more), else the file's brackets less one for each other line that
    starts with ``{`` (flat records: 1), or, when that passes ``_MOST_OPENED``, the most
    one line holds."""
    import numpy as np

    raw = np.frombuffer(data, dtype=np.uint8)
    newlines = np.flatnonzero(raw == ord("\n"))
    starts = np.concatenate(([3 if data.startswith(b"\xef\xbb\xbf") else 0], newlines + 1))
    starts = starts[starts < len(raw)]
    braced = raw[starts] == ord("{")
    n_braced = int(np.count_nonzero(braced))
    ends = np.append(newlines, len(raw))
    others = np.flatnonzero(~braced)  # a blank line, a line that starts with a space
    at = starts[others]
    filled = 0
    if len(at) > _FEW_OTHERS:  # many: each line's bytes looked at in step, all lines at once
        blank = np.zeros(256, dtype=bool)
        blank[list(b" \t\r\n")] = True
        stops = ends[np.searchsorted(ends, at)]
        for _ in range(64):  # a line's first 64 bytes; past them, one by one below
            here = at < stops  # not at the line's end yet
            byte_blank = blank[raw[np.minimum(at, len(raw) - 1)]]
            filled += int(np.count_nonzero(here & ~byte_blank))
            going = here & byte_blank
            at, stops = at[going] + 1, stops[going]
            if not len(at):
                break
    for start in at.tolist():  # few, or lines blank past 64 bytes
        stop = data.find(b"\n", start)
        filled += bool(data[start : stop if stop >= 0 else len(data)].strip(b" \t\r\n"))
    if int(np.diff(ends, prepend=-1).max()) <= _MOST_OPENED:
        return n_braced + filled, 0  # no line long enough to nest deep: not counted
    # "[" and "{" differ in one bit (0x20): one pass finds both
    folded = np.bitwise_or(raw, np.uint8(0x20))
    is_opener = np.equal(folded, np.uint8(ord("{")), out=np.empty(len(raw), dtype=bool))
    del folded
    most = int(np.count_nonzero(is_opener)) - max(n_braced - 1, 0)
    if most > _MOST_OPENED:  # nested records: counted line by line
        openers = np.flatnonzero(is_opener)
        most = int(np.diff(np.searchsorted(openers, ends), prepend=0).max())
    return n_braced + filled, most


# brackets one line of a JSON Lines file may open for Arrow to read it: its parser recurses,
# and a line nested deep enough crashes the process (here between 10,000 and 30,000 levels,
# on threads of 8 MB of stack; 1,000 leaves room for stacks of 1 MB). A line of no more
# bytes cannot open more, and is not counted
_MOST_OPENED = 1000
_FEW_OTHERS = 1000  # lines not starting with "{" looked at one by one, up to this many


def decoded(table: Any) -> Any:
    """``table`` with dictionary-encoded columns turned back into plain ones (for pandas)."""
    pyarrow = import_pyarrow()
    if not any(pyarrow.types.is_dictionary(t) for t in table.schema.types):
        return table
    fields = [
        pyarrow.field(f.name, f.type.value_type) if pyarrow.types.is_dictionary(f.type) else f
        for f in table.schema
    ]
    return table.cast(pyarrow.schema(fields))


EMPTY_RANKINGS_KEY = b"ragmetrics.empty_rankings"  # schema metadata: queries without rows


def write_table(path: Any, columns: dict[str, Any], empty_queries: Sequence[str] = ()) -> None:
    """Write ``columns`` (name -> list or array) as one Parquet file; ``empty_queries`` (a
    run's queries whose ranking is empty, which have no row) go in the schema's metadata, so
    that they read back as empty rankings, not as missing queries."""
    import json

    from ragmetrics.formats._atomic import write_with

    pyarrow = import_pyarrow()

    def write(temporary: str) -> None:  # inside: an id UTF-8 cannot hold is a WriteError
        table = pyarrow.table(columns)
        if empty_queries:
            table = table.replace_schema_metadata(
                {EMPTY_RANKINGS_KEY: json.dumps(list(empty_queries), ensure_ascii=False)}
            )
        pyarrow.parquet.write_table(table, temporary)

    write_with(path, write)


def empty_rankings(schema: Any) -> list[str]:
    """The queries whose ranking is empty, as :func:`write_table` recorded them."""
    import json

    metadata = schema.metadata or {}
    if EMPTY_RANKINGS_KEY not in metadata:
        return []
    try:
        queries = json.loads(metadata[EMPTY_RANKINGS_KEY])
    except ValueError:
        queries = None
    if not isinstance(queries, list) or not all(isinstance(q, str) and q for q in queries):
        raise InputFormatError(
            "The Parquet metadata 'ragmetrics.empty_rankings' must be a JSON list of query "
            "ids; remove or fix it."
        )
    return queries


class Packed(NamedTuple):
    """A table's columns as :func:`packed_columns` gives them."""

    queries: list[str]
    lengths: Any
    ids: Any
    scores: Any
    dictionary: Any
    scattered: bool  # the rows of some queries lay apart, and were brought together


def packed_from_pandas(
    frame: Any,
    query: str,
    doc: str,
    score: str | None,
    *,
    integer: bool = False,
    strings: bool = False,
) -> Packed | None:
    """:func:`packed_columns` of a DataFrame whose id columns hold strings and whose scores
    are numbers: columns pandas keeps in Arrow (pandas 3's strings, ``string[pyarrow]``,
    ``ArrowDtype``) are handed to Arrow as they are, columns of Python ``str`` objects
    (pandas 2's default) and of numpy integers are copied into Arrow once (500,000 UUIDs:
    19 ms, where reading them row by row took 110 ms more). None for any other frame (a
    missing value, Python integers among string ids, no pyarrow), or one
    :func:`packed_columns` declines: the caller reads it row by row, and names any
    problem. With ``integer`` (grades), only a column of signed integers is
    taken; ``strings``: as :func:`packed_columns`; no ``score``: as there."""
    import numpy as np

    if len({query, doc, score}) < 3 or not len(frame):
        return None
    scores = None if score is None else frame[score].dtype
    if scores is not None and (
        not isinstance(scores, np.dtype) or scores.kind not in ("i" if integer else "fiu")
    ):
        return None
    try:
        pyarrow = import_pyarrow()
    except MissingDependencyError:  # pandas without pyarrow: its columns are Python objects
        return None
    columns = {name: _arrow_ids(frame[name]) for name in (query, doc)}
    if any(column is None for column in columns.values()):
        return None
    if score is not None:
        columns[score] = pyarrow.array(frame[score].to_numpy())
    return packed_columns(
        pyarrow.table(columns), query, doc, score, integer=integer, strings=strings
    )


def _arrow_ids(column: Any) -> Any:
    """A DataFrame's id column as an Arrow array: as pandas keeps it, when in Arrow; numpy
    integers written as decimal strings by Arrow, as the row-by-row reader writes them;
    copied into Arrow when its values are Python strings (Arrow's conversion refuses
    integers, floats and booleans among them, makes bytes a binary column, which is not
    taken, and makes ``None`` a null, which the packed path declines); else None: the
    row-by-row reader makes Python integers strings and names a missing or wrong value."""
    import numpy as np

    pyarrow = import_pyarrow()
    if _arrow_strings(column.dtype):
        return pyarrow.array(column)
    if isinstance(column.dtype, np.dtype) and column.dtype.kind in "iu":
        # integer ids (MS MARCO's passage numbers) as the row-by-row reader writes them
        return pyarrow.array(column.to_numpy()).cast(pyarrow.string())
    if getattr(column.dtype, "kind", None) != "O":
        return None
    try:
        array = pyarrow.array(column.to_numpy())
    except (pyarrow.ArrowException, UnicodeEncodeError):
        return None  # not strings, a lone surrogate, more than 2 GB of ids
    return array if _is_text(array.type) else None


def _arrow_strings(dtype: Any) -> bool:
    """True for a pandas dtype whose strings are held in Arrow."""
    if getattr(dtype, "storage", None) == "pyarrow":  # pandas' StringDtype
        return True
    pyarrow_dtype = getattr(dtype, "pyarrow_dtype", None)  # pandas.ArrowDtype
    return pyarrow_dtype is not None and _is_text(pyarrow_dtype)


def packed_columns(
    table: Any,
    query: str,
    doc: str,
    score: str | None,
    *,
    integer: bool = False,
    strings: bool = False,
) -> Packed | None:
    """``(queries, lengths, ids, scores, dictionary, scattered)`` straight from Arrow's
    buffers, with the doc ids as fixed-width UTF-8 bytes (``_packed``): no Python string per
    row; ``dictionary`` is ``(distinct ids, code per row)`` when the doc column is
    dictionary-encoded (the store then hashes each distinct id once), else None;
    ``scattered``: each query's rows were brought together. ``None`` when the table
    needs the careful path (nulls, empty ids or ids that cannot be packed, scores that are
    not finite numbers; with ``integer``, grades that are not an integer column), which then
    names the problem. With ``strings``, doc ids that are valid but cannot be packed (one
    holds a NUL, or they are too wide to pad: chunk texts used as ids) come as a list of
    Python strings instead, the rest as above: the caller builds a store of strings without
    a detour through pandas. Without ``score`` (a ranking in row order) the scores are zeros:
    the caller ranks each query's rows in the order they come.

    Dictionary columns are read chunk by chunk, never unified: a Parquet file's chunks share
    their row group's dictionary, and unifying the dictionaries of a few million distinct ids
    costs more than the whole evaluation."""
    import numpy as np

    pyarrow = import_pyarrow()
    scores = (
        np.zeros(table.num_rows)
        if score is None
        else _score_values(pyarrow, table.column(score), integer)
    )
    if scores is None or not _every_id_given(table.column(query)):
        return None
    docs = _doc_ids(table.column(doc), strings)
    if docs is None or len(scores) == 0:
        return None
    ids, dictionary = docs
    column = table.column(query)
    runs, scattered = _column_runs(column)
    if runs is None:
        return None
    if scattered:
        # a query's rows apart: grouped by codes, not run by run
        names, lengths, order = _scattered_queries(column)
        if isinstance(ids, list):
            texts = list(map(ids.__getitem__, order.tolist()))
            return Packed(names, lengths, texts, scores[order], None, True)
        return Packed(names, lengths, *packed_in_order(order, ids, scores, dictionary), True)
    names, lengths = _query_runs(runs)
    if not names:
        return None
    return Packed(names, lengths, ids, scores, dictionary, False)


def _score_values(pyarrow: Any, column: Any, integer: bool) -> np.ndarray | None:
    """A score (or, with ``integer``, grade) column as float64 (int64), or None when the
    careful path must read it: nulls, scores that are not finite numbers, grades that are
    not integers or do not fit int64."""
    import numpy as np

    scores_column = column.combine_chunks()
    kind = scores_column.type
    if not pyarrow.types.is_integer(kind) and (integer or not pyarrow.types.is_floating(kind)):
        return None
    if scores_column.null_count:
        return None
    unsigned = integer and pyarrow.types.is_unsigned_integer(kind) and len(scores_column)
    if unsigned and pyarrow.compute.max(scores_column).as_py() > np.iinfo(np.int64).max:
        return None  # a grade past int64: the careful path names it
    scores: np.ndarray = scores_column.to_numpy(zero_copy_only=False)
    scores = scores.astype(np.int64 if integer else np.float64, copy=False)
    if not integer and not np.isfinite(scores).all():
        return None
    return scores


# runs of query ids that come back (an earlier run had their id) past this share of the rows
# and past ``_SCATTERED_FROM``: the rows are grouped through the column's codes, not by listing
# each run's id as a Python string
SCATTERED_RUNS = 0.05
_SCATTERED_FROM = 4096
_PROBE_ROWS = 1 << 17  # the rows of a long query column listed first (see _column_runs)


def _column_runs(column: Any) -> tuple[list[tuple[Any, Any, int]] | None, bool]:
    """The runs of a query column (:func:`_runs`; None unless its ids are text), and whether
    more of them come back (an earlier run had their id) than the column may have to be
    read run by run: 5% of its rows, and ``_SCATTERED_FROM``.

    The first rows (four times that bound) are looked at first: when they alone hold more
    runs that come back, so does the whole column (a run that comes back in a part does in
    the whole), and the rest is never listed; the runs given are then the rows listed only.
    In a long column the first ``_PROBE_ROWS`` rows come before them, held to the same share
    of their own rows: in a column sorted by doc id every row is a run, and listing four
    times 5% of ten million rows before deciding took 0.18 s. Either way the run read is the
    same: the choice sets only the speed."""
    bound = max(_SCATTERED_FROM, SCATTERED_RUNS * len(column))
    first = int(4 * bound)
    steps = [(len(column), bound)]
    if len(column) > first:
        steps.insert(0, (first, bound))
        if first > 2 * _PROBE_ROWS:
            steps.insert(0, (_PROBE_ROWS, max(_SCATTERED_FROM, SCATTERED_RUNS * _PROBE_ROWS)))
    runs: list[tuple[Any, Any, int]] = []
    at = 0
    for stop, limit in steps:
        listed = _runs(column.slice(at, stop - at))
        if listed is None:
            return None, False
        runs += listed
        at = stop
        if _comebacks(runs) > limit:
            return runs, True
    return runs, False


def _comebacks(runs: list[tuple[Any, Any, int]]) -> int:
    """How many runs of :func:`_runs` have an id an earlier run had (a run spanning two
    chunks counted once), counted by Arrow on the runs' first ids: a column grouped by query
    has none, however short its runs (qrels with a few judgments a query, a run of depth 1).
    Not counted below ``_SCATTERED_FROM`` runs."""
    n_runs = sum(len(starts) for _, starts, _ in runs)
    if n_runs <= _SCATTERED_FROM:
        return 0
    pyarrow = import_pyarrow()
    heads = [first_ids for first_ids, _, _ in runs]
    # the last run of a chunk is its last rows' id: it goes on when the next chunk starts so
    continued = sum(a[len(a) - 1].as_py() == b[0].as_py() for a, b in itertools.pairwise(heads))
    distinct = pyarrow.compute.count_distinct(pyarrow.chunked_array(heads)).as_py()
    return int(n_runs - continued - distinct)


def _every_id_given(column: Any) -> bool:
    """True when no id of a query column is missing: no null, none empty, and no null in a
    dictionary's values (a row whose code points at one is missing, though Arrow counts no
    null for it). The dictionaries' values are looked at whole, used by a row or not."""
    pyarrow = import_pyarrow()
    compute = pyarrow.compute
    if column.null_count:
        return False
    if pyarrow.types.is_dictionary(column.type):
        values = [chunk.dictionary for chunk in column.chunks if len(chunk)]
    else:
        values = [chunk for chunk in column.chunks if len(chunk)]
    for array in values:
        if array.null_count:
            return False
        if _is_text(array.type) and compute.min(compute.binary_length(array)).as_py() == 0:
            return False
    return True


def _scattered_queries(column: Any) -> tuple[list[str], Any, Any]:
    """For a text query column whose rows of one query lie apart (a file sorted by doc id,
    a join's output): the query ids in the order first seen, their row counts, and the
    stable order that brings each query's rows together."""
    import numpy as np

    pyarrow = import_pyarrow()
    if pyarrow.types.is_dictionary(column.type):
        distinct, codes = _unified_codes(column)
    else:
        whole = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
        encoded = pyarrow.compute.dictionary_encode(whole)
        distinct = encoded.dictionary  # in the order first seen, as Arrow encodes
        codes = encoded.indices.to_numpy(zero_copy_only=False)
    order = stable_order(codes, len(distinct))  # (Arrow's int32 codes: half the bytes of int64)
    lengths = np.bincount(codes, minlength=len(distinct)).astype(np.int64)
    used = np.flatnonzero(lengths)
    first_rows = order[(np.cumsum(lengths) - lengths)[used]]
    seen = used[np.argsort(first_rows, kind="stable")]  # the codes in the order first seen
    if len(seen) != len(distinct) or (seen != used).any():
        # the groups put in the order their ids are first seen, each group's rows kept
        order = order[runs_in_order(lengths, seen)]
        lengths = lengths[seen]
        distinct = distinct.take(pyarrow.array(seen))
    return distinct.to_pylist(), lengths, order


def _unified_codes(column: Any) -> tuple[Any, Any]:
    """The distinct ids of a dictionary-encoded (chunked) column, and each row's code
    among them, each distinct dictionary hashed once. A Parquet file's chunks share their
    row group's dictionary (ten row groups of a file sorted by doc id: 77 chunks, each with
    its group's 100,000 query ids), and Arrow's ``unify_dictionaries`` hashes every chunk's
    (0.24-0.30 s there, against 0.10 s). A dictionary may list ids in any order, and ids no
    row uses."""
    import numpy as np

    pyarrow = import_pyarrow()
    chunks = [chunk for chunk in column.chunks if len(chunk)]
    dictionaries, starts = _distinct_dictionaries(chunks)
    distinct = dictionaries[0]
    if len(dictionaries) == 1:  # (an id it lists twice is merged later, as two names)
        codes = [chunk.indices.to_numpy(zero_copy_only=False) for chunk in chunks]
    elif len(dictionaries) == len(chunks):  # a dictionary a chunk: Arrow maps the codes
        unified = [chunk for chunk in column.unify_dictionaries().chunks if len(chunk)]
        distinct = unified[0].dictionary
        codes = [chunk.indices.to_numpy(zero_copy_only=False) for chunk in unified]
    else:  # the distinct dictionaries encoded as one, each chunk's codes mapped through it
        encoded = pyarrow.compute.dictionary_encode(pyarrow.concat_arrays(dictionaries))
        to_distinct = encoded.indices.to_numpy(zero_copy_only=False)
        distinct = encoded.dictionary
        codes = [
            to_distinct[
                np.add(
                    chunk.indices.to_numpy(zero_copy_only=False), np.int32(start), dtype=np.int32
                )
            ]
            for chunk, start in zip(chunks, starts, strict=True)
        ]
    return distinct, codes[0] if len(codes) == 1 else np.concatenate(codes)


def _distinct_dictionaries(chunks: Sequence[Any]) -> tuple[list[Any], list[int]]:
    """The distinct dictionaries of dictionary-encoded ``chunks``, in the order first met
    (chunks that share one, by where its values lie in memory, give it once), and where
    each chunk's dictionary starts in them joined one after another: a chunk's code plus
    its start is the row's code in the joined dictionaries."""
    first_code: dict[tuple[int, ...], int] = {}  # a dictionary (by its memory) -> its first code
    dictionaries: list[Any] = []
    starts = []
    size = 0
    for chunk in chunks:
        key = _identity(chunk.dictionary)
        if key not in first_code:
            first_code[key] = size
            dictionaries.append(chunk.dictionary)
            size += len(chunk.dictionary)
        starts.append(first_code[key])
    return dictionaries, starts


def _doc_ids(column: Any, strings: bool = False) -> tuple[Any, Any] | None:
    """The doc ids of a (chunked) column as one fixed-width array, and ``(distinct, codes)``
    when the column is dictionary-encoded; None when some id needs the careful path. With
    ``strings``, ids that are valid but cannot be packed come as a list of ``str`` (and
    None): :func:`_id_strings`."""
    ids = _packed_doc_ids(column)
    if ids is None and strings:
        texts = _id_strings(column)
        return None if texts is None else (texts, None)
    return ids


def _id_strings(column: Any) -> list[str] | None:
    """The ids of a (chunked) text column as Python strings, dictionaries decoded; None when
    one is missing or empty or not UTF-8 (the careful path names it)."""
    pyarrow = import_pyarrow()
    compute = pyarrow.compute
    chunks = [chunk for chunk in column.chunks if len(chunk)]
    if not chunks or column.null_count:
        return None
    if pyarrow.types.is_dictionary(column.type):
        chunks = [chunk.dictionary.take(chunk.indices) for chunk in chunks]
    if any(a.null_count or not _is_text(a.type) for a in chunks):
        return None
    if min(compute.min(compute.binary_length(a)).as_py() for a in chunks) == 0:
        return None
    try:
        return list(itertools.chain.from_iterable(a.to_pylist() for a in chunks))
    except (UnicodeDecodeError, pyarrow.ArrowException):
        return None


def _packed_doc_ids(column: Any) -> tuple[Any, Any] | None:
    """:func:`_doc_ids` without ``strings``."""
    import numpy as np

    pyarrow = import_pyarrow()
    chunks = [chunk for chunk in column.chunks if len(chunk)]
    if not chunks or column.null_count:
        return None
    if pyarrow.types.is_dictionary(column.type):
        dictionaries, starts = _distinct_dictionaries(chunks)
        if 2 * sum(map(len, dictionaries)) > len(column):
            # dictionaries about as long as their chunks (Polars' categorical ids, a row
            # group's dictionary a page of mostly distinct ids): decoded, the ids are read
            # as plain strings, each once, not as dictionaries and codes
            chunks = [chunk.dictionary.take(chunk.indices) for chunk in chunks]
    if not pyarrow.types.is_dictionary(chunks[0].type):
        ids = _fixed_width(chunks)  # the chunks as one column, without joining them first
        return None if ids is None else (ids, None)
    parts = []
    for dictionary in dictionaries:
        padded = _fixed_width(dictionary)
        if padded is None:
            return None
        parts.append(padded)
    codes = []
    for chunk, start in zip(chunks, starts, strict=True):
        indices = chunk.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        codes.append(indices + start if start else indices)
    distinct = parts[0] if len(parts) == 1 else np.concatenate(parts)  # the widest width
    every = codes[0] if len(codes) == 1 else np.concatenate(codes)
    return distinct[every], (distinct, every)


def _identity(array: Any) -> tuple[int, ...]:
    """Where an array's values live in memory: chunks that share a dictionary give one key."""
    return (
        array.offset,
        len(array),
        *(0 if buffer is None else buffer.address for buffer in array.buffers()),
    )


def _runs(column: Any) -> list[tuple[Any, Any, int]] | None:
    """For each non-empty chunk of a (chunked) query column: the first id of each run of
    equal ids (an Arrow array, decoded from a dictionary chunk's codes), the rows where the
    runs start (codes compared in a dictionary chunk, not strings), and the chunk's rows;
    None unless the ids are text."""
    import numpy as np

    pyarrow = import_pyarrow()
    found = []
    for chunk in column.chunks:
        n = len(chunk)
        if not n:
            continue
        if pyarrow.types.is_dictionary(chunk.type):
            if not _is_text(chunk.type.value_type):  # integer ids: the careful path makes
                return None  # them strings, as it does a plain integer column
            codes = chunk.indices.to_numpy(zero_copy_only=False)
            starts = np.concatenate(([0], np.flatnonzero(codes[1:] != codes[:-1]) + 1))
            first_ids = chunk.dictionary.take(pyarrow.array(codes[starts]))
        elif _is_text(chunk.type):
            flags = pyarrow.compute.not_equal(chunk.slice(1), chunk.slice(0, n - 1))
            changed = np.flatnonzero(flags.to_numpy(zero_copy_only=False))
            starts = np.concatenate(([0], changed + 1))
            first_ids = chunk.take(pyarrow.array(starts))
        else:
            return None
        found.append((first_ids, starts, n))
    return found


def _query_runs(runs: list[tuple[Any, Any, int]]) -> tuple[list[str], Any]:
    """``(query ids, lengths)`` of the runs of equal ids of :func:`_runs`, a run spanning
    chunks counted once (empty: no row)."""
    import numpy as np

    names: list[str] = []
    lengths: list[Any] = []
    for first_ids, starts, n in runs:
        found = first_ids.to_pylist()
        sizes = np.diff(np.append(starts, n)).astype(np.int64)
        if names and names[-1] == found[0]:  # the run goes on from the chunk before
            lengths[-1][-1] += sizes[0]
            found, sizes = found[1:], sizes[1:]
        if found:
            names.extend(found)
            lengths.append(sizes)
    return names, np.concatenate(lengths) if lengths else np.zeros(0, dtype=np.int64)


def _fixed_width(column: Any) -> Any:
    """A string column (an Arrow array or a list of them, read as one) as a zero-padded ``S``
    array of the ids' UTF-8 bytes, or None (nulls, empty ids, an id holding a NUL, which
    the zero padding would hide, or too many ids longer than ``_packed.WIDEST`` to stand
    in, ``_packed.few_long``: such ids take the string path, which keeps them exactly).

    Without a Python string per row: one array whose ids have one width (UUIDs) is its data
    buffer itself; else Arrow pads every id with NUL bytes to whole 8-byte words, in C++,
    a piece at a time on threads, each piece copied into the result as it is done. Ids
    far wider than the others, and any past ``WIDEST``, are packed as stand-ins
    (``_packed.standin_cut``), byte by byte."""
    import numpy as np

    pyarrow = import_pyarrow()
    compute = pyarrow.compute
    arrays = [a for a in (column if isinstance(column, list) else [column]) if len(a)]
    if not arrays or any(a.null_count or not _is_text(a.type) for a in arrays):
        return None
    lengths = [compute.binary_length(a) for a in arrays]
    bounds = [compute.min_max(n).as_py() for n in lengths]
    shortest, width = min(b["min"] for b in bounds), max(b["max"] for b in bounds)
    rows = sum(len(a) for a in arrays)
    if shortest == 0:
        return None
    total = sum(_data_range(a)[1] - _data_range(a)[0] for a in arrays)
    outliers = outlier_width(total, rows)
    # every id's width, as one array, only where some may stand in
    may_stand_in = width > min(outliers, WIDEST)
    widths = np.concatenate([np.asarray(n) for n in lengths]) if may_stand_in else None

    def n_over(limit: int) -> int:
        assert widths is not None
        return int(np.count_nonzero(widths > limit))

    cut = standin_cut(rows, width, outliers, n_over)
    if cut is None:
        return None  # many ids past WIDEST: strings
    long = width > cut
    if long:  # as wide as the widest other id, and room for a stand-in
        assert widths is not None
        width = max(STANDIN_WIDTH, int(widths[widths <= cut].max(initial=0)))
    if len(arrays) == 1 and shortest == width and not long:
        (array,) = arrays  # ids of one width lie in the data buffer as a fixed-width array
        if _id_bytes(array) is None:
            return None
        first, _ = _data_range(array)
        return np.frombuffer(array.buffers()[2], dtype=f"S{width}", count=len(array), offset=first)
    pad = shortest < width
    if pad:
        width = -(-width // 8) * 8  # the hashes then read the ids in place, as a TREC file's
    # in Arrow's memory pool, as the padded ids were before they were done in pieces: memory
    # the pool keeps and gives again, not fresh pages from the system for every column
    fixed = np.frombuffer(pyarrow.allocate_buffer(rows * width), dtype=f"S{width}")
    pieces, at = [], 0
    for array in arrays:
        for start in range(0, len(array), _PAD_ROWS):
            piece = array.slice(start, _PAD_ROWS)
            pieces.append((piece, at))
            at += len(piece)

    def padded(given: tuple[Any, int]) -> bool:
        piece, at = given
        kind = _id_bytes(piece)
        if kind is None:
            return False
        standing = long and widths is not None and int(widths[at : at + len(piece)].max()) > cut
        if standing or (kind == "utf-8" and pad):  # Arrow pads by characters, not bytes
            words = _word_rows(piece, cut)
            if words is None:
                return False
            fixed[at : at + len(piece)] = words
            return True
        if pad:
            piece = compute.utf8_rpad(piece, width=width, padding="\x00")
        first, _ = _data_range(piece)
        fixed[at : at + len(piece)] = np.frombuffer(
            piece.buffers()[2], dtype=f"S{width}", count=len(piece), offset=first
        )
        return True

    return fixed if all(map_threaded(padded, pieces)) else None


_PAD_ROWS = 1 << 18  # ids padded a piece at a time: 2 MB of 8-byte ids


def _offsets(column: Any) -> Any:
    """Where each string of a (large_)string array starts in its data buffer, and where the
    last one ends (a view of the array's offsets)."""
    import numpy as np

    pyarrow = import_pyarrow()
    offset_type = np.dtype(np.int64 if pyarrow.types.is_large_string(column.type) else np.int32)
    _, offsets, _ = column.buffers()
    return np.frombuffer(
        offsets,
        dtype=offset_type,
        count=len(column) + 1,
        offset=offset_type.itemsize * column.offset,
    )


def _data_range(column: Any) -> tuple[int, int]:
    """Where the bytes of a (large_)string array start and end in its data buffer."""
    bounds = _offsets(column)
    return int(bounds[0]), int(bounds[-1])


def _id_bytes(column: Any) -> str | None:
    """``"ascii"`` when every byte of every string is ASCII other than NUL, ``"utf-8"`` when
    the others are UTF-8 (Arrow's strings should be; a reader may not have checked), else
    None: the ids the fixed-width path keeps exactly (a NUL would hide in the zero
    padding). Spaces, tabs and control characters are kept as they are: Wikipedia titles
    as doc ids (``Barack Obama``) read as fast as numbers."""
    import numpy as np

    first, last = _data_range(column)
    data = column.buffers()[2]
    if data is None:
        return "ascii"
    raw = np.frombuffer(data, dtype=np.uint8, count=last - first, offset=first)
    # a block at a time in two scratch buffers that stay in the cache: whole-column
    # temporaries would cost two fresh allocations of the ids' size (page faults included)
    step = max(1, min(len(raw), _CHECK_BYTES))
    shifted, outside = np.empty(step, dtype=np.uint8), np.empty(step, dtype=bool)
    beyond = False
    for start in range(0, len(raw), step):
        part = raw[start : start + step]
        n = len(part)
        np.subtract(part, np.uint8(1), out=shifted[:n])  # NUL wraps to 255: one comparison
        if np.greater_equal(shifted[:n], np.uint8(0x7F), out=outside[:n]).any():
            if int(part[outside[:n]].min()) == 0:  # a NUL
                return None
            beyond = True
    if not beyond:
        return "ascii"
    return "utf-8" if utf8(raw) else None


def _word_rows(column: Any, cut: int) -> Any:
    """The ids of a string array as rows of whole 8-byte words, zero-padded, viewed as an
    ``S`` array, those wider than ``cut`` as stand-ins (None when they cannot be): byte by
    byte, for ids beyond ASCII or standing in."""
    import numpy as np

    offsets = _offsets(column)
    first, last = int(offsets[0]), int(offsets[-1])
    bounds = offsets.astype(np.int64) - first
    buffer = np.zeros(last - first + WIDEST, dtype=np.uint8)
    buffer[: last - first] = np.frombuffer(column.buffers()[2], np.uint8, last - first, first)
    rows = rows_with_standins(buffer, bounds[:-1], np.diff(bounds), cut)
    return None if rows is None else rows.view(f"S{rows.shape[1]}").ravel()


_CHECK_BYTES = 1 << 17


def _is_text(kind: Any) -> bool:
    pyarrow = import_pyarrow()
    return bool(pyarrow.types.is_string(kind) or pyarrow.types.is_large_string(kind))
