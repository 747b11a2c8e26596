"""The sparse judge (score dicts, no sort) and the dense judge (sorted ranking) agree exactly."""

from __future__ import annotations

import random

import numpy as np
import pytest

import ragmetrics as rm
from ragmetrics.judge import _judge_dense, _judge_sparse


def _sparse(qrels: rm.Qrels, run: rm.Run, query_ids: list[str], depth: int | None):  # type: ignore[no-untyped-def]
    per_query = [qrels.raw()[q] for q in query_ids]
    counts = np.array([len(d) for d in per_query], dtype=np.int64)
    flat = np.array([g for d in per_query for g in d.values()], dtype=np.float64)
    return _judge_sparse(per_query, counts, flat, run, query_ids, depth)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("depth", [None, 1, 5, 30])
def test_sparse_equals_dense(seed: int, depth: int | None) -> None:
    rng = random.Random(seed)
    qrels, run = {}, {}
    for q in range(150):
        docs = [f"d{i}" for i in range(rng.randrange(1, 60))]
        qrels[f"q{q}"] = {
            d: rng.choice([-1, 0, 1, 2, 3])
            for d in rng.sample(docs, rng.randrange(1, min(8, len(docs)) + 1))
        }
        if rng.random() < 0.9:  # some judged queries have no ranking at all
            # coarse scores: many ties, broken by doc id descending
            run[f"q{q}"] = {
                d: rng.choice([0.1, 0.2, 0.3, rng.random()])
                for d in rng.sample(docs, rng.randrange(0, len(docs) + 1))
            }
    qrels_obj, run_obj = rm.Qrels.from_dict(qrels), rm.Run.from_dict(run)
    query_ids = list(qrels)
    sparse = _sparse(qrels_obj, run_obj, query_ids, depth)
    assert sparse is not None, "the sparse path should apply to this run"
    dense = _judge_dense(qrels_obj.raw(), run_obj, query_ids, depth, False)
    for a, b in zip(sparse, dense, strict=True):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("depth", [None, 3])
def test_equal_length_rankings_in_another_order(depth: int | None) -> None:
    """The reshape fast path: every ranking has the same length; queries in another order,
    some judged queries absent from the run."""
    rng = random.Random(11)
    run = {f"q{q}": {f"d{i}": round(rng.random(), 1) for i in range(10)} for q in range(60)}
    qrels = {
        f"q{q}": {f"d{i}": rng.choice([0, 1, 2]) for i in rng.sample(range(14), 4)}
        for q in range(70)
    }
    query_ids = list(reversed(list(qrels)))
    qrels_obj, run_obj = rm.Qrels.from_dict(qrels), rm.Run.from_dict(run)
    sparse = _sparse(qrels_obj, run_obj, query_ids, depth)
    dense = _judge_dense(qrels_obj.raw(), run_obj, query_ids, depth, False)
    assert sparse is not None
    for a, b in zip(sparse, dense, strict=True):
        assert np.array_equal(a, b)


def test_dense_judgments_fall_back_to_sorting() -> None:
    qrels = {"q": {f"d{i}": 1 for i in range(100)}}
    run = rm.Run.from_dict({"q": {f"d{i}": float(i) for i in range(100)}})
    assert _sparse(rm.Qrels.from_dict(qrels), run, ["q"], None) is None
    assert rm.evaluate(qrels, run, ["P@10"]).aggregate["P@10"] == 1.0


def test_infinite_scores_use_the_dense_path() -> None:
    run = rm.Run.from_dict({"q": {"a": float("-inf"), "b": 0.0, "c": float("inf")}})
    assert _sparse(rm.Qrels.from_dict({"q": {"a": 1}}), run, ["q"], None) is None
    assert run["q"] == ("c", "b", "a")
    assert rm.evaluate({"q": {"a": 1}}, run, ["mrr"]).aggregate["mrr"] == pytest.approx(1 / 3)


def test_ranking_is_made_only_when_asked() -> None:
    run = rm.Run.from_dict({"q": {"a": 0.1, "b": 0.9}})
    rm.evaluate({"q": {"a": 1}}, run, ["mrr"])
    assert run._ranked_cache is None  # evaluation did not sort
    assert run["q"] == ("b", "a") and run._ranked_cache is not None
