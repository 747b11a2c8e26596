"""Chunk texts used as doc ids, against the same run keyed by UUIDs.

Many RAG evaluations have no chunk ids: each retrieved context is keyed by its own text
(ragas-style "retrieved contexts" against "reference contexts"). One run of N queries x 20
contexts drawn from a corpus of 60,000 chunks of 200 to 2,000 bytes, written twice: keyed
by the chunks' texts and by UUIDs; the qrels judge every seventh context of each query.
Each is read and evaluated on five metrics from a Parquet file, an Arrow table, an Arrow
stream, a pandas DataFrame (strings held by Arrow, as pandas 3 keeps them, and as Python
objects) and dicts (built beforehand; only ``evaluate`` is timed). Times are medians of
rounds that alternate the two keys; the ratio is the texts' time to the UUIDs'.

Then pytrec_eval on the same dicts (its parse is the caller's: only its evaluation is
timed), for scale.

    python benchmarks/bench_texts.py [--queries 5000] [--rounds 5] [--tools pytrec_eval]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

import ragmetrics as rm

METRICS = ["ndcg@10", "map", "recall@20", "mrr@10", "P@5"]
DEPTH = 20
CORPUS = 60_000


def _corpus(rng: np.random.Generator) -> dict[str, list[str]]:
    """The chunks' texts (200 to 2,000 bytes, words of a small vocabulary, each numbered so
    that no two are alike) and a UUID for each."""
    vocabulary = ["the", "of", "and", "retrieval", "model", "chunk", "answer", "query"]
    vocabulary += ["document", "evaluation", "context", "relevant", "passage", "index"]
    words = np.array([*vocabulary, "score", "ranking", "user", "question", "source"])
    lengths = rng.integers(200, 2000, CORPUS)
    texts = [
        " ".join(words[rng.integers(0, len(words), int(n) // 6)]) + f" (chunk {i})"
        for i, n in enumerate(lengths)
    ]
    ids = [str(uuid.UUID(int=int(rng.integers(1 << 62)) << 64 | i)) for i in range(CORPUS)]
    return {"texts": texts, "UUIDs": ids}


def _jobs(n_queries: int, folder: Path) -> dict[tuple[str, str], Callable[[], object]]:
    rng = np.random.default_rng(0)
    keys = _corpus(rng)
    picked = rng.integers(0, CORPUS, (n_queries, DEPTH))
    queries = np.repeat([f"q{i}" for i in range(n_queries)], DEPTH)
    scores = rng.random(n_queries * DEPTH)
    jobs: dict[tuple[str, str], Callable[[], object]] = {}
    for key, names in keys.items():
        docs = [names[j] for j in picked.ravel()]
        qrels = rm.Qrels.from_dict(
            {
                f"q{i}": {names[picked[i, j]]: 1 for j in range(0, DEPTH, 7)}
                for i in range(n_queries)
            }
        )
        table = pa.table({"query_id": queries, "doc_id": docs, "score": scores})
        path = folder / f"{key}.parquet"
        pq.write_table(table, path)
        arrow_strings = table.to_pandas()  # pandas 3 (and string[pyarrow] columns)
        arrow_strings = arrow_strings.astype({"doc_id": "string[pyarrow]"})
        objects = pd.DataFrame({"query_id": queries, "doc_id": pd.Series(docs, dtype=object)})
        objects["score"] = scores
        run: dict[str, dict[str, float]] = {}
        for q, d, s in zip(queries.tolist(), docs, scores.tolist(), strict=True):
            run.setdefault(q, {})[d] = s

        def stream(t: pa.Table = table) -> pa.RecordBatchReader:
            return pa.RecordBatchReader.from_batches(t.schema, t.to_batches(max_chunksize=65536))

        jobs[("Parquet", key)] = lambda q=qrels, p=path: rm.evaluate(
            q, rm.Run.from_parquet(p), METRICS
        )
        jobs[("Arrow table", key)] = lambda q=qrels, t=table: rm.evaluate(
            q, rm.Run.from_arrow(t), METRICS
        )
        jobs[("Arrow stream", key)] = lambda q=qrels, s=stream: rm.evaluate(
            q, rm.Run.from_arrow(s()), METRICS
        )
        jobs[("pandas, Arrow strings", key)] = lambda q=qrels, f=arrow_strings: rm.evaluate(
            q, rm.Run.from_pandas(f), METRICS
        )
        jobs[("pandas, objects", key)] = lambda q=qrels, f=objects: rm.evaluate(
            q, rm.Run.from_pandas(f), METRICS
        )
        jobs[("dicts", key)] = lambda q=qrels, r=run: rm.evaluate(q, r, METRICS)
        jobs[("pytrec_eval, dicts", key)] = _pytrec(qrels.to_dict(), run)
    return jobs


def _pytrec(qrels: dict, run: dict) -> Callable[[], object]:
    def job() -> object:
        import pytrec_eval

        measures = {"ndcg_cut.10", "map", "recall.20", "recip_rank", "P.5"}
        return pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)

    return job


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tools", default="pytrec_eval", help="'' for ragmetrics alone")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        jobs = _jobs(args.queries, Path(folder))
        if "pytrec_eval" not in args.tools:
            jobs = {k: v for k, v in jobs.items() if not k[0].startswith("pytrec_eval")}
        times: dict[tuple[str, str], list[float]] = {k: [] for k in jobs}
        for job in jobs.values():
            job()  # warm: imports, first allocations
        for _ in range(args.rounds):
            for key, job in jobs.items():  # the two keys of one source in turns
                started = time.perf_counter()
                job()
                times[key].append(time.perf_counter() - started)
    median = {k: statistics.median(v) for k, v in times.items()}
    print(
        f"{args.queries:,} queries x {DEPTH} contexts; chunk texts of 200-2,000 bytes against "
        f"UUIDs; medians of {args.rounds} alternated rounds\n"
    )
    print(f"{'source':24s} {'UUIDs':>9s} {'texts':>9s} {'ratio':>7s}")
    for source in dict.fromkeys(s for s, _ in median):
        ids, texts = median[(source, "UUIDs")], median[(source, "texts")]
        print(f"{source:24s} {ids:8.3f}s {texts:8.3f}s {texts / ids:6.2f}x")


if __name__ == "__main__":
    main()
