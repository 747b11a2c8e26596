"""The least work any tool must do, timed beside the tools: where a speed goal lies past it.

Three of the speed goals are measured against a floor, each in one run, side by side:

- **from dicts** (goal: 2x pytrec_eval): a library without compiled code of its own must read
  every id and value of the caller's dicts once (a tuple of each query's ids, its values into
  an array: the least that keeps the numbers safe from later changes to the dicts), and find
  which results are judged (one ``dict.get`` per result, the cheapest lookup Python has), and
  then free what it made. The floor prints both steps;
- **from Parquet** (goal: 10x pytrec_eval): pyarrow reading the two files into memory;
- **trec_eval -q** (goal: 1.5x the C program): the interpreter starting and importing numpy.

Each job runs in a fresh subprocess (median of ``--repeat``); the jobs of a workload are
timed one after the other in one run. For each goal the table shows the time the goal
allows (the peer's median divided by the goal's ratio), the floor's share of it, and ours.

    python benchmarks/bench_floors.py                          # rag and msmarco, 100,000 queries
    python benchmarks/bench_floors.py --trec-eval /path/to/trec_eval
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from itertools import chain, repeat
from operator import attrgetter
from pathlib import Path

import bench_cli
import bench_metrics

GOALS = {"dict": 2.0, "parquet": 10.0}  # times faster than pytrec_eval


def floor_job(kind: str, n_queries: int, repeats: int, folder: str, workload: str) -> dict:
    """Median seconds of one floor, repeated in this process."""
    import numpy as np

    if kind == "parquet":
        import pyarrow.parquet

        def once() -> None:
            tables = [
                pyarrow.parquet.read_table(Path(folder) / f"{name}.parquet")
                for name in ("qrels", "run")
            ]
            del tables

    else:
        qrels, run = bench_metrics.generate(n_queries, workload=workload)

        def once() -> None:
            run_ids = list(map(tuple, run.values()))
            scores = np.fromiter(chain.from_iterable(map(dict.values, run.values())), float)
            judged_ids = list(map(tuple, qrels.values()))
            grades = np.fromiter(chain.from_iterable(map(dict.values, qrels.values())), np.int64)
            if kind == "lookup":  # each result's grade, or NaN where it is not judged
                gets = map(attrgetter("get"), qrels.values())
                found = np.fromiter(
                    chain.from_iterable(map(map, gets, run.values(), repeat(repeat(math.nan)))),
                    float,
                )
                del found
            del run_ids, scores, judged_ids, grades

    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        once()
        times.append(time.perf_counter() - started)
    return {"median": statistics.median(times)}


def _median(command: list[str]) -> float:
    """The median a job run in a fresh process prints (JSON, its last line)."""
    done = subprocess.run(command, capture_output=True, text=True, env=os.environ, check=True)
    return float(json.loads(done.stdout.strip().splitlines()[-1])["median"])


def _tool(tool: str, source: str, folder: str, args: argparse.Namespace, workload: str) -> float:
    return _median(
        bench_metrics.job_command(tool, source, folder, args.queries, workload, args.repeat)
    )


def _floor(kind: str, folder: str, args: argparse.Namespace, workload: str) -> float:
    flags = ["--queries", str(args.queries), "--repeat", str(args.repeat)]
    return _median([sys.executable, __file__, *flags, "--floor", kind, folder, workload])


def _row(label: str, seconds: float, allowed: float) -> None:
    print(f"  {label:<58} {seconds:7.3f} s  {100 * seconds / allowed:5.0f}% of the allowed time")


def workload_floors(args: argparse.Namespace, workload: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        qrels, run = bench_metrics.generate(args.queries, workload=workload)
        bench_metrics.write_parquet(qrels, run, Path(folder))
        del qrels, run
        for source in ("dict", "parquet"):
            peer = _tool("pytrec_eval", source, folder, args, workload)
            read = _floor("read" if source == "dict" else "parquet", folder, args, workload)
            lookup = _floor("lookup", folder, args, workload) if source == "dict" else None
            ours = _tool("ragmetrics", source, folder, args, workload)
            allowed = peer / GOALS[source]
            print(
                f"\n{workload}, from {'dicts' if source == 'dict' else 'Parquet'}: goal "
                f"{GOALS[source]:g}x pytrec_eval ({peer:.3f} s) allows {allowed:.3f} s"
            )
            if source == "dict":
                _row("floor: read every id and value once, then free them", read, allowed)
                assert lookup is not None
                _row("floor: that, and one lookup per result in its judgments", lookup, allowed)
            else:
                _row("floor: pyarrow reads the two files", read, allowed)
            _row("ragmetrics, the whole job", ours, allowed)
            floor = read if lookup is None else lookup
            print(
                f"  ratio reached: {peer / ours:.1f}x; the floor alone allows {peer / floor:.1f}x"
            )


def cli_floors(args: argparse.Namespace) -> None:
    if not args.trec_eval:
        print("\n(trec_eval -q: no C trec_eval given; --trec-eval PATH or $TREC_EVAL)")
        return
    ours = str(bench_cli.BIN / "ragmetrics")
    with tempfile.TemporaryDirectory() as name:
        bench_cli.write_track(Path(name))
        files = [str(Path(name) / "qrels.txt"), str(Path(name) / "run.txt")]
        calls = {
            "C": [args.trec_eval, "-q", *files],
            "python": [sys.executable, "-c", "pass"],
            "numpy": [sys.executable, "-c", "import numpy"],
            "ours": [ours, "trec_eval", "-q", *files],
        }
        for command in calls.values():  # a first call of each writes the compiled modules
            bench_cli.timed(command)
        times: dict[str, list[float]] = {label: [] for label in calls}
        for _ in range(args.cli_repeat):
            for label, command in calls.items():
                times[label].append(bench_cli.timed(command)[0])
    median = {label: statistics.median(values) for label, values in times.items()}
    allowed = 1.5 * median["C"]
    print(
        f"\ntrec_eval -q, one run of 100 queries x 1,000 results: goal 1.5x the C program "
        f"({median['C']:.3f} s) allows {allowed:.3f} s"
    )
    _row("floor: the interpreter starts", median["python"], allowed)
    _row("floor: the interpreter starts and imports numpy", median["numpy"], allowed)
    _row("ragmetrics trec_eval -q, the whole process", median["ours"], allowed)
    print(f"  ratio reached: {median['ours'] / median['C']:.2f}x the C program's wall time")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--workloads", default="rag,msmarco")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cli-repeat", type=int, default=11)
    parser.add_argument("--trec-eval", default=os.environ.get("TREC_EVAL"))
    parser.add_argument("--floor", nargs=3, metavar=("KIND", "FOLDER", "WORKLOAD"),
                        help=argparse.SUPPRESS)  # fmt: skip
    args = parser.parse_args()
    if args.floor:
        kind, folder, workload = args.floor
        print(json.dumps(floor_job(kind, args.queries, args.repeat, folder, workload)))
        return
    print(f"{args.queries:,} queries; medians of {args.repeat} repeats, each job in its process")
    for workload in args.workloads.split(","):
        workload_floors(args, workload)
    cli_floors(args)


if __name__ == "__main__":
    main()
