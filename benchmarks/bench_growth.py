"""How the cost of reading and evaluating grows with the run.

Runs of 10^3 .. 10^7 rows (queries of 100 docs, ids up to 8.8 million, scores with ties,
2% of the rows judged) are read and evaluated on five metrics from each source: dicts built
in Python, a TREC file and a Parquet file. Each size runs in a fresh process, so that the
peak resident memory is the job's own; the time is the median of ``--repeat`` runs. The
slope of log(time) against log(rows) between the two largest sizes says how the cost grows
(1.0: linear; n log n shows as slightly above 1 at these sizes).

    python benchmarks/bench_growth.py [--max-exponent 7] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

METRICS = ["ndcg@10", "map", "recall@100", "mrr@10", "P@5"]

_JOB = r"""
import json, sys, time
import numpy as np
import ragmetrics as rm

source, rows, folder, repeat = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
metrics = json.loads(sys.argv[5])
qrels = rm.Qrels.from_trec(f"{folder}/qrels-{rows}.txt")
times = []
for _ in range(repeat):
    start = time.perf_counter()
    if source == "dicts":
        data = np.load(f"{folder}/run-{rows}.npz")
        run = {}
        for q, d, s in zip(data["q"].tolist(), data["d"].tolist(), data["s"].tolist()):
            run.setdefault(q, {})[d] = s
        rm.evaluate(qrels, run, metrics)
    else:
        suffix = "txt" if source == "trec" else "parquet"
        rm.evaluate(qrels, rm.read_run(f"{folder}/run-{rows}.{suffix}"), metrics)
    times.append(time.perf_counter() - start)
# the peak resident memory of this process (VmHWM: ru_maxrss would carry the parent's
# peak over the exec on Linux)
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM")) / 1024
print(json.dumps({"times": times, "peak_mb": peak}))
"""


def _write(folder: Path, rows: int) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(rows)
    n_queries = max(1, rows // 100)
    q = np.repeat(np.arange(n_queries), 100)[:rows].astype(str)
    d = rng.integers(0, 8_841_823, rows).astype(str)
    s = np.round(rng.random(rows) * 50, 1)
    np.savez(folder / f"run-{rows}.npz", q=q, d=d, s=s)
    pq.write_table(
        pa.table({"query_id": q, "doc_id": d, "score": s}), folder / f"run-{rows}.parquet"
    )
    with (folder / f"run-{rows}.txt").open("w") as out:
        out.writelines(
            f"{a} Q0 {b} 0 {c} r\n" for a, b, c in zip(q.tolist(), d.tolist(), s.tolist())
        )
    pick = rng.random(rows) < 0.02
    with (folder / f"qrels-{rows}.txt").open("w") as out:
        seen = set()
        for a, b in zip(q[pick].tolist(), d[pick].tolist()):
            if (a, b) not in seen:
                seen.add((a, b))
                out.write(f"{a} 0 {b} 1\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-exponent", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sizes = [10**e for e in range(3, args.max_exponent + 1)]
    results: dict[str, list[tuple[int, float, float]]] = {}
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        for rows in sizes:
            _write(folder, rows)
            for source in ("dicts", "trec", "parquet"):
                done = subprocess.run(
                    [sys.executable, "-c", _JOB, source, str(rows), name, str(args.repeat),
                     json.dumps(METRICS)],
                    capture_output=True, text=True, check=True,
                )  # fmt: skip
                found = json.loads(done.stdout)
                results.setdefault(source, []).append(
                    (rows, statistics.median(found["times"]), found["peak_mb"])
                )
    print(f"read and evaluate {METRICS}; median of {args.repeat}; peak RSS of the process")
    print(f"{'rows':>10} " + " ".join(f"{s + ' s':>12} {s + ' MB':>12}" for s in results))
    for i, rows in enumerate(sizes):
        cells = " ".join(f"{results[s][i][1]:12.3f} {results[s][i][2]:12.0f}" for s in results)
        print(f"{rows:>10} {cells}")
    for source, found in results.items():
        (n1, t1, _), (n2, t2, _) = found[-2], found[-1]
        slope = math.log(t2 / t1) / math.log(n2 / n1)
        print(f"{source}: time grows as rows^{slope:.2f} between {n1:,} and {n2:,} rows")


if __name__ == "__main__":
    main()
