"""``evaluate_stream(..., workers=N)``: one evaluation shared by N processes.

The input is cut at query boundaries, each worker scores its share into a partial result,
and this process merges them in input order (exact sums: the same bits as one worker).

- A plain TREC file: N byte ranges (``_stream_io.trec_shares``), each read by its worker
  straight from the file; nothing but the partial results crosses between processes.
- A gzip TREC file and standard input are read by one process, with a warning
  (:func:`why_one_process`). A gzip stream decompresses only from its start: workers that
  each decompressed up to their share (a class of 200 lines, removed) took 1.5 s against
  1.6 s for one process on 10 million rows on 2 cores, under the 10% a speed path must gain;
  handing out blocks decompressed here was no faster either (4.6 s against 4.7 s for 1 GB).
- Parquet: a folder is shared out by files, a file by row groups. A query whose rows run over
  the edge of a share is scored by the share it starts in: a share skips the rows its first
  query has in the share before, and reads on past its end to finish its last query.

Workers are forked where the platform forks and this process runs one thread (nothing to
deadlock, no re-import of the caller's script, which ``spawn`` needs guarded by
``if __name__ == "__main__"``), else spawned; each receives the qrels and the settings once.
"""

from __future__ import annotations

import os
import pickle
import threading
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from itertools import pairwise
from multiprocessing import get_all_start_methods, get_context
from typing import TYPE_CHECKING, Any

from ragmetrics._util.threads import set_threads
from ragmetrics.data._batches import batches as run_batches
from ragmetrics.data._files import find_format
from ragmetrics.errors import InputFormatError, InvalidParameterError, RagMetricsError
from ragmetrics.formats import _stream_io
from ragmetrics.formats._io import GZIP_MAGIC
from ragmetrics.formats._trec_fast import line_number

if TYPE_CHECKING:  # the job comes from engine.stream, which imports this module
    from ragmetrics.engine.stream import Job, Merger, PartialResult

__all__ = ["evaluate_in_processes", "why_one_process"]

_JOB: Job | None = None  # this worker's job, set once when it starts


def evaluate_in_processes(job: Job, source: Any, workers: int) -> tuple[str, Merger]:
    """The merged partial results of ``source`` scored by ``workers`` processes, and the
    label that names the source in messages."""
    if not isinstance(source, (str, os.PathLike)):
        raise InvalidParameterError(
            "workers > 1 reads a TREC or Parquet path (each worker reads its own share); "
            "for an iterable of batches, use workers=1."
        )
    path = os.fspath(source)
    spec = find_format(path)
    if spec.name == "trec":
        shares = _stream_io.trec_shares(path, workers)
        tasks: Iterable[Any] = [(path, share) for share in shares]
        return path, _run(job, path, _score_share, tasks, workers)
    if spec.name == "parquet":
        return path, _run(job, path, _score_parquet, _parquet_shares(path, workers), workers)
    raise InputFormatError(
        f"{path}: workers > 1 reads TREC and Parquet input; {spec.name} input is read by one "
        f"process (workers=1)."
    )


def why_one_process(source: Any) -> str | None:
    """Why ``source`` is read by one process whatever ``workers`` says, or None."""
    if not isinstance(source, (str, os.PathLike)):
        return None  # refused with its own message by evaluate_in_processes
    path = os.fspath(source)
    if path == "-":
        return "standard input is read in one pass, by one process"
    if os.path.isfile(path) and _is_gzip(path):
        return (
            "a gzip stream decompresses only from its start, so workers cannot share it; "
            "decompress it (gunzip) or write it as Parquet to share it among workers"
        )
    return None


def _is_gzip(path: str) -> bool:
    with open(path, "rb") as handle:
        return handle.read(2) == GZIP_MAGIC


def _run(
    job: Job,
    label: str,
    work: Callable[[Any], PartialResult | None],
    tasks: Iterable[Any],
    workers: int,
) -> Merger:
    """Each task scored in a worker, merged here in task order (a few out at a time)."""
    merged = job.merger(label)
    _let_the_last_pool_end()
    method = _start_method()
    if method != "fork":
        _check_sendable(job)
    context = get_context(method)
    threads = max(1, (os.cpu_count() or 1) // workers)
    pool = ProcessPoolExecutor(
        workers, mp_context=context, initializer=_start, initargs=(job, threads)
    )
    pending: deque[Future[PartialResult | None]] = deque()
    try:
        for task in tasks:
            pending.append(pool.submit(work, task))
            if len(pending) >= 2 * workers + 2:
                _add(merged, pending.popleft().result())
        while pending:
            _add(merged, pending.popleft().result())
    except BrokenProcessPool as exc:
        raise RagMetricsError(
            f"A worker process ended abruptly while scoring {label} (killed by the system, "
            f"most often for want of memory); no result is given rather than a partial one. "
            f"Run again with fewer workers (workers={max(1, workers // 2)}) or smaller "
            f"batches (batch_rows=...)."
        ) from exc
    except MemoryError as exc:
        raise RagMetricsError(
            f"A worker ran out of memory while scoring {label}; run again with fewer "
            f"workers or smaller batches (batch_rows=...)."
        ) from exc
    finally:
        # the results are in: the workers free their memory and exit on their own time
        watcher = getattr(pool, "_executor_manager_thread", None)
        pool.shutdown(wait=False, cancel_futures=True)
        if isinstance(watcher, threading.Thread):
            _EXITING.append(watcher)
    return merged


_EXITING: list[threading.Thread] = []  # the thread of a pool whose workers may still be exiting


def _let_the_last_pool_end() -> None:
    """Wait for the workers of the last evaluation to exit. The thread that watches them,
    alive till then, would make the next pool spawn rather than fork, and a script that
    calls ``evaluate_stream`` twice without an ``if __name__ == "__main__"`` guard fail."""
    while _EXITING:
        _EXITING.pop().join()


def _start_method() -> str:
    """``fork`` when no other thread could hold a lock at the fork (tqdm's monitor aside: it
    only wakes to watch bars, and workers make none), else ``spawn``."""
    others = [
        t
        for t in threading.enumerate()
        if t is not threading.main_thread() and t.name != "tqdm_monitor"
    ]
    if "fork" in get_all_start_methods() and not others:
        return "fork"
    return "spawn"


def _check_sendable(job: Job) -> None:
    """A spawned worker gets the job pickled: a metric whose kernel cannot be (defined in a
    notebook cell or an ``exec``) is named, with the way out."""
    for spec, _ in job.custom:
        try:
            pickle.dumps(spec)
        except (pickle.PicklingError, AttributeError, TypeError) as error:
            raise InvalidParameterError(
                f"The metric {spec.name!r} cannot be sent to a worker process ({error}): "
                f"its kernel must be a function of an importable module, or use workers=1."
            ) from None


def _add(merged: Merger, item: PartialResult | None) -> None:
    if item is not None:
        merged.add(item)


def _start(job: Job, threads: int) -> None:
    global _JOB
    _JOB = job
    set_threads(threads)  # the cores are shared among the workers


def _job() -> Job:
    if _JOB is None:  # pragma: no cover - set by the pool's initializer
        raise RuntimeError("a worker of evaluate_stream started without its job")
    return _JOB


# --- plain TREC files: byte ranges ---------------------------------------------------------


def _score_share(task: tuple[str, tuple[int, int]]) -> PartialResult | None:
    path, share = task
    job = _job()
    try:
        return _score_trec(job, path, share, 1)
    except InputFormatError:
        # line numbers count from this share's start: read again, numbered from the file's
        first = line_number(path, share[0])
        return _score_trec(job, path, share, first)


def _score_trec(job: Job, path: str, share: tuple[int, int], first: int) -> PartialResult | None:
    chunks = _stream_io.trec_chunks(path, share, first)
    return job.score(run_batches(chunks, job.batch_rows, path, job.name, share=True), path)


# --- Parquet: files or row groups ----------------------------------------------------------


def _parquet_shares(path: str, workers: int) -> list[tuple[str, int, int]]:
    """The row groups of every file, in reading order, cut into at most ``workers`` shares
    of rows as equal as whole groups allow: ``(path, first group, end group)``."""
    groups = _stream_io.parquet_groups(path)
    ends, seen = [], 0
    for _, _, rows in groups:
        seen += rows
        ends.append(seen)  # rows up to the end of each group
    cuts = [0]
    for part in range(1, workers):
        target = seen * part / workers
        best = min(range(1, len(groups)), key=lambda i: abs(ends[i - 1] - target), default=0)
        if best > cuts[-1]:
            cuts.append(best)
    cuts.append(len(groups))
    return [(path, a, b) for a, b in pairwise(cuts) if b > a]


def _score_parquet(task: tuple[str, int, int]) -> PartialResult | None:
    path, start, end = task
    job = _job()
    chunks = _stream_io.parquet_share_chunks(path, job.columns, job.batch_rows, start, end)
    return job.score(run_batches(chunks, job.batch_rows, path, job.name, share=True), path)
