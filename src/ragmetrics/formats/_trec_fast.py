"""A vectorized reader for plain TREC files (the fast path of ``_io``).

Splitting a TREC run with ``str.split`` makes a Python string of every field: 60 million
objects for a run of 10 million lines, which is most of the time a line-by-line reader takes.
This reader finds the fields with numpy on the raw bytes instead, in blocks parsed side by
side in threads. Doc ids stay bytes (one fixed-width array, see ``_packed``), scores and
grades are parsed as numbers straight from the bytes, and the only Python strings made are
the query ids, one a query (its lines numbered by ``_query_codes`` on their bytes).

It reads "plain" blocks only: fields of printable characters (ASCII, or UTF-8 kept as its
bytes) separated by spaces or tabs, LF or CRLF line ends, exactly ``n_columns`` fields on
every line (a subset of what the line rule of ``_rules`` accepts; where every CR ends a line,
each is read with its line's last field, then cut off it); blank and comment lines are
dropped from a block of printable ASCII before it is parsed, as the careful reader skips
them. A block that is anything else returns None, and the caller reads the whole file with
the careful line-by-line reader, which names the file and line of any error. So both
readers accept the same files and give the same values.

What it earns (``benchmarks/bench_paths.py``, 500,000 lines): 60 ms against 414 ms for the
careful reader and 71 ms for ``pyarrow.csv`` into the Arrow path, so the core needs neither
the slow path nor pyarrow to read a run fast (docs/speed.md, "What each fast path earns").
"""

from __future__ import annotations

import io
import itertools
import os
from collections import deque
from collections.abc import Generator, Iterator
from typing import Any, BinaryIO, NamedTuple

import numpy as np

from ragmetrics._util.arrays import first_of_runs, gathered, runs_in_order, sorted_keys, spans
from ragmetrics._util.threads import Pending, Workers, threads
from ragmetrics.errors import InputFormatError
from ragmetrics.formats._decimal import (
    CHEAP_NEAREST,
    EXACT_MANTISSA,
    MAX_DECIMALS,
    MAX_DIGITS,
    TENS,
    nearest_doubles,
)
from ragmetrics.formats._io import close_bytes, open_bytes, reading
from ragmetrics.formats._packed import (
    LOW_BYTES,
    decode,
    hashes,
    printable_utf8,
    rows_with_standins,
    word_rows,
    word_view,
)
from ragmetrics.formats._query_codes import QueryCodes
from ragmetrics.formats._rules import MAX_LINE_BYTES, line_too_long, parse_float, parse_int

# The file is read in blocks of about 2 MB, cut at line ends: small enough that a block and
# the arrays made from it stay in the processor's cache (32 MB blocks took half as long again).
_BLOCK_BYTES = 1 << 21
_SCATTERED_GROWTH = 4  # a stream's blocks of scattered queries: this many times larger
# Threads parse the blocks of a file of at least this many blocks; a smaller file is parsed
# in the calling thread, where a short process (``ragmetrics trec_eval`` on one run) would
# spend more on the threads' fresh memory than they save.
_THREADED_FROM = 4
# a wider query id or number sends the file to the careful reader (a wider doc id stands
# in, see ``_packed``); query ids are compared as rows of this many bytes at most
# (a limit of 64 sent ids such as URLs, 8x slower, to that reader)
_MAX_FIELD_WIDTH = 256

# Bytes up to 32 separate fields. Of them, the line rule takes space, tab, LF and CR (before
# LF) as separators; the others (control bytes) send the block to the careful reader, which
# names the line, as does DEL or any non-ASCII byte.
_CONTROL = np.ones(33, dtype=bool)
_CONTROL[[9, 10, 13, 32]] = False
_POWERS = 10 ** np.arange(19, dtype=np.int64)
_EXACT_DIGITS = np.uint64(10**MAX_DIGITS)  # mantissas below it are exact int64s
_COLUMN_NUMBERS = np.arange(1, 257, dtype=np.uint16)  # a field's columns counted from 1
_BOM = b"\xef\xbb\xbf"  # UTF-8's byte-order mark

PackedColumns = tuple[list[str], np.ndarray, np.ndarray, np.ndarray]


def read_plain_trec_packed(
    path: str | os.PathLike[str],
    *,
    n_columns: int,
    doc_col: int,
    value_col: int,
    integer: bool,
    header: bool = False,
) -> PackedColumns | None:
    """Read a plain TREC file into its query ids, their lengths, doc ids and values.

    Returns ``(queries, lengths, doc_ids, values)``, each query once, in the order first
    seen, with its lines together in file order (a query whose lines lie apart, as in a file
    sorted by doc id, is grouped here, on bytes) and ``doc_ids`` one fixed-width ``S`` array
    (ASCII, zero-padded: no Python string per line); or None when the file is not plain
    (see the module docstring), or in the vanishingly rare case that two query ids share a
    64-bit hash (:class:`~ragmetrics.formats._query_codes.QueryCodes`): the careful reader
    then reads it. ``header``: the file's first line is a header, not read.
    """
    if os.fspath(path) == "-":
        return None  # standard input cannot be read twice: the careful reader takes it
    try:
        handle = open_bytes(path)
    except InputFormatError:
        return None  # the careful reader reports it
    file_bytes = _plain_size(handle)
    codes = QueryCodes()
    doc_ids, values = _Rows(), _Rows()
    try:
        with reading(path):  # the header too: its read errors named, its handle closed
            start = read = len(handle.readline(MAX_LINE_BYTES)) if header else 0
            blocks = parsed_blocks(handle, n_columns, doc_col, value_col, integer, offset=start)
            for block, parsed in blocks:
                if parsed is None or (len(parsed.docs) and not codes.add(*parsed[:2])):
                    blocks.close()  # not plain, or two query ids share a hash
                    return None
                read += block.size
                if not len(parsed.docs):
                    continue  # blank and comment lines alone
                # rows still to come if the rest of the file is like what was read
                seen = doc_ids.rows + len(parsed.docs)
                more = (file_bytes - read) * seen // read if file_bytes > read else 0
                doc_ids.append(parsed.docs, more)
                values.append(parsed.values, more)
    finally:
        close_bytes(handle)
    if not values.rows:
        return None  # an empty file: the careful reader says so
    return _grouped_by_codes(codes, doc_ids.joined(), values.joined())


def grouped_rows(
    heads: np.ndarray, lengths: np.ndarray, ids: np.ndarray, values: np.ndarray
) -> PackedColumns:
    """Runs of rows (``heads``: each run's query id, an ``S`` array; ``lengths``: its rows;
    ``ids`` and ``values``: every row's) as ``(queries, lengths, ids, values)``, each query
    once, in the order first seen, with its rows together in their order. Should two ids
    share a hash, the runs are given as they lie, and a query may come back
    (``formats._io.regroup_order`` groups those as strings)."""
    codes = QueryCodes()
    codes.add(heads, lengths)
    grouped = _grouped_by_codes(codes, ids, values)
    return (decode(heads), lengths, ids, values) if grouped is None else grouped


def _grouped_by_codes(
    codes: QueryCodes, ids: np.ndarray, values: np.ndarray
) -> PackedColumns | None:
    grouped = codes.grouped()
    if grouped is None:
        return None  # two query ids share a hash
    queries, counts, order = grouped
    if order is not None:
        ids, values = gathered(order, ids, values)
    return queries, counts, ids, values


def _plain_size(handle: BinaryIO) -> int:
    """The size of the file under ``handle`` when its bytes are read as they are stored (a
    plain file), else 0 (gzip, or a stream)."""
    if not isinstance(handle, io.BufferedReader):
        return 0
    try:
        return os.fstat(handle.fileno()).st_size
    except (OSError, ValueError):
        return 0


class _Rows:
    """A column appended to block by block, copied into one array made for the rows still
    expected (pages never written are never touched), so that the blocks' rows need not be
    held apart and then joined: that doubled the fresh memory a read takes. Rows that do not
    fit (more than expected, or doc ids wider than the array's) start another array; the
    arrays are joined at the end."""

    def __init__(self) -> None:
        self.done: list[np.ndarray] = []
        self.array: np.ndarray | None = None
        self.used = 0
        self.rows = 0

    def append(self, rows: np.ndarray, more: int) -> None:
        """Append ``rows``, ``more`` rows being expected after them."""
        array, used, n = self.array, self.used, len(rows)
        if array is None or used + n > len(array) or not _fits(rows.dtype, array.dtype):
            if array is not None:
                self.done.append(array[:used])
            try:
                array = np.empty(n + more + (more >> 4), dtype=rows.dtype)
            except MemoryError:  # the estimate is far off (longer lines later): these only
                array = np.empty(n, dtype=rows.dtype)
            self.array, used = array, 0
        array[used : used + n] = rows  # narrower ids are zero-padded, as by concatenate
        self.used = used + n
        self.rows += n

    def joined(self) -> np.ndarray:
        assert self.array is not None
        last = self.array[: self.used]
        return np.concatenate([*self.done, last]) if self.done else last


def _fits(rows: np.dtype[Any], array: np.dtype[Any]) -> bool:
    """True when values of ``rows`` are stored unchanged in an array of ``array``: the same
    type, or ids (``S``) no wider."""
    return rows == array or (rows.kind == array.kind == "S" and rows.itemsize <= array.itemsize)


def parsed_blocks(
    handle: BinaryIO,
    n_columns: int,
    doc_col: int,
    value_col: int,
    integer: bool,
    *,
    offset: int = 0,
    regroup: bool = False,
) -> Generator[tuple[Block, _Parsed | None], None, None]:
    """Each block of ``handle`` (cut at line ends) with its parse, None where the block is
    not plain; in a file of many blocks, a few blocks ahead are parsed side by side on
    threads (numpy lets go of the interpreter while it works). A leading byte-order mark is
    skipped at the start of the file only: ``offset`` is where ``handle`` starts in it (a
    share of the file, read by one worker of several), for the line number of an error.

    A block's buffer is read into again once the next block is asked for: a caller takes
    what it needs of a block before that (a parse never refers to its block's buffer).

    ``regroup``: a block whose query ids come back on many lines (a file sorted by doc id) comes
    back with each query's lines together, in their order (see :func:`_grouped`): one string
    per query, not one per run of lines. The readers group the blocks' queries across blocks
    afterwards (a stream through temporary files, ``data._batches.regrouped``); a worker's
    share of a file is read without it, so that a query met in two places is seen."""

    # once a block comes back scattered (``regroup``: a stream), the blocks after it are read
    # four times as large: each is grouped on its own, and its runs of each query's lines,
    # four times as long, are spread over the temporary file and numbered again four times
    # fewer (10 million rows sorted by doc id, streamed: 3.2-3.5 s -> 2.3-2.5 s, for about
    # 160 MB more held while it reads). A larger block for every file would slow the others
    # (the regular 20,000-query file read in memory: 0.14 s -> 0.16-0.20 s with 8 MB blocks)
    block_bytes = [_BLOCK_BYTES]

    def parse(block: Block) -> _Parsed | None:
        if not _skips_at_an_end(block):
            parsed = _read_block(block, n_columns, doc_col, value_col, integer, regroup)
            if parsed is not None:
                if parsed.scattered:
                    block_bytes[0] = _SCATTERED_GROWTH * _BLOCK_BYTES
                return parsed
        # blank or comment lines, which the careful reader skips: the block without them (a
        # file's header comment or blank last line, told at once, is not parsed twice)
        cleaned = _without_skipped_lines(block)
        if cleaned is None:
            return None
        if not cleaned.size:  # nothing but such lines
            none = np.zeros(0, dtype="S8")
            values = np.zeros(0, dtype=np.int64 if integer else np.float64)
            lengths = np.zeros(0, dtype=np.int64)
            return _Parsed(none, lengths, none, values, False, block.count_lines())
        parsed = _read_block(cleaned, n_columns, doc_col, value_col, integer, regroup)
        return None if parsed is None else _Parsed(*parsed[:5], block.count_lines())

    spare: list[np.ndarray] = []  # buffers of blocks done with, read into again
    head = handle.read(len(_BOM))
    if head == _BOM and offset == 0:  # the file's first bytes: the mark, not a line's
        source = _blocks(handle, spare, b"", len(_BOM), block_bytes)
    else:
        source = _blocks(handle, spare, head, offset, block_bytes)
    n_threads = threads()
    first = list(itertools.islice(source, _THREADED_FROM))
    if len(first) < _THREADED_FROM or n_threads == 1:  # a small file: parsed right here
        for block in itertools.chain(first, source):
            yield block, parse(block)
            spare.append(block.buffer)
        return
    with Workers(n_threads) as workers:
        pending: deque[tuple[Block, Pending[_Parsed | None]]] = deque()
        for block in itertools.chain(first, itertools.islice(source, n_threads)):
            pending.append((block, workers.submit(parse, block)))
        while pending:
            block, parsed = pending.popleft()
            ahead = next(source, None)  # read while the workers parse
            if ahead is not None:
                pending.append((ahead, workers.submit(parse, ahead)))
            yield block, parsed.result()
            spare.append(block.buffer)


class Block:
    """A block of a file's bytes, cut at a line end: its ``size`` bytes at the start of
    ``buffer``, then at least ``_MAX_FIELD_WIDTH`` zero bytes (so that a field's bytes can be
    copied as a fixed-width row wherever it ends)."""

    __slots__ = ("buffer", "size")

    def __init__(self, buffer: np.ndarray, size: int) -> None:
        self.buffer, self.size = buffer, size

    def count_lines(self) -> int:
        """The number of newlines in the block."""
        return int(np.count_nonzero(self.buffer[: self.size] == ord("\n")))

    def tobytes(self) -> bytes:
        data: bytes = self.buffer[: self.size].tobytes()
        return data


def _blocks(
    handle: BinaryIO,
    spare: list[np.ndarray],
    head: bytes = b"",
    start: int = 0,
    block_bytes: list[int] | None = None,
) -> Iterator[Block]:
    """The file in blocks of about ``_BLOCK_BYTES`` (``block_bytes[0]`` where given, looked
    at again before each block), each cut at a line end (``head``: bytes already read, the
    first block's start; ``start``: where the first block starts in the file). Each block is
    read into a buffer of ``spare`` (a new one when none is left or it is too small), with
    room for the rest of its last line and the zeros after it: no copy of a block is made. A
    line longer than the line rule allows is an error here, before it is read whole."""
    limit = MAX_LINE_BYTES + 3  # a whole line may still end in CR LF
    readinto = getattr(handle, "readinto", None)
    offset = start  # bytes of the file before this block (line numbers only on an error)
    while True:
        wanted = block_bytes[0] if block_bytes else _BLOCK_BYTES
        room = wanted + limit + _MAX_FIELD_WIDTH
        while spare and len(spare[-1]) < room:
            spare.pop()  # a buffer of the smaller blocks read before
        buffer = spare.pop() if spare else np.empty(room, dtype=np.uint8)
        view = buffer.data  # a memoryview of the buffer
        size = len(head)
        view[:size] = head
        head = b""
        if readinto is not None:
            size += readinto(view[size : size + wanted]) or 0
        else:
            data = handle.read(wanted)
            view[size : size + len(data)] = data
            size += len(data)
        if size == 0:
            return
        if buffer[size - 1] != ord("\n"):
            rest = handle.readline(limit)
            view[size : size + len(rest)] = rest
            size += len(rest)
            if len(rest) == limit and not rest.endswith(b"\n"):
                name = getattr(handle, "name", "the input")
                line_start = offset + bytes(view[:size]).rfind(b"\n") + 1
                raise line_too_long(name, line_number(name, line_start))
        buffer[size : size + _MAX_FIELD_WIDTH] = 0
        offset += size
        yield Block(buffer, size)


def line_number(name: object, offset: int) -> int:
    """The number of the line that starts at byte ``offset`` of the file ``name`` (of its
    decompressed bytes, for gzip), read again, in blocks: counting every block as it is read
    would slow every reading. 0 when the file cannot be opened again."""
    try:
        handle = open_bytes(name)  # type: ignore[arg-type]
    except (InputFormatError, TypeError):
        return 0
    lines, seen = 1, 0
    try:
        while seen < offset:
            block = handle.read(min(1 << 20, offset - seen))
            if not block:
                break
            lines += block.count(b"\n")
            seen += len(block)
    finally:
        close_bytes(handle)
    return lines


class _Parsed(NamedTuple):
    """A block's runs of lines."""

    heads: np.ndarray  # each run's query id (a fixed-width ``S`` array, see ``_packed``)
    lengths: np.ndarray  # each run's number of lines
    docs: np.ndarray  # the lines' doc ids
    values: np.ndarray  # the lines' scores or grades
    # read with ``regroup``, the block's queries came back on many lines (and their lines
    # were brought together): the file is not grouped by query
    scattered: bool
    newlines: int  # the block's line ends (its lines, blank and comment lines included)


def _read_block(
    block: Block,
    n_columns: int,
    doc_col: int,
    value_col: int,
    integer: bool,
    regroup: bool = False,
) -> _Parsed | None:
    # zeros past the end: a field's bytes can be copied as a fixed-width row
    padded = block.buffer[: block.size + _MAX_FIELD_WIDTH]
    data = padded[: block.size]
    if len(data) == 0:
        return None
    top = int(data.max())
    if top >= 127 and (bool((data == 127).any()) or not printable_utf8(data)):
        return None  # DEL, or text the line rule refuses: the careful reader names the line
    # whitespace, with a sentinel on each side: its flips are the field boundaries
    space = np.empty(len(data) + 2, dtype=bool)
    space[0] = space[-1] = True
    np.less_equal(data, 32, out=space[1:-1])
    # CR LF line ends (Windows): each CR is read as the last byte of its line's last field,
    # so that fields are still one separator apart, and cut off that field below
    crlf = len(data) > 1 and data[-1] == ord("\n") and data[-2] == ord("\r")
    if crlf:
        returns = np.flatnonzero(data == ord("\r"))
        crlf = bool((padded[returns + 1] == ord("\n")).all())  # a lone CR: looked at below
        if crlf:
            space[returns + 1] = False
    ends, starts = _fields(space)
    if len(ends) == 0 or len(ends) % n_columns:
        return None
    n_newlines = _spaces_and_newlines(padded, len(data), ends) if starts is None else None
    if n_newlines is None:  # tabs, CR LF, control bytes or runs of separators: all looked at
        n_newlines = int(np.count_nonzero(data == ord("\n")))
        if _has_control_bytes(padded, data, space[1:-1], n_newlines):
            return None
    line_starts = _starts(ends, starts, 0, n_columns)
    if not _one_line_per_record(padded, len(data), line_starts, ends, n_columns, n_newlines):
        return None
    if crlf:
        last = ends[n_columns - 1 :: n_columns]  # a view: ends changes with it
        last -= padded[last - 1] == ord("\r")
        if not bool((last > _starts(ends, starts, n_columns - 1, n_columns)).all()):
            return None  # a CR alone after a space: one field short, as the careful reader says
    if (data[line_starts] == ord("#")).any():
        return None  # a comment line
    if (
        len(data) > MAX_LINE_BYTES
        and int(np.diff(line_starts, append=len(data)).max()) > MAX_LINE_BYTES
    ):
        return None  # maybe a line longer than the rule allows: the careful reader says
    doc_starts = _starts(ends, starts, doc_col, n_columns)
    doc_ids = _packed(padded, doc_starts, ends[doc_col::n_columns])
    if doc_ids is None:
        return None
    value_starts = _starts(ends, starts, value_col, n_columns)
    values = _numbers(padded, value_starts, ends[value_col::n_columns], integer)
    if values is None:
        return None
    query_rows = _field_rows(padded, line_starts, ends[0::n_columns], _MAX_FIELD_WIDTH)
    if query_rows is None:
        return None
    first_lines, run_lengths = _query_runs(query_rows)
    scattered = regroup and _scattered(query_rows, first_lines)
    if scattered:
        grouped = _grouped(query_rows)
        if grouped is not None:
            order, first_lines, run_lengths = grouped
            doc_ids, values = doc_ids[order], values[order]
    heads = query_rows[first_lines]  # each run's query id, zero-padded words
    heads = heads.view(f"S{heads.shape[1]}").ravel()
    return _Parsed(heads, run_lengths, doc_ids, values, scattered, n_newlines)


def _skips_at_an_end(block: Block) -> bool:
    """True when the block starts with a comment or a blank line (a file's header) or ends
    with a blank line (after a file's last record), told from a few bytes."""
    data, size = block.buffer, block.size
    if not size:
        return False
    if data[0] in _SKIPPED_FIRST_BYTES:
        return True
    tail = data[max(0, size - 3) : size].tobytes()
    return tail.endswith((b"\n\n", b"\n\r\n"))


_SKIPPED_FIRST_BYTES = (ord("#"), ord("\n"), ord("\r"))
_FEW_SKIPPED = 64  # more dropped lines than this: every byte of the block looked at


def _without_skipped_lines(block: Block) -> Block | None:
    """The block without its blank lines (whitespace alone) and comment lines (a first field
    that starts with ``#``), which the careful reader skips, so that a file with a header
    comment or a blank last line is still read by blocks (a block that is not plain sends
    the whole file to the careful reader, three times slower). None when it has no such
    line, or a byte the line rule could refuse in the lines dropped (any but printable
    ASCII, tab and line ends; a CR not before LF), or a dropped line longer than the rule
    allows: the careful reader then reads the file, and names the line of an error.

    Lines are told by their first byte (``#``, or a line end: blank); a line that starts
    with a space or a tab, or many lines dropped, are told by :func:`_skipped_everywhere`,
    which reads every byte of the block."""
    data = block.buffer[: block.size]
    size = len(data)
    if not size:
        return None
    starts = np.flatnonzero(data == 10) + 1  # each line's first byte, the first line's aside
    starts = np.concatenate(([0], starts[:-1] if len(starts) and starts[-1] == size else starts))
    firsts = data[starts]
    if bool(((firsts == 32) | (firsts == 9)).any()):
        return _skipped_everywhere(block)
    blank_cr = firsts == 13
    if blank_cr.any() and not bool((block.buffer[starts[blank_cr] + 1] == 10).all()):
        return _skipped_everywhere(block)  # a CR that does not end its line
    drop = (firsts == ord("#")) | (firsts == 10) | blank_cr
    n_dropped = int(np.count_nonzero(drop))
    if not n_dropped:
        return None  # the block is not plain for another reason
    if n_dropped > _FEW_SKIPPED:
        return _skipped_everywhere(block)
    first = starts[drop]
    lengths = np.append(starts[1:], size)[drop] - first
    _, _, at = spans(first, lengths)  # the dropped lines' bytes
    if int(lengths.max()) > MAX_LINE_BYTES or _refused_bytes(block.buffer, at):
        return None
    pieces, kept_from = [], 0
    for start, length in zip(first.tolist(), lengths.tolist(), strict=True):
        pieces.append(data[kept_from:start])
        kept_from = start + length
    pieces.append(data[kept_from:])
    kept = sum(map(len, pieces))
    buffer = np.zeros(kept + _MAX_FIELD_WIDTH, dtype=np.uint8)
    np.concatenate(pieces, out=buffer[:kept])
    return Block(buffer, kept)


def _refused_bytes(buffer: np.ndarray, at: np.ndarray) -> bool:
    """True when a byte of ``buffer`` at ``at`` (the dropped lines') is one the line rule
    could refuse: any but printable ASCII, tab and line ends, or a CR not before LF."""
    taken = buffer[at]
    outside = ((taken < 32) & (taken != 9) & (taken != 10) & (taken != 13)) | (taken >= 127)
    returns = at[taken == 13]
    return bool(outside.any()) or not bool((buffer[returns + 1] == 10).all())


def _skipped_everywhere(block: Block) -> Block | None:
    """:func:`_without_skipped_lines`, every byte of the block looked at: a line's first
    byte that is not a space, a tab or a line end decides whether it is blank or a comment."""
    data = block.buffer[: block.size]
    size = len(data)
    starts = np.concatenate(([0], np.flatnonzero(data == 10) + 1))  # each line's first byte
    lengths = np.diff(starts, append=size)  # with its line end
    # each line's first byte that is not a space, a tab or a line end
    text = np.flatnonzero((data != 32) & (data != 9) & (data != 10) & (data != 13))
    at = np.searchsorted(text, starts)
    first = text[np.minimum(at, len(text) - 1)] if len(text) else np.full(len(starts), size)
    blank = (at == len(text)) | (first >= starts + lengths)
    drop = blank | (data[np.minimum(first, size - 1)] == ord("#"))
    drop[-1] &= lengths[-1] > 0  # past a final line end: no line
    if not drop.any():
        return None  # the block is not plain for another reason
    if int(lengths[drop].max()) > MAX_LINE_BYTES:
        return None
    # the dropped lines' bytes against the line rule (the kept lines' are the parse's)
    dropped = np.repeat(drop, lengths)
    if _refused_bytes(block.buffer, np.flatnonzero(dropped)):
        return None
    kept = data[~dropped]
    buffer = np.zeros(len(kept) + _MAX_FIELD_WIDTH, dtype=np.uint8)
    buffer[: len(kept)] = kept
    return Block(buffer, len(kept))


def _fields(space: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Where each field ends and starts (``[start, end)``), given ``space``: True at each
    separator byte, with a sentinel True on each side of the block.

    In the usual layout, one separator between fields and none before the first, every
    separator ends a field and the next field starts right after it: the separators alone
    are found (half the positions of the general case), and the starts are left as None (see
    ``_starts``). Otherwise each flip of ``space`` is a field's boundary."""
    inner = space[1:-1]
    if not inner[0] and not (inner[1:] & inner[:-1]).any():
        ends = np.flatnonzero(inner)
        if not inner[-1]:  # the last field runs to the block's end
            ends = np.append(ends, len(inner))
        return ends, None
    edges = np.flatnonzero(space[1:] != space[:-1])
    return edges[1::2], edges[0::2]


def _starts(ends: np.ndarray, starts: np.ndarray | None, column: int, n_columns: int) -> np.ndarray:
    """Where the fields of ``column`` start, given what ``_fields`` found: in the usual
    layout (``starts`` None), one byte past the previous field's end, the block's start for
    the first field. Only the columns read are worked out."""
    if starts is not None:
        return starts[column::n_columns]
    if column:
        return ends[column - 1 :: n_columns] + 1
    line_starts = np.empty(len(ends) // n_columns, dtype=ends.dtype)
    line_starts[0] = 0
    np.add(ends[n_columns - 1 : -1 : n_columns], 1, out=line_starts[1:])
    return line_starts


def _spaces_and_newlines(padded: np.ndarray, size: int, ends: np.ndarray) -> int | None:
    """The number of newlines of a block of the usual layout (see ``_fields``) whose
    separators are all spaces and newlines; None when some other byte separates fields.

    There, every separator is the byte at a field's end (past the block's last byte, that
    end reads the padding's zero): a tenth of the bytes to look at, which spares
    ``_has_control_bytes`` its passes over the whole block."""
    between = padded[ends]
    n_newlines = int(np.count_nonzero(between == ord("\n")))
    n_spaces = int(np.count_nonzero(between == ord(" ")))
    past_end = int(ends[-1]) == size  # the last field runs to the block's end
    return n_newlines if n_newlines + n_spaces + past_end == len(ends) else None


def _has_control_bytes(
    padded: np.ndarray, data: np.ndarray, space: np.ndarray, n_newlines: int
) -> bool:
    """True when a byte up to 32 is not a separator of the line rule (a control byte, or a
    CR that is not followed by LF)."""
    # the usual separators are spaces and newlines: when they are all, nothing else to see
    if int(np.count_nonzero(data == ord(" "))) + n_newlines == int(np.count_nonzero(space)):
        return False
    if bool(_CONTROL[data[space]].any()):
        return True
    returns = np.flatnonzero(data == ord("\r"))  # a CR must end a line (CR LF)
    following = padded[returns + 1]
    return not bool(((following == ord("\n")) | (returns + 1 == len(data))).all())


def _one_line_per_record(
    padded: np.ndarray,
    size: int,
    line_starts: np.ndarray,
    ends: np.ndarray,
    n_columns: int,
    n_newlines: int,
) -> bool:
    """True when every line holds exactly ``n_columns`` fields and no line is blank (given
    where each record's first field starts, and every field's end).

    Each newline must fall between the last field of a record and the first field of the
    next, one per record (the last record may end the block without one).
    """
    n_lines = len(line_starts)
    if n_newlines not in (n_lines, n_lines - 1):
        return False
    after_last_field = ends[n_columns - 1 :: n_columns]
    # the usual layout: a newline right after each record, but maybe the last (the zero
    # past the block's end marks it); then these are all the newlines there are
    if n_newlines == n_lines - (padded[size - 1] != ord("\n")):
        following = padded[after_last_field]
        if bool(((following == ord("\n")) | (following == 0)).all()):
            return True
    newlines = np.flatnonzero(padded[:size] == ord("\n"))
    if len(newlines) == n_lines - 1:
        newlines = np.concatenate((newlines, [size]))
    if len(newlines) != n_lines:
        return False
    next_record = np.append(line_starts[1:], size)
    return bool(((newlines >= after_last_field) & (newlines <= next_record)).all())


def _text(padded: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> str | None:
    """The fields ``[starts, ends)`` as one string, each followed by spaces (for ``split``);
    None when a field is too wide for the fast reader."""
    widths = ends - starts
    width = int(widths.max()) + 1  # room for at least one space after the widest field
    if width > _MAX_FIELD_WIDTH:
        return None
    rows = _rows(padded, starts, width)
    rows[np.arange(width)[None, :] >= widths[:, None]] = ord(" ")
    raw: bytes = rows.tobytes()
    try:
        return raw.decode("ascii")
    except UnicodeDecodeError:
        return None  # a number holds a character beyond ASCII: the careful reader names it


def _packed(padded: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray | None:
    """The fields ``[starts, ends)`` as a fixed-width ``S`` array, zero-padded to whole
    8-byte words, those far wider than the others (or past ``_packed.WIDEST``) as
    stand-ins; None when they are to be strings (``_packed.rows_with_standins``)."""
    rows = rows_with_standins(padded, starts, ends - starts)
    return None if rows is None else rows.view(f"S{rows.shape[1]}").ravel()


def _field_rows(
    padded: np.ndarray, starts: np.ndarray, ends: np.ndarray, limit: int
) -> np.ndarray | None:
    """The fields ``[starts, ends)`` as rows of whole 8-byte words (uint8, zero past each
    field's end); None when a field is wider than ``limit``."""
    widths = ends - starts
    if -(-int(widths.max()) // 8) * 8 > limit:
        return None
    return word_rows(padded, starts, widths)


def _rows(padded: np.ndarray, starts: np.ndarray, width: int) -> np.ndarray:
    """The ``width`` bytes from each start, one row per field (``padded`` has room past the
    end): every byte offset of the buffer seen as the start of a row, rows picked at once."""
    windows = np.lib.stride_tricks.as_strided(
        padded, shape=(len(padded) - width + 1, width), strides=(1, 1), writeable=False
    )
    rows: np.ndarray = windows[starts]
    return rows


# more runs of lines than this (and than 5% of a block's runs) whose query id an earlier run
# of the block had: the block's lines are grouped by query before their ids are read as
# strings, one per query, not one per run of lines
_SCATTERED_FROM = 256


def _scattered(rows: np.ndarray, first_lines: np.ndarray) -> bool:
    """True when more of a block's runs of lines (``first_lines``: where each starts;
    ``rows``: the lines' query ids) than ``_SCATTERED_FROM`` and than 5% of them have a
    query id an earlier run had. The first runs (four times that bound) are counted first:
    a run that comes back among them does in the whole block, so a block sorted by doc id,
    a run on every line, is known from a fifth of its runs."""
    bound = max(_SCATTERED_FROM, len(first_lines) // 20)
    if len(first_lines) <= bound:
        return False
    first = 4 * bound
    if len(first_lines) > first and _comebacks(rows[first_lines[:first]]) > bound:
        return True
    return _comebacks(rows[first_lines]) > bound


def _comebacks(heads: np.ndarray) -> int:
    """How many of a block's runs of lines (``heads``: each run's query id, zero-padded
    8-byte words) have an id an earlier run had. Counted on 64-bit hashes: two ids that share
    one count as a comeback, and the grouping that follows checks every byte. A file grouped
    by query has none, however short its runs (a run of depth 1 changes query on every
    line)."""
    keys = np.sort(_row_hashes(heads))
    return int(np.count_nonzero(keys[1:] == keys[:-1]))  # np.unique took 20 times as long


def _row_hashes(rows: np.ndarray) -> np.ndarray:
    """The 64-bit hash of each row's id (zero-padded 8-byte words, one row an id)."""
    rows = np.ascontiguousarray(rows)
    return hashes(rows.view(f"S{rows.shape[1]}").reshape(-1), rows.shape[1] // 8)


def _grouped(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """For query ids that come back (``rows``: zero-padded 8-byte words, one row a line of a
    block, or a run of lines of the whole file): the stable order that brings each query's
    rows together (queries in the order first seen), the row where each query first
    appears, and how many rows each has; None when two ids share a key (the rows then stay
    as they are).

    Each id's 64-bit hash is cut to the bits that share a word with a line number, and the
    lines put in the order of these keys by ``sorted_keys`` (for a block of 85,000 lines,
    1 ms against 3 ms for three 16-bit radix passes); every line is then checked against the
    first line of its key, so a shared key is seen, never trusted."""
    n = len(rows)
    line_bits = max(1, (n - 1).bit_length())
    keys, by_key = sorted_keys(_row_hashes(rows) >> np.uint64(line_bits), 64 - line_bits)
    starts = first_of_runs(keys)  # where each key's lines start
    if len(starts) == n:  # every key once: every id once, the lines as they are
        every = np.arange(n)
        return every, every, np.ones(n, dtype=np.int64)
    counts = np.diff(starts, append=n)
    first = by_key[starts]  # each key's first row (the sort is stable)
    words = np.ascontiguousarray(rows).view(np.uint64)  # compared a word at a time
    if not (words[by_key] == words[np.repeat(first, counts)]).all():
        return None  # two ids share a key (vanishingly rare): the lines stay as they are
    by_first = np.argsort(first)  # the keys in the order first seen
    # each key's lines, taken from where they lie in the key order, keys in first-seen order
    return by_key[runs_in_order(counts, by_first)], first[by_first], counts[by_first]


def _query_runs(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The lines where the query id (``rows``, one a line) changes, and how many lines each
    run of ids spans."""
    words = rows.view(np.uint64)
    changed = (words[1:] != words[:-1]).any(axis=1)
    first_lines = np.concatenate(([0], np.flatnonzero(changed) + 1))
    return first_lines, np.diff(np.append(first_lines, len(rows)))


def _numbers(
    padded: np.ndarray, starts: np.ndarray, ends: np.ndarray, integer: bool
) -> np.ndarray | None:
    """Parse the fields as numbers: exactly as ``int()`` / ``float()`` would.

    A field ``[+-]digits[.digits]`` (no dot for integers) of at most 18 digits is parsed
    vectorized: its digits make an exact int64 mantissa; up to 2**53, mantissa / 10^decimals
    is one correctly rounded division of two exact doubles, so it equals ``float()``; above,
    ``_decimal.nearest_doubles`` settles the nearest double exactly. A two-digit exponent
    (``e-05``) is read apart and the value made by ``_scaled``. Any other field (other
    exponents, inf, longer decimals, exact ties) goes through Python's ``float``/``int``.
    Returns None for a field that is not a number, or a NaN score, so the careful reader can
    name the line.
    A column of fixed-decimal numbers, the usual case, is read faster by ``_fixed_point``.
    """
    fixed = _fixed_point(padded, starts, ends, integer)
    return fixed if fixed is not None else _columnwise(padded, starts, ends, integer)


def _columnwise(
    padded: np.ndarray, starts: np.ndarray, ends: np.ndarray, integer: bool
) -> np.ndarray | None:
    """``_numbers`` for any layout, one character column at a time."""
    # scientific scores (``1.5e-05``): exponents of two digits, as ``%e`` and ``repr`` write
    # them, are read apart (any other stays in the field, which ``float()`` then reads)
    found = None if integer else _exponents(padded, starts, ends, probe=False)
    whole_ends = ends
    if found is not None:
        ends = ends - found[1]
    rows = _field_rows(padded, starts, ends, _MAX_FIELD_WIDTH)
    if rows is None:
        return None
    widths = ends - starts
    # one contiguous row per character column: each step below reads one of them
    columns = np.ascontiguousarray(rows[:, : int(widths.max())].T)
    first = columns[0]
    negative = first == ord("-")
    signed = negative | (first == ord("+"))
    n = len(starts)
    mantissa = np.zeros(n, dtype=np.int64)
    n_digits = np.zeros(n, dtype=np.int16)
    # Horner's scheme, one character column at a time over every field
    for column in columns:
        values_here = column - np.uint8(ord("0"))  # a digit's value; > 9 otherwise
        digit = values_here <= 9
        np.copyto(mantissa, mantissa * 10 + values_here, where=digit)
        n_digits += digit
    # each field's count of dots and the column of its last one (its only one, when the
    # field is a number): reductions down the columns, one pass each over bytes
    dots = (columns == ord(".")).view(np.uint8)
    n_dots = np.add.reduce(dots, axis=0, dtype=np.uint16)
    last_dot = np.maximum.reduce(dots * _COLUMN_NUMBERS[: len(columns), None], axis=0)
    decimals = np.where(n_dots > 0, widths - last_dot, 0)
    simple = (
        (n_digits + n_dots + signed == widths)
        & (n_digits >= 1)
        & (n_digits <= MAX_DIGITS)
        & (n_dots <= (0 if integer else 1))
    )
    if integer:
        values: np.ndarray = np.where(negative, -mantissa, mantissa)
    else:
        power = -decimals if found is None else found[0] - decimals
        values, unsettled = _scaled(mantissa, power, negative)
        simple[unsettled] = False
    if not _by_python(padded, starts, whole_ends, np.flatnonzero(~simple), values, integer):
        return None
    if not integer and np.isnan(values).any():
        return None
    return values


def _by_python(
    padded: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    which: np.ndarray,
    values: np.ndarray,
    integer: bool,
) -> bool:
    """Parse the fields ``which`` with Python's ``int``/``float`` into ``values``; False for
    a field that is not a number (the careful reader names its line)."""
    if not len(which):
        return True
    text = _text(padded, starts[which], ends[which])
    if text is None:
        return False
    convert = parse_int if integer else parse_float  # ASCII, no "_", int64
    try:
        values[which] = list(map(convert, text.split()))
    except (ValueError, OverflowError):
        return False
    return True


def _fixed_point(
    padded: np.ndarray, starts: np.ndarray, ends: np.ndarray, integer: bool
) -> np.ndarray | None:
    """``_numbers`` for the usual layouts: fields ``[+-]digits[.digits][e[+-]dd]`` whose
    digits before the exponent take at most 16 characters (24 for floats: ``_long_fields``);
    None for any other block.

    Each field is read as the 8 bytes (16 when a field is longer) that end where its digits
    end (before an exponent of two digits, ``e-05``, read apart). The dot is squeezed out
    (``_one_dot_byte`` where every field has as many decimals as the first, as ``%.6f``
    writes them; else ``_each_rows_dot``, as Python's ``repr`` writes floats), the bytes
    before the field (and its sign) become ``0`` digits, and each 8-byte word is parsed
    eight digits at a time with integer arithmetic within the word (SWAR): a few passes over
    one word per field instead of one pass per character. The mantissa is exact, and
    mantissa / 10^decimals is one correctly rounded division, as in ``_numbers`` (others:
    ``_scaled``).
    """
    widths = ends - starts
    longest = int(widths.max())
    if longest == 1:  # one character each: qrels' grades, 0 to 9
        digits = padded[starts] - np.uint8(ord("0"))
        if int(digits.max()) <= 9:  # a sign or any other lone character: read below
            read: np.ndarray = digits.astype(np.int64 if integer else np.float64)
            return read
    # scores written by ``%e`` or ``repr`` (``4.859200e-06``): exponents of two digits are
    # read here, the digits before them as a decimal, below
    found = None if integer else _exponents(padded, starts, ends)
    whole_ends = ends
    exponents = None
    if found is not None:
        exponents, tails = found
        ends = ends - tails
        widths = ends - starts
        longest = int(widths.max())
    if longest > 16:  # 17 to 24 characters: as ``repr`` writes a float of 17 digits
        too_long = integer or longest > 24
        return None if too_long else _long_fields(padded, starts, ends, whole_ends, exponents)
    long = longest > 8
    # a field that ends within 8 (16) bytes of the block's start has no full row before it:
    # the first line or two, read column by column
    early = int(np.searchsorted(ends, 16 if long else 8))
    head = _columnwise(padded, starts[:early], whole_ends[:early], integer) if early else None
    if early and (head is None or early == len(ends)):
        return head
    starts, ends, widths = starts[early:], ends[early:], widths[early:]
    words_at = word_view(padded)
    # bytes 8-15 of each row, and 0-7 when a field is longer than 8 (else all "0" digits)
    low = words_at[ends - 8]
    high = words_at[ends - 16] if long else None
    pad = 16 - widths  # the bytes of the row before the field
    squeezed = _one_dot_byte(padded, starts, widths, low, high, integer)
    if squeezed is None and not integer:
        squeezed = _each_rows_dot(low, high, pad)
    if squeezed is None:
        return None
    low, high, has_dot, decimals = squeezed
    first = padded[starts]
    signed = (first == ord("-")) | (first == ord("+"))
    # everything before the digits (other fields, spaces, the sign, the squeezed dot's
    # place) reads as 0 digits
    fill = pad + has_dot + signed
    low = (low & np.take(_KEEP_LOW, fill)) | np.take(_ZEROS_LOW, fill)
    if not _all_digits(low):
        return None
    mantissa = _eight_digits(low)
    if high is not None:
        high = (high & np.take(_KEEP_HIGH, fill)) | np.take(_ZEROS_HIGH, fill)
        if not _all_digits(high):
            return None
        mantissa += _eight_digits(high) * np.uint64(10**8)
    n_digits = widths - signed - has_dot
    if int(n_digits.min()) < 1:
        return None  # a sign or a dot alone
    if integer:
        magnitudes: np.ndarray = mantissa.astype(np.int64)
        np.negative(magnitudes, out=magnitudes, where=first == ord("-"))
    elif exponents is None and int(n_digits.max()) <= 15:
        # 15 digits are an exact double: one correctly rounded division
        tens = TENS[decimals] if isinstance(decimals, int) else np.take(TENS, decimals)
        magnitudes = mantissa / tens
        np.negative(magnitudes, out=magnitudes, where=first == ord("-"))
    else:
        power = -decimals if exponents is None else exponents[early:] - decimals
        magnitudes, others = _scaled(mantissa, power, first == ord("-"))
        if not _by_python(padded, starts, whole_ends[early:], others, magnitudes, integer):
            return None
    return magnitudes if head is None else np.concatenate((head, magnitudes))


def _long_fields(
    padded: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    whole_ends: np.ndarray,
    exponents: np.ndarray | None,
) -> np.ndarray | None:
    """``_fixed_point`` for float fields whose digits before an exponent take 17 to 24
    characters (``0.16191238247649528``, ``7.070330000000001e-06``); None for a block with
    a field that is not ``[+-]digits[.digits]`` there.

    Each field is read as the three words that end where its digits end, the bytes before it
    (and its sign) made ``0`` digits. A dot reads as a ``0`` digit too (found exactly: one
    zero byte of the word XOR ``.``), so the three words make one number in which the digits
    before the dot stand one place too high: taking them down one place (a division by the
    power of ten the decimals give) leaves the mantissa. A field of more than 18 digits past
    its leading zeros, or of two dots, goes to ``float()``."""
    early = int(np.searchsorted(ends, 24))  # no three words before it: column by column
    head = _columnwise(padded, starts[:early], whole_ends[:early], False) if early else None
    if early and (head is None or early == len(ends)):
        return head
    starts, ends, whole_ends = starts[early:], ends[early:], whole_ends[early:]
    widths = ends - starts
    # the 24 bytes ending at each field's end, copied as one item each, one row per word
    windows = np.ndarray((len(padded) - 23,), dtype="V24", buffer=padded, strides=(1,))
    words = np.ascontiguousarray(windows[ends - 24].view("<u8").reshape(-1, 3).T)
    first = padded[starts]
    negative = first == ord("-")
    signed = negative | (first == ord("+"))
    fill = 24 - widths + signed
    n_dots = np.zeros(len(starts), dtype=np.uint64)
    after = np.zeros(len(starts), dtype=np.uint64)  # the digits after a lone dot, plus one
    parts = []
    for k, word in enumerate(words):
        word = (word & np.take(_KEEP_THREE[k], fill)) | np.take(_ZEROS_THREE[k], fill)
        dots = _dot_bytes(word)
        n_dots += (dots * _ONE_EACH) >> np.uint64(56)
        after += (dots * _DIGITS_AFTER[k]) >> np.uint64(56)
        word ^= dots * np.uint64(ord(".") ^ ord("0"))  # the dot as a 0 digit
        if not _all_digits(word):
            return None
        parts.append(_eight_digits(word))
    top, middle, low = parts
    fits = (top < 1000) & (n_dots <= 1)  # no more than 19 digits: exact in 64 bits
    whole = np.minimum(top, np.uint64(999)) * np.uint64(10**16) + middle * np.uint64(10**8) + low
    has_dot = n_dots == 1
    decimals = np.where(has_dot, after.astype(np.intp) - 1, 0)
    # the digits before the dot (whole // 10^(decimals + 1)) are worth 10x too much (past
    # 18 decimals there are none: a number that fits is below 10**19)
    tens = _WHOLE_TENS[np.minimum(decimals, 18)]
    mantissa = whole - (whole // (tens * np.uint64(10))) * (tens * np.uint64(9))
    np.copyto(mantissa, whole, where=~has_dot)
    fits &= mantissa < _EXACT_DIGITS
    if int((widths - signed - has_dot).min()) < 1:
        return None  # a sign or a dot alone
    power = -decimals if exponents is None else exponents[early:] - decimals
    values, others = _scaled(np.where(fits, mantissa, 0).astype(np.int64), power, negative)
    others = np.union1d(others, np.flatnonzero(~fits)) if not fits.all() else others
    if not _by_python(padded, starts, whole_ends, others, values, False):
        return None
    return values if head is None else np.concatenate((head, values))


def _dot_bytes(words: np.ndarray) -> np.ndarray:
    """1 at the byte of each word that is ``.``, 0 elsewhere: exactly, for every byte (the
    high bit of a zero byte of ``x = words ^ "."`` is set where neither ``x``'s low seven
    bits plus 0x7f nor ``x`` itself reach it)."""
    x = words ^ np.uint64(0x2E2E_2E2E_2E2E_2E2E)
    low7 = np.uint64(0x7F7F_7F7F_7F7F_7F7F)
    zero: np.ndarray = ~(((x & low7) + low7) | x) & np.uint64(0x8080_8080_8080_8080)
    return zero >> np.uint64(7)


def _scaled(
    mantissa: np.ndarray, power: np.ndarray | int, negative: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``mantissa * 10**power`` for each field as ``float()`` reads it, and the fields left
    to ``float()``: a mantissa that fits in 53 bits is an exact double, and while the power
    is within 22 the value is one correctly rounded product or quotient of two exact
    doubles (Clinger's fast path); a longer one (``repr`` writes 17 digits) with a power of
    10**-27 to 1 is settled by ``_decimal.nearest_doubles``, as is every mantissa of a
    column of long ones whose powers all lie there (where that is one extended division)."""
    power = np.broadcast_to(power, mantissa.shape)
    short = mantissa <= EXACT_MANTISSA
    if (
        CHEAP_NEAREST
        and not short.all()
        and int(power.min()) >= -MAX_DECIMALS
        and int(power.max()) <= 0
    ):
        magnitudes, settled = nearest_doubles(mantissa, -power)
        np.negative(magnitudes, out=magnitudes, where=negative)
        return magnitudes, np.flatnonzero(~settled)
    fits = short & (np.abs(power) <= 22)
    tens = np.take(TENS, np.where(fits, np.abs(power), 0))  # fits: exact, to 10**22
    magnitudes = np.where(power >= 0, mantissa * tens, mantissa / tens)
    done = fits
    long = np.flatnonzero(~short & (power >= -MAX_DECIMALS) & (power <= 0))
    if len(long):
        nearest, settled = nearest_doubles(mantissa[long].astype(np.int64), -power[long])
        magnitudes[long] = nearest
        done[long] = settled
    np.negative(magnitudes, out=magnitudes, where=negative)
    return magnitudes, np.flatnonzero(~done)


def _exponents(
    padded: np.ndarray, starts: np.ndarray, ends: np.ndarray, *, probe: bool = True
) -> tuple[np.ndarray, np.ndarray] | None:
    """Each field's exponent and the width it takes (4: a mark, a sign and two digits, as
    ``%e`` and ``repr`` write them; else 0, and the field's exponent is 0); None for a block
    without any. Any other exponent is left in the digits, where it fails as a digit.

    With ``probe``, only a block whose first, middle or last field has an exponent is
    searched through: in any other, a field with one fails as a digit and the block is read
    column by column. (Looking at every field cost the usual block, without exponents, 5% of
    its reading.)"""
    if probe:
        probes = ends[[0, len(ends) // 2, -1]] - 4
        if not ((padded[probes] | np.uint8(0x20)) == ord("e")).any():
            return None
    marks = (padded[ends - 4] | np.uint8(0x20)) == ord("e")
    if not probe and not marks.any():
        return None
    signs = padded[ends - 3]
    tens = padded[ends - 2] - np.uint8(ord("0"))
    ones = padded[ends - 1] - np.uint8(ord("0"))
    tails = (
        marks
        & ((signs == ord("-")) | (signs == ord("+")))
        & (tens <= 9)
        & (ones <= 9)
        & (ends - 4 > starts)
    )
    exponent = np.where(tails, tens.astype(np.int64) * 10 + ones, 0)
    return np.where(signs == ord("-"), -exponent, exponent), np.where(tails, 4, 0)


_Squeezed = tuple[np.ndarray, "np.ndarray | None", "bool | np.ndarray", "int | np.ndarray"]


def _one_dot_byte(
    padded: np.ndarray,
    starts: np.ndarray,
    widths: np.ndarray,
    low: np.ndarray,
    high: np.ndarray | None,
    integer: bool,
) -> _Squeezed | None:
    """The words with the dot squeezed out where every field has as many decimals as the
    first (so its dot is at one byte of every row), with whether there is a dot and the
    number of decimals; None for any other block (or a float column without a dot first)."""
    first_dot = bytes(padded[starts[0] : starts[0] + widths[0]]).find(b".")
    if first_dot < 0:
        return None if not integer else (low, high, False, 0)
    decimals = int(widths[0]) - 1 - first_dot
    if integer or int(widths.min()) <= decimals:
        return None  # a field that does not reach back to the dot's byte
    dot = 15 - decimals  # the dot's byte in every row; the bytes before it move up one
    word, at = (low, dot - 8) if dot >= 8 else (high, dot)
    if word is None or not bool((word.view(np.uint8)[at::8] == ord(".")).all()):
        return None
    if high is None:  # then the dot is in the low word
        low = _squeeze(low, at)
    elif dot < 8:
        high = _squeeze(high, at)
    else:
        low = _squeeze(low, at) | (high >> np.uint64(56))
        high = high << np.uint64(8)
    return low, high, True, decimals


def _each_rows_dot(low: np.ndarray, high: np.ndarray | None, pad: np.ndarray) -> _Squeezed:
    """The words with each row's first dot squeezed out, wherever it is: whether each row
    had one, and its decimals (a second dot is left, to fail as a digit)."""
    # the bytes before the field may hold another field's dot: "0" digits first
    low = (low & np.take(_KEEP_LOW, pad)) | np.take(_ZEROS_LOW, pad)
    dot_low = _first_dot(low)  # the dot's byte in the word, 8 where there is none
    has_dot = dot_low < 8
    decimals = np.where(has_dot, 7 - dot_low, 0)
    if high is None:
        return _squeeze(low, dot_low), None, has_dot, decimals
    high = (high & np.take(_KEEP_HIGH, pad)) | np.take(_ZEROS_HIGH, pad)
    dot_high = _first_dot(high)
    in_high = (dot_high < 8) & ~has_dot
    # a dot in the low word: the high word's last byte moves down into it
    carried = np.where(has_dot, high >> np.uint64(56), np.uint64(0))
    low = _squeeze(low, dot_low) | carried
    high = np.where(has_dot, high << np.uint64(8), _squeeze(high, dot_high))
    return low, high, has_dot | in_high, np.where(in_high, 15 - dot_high, decimals)


# Byte k of a word is character k of its 8 (little-endian). _HIGH_BYTES[n] keeps bytes n-7.
# For a row of 16 bytes whose first ``fill`` are not digits of the field: which bytes of each
# word to keep, and the "0" characters that replace the others.
_HIGH_BYTES = ~LOW_BYTES
_ZEROS = np.uint64(0x3030_3030_3030_3030)  # eight "0" characters
_KEEP_HIGH = _HIGH_BYTES[np.minimum(np.arange(18), 8)]
_KEEP_LOW = _HIGH_BYTES[np.clip(np.arange(18) - 8, 0, 8)]
_ZEROS_HIGH, _ZEROS_LOW = _ZEROS & ~_KEEP_HIGH, _ZEROS & ~_KEEP_LOW
# for a row of 24 bytes whose first ``fill`` (0..26) are not digits: each word's bytes kept,
# and its "0" characters
_KEEP_THREE = np.stack([_HIGH_BYTES[np.clip(np.arange(27) - 8 * k, 0, 8)] for k in range(3)])
_ZEROS_THREE = _ZEROS & ~_KEEP_THREE
# words of 0/1 bytes times these, the top byte of the product is the sum over the bytes of
# the byte times: one (a count), and the bytes after it in the row of 24, plus one
_ONE_EACH = np.uint64(0x0101_0101_0101_0101)
_DIGITS_AFTER = [np.uint64(0x1817_1615_1413_1211), np.uint64(0x100F_0E0D_0C0B_0A09),
                 np.uint64(0x0807_0605_0403_0201)]  # fmt: skip
_WHOLE_TENS = np.array([10**k for k in range(19)], dtype=np.uint64)
# what _squeeze keeps of a word for a dot at byte 0-7, or 8 (no dot: all of it)
_SQUEEZE_KEEP = np.append(_HIGH_BYTES[1:9], _HIGH_BYTES[0])


def _squeeze(words: np.ndarray, at: int | np.ndarray) -> np.ndarray:
    """Drop byte ``at`` of each word (one for all, or one per word; 8: none): the bytes below
    it move up one, byte 0 becomes 0."""
    keep = np.take(_SQUEEZE_KEEP, at)
    moved: np.ndarray = (words & keep) | ((words << np.uint64(8)) & ~keep)
    return moved


def _first_dot(words: np.ndarray) -> np.ndarray:
    """The first byte of each word that is ``.``, or 8 where none is.

    XOR with ``.`` makes the dots zero bytes; ``(x - 0x01..) & ~x & 0x80..`` sets the high
    bit of the lowest zero byte exactly (a borrow only marks bytes above it). Isolated, that
    bit is ``1 << (8k + 7)``; a multiply moves ``k`` to the top byte."""
    x = words ^ np.uint64(0x2E2E_2E2E_2E2E_2E2E)
    zero = (x - np.uint64(0x0101_0101_0101_0101)) & ~x & np.uint64(0x8080_8080_8080_8080)
    lowest = zero & (~zero + np.uint64(1))
    at = ((lowest >> np.uint64(7)) * np.uint64(0x0001_0203_0405_0607)) >> np.uint64(56)
    return np.where(zero == 0, 8, at.astype(np.intp))


def _all_digits(words: np.ndarray) -> bool:
    """True when every byte of every word is an ASCII digit (bytes below 128 given).

    Adding 0x46 to a byte carries into its high bit exactly when it is above ``9``; taking
    0x30 sets the high bit of the lowest byte below ``0`` (a borrow only reaches higher
    bytes, and the lowest such byte is all it takes to fail)."""
    high_bits = np.uint64(0x8080_8080_8080_8080)
    above = words + np.uint64(0x4646_4646_4646_4646)
    below = words - np.uint64(0x3030_3030_3030_3030)
    return not bool(((above | below) & high_bits).any())


def _eight_digits(words: np.ndarray) -> np.ndarray:
    """The eight ASCII digits of each word as a number (the first character is byte 0):
    neighbouring digits, then pairs, then quadruples are combined by one multiply each."""
    pairs = ((words & np.uint64(0x0F0F_0F0F_0F0F_0F0F)) * np.uint64(10 * 256 + 1)) >> np.uint64(8)
    quads = ((pairs & np.uint64(0x00FF_00FF_00FF_00FF)) * np.uint64(100 * 65536 + 1)) >> np.uint64(
        16
    )
    eights: np.ndarray = (
        (quads & np.uint64(0x0000_FFFF_0000_FFFF)) * np.uint64(10000 * 2**32 + 1)
    ) >> np.uint64(32)
    return eights
