"""Single-query scoring in the adapters, next to LlamaIndex's own metrics.

10,000 queries x the six metrics LlamaIndex ships (hit rate, MRR, precision, recall, AP,
nDCG), each query a ranking of 10 ids with 1 to 5 expected ids, computed plug-in by plug-in
as ``RetrieverEvaluator`` does. Prints the time per ``compute()`` call of LlamaIndex's
built-ins, of our plug-ins sharing one scorer (``RagMetricsMetric.from_names``), of one
plug-in alone, and of one bulk ``ragmetrics.evaluate`` over the same data, with the ratios
(medians over rounds that time each side back to back); then the LangChain handler's live
scoring per retrieval.

    python benchmarks/bench_plugins.py [--queries 10000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from llama_index.core.evaluation.retrieval.metrics import (
    MRR,
    NDCG,
    AveragePrecision,
    HitRate,
    Precision,
    Recall,
)

import ragmetrics as rm
from llama_index.evaluation.ragmetrics import RagMetricsMetric

OURS = ["hit_rate@10", "mrr@10", "P@10", "recall@10", "map@10", "ndcg@10"]


def data(n: int, seed: int = 0) -> list[tuple[str, list[str], list[str]]]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        pool = [f"doc{j}" for j in rng.sample(range(1000), 30)]
        expected = rng.sample(pool, rng.randint(1, 5))
        rows.append((f"query {i}", expected, rng.sample(pool, 10)))
    return rows


def timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rows = data(args.queries)
    calls = len(rows) * len(OURS)

    def loop(metrics: list) -> Callable[[], None]:  # type: ignore[type-arg]
        def run() -> None:
            for query, expected, retrieved in rows:
                for metric in metrics:
                    metric.compute(query=query, expected_ids=expected, retrieved_ids=retrieved)

        return run

    theirs = loop([HitRate(), MRR(), Precision(), Recall(), AveragePrecision(), NDCG()])
    shared = loop(RagMetricsMetric.from_names(OURS))
    alone = RagMetricsMetric.from_name("ndcg@10")

    def single() -> None:
        for query, expected, retrieved in rows:
            alone.compute(query=query, expected_ids=expected, retrieved_ids=retrieved)

    qrels = {str(i): dict.fromkeys(e, 1) for i, (_, e, _) in enumerate(rows)}
    run = {str(i): r for i, (_, _, r) in enumerate(rows)}

    def bulk() -> None:
        rm.evaluate(qrels, run, OURS)

    times: dict[str, list[float]] = {"llama": [], "shared": [], "single": [], "bulk": []}
    for _ in range(args.rounds):
        times["llama"].append(timed(theirs) / calls)
        times["shared"].append(timed(shared) / calls)
        times["single"].append(timed(single) / len(rows))
        times["bulk"].append(timed(bulk) / calls)
    median = {k: statistics.median(v) * 1e6 for k, v in times.items()}
    ratio = statistics.median(s / t for s, t in zip(times["shared"], times["llama"], strict=True))
    single_ratio = statistics.median(
        s / t for s, t in zip(times["single"], times["llama"], strict=True)
    )
    print(f"{len(rows)} queries x {len(OURS)} metrics, median of {args.rounds} rounds, per call:")
    print(f"  LlamaIndex built-ins          {median['llama']:8.2f} us")
    print(f"  ragmetrics plug-ins (shared)  {median['shared']:8.2f} us   {ratio:5.1f}x LlamaIndex")
    print(f"  one ragmetrics plug-in alone  {median['single']:8.2f} us   {single_ratio:5.1f}x")
    print(f"  one bulk rm.evaluate          {median['bulk']:8.2f} us")
    live()


def live(n: int = 2000) -> None:
    """The LangChain handler's cost per retrieval with live scoring (6 metrics)."""
    try:
        from uuid import uuid4

        from langchain_core.documents import Document

        from langchain_ragmetrics import RetrievalEvalCallbackHandler
    except ImportError:
        return
    rows = data(n, seed=1)
    qrels = {q: dict.fromkeys(e, 1) for q, e, _ in rows}
    handler = RetrievalEvalCallbackHandler(qrels, OURS, queries={q: q for q in qrels})
    docs = [[Document(id=d, page_content=d) for d in r] for _, _, r in rows]
    start = time.perf_counter()
    for (query, _, _), retrieved in zip(rows, docs, strict=True):
        run_id = uuid4()
        handler.on_retriever_start({}, query, run_id=run_id)
        handler.on_retriever_end(retrieved, run_id=run_id)
    per = (time.perf_counter() - start) / n * 1e3
    assert len(handler.live) == n
    print(f"LangChain handler, live scoring of {len(OURS)} metrics: {per:.3f} ms per retrieval")


if __name__ == "__main__":
    main()
