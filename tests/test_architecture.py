"""The shape of the core: no import cycle, and no module reaching into another's privates.

Both are read from the source with ``ast``: every import counts (also the ones inside a
function, which only hide a cycle), except those under ``if TYPE_CHECKING:``, which never run.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

import ragmetrics

ROOT = Path(ragmetrics.__file__).parent


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node, except those under ``if TYPE_CHECKING:``."""
    nodes: list[ast.AST] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
            continue
        nodes.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return nodes


def _imports(name: str, path: Path) -> set[str]:
    """The modules of the package that ``name`` imports at run time."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in _runtime_nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in MODULES}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package[: len(package) - node.level + 1], base]).strip(".")
            for alias in node.names:
                if f"{base}.{alias.name}" in MODULES:
                    found.add(f"{base}.{alias.name}")
                elif base in MODULES:
                    found.add(base)
    return found - {name}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph``, as the list of modules around it, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (found := visit(target)) is not None:
                return found
        path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state and (found := visit(module)) is not None:
            return found
    return None


def test_no_import_cycle_in_the_core() -> None:
    graph = {name: _imports(name, path) for name, path in MODULES.items()}
    assert graph["ragmetrics.engine._locate"] >= {"ragmetrics.data._store"}  # the walk sees imports
    cycle = _cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def _private_names(tree: ast.AST) -> set[str]:
    """The private names a module defines: functions, classes, attributes it assigns
    (``self._x = ...``, annotated or slotted), and module-level names."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.add(node.value)  # __slots__ entries
    return {n for n in names if n.startswith("_")}


# public names of the standard library that start with an underscore
STDLIB_PUBLIC = {"_exit"}  # os._exit: ends the process without the interpreter's teardown


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_reads_another_modules_privates(name: str) -> None:
    tree = ast.parse(MODULES[name].read_text())
    own = _private_names(tree) | STDLIB_PUBLIC
    foreign = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            protocol = node.attr.startswith("__") or node.attr.endswith("_")
            if not protocol and node.attr not in own:
                foreign.append(f"line {node.lineno}: .{node.attr}")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ragmetrics"):
            for alias in node.names:
                module = f"{node.module}.{alias.name}"
                dunder = alias.name.startswith("__")
                if alias.name.startswith("_") and not dunder and module not in MODULES:
                    foreign.append(f"line {node.lineno}: imports {alias.name}")
    assert not foreign, f"{name} reads privates of other modules: {foreign}"


def test_the_llama_index_package_declares_its_llamahub_listing() -> None:
    """LlamaHub lists an integration from ``[tool.llamahub]``: its import path must be the
    package's, and every class it exports must have an author."""
    import tomllib

    root = Path(__file__).parents[1] / "integrations" / "llama-index"
    table = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["llamahub"]
    assert table["import_path"] == "llama_index.evaluation.ragmetrics"
    package = importlib.import_module(table["import_path"])
    classes = {n for n in package.__all__ if isinstance(getattr(package, n), type)}
    classes -= {n for n in classes if issubclass(getattr(package, n), Warning)}
    assert set(table["class_authors"]) == classes


def test_an_evaluation_loads_numpy_and_what_it_needs_and_nothing_else() -> None:
    """``import ragmetrics`` loads no third-party module; an evaluation from dicts then loads
    numpy and the modules it uses, and none of what other features need (validation models,
    progress bars, tables, Arrow, statistics, the thread pool and its logging)."""
    import json
    import subprocess
    import sys

    code = (
        "import json, sys, ragmetrics as rm\n"
        "before = set(sys.modules)\n"
        "qrels = rm.Qrels.from_dict({'q': {'a': 2, 'b': 0}})\n"
        "run = rm.Run.from_dict({'q': {'a': 0.5, 'c': 0.9}})\n"
        "rm.evaluate(qrels, run, ['ndcg@10', 'map', 'recall@5']).aggregate\n"
        "print(json.dumps([sorted(before), sorted(sys.modules)]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, loaded = (set(names) for names in json.loads(done.stdout))
    assert "numpy" not in before and "ragmetrics" in before
    assert "numpy" in loaded
    unwanted = {"pydantic", "tqdm", "pandas", "pyarrow", "scipy", "matplotlib", "ray", "logging",
                "concurrent.futures", "ragmetrics.analysis.stats", "ragmetrics.report._report"}  # fmt: skip
    assert not unwanted & loaded, sorted(unwanted & loaded)


def test_the_trec_eval_stand_in_loads_only_what_it_uses(tmp_path: Path) -> None:
    """``ragmetrics trec_eval`` is called once per run by scripts, so its start-up counts:
    it reads its own options and TREC files and writes text, and loads none of the option
    parser, JSON, pathlib, gzip, CSV, name suggestions or the thread pool (with logging)
    that other commands and formats use."""
    import subprocess
    import sys

    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 2\n")
    (tmp_path / "run.txt").write_text("q1 Q0 a 1 0.9 t\nq1 Q0 c 2 0.5 t\nq2 Q0 c 1 0.3 t\n")
    code = (
        "import os, sys\n"
        "from ragmetrics.cli import main\n"
        f"code = main(['trec_eval', '-q', {str(tmp_path / 'qrels.txt')!r}, "
        f"{str(tmp_path / 'run.txt')!r}])\n"
        "print(code, *sorted(sys.modules), sep='\\n', file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    code_text, *loaded = done.stderr.split()
    assert code_text == "0" and "map                   \tq1\t1.0000" in done.stdout
    assert "ragmetrics.engine._evaluation" in loaded and "numpy" in loaded
    unwanted = {"argparse", "json", "pathlib", "gzip", "zlib", "csv", "difflib", "logging",
                "concurrent.futures", "tempfile", "pydantic", "tqdm"}  # fmt: skip
    assert not unwanted & set(loaded), sorted(unwanted & set(loaded))


def _declared_layers() -> list[set[str]]:
    """The layers docs/architecture.md declares, lowest first: each a set of folder (or
    top-level module) names."""
    text = (Path(__file__).parents[1] / "docs" / "architecture.md").read_text()
    block = text.split("<!-- layers:", 1)[1].split("<!-- /layers -->", 1)[0]
    layers = []
    for line in block.splitlines()[1:]:
        if line.strip():
            head = line.split(":", 1)[0]
            layers.append(set(re.findall(r"`([\w_]+)`", head)))
    return layers


LAYERS = _declared_layers()


def _part(module: str) -> str:
    """The folder (or top-level module) a module belongs to: ``ragmetrics.engine._locate`` ->
    ``engine``, ``ragmetrics.errors`` -> ``errors``, ``ragmetrics`` -> ``ragmetrics``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _layer_of() -> dict[str, int]:
    return {part: level for level, parts in enumerate(LAYERS) for part in parts}


def _upward(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a module in a higher layer, or in another folder of the same layer."""
    level = _layer_of()
    found = []
    for module, targets in graph.items():
        for target in targets:
            a, b = _part(module), _part(target)
            if a != b and level[b] >= level[a]:
                found.append(
                    f"{module} -> {target} ({a}: layer {level[a] + 1}, {b}: {level[b] + 1})"
                )
    return sorted(found)


def test_every_folder_has_a_declared_layer() -> None:
    parts = {_part(name) for name in MODULES}
    declared = set().union(*LAYERS)
    assert parts == declared, (parts - declared, declared - parts)
    assert len(LAYERS) >= 10


def test_no_module_imports_from_a_higher_layer() -> None:
    graph = {name: _imports(name, path) for name, path in MODULES.items()}
    assert "ragmetrics.data._store" in graph["ragmetrics.engine._locate"]  # the walk sees imports
    assert _upward(graph) == []


def test_the_layer_check_finds_an_upward_import() -> None:
    graph = {
        "ragmetrics.metrics._classic": {"ragmetrics.engine._locate"},  # up
        "ragmetrics.fusion": {"ragmetrics.goldset"},  # across one layer
        "ragmetrics.engine._locate": {"ragmetrics.metrics.judged", "ragmetrics.engine._result"},
    }
    found = _upward(graph)
    assert len(found) == 2 and found[0].startswith("ragmetrics.fusion -> ragmetrics.goldset")


def test_an_import_inside_a_function_counts(tmp_path: Path) -> None:
    source = tmp_path / "classic.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from ragmetrics.engine._result import EvaluationResult\n"
        "def f():\n    from ragmetrics.engine._locate import locate_judged\n"
    )
    assert _imports("ragmetrics.metrics._classic", source) == {"ragmetrics.engine._locate"}


MAX_COMPLEXITY = 30  # radon's cyclomatic complexity of one function


def _too_complex(paths: list[Path]) -> list[str]:
    from radon.complexity import cc_visit

    found = []
    for path in paths:
        for block in cc_visit(path.read_text()):
            if block.complexity > MAX_COMPLEXITY:
                found.append(f"{path.name}:{block.lineno} {block.fullname} ({block.complexity})")
    return found


def test_no_function_is_more_complex_than_30() -> None:
    """A function past 30 paths does several jobs: split it along them (the core's and both
    integrations' sources)."""
    integrations = Path(__file__).parents[1] / "integrations"
    paths = [*ROOT.rglob("*.py"), *integrations.glob("*/src/**/*.py")]
    assert len(paths) > 100
    assert _too_complex(paths) == []


def test_the_complexity_check_finds_a_branchy_function(tmp_path: Path) -> None:
    branches = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(MAX_COMPLEXITY))
    (tmp_path / "branchy.py").write_text(f"def branchy(x):\n{branches}    return -1\n")
    assert _too_complex([tmp_path / "branchy.py"]) == ["branchy.py:1 branchy (31)"]
