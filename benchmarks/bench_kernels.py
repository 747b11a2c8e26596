"""The metric kernels alone, beside ranx's, on data already in memory.

1,000,000 queries x 100 results (ids from 8.8M, 1-4 relevant per query, about half of them
retrieved), built once: for ragmetrics a ``Run`` (``Run.from_grouped``, ids as bytes) and
``Qrels``; for ranx the numba typed lists its metrics read (doc ids as numbers, each ranking
sorted), so neither side pays for building. Then each of map, mrr and ndcg@10 is timed alone,
and the three in one call: ``rm.evaluate`` (finding the judged docs and scoring) against
``ranx.evaluate`` with numba warm, on one thread (``threads=1``) and on all of them.

    python benchmarks/bench_kernels.py                    # 1,000,000 queries
    python benchmarks/bench_kernels.py --queries 200000
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

METRICS = ["map", "mrr", "ndcg@10"]
DEPTH = 100


def generate(n_queries: int, seed: int = 3) -> tuple[np.ndarray, np.ndarray, list[list[int]]]:
    """Doc ids (n x DEPTH ints), scores (n x DEPTH, each row descending) and each query's
    relevant ids."""
    rng = np.random.default_rng(seed)
    # an id's last two digits are its column: no query retrieves a doc twice
    docs = rng.integers(0, 88_418, size=(n_queries, DEPTH)) * DEPTH + np.arange(DEPTH)
    scores = -np.sort(-rng.random((n_queries, DEPTH)), axis=1)
    n_relevant = rng.integers(1, 5, size=n_queries)
    where = rng.integers(0, DEPTH, size=(n_queries, 4))
    relevant = rng.integers(0, 88_418, size=(n_queries, 4)) * DEPTH + where
    shown = rng.random((n_queries, 4)) < 0.5
    rows = np.repeat(np.arange(n_queries)[:, None], 4, axis=1)
    pick = shown & (np.arange(4)[None, :] < n_relevant[:, None])
    docs[rows[pick], where[pick]] = relevant[pick]
    lists = [row[:k].tolist() for row, k in zip(relevant, n_relevant.tolist())]
    return docs, scores, lists


def ours(docs: np.ndarray, scores: np.ndarray, relevant: list[list[int]]) -> tuple:
    import ragmetrics as rm

    n = len(docs)
    query_ids = [f"q{i}" for i in range(n)]
    ids = np.char.add(b"d", docs.ravel().astype("S7"))
    run = rm.Run.from_grouped(query_ids, np.full(n, DEPTH), ids, scores.ravel())
    qrels = rm.Qrels.from_dict(
        {q: {f"d{d}": 1 for d in rel} for q, rel in zip(query_ids, relevant)}
    )
    return qrels, run


def theirs(docs: np.ndarray, scores: np.ndarray, relevant: list[list[int]]) -> tuple:
    from numba.typed import List as TypedList

    run = TypedList([np.column_stack((d.astype(np.float64), s)) for d, s in zip(docs, scores)])
    qrels = TypedList([np.array([[float(d), 1.0] for d in sorted(set(rel))]) for rel in relevant])
    return qrels, run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import ranx

    import ragmetrics as rm

    docs, scores, relevant = generate(args.queries)
    started = time.perf_counter()
    our_qrels, our_run = ours(docs, scores, relevant)
    print(f"built ragmetrics' Qrels and Run in {time.perf_counter() - started:.1f}s")
    started = time.perf_counter()
    ranx_qrels, ranx_run = theirs(docs, scores, relevant)
    print(f"built ranx's typed lists in {time.perf_counter() - started:.1f}s")
    del docs, scores
    small_q, small_r = theirs(*generate(50, seed=1))
    for metric in METRICS:  # numba compiles on first use: warm every kernel first
        ranx.evaluate(small_q, small_r, metric, threads=1)
    print(f"\n{args.queries:,} queries x {DEPTH} results; median of {args.repeat}\n")
    print(f"{'metric':<9} {'ragmetrics':>11} {'ranx 1 thread':>14} {'ranx all':>9} {'ratio 1t':>9}")
    for metric in METRICS:
        times: dict[str, list[float]] = {"ours": [], "ranx1": [], "ranx": []}
        values = {}
        for _ in range(args.repeat):
            started = time.perf_counter()
            values["ours"] = rm.evaluate(our_qrels, our_run, [metric]).aggregate[metric]
            times["ours"].append(time.perf_counter() - started)
            for label, threads in (("ranx1", 1), ("ranx", 0)):
                started = time.perf_counter()
                values[label] = ranx.evaluate(ranx_qrels, ranx_run, metric, threads=threads)
                times[label].append(time.perf_counter() - started)
        t = {label: statistics.median(v) for label, v in times.items()}
        assert abs(values["ours"] - values["ranx1"]) < 1e-9, (metric, values)
        print(
            f"{metric:<9} {t['ours']:>10.2f}s {t['ranx1']:>13.2f}s {t['ranx']:>8.2f}s "
            f"{t['ranx1'] / t['ours']:>8.1f}x"
        )
    # how each is used for several metrics: one call (ragmetrics finds the judged docs once)
    times = {"ours": [], "ranx1": [], "ranx": []}
    for _ in range(args.repeat):
        started = time.perf_counter()
        rm.evaluate(our_qrels, our_run, METRICS)
        times["ours"].append(time.perf_counter() - started)
        for label, threads in (("ranx1", 1), ("ranx", 0)):
            started = time.perf_counter()
            ranx.evaluate(ranx_qrels, ranx_run, METRICS, threads=threads)
            times[label].append(time.perf_counter() - started)
    t = {label: statistics.median(v) for label, v in times.items()}
    print(
        f"{'all three':<9} {t['ours']:>10.2f}s {t['ranx1']:>13.2f}s {t['ranx']:>8.2f}s "
        f"{t['ranx1'] / t['ours']:>8.1f}x"
    )
    print("\nratio 1t = ranx on one thread / ragmetrics (ragmetrics runs on one thread)")


if __name__ == "__main__":
    main()
