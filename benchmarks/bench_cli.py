"""Start-up and the command line, timed as scripts call them: one process per call.

Prints, as medians of alternating runs:

- ``python -c "import ragmetrics"`` and ``ragmetrics --version`` (the cost every call pays);
- ``ragmetrics trec_eval -q`` against NIST's C ``trec_eval -q`` on the same TREC files, one
  run of 100 queries x 1,000 results with tied scores (a TREC ad hoc run's shape), their
  ratio, and whether the two printed the same lines. The run is written twice: its ties in
  trec_eval's order (doc id descending, as a run sorted by ``(score, doc)`` comes out), and
  with doc ids ascending (as Anserini and NIST's own test runs write them); ``-m all_trec``
  reads the first;
- ``ragmetrics trec_eval -q -c`` on a run shaped like a TREC Robust track's (100 topics x
  1,000 docs, ids in the styles of its four collections, scores with four decimals) against
  qrels of 1,400 judgments a topic, most of them not relevant, as pooled judging leaves them;
- ``-m all_trec`` and ``-q -m all_trec`` on a run of 5,000 queries x 100 results (the
  shape of a RAG benchmark's run): every measure, its walks down each ranking, and half a
  million lines printed with ``-q``; and the preference measures on the same files read as
  preferences (``-R qrels_prefs -m all_prefs``: every pair of a query's judged docs);
- with ``--qrels FILE --run FILE``, the same on files of the user's own (a real TREC run);
  with ``--qrels FILE`` alone, on those qrels and a run drawn from their pool (real qrels,
  such as NIST's for the Robust collections' topics, when no real run is at hand).

The C program is not part of this project: give its path with ``--trec-eval`` (or
``$TREC_EVAL``); it builds from NIST's sources (github.com/usnistgov/trec_eval) with ``make``.
Without it, the start-up figures alone are printed.

    python benchmarks/bench_cli.py --trec-eval /path/to/trec_eval
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def write_track(folder: Path, n_queries: int = 100, depth: int = 1000, seed: int = 7) -> None:
    """A TREC-shaped run (scores on a coarse grid: ties) and qrels graded 0..2; the run as
    ``run.txt`` (ties by doc id descending) and ``run-ties-up.txt`` (ascending)."""
    rng = random.Random(seed)
    with (
        open(folder / "qrels.txt", "w") as qrels,
        open(folder / "run.txt", "w") as run,
        open(folder / "run-ties-up.txt", "w") as run_up,
    ):
        for q in range(301, 301 + n_queries):
            docs = [f"FBIS{rng.randrange(10**6):07d}" for _ in range(depth)]
            docs = list(dict.fromkeys(docs))
            judged = {
                doc: rng.choice([0, 0, 1, 2]) for doc in rng.sample(docs, min(150, len(docs)))
            }
            for doc in (f"LA{rng.randrange(10**6):07d}" for _ in range(100)):
                judged.setdefault(doc, rng.choice([0, 1]))  # judged, never retrieved
            qrels.writelines(f"{q} 0 {doc} {grade}\n" for doc, grade in judged.items())
            scored = sorted(((round(rng.random(), 3), d) for d in docs), reverse=True)
            run.writelines(f"{q} Q0 {d} {i} {s:.3f} bench\n" for i, (s, d) in enumerate(scored, 1))
            up = sorted(scored, key=lambda pair: (-pair[0], pair[1]))
            run_up.writelines(f"{q} Q0 {d} {i} {s:.3f} bench\n" for i, (s, d) in enumerate(up, 1))


def write_robust(folder: Path, seed: int = 3) -> None:
    """A run and qrels shaped like the Robust track's: ``robust-qrels.txt``, ``robust-run.txt``."""
    rng = random.Random(seed)

    def doc_id() -> str:
        kind = rng.random()
        if kind < 0.3:
            return f"FBIS{rng.randint(3, 4)}-{rng.randrange(1, 70_000)}"
        if kind < 0.55:
            return f"FT9{rng.randint(11, 44)}-{rng.randrange(1, 16_000)}"
        if kind < 0.8:
            day = f"{rng.randint(1, 12):02d}{rng.randint(1, 31):02d}{rng.randint(89, 90)}"
            return f"LA{day}-{rng.randrange(1, 200):04d}"
        day = f"{rng.randint(1, 12):02d}{rng.randint(1, 31):02d}"
        return f"FR94{day}-{rng.randint(0, 2)}-{rng.randrange(1, 400):05d}"

    topics = sorted(rng.sample(range(303, 690), 100))
    with (
        open(folder / "robust-qrels.txt", "w") as qrels,
        open(folder / "robust-run.txt", "w") as run,
    ):
        for topic in topics:
            pool = list(dict.fromkeys(doc_id() for _ in range(1_400)))
            relevant = set(rng.sample(pool, rng.randint(5, 120)))
            qrels.writelines(f"{topic} 0 {d} {int(d in relevant)}\n" for d in sorted(pool))
            shuffled = rng.sample(pool, len(pool))
            retrieved = list(dict.fromkeys(shuffled[:700] + [doc_id() for _ in range(400)]))[:1000]
            scores = sorted((round(rng.gauss(10, 3), 4) for _ in retrieved), reverse=True)
            run.writelines(
                f"{topic} Q0 {d} {i} {s} robustRun\n"
                for i, (d, s) in enumerate(zip(retrieved, scores, strict=True))
            )


def write_run_for(qrels_path: Path, folder: Path, depth: int = 1000, seed: int = 3) -> Path:
    """A run for real qrels (each topic's ``depth`` results, ``run-for-qrels.txt``), drawn as
    a ranker's run meets its pool: 10-60 of the topic's relevant docs and up to 300 of its
    judged non-relevant ones, the rest docs judged for other topics only (real ids of the
    collection, unjudged for this one); relevant docs score higher on average, scores with
    four decimals, ties ranked by doc id."""
    rng = random.Random(seed)
    judged: dict[str, dict[str, int]] = {}
    with open(qrels_path) as lines:
        for line in lines:
            topic, _, doc, grade = line.split()
            judged.setdefault(topic, {})[doc] = int(grade)
    every = sorted({doc for docs in judged.values() for doc in docs})
    path = folder / "run-for-qrels.txt"
    with open(path, "w") as run:
        for topic, grades in judged.items():
            relevant = [d for d, g in grades.items() if g > 0]
            other = [d for d, g in grades.items() if g <= 0]
            picked = rng.sample(relevant, min(len(relevant), rng.randint(10, 60)))
            picked += rng.sample(other, min(len(other), 300))
            seen = set(picked)
            while len(picked) < min(depth, len(every)):
                doc = rng.choice(every)
                if doc not in seen:
                    picked.append(doc)
                    seen.add(doc)
            scored = sorted(
                (
                    (round(max(rng.gauss(8.0 if grades.get(d, 0) > 0 else 5.0, 2.0), 0.0), 4), d)
                    for d in picked[:depth]
                ),
                key=lambda pair: (-pair[0], pair[1]),
            )
            run.writelines(
                f"{topic} Q0 {d} {i} {score:.4f} bm25\n" for i, (score, d) in enumerate(scored, 1)
            )
    return path


# as an installed package runs: compiled modules kept (an environment that turns bytecode
# off would charge every call the compilation of the package)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(command: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=ENV)
    return time.perf_counter() - started, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trec-eval", default=os.environ.get("TREC_EVAL"))
    parser.add_argument("--repeat", type=int, default=11)
    parser.add_argument(
        "--qrels",
        help="real qrels to time -q -c on as well: with --run, that run; alone, a run drawn "
        "from the qrels' own pool (write_run_for)",
    )
    parser.add_argument("--run", help="a real TREC run to time with -q -c (with --qrels)")
    args = parser.parse_args()
    ours = str(BIN / "ragmetrics")
    calls = {
        "python -c 'import ragmetrics'": [sys.executable, "-c", "import ragmetrics"],
        "python -c 'pass' (the interpreter alone)": [sys.executable, "-c", "pass"],
        "ragmetrics --version": [ours, "--version"],
    }
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        write_track(folder)
        write_robust(folder)
        many = folder / "many"
        many.mkdir()
        write_track(many, n_queries=5000, depth=100)
        wide = [str(many / "qrels.txt"), str(many / "run.txt")]
        qrels = str(folder / "qrels.txt")
        robust = [str(folder / "robust-qrels.txt"), str(folder / "robust-run.txt")]
        prefs = ["-R", "qrels_prefs", "-m", "all_prefs", *wide]  # the judgments as preferences
        cases = {  # label: the arguments after the program's name
            "-q (100 x 1,000)": ["-q", qrels, str(folder / "run.txt")],
            "-q, ties written up": ["-q", qrels, str(folder / "run-ties-up.txt")],
            "-q -m all_trec": ["-q", "-m", "all_trec", qrels, str(folder / "run.txt")],
            "-q -c, Robust-shaped": ["-q", "-c", *robust],
            "-m all_trec (5,000 x 100)": ["-m", "all_trec", *wide],
            "-q -m all_trec (5,000 x 100)": ["-q", "-m", "all_trec", *wide],
            "-R qrels_prefs -m all_prefs (5,000 x 100)": prefs,
        }
        if args.qrels:
            run = args.run or str(write_run_for(Path(args.qrels), folder))
            cases["-q -c, your files"] = ["-q", "-c", args.qrels, run]
        for case, arguments in cases.items():
            calls[f"ragmetrics trec_eval {case}"] = [ours, "trec_eval", *arguments]
            if args.trec_eval:
                calls[f"C trec_eval {case}"] = [args.trec_eval, *arguments]
        for command in calls.values():  # a first call of each writes the compiled modules
            timed(command)
        times: dict[str, list[float]] = {label: [] for label in calls}
        outputs: dict[str, str] = {}
        for _ in range(args.repeat):  # alternating: a noisy neighbour hits every call alike
            for label, command in calls.items():
                seconds, outputs[label] = timed(command)
                times[label].append(seconds)
    print(f"median of {args.repeat} alternating runs, wall time of the whole process\n")
    for label, values in times.items():
        print(f"{label:<44} {statistics.median(values):7.3f} s")
    if args.trec_eval:
        for case in cases:
            mine = statistics.median(times[f"ragmetrics trec_eval {case}"])
            theirs = statistics.median(times[f"C trec_eval {case}"])
            same = outputs[f"ragmetrics trec_eval {case}"] == outputs[f"C trec_eval {case}"]
            print(
                f"\n{case}: ragmetrics / C trec_eval = {mine / theirs:.2f}x the wall time; "
                f"the same bytes: {same}"
            )
    else:
        print("\n(no C trec_eval given: --trec-eval PATH or $TREC_EVAL)")


if __name__ == "__main__":
    main()
