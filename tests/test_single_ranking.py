"""The kernels' twins for one ranking (``MetricSpec.single``) give their kernels' values, bit
for bit, on random rankings, judgments, cutoffs and parameters; and the scorer the adapters'
plug-ins use gives the same numbers by either path.

Every registered spec with a twin is walked (a new twin joins by being registered); the
cases are shaped like what plug-ins see: short rankings of ids from a large corpus, a few
judged docs with grades from -1 to 4 (real grades where the metric reads them), repeats in
the ranking, cutoffs below, at and past the ranking's length.
"""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from ragmetrics.adapters import QueryScorer
from ragmetrics.engine._locate import locate_in_ranking
from ragmetrics.metrics.judged import OneRanking
from ragmetrics.metrics.registry import Cutoff, MetricSpec, registered

TWINS = sorted(
    (spec for spec in registered().values() if spec.single is not None), key=lambda s: s.name
)


def _case(rng: random.Random, spec: MetricSpec) -> tuple[dict[str, Any], tuple[str, ...]]:
    corpus = [f"doc{rng.randrange(10**7)}" for _ in range(rng.randint(1, 40))]
    judged_docs = rng.sample(corpus, rng.randint(0, min(len(corpus), 8)))
    grades: dict[str, Any] = {}
    for doc in judged_docs:
        grade = rng.randint(-1, 4)
        grades[doc] = grade + rng.choice([0, 0, 0.37]) if spec.real_grades else grade
    ranking = [rng.choice(corpus) for _ in range(rng.randint(0, 30))]
    return grades, tuple(dict.fromkeys(ranking))  # the scorer drops repeats first


def _params(rng: random.Random, spec: MetricSpec) -> dict[str, Any]:
    params = {}
    for param in spec.params:
        if param.choices:
            params[param.name] = rng.choice(param.choices)
        elif param.name == "gains":
            params[param.name] = rng.choice(["", "", "1:0", "2:0.5;0:0"])
        elif param.kind is int:
            params[param.name] = rng.choice([param.default, 0, 2, 3])
        else:
            params[param.name] = param.default
    return params


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


@pytest.mark.parametrize("spec", TWINS, ids=lambda s: s.name)
def test_each_twin_gives_its_kernels_value_bit_for_bit(spec: MetricSpec) -> None:
    rng = random.Random(spec.name)
    compared = declined = 0
    for _ in range(3_000):
        grades, ranking = _case(rng, spec)
        if not grades:
            continue
        cutoff = None
        if spec.cutoff is Cutoff.REQUIRED or (
            spec.cutoff is Cutoff.OPTIONAL and rng.random() < 0.7
        ):
            cutoff = rng.randint(1, 35)
        params = _params(rng, spec)
        twin = spec.single(OneRanking.of(grades, ranking), cutoff, **params)  # type: ignore[misc]
        if twin is None:  # parameters the twin leaves to its kernel
            declined += 1
            continue
        judged = locate_in_ranking(grades, ranking, depth=cutoff)
        kernel = float(spec.kernel(judged, cutoff, **params)[0])
        assert _same(twin, kernel), (spec.name, grades, ranking, cutoff, params, twin, kernel)
        compared += 1
    assert compared > 500, (compared, declined)  # ndcg declines its other gains


def test_the_scorer_gives_the_same_numbers_by_either_path() -> None:
    """The plug-ins' scorer takes the twins when every metric has one; with the twins
    switched off (as when a metric without one is asked for), the numbers are the same."""
    rng = random.Random(7)
    names = ["hit_rate@10", "mrr@10", "P@10", "recall@10", "map@10", "ndcg@10", "ndcg", "map"]
    fast = QueryScorer(names)
    slow = QueryScorer(names)
    slow._single = False
    assert fast._single
    for _ in range(2_000):
        pool = [f"doc{j}" for j in rng.sample(range(1000), 30)]
        expected = {doc: rng.randint(0, 3) for doc in rng.sample(pool, rng.randint(1, 5))}
        ranking = [rng.choice(pool) for _ in range(rng.randint(0, 15))]
        assert fast.score(ranking, expected) == slow.score(ranking, expected)


def test_a_metric_without_a_twin_sends_the_ranking_to_the_kernels() -> None:
    assert not QueryScorer(["ndcg@10", "ra_nwg@5"])._single  # a RAG set metric: no twin
    assert not QueryScorer(["ndcg@10"], grade_map={1: 1, 2: 5})._single
    mixed = QueryScorer(["ndcg_exp@3", "P@3"])  # the exponential gain: declined, per call
    assert mixed._single
    kernels = QueryScorer(["ndcg_exp@3", "P@3"])
    kernels._single = False
    for ranking in (["a", "b", "c"], ["c"], []):
        assert mixed.score(ranking, {"b": 2, "c": 1}) == kernels.score(ranking, {"b": 2, "c": 1})


def test_the_log2_tables_grow_when_asked_with_the_values_of_a_fresh_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The tables of log2(rank + 1) are kept for the process and grown on demand (to 1,024
    at least, then to the size asked): from empty, every size gives log2 of its own ranks,
    the list twin the same values as the array, and a table never shrinks."""
    import numpy as np

    from ragmetrics.metrics import judged

    monkeypatch.setattr(judged, "_LOG2_RANKS", [np.empty(0)])
    monkeypatch.setattr(judged, "_LOG2_LIST", [[]])
    for size in (1, 3, 1024, 1025, 3000, 10):
        expected = np.log2(np.arange(2, size + 2, dtype=np.float64))
        table = judged.log2_ranks_table(size)
        assert len(table) == size and (table == expected).all() and not table.flags.writeable
        listed = judged.log2_ranks_list(size)
        assert len(listed) >= max(size, 1024) and listed[:size] == expected.tolist()
    assert len(judged._LOG2_RANKS[0]) == len(judged._LOG2_LIST[0]) == 3000
