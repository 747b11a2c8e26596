"""Shared fixtures: the real public data beside the project, read in place."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared_file(*parts: str) -> Path:
    """A file of ../shared/data; skips the test with a clear reason when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not available: {path} (tests read ../shared/data in place)")
    return path


def shared_seed(name: str) -> Path:
    """A seed document of ../shared/seeds (the tools the facades reproduce); skips the test
    with a clear reason when it is absent."""
    path = SHARED_DATA.parent / "seeds" / name
    if not path.exists():
        pytest.skip(f"seed document not available: {path} (tests read ../shared in place)")
    return path
