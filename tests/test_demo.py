"""`make demo` runs end to end: data written, four configurations compared, report written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_demo_dependencies_are_installed() -> None:
    # `make test` installs them (integrations' test extras); a skip here would hide a broken demo
    import langchain_text_splitters  # noqa: F401
    import llama_index.retrievers.bm25  # noqa: F401
    import rank_bm25  # noqa: F401


def test_demo_runs(tmp_path: Path) -> None:
    env = {**os.environ, "RAGMETRICS_DEMO_OUTPUT": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo" / "run.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=True,
    )
    out = done.stdout
    for name in ("llamaindex/64tok", "llamaindex/256tok", "langchain/250ch", "langchain/1000ch"):
        assert name in out
    assert "ra_nwg@5" in out and "paired randomization test" in out
    dataset = json.loads((tmp_path / "data" / "dataset.json").read_text())
    assert len(dataset["queries"]) == 30 and len(dataset["corpus"]) == 45
    grades = {g for docs in dataset["relevant_docs"].values() for g in docs.values()}
    assert grades == {1, 3, 4, 5}
    assert (
        "Date: " in dataset["corpus"]["session-02"]
        and "\nuser: " in dataset["corpus"]["session-02"]
    )
    page = (tmp_path / "report.html").read_text()
    assert "RA-nWG@5 decomposition" in page and "worst queries" in page
