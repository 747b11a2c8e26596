"""The public surface, pinned: every public module declares ``__all__`` and this test holds
each list as it is, so that a name added, moved or removed is a decision seen in review
(and written in the CHANGELOG), never an accident. The adapters import the core only
through ``ragmetrics.adapters``."""

from __future__ import annotations

import ast
import importlib
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = {
    "ragmetrics": ROOT / "src",
    "langchain_ragmetrics": ROOT / "integrations" / "langchain" / "src",
    "llama_index.evaluation.ragmetrics": ROOT / "integrations" / "llama-index" / "src",
}

PAGE = ROOT / "docs" / "public-api.md"


def _listed() -> dict[str, list[str]]:
    """docs/public-api.md: each ``## `module` `` heading and the names its "Names:" line
    gives (none for a folder)."""
    listed: dict[str, list[str]] = {}
    module = None
    for line in PAGE.read_text().splitlines():
        if line.startswith("## `"):
            module = line[4:].rstrip("`")
            listed[module] = []
        elif line.startswith("Names: ") and module is not None:
            listed[module] = sorted(re.findall(r"`([^`]+)`", line))
    return listed


PUBLIC_API = _listed()


def _public_modules() -> list[str]:
    """Every module of the three distributions with no leading underscore on its path."""
    found = []
    for package, base in SOURCES.items():
        for path in sorted((base / package.replace(".", "/")).rglob("*.py")):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if not any(part.startswith("_") for part in parts):
                found.append(".".join(parts))
    return found


def test_every_public_module_is_pinned() -> None:
    assert sorted(_public_modules()) == sorted(PUBLIC_API)


@pytest.mark.parametrize("name", sorted(PUBLIC_API))
def test_each_public_module_declares_its_pinned_names(name: str) -> None:
    module = importlib.import_module(name)
    declared = getattr(module, "__all__", None)
    assert declared is not None, f"{name} declares no __all__"
    assert sorted(declared) == PUBLIC_API[name], f"{name}: __all__ differs from docs/public-api.md"
    missing = [n for n in declared if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names what it lacks: {missing}"


def _core_imports(path: Path) -> list[str]:
    """The ragmetrics modules a source file imports from."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "ragmetrics" or node.module.startswith("ragmetrics."):
                found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == "ragmetrics"]
    return found


@pytest.mark.parametrize("package", ["langchain_ragmetrics", "llama_index.evaluation.ragmetrics"])
def test_the_adapters_import_the_core_only_through_its_adapter_interface(package: str) -> None:
    base = SOURCES[package] / package.replace(".", "/")
    outside = {
        f"{path.relative_to(ROOT)}: {module}"
        for path in base.rglob("*.py")
        for module in _core_imports(path)
        if module != "ragmetrics.adapters"
    }
    assert not outside, sorted(outside)


def test_the_paths_of_before_the_folders_are_gone() -> None:
    """No release was made with them: ``ragmetrics.stream`` is not an alias of
    ``ragmetrics.engine.stream``."""
    for old in ("ragmetrics.stream", "ragmetrics.qrels", "ragmetrics.stats"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(old)


def test_no_module_shadows_a_function_of_its_package() -> None:
    """``import ragmetrics.x`` binds ``ragmetrics.x``: no public module may share the name
    of a function or class its package exports (``ragmetrics.compare`` was once both)."""
    clashes = []
    for name in PUBLIC_API:
        package, _, leaf = name.rpartition(".")
        if package in PUBLIC_API and leaf in PUBLIC_API[package]:
            exported = getattr(importlib.import_module(package), leaf)
            if exported is not importlib.import_module(name):
                clashes.append(name)
    assert not clashes, clashes


def _documented_uses() -> list[tuple[str, str, list[str]]]:
    """``(where, module, names)`` for every import of ragmetrics in the README, docs/,
    examples/ and the notebooks (code cells), and ``("...", "ragmetrics", [name])`` for
    every ``rm.name`` they use."""
    files = [ROOT / "README.md", *ROOT.glob("integrations/*/README.md")]
    files += [p for p in (ROOT / "docs").glob("*.md") if p != PAGE]
    files += [*(ROOT / "examples").rglob("*.py")]
    files += [*ROOT.glob("notebooks/*.ipynb"), *ROOT.glob("integrations/*/notebooks/*.ipynb")]
    uses = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".ipynb":
            cells = json.loads(text)["cells"]
            text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        where = str(path.relative_to(ROOT))
        found = re.findall(r"from (ragmetrics[\w.]*) import (\([^)]*\)|[^\n]*)", text)
        for module, names in found:
            names = re.sub(r"#[^\n]*", "", names).strip("() \n")
            listed = [n.split(" as ")[0].strip() for n in names.replace("\n", " ").split(",")]
            uses.append((where, module, [n for n in listed if n]))
        for module in re.findall(r"^\s*import (ragmetrics[\w.]*)", text, re.MULTILINE):
            uses.append((where, module, []))
        for name in set(re.findall(r"\brm\.(\w+)", text)):
            uses.append((where, "ragmetrics", [name]))
    return uses


def test_every_documented_import_is_public() -> None:
    """What the README, the docs, the examples and the notebooks import is on the page of
    the public surface: a user who copies an example never reaches a private module."""
    uses = _documented_uses()
    assert len(uses) > 50 and any(m == "ragmetrics.compat.ir_measures" for _, m, _ in uses)
    off = []
    for where, module, names in uses:
        for name in names:
            if f"{module}.{name}" in PUBLIC_API:  # a public module imported from its package
                continue
            if module not in PUBLIC_API or name not in PUBLIC_API[module]:
                off.append(f"{where}: {module}.{name}")
        if not names and module not in PUBLIC_API:
            off.append(f"{where}: import {module}")
    assert not off, sorted(set(off))


def test_the_documented_import_check_sees_a_private_import() -> None:
    names = re.findall(r"from (ragmetrics[\w.]*) import", "from ragmetrics.engine._result import X")
    assert names == ["ragmetrics.engine._result"] and names[0] not in PUBLIC_API
