"""How many threads this process's numpy work may use, and calls run on them.

numpy lets go of the interpreter inside its loops, so blocks of one array job (parsing a
file's blocks, joining a run with its judgments) run side by side on threads. A process
that is one worker of several takes its share of the cores (:func:`set_threads`).

The threads are plain :class:`threading.Thread` objects serving a queue (:class:`Workers`):
``concurrent.futures`` would bring ``logging`` with it, 4 ms of every ``ragmetrics
trec_eval``.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

_Item = TypeVar("_Item")
_Result = TypeVar("_Result")

_THREADS = max(1, min(4, os.cpu_count() or 1))
_worker = threading.local()  # ``inside``: True on the threads of Workers


def threads() -> int:
    """The threads this process's array work may use."""
    return _THREADS


def set_threads(count: int) -> None:
    """Use this many threads in this process (at least one)."""
    global _THREADS
    _THREADS = max(1, count)


class Pending(Generic[_Result]):
    """A call given to :class:`Workers`: :meth:`result` waits for it and returns its value or
    raises its error."""

    __slots__ = ("_done", "_error", "_value")

    def __init__(self) -> None:
        self._value: _Result | None = None
        self._error: BaseException | None = None
        self._done = threading.Lock()
        self._done.acquire()  # released when the call ends

    def _finish(self, function: Callable[[_Item], _Result], item: _Item) -> None:
        try:
            self._value = function(item)
        except BaseException as exc:  # handed to the caller by result()
            self._error = exc
        finally:
            self._done.release()

    def wait(self) -> None:
        """Wait for the call to end, whatever it gave."""
        with self._done:
            pass

    def result(self) -> _Result:
        """The call's value (after waiting for it); its error is raised here."""
        self.wait()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


class Workers:
    """``count`` threads that run the calls given to :meth:`submit`, in order, until the
    ``with`` block ends (which waits for the calls given). The same threads serve every call:
    each thread's memory is taken once from the system and then reused, which for the short
    calls of array work costs less than a fresh thread per call."""

    def __init__(self, count: int) -> None:
        self._calls: deque[tuple[Pending[Any], Callable[[Any], Any], Any] | None] = deque()
        self._given = threading.Semaphore(0)
        # daemons: an interrupted caller's process ends without waiting for a block
        self._threads = [threading.Thread(target=self._serve, daemon=True) for _ in range(count)]
        for thread in self._threads:
            thread.start()

    def _serve(self) -> None:
        _worker.inside = True  # a call made here runs its own maps on this thread alone
        while True:
            self._given.acquire()
            call = self._calls.popleft()
            if call is None:
                return
            pending, function, item = call
            pending._finish(function, item)

    def submit(self, function: Callable[[_Item], _Result], item: _Item) -> Pending[_Result]:
        """Run ``function(item)`` on the next free thread."""
        pending: Pending[_Result] = Pending()
        self._calls.append((pending, function, item))
        self._given.release()
        return pending

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc_info: object) -> None:
        for _ in self._threads:  # after the calls given: one stop for each thread
            self._calls.append(None)
            self._given.release()
        for thread in self._threads:
            thread.join()


def map_threaded(function: Callable[[_Item], _Result], items: Sequence[_Item]) -> list[_Result]:
    """``function`` of each item, in order, on up to :func:`threads` threads, this one among
    them (only this one when there is one thread, or one item, or when this thread is one of
    the :class:`Workers`: the cores are busy with their siblings); the error of the first
    item that fails is raised, as the plain map would raise it."""
    if _THREADS == 1 or len(items) < 2 or getattr(_worker, "inside", False):
        return list(map(function, items))
    results: list[_Result | None] = [None] * len(items)
    errors: dict[int, BaseException] = {}
    indexes = iter(range(len(items)))  # shared: each thread takes the next item not taken

    def work(_: object) -> None:
        for index in indexes:
            try:
                results[index] = function(items[index])
            except BaseException as exc:  # raised below, in item order
                errors[index] = exc

    n_helpers = min(_THREADS, len(items)) - 1
    with Workers(n_helpers) as workers:
        helpers = [workers.submit(work, None) for _ in range(n_helpers)]
        work(None)
        for helper in helpers:
            helper.wait()
    if errors:
        raise errors[min(errors)]
    return results  # type: ignore[return-value]
