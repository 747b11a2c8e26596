"""Mutation testing of the modules whose every line a number depends on (``make mutation``).

mutmut changes one operator, constant or call at a time in the target modules and runs the
tests that reach the changed function; a mutant the tests still pass "survives". This script
sets mutmut up in a scratch checkout of HEAD (the repository itself is never touched):

- only the target modules are mutated (the others are listed as ``do_not_mutate``);
- only in-process, synthetic tests run: nothing from ``../shared``, no subprocess, no
  notebook, no framework (a subprocess would import the unmutated package);
- at the end, the kill rate of each module, and the surviving mutants' names, are printed.

Usage: ``python tools/mutation.py [--modules engine/stream.py,...] [--tests test_store.py,...]
[--workdir DIR]``
(hours for every target on two cores; one module takes minutes). ``mutmut`` must be
installed (``pip install mutmut``; it is not a dependency of the project).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path("src/ragmetrics")

# the kernels, the store and its join, the TREC readers, the stream merge, the statistics
TARGETS = [
    "metrics/_classic.py",
    "metrics/_rag.py",
    "engine/_locate.py",
    "metrics/judged.py",  # JudgedRun, moved out of engine/_locate.py
    "data/_order.py",  # trec_eval's order, moved out of engine/_locate.py and data/_store.py
    "data/_store.py",
    "formats/_packed.py",
    "formats/_trec_fast.py",
    "formats/_io.py",
    "formats/_rules.py",
    "engine/stream.py",
    "analysis/stats.py",
]

# tests that run in-process on data they make themselves. Not test_arrow_streams.py (Polars
# and DuckDB) nor test_workers.py (processes): mutmut forks each mutant's run from a process
# whose thread pools (Polars', DuckDB's, the workers') do not survive a fork, and those runs
# then wait for ever, which mutmut, timing CPU seconds, never ends
TESTS = [
    "test_checked_values.py",
    "test_columnar.py",
    "test_compare.py",
    "test_compat.py",
    "test_data_model.py",
    "test_decimal.py",
    "test_edge_branches.py",
    "test_errors.py",
    "test_extension_points.py",
    "test_format_io.py",
    "test_format_rules.py",
    "test_hostile_input.py",
    "test_input_checks.py",
    "test_kernel_references.py",
    "test_locate_once.py",
    "test_locate_paths.py",
    "test_metric_invariants.py",
    "test_metric_model.py",
    "test_ndcg_gains.py",
    "test_packed_ids.py",
    "test_properties.py",
    "test_query_grades.py",
    "test_rag_set_metrics.py",
    "test_scoring.py",
    "test_single_ranking.py",  # the one-ranking twins (OneRanking, log2_ranks_list)
    "test_statistics.py",
    "test_store.py",
    "test_stream.py",
    "test_trec_fast.py",
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", default=",".join(TARGETS), help="paths under ragmetrics/")
    parser.add_argument("--workdir", default="/tmp/ragmetrics-mutation")
    parser.add_argument("--max-children", default="2")
    parser.add_argument(
        "--tests",
        default=",".join(TESTS),
        help="test files to run (a subset of the default list: a lower bound on the kill rate)",
    )
    parser.add_argument(
        "--only",
        default="",
        help="a file of mutant names, one a line (the survivors of an earlier run, to run again)",
    )
    args = parser.parse_args()
    if shutil.which("mutmut") is None and not (Path(sys.executable).parent / "mutmut").exists():
        sys.exit("mutmut is not installed: pip install mutmut")
    targets = [m.strip() for m in args.modules.split(",") if m.strip()]
    workdir = Path(args.workdir)
    _checkout(workdir)
    tests = {t.strip() for t in args.tests.split(",") if t.strip()}
    unknown = sorted(tests - set(TESTS))
    if unknown:
        sys.exit(f"not in-process tests of this tool: {', '.join(unknown)}")
    _configure(workdir, targets, tests)
    mutmut = str(Path(sys.executable).parent / "mutmut")
    only = Path(args.only).read_text().split() if args.only else []
    subprocess.run(
        [mutmut, "run", "--max-children", args.max_children, *only], cwd=workdir, check=False
    )
    done = subprocess.run(
        [mutmut, "results", "--all", "true"], cwd=workdir, capture_output=True, text=True
    )
    _report(done.stdout, targets)
    return 0


def _checkout(workdir: Path) -> None:
    if workdir.exists():
        subprocess.run(["git", "worktree", "remove", "--force", str(workdir)], cwd=ROOT)
        shutil.rmtree(workdir, ignore_errors=True)
    subprocess.run(["git", "worktree", "prune"], cwd=ROOT, check=True)
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(workdir), "HEAD"], cwd=ROOT, check=True
    )


def _configure(workdir: Path, targets: list[str], tests: set[str]) -> None:
    for test in (workdir / "tests").glob("test_*.py"):
        if test.name not in tests:
            test.unlink()
    modules = sorted(p.relative_to(workdir).as_posix() for p in (workdir / PACKAGE).rglob("*.py"))
    wanted = {(PACKAGE / t).as_posix() for t in targets}
    skipped = [m for m in modules if m not in wanted]
    pyproject = workdir / "pyproject.toml"
    text = pyproject.read_text()
    # the mutated copy of src/ must come first on the path, before the editable install
    text = text.replace('["tests", "src"]', '["tests"]\npythonpath = ["src"]')
    text = text.replace('"-ra --strict-markers --doctest-modules"', '"-q -x"')
    listed = ",\n".join(f'    "{m}"' for m in skipped)
    text += (
        "\n[tool.mutmut]\n"
        'paths_to_mutate = ["src/"]\n'
        'tests_dir = ["tests/"]\n'
        f"do_not_mutate = [\n{listed},\n]\n"
    )
    pyproject.write_text(text)


def _report(results: str, targets: list[str]) -> None:
    """Per module: mutants, killed, survived, kill rate; then the survivors' names."""
    status: dict[str, Counter[str]] = {t: Counter() for t in targets}
    survivors: dict[str, list[str]] = {t: [] for t in targets}
    for line in results.splitlines():
        match = re.match(r"\s*ragmetrics\.([\w.]+)\.x[_\w]*__mutmut_\d+: (\w[\w ]*)", line)
        if not match:
            continue
        dotted, outcome = match.groups()
        module = next((t for t in targets if dotted.startswith(t[:-3].replace("/", "."))), None)
        if module is None:
            continue
        status[module][outcome.strip()] += 1
        if outcome.strip() in ("survived", "no tests"):
            survivors[module].append(line.strip().split(":")[0])
    header = ("module", "mutants", "killed", "survived", "untested", "kill rate")
    print("\n{:28} {:>8} {:>8} {:>9} {:>9} {:>10}".format(*header))
    total_killed = total = 0
    for module, counts in status.items():
        n = sum(counts.values())
        killed = counts["killed"] + counts["timeout"]
        total += n
        total_killed += killed
        rate = f"{killed / n:.0%}" if n else "-"
        untested = counts["no tests"]
        print(f"{module:28} {n:8} {killed:8} {counts['survived']:9} {untested:9} {rate:>10}")
    if total:
        print(f"{'all':28} {total:8} {total_killed:8} {'':19} {total_killed / total:10.0%}")
    for module, names in survivors.items():
        if names:
            print(f"\nsurvivors in {module}:")
            print("\n".join(f"  {name}" for name in names))


if __name__ == "__main__":
    raise SystemExit(main())
