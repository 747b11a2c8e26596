"""Batches of a streamed run: the chunks a reader cuts (``formats._stream_io``) joined into
:class:`Run` objects of whole queries, each query in exactly one batch; and, for a run whose
queries are scattered, batches made by spreading its rows over temporary files by query."""

from __future__ import annotations

import io
import os
import pickle
import struct
import tempfile
from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain

import numpy as np

from ragmetrics._util.arrays import runs_in_order, stable_order
from ragmetrics._util.warn import warn
from ragmetrics.data._run import Run
from ragmetrics.errors import (
    InputFormatError,
    RagMetricsError,
    RegroupedStreamWarning,
    UngroupedInputError,
)
from ragmetrics.formats import _packed
from ragmetrics.formats._io import group_contiguous, regroup_order
from ragmetrics.formats._stream_io import Chunk, not_grouped
from ragmetrics.formats._trec_fast import grouped_rows


def batches(
    chunks: Iterable[Chunk],
    batch_rows: int,
    source: str,
    name: str | None,
    *,
    input_bytes: int | None = None,
    share: bool = False,
) -> Iterator[Run]:
    """Runs of whole queries, each of at least ``batch_rows`` rows (but the last), in input
    order; a query longer than ``batch_rows`` makes a batch of its own.

    A query that comes back after another is met at once (not when its batch is complete).
    Before the first batch is made, that turns the reading into :func:`regrouped`, which
    goes on from the chunks read so far (nothing is read twice); after it, the query is
    refused (``UngroupedInputError``: its earlier rows are scored already). A chunk whose
    reader had to bring its queries' rows together (a Parquet batch or a TREC block of a
    file sorted by doc id) and that would complete the first batch turns the reading into
    :func:`regrouped` too: such a file's queries would come back in the next chunk, after
    that batch was scored, and the whole input would be read again. With ``share`` (the
    chunks are one worker's share of a file, whose other shares likely hold the same
    queries) such a chunk is refused at once instead, so that the caller reads the file in
    one process without this worker spreading its share first. ``input_bytes``: the
    input's size, if known, for :func:`regrouped`."""
    pending: list[Chunk] = []
    rows = 0
    in_batch: set[str] = set()  # the queries of the pending chunks
    made = False
    rest = iter(chunks)
    for chunk in rest:
        if not chunk.n_runs:
            continue
        # a chunk grouped by its reader that would complete the first batch: its queries
        # are sure to come back once that batch is scored
        scattered = chunk.scattered and not made and rows + chunk.n_rows >= batch_rows
        if scattered and share:
            raise UngroupedInputError(
                f"{source}: the run is not grouped by query: the rows of some queries of one "
                f"batch lie apart, so other parts of the input may hold them too."
            )
        if not scattered:
            try:
                _check_new_queries(chunk, pending, in_batch, source)
            except UngroupedInputError:
                if made:
                    raise
                scattered = True
        if scattered:
            held = [*pending, chunk]
            pending = []
            chunks_left = chain(_taken(held), rest)
            yield from regrouped(chunks_left, batch_rows, source, name, input_bytes)
            return
        pending.append(chunk)
        rows += chunk.n_rows
        if rows >= batch_rows:
            cut = _cut_before_last_query(pending)
            if cut is not None:
                head, tail = cut
                yield _run_of(head, source, name)
                made = True
                pending, rows = tail, sum(c.n_rows for c in tail)
                in_batch = {query for c in tail for query in c.queries}
    if pending:
        yield _run_of(pending, source, name)


def input_size(path: str | os.PathLike[str]) -> int | None:
    """The size of the input at ``path`` (a folder: its files'), a gzip file's counted five
    times over (about what it holds); None for standard input or a path that cannot be
    read."""
    path = os.fspath(path)
    try:
        if path == "-":
            return None
        if os.path.isdir(path):
            return sum(
                os.path.getsize(os.path.join(folder, file))
                for folder, _, files in os.walk(path)
                for file in files
            )
        size = os.path.getsize(path)
    except OSError:
        return None  # the reader names the file that is not there
    return size * 5 if path.endswith(".gz") else size


def _check_new_queries(chunk: Chunk, pending: list[Chunk], in_batch: set[str], source: str) -> None:
    """Refuse ``chunk`` when a query of it came before (in it, or in the pending chunks),
    but the first when it goes on the last pending chunk's last query; add its queries."""
    queries = chunk.queries
    if pending and pending[-1].queries[-1] == queries[0]:
        queries = queries[1:]
    new = set(queries)
    if len(new) != len(queries) or not in_batch.isdisjoint(new):
        seen = set(in_batch)
        for query in queries:
            if query in seen:
                raise not_grouped(query, source)
            seen.add(query)
    in_batch |= new


def _cut_before_last_query(pending: list[Chunk]) -> tuple[list[Chunk], list[Chunk]] | None:
    """The chunks before the last query and the chunks of the last query (which may start
    chunks back), or None when they hold one query only."""
    last = pending[-1].queries[-1]
    for at in range(len(pending) - 1, -1, -1):
        chunk = pending[at]
        if len(chunk.queries) > 1 or chunk.queries[0] != last:
            head, tail = chunk.split_last() if chunk.queries[-1] == last else (chunk, None)
            before = [*pending[:at], head]
            after = ([tail] if tail is not None else []) + pending[at + 1 :]
            return before, after
    return None


def _run_of(chunks: list[Chunk], source: str, name: str | None, *, regroup: bool = False) -> Run:
    """One batch as a Run. A query that goes on from one chunk to the next is one query; a
    query met twice otherwise is refused, or, with ``regroup``, its rows are brought
    together in their order, as the in-memory readers do (on the bytes of the query ids,
    when the fast TREC reader gave them, as it groups a whole file)."""
    if regroup and _all_bytes(chunks):
        return _grouped_on_bytes(chunks, name)
    queries: list[str] = []
    lengths: list[int] = []
    for chunk in chunks:
        first = 0
        if queries and chunk.queries and queries[-1] == chunk.queries[0]:
            lengths[-1] += int(chunk.lengths[0])  # a query cut between two chunks
            first = 1
        queries.extend(chunk.queries[first:])
        lengths.extend(chunk.lengths[first:].tolist())
    if not regroup and len(set(queries)) != len(queries):
        seen: set[str] = set()
        for query_id in queries:
            if query_id in seen:
                raise not_grouped(query_id, source)
            seen.add(query_id)
    counts = np.asarray(lengths, dtype=np.int64)
    if all(chunk.scores is None for chunk in chunks):
        if all(isinstance(chunk.docs, np.ndarray) for chunk in chunks):  # packed: kept so
            ids = np.concatenate([chunk.docs for chunk in chunks])
            return Run.from_grouped(queries, counts, ids, None, name=name)  # grouped there
        flat = _flat_docs(chunks)
        regrouping = regroup_order(queries, counts) if regroup else None
        if regrouping is not None:
            queries, counts, order = regrouping
            flat = [flat[i] for i in order.tolist()]
        bounds = np.concatenate(([0], np.cumsum(counts))).tolist()
        rankings = {q: flat[bounds[i] : bounds[i + 1]] for i, q in enumerate(queries)}
        return Run.from_lists(rankings, name=name)
    if any(chunk.scores is None for chunk in chunks):
        raise InputFormatError(f"{source}: some batches have scores and some do not.")
    scores = np.concatenate([chunk.scores for chunk in chunks if chunk.scores is not None])
    if all(isinstance(chunk.docs, np.ndarray) for chunk in chunks):
        ids = np.concatenate([chunk.docs for chunk in chunks])  # the widest ids' width
        return Run.from_grouped(queries, counts, ids, scores, name=name)  # grouped there
    flat_docs = _flat_docs(chunks)
    if regroup:
        queries, counts, flat_docs, scores = group_contiguous(
            queries, counts.tolist(), flat_docs, scores
        )
    return Run.from_grouped(queries, counts, flat_docs, scores, name=name)


def _all_bytes(chunks: list[Chunk]) -> bool:
    """True when every chunk holds its query ids as bytes, its doc ids packed and scores:
    what :func:`_grouped_on_bytes` groups."""
    return all(
        c.heads is not None and c.scores is not None and isinstance(c.docs, np.ndarray)
        for c in chunks
    )


def _grouped_on_bytes(chunks: list[Chunk], name: str | None) -> Run:
    """:func:`_run_of` regrouping chunks of the fast TREC reader (query ids as bytes, doc ids
    packed, scores), as ``formats._trec_fast`` groups a whole file's blocks."""
    queries, counts, ids, values = grouped_rows(
        _packed.as_words(np.concatenate([c.heads for c in chunks if c.heads is not None])),
        np.concatenate([c.lengths for c in chunks]),
        np.concatenate([c.docs for c in chunks if isinstance(c.docs, np.ndarray)]),
        np.concatenate([c.scores for c in chunks if c.scores is not None]),
    )
    return Run.from_grouped(queries, counts, ids, values, name=name)


def _flat_docs(chunks: list[Chunk]) -> list[str]:
    return [
        d
        for chunk in chunks
        for d in (_packed.decode(chunk.docs) if isinstance(chunk.docs, np.ndarray) else chunk.docs)
    ]


# --- runs whose queries are scattered ---------------------------------------------------------

MAX_PARTS = 256  # parts of the queries in the temporary file, each read back as one batch
_ROW_BYTES = 8  # the fewest bytes a row takes in a file (compressed Parquet): parts are
# counted from the input's size as if every row took this few, so that none holds more
# than about ``batch_rows`` rows


def regrouped(
    chunks: Iterable[Chunk],
    batch_rows: int,
    source: str,
    name: str | None,
    input_bytes: int | None,
) -> Iterator[Run]:
    """Runs of whole queries from chunks whose queries may come back anywhere in the input.

    Up to ``batch_rows`` rows are held in memory: a run no larger is one batch, grouped as
    the in-memory reader groups it. A larger run is written, in one pass, to one temporary
    file in pieces, each the rows of one chunk that fall in one part of the queries (a
    query's part: a hash of its id), each row written once in the order read; the pieces of
    each part are then read back and grouped, one batch a part. ``input_bytes``: the
    input's size, from which the number of parts is chosen (about ``batch_rows`` rows each,
    at most :data:`MAX_PARTS`; 64 when unknown).

    One file, not one a part: opening hundreds of files took 25-70 ms on a 2-core machine,
    and more files than the process may open at once (macOS allows 256 by default) failed."""
    held: list[Chunk] = []
    rows = 0
    rest = iter(chunks)
    for chunk in rest:
        if chunk.n_runs:
            held.append(chunk)
            rows += chunk.n_rows
        if rows > batch_rows:
            break
    else:
        if held:
            yield _run_of(held, source, name, regroup=True)
        return
    if input_bytes is None:
        n_parts = 64
    else:
        n_parts = min(MAX_PARTS, max(2, -(-input_bytes // (batch_rows * _ROW_BYTES))))
    # deleted when closed, and by the system if the process dies first
    with tempfile.TemporaryFile(prefix="ragmetrics-regroup-") as file:
        warn(
            f"{source}: its queries are not grouped, and it is larger than one batch "
            f"({batch_rows:,} rows): its rows are grouped through a temporary file in "
            f"{tempfile.gettempdir()}, in {n_parts} parts of its queries (about the run's size "
            f"on disk, removed when done). Sort the input by query to stream it in one pass; "
            f"set TMPDIR to put the file elsewhere.",
            RegroupedStreamWarning,
        )
        pieces = [array("q") for _ in range(n_parts)]  # where each part's pieces start
        for chunk in chain(_taken(held), rest):
            _spread(chunk, file, pieces)
        for starts in pieces:
            if starts:
                yield _run_of(list(_pieces(file, starts)), source, name, regroup=True)


def _taken(chunks: list[Chunk]) -> Iterator[Chunk]:
    """The chunks of the list, each let go of as it is given (the rows held in memory are
    written to the file one chunk at a time, not kept until the end)."""
    chunks.reverse()
    while chunks:
        yield chunks.pop()


def _spread(chunk: Chunk, file: io.BufferedRandom, pieces: Sequence[array[int]]) -> None:
    """Write each part's rows of ``chunk`` as one piece at the end of ``file``, and add where
    it starts to the part's list in ``pieces`` (a part: the queries whose ids hash to it;
    ``len(pieces)`` parts). A part is a hash of the query id's bytes that ignores the width
    of the array they sit in, so that a query lands in one part whether a chunk holds its id
    as bytes (the fast TREC reader's) or as a string (any other). The ids are written as
    bytes where they can be (as UTF-8: no NUL, no newline), to be grouped on them when the
    part is read back."""
    if not chunk.n_runs:
        return
    n_parts = len(pieces)
    heads = chunk.heads if chunk.heads is not None else _packed.words_of(chunk.queries)
    keys = heads
    if keys is None:  # an id holding a NUL or a newline: its UTF-8 bytes, as any other's
        keys = np.array([q.encode("utf-8", "surrogatepass") for q in chunk.queries], "S")
    parts = (_packed.spread_hashes(keys) % np.uint64(n_parts)).astype(np.int64)
    run_order = stable_order(parts, n_parts)
    row_order = runs_in_order(chunk.lengths, run_order)  # each run's rows go with it
    run_counts = np.bincount(parts, minlength=n_parts).tolist()
    row_counts = np.bincount(parts, weights=chunk.lengths, minlength=n_parts).astype(int).tolist()
    queries: np.ndarray | list[str] = (
        heads[run_order]
        if heads is not None
        else list(map(chunk.queries.__getitem__, run_order.tolist()))
    )
    lengths = chunk.lengths[run_order]
    docs = (
        chunk.docs[row_order]
        if isinstance(chunk.docs, np.ndarray)
        else [chunk.docs[i] for i in row_order.tolist()]
    )
    scores = None if chunk.scores is None else chunk.scores[row_order]
    at = file.tell()  # the end: every chunk is spread before any part is read back
    run_at = row_at = 0
    for part, n_runs, n_rows in zip(pieces, run_counts, row_counts, strict=True):
        if n_runs:
            part.append(at)
            at += file.write(
                _piece(
                    queries[run_at : run_at + n_runs],
                    lengths[run_at : run_at + n_runs],
                    docs[row_at : row_at + n_rows],
                    None if scores is None else scores[row_at : row_at + n_rows],
                )
            )
        run_at += n_runs
        row_at += n_rows


# A piece of the file: a header (its runs of rows, its rows, the width of its query ids and
# of its doc ids, whether it has scores), then its columns' bytes: the runs' lengths
# (int64), the scores (float64), the query ids and the doc ids (fixed-width bytes). A piece
# that holds strings (ids that cannot be packed) has -1 for its runs and its size in bytes
# for its rows, and is pickled after the header. The columns' bytes as they are take a
# fifth of the time pickling them took (a stream of 2 million rows in batches of 10,000
# writes 6,000 pieces).
_HEADER = struct.Struct("<5q")


def _piece(
    queries: np.ndarray | list[str],
    lengths: np.ndarray,
    docs: np.ndarray | list[str],
    scores: np.ndarray | None,
) -> bytes:
    """The bytes of one piece (see ``_HEADER``)."""
    if not isinstance(queries, np.ndarray) or not isinstance(docs, np.ndarray):
        ids = queries if isinstance(queries, np.ndarray) else _joined(queries)
        pickled = pickle.dumps((ids, lengths, docs, scores), protocol=pickle.HIGHEST_PROTOCOL)
        return _HEADER.pack(-1, len(pickled), 0, 0, 0) + pickled
    scored = scores is not None
    header = _HEADER.pack(len(lengths), len(docs), queries.itemsize, docs.itemsize, scored)
    columns = [lengths.astype(np.int64, copy=False), queries, docs]
    if scores is not None:
        columns.insert(1, scores.astype(np.float64, copy=False))
    return b"".join([header, *(np.ascontiguousarray(column).data for column in columns)])


def _joined(queries: list[str]) -> str | list[str]:
    """Query ids as one string, one a line (pickled at once, not one by one: a third of the
    time to write them), or the list itself when an id holds a newline."""
    joined = "\n".join(queries)
    return joined if joined.count("\n") == len(queries) - 1 else queries


def _pieces(file: io.BufferedRandom, starts: Iterable[int]) -> Iterator[Chunk]:
    """The pieces of ``file`` that start at ``starts`` (one part's, in the order written),
    as chunks. A piece written with its query ids as bytes comes back with them as bytes
    (decoded to strings only if asked for), as the grouping on bytes reads them."""
    for start in starts:
        file.seek(start)
        header = file.read(_HEADER.size)
        if len(header) < _HEADER.size:
            raise _cut_short()
        n_runs, n_rows, query_width, doc_width, scored = _HEADER.unpack(header)
        if n_runs < 0:  # a pickled piece of n_rows bytes
            pickled = file.read(n_rows)
            if len(pickled) != n_rows:
                raise _cut_short()
            queries, lengths, docs, scores = pickle.loads(pickled)
            if isinstance(queries, np.ndarray):
                yield Chunk(None, lengths, docs, scores, queries)
            else:
                ids = queries.split("\n") if isinstance(queries, str) else queries
                yield Chunk(ids, lengths, docs, scores)
            continue
        data = bytearray(8 * (n_runs + scored * n_rows) + query_width * n_runs + doc_width * n_rows)
        if file.readinto(data) != len(data):
            raise _cut_short()
        lengths = np.frombuffer(data, np.int64, n_runs)
        at = 8 * n_runs
        scores = None
        if scored:
            scores = np.frombuffer(data, np.float64, n_rows, at)
            at += 8 * n_rows
        heads = np.frombuffer(data, f"S{query_width}", n_runs, at)
        docs = np.frombuffer(data, f"S{doc_width}", n_rows, at + query_width * n_runs)
        yield Chunk(None, lengths, docs, scores, heads)


def _cut_short() -> RagMetricsError:
    return RagMetricsError(
        f"The stream's temporary file (in {tempfile.gettempdir()}) ended before its rows did: "
        f"something else changed it while the stream was read. Set TMPDIR to a folder that "
        f"nothing else cleans."
    )
