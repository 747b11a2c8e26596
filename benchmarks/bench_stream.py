"""Streaming evaluation at scale: throughput and peak memory, against evaluate() and pytrec_eval.

Writes synthetic data once per size (Q queries x 100 scored results, 10 judged docs per
query, grades 0-3) as a TREC run, a Parquet run and Parquet qrels, then runs each job in a
fresh subprocess and reads its memory from /proc: the resident memory once the qrels are
loaded (they are held in memory by design) and the peak during the job. Prints one table.

    python benchmarks/bench_stream.py --sizes 100000,1000000,3000000 --dir /tmp/rm-stream
    python benchmarks/bench_stream.py --sizes 100000 --jobs stream-trec,ray

Jobs: stream-trec, stream-gzip, stream-parquet (evaluate_stream; ``stream-trec:2`` shares
the run among 2 worker processes, ``workers=2``; ``stream-trec:1cpu`` holds the one process
to one core, a baseline for the workers, as one process parses on every core;
``stream-gzip`` decompresses with zlib-ng where ``ragmetrics[gzip]`` installed it, and
``stream-gzip-stdlib`` with the standard library's gzip), memory
(Run.from_trec + evaluate, only up to --memory-max queries), pytrec_eval (dicts parsed from
the TREC file, only up to --pytrec-max queries) and ray (ragmetrics.ray.evaluate on
ray.data.read_parquet, local Ray with the machine's CPUs). The 3M size is 300M rows, about
9 GB of TREC text: mind the disk.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bench_metrics import _memory  # (current, peak) resident memory from /proc

METRICS = ["precision@10", "recall@100", "ndcg@10", "map@100", "mrr@10", "hit_rate@10"]
PYTREC = {"P_10", "recall_100", "ndcg_cut_10", "map_cut_100", "recip_rank", "success_10"}
DEPTH = 100
JUDGED = 10
DOCS = 2003  # a prime: a + k * b (mod DOCS) for k < 100 are distinct docs for any b > 0
CHUNK = 100_000  # queries generated and written at a time


def generate(folder: Path, n_queries: int, seed: int = 5) -> None:
    """Write run.txt, run.parquet and qrels.parquet for ``n_queries`` (skipped if there)."""
    import numpy as np
    import pyarrow
    import pyarrow.csv
    import pyarrow.parquet

    folder.mkdir(parents=True, exist_ok=True)
    if (folder / "done").exists():
        return
    rng = np.random.default_rng(seed)
    ranks = np.arange(1, DEPTH + 1)
    run_schema = pyarrow.schema(
        [("query_id", pyarrow.string()), ("doc_id", pyarrow.string()), ("score", pyarrow.float64())]
    )
    qrels_schema = pyarrow.schema(
        [
            ("query_id", pyarrow.string()),
            ("doc_id", pyarrow.string()),
            ("relevance", pyarrow.int64()),
        ]
    )
    options = pyarrow.csv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    with (
        pyarrow.parquet.ParquetWriter(folder / "run.parquet", run_schema) as run_parquet,
        pyarrow.parquet.ParquetWriter(folder / "qrels.parquet", qrels_schema) as qrels_parquet,
        pyarrow.csv.CSVWriter(folder / "run.txt", _trec_schema(), write_options=options) as trec,
    ):
        for start in range(0, n_queries, CHUNK):
            n = min(CHUNK, n_queries - start)
            ids = np.char.add("q", np.arange(start, start + n).astype(str))
            a = rng.integers(0, DOCS, n)[:, None]
            b = rng.integers(1, DOCS, n)[:, None]
            docs = (a + np.arange(DEPTH)[None, :] * b) % DOCS
            scores = np.round(-np.sort(-rng.random((n, DEPTH)), axis=1), 6)  # as runs print them
            # judged: 10 of the first 200 positions of the same sequence (half of them ranked)
            picks = np.sort(rng.random((n, 2 * DEPTH)).argsort(axis=1)[:, :JUDGED], axis=1)
            judged = (a + picks * b) % DOCS
            grades = rng.integers(0, 4, (n, JUDGED))
            query_column = pyarrow.array(np.repeat(ids, DEPTH))
            doc_column = pyarrow.array(np.char.add("d", docs.ravel().astype(str)))
            score_column = pyarrow.array(scores.ravel())
            run_parquet.write_table(
                pyarrow.table([query_column, doc_column, score_column], schema=run_schema)
            )
            trec.write_table(
                pyarrow.table(
                    [
                        query_column,
                        pyarrow.array(np.full(n * DEPTH, "Q0")),
                        doc_column,
                        pyarrow.array(np.tile(ranks, n)),
                        score_column,
                        pyarrow.array(np.full(n * DEPTH, "bench")),
                    ],
                    schema=_trec_schema(),
                )
            )
            qrels_parquet.write_table(
                pyarrow.table(
                    [
                        pyarrow.array(np.repeat(ids, JUDGED)),
                        pyarrow.array(np.char.add("d", judged.ravel().astype(str))),
                        pyarrow.array(grades.ravel()),
                    ],
                    schema=qrels_schema,
                )
            )
    (folder / "done").write_text("")


def _trec_schema():  # type: ignore[no-untyped-def]
    import pyarrow

    return pyarrow.schema(
        [
            ("query_id", pyarrow.string()),
            ("q0", pyarrow.string()),
            ("doc_id", pyarrow.string()),
            ("rank", pyarrow.int64()),
            ("score", pyarrow.float64()),
            ("tag", pyarrow.string()),
        ]
    )


# --- one job per subprocess ---------------------------------------------------------------


def job(name: str, folder: Path) -> dict:
    import ragmetrics as rm

    name, _, count = name.partition(":")  # "stream-trec:2": shared by 2 worker processes
    pinned = count == "1cpu"  # "stream-trec:1cpu": one process held to one core
    workers = 1 if pinned else int(count or 1)
    if pinned:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

    started = time.perf_counter()
    qrels = rm.Qrels.from_parquet(folder / "qrels.parquet")
    _ = "q0" in qrels  # the qrels' query index (made on first use) counts as the qrels' own
    loaded = time.perf_counter()
    with_qrels, _ = _memory()
    rows = None
    if name == "stream-trec":
        result = rm.evaluate_stream(
            qrels, folder / "run.txt", METRICS, progress=False, workers=workers
        )
    elif name in ("stream-gzip", "stream-gzip-stdlib"):
        if name.endswith("-stdlib"):  # the standard library's reader, as without zlib-ng
            import gzip

            from ragmetrics.engine import _parallel
            from ragmetrics.formats import _io

            _io.gzip_module = _parallel.gzip_module = lambda: gzip  # type: ignore[assignment]
        if not (folder / "run.txt.gz").exists():
            subprocess.run(["gzip", "-k", "-1", str(folder / "run.txt")], check=True)
        loaded = time.perf_counter()
        result = rm.evaluate_stream(
            qrels, folder / "run.txt.gz", METRICS, progress=False, workers=workers
        )
    elif name == "stream-parquet":
        result = rm.evaluate_stream(
            qrels, folder / "run.parquet", METRICS, progress=False, workers=workers
        )
    elif name == "memory":
        result = rm.evaluate(qrels, rm.Run.from_trec(folder / "run.txt"), METRICS)
    elif name == "ray":
        import ray
        import ray.data

        ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False)
        ray.data.DataContext.get_current().enable_progress_bars = False
        loaded = time.perf_counter()  # Ray's start-up is not part of the job
        from ragmetrics import ray as ragmetrics_ray

        dataset = ray.data.read_parquet(str(folder / "run.parquet"))
        result = ragmetrics_ray.evaluate(dataset, qrels, METRICS)
        ray.shutdown()
    elif name == "pytrec_eval":
        import statistics

        import pytrec_eval

        judged = qrels.to_dict()
        with open(folder / "run.txt") as handle:
            run = pytrec_eval.parse_run(handle)
        per_query = pytrec_eval.RelevanceEvaluator(judged, PYTREC).evaluate(run)
        keys = next(iter(per_query.values())).keys()
        aggregate = {k: statistics.fmean(v[k] for v in per_query.values()) for k in keys}
        rows = sum(map(len, run.values()))
        result = None
    else:
        raise SystemExit(f"unknown job {name}")
    finished = time.perf_counter()
    _, peak = _memory()
    if result is not None:
        aggregate = {k: float(v) for k, v in result.aggregate.items() if v is not None}
        rows = result.counts.in_run * DEPTH
    return {
        "job": name + (f" ({workers} workers)" if workers > 1 else " (one core)" if pinned else ""),
        "seconds": finished - loaded,
        "qrels_seconds": loaded - started,
        "rows": rows,
        "rss_with_qrels_mb": with_qrels / 2**20,
        "peak_mb": peak / 2**20,
        "aggregate": aggregate,
    }


# --- driver --------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000,1000000", help="queries, comma-separated")
    parser.add_argument("--jobs", default="stream-trec,stream-parquet,memory,pytrec_eval,ray")
    parser.add_argument("--dir", default="/tmp/ragmetrics-bench-stream", help="data folder")
    parser.add_argument("--memory-max", type=int, default=1_000_000, help="largest in-memory run")
    parser.add_argument("--pytrec-max", type=int, default=100_000, help="largest pytrec_eval run")
    parser.add_argument("--ray-max", type=int, default=1_000_000, help="largest Ray run")
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs of each job, alternating; medians printed"
    )
    parser.add_argument("--job", nargs=2, metavar=("JOB", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.job:
        print(json.dumps(job(args.job[0], Path(args.job[1]))))
        return
    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        folder = Path(args.dir) / str(size)
        started = time.perf_counter()
        generate(folder, size)
        print(f"data for {size:,} queries: {time.perf_counter() - started:.0f}s", file=sys.stderr)
        limits = {"memory": args.memory_max, "pytrec_eval": args.pytrec_max, "ray": args.ray_max}
        runs: dict[str, list[dict]] = {}
        for _ in range(args.repeat):  # job after job, then again: noise hits all alike
            for name in args.jobs.split(","):
                if size > limits.get(name.partition(":")[0], size):
                    continue
                command = [sys.executable, __file__, "--job", name, str(folder)]
                done = subprocess.run(command, capture_output=True, text=True, env=os.environ)
                if done.returncode != 0:
                    print(f"{name} at {size:,} failed:\n{done.stderr[-2000:]}", file=sys.stderr)
                    continue
                result = json.loads(done.stdout.strip().splitlines()[-1])
                result["queries"] = size
                runs.setdefault(name, []).append(result)
                print(f"  {name:<15} {size:>10,} {result['seconds']:.1f}s", file=sys.stderr)
        for timed in runs.values():
            timed.sort(key=lambda r: r["seconds"])
            results.append(timed[len(timed) // 2])  # the median run
    report(results)


def report(results: list[dict]) -> None:
    print(f"\n{DEPTH} results per query; metrics: {', '.join(METRICS)}")
    print(
        "peak: the job's peak resident memory (this process's; each worker process holds the "
        "qrels and one batch besides); qrels: resident memory once they are loaded (with "
        "their query index)\n"
    )
    header = (
        f"{'queries':>10} {'job':<26} {'seconds':>8} {'M rows/s':>9} {'qrels MB':>9} "
        f"{'peak MB':>8} {'peak - qrels':>13}"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        rate = r["rows"] / r["seconds"] / 1e6
        print(
            f"{r['queries']:>10,} {r['job']:<26} {r['seconds']:>8.1f} {rate:>9.2f} "
            f"{r['rss_with_qrels_mb']:>9.0f} {r['peak_mb']:>8.0f} "
            f"{r['peak_mb'] - r['rss_with_qrels_mb']:>13.0f}"
        )
    for size in sorted({r["queries"] for r in results}):
        same = [r for r in results if r["queries"] == size and r["job"] != "pytrec_eval"]
        if len(same) > 1:
            first = same[0]["aggregate"]
            worst = max(abs(first[k] - r["aggregate"][k]) for r in same[1:] for k in first)
            print(f"{size:,} queries: largest difference between ragmetrics jobs: {worst:.1e}")


if __name__ == "__main__":
    main()
