"""Fusing two runs (hybrid retrieval: a lexical and a dense run over one corpus), ragmetrics
against ranx, side by side in one process: ``fuse`` alone on runs already built, for the
methods users reach for, after the default min-max normalization.

The workloads are bench_metrics.py's ``msmarco`` (ids from 8.8M, 100 deep) and ``rag``
(UUID4 chunk ids, 20 deep); the second run keeps about half of the first's docs, re-scored,
and retrieves new ones for the rest. ranx compiles its kernels on a small input first (not
timed). Times are medians of ``--repeat`` runs, the two libraries alternating.

    python benchmarks/bench_fusion.py                      # 100,000 queries, both workloads
    python benchmarks/bench_fusion.py --queries 20000 --methods rrf,wsum
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_metrics import generate

METHODS = ["rrf", "sum", "mnz", "wsum", "isr", "bordafuse"]


def second_run(run: dict[str, dict[str, float]], workload: str, seed: int = 7) -> dict:
    """Half of each ranking kept (re-scored), the rest new docs of the same corpus."""
    rng = random.Random(seed)
    other: dict[str, dict[str, float]] = {}
    for query_id, docs in run.items():
        ranked = {}
        for doc in docs:
            if rng.random() < 0.5:
                ranked[doc] = rng.random()
            elif workload == "rag":
                ranked[str(uuid.UUID(int=rng.getrandbits(128), version=4))] = rng.random()
            else:
                ranked[str(rng.randrange(8_841_823))] = rng.random()
        other[query_id] = ranked
    return other


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--workloads", default="msmarco,rag")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import ranx

    import ragmetrics as rm

    warm = [ranx.Run({"q": {"a": 1.0, "b": 0.5}}), ranx.Run({"q": {"b": 1.0, "c": 0.2}})]
    for method in args.methods.split(","):
        params = {"weights": [0.5, 0.5]} if method.startswith("w") else None
        ranx.fuse(warm, method=method, params=params)

    print(f"{args.queries:,} queries, two runs, min-max normalization; median of {args.repeat}")
    print(f"{'workload':<9} {'method':<10} {'ragmetrics':>11} {'ranx':>9} {'ranx / ours':>12}")
    for workload in args.workloads.split(","):
        _, first = generate(args.queries, workload=workload)
        second = second_run(first, workload)
        ours = [rm.Run.from_dict(first, name="bm25"), rm.Run.from_dict(second, name="dense")]
        theirs = [ranx.Run(first, name="bm25"), ranx.Run(second, name="dense")]
        del first, second
        for method in args.methods.split(","):
            params = {"weights": [0.5, 0.5]} if method.startswith("w") else None
            times: dict[str, list[float]] = {"ours": [], "ranx": []}
            for _ in range(args.repeat):
                started = time.perf_counter()
                rm.fuse(ours, method=method, params=params)
                times["ours"].append(time.perf_counter() - started)
                started = time.perf_counter()
                ranx.fuse(theirs, method=method, params=params)
                times["ranx"].append(time.perf_counter() - started)
            mine, other = (statistics.median(times[k]) for k in ("ours", "ranx"))
            print(
                f"{workload:<9} {method:<10} {mine:>10.2f}s {other:>8.2f}s {other / mine:>11.1f}x",
                flush=True,
            )


if __name__ == "__main__":
    main()
