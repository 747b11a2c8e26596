"""Our numbers equal trec_eval's (through pytrec_eval) on real and randomized inputs."""

from __future__ import annotations

import random

import numpy as np
import pytest

import ragmetrics as rm
from tests.conftest import shared_file

pytrec_eval = pytest.importorskip("pytrec_eval")

# our name -> pytrec_eval's key; the same measure under both spellings
MEASURES = {
    "map": "map",
    "P_5": "P_5",
    "P_10": "P_10",
    "recip_rank": "recip_rank",
    "ndcg": "ndcg",
    "ndcg_cut_10": "ndcg_cut_10",
    "recall_100": "recall_100",
    "Rprec": "Rprec",
    "success_10": "success_10",
    "map_cut_100": "map_cut_100",
}
PYTREC_FAMILIES = {
    "map",
    "P",
    "recip_rank",
    "ndcg",
    "ndcg_cut",
    "recall",
    "Rprec",
    "success",
    "map_cut",
}


def _reference(qrels: rm.Qrels, run: rm.Run, threshold: int) -> dict[str, dict[str, float]]:
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels.to_dict(), PYTREC_FAMILIES, relevance_level=threshold
    )
    return evaluator.evaluate(run.to_dict())


def _assert_parity(
    qrels: rm.Qrels, run: rm.Run, threshold: int, tolerance: float
) -> rm.EvaluationResult:
    reference = _reference(qrels, run, threshold)
    result = rm.evaluate(qrels, run, list(MEASURES), missing="skip", relevance_threshold=threshold)
    assert set(result.query_ids) == set(reference)
    for query_id, expected in reference.items():
        for ours, theirs in MEASURES.items():
            assert result.per_query[query_id][ours] == pytest.approx(
                expected[theirs], abs=tolerance
            ), (query_id, ours)
    for ours, theirs in MEASURES.items():
        pooled = np.mean([expected[theirs] for expected in reference.values()])
        assert result.aggregate[ours] == pytest.approx(pooled, abs=tolerance), ours
    return result


@pytest.mark.parametrize(
    "qrels_file", ["qrels.test", "qrels.rel_level", "qrels.test.with-comments"]
)
@pytest.mark.parametrize("run_file", ["results.test", "results.trunc"])
@pytest.mark.parametrize("threshold", [1, 2])
def test_trec_eval_test_collection(qrels_file: str, run_file: str, threshold: int) -> None:
    qrels = rm.Qrels.from_trec(shared_file("trec_eval", qrels_file))
    run = rm.Run.from_trec(shared_file("trec_eval", run_file))
    result = _assert_parity(qrels, run, threshold, 1e-12)
    assert result.counts.queries == len(run)


def test_cacm_bm25_run() -> None:
    qrels = rm.Qrels.from_trec(shared_file("cacm", "qrels.cacm.txt"))
    run = rm.Run.from_trec(shared_file("cacm", "cacm-bm25.run.txt"))
    result = _assert_parity(qrels, run, 1, 1e-12)
    assert result.counts.queries > 50


def test_comment_collection() -> None:
    qrels = rm.Qrels.from_trec(shared_file("trec_eval", "qrels.comment.test"))
    run = rm.Run.from_trec(shared_file("trec_eval", "results.comment.test"))
    _assert_parity(qrels, run, 1, 1e-12)


def _random_case(seed: int, n_queries: int) -> tuple[rm.Qrels, rm.Run]:
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_queries):
        pool = [f"d{rng.randrange(60)}" for _ in range(40)]
        judged = rng.sample(sorted(set(pool)), k=min(len(set(pool)), rng.randrange(0, 15)))
        qrels[f"q{q}"] = {d: rng.choice([-1, 0, 0, 1, 1, 2, 3]) for d in judged}
        depth = rng.choice([0, 1, 3, 10, 25, 40])
        docs = rng.sample(sorted(set(pool)), k=min(depth, len(set(pool))))
        coarse = rng.random() < 0.5  # coarse scores produce many ties
        run[f"q{q}"] = {d: (round(rng.random(), 1) if coarse else rng.random()) for d in docs}
    # pytrec_eval drops queries whose ranking is empty; keep one doc so both count the query
    run = {q: (r or {"unjudged-doc": 0.0}) for q, r in run.items()}
    return rm.Qrels.from_dict(qrels), rm.Run.from_dict(run)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("threshold", [1, 2])
def test_randomized_against_pytrec_eval(seed: int, threshold: int) -> None:
    qrels, run = _random_case(seed, 300)
    _assert_parity(qrels, run, threshold, 1e-9)


def test_lists_equal_scores_in_the_same_order() -> None:
    qrels, run = _random_case(99, 100)
    lists = rm.Run.from_lists(run.to_lists())
    scored = rm.evaluate(qrels, run, list(MEASURES))
    ranked = rm.evaluate(qrels, lists, list(MEASURES))
    assert scored.aggregate == ranked.aggregate
