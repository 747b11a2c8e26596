"""Runs as users bring them, against the same run in the regular layout.

One run of N queries x 100 docs with MS MARCO-size doc ids (up to 8.8 million) and scores
with ties, written five ways: regular (each query's rows together, no doc twice), with one
row in 20,000 repeating its query's previous doc, with the rows sorted by doc id (queries not
contiguous, as a join, Spark or DuckDB leaves them), and as pandas writes Parquet (an index
column, row groups of 50,000), by Polars (categorical doc ids, row groups of 20,000) and by
DuckDB in a shuffled order (a join's output). Each is read and evaluated on five metrics, in
Parquet and in TREC text; the times are medians of rounds that alternate the layouts, and each is printed
as a ratio to the regular layout of its format (the goal: 1.5x at most).

    python benchmarks/bench_irregular.py [--queries 5000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import ragmetrics as rm

METRICS = ["ndcg@10", "map", "recall@100", "mrr@10", "P@5"]


def _columns(n_queries: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    queries = np.repeat(np.arange(n_queries), 100).astype(str)
    docs = rng.integers(0, 8_841_823, n_queries * 100).astype(str)
    scores = np.round(rng.random(n_queries * 100) * 50, 1)  # ties
    return queries, docs, scores


def _qrels(queries: np.ndarray, docs: np.ndarray, seed: int = 1) -> rm.Qrels:
    rng = np.random.default_rng(seed)
    pick = rng.random(len(docs)) < 0.02
    judged: dict[str, dict[str, int]] = {}
    for q, d in zip(queries[pick].tolist(), docs[pick].tolist(), strict=True):
        judged.setdefault(q, {})[d] = int(rng.integers(1, 3))
    return rm.Qrels.from_dict(judged)


def _layouts(queries: np.ndarray, docs: np.ndarray, scores: np.ndarray) -> dict[str, tuple]:
    # no doc twice in a query in the regular layout
    key = np.char.add(np.char.add(queries, "\0"), docs)
    _, first = np.unique(key, return_index=True)
    keep = np.zeros(len(docs), dtype=bool)
    keep[first] = True
    q, d, s = queries[keep], docs[keep], scores[keep]
    repeated_d = d.copy()
    every = np.arange(1, len(d), 20_000)
    same_query = q[every] == q[every - 1]
    repeated_d[every[same_query]] = d[every[same_query] - 1]
    by_doc = np.argsort(d, kind="stable")
    return {
        "regular": (q, d, s),
        "repeats": (q, repeated_d, s),
        "by doc id": (q[by_doc], d[by_doc], s[by_doc]),
    }


def _write(folder: Path, layouts: dict[str, tuple]) -> dict[str, dict[str, Path]]:
    paths: dict[str, dict[str, Path]] = {}
    for name, (q, d, s) in layouts.items():
        table = pa.table({"query_id": q, "doc_id": d, "score": s})
        slug = name.replace(" ", "-")
        parquet = folder / f"{slug}.parquet"
        pq.write_table(table, parquet)
        trec = folder / f"{slug}.txt"
        with trec.open("w") as out:
            for qq, dd, ss in zip(q.tolist(), d.tolist(), s.tolist(), strict=True):
                out.write(f"{qq} Q0 {dd} 0 {ss} r\n")
        paths[name] = {"parquet": parquet, "trec": trec}
    q, d, s = layouts["regular"]
    import pandas as pd

    frame = pd.DataFrame({"query_id": q, "doc_id": d, "score": s}).astype(
        {"query_id": "string", "doc_id": "string", "score": "Float64"}
    )
    written = folder / "pandas.parquet"
    frame.to_parquet(written, row_group_size=50_000)  # an index column, nullable types
    paths["written by pandas"] = {"parquet": written}
    try:
        import duckdb
        import polars as pl
    except ImportError:  # optional: the dev environment has both
        return paths
    by_polars = folder / "polars.parquet"
    pl.DataFrame({"query_id": q, "doc_id": d, "score": s}).with_columns(
        pl.col("doc_id").cast(pl.Categorical)  # dictionary-encoded ids, large strings
    ).write_parquet(by_polars, row_group_size=20_000)
    paths["written by Polars"] = {"parquet": by_polars}
    by_duckdb = folder / "duckdb.parquet"
    duckdb.sql(  # a join's output: queries in no particular order
        f"COPY (SELECT query_id, doc_id, score FROM read_parquet('{folder / 'regular.parquet'}') "
        f"ORDER BY hash(doc_id)) TO '{by_duckdb}' (FORMAT PARQUET, ROW_GROUP_SIZE 100000)"
    )
    paths["written by DuckDB, shuffled"] = {"parquet": by_duckdb}
    return paths


def _time(qrels: rm.Qrels, path: Path) -> float:
    start = time.perf_counter()
    rm.evaluate(qrels, rm.read_run(path), METRICS)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    queries, docs, scores = _columns(args.queries)
    qrels = _qrels(queries, docs)
    with tempfile.TemporaryDirectory() as folder:
        paths = _write(Path(folder), _layouts(queries, docs, scores))
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.rounds):
            for name, by_format in paths.items():
                for fmt, path in by_format.items():
                    times.setdefault((name, fmt), []).append(_time(qrels, path))
        print(f"{args.queries} queries x 100 docs, {METRICS}, median of {args.rounds} rounds")
        print(f"{'the same run, but':<28} {'Parquet':>16} {'TREC':>16}")
        for name, by_format in paths.items():
            cells = []
            for fmt in ("parquet", "trec"):
                if fmt not in by_format:
                    cells.append(f"{'':>16}")
                    continue
                median = statistics.median(times[(name, fmt)])
                base = statistics.median(times[("regular", fmt)])
                cells.append(f"{median:7.3f} s {median / base:5.2f}x")
            print(f"{name:<28} {cells[0]:>16} {cells[1]:>16}")


if __name__ == "__main__":
    main()
