"""The threads of array work: a map over them keeps the items' order and the plain map's
first error; workers run the calls given to them side by side and hand back each one's
value or error, and no thread outlives its ``with`` block."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from ragmetrics._util import threads
from ragmetrics._util.threads import Workers, map_threaded


@pytest.mark.parametrize("n_threads", [1, 2, 4])
def test_map_keeps_the_order_of_the_items(monkeypatch: pytest.MonkeyPatch, n_threads: int) -> None:
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


def test_a_map_on_a_workers_thread_stays_on_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Work given to the workers (the blocks of a file) that maps over its own items (the
    hashes of a block) runs them on its thread: the cores are busy with its siblings, and
    threads started from threads would only compete for them. The calling thread itself
    still maps side by side."""
    monkeypatch.setattr(threads, "_THREADS", 4)

    def where(_: int) -> int:
        time.sleep(0.002)
        return threading.get_ident()

    def inner(_: int) -> set[int]:
        return set(map_threaded(where, list(range(8))))

    with Workers(1) as workers:
        on_worker = workers.submit(inner, 0).result()
    assert len(on_worker) == 1 and threading.get_ident() not in on_worker
    assert len(inner(0)) > 1


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


def test_workers_give_each_calls_value_or_error_and_end_with_their_block() -> None:
    running = threading.active_count()
    barrier = threading.Barrier(2, timeout=10)
    with Workers(2) as workers:
        assert threading.active_count() == running + 2
        met = [workers.submit(lambda item: barrier.wait() + item, 10) for _ in range(2)]
        assert sorted(call.result() for call in met) == [10, 11]  # both ran at once
        values = [workers.submit(lambda item: item * 2, item) for item in range(20)]
        failed = workers.submit(lambda item: 1 // item, 0)
        late = workers.submit(time.sleep, 0.05)  # still running when the block ends
        assert [call.result() for call in values] == [item * 2 for item in range(20)]
        with pytest.raises(ZeroDivisionError):
            failed.result()
    assert threading.active_count() == running
    assert late.result() is None


def test_every_built_in_kernel_may_run_beside_the_others() -> None:
    from ragmetrics.metrics import registered

    built_in = [s for s in registered().values() if s.kernel.__module__.startswith("ragmetrics.")]
    assert len(built_in) > 50
    assert [s.name for s in built_in if not s.pure] == []


def test_pure_kernels_run_side_by_side_and_the_others_on_the_calling_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two pure kernels that each wait for the other can only end when both run at once; a
    kernel not declared pure (a plug-in's, which may keep state) runs on the thread that
    called evaluate, and every value lands in its own column."""
    import numpy as np

    import ragmetrics as rm
    from ragmetrics.engine import _evaluation
    from ragmetrics.metrics import registry

    from .conftest import restore_registries

    restore_registries(monkeypatch)
    monkeypatch.setattr(threads, "_THREADS", 2)
    monkeypatch.setattr(_evaluation, "_SIDE_BY_SIDE_HITS", 0)  # side by side on two queries
    barrier = threading.Barrier(2, timeout=10)
    callers: list[int] = []

    def meeting(value: float) -> Any:
        def kernel(judged: Any, cutoff: int | None) -> np.ndarray:
            barrier.wait()
            return np.full(judged.n_queries, value)

        return kernel

    def stateful(judged: Any, cutoff: int | None) -> np.ndarray:
        callers.append(threading.get_ident())
        return np.full(judged.n_queries, 0.25)

    for name, kernel, pure in (
        ("toy_meet_a", meeting(0.5), True),
        ("toy_meet_b", meeting(0.75), True),
        ("toy_stateful", stateful, False),
    ):
        spec = registry.MetricSpec(name, kernel, registry.Cutoff.NONE, "classic", "toy", pure=pure)
        registry.register(spec)
    found = rm.evaluate(
        {"q1": {"d1": 1}, "q2": {"d2": 1}},
        {"q1": {"d1": 1.0}, "q2": {"d3": 1.0}},
        ["toy_stateful", "toy_meet_a", "ndcg", "toy_meet_b"],
    )
    assert found.aggregate == {
        "toy_stateful": 0.25,
        "toy_meet_a": 0.5,
        "ndcg": 0.5,
        "toy_meet_b": 0.75,
    }
    assert callers == [threading.get_ident()]


def test_a_view_two_kernels_ask_for_at_once_is_made_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    from ragmetrics.metrics.judged import JudgedRun

    empty = np.zeros(0, dtype=np.int64)
    judged = JudgedRun(("q",), empty, empty, np.zeros(0), np.zeros(1, np.int64),
                       np.ones(1, bool), 0, np.zeros(1, np.int64), np.zeros(0), 0.0)  # fmt: skip
    made: list[int] = []
    barrier = threading.Barrier(2, timeout=10)

    def make() -> int:
        made.append(1)
        time.sleep(0.05)  # the other thread asks meanwhile
        return 7

    def ask(_: int) -> int:
        barrier.wait()
        return judged.cached("view", make)

    monkeypatch.setattr(threads, "_THREADS", 2)
    assert map_threaded(ask, [0, 1]) == [7, 7]
    assert made == [1]


def test_kernels_with_little_to_do_stay_on_the_calling_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Starting threads costs more than a small evaluation (10 queries: 0.35 ms one after
    another, 1.0 ms side by side): below the threshold every kernel runs here."""
    import numpy as np

    import ragmetrics as rm
    from ragmetrics.engine import _evaluation
    from ragmetrics.metrics import registry

    from .conftest import restore_registries

    restore_registries(monkeypatch)
    monkeypatch.setattr(threads, "_THREADS", 2)
    callers: list[int] = []

    def kernel(judged: Any, cutoff: int | None) -> np.ndarray:
        callers.append(threading.get_ident())
        time.sleep(0.02)  # side by side, another thread would take the next kernel meanwhile
        return np.zeros(judged.n_queries)

    for name in ("toy_here_a", "toy_here_b", "toy_here_c"):
        registry.register(
            registry.MetricSpec(name, kernel, registry.Cutoff.NONE, "classic", "toy", pure=True)
        )
    qrels = {f"q{i}": {"d1": 1} for i in range(50)}
    run = {f"q{i}": {"d1": 1.0} for i in range(50)}
    rm.evaluate(qrels, run, ["toy_here_a", "toy_here_b", "toy_here_c"])
    assert callers == [threading.get_ident()] * 3
    assert _evaluation._SIDE_BY_SIDE_HITS > 50
