"""Expected outputs of NIST trec_eval 10.0, committed, so that a fresh clone can check the
parity claim without the C program.

The inputs are made here, deterministically, from a seed: graded and binary qrels, runs with
ties, negative grades, queries on one side only, ids that sort differently as strings and as
numbers, scores in every notation, deep rankings cut at 1,000, and files trec_eval refuses (a
doc twice in a ranking or in the qrels). ``tests/data/trec_eval/`` holds them, the output and
exit code of the real program for each case (a flag set over an input pair), and a manifest
with every file's SHA-256.

Regenerate (where the C program is, e.g. built with ``../shared/tools/build-trec-eval.sh``)::

    python tools/trec_eval_parity.py --trec-eval /tmp/te-build/trec_eval

``tests/test_trec_eval_committed.py`` checks, on every run of the suite, that the inputs this
module makes are byte for byte the committed ones (a change to the generator without new
expected outputs fails), and that ``ragmetrics trec_eval`` prints the committed output and
exits with the committed code for every case.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "tests" / "data" / "trec_eval"

# each input pair, and the flag sets it is run with (the flags that change the output)
FLAGS = {
    "default": [],
    "q": ["-q"],
    "q_c": ["-q", "-c"],
    "all": ["-m", "all_trec"],
    "q_all": ["-q", "-m", "all_trec"],
    "J_l2": ["-J", "-l", "2", "-m", "all_trec"],
    "c_M10_N50": ["-c", "-M", "10", "-N", "50", "-m", "all_trec"],
    "n_cut": ["-n", "-m", "official", "-m", "ndcg_cut.3,7", "-m", "P.2,13"],
}
CASES: dict[str, list[str]] = {
    "graded": list(FLAGS),
    "binary": ["default", "q", "all", "J_l2"],
    "ties": ["q", "all", "q_c"],
    "adversarial": ["q", "q_c", "all", "c_M10_N50"],
    "deep": ["default", "all"],
    "repeated_in_run": ["q"],
    "judged_twice": ["q", "q_c"],
}


def _ids(rng: random.Random, n: int, style: str) -> list[str]:
    if style == "numeric":  # "10" sorts before "9" as a string
        return [str(i) for i in rng.sample(range(1, 400), n)]
    if style == "odd":
        alphabet = "abcXYZ019_-.:/é中"
        return [
            "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 9))) + f"{i}"
            for i in range(n)
        ]
    return [f"{style}{i:03d}" for i in range(n)]


def _score(rng: random.Random, value: float, notation: str) -> str:
    if notation == "exp":
        return f"{value:.6e}"
    if notation == "int":
        return str(int(value * 100))
    if notation == "neg":
        return f"{-value:.5f}"
    return f"{value:.4f}"


def _pair(seed: int, *, grades: list[int], queries: int, docs: int, depth: int,
          style: str = "q", ties: bool = False, notation: str = "plain",
          one_sided: bool = False) -> tuple[str, str]:  # fmt: skip
    rng = random.Random(seed)
    query_ids = _ids(rng, queries, "numeric" if style == "numeric" else style)
    qrels, run = [], []
    for n, query in enumerate(query_ids):
        pool = [f"D{rng.randrange(10**6):06d}" for _ in range(docs)]
        pool = list(dict.fromkeys(pool))
        judged = rng.sample(pool, max(1, len(pool) // 3))
        if not (one_sided and n % 5 == 4):  # a query only the run has
            qrels += [f"{query} 0 {d} {rng.choice(grades)}" for d in judged]
        if one_sided and n % 5 == 3:  # a query only the qrels have
            continue
        ranked = rng.sample(pool, min(depth, len(pool)))
        for rank, doc in enumerate(ranked, start=1):
            value = round(rng.random(), 1 if ties else 6) + (0 if ties else 1e-9 * rank)
            run.append(f"{query} Q0 {doc} {rank} {_score(rng, value, notation)} run{seed}")
    rng.shuffle(run)  # trec_eval sorts; so must we
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n"


def make_inputs(folder: Path) -> dict[str, tuple[Path, Path]]:
    """Write every case's qrels and run into ``folder``; the same bytes on every call."""
    folder.mkdir(parents=True, exist_ok=True)
    pairs = {
        "graded": _pair(1, grades=[0, 1, 2, 3], queries=12, docs=60, depth=40),
        "binary": _pair(2, grades=[0, 1], queries=10, docs=50, depth=30),
        "ties": _pair(3, grades=[0, 1, 2], queries=8, docs=40, depth=35, ties=True),
        "adversarial": _pair(
            4, grades=[-1, 0, 1, 2, 4], queries=10, docs=40, depth=25, style="numeric",
            notation="exp", one_sided=True,
        ),
        "deep": _pair(5, grades=[0, 1], queries=3, docs=1300, depth=1200, notation="neg"),
    }  # fmt: skip
    qrels, run = pairs["graded"]
    first_run_line = run.splitlines()[0]
    pairs["repeated_in_run"] = (qrels, run + first_run_line.replace(" 1 ", " 999 ", 1) + "\n")
    first_judgment = qrels.splitlines()[len(qrels.splitlines()) // 2]
    pairs["judged_twice"] = (qrels + first_judgment + "\n", run)
    paths = {}
    for name, (qrels_text, run_text) in pairs.items():
        qrels_path, run_path = folder / f"{name}.qrels", folder / f"{name}.run"
        qrels_path.write_text(qrels_text, encoding="utf-8")
        run_path.write_text(run_text, encoding="utf-8")
        paths[name] = (qrels_path, run_path)
    return paths


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trec-eval", required=True, help="the path of NIST's trec_eval 10.0")
    args = parser.parse_args()
    inputs = FOLDER / "inputs"
    expected = FOLDER / "expected"
    expected.mkdir(parents=True, exist_ok=True)
    paths = make_inputs(inputs)
    version = subprocess.run([args.trec_eval, "-v"], capture_output=True, text=True)
    manifest: dict[str, object] = {
        "program": (version.stdout + version.stderr).strip(),
        "inputs": {p.name: sha256(p) for pair in paths.values() for p in pair},
        "cases": [],
    }
    cases: list[dict[str, object]] = []
    for name, flag_names in CASES.items():
        qrels_path, run_path = paths[name]
        for flag_name in flag_names:
            flags = FLAGS[flag_name]
            done = subprocess.run(
                [args.trec_eval, *flags, qrels_path.name, run_path.name],
                capture_output=True,
                cwd=inputs,
            )
            out = expected / f"{name}__{flag_name}.txt"
            out.write_bytes(done.stdout)
            cases.append(
                {
                    "input": name,
                    "flags": flags,
                    "expected": out.name,
                    "exit": done.returncode,
                    "sha256": sha256(out),
                }
            )
    manifest["cases"] = cases
    (FOLDER / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"{len(cases)} cases written to {FOLDER.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
