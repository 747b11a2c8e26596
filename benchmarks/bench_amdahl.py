"""What in a streamed evaluation stays serial, and what that leaves for many workers.

A plain TREC run of 10 million rows (100,000 queries x 100 docs, ids drawn from 8.8
million, so about 60 queries hold a doc twice, as in real runs) and its qrels (2% of the
rows judged). The parts of ``evaluate_stream(..., workers=N)`` that one process does alone
are timed on their own: reading and checking the qrels, cutting the file into N shares, and
merging the N partial results into the result. The work the workers share is timed as the
N shares scored one after another in this process, held to one core. With ``f`` the serial
share of the whole, Amdahl's law bounds the speed-up of N workers by ``1 / (f + (1 - f) /
N)``; the end-to-end times of 1 and 2 workers are printed beside it.

    python benchmarks/bench_amdahl.py [--queries 100000] [--shares 16] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

import ragmetrics as rm
from ragmetrics.data._batches import batches
from ragmetrics.engine import stream
from ragmetrics.engine.stream import Job
from ragmetrics.formats import _stream_io

METRICS = ["ndcg@10", "map", "recall@100", "mrr@10", "P@5", "recip_rank"]


def _write(folder: Path, n_queries: int) -> tuple[Path, Path]:
    rng = np.random.default_rng(0)
    rows = n_queries * 100
    queries = np.repeat(np.arange(n_queries), 100)
    docs = rng.integers(0, 8_841_823, rows)
    scores = np.round(rng.random(rows) * 50, 2)
    run = folder / "run.txt"
    with run.open("w") as out:
        for start in range(0, rows, 1_000_000):
            stop = start + 1_000_000
            out.writelines(
                f"q{q} Q0 d{d} 0 {s} r\n"
                for q, d, s in zip(
                    queries[start:stop].tolist(),
                    docs[start:stop].tolist(),
                    scores[start:stop].tolist(),
                    strict=True,
                )
            )
    pick = np.flatnonzero(rng.random(rows) < 0.02)
    qrels = folder / "qrels.txt"
    judged = {(int(queries[i]), int(docs[i])) for i in pick.tolist()}
    qrels.write_text("".join(f"q{q} 0 d{d} 1\n" for q, d in sorted(judged)))
    return run, qrels


def _median(work, repeat: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--shares", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        run, qrels_path = _write(Path(name), args.queries)
        keywords = {"progress": False}
        options = {"per_query": False, "batch_rows": 1_000_000, "columns": None, "name": None}

        def setup() -> Job:
            return Job.of(rm.read_qrels(qrels_path), METRICS, keywords, **options)

        job = setup()
        t_qrels = _median(setup, args.repeat)
        t_cut = _median(lambda: _stream_io.trec_shares(str(run), args.shares), args.repeat)
        shares = _stream_io.trec_shares(str(run), args.shares)
        first = 0
        cpus = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {min(cpus)})  # the shares' work, on one core
        partials = []
        start = time.perf_counter()
        for share in shares:  # as each worker does (engine/_parallel.py, _score_trec)
            chunks = _stream_io.trec_chunks(str(run), share, first)
            partials.append(job.score(batches(chunks, job.batch_rows, str(run), None), str(run)))
        t_work = time.perf_counter() - start
        os.sched_setaffinity(0, cpus)
        parsed = job.resolved()

        def merge() -> None:
            merged = stream.merge([p for p in partials if p is not None])
            stream._finish(merged, job.qrels, parsed, job.settings, "run")

        t_merge = _median(merge, args.repeat)
        serial = t_qrels + t_cut + t_merge
        f = serial / (serial + t_work)
        t1 = _median(
            lambda: rm.evaluate_stream(rm.read_qrels(qrels_path), run, METRICS, progress=False),
            args.repeat,
        )
        t2 = _median(
            lambda: rm.evaluate_stream(
                rm.read_qrels(qrels_path), run, METRICS, progress=False, workers=2
            ),
            args.repeat,
        )
    rows = args.queries * 100
    print(f"{rows:,} rows, {args.shares} shares, medians of {args.repeat}")
    print(f"serial: read and check the qrels {t_qrels:.3f} s, cut the shares {t_cut:.3f} s, "
          f"merge and finish {t_merge:.3f} s: {serial:.3f} s")  # fmt: skip
    print(f"shared work, the {args.shares} shares one after another on one core: {t_work:.2f} s")
    print(f"serial share f = {f:.4f}")
    for n in (2, 4, 8, 16, 32):
        print(f"  Amdahl bound at {n:>2} workers: {1 / (f + (1 - f) / n):5.1f}x")
    print(f"end to end: 1 worker {t1:.2f} s, 2 workers {t2:.2f} s ({t1 / t2:.2f}x)")


if __name__ == "__main__":
    main()
