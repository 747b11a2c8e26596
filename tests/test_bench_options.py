"""The benchmarks' options read as their help says (a benchmark that cannot start measures
nothing: ``--sources`` left empty, its default, was refused as an unknown source)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyarrow")
sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))

import bench_irregular


def test_irregular_layouts_and_sources_are_chosen_by_name() -> None:
    parser = argparse.ArgumentParser()
    known = [*bench_irregular.BASE, *bench_irregular.VARIANTS]
    sources = list(bench_irregular.SOURCES)
    assert bench_irregular._chosen("", sources, "sources", parser) == sources
    assert bench_irregular._chosen("  ", known, "layouts", parser) == known
    picked = bench_irregular._chosen(
        "written by DuckDB, shuffled,by doc id", known, "layouts", parser
    )
    assert picked == ["written by DuckDB, shuffled", "by doc id"]
    assert bench_irregular._chosen("TREC,stream TREC", sources, "sources", parser) == [
        "TREC",
        "stream TREC",
    ]
    with pytest.raises(SystemExit):
        bench_irregular._chosen("TREC,nothing", sources, "sources", parser)
