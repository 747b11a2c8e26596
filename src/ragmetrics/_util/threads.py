"""How many threads this process's numpy work may use, and a map over them.

numpy lets go of the interpreter inside its loops, so blocks of one array job (parsing a
file's blocks, joining a run with its judgments) run side by side on threads. A process
that is one worker of several takes its share of the cores (:func:`set_threads`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TypeVar

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


def map_threaded(function: Callable[[_Item], _Result], items: Sequence[_Item]) -> list[_Result]:
    """``function`` of each item, in order, on up to :func:`threads` threads (in this
    thread when there is one, or one item); an error is raised as the plain map would."""
    if _THREADS == 1 or len(items) < 2:
        return list(map(function, items))
    # imported here: concurrent.futures brings logging, which a process that never needs
    # two threads should not load
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(min(_THREADS, len(items))) as pool:
        return list(pool.map(function, items))
