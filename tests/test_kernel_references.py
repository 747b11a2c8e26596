"""The kernels written as index arithmetic (AP, RR, nDCG) against the formulas written out.

Each reference below walks one ranking rank by rank, as the definition in docs/metrics.md
reads; the kernels work on coordinates of the judged docs only. Random batches with ties in
grades, unjudged and negative grades, empty rankings, judged docs never retrieved and
cutoffs shorter and longer than the rankings must agree to 1e-12.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from ragmetrics.engine.locate import locate_in_lists
from ragmetrics.metrics import classic


def _batch(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, list[str]]]:
    rng = random.Random(seed)
    judgments: dict[str, dict[str, int]] = {}
    rankings: dict[str, list[str]] = {}
    for q in range(150):
        pool = [f"d{i}" for i in range(rng.randint(1, 60))]
        judged = rng.sample(pool, rng.randint(1, len(pool)))
        judgments[f"q{q}"] = {d: rng.choice([-1, 0, 0, 1, 1, 2, 3]) for d in judged}
        rankings[f"q{q}"] = rng.sample(pool, rng.randint(0, len(pool)))
    return judgments, rankings


def _ap(ranking: list[str], grades: dict[str, int], rel: int, k: int | None) -> float:
    """(1/R) * sum over the relevant ranks i <= k of precision@i."""
    n_relevant = sum(g >= rel for g in grades.values())
    found, total = 0, 0.0
    for i, doc in enumerate(ranking[:k], start=1):
        if grades.get(doc, 0) >= rel:
            found += 1
            total += found / i
    return total / n_relevant if n_relevant else 0.0


def _rr(ranking: list[str], grades: dict[str, int], rel: int, k: int | None) -> float:
    """1 / rank of the first relevant doc within the first k."""
    for i, doc in enumerate(ranking[:k], start=1):
        if grades.get(doc, 0) >= rel:
            return 1.0 / i
    return 0.0


def _ndcg(ranking: list[str], grades: dict[str, int], k: int | None, exponential: bool) -> float:
    """DCG@k / IDCG@k with gain max(g, 0) (or 2^max(g, 0) - 1) and discount log2(i + 1)."""

    def gain(grade: int) -> float:
        g = max(grade, 0)
        return 2.0**g - 1.0 if exponential else float(g)

    dcg = sum(gain(grades.get(d, 0)) / math.log2(i + 1) for i, d in enumerate(ranking[:k], 1))
    ideal = sorted(grades.values(), reverse=True)[:k]
    idcg = sum(gain(g) / math.log2(i + 1) for i, g in enumerate(ideal, 1))
    return dcg / idcg if idcg else 0.0


CUTOFFS = [None, 1, 3, 10, 100]


@pytest.mark.parametrize("seed", range(4))
def test_index_arithmetic_equals_the_formulas(seed: int) -> None:
    judgments, rankings = _batch(seed)
    judged = locate_in_lists(judgments, rankings)
    queries = list(judgments)
    for k in CUTOFFS:
        for rel in (1, 2):
            expected = [_ap(rankings[q], judgments[q], rel, k) for q in queries]
            assert np.allclose(classic.average_precision(judged, k, rel=rel), expected, 0, 1e-12)
            expected = [_rr(rankings[q], judgments[q], rel, k) for q in queries]
            assert np.allclose(classic.reciprocal_rank(judged, k, rel=rel), expected, 0, 1e-12)
        for exponential, dcg in ((False, "log2"), (True, "exp-log2")):
            expected = [_ndcg(rankings[q], judgments[q], k, exponential) for q in queries]
            assert np.allclose(classic.ndcg(judged, k, dcg=dcg), expected, 0, 1e-12)


def test_the_references_can_tell_a_wrong_kernel() -> None:
    # a rank off by one in the reference must show: the comparison is not vacuous
    judgments, rankings = _batch(0)
    judged = locate_in_lists(judgments, rankings)
    shifted = [_ap(["pad", *rankings[q]], judgments[q], 1, None) for q in judgments]
    assert not np.allclose(classic.average_precision(judged, None, rel=1), shifted, 0, 1e-12)
