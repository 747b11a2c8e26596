"""ChunkMatcher against the naive all-pairs loop on LoCoMo.

Every turn of every conversation is a chunk (a ``Date:`` line and a speaker prefix), and
all 272 sessions are originals. Both sides must give the same answers; the script prints the
times and the speed ratio (the median over rounds that each time both, back to back).

    python benchmarks/bench_matching.py --data path/to/locomo10.json   (the LoCoMo release)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ragmetrics.matching import ChunkMatcher, MatchRules, is_chunk_from_original  # noqa: E402
from tests import _locomo  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data",
        default=os.environ.get("LOCOMO_JSON", ""),
        help="LoCoMo's locomo10.json (or set $LOCOMO_JSON)",
    )
    parser.add_argument(
        "--repeat", type=int, default=7, help="timed runs of ChunkMatcher per naive run"
    )
    parser.add_argument("--naive-repeat", type=int, default=5, help="timed runs of the naive loop")
    args = parser.parse_args()
    path = Path(args.data)
    if not args.data or not path.exists():
        raise SystemExit(f"LoCoMo not found at {args.data!r}; pass --data path/to/locomo10.json")
    data = _locomo.load(path)
    rules = MatchRules(speaker_names=data.speakers)
    chunks = [_locomo.turn_chunk(t, style="speaker") for t in data.turns]
    originals = data.originals

    # The two are timed in alternation, so that both see the same machine: each round times
    # the naive loop once and ChunkMatcher (index + matching) --repeat times, and the round's
    # ratio pairs the two. The speed-up is the median of the rounds' ratios.
    naive_times: list[float] = []
    build: list[float] = []
    lookup: list[float] = []
    ratios: list[float] = []
    naive: list[set[str]] = []
    answers: list[set[str]] = []
    for _ in range(args.naive_repeat):
        started = time.perf_counter()
        naive = [
            {i for i, text in originals.items() if is_chunk_from_original(c, text, rules=rules)}
            for c in chunks
        ]
        naive_times.append(time.perf_counter() - started)
        totals: list[float] = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            matcher = ChunkMatcher(originals, rules=rules)
            built = time.perf_counter()
            answers = matcher.match_many(chunks)
            done = time.perf_counter()
            build.append(built - started)
            lookup.append(done - built)
            totals.append(done - started)
        ratios.append(naive_times[-1] / statistics.median(totals))
    same = answers == naive
    ours = statistics.median([b + m for b, m in zip(build, lookup, strict=True)])
    print(
        f"{len(chunks):,} chunks x {len(originals)} originals "
        f"({sum(map(len, originals.values())) / 1e6:.1f} M characters)"
    )
    print(
        f"naive all-pairs loop : {statistics.median(naive_times):8.3f} s  "
        f"(median of {args.naive_repeat})"
    )
    print(
        f"ChunkMatcher         : {ours:8.3f} s  (index {statistics.median(build):.3f} s + "
        f"matching {statistics.median(lookup):.3f} s; medians of {len(build)})"
    )
    print(
        f"speed-up             : {statistics.median(ratios):8.1f}x   (each round's ratio: "
        f"{', '.join(f'{r:.1f}' for r in ratios)})   same answers: {same}"
    )
    if not same:
        raise SystemExit("ChunkMatcher disagrees with the pairwise test")


if __name__ == "__main__":
    main()
