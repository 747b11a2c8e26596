"""What each fast path earns against the plain path it stands beside (docs/speed.md, "What
each fast path earns"). A speed path keeps its code only while it gains at least 10% end to
end on a user's workload; this prints the figures that decide it, medians of alternated runs.

    python benchmarks/bench_paths.py [--queries 5000] [--repeat 7]

- reading a TREC run: the vectorized reader (``formats/_trec_fast.py``), the careful
  line-by-line reader every file can take (``formats/_io.py``), and ``pyarrow.csv`` into the
  Arrow path (pyarrow is an optional extra);
- the join of an evaluation (``data/_store.py``): ids as bytes hashed, against the strings'
  set intersections, end to end (read both files, evaluate five metrics).
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ragmetrics as rm
from ragmetrics.data import _store
from ragmetrics.data._run import Run
from ragmetrics.formats._io import read_trec_maps

METRICS = ["ndcg@10", "map@100", "recall@100", "P@10", "mrr@10"]


def write(folder: Path, n_queries: int) -> tuple[Path, Path]:
    """A run of ``n_queries`` x 100 docs with MS MARCO-size ids, and qrels of 10 docs per
    query (5 retrieved, 5 not)."""
    rng = random.Random(1)
    run, qrels = folder / "run.txt", folder / "qrels.txt"
    with run.open("w") as r, qrels.open("w") as q:
        for query in range(n_queries):
            docs = rng.sample(range(8_800_000), 100)
            for rank, doc in enumerate(docs):
                r.write(
                    f"{query} Q0 {doc} {rank + 1} {1 - rank / 1000 + rng.random() / 1e4:.6f} t\n"
                )
            judged = rng.sample(docs, 5) + [rng.randrange(9_000_000, 9_900_000) for _ in range(5)]
            for doc in judged:
                q.write(f"{query} 0 {doc} {rng.choice([1, 2, 3])}\n")
    return run, qrels


def careful(path: Path) -> Any:
    maps, _ = read_trec_maps(
        path, n_columns=6, doc_col=2, value_col=4, value_kind="float",
        layout="query_id Q0 doc_id rank score tag", extra_fields=True, on_repeat="max",
    )  # fmt: skip
    return Run.from_dict(maps)


def with_pyarrow(path: Path) -> Any:
    import pyarrow as pa
    import pyarrow.csv as csv

    names = ["query_id", "q0", "doc_id", "rank", "score", "tag"]
    table = csv.read_csv(
        path,
        read_options=csv.ReadOptions(column_names=names),
        parse_options=csv.ParseOptions(delimiter=" "),
        convert_options=csv.ConvertOptions(
            column_types={"query_id": pa.string(), "doc_id": pa.string(), "score": pa.float64()},
            include_columns=["query_id", "doc_id", "score"],
        ),
    )
    return Run.from_arrow(table)


def medians(jobs: dict[str, Callable[[], Any]], repeat: int) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in jobs}
    for _ in range(repeat):
        for name, job in jobs.items():
            start = time.perf_counter()
            job()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        run, qrels = write(Path(folder), args.queries)
        print(f"{args.queries:,} queries x 100 docs; medians of {args.repeat} alternated runs")
        reading = medians(
            {
                "vectorized reader": lambda: Run.from_trec(run),
                "careful reader": lambda: careful(run),
                "pyarrow.csv + Arrow": lambda: with_pyarrow(run),
            },
            args.repeat,
        )
        hashed = _store.Store._hash_join

        def evaluate(join: Any) -> Any:
            _store.Store._hash_join = join  # type: ignore[method-assign]
            try:
                return rm.evaluate(rm.Qrels.from_trec(qrels), rm.Run.from_trec(run), METRICS)
            finally:
                _store.Store._hash_join = hashed  # type: ignore[method-assign]

        joining = medians(
            {
                "evaluate, hash join": lambda: evaluate(hashed),
                "evaluate, set join only": lambda: evaluate(lambda *_: None),
            },
            args.repeat,
        )
    for table in (reading, joining):
        first = next(iter(table.values()))
        for name, seconds in table.items():
            print(f"  {name:26s} {seconds * 1000:8.1f} ms  {seconds / first:5.2f}x")


if __name__ == "__main__":
    main()
