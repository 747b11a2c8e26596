"""The checked values of METRICS.md (trec_eval 9.0 and small hand cases)."""

from __future__ import annotations

import pytest

import ragmetrics as rm


def _one(qrels: dict[str, int], ranking: list[str], metrics: list[str], **options: int) -> dict:
    return rm.evaluate({"q": qrels}, {"q": ranking}, metrics, **options).aggregate


def test_binary_three_relevant_two_retrieved() -> None:
    values = _one(
        {"a": 1, "b": 1, "c": 1}, ["a", "x"], ["precision@5", "recall@5", "ndcg@2", "ndcg@10"]
    )
    assert values["precision@5"] == pytest.approx(1 / 5)  # 1 relevant in 5 slots
    assert values["recall@5"] == pytest.approx(1 / 3)
    # DCG@2 = 1/log2(2); IDCG@2 = 1 + 1/log2(3)
    assert values["ndcg@2"] == pytest.approx(0.6131, abs=5e-5)
    assert values["ndcg@10"] == pytest.approx(0.4693, abs=5e-5)


def test_graded_ndcg_linear_and_exponential() -> None:
    values = _one({"a": 3, "b": 1}, ["b", "a"], ["ndcg@2", "ndcg_exp@2"])
    # linear: (1 + 3/log2 3) / (3 + 1/log2 3); exponential: (1 + 7/log2 3) / (7 + 1/log2 3)
    assert values["ndcg@2"] == pytest.approx(0.7967, abs=5e-5)
    assert values["ndcg_exp@2"] == pytest.approx(0.7098, abs=5e-5)


def test_average_precision_and_its_cutoff() -> None:
    values = _one({"a": 1, "b": 1, "c": 1, "d": 1}, ["a", "x", "b", "y", "c"], ["map", "map@2"])
    assert values["map"] == pytest.approx((1 + 2 / 3 + 3 / 5) / 4)
    assert values["map@2"] == pytest.approx(1 / 4)  # divisor stays R = 4


@pytest.mark.parametrize(
    ("threshold", "expected"),
    [
        (1, {"map": 0.4167, "mrr": 0.3333, "precision@4": 0.5, "ndcg@4": 0.5174}),
        (2, {"map": 0.25, "mrr": 0.25, "precision@4": 0.25, "ndcg@4": 0.5174}),
    ],
)
def test_negative_grades_and_threshold(threshold: int, expected: dict[str, float]) -> None:
    values = _one(
        {"a": -1, "b": 0, "c": 1, "d": 2},
        ["a", "b", "c", "d"],
        list(expected),
        relevance_threshold=threshold,
    )
    assert values == pytest.approx(expected, abs=5e-5)


def test_ties_rank_by_doc_id_descending() -> None:
    run = rm.Run.from_dict({"q": {"c": 1.0, "a": 1.0, "b": 1.0}})
    assert run["q"] == ("c", "b", "a")
    assert rm.evaluate({"q": {"a": 1}}, run, ["mrr"]).aggregate["mrr"] == pytest.approx(1 / 3)


def test_err_uses_the_highest_judged_grade() -> None:
    # R_i = (2^g - 1) / 2^3 with g = 3, 1; ERR = R_1 + (1 - R_1) R_2 / 2
    r1, r2 = 7 / 8, 1 / 8
    values = _one({"a": 3, "b": 1}, ["a", "b"], ["err", "err@1"])
    assert values["err"] == pytest.approx(r1 + (1 - r1) * r2 / 2)
    assert values["err@1"] == pytest.approx(r1)
    fixed = _one({"a": 3, "b": 1}, ["a", "b"], ["err"], err_max_grade=4)
    assert fixed["err"] == pytest.approx(7 / 16 + (1 - 7 / 16) * (1 / 16) / 2)


def test_f1_hit_rate_r_precision() -> None:
    values = _one(
        {"a": 1, "b": 1}, ["x", "a", "y", "b"], ["f1@2", "hit_rate@1", "hit_rate@2", "r_precision"]
    )
    p, r = 1 / 2, 1 / 2
    assert values["f1@2"] == pytest.approx(2 * p * r / (p + r))
    assert values["hit_rate@1"] == 0.0
    assert values["hit_rate@2"] == 1.0
    assert values["r_precision"] == pytest.approx(1 / 2)  # one relevant in the first R = 2


def test_query_without_relevant_docs_scores_zero_and_is_counted() -> None:
    result = rm.evaluate(
        {"q": {"a": 0}}, {"q": ["a"]}, ["map", "ndcg@5", "recall@5", "recall_all@5"]
    )
    assert result.aggregate["map"] == 0.0
    assert result.counts.queries == 1
    assert result.per_query["q"]["recall_all@5"] is None  # NA when R = 0
    assert result.counts.na["recall_all@5"] == 1
