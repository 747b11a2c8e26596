"""For the doctests of ``src/``: the kernels' examples judge small rankings with
``locate_in_lists``, which the engine defines above the kernels' layer, so the examples get it
here rather than from an upward import in each kernel module."""

from __future__ import annotations

from typing import Any

import pytest

from ragmetrics.engine._locate import locate_in_lists


@pytest.fixture(autouse=True)
def _kernel_examples(doctest_namespace: dict[str, Any]) -> None:
    doctest_namespace["locate_in_lists"] = locate_in_lists
