"""What comparing two runs costs, beside the evaluations it needs: ``compare()`` (the
default randomization test with its interval, and a bootstrap interval per run and metric)
and ``write_report`` (HTML with its figures), at 10,000 and 100,000 queries.

The workload is ``msmarco`` of bench_metrics.py (ids from 8.8M, 100 deep); the second run is
the first with its scores perturbed, as two retrievers over one corpus differ. Each size runs
in a fresh process; times are medians of ``--repeat`` runs.

    python benchmarks/bench_compare.py                 # 10,000 and 100,000 queries
    python benchmarks/bench_compare.py --queries 20000
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_metrics import OURS, generate


def job(n_queries: int, repeat: int) -> dict[str, float]:
    import ragmetrics as rm
    from ragmetrics.report._report import write_report

    qrels_dict, run_dict = generate(n_queries, workload="msmarco")
    rng = random.Random(5)
    other = {q: {d: s + rng.gauss(0, 0.3) for d, s in docs.items()} for q, docs in run_dict.items()}
    qrels = rm.Qrels.from_dict(qrels_dict)
    runs = {"bm25": rm.Run.from_dict(run_dict), "hybrid": rm.Run.from_dict(other)}
    del qrels_dict, run_dict, other
    times: dict[str, list[float]] = {"evaluate (both runs)": [], "compare": [], "report": []}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(repeat):
            started = time.perf_counter()
            for run in runs.values():
                rm.evaluate(qrels, run, OURS)
            times["evaluate (both runs)"].append(time.perf_counter() - started)
            started = time.perf_counter()
            comparison = rm.compare(qrels, runs, OURS, progress=False)
            times["compare"].append(time.perf_counter() - started)
            started = time.perf_counter()
            write_report(comparison, Path(folder) / "report.html", qrels=qrels, runs=runs)
            times["report"].append(time.perf_counter() - started)
    return {label: statistics.median(values) for label, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", default="10000,100000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--job", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.job:
        print(json.dumps(job(args.job, args.repeat)))
        return
    print(f"two runs x {len(OURS)} metrics ({', '.join(OURS)}); median of {args.repeat}\n")
    print(f"{'queries':>9} {'evaluate both':>14} {'compare':>9} {'report':>8} {'compare/eval':>13}")
    for n in map(int, args.queries.split(",")):
        command = [sys.executable, __file__, "--job", str(n), "--repeat", str(args.repeat)]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        t = json.loads(done.stdout.strip().splitlines()[-1])
        ratio = t["compare"] / t["evaluate (both runs)"]
        print(
            f"{n:>9,} {t['evaluate (both runs)']:>13.2f}s {t['compare']:>8.2f}s "
            f"{t['report']:>7.2f}s {ratio:>12.1f}x"
        )


if __name__ == "__main__":
    main()
