"""The nugget metrics on a RAG benchmark's run, timed beside ``ndcg@10`` on the same run.

No other tool computes them (pytrec_eval and ranx have no nuggets), so the scale is our own
``ndcg@10``: locating each query's nuggets should cost about what locating its judged docs
does. The run has ``--queries`` queries x 100 results (ids drawn from 8.8 million, scores
with six decimals), read from a TREC file; each query has 2 to 7 nuggets (half vital), each
supported by 1 to 3 of the query's retrieved or nearby docs, as TREC RAG's assessors leave
them. Printed, medians of ``--repeat`` runs in one process:

- ``Nuggets.from_dict`` on the nuggets as ``json.load`` gives them;
- the first evaluation with nuggets (it also lays the nuggets out for locating, once) and
  the later ones, against ``ndcg@10`` alone;
- one query at a time (an adapter scoring each answer as it comes), against the same
  nuggets.

    python benchmarks/bench_nuggets.py                   # 50,000 queries
    python benchmarks/bench_nuggets.py --queries 200000
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

import ragmetrics as rm

NUGGET_METRICS = ["nugget_recall@10", "vital_recall@20", "sufficiency@10"]


def write_inputs(folder: Path, n_queries: int, seed: int = 7) -> tuple[Path, dict]:
    rng = np.random.default_rng(seed)
    nuggets: dict[str, dict] = {}
    path = folder / "run.txt"
    with path.open("w") as out:
        for q in range(n_queries):
            qid = f"q{q}"
            docs = rng.choice(8_841_823, size=110, replace=False).astype(str).tolist()
            scores = np.sort(rng.random(100))[::-1].tolist()
            out.write("".join(f"{qid} Q0 {d} 0 {s:.6f} r\n" for d, s in zip(docs, scores)))
            nuggets[qid] = {
                f"n{j}": {
                    "text": f"fact {j}",
                    "vital": j % 2 == 0,
                    "support": rng.choice(
                        docs, size=int(rng.integers(1, 4)), replace=False
                    ).tolist(),
                }
                for j in range(int(rng.integers(2, 8)))
            }
    # the JSON round trip: strings as a user's nuggets file gives them
    return path, json.loads(json.dumps(nuggets))


def _timed(job: object) -> float:
    start = time.perf_counter()
    job()  # type: ignore[operator]
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--one-at-a-time", type=int, default=200, help="queries scored alone")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        path, given = write_inputs(Path(name), args.queries)
        run = rm.Run.from_trec(path)
    made = [_timed(lambda: rm.Nuggets.from_dict(given)) for _ in range(args.repeat)]
    nuggets = rm.Nuggets.from_dict(given)
    qrels = rm.Qrels.from_dict(
        {q: {n.support[0]: 1 for n in of.values()} for q, of in nuggets.items()}
    )
    first = _timed(lambda: rm.evaluate(qrels, run, NUGGET_METRICS, nuggets=nuggets))
    later, ndcg = [], []
    for _ in range(args.repeat):
        later.append(_timed(lambda: rm.evaluate(qrels, run, NUGGET_METRICS, nuggets=nuggets)))
        ndcg.append(_timed(lambda: rm.evaluate(qrels, run, ["ndcg@10"])))
    alone = []
    for query_id in list(nuggets)[: args.one_at_a_time]:
        one_run = {query_id: dict(zip(run[query_id], range(100, 0, -1)))}
        one_qrels = {query_id: dict(qrels[query_id])}
        start = time.perf_counter()
        rm.evaluate(one_qrels, one_run, NUGGET_METRICS, nuggets=nuggets)
        alone.append(time.perf_counter() - start)
    print(
        f"{args.queries:,} queries x 100 results, {nuggets.n_nuggets:,} nuggets "
        f"({nuggets.n_vital:,} vital); medians of {args.repeat}"
    )
    print(f"Nuggets.from_dict                      {statistics.median(made):8.3f} s")
    print(f"first evaluation with nuggets          {first:8.3f} s")
    median_later, median_ndcg = statistics.median(later), statistics.median(ndcg)
    print(
        f"later evaluations with nuggets         {median_later:8.3f} s "
        f"({median_later / median_ndcg:.2f}x ndcg@10)"
    )
    print(f"ndcg@10 alone                          {median_ndcg:8.3f} s")
    print(
        f"one query at a time (median of {len(alone)})     {statistics.median(alone) * 1e3:8.2f} ms"
    )


if __name__ == "__main__":
    main()
