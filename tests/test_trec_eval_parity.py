"""Our numbers equal trec_eval's (through pytrec_eval) on real and randomized inputs.

pytrec_eval ranks on scores stored as 32-bit floats (trec_eval <= 9), so these comparisons
use ``score_precision="float32"``; the default (64-bit doubles, trec_eval 10) is pinned
against trec_eval 10's own output in test_metric_model.py.
"""

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
    "bpref": "bpref",
    "num_ret": "num_ret",
    "num_rel": "num_rel",
    "num_rel_ret": "num_rel_ret",
    # pytrec_eval is trec_eval 9: recall levels become ranks as level * R + 0.9, truncated
    "iprec_at_recall(level=0.0, rounding=trec9)": "iprec_at_recall_0.00",
    "iprec_at_recall(level=0.3, rounding=trec9)": "iprec_at_recall_0.30",
    "iprec_at_recall(level=0.5, rounding=trec9)": "iprec_at_recall_0.50",
    "iprec_at_recall(level=1.0, rounding=trec9)": "iprec_at_recall_1.00",
}
SUMMED = {"num_ret", "num_rel", "num_rel_ret"}  # trec_eval sums counts over queries
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
    "bpref",
    "gm_map",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "iprec_at_recall",
}


def _reference(qrels: rm.Qrels, run: rm.Run | dict, threshold: int) -> dict[str, dict[str, float]]:
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels.to_dict(), PYTREC_FAMILIES, relevance_level=threshold
    )
    return evaluator.evaluate(run if isinstance(run, dict) else run.to_dict())


def _assert_parity(
    qrels: rm.Qrels,
    run: rm.Run,
    threshold: int,
    tolerance: float,
    reference: dict[str, dict[str, float]] | None = None,
) -> rm.EvaluationResult:
    reference = reference or _reference(qrels, run, threshold)
    result = rm.evaluate(
        qrels,
        run,
        list(MEASURES),
        missing="skip",
        relevance_threshold=threshold,
        score_precision="float32",
    )
    assert set(result.query_ids) == set(reference)
    for query_id, expected in reference.items():
        for ours, theirs in MEASURES.items():
            assert result.per_query[query_id][ours] == pytest.approx(
                expected[theirs], abs=tolerance
            ), (query_id, ours)
    for ours, theirs in MEASURES.items():
        pool = np.sum if ours in SUMMED else np.mean
        pooled = pool([expected[theirs] for expected in reference.values()])
        assert result.aggregate[ours] == pytest.approx(pooled, abs=tolerance), ours
    # gm_map: pytrec_eval gives each query's log(max(AP, 1e-5)); the run's value is exp(mean)
    gm_map = rm.evaluate(
        qrels, run, ["gm_map"], missing="skip", relevance_threshold=threshold,
        score_precision="float32",
    )  # fmt: skip
    logs = [expected["gm_map"] for expected in reference.values()]
    assert gm_map["gm_map"] == pytest.approx(np.exp(np.mean(logs)), rel=1e-12)
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
    # the same run from dicts
    _assert_parity(rm.Qrels.from_dict(qrels.to_dict()), rm.Run.from_dict(run.to_dict()), 1, 1e-12)


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


def _close_scores(seed: int, n_queries: int) -> tuple[rm.Qrels, dict[str, dict[str, float]]]:
    """Scores that differ only past float32 precision: the two settings rank them apart."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_queries):
        docs = [f"d{i:02d}" for i in range(50)]
        qrels[f"q{q}"] = {d: rng.choice([0, 1, 1, 2, 3]) for d in rng.sample(docs, 15)}
        bases = [rng.choice([0.25, 1.0, 7.5]) for _ in range(6)]
        run[f"q{q}"] = {
            d: rng.choice(bases) + rng.choice([0.0, 1e-9, -2e-9, 4e-8])
            for d in rng.sample(docs, rng.randrange(1, 40))
        }
    return rm.Qrels.from_dict(qrels), run


@pytest.mark.parametrize("seed", range(3))
def test_float32_equals_pytrec_eval_on_scores_apart_past_float32(seed: int) -> None:
    qrels, run = _close_scores(seed, 150)
    reference = _reference(qrels, run, 1)
    _assert_parity(qrels, rm.Run.from_dict(run), 1, 1e-12, reference)
    # the default ranks these scores apart, as trec_eval 10 does: some values differ
    doubles = rm.evaluate(qrels, run, list(MEASURES), missing="skip")
    assert any(
        abs(doubles.per_query[q][ours] - reference[q][theirs]) > 1e-9
        for q in reference
        for ours, theirs in MEASURES.items()
    )


def test_float32_equals_pytrec_eval_from_files(tmp_path) -> None:  # type: ignore[no-untyped-def]
    qrels, run = _close_scores(9, 80)
    with open(tmp_path / "run.txt", "w") as handle:
        for q, scores in run.items():
            for rank, (d, score) in enumerate(sorted(scores.items(), key=lambda i: -i[1]), 1):
                handle.write(f"{q} Q0 {d} {rank} {score!r} close\n")
    qrels.to_trec(tmp_path / "qrels.txt")
    with open(tmp_path / "qrels.txt") as qf, open(tmp_path / "run.txt") as rf:
        reference = pytrec_eval.RelevanceEvaluator(
            pytrec_eval.parse_qrel(qf), PYTREC_FAMILIES
        ).evaluate(pytrec_eval.parse_run(rf))
    _assert_parity(
        rm.Qrels.from_trec(tmp_path / "qrels.txt"),
        rm.Run.from_trec(tmp_path / "run.txt"),
        1,
        1e-12,  # the ranking is the same; sums may differ in the last bit
        reference,
    )
