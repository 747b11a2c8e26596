"""How many threads this process's numpy work may use, and calls run on them.

numpy lets go of the interpreter inside its loops, so blocks of one array job (parsing a
file's blocks, joining a run with its judgments) run side by side on threads. A process
that is one worker of several takes its share of the cores (:func:`set_threads`).

The threads are plain :class:`threading.Thread` objects, started per call: the jobs are a
few blocks of milliseconds each, where a pool's upkeep would cost more than it saves, and
``concurrent.futures`` brings ``logging`` with it (4 ms of every ``ragmetrics trec_eval``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

_Item = TypeVar("_Item")
_Result = TypeVar("_Result")

_THREADS = max(1, min(4, os.cpu_count() or 1))


def threads() -> int:
    """The threads this process's array work may use."""
    return _THREADS


def set_threads(count: int) -> None:
    """Use this many threads in this process (at least one)."""
    global _THREADS
    _THREADS = max(1, count)


class Started(Generic[_Result]):
    """``function(item)`` running on a thread of its own; :meth:`result` waits for it and
    returns its value or raises its error."""

    __slots__ = ("_error", "_thread", "_value")

    def __init__(self, function: Callable[[_Item], _Result], item: _Item) -> None:
        self._value: _Result | None = None
        self._error: BaseException | None = None
        # a daemon: an interrupted caller's process ends without waiting for the block
        self._thread = threading.Thread(target=self._run, args=(function, item), daemon=True)
        self._thread.start()

    def _run(self, function: Callable[[_Item], _Result], item: _Item) -> None:
        try:
            self._value = function(item)
        except BaseException as exc:  # handed to the caller by result()
            self._error = exc

    def wait(self) -> None:
        """Wait for the call to end, whatever it gave."""
        self._thread.join()

    def result(self) -> _Result:
        """The call's value (after waiting for it); its error is raised here."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


def map_threaded(function: Callable[[_Item], _Result], items: Sequence[_Item]) -> list[_Result]:
    """``function`` of each item, in order, on up to :func:`threads` threads, this one among
    them (only this one when there is one thread, or one item); the error of the first item
    that fails is raised, as the plain map would raise it."""
    if _THREADS == 1 or len(items) < 2:
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

    helpers = [Started(work, None) for _ in range(min(_THREADS, len(items)) - 1)]
    work(None)
    for helper in helpers:
        helper.wait()
    if errors:
        raise errors[min(errors)]
    return results  # type: ignore[return-value]
