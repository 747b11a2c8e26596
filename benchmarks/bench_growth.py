"""How the cost of reading and evaluating grows with the run.

Runs of 10^3 .. 10^7 rows (queries of 100 docs, ids up to 8.8 million, scores with ties,
2% of the rows judged) are read and evaluated on five metrics from each source: dicts built
in Python, a TREC file (plain and gzipped), a Parquet file, an Arrow stream (the Parquet
file's batches), and the TREC and Parquet files with their rows sorted by doc id (each
query's rows apart, as a join leaves them). Each size runs in a fresh process, so that the
peak resident memory is the job's own; the time is the median of ``--repeat`` runs. The
slope of log(time) against log(rows) between the two largest sizes says how the cost grows
(1.0: linear; n log n shows as slightly above 1 at these sizes).

With ``--streamed 8``, runs of 10^6 .. 10^8 rows are written a million rows at a time (a
Parquet file of row groups of a million rows, and a TREC file) and ``evaluate_stream`` reads
each with one worker, in a fresh process: the time, the peak memory and the slope.

    python benchmarks/bench_growth.py [--max-exponent 7] [--repeat 3] [--streamed 8]
        [--sources dicts,trec,gzip,parquet,arrow,"trec by doc id","parquet by doc id"]
"""

from __future__ import annotations

import argparse
import gzip
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
    elif source == "arrow":
        import pyarrow as pa, pyarrow.parquet as pq
        batches = pq.ParquetFile(f"{folder}/run-{rows}.parquet").iter_batches()
        first = next(batches)
        reader = pa.RecordBatchReader.from_batches(first.schema, [first, *batches])
        rm.evaluate(qrels, rm.Run.from_arrow(reader), metrics)
    else:
        name = {
            "trec": "run-{}.txt",
            "gzip": "run-{}.txt.gz",
            "parquet": "run-{}.parquet",
            "trec by doc id": "by-doc-{}.txt",
            "parquet by doc id": "by-doc-{}.parquet",
        }[source].format(rows)
        rm.evaluate(qrels, rm.read_run(f"{folder}/{name}"), metrics)
    times.append(time.perf_counter() - start)
# the peak resident memory of this process (VmHWM: ru_maxrss would carry the parent's
# peak over the exec on Linux)
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM")) / 1024
print(json.dumps({"times": times, "peak_mb": peak}))
"""


_STREAM_JOB = r"""
import json, sys, time
import ragmetrics as rm

path, qrels_path, metrics = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
start = time.perf_counter()
qrels = rm.Qrels.from_trec(qrels_path)
result = rm.evaluate_stream(qrels, path, metrics, progress=False)
seconds = time.perf_counter() - start
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM")) / 1024
print(json.dumps({"seconds": seconds, "peak_mb": peak, "queries": result.counts.in_run}))
"""

_CHUNK = 1_000_000


def _write_streamed(folder: Path, rows: int) -> tuple[Path, Path, Path]:
    """A run of ``rows`` rows (queries of 100) written a million rows at a time, as Parquet
    and TREC, and its qrels (2% of the rows judged)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(rows)
    parquet, trec, qrels = (folder / f"big-{rows}.{x}" for x in ("parquet", "txt", "qrels"))
    schema = pa.schema(
        [("query_id", pa.string()), ("doc_id", pa.string()), ("score", pa.float64())]
    )
    with (
        pq.ParquetWriter(parquet, schema) as writer,
        trec.open("w") as run_out,
        qrels.open("w") as qrels_out,
    ):
        for start in range(0, rows, _CHUNK):
            n = min(_CHUNK, rows - start)
            q = (np.arange(start, start + n) // 100).astype(str)
            d = rng.integers(0, 8_841_823, n).astype(str)
            s = np.round(rng.random(n) * 50, 1)
            writer.write_table(pa.table({"query_id": q, "doc_id": d, "score": s}, schema=schema))
            run_out.writelines(
                f"{a} Q0 {b} 0 {c} r\n" for a, b, c in zip(q.tolist(), d.tolist(), s.tolist())
            )
            pick = rng.random(n) < 0.02
            judged = dict.fromkeys(zip(q[pick].tolist(), d[pick].tolist()))
            qrels_out.writelines(f"{a} 0 {b} 1\n" for a, b in judged)
    return parquet, trec, qrels


def _streamed(max_exponent: int) -> None:
    print(f"\nevaluate_stream, one worker, {METRICS}: seconds (qrels read included), peak RSS")
    found: dict[str, list[tuple[int, float]]] = {}
    with tempfile.TemporaryDirectory() as name:
        for exponent in range(6, max_exponent + 1):
            rows = 10**exponent
            parquet, trec, qrels = _write_streamed(Path(name), rows)
            for source, path in (("Parquet", parquet), ("TREC", trec)):
                done = subprocess.run(
                    [sys.executable, "-c", _STREAM_JOB, str(path), str(qrels), json.dumps(METRICS)],
                    capture_output=True, text=True, check=True,
                )  # fmt: skip
                result = json.loads(done.stdout)
                found.setdefault(source, []).append((rows, result["seconds"]))
                print(
                    f"{source:<8} {rows:>12,} rows {result['seconds']:9.2f} s "
                    f"{result['peak_mb']:9.0f} MB  {result['queries']:,} queries"
                )
            for path in (parquet, trec, qrels):
                path.unlink()
    for source, sizes in found.items():
        if len(sizes) > 1:
            (n1, t1), (n2, t2) = sizes[-2], sizes[-1]
            slope = math.log(t2 / t1) / math.log(n2 / n1)
            print(f"{source}: streamed time grows as rows^{slope:.2f} between {n1:,} and {n2:,}")


SOURCES = ("dicts", "trec", "gzip", "parquet", "arrow", "trec by doc id", "parquet by doc id")


def _write(folder: Path, rows: int) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(rows)
    n_queries = max(1, rows // 100)
    q = np.repeat(np.arange(n_queries), 100)[:rows].astype(str)
    numbers = rng.integers(0, 8_841_823, rows)
    d = numbers.astype(str)
    s = np.round(rng.random(rows) * 50, 1)
    np.savez(folder / f"run-{rows}.npz", q=q, d=d, s=s)
    by_doc = np.argsort(numbers, kind="stable")  # each query's rows apart
    for name, order in (("run", slice(None)), ("by-doc", by_doc)):
        qq, dd, ss = q[order], d[order], s[order]
        table = pa.table({"query_id": qq, "doc_id": dd, "score": ss})
        pq.write_table(table, folder / f"{name}-{rows}.parquet")
        text = "".join(
            f"{a} Q0 {b} 0 {c} r\n" for a, b, c in zip(qq.tolist(), dd.tolist(), ss.tolist())
        )
        (folder / f"{name}-{rows}.txt").write_text(text)
        if name == "run":
            (folder / f"{name}-{rows}.txt.gz").write_bytes(gzip.compress(text.encode(), 1))
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
    parser.add_argument("--streamed", type=int, default=0, help="largest streamed exponent")
    parser.add_argument(
        "--sources", default=",".join(SOURCES), help=f"comma-separated, of {list(SOURCES)}"
    )
    args = parser.parse_args()
    sources = args.sources.split(",")
    if unknown := set(sources) - set(SOURCES):
        parser.error(f"unknown sources {sorted(unknown)}: choose among {list(SOURCES)}")
    if args.streamed:
        _streamed(args.streamed)
        return
    sizes = [10**e for e in range(3, args.max_exponent + 1)]
    results: dict[str, list[tuple[int, float, float]]] = {}
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        for rows in sizes:
            _write(folder, rows)
            for source in sources:
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
    width = {s: max(8, len(s) + 3) for s in results}
    print(
        f"{'rows':>10} " + " ".join(f"{s + ' s':>{w}} {s + ' MB':>{w}}" for s, w in width.items())
    )
    for i, rows in enumerate(sizes):
        cells = " ".join(
            f"{results[s][i][1]:{w}.3f} {results[s][i][2]:{w}.0f}" for s, w in width.items()
        )
        print(f"{rows:>10} {cells}")
    for source, found in results.items():
        (n1, t1, _), (n2, t2, _) = found[-2], found[-1]
        slope = math.log(t2 / t1) / math.log(n2 / n1)
        print(f"{source}: time grows as rows^{slope:.2f} between {n1:,} and {n2:,} rows")


if __name__ == "__main__":
    main()
