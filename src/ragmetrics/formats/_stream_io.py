"""Read a run in batches of whole queries: from a TREC file, Parquet, or Arrow batches.

Readers yield *chunks*: rows in input order as runs of query ids (``queries``, ``lengths``),
doc ids (a fixed-width ``S`` array, or strings) and scores (None: the row order within a query
is the ranking). A chunk may end in the middle of a query. :func:`batches` joins chunks and cuts
them into :class:`Run` batches at query boundaries, so that each query is whole in exactly one
batch, and refuses input whose queries are not grouped: a query that comes back after another
one is named, never merged in silently (in a stream, its earlier rows are already scored).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, overload

import numpy as np

from ragmetrics.errors import InputFormatError, UngroupedInputError
from ragmetrics.formats._convert import id_column, not_utf8, score_column
from ragmetrics.formats._io import close_bytes, open_bytes, parse_value, reading
from ragmetrics.formats._packed import decode
from ragmetrics.formats._rules import checked_lines, records
from ragmetrics.formats._trec_fast import parsed_blocks

_RUN_LAYOUT = "query_id Q0 doc_id rank score tag"


class Chunk:
    """Rows of a run in input order (see the module docstring). ``heads``: the query ids
    as bytes too (an ``S`` array of whole 8-byte words, one a run), when the fast TREC
    reader made the chunk; its ``queries`` are then decoded from them when first asked for
    (``queries`` given as None): a stream that must regroup its rows groups them on the
    bytes, and never needs the strings of the chunks it spreads."""

    __slots__ = ("_queries", "docs", "heads", "lengths", "scattered", "scores")

    def __init__(
        self,
        queries: list[str] | None,
        lengths: np.ndarray,
        docs: np.ndarray | list[str],
        scores: np.ndarray | None,
        heads: np.ndarray | None = None,
        *,
        scattered: bool = False,
    ) -> None:
        if queries is None and heads is None:
            raise ValueError("a chunk needs its query ids, as strings or as bytes")
        self._queries = queries
        self.lengths = lengths
        self.docs = docs
        self.scores = scores
        self.heads = heads
        # its queries' rows lay apart in the input and were brought together: the input is
        # not grouped by query (a stream spreads it over temporary files at once)
        self.scattered = scattered

    @property
    def queries(self) -> list[str]:
        """The query id of each run of rows, as strings."""
        if self._queries is None:
            assert self.heads is not None
            self._queries = decode(self.heads)
        return self._queries

    @property
    def n_runs(self) -> int:
        """How many runs of rows of one query the chunk holds (0: none)."""
        return len(self.lengths)

    @property
    def n_rows(self) -> int:
        return int(self.lengths.sum())

    def split_last(self) -> tuple[Chunk, Chunk]:
        """All rows before the last query's, and the last query's."""
        cut = self.n_rows - int(self.lengths[-1])
        heads, queries = self.heads, self._queries
        head = Chunk(
            None if queries is None else queries[:-1],
            self.lengths[:-1],
            self.docs[:cut],
            cut_scores(self.scores, 0, cut),
            None if heads is None else heads[:-1],
        )
        tail = Chunk(
            None if queries is None else queries[-1:],
            self.lengths[-1:],
            self.docs[cut:],
            cut_scores(self.scores, cut),
            None if heads is None else heads[-1:],
        )
        return head, tail


def cut_scores(scores: np.ndarray | None, start: int, end: int | None = None) -> np.ndarray | None:
    return None if scores is None else scores[start:end]


def not_grouped(query_id: str, source: str) -> UngroupedInputError:
    """The error for a query that comes back after other queries."""
    return UngroupedInputError(
        f"{source}: the run is not grouped by query: query {query_id!r} comes back after "
        f"other queries. A stream is read in one pass, so each query's results must be "
        f"together: sort the file by query id first (for a TREC file, `sort -s -k1,1`), "
        f"or evaluate it in memory with evaluate()."
    )


# --- TREC files ----------------------------------------------------------------------------


def trec_chunks(
    path: str | os.PathLike[str],
    share: tuple[int, int] | None = None,
    first_line: int = 1,
    *,
    regroup: bool = False,
) -> Iterator[Chunk]:
    """A TREC run file (plain or gzip, or ``-`` for standard input) as chunks of about 2 MB:
    the vectorized reader on plain blocks, the careful line reader (which names the line of
    any error) on the others; both under the line rule of ``_rules``. ``share``: the bytes
    ``[start, end)`` of a plain file only (one worker's part), whose first line is
    ``first_line``. ``regroup``: a block whose queries are scattered comes with each query's
    lines together (the stream groups its batches across blocks itself)."""
    handle: Any = open_bytes(path)
    start = 0
    if share is not None:
        start = share[0]
        handle = _Share(handle, *share)
    try:
        yield from _handle_chunks(handle, path, first_line, start, regroup)
    finally:
        if share is None:
            close_bytes(handle)
        else:
            handle.close()


def _handle_chunks(
    handle: Any,
    path: str | os.PathLike[str],
    first_line: int = 1,
    offset: int = 0,
    regroup: bool = False,
) -> Iterator[Chunk]:
    """The chunks of an open handle of TREC bytes that start at line ``first_line``, byte
    ``offset`` of the file ``path`` (for the line numbers of errors)."""
    line = first_line
    with reading(path):
        blocks = parsed_blocks(handle, 6, 2, 4, False, offset=offset, regroup=regroup)
        for block, parsed in blocks:
            if parsed is not None:
                heads, lengths, docs, scores, scattered, newlines = parsed
                yield Chunk(None, lengths, docs, scores, heads, scattered=scattered)
                line += newlines
            else:
                text = block.tobytes()  # the buffer is read into again for the next block
                yield _careful_chunk(text, path, line)
                line += text.count(b"\n")


class _Share:
    """The bytes ``[start, end)`` of an open file, read as a file (``read``, ``readline``)."""

    def __init__(self, handle: Any, start: int, end: int) -> None:
        handle.seek(start)
        self.handle, self.left = handle, end - start
        self.name = getattr(handle, "name", "the input")

    def read(self, size: int = -1) -> bytes:
        size = self.left if size < 0 else min(size, self.left)
        data: bytes = self.handle.read(size)
        self.left -= len(data)
        return data

    def readline(self, limit: int = -1) -> bytes:
        limit = self.left if limit < 0 else min(limit, self.left)
        data: bytes = self.handle.readline(limit)
        self.left -= len(data)
        return data

    def readinto(self, buffer: memoryview) -> int:
        taken: int = self.handle.readinto(buffer[: self.left]) or 0
        self.left -= taken
        return taken

    def close(self) -> None:
        self.handle.close()


def trec_shares(path: str | os.PathLike[str], n: int) -> list[tuple[int, int]]:
    """``[start, end)`` byte ranges of a plain TREC file that cut it into about ``n`` equal
    parts at query boundaries (a query's lines are never split), for ``n`` workers. Each
    cut is moved forward to the first line whose query id differs from the one before."""
    size = os.path.getsize(path)
    cuts = [0]
    with open(path, "rb") as handle:
        for part in range(1, n):
            at = max(size * part // n, cuts[-1])
            if at >= size:
                break
            handle.seek(at)
            if at > 0:
                handle.readline()  # to the start of the next line
            first = query_of(handle.readline())
            while True:
                position = handle.tell()
                line = handle.readline()
                if not line:
                    position = size
                    break
                if query_of(line) != first:
                    break
            if cuts[-1] < position < size:
                cuts.append(position)
    cuts.append(size)
    return [(a, b) for a, b in pairwise(cuts) if b > a]


def query_of(line: bytes) -> bytes:
    fields = line.split(None, 1)
    return fields[0] if fields else b""


def _careful_chunk(block: bytes, path: str | os.PathLike[str], first_line: int) -> Chunk:
    """One block read line by line, as ``Run.from_trec`` reads a file that is not plain."""
    try:
        text = block.decode("utf-8")
    except UnicodeDecodeError as error:
        raise not_utf8(path, block, error.start, first_line) from None
    queries: list[str] = []
    lengths: list[int] = []
    docs: list[str] = []
    scores: list[float] = []
    rows = (row for first, lines, _ in checked_lines([text], path, first_line)
            for row in records(lines, first))  # fmt: skip
    for number, fields in rows:
        if len(fields) < 6:
            raise InputFormatError(
                f"{os.fspath(path)}, line {number}: expected at least 6 whitespace-separated "
                f"fields ({_RUN_LAYOUT}), found {len(fields)}: {' '.join(fields)[:200]!r}."
            )
        score = parse_value(fields[4], "float", 4, _RUN_LAYOUT, path, number)
        if queries and queries[-1] == fields[0]:
            lengths[-1] += 1
        else:
            queries.append(fields[0])
            lengths.append(1)
        docs.append(fields[2])
        scores.append(score)
    return Chunk(queries, np.asarray(lengths, dtype=np.int64), docs, np.asarray(scores))


# --- Parquet and Arrow ---------------------------------------------------------------------


@dataclass(frozen=True)
class Columns:
    """The column names of a run table: ``query_col`` (ours or ranx's), ``doc_col``, and
    ``score_col`` (None: the row order within a query is the ranking)."""

    query_col: str | None = None
    doc_col: str = "doc_id"
    score_col: str | None = None

    def resolve(self, names: list[str]) -> tuple[str, str, str | None]:
        from ragmetrics.formats import _columnar

        query = _columnar.needed_column(names, self.query_col, _columnar.QUERY_COLUMNS, "query id")
        doc = _columnar.needed_column(names, self.doc_col, (), "doc id")
        score = _columnar.find_column(names, self.score_col, _columnar.SCORE_COLUMNS)
        return query, doc, score


def parquet_chunks(
    path: str | os.PathLike[str], columns: Columns, batch_rows: int
) -> Iterator[Chunk]:
    """The rows of a Parquet file or folder, in file then row order, as chunks. A file of
    more than ``batch_rows`` rows is read batch by batch; consecutive files that together
    hold at most ``batch_rows`` rows, in one layout (Spark's part files), are read as one
    table, so that a query whose rows lie in several of them is grouped in one chunk."""
    from ragmetrics._util.optional import import_pyarrow

    pyarrow = import_pyarrow()

    from ragmetrics.formats._columnar import empty_rankings, naming, parquet_errors, parquet_files

    empty: dict[str, None] = {}  # queries written without a row, from every file, in order
    together: list[_RunFile] = []  # files not read yet, all of one layout
    rows = 0
    score: str | None = None
    for file in parquet_files(path):
        with parquet_errors(file):
            opened = _run_file(file, columns)
            empty.update(dict.fromkeys(empty_rankings(opened.schema)))
        score = opened.score
        size = opened.rows
        if together and (rows + size > batch_rows or opened.layout != together[0].layout):
            yield from _read_together(together)
            together, rows = [], 0
        if size <= batch_rows:
            together.append(opened)
            rows += size
            continue
        start = 0
        with parquet_errors(file):
            for joined in _joined(
                opened.reader.iter_batches(batch_size=batch_rows, columns=opened.wanted),
                batch_rows,
            ):
                with naming(file, start):
                    chunk = opened.chunk(pyarrow.Table.from_batches(joined))
                start += sum(batch.num_rows for batch in joined)
                yield chunk
        opened.close()
    if together:
        yield from _read_together(together)
    if empty:  # at the end: the files of a folder may each list them
        no_rows = np.zeros(len(empty), np.int64)
        yield Chunk(list(empty), no_rows, [], None if score is None else np.zeros(0))


def _joined(batches: Iterator[Any], batch_rows: int) -> Iterator[list[Any]]:
    """Record batches in lists of at most ``batch_rows`` rows (a batch alone may be that
    long), in order. A file whose id columns are read as dictionaries gives a batch for each
    row group at least (DuckDB's of 100,000 rows, pandas' of 50,000, Polars' of 20,000), and
    every chunk costs its own grouping and, in a stream that spreads its rows, its own pieces:
    DuckDB's shuffled file of 2 million rows came as 22 chunks, now 4."""
    held: list[Any] = []
    rows = 0
    for batch in batches:
        if held and rows + batch.num_rows > batch_rows:
            yield held
            held, rows = [], 0
        held.append(batch)
        rows += batch.num_rows
    if held:
        yield held


class _RunFile:
    """A Parquet run file: its query, doc and score columns, those of its id columns read
    dictionary-encoded, its Arrow schema and rows (from its footer). The file is opened
    (``reader``) only when read alone, and ``close`` lets it go: a folder of thousands of
    small part files read as one table never holds them all open."""

    def __init__(
        self,
        file: Any,
        columns: tuple[str, str, str | None],
        coded: list[str],
        schema: Any,
        rows: int,
    ) -> None:
        self.file, self.schema, self.coded, self.rows = file, schema, tuple(coded), rows
        self.query, self.doc, self.score = columns
        self._reader: Any = None

    @property
    def wanted(self) -> list[str]:
        return [self.query, self.doc] + ([self.score] if self.score else [])

    @property
    def layout(self) -> tuple[Any, ...]:
        """What files must share to be read as one table: columns, their types, encoding."""
        return (*((c, self.schema.field(c).type) for c in self.wanted), self.coded)

    @property
    def reader(self) -> Any:
        """The file opened for reading, without pre-buffering (which would keep every row
        group read until the file is closed)."""
        if self._reader is None:
            import pyarrow.parquet as parquet

            coded = list(self.coded) or None
            self._reader = parquet.ParquetFile(self.file, read_dictionary=coded, pre_buffer=False)
        return self._reader

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    @overload
    def chunk(self, table: Any) -> Chunk: ...
    @overload
    def chunk(self, table: Any, *, careful: bool) -> Chunk | None: ...
    def chunk(self, table: Any, *, careful: bool = True) -> Chunk | None:
        return arrow_chunk(table, self.query, self.doc, self.score, careful=careful)


def _run_file(file: Any, columns: Columns) -> _RunFile:
    """A Parquet run file, with its query, doc and score columns (the column types checked),
    from its footer (read once). Ids are read dictionary-encoded where the file stores them
    so (``stored_as_dictionary``): each distinct id is then decoded once."""
    import pyarrow.parquet as parquet

    from ragmetrics.formats._columnar import check_column_types, stored_as_dictionary

    footer = parquet.read_metadata(file)
    schema = footer.schema.to_arrow_schema()
    query, doc, score = columns.resolve(schema.names)
    check_column_types(schema, (query, doc), score, "scores", source=file)
    coded = stored_as_dictionary([footer], [query, doc])
    return _RunFile(file, (query, doc, score), coded, schema, footer.num_rows)


def _read_together(files: list[_RunFile]) -> Iterator[Chunk]:
    """Files of one layout read as one table (pyarrow reads them side by side) and given
    as one chunk; when the careful path is needed, each file is read alone, so that its
    messages name the file."""
    import pyarrow.parquet as parquet

    from ragmetrics.formats._columnar import naming, parquet_errors

    first = files[0]
    if len(files) > 1:
        with parquet_errors(os.path.dirname(first.file)):
            table = parquet.read_table(
                [f.file for f in files],
                columns=first.wanted,
                read_dictionary=list(first.coded) or None,
                memory_map=True,
            )
        chunk = first.chunk(table, careful=False)
        if chunk is not None:
            yield chunk
            return
    for opened in files:
        with parquet_errors(opened.file), naming(opened.file):
            chunk = opened.chunk(opened.reader.read(columns=opened.wanted))
        opened.close()
        yield chunk


def parquet_groups(path: str | os.PathLike[str]) -> list[tuple[str, int, int]]:
    """Every row group of a Parquet file or folder, in reading order: (file, group, rows)."""
    from ragmetrics._util.optional import import_pyarrow
    from ragmetrics.formats._columnar import parquet_errors, parquet_files

    import_pyarrow()
    import pyarrow.parquet as parquet

    groups = []
    for file in parquet_files(path):
        with parquet_errors(file):
            meta = parquet.ParquetFile(file).metadata
        groups += [(file, g, meta.row_group(g).num_rows) for g in range(meta.num_row_groups)]
    return groups


def parquet_share_chunks(
    path: str | os.PathLike[str], columns: Columns, batch_rows: int, start: int, end: int
) -> Iterator[Chunk]:
    """The row groups ``[start, end)`` of a Parquet file or folder (see
    :func:`parquet_groups`) as chunks, for one worker of several: the rows that the first
    query has at the start are left to the share before when that query began there, and
    the last query is read on into the following groups until it ends."""
    from ragmetrics._util.optional import import_pyarrow

    pyarrow = import_pyarrow()

    from ragmetrics.formats._columnar import (
        empty_rankings,
        parquet_errors,
    )

    groups = parquet_groups(path)
    readers: dict[str, _RunFile] = {}

    def reader(file: str) -> _RunFile:
        if file not in readers:
            for other in readers.values():  # one file open at a time (reopened if asked)
                other.close()
            with parquet_errors(file):
                readers[file] = _run_file(file, columns)
        return readers[file]

    def chunks(index: int) -> Iterator[Chunk]:
        file, group, _ = groups[index]
        opened = reader(file)
        with parquet_errors(file):
            for batch in opened.reader.iter_batches(
                batch_size=batch_rows, row_groups=[group], columns=opened.wanted
            ):
                yield opened.chunk(pyarrow.Table.from_batches([batch]))

    skip = None
    if start > 0:  # the query the share before ends with
        file, group, _ = groups[start - 1]
        opened = reader(file)
        with parquet_errors(file):
            column = opened.reader.read_row_group(group, columns=[opened.query]).column(0)
        if len(column):
            skip = str(column[len(column) - 1].as_py())
    last = None
    for index in range(start, end):
        for chunk in chunks(index):
            while skip is not None and chunk.queries and chunk.queries[0] == skip:
                chunk = _without_first_query(chunk)
            if chunk.queries:
                skip = None
                last = chunk.queries[-1]
                yield chunk
    for index in range(end, len(groups)):  # the last query may go on past the share
        for chunk in chunks(index):
            if not chunk.queries or last is None or chunk.queries[0] != last:
                break
            head = _first_query(chunk)
            yield head
            if len(chunk.queries) > 1:
                break
        else:
            continue
        break
    if end == len(groups):  # queries written without a row: at the end, once
        empty: dict[str, None] = {}
        score = None
        for file in dict.fromkeys(f for f, _, _ in groups):
            opened = reader(file)
            score = opened.score
            empty.update(dict.fromkeys(empty_rankings(opened.schema)))
        if empty:
            no_rows = np.zeros(len(empty), np.int64)
            yield Chunk(list(empty), no_rows, [], None if score is None else np.zeros(0))


def _first_query(chunk: Chunk) -> Chunk:
    n = int(chunk.lengths[0])
    return Chunk(
        chunk.queries[:1], chunk.lengths[:1], chunk.docs[:n], cut_scores(chunk.scores, 0, n)
    )


def _without_first_query(chunk: Chunk) -> Chunk:
    n = int(chunk.lengths[0])
    return Chunk(chunk.queries[1:], chunk.lengths[1:], chunk.docs[n:], cut_scores(chunk.scores, n))


def arrow_chunks(batches_: Iterable[Any], columns: Columns) -> Iterator[Chunk]:
    """Arrow tables or record batches, in order, as chunks."""
    from ragmetrics.formats import _columnar

    empty: dict[str, None] = {}  # queries written without a row (schema metadata)
    score = None
    start = 0  # the stream's row where the batch starts, for a bad row's message
    for item in batches_:
        table = _columnar.as_table(item)
        query, doc, score = columns.resolve(list(table.column_names))
        empty.update(dict.fromkeys(_columnar.empty_rankings(table.schema)))
        with _columnar.naming("The Arrow stream", start):
            chunk = arrow_chunk(table, query, doc, score)
        start += table.num_rows
        yield chunk
    if empty:
        no_rows = np.zeros(len(empty), np.int64)
        yield Chunk(list(empty), no_rows, [], None if score is None else np.zeros(0))


@overload
def arrow_chunk(table: Any, query: str, doc: str, score: str | None) -> Chunk: ...
@overload
def arrow_chunk(
    table: Any, query: str, doc: str, score: str | None, *, careful: bool
) -> Chunk | None: ...
def arrow_chunk(
    table: Any, query: str, doc: str, score: str | None, *, careful: bool = True
) -> Chunk | None:
    """One Arrow table as a chunk: straight from its buffers when it can, else through the
    checked constructor (which names a null, an empty id or a score that is not a number);
    without ``careful``, None instead of the checked constructor."""
    from ragmetrics.formats import _columnar
    from ragmetrics.formats._io import runs_of

    _columnar.check_column_types(table, (query, doc), score, "scores")
    if not table.num_rows:
        return Chunk([], np.zeros(0, np.int64), [], None)
    packed = _columnar.packed_columns(table, query, doc, score, strings=True)
    if packed is not None:  # doc ids as bytes, or as strings where they cannot be packed
        lengths = np.asarray(packed.lengths, dtype=np.int64)
        scores = None if score is None else packed.scores  # no scores: the rows' order ranks
        return Chunk(packed.queries, lengths, packed.ids, scores, scattered=packed.scattered)
    if not careful:
        return None
    frame = _columnar.decoded(table).to_pandas()
    ids = id_column(frame, query)  # each checked: a null, an empty id, a score not a number
    docs = id_column(frame, doc)
    scores = None if score is None else score_column(frame, score, ids, docs)
    query_ids, query_lengths = runs_of(ids)
    return Chunk(query_ids, np.asarray(query_lengths, dtype=np.int64), docs, scores)
