"""The compatibility facades reproduce their tools' formulas, on top of the core."""

from __future__ import annotations

import math

import pytest

import ragmetrics as rm
from ragmetrics.compat import autorag, remem, tutorial

GOLD = [["doc1", "doc2"], ["doc3"]]


def test_remem_recall_follows_its_formula() -> None:
    pooled, per_example = remem.RetrievalRecall().calculate_metric_scores(
        GOLD, [["doc1", "doc3", "doc2"], ["doc4", "doc3"]], k_list=[1, 5, 10]
    )
    # example 1: {doc1} of {doc1, doc2} at k=1; example 2: nothing at k=1, doc3 by k=5
    assert per_example == [
        {"Recall@1": 0.5, "Recall@5": 1.0, "Recall@10": 1.0},
        {"Recall@1": 0.0, "Recall@5": 1.0, "Recall@10": 1.0},
    ]
    assert pooled == {
        "Recall@1": 0.25,
        "Recall@5": 1.0,
        "Recall@10": 1.0,
    }  # docs print 0.5: formula wins


def test_remem_recall_cuts_before_dropping_repeats_and_zero_for_empty_gold() -> None:
    _, rows = remem.RetrievalRecall().calculate_metric_scores(
        [["a", "b"], []], [["a", "a", "b"], ["x"]], [2]
    )
    assert rows == [{"Recall@2": 0.5}, {"Recall@2": 0.0}]  # set(["a", "a"]) holds only a


def test_remem_recall_all_uses_chunk_matching() -> None:
    gold = [["Date: 1 May\nuser: I adopted a dog named Rex", "the weather was fine"], ["x"]]
    chunks = [["user: I adopted a dog", "nothing", "weather was fine"], ["y"]]
    pooled, rows = remem.RetrievalRecallAll().calculate_metric_scores(
        gold, chunks, k_list=[1, 2, 3]
    )
    assert rows[0] == {"Recall_all@1": 0.0, "Recall_all@2": 0.0, "Recall_all@3": 1.0}
    assert rows[1] == {"Recall_all@1": 0.0, "Recall_all@2": 0.0, "Recall_all@3": 0.0}
    assert pooled["Recall_all@3"] == 0.5


def test_remem_ndcg_any_discount() -> None:
    _, rows = remem.RetrievalNDCGAny().calculate_metric_scores(
        [["gold text here"]], [["miss", "gold text", "gold"]], [1, 2, 3]
    )
    # relevances [0, 1, 1]; ranks 1 and 2 weigh 1, rank 3 weighs 1/log2(3); ideal [1, 1, 0]
    assert rows[0]["NDCG_any@1"] == 0.0
    assert rows[0]["NDCG_any@2"] == pytest.approx(1 / 2)  # ideal@2 = [1, 1]
    assert rows[0]["NDCG_any@3"] == pytest.approx((1 + 1 / math.log2(3)) / 2)


@pytest.mark.parametrize(
    ("gold", "chunks", "message"),
    [
        ([["a"]], [["a"], ["b"]], r"gold_docs has 1 examples but retrieved_chunks has 2"),
        ([], [], r"gold_docs and retrieved_chunks are empty"),
        (["a"], [["a"]], r"Example 0: .* not a single string"),
    ],
)
def test_remem_errors(gold: list, chunks: list, message: str) -> None:
    with pytest.raises(rm.RagMetricsError, match=message):
        remem.RetrievalRecall().calculate_metric_scores(gold, chunks)


def test_remem_bad_k_list() -> None:
    with pytest.raises(rm.RagMetricsError, match=r"k_list must hold integers >= 1"):
        remem.RetrievalRecall(global_config=None).calculate_metric_scores([["a"]], [["a"]], [0])


AUTORAG_GT = [["test-1", "test-2"], ["test-3"]]
AUTORAG_PRED = ["test-1", "pred-1", "test-2", "pred-3"]


def test_autorag_documented_example() -> None:
    assert autorag.retrieval_precision(AUTORAG_GT, AUTORAG_PRED) == 0.5
    assert autorag.retrieval_recall(AUTORAG_GT, AUTORAG_PRED) == 0.5
    assert autorag.retrieval_f1(AUTORAG_GT, AUTORAG_PRED) == 0.5
    assert autorag.retrieval_mrr(AUTORAG_GT, AUTORAG_PRED) == 0.5
    assert autorag.retrieval_map(AUTORAG_GT, AUTORAG_PRED) == pytest.approx(5 / 12)
    assert autorag.retrieval_ndcg(AUTORAG_GT, AUTORAG_PRED) == pytest.approx(0.703918, abs=1e-6)


def test_autorag_batches() -> None:
    batch = autorag.retrieval_recall([AUTORAG_GT, [["x"]]], [AUTORAG_PRED, ["x"]])
    assert batch == [0.5, 1.0]
    with pytest.raises(rm.RagMetricsError, match=r"gt has 1 queries but pred has 2"):
        autorag.retrieval_recall([AUTORAG_GT], [AUTORAG_PRED, ["x"]])


def test_autorag_agrees_with_the_core_where_definitions_agree() -> None:
    qrels = rm.Qrels.from_groups({"q": AUTORAG_GT})
    core = rm.evaluate(
        qrels, {"q": AUTORAG_PRED}, ["group_recall@4", "ndcg@4", "precision@4"]
    ).aggregate
    assert core["group_recall@4"] == autorag.retrieval_recall(AUTORAG_GT, AUTORAG_PRED)
    assert core["ndcg@4"] == pytest.approx(autorag.retrieval_ndcg(AUTORAG_GT, AUTORAG_PRED))
    assert core["precision@4"] == autorag.retrieval_precision(AUTORAG_GT, AUTORAG_PRED)


def test_autorag_token_metrics() -> None:
    gt = [["The cat sat on the mat."], ["A dog barked loudly."]]
    pred = ["cat sat on a mat", "nothing in common"]
    # passage 1 vs gt 1: tokens {cat, sat, on, mat} all shared -> precision 1, recall 1
    assert autorag.retrieval_token_precision(gt, pred) == pytest.approx((1.0 + 0.0) / 2)
    assert autorag.retrieval_token_recall(gt, pred) == pytest.approx((1.0 + 0.0) / 2)
    assert autorag.retrieval_token_f1(gt, pred) == pytest.approx(0.5)
    assert autorag.normalize_answer("The  Cat, sat!") == "cat sat"


def test_tutorial_evaluator_follows_its_formulas() -> None:
    results = [
        tutorial.RetrievalResult("q1", ["d1", "d3", "d5", "d2", "d7"], {"d1", "d2", "d4"}),
        tutorial.RetrievalResult("q2", ["d6", "d8", "d1", "d9", "d2"], {"d1", "d2"}),
    ]
    evaluator = tutorial.RetrievalEvaluator(k_values=[1, 3, 5])
    values = evaluator.evaluate(results)
    assert values["P@3"] == pytest.approx((1 / 3 + 1 / 3) / 2)
    assert values["R@5"] == pytest.approx((2 / 3 + 1) / 2)
    assert values["MRR"] == pytest.approx((1 + 1 / 3) / 2)
    assert values["MAP"] == pytest.approx(((1 + 2 / 4) / 3 + (1 / 3 + 2 / 5) / 2) / 2)
    # NDCG@3 normalized by the retrieved top 3: q1 relevances [1, 0, 0] -> 1; q2 [0, 0, 1] -> (1/2) / 1
    assert values["NDCG@3"] == pytest.approx((1 + 0.5) / 2)
    assert values["Hit@1"] == 0.5
    assert evaluator.evaluate_single(results[0])["P@1"] == 1.0
    assert len(evaluator.evaluate_batch(results)) == 2
    report = evaluator.generate_report()
    assert report.startswith("# Retrieval Evaluation Report") and "- MRR: 0.6667" in report


def test_tutorial_query_without_relevant_docs_counts_as_zero() -> None:
    values = tutorial.RetrievalEvaluator([1]).evaluate(
        [tutorial.RetrievalResult("q1", ["a"], {"a"}), tutorial.RetrievalResult("q2", ["a"], set())]
    )
    assert values["P@1"] == 0.5 and values["MRR"] == 0.5


def test_tutorial_benchmark() -> None:
    bench = tutorial.RetrievalBenchmark()
    bench.add_query("q1", "who", ["d1"])
    bench.add_query("q2", "what", ["d2", "d3"])
    docs = {"who": ["d9", "d1"], "what": ["d2", "d8", "d3"]}
    first = bench.run_evaluation("lookup", lambda text: docs[text], k=2)
    assert first["mrr"] == pytest.approx((1 / 2 + 1) / 2)
    assert first["p@2"] == pytest.approx((1 / 2 + 1 / 2) / 2)
    assert first["hit_rate"] == 1.0
    bench.run_evaluation("nothing", lambda text: [], k=2)
    table = bench.compare_retrievers()
    assert table.splitlines()[2] == "| Retriever | MRR | P@2 | R@2 | Hit Rate | NDCG |"
    assert table.index("lookup") < table.index("nothing")
    with pytest.raises(rm.RagMetricsError, match=r"relevant_docs must be a list of ids"):
        bench.add_query("q3", "x", "d1")
