"""Where counting ranks by comparison stops paying: the calibration of ``rank_of``'s choice.

A located doc's rank is counted either by comparing its score with its whole row (cost: the
row's width, per located doc) or by sorting the row once (cost: about length x log2(length)
per row, more when ties must be broken by doc id). ``rank_of`` sorts a row when its located
docs x width exceed ``_SORT_FACTOR`` x length x log2(length + 2). This prints both paths'
times over run shapes (width, located docs per row, and how coarse the scores are: 0 for
no ties, 1000 for a few, 20 for many), with the choice ``rank_of`` makes for each.

    python benchmarks/bench_ranks.py
"""

from __future__ import annotations

import time

import numpy as np

from ragmetrics.data import _order as locate
from ragmetrics.data._store import Store

SHAPES = [(1000, 100), (1000, 1000), (100, 10_000), (20, 50_000)]  # width, queries
LOCATED = [5, 20, 50, 100, 150, 300]
GRIDS = [0, 1000, 20]


def case(
    rng: np.random.Generator, n_queries: int, width: int, located: int, grid: int
) -> tuple[Store, np.ndarray, np.ndarray]:
    """A run of ``n_queries`` x ``width`` (ids of 10 bytes) and ``located`` docs per row."""
    ids = np.array(
        [f"D{i:09d}".encode() for i in rng.integers(0, 10**9, n_queries * width)], dtype="S10"
    )
    scores = rng.random(n_queries * width)
    if grid:
        scores = np.round(scores * grid) / grid
    lengths = np.full(n_queries, width)
    store = Store.from_bytes([f"q{i}" for i in range(n_queries)], lengths, ids, scores)
    rows = np.repeat(np.arange(n_queries), located)
    positions = np.concatenate(
        [rng.choice(width, located, replace=False) for _ in range(n_queries)]
    )
    return store, rows, positions


def best_of(repeats: int, store: Store, rows: np.ndarray, positions: np.ndarray) -> float:
    """The fastest of ``repeats`` calls of ``rank_of``."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        locate.rank_of(store, rows, positions, "float64")
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    rng = np.random.default_rng(1)
    factor = locate._SORT_FACTOR
    print(f"rank_of sorts a row when located/log2(width + 2) > {factor}\n")
    print(
        f"{'width':>6} {'queries':>8} {'grid':>5} {'located':>8} {'compare':>9} {'sort':>9}"
        f" {'cmp/sort':>9} {'chosen':>7}"
    )
    for width, n_queries in SHAPES:
        for grid in GRIDS:
            for located in (k for k in LOCATED if k <= width):
                store, rows, positions = case(rng, n_queries, width, located, grid)
                times = []
                for forced in (10**9, 0):  # never sort, always sort
                    locate._SORT_FACTOR = forced
                    times.append(best_of(3, store, rows, positions))
                locate._SORT_FACTOR = factor
                chosen = "sort" if located / np.log2(width + 2) > factor else "compare"
                print(
                    f"{width:>6} {n_queries:>8} {grid:>5} {located:>8} {times[0]:>8.4f}s"
                    f" {times[1]:>8.4f}s {times[0] / times[1]:>9.2f} {chosen:>7}"
                )


if __name__ == "__main__":
    main()
