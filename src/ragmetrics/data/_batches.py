"""Batches of a streamed run: the chunks a reader cuts (``formats._stream_io``) joined into
:class:`Run` objects of whole queries, each query in exactly one batch."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from ragmetrics.data._run import Run
from ragmetrics.errors import InputFormatError
from ragmetrics.formats import _packed
from ragmetrics.formats._stream_io import Chunk, not_grouped


def batches(
    chunks: Iterable[Chunk], batch_rows: int, source: str, name: str | None
) -> Iterator[Run]:
    """Runs of whole queries, each of at least ``batch_rows`` rows (but the last), in input
    order; a query longer than ``batch_rows`` makes a batch of its own."""
    pending: list[Chunk] = []
    rows = 0
    for chunk in chunks:
        if not chunk.queries:
            continue
        pending.append(chunk)
        rows += chunk.n_rows
        if rows >= batch_rows:
            cut = _cut_before_last_query(pending)
            if cut is not None:
                head, tail = cut
                yield _run_of(head, source, name)
                pending, rows = tail, sum(c.n_rows for c in tail)
    if pending:
        yield _run_of(pending, source, name)


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


def _run_of(chunks: list[Chunk], source: str, name: str | None) -> Run:
    """One batch as a Run; a query met twice in it is refused."""
    queries: list[str] = []
    lengths: list[int] = []
    for chunk in chunks:
        first = 0
        if queries and chunk.queries and queries[-1] == chunk.queries[0]:
            lengths[-1] += int(chunk.lengths[0])  # a query cut between two chunks
            first = 1
        queries.extend(chunk.queries[first:])
        lengths.extend(chunk.lengths[first:].tolist())
    if len(set(queries)) != len(queries):
        seen: set[str] = set()
        for query_id in queries:
            if query_id in seen:
                raise not_grouped(query_id, source)
            seen.add(query_id)
    counts = np.asarray(lengths, dtype=np.int64)
    docs = [chunk.docs for chunk in chunks]
    if all(chunk.scores is None for chunk in chunks):
        flat = [
            d
            for part in docs
            for d in (_packed.decode(part) if isinstance(part, np.ndarray) else part)
        ]
        bounds = np.concatenate(([0], np.cumsum(counts))).tolist()
        rankings = {q: flat[bounds[i] : bounds[i + 1]] for i, q in enumerate(queries)}
        return Run.from_lists(rankings, name=name)
    if any(chunk.scores is None for chunk in chunks):
        raise InputFormatError(f"{source}: some batches have scores and some do not.")
    scores = np.concatenate([chunk.scores for chunk in chunks if chunk.scores is not None])
    if all(isinstance(part, np.ndarray) for part in docs):
        return Run.from_grouped(queries, counts, np.concatenate(docs), scores, name=name)
    flat_docs = [
        d for part in docs for d in (_packed.decode(part) if isinstance(part, np.ndarray) else part)
    ]
    return Run.from_grouped(queries, counts, flat_docs, scores, name=name)
