"""Suspend Python's cyclic garbage collector during bulk work.

Building qrels and runs allocates millions of small containers; each time the allocation
count crosses a threshold, the collector walks every tracked object, so the cost grows with
the square of the input (at 100,000 queries x 100 results, more than half the time). These
structures (dicts of str -> number, lists, arrays) hold no reference cycles, so reference
counting frees them all; the collector is switched back on at the end, as it was.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


def without_gc(function: Callable[P, T]) -> Callable[P, T]:
    """Run ``function`` with the cyclic collector paused (re-entrant, exception-safe)."""

    @functools.wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        if not gc.isenabled():
            return function(*args, **kwargs)
        gc.disable()
        try:
            return function(*args, **kwargs)
        finally:
            gc.enable()

    return wrapper
