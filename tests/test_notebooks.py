"""Every notebook runs top to bottom (no network) and its committed outputs are fresh."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_the_seven_notebooks_are_there() -> None:
    assert [p.stem[:2] for p in NOTEBOOKS] == ["01", "02", "03", "04", "05", "06", "07"]


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_executes(path: Path) -> None:
    committed = nbformat.read(path, as_version=4)
    # committed with outputs, so that they read well on a code host
    code = [cell for cell in committed.cells if cell.cell_type == "code"]
    assert code[-1].outputs and sum(bool(c.outputs) for c in code) >= len(code) // 2
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()  # raises CellExecutionError on any error
    errors = [
        o
        for c in notebook.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "error"
    ]
    assert not errors
    warnings = [
        o.text
        for c in notebook.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "stream" and o.name == "stderr" and "Warning" in o.text
    ]
    assert not warnings, warnings
    # what the reader sees on the code host is what the code gives now
    fresh = [_shown(c) for c in notebook.cells if c.cell_type == "code"]
    assert fresh == [_shown(c) for c in code], "committed outputs are stale: rebuild them"


_VOLATILE = [
    (re.compile(r"0x[0-9a-f]{6,}"), "0x…"),  # object addresses
    (re.compile(r"/tmp/[^\s'\"]+"), "/tmp/…"),  # temporary folders
    (re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d)?( UTC|[+-]\d\d:\d\d)?"), "<time>"),
    (re.compile(r"\d+(\.\d+)? ?(s|ms|it/s)\b"), "<duration>"),
]


def _shown(cell: Any) -> list[tuple[str, str]]:
    """A cell's outputs as text, volatile parts masked (images left out: PNG bytes differ
    between matplotlib builds)."""
    shown = []
    for output in cell.outputs:
        if output.output_type == "stream":
            texts = [output.text]
        else:
            data = output.get("data", {})
            texts = [
                str(data[k]) for k in ("text/plain", "text/markdown", "text/html") if k in data
            ]
        for text in texts:
            for pattern, mask in _VOLATILE:
                text = pattern.sub(mask, text)
            if shown and output.output_type == "stream" and shown[-1][0] == "stream":
                shown[-1] = ("stream", shown[-1][1] + text)  # a stream may arrive in pieces
            else:
                shown.append((output.output_type, text))
    return shown
