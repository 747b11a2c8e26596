"""The threads of array work: a map over them keeps the items' order and the plain map's
first error, and a call started on a thread hands back its value or its error."""

from __future__ import annotations

import threading
import time

import pytest

from ragmetrics._util import threads
from ragmetrics._util.threads import Started, map_threaded


@pytest.mark.parametrize("n_threads", [1, 2, 4])
def test_map_keeps_the_order_of_the_items(
    monkeypatch: pytest.MonkeyPatch, n_threads: int
) -> None:
    monkeypatch.setattr(threads, "_THREADS", n_threads)
    items = list(range(50))

    def square(item: int) -> int:
        time.sleep(0.001 * (item % 3))  # later items may end first
        return item * item

    assert map_threaded(square, items) == [item * item for item in items]
    assert map_threaded(square, []) == []
    assert map_threaded(square, [7]) == [49]


def test_map_runs_items_side_by_side(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two items that each wait for the other can only end when both run at once."""
    monkeypatch.setattr(threads, "_THREADS", 2)
    barrier = threading.Barrier(2, timeout=10)

    def meet(item: int) -> int:
        barrier.wait()
        return item

    assert map_threaded(meet, [1, 2]) == [1, 2]


def test_map_raises_the_first_items_error_and_leaves_no_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Item 1 fails slowly and item 3 at once: the plain map would raise item 1's error."""
    monkeypatch.setattr(threads, "_THREADS", 4)
    running = threading.active_count()

    def check(item: int) -> int:
        if item == 1:
            time.sleep(0.05)
            raise ValueError("item 1")
        if item == 3:
            raise KeyError("item 3")
        return item

    with pytest.raises(ValueError, match="item 1"):
        map_threaded(check, list(range(6)))
    assert threading.active_count() == running


def test_a_started_call_gives_its_value_or_its_error() -> None:
    assert Started(lambda item: item + 1, 41).result() == 42
    failed = Started(lambda item: 1 // item, 0)
    failed.wait()
    with pytest.raises(ZeroDivisionError):
        failed.result()
