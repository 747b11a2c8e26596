"""Every notebook runs top to bottom (no network) and its committed outputs are fresh."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_the_five_notebooks_are_there() -> None:
    assert [p.stem[:2] for p in NOTEBOOKS] == ["01", "02", "03", "04", "05"]


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
