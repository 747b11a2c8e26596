"""The collector pause of bulk work never changes a setting another thread could rely on."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading

import pytest

from ragmetrics._util.gc import without_gc


@without_gc
def _collector_state() -> bool:
    return gc.isenabled()


def test_paused_only_inside_and_restored() -> None:
    # in a fresh process, where this is surely the only thread (the suite may have others)
    code = (
        "import gc, threading\n"
        "from ragmetrics._util.gc import without_gc\n"
        "state = without_gc(gc.isenabled)\n"
        "assert threading.active_count() == 1\n"
        "print(gc.isenabled(), state(), gc.isenabled())\n"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert shown.stdout.split() == ["True", "False", "True"], shown.stderr


def test_left_alone_while_another_thread_runs() -> None:
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert _collector_state() is True  # another thread might read or set it: untouched
    finally:
        release.set()
        other.join()


def test_a_collector_turned_off_elsewhere_stays_off() -> None:
    gc.disable()
    try:
        assert _collector_state() is False
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_restored_when_the_work_fails() -> None:
    @without_gc
    def fails() -> None:
        raise KeyError("x")

    with pytest.raises(KeyError):
        fails()
    assert gc.isenabled()
