"""The compatibility facades reproduce their tools' formulas, on top of the core."""

from __future__ import annotations

import math
import random

import pytest

import ragmetrics as rm
from ragmetrics.compat import autorag, remem, tutorial
from tests.conftest import shared_seed

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
    with pytest.raises(rm.RagMetricsError, match=r"retrieval_gt has 1 queries but pred has 2"):
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
    # the tutorial's keys say 5 whatever k is
    assert first["p@5"] == pytest.approx((1 / 2 + 1 / 2) / 2)
    assert first["hit_rate"] == 1.0
    bench.run_evaluation("nothing", lambda text: [], k=2)
    table = bench.compare_retrievers()
    assert table.splitlines()[2] == "| Retriever | MRR | P@5 | R@5 | Hit Rate | NDCG |"
    assert table.endswith("**Winner:** lookup (highest MRR)")
    assert table.index("lookup") < table.index("nothing")
    with pytest.raises(rm.RagMetricsError, match=r"relevant_docs must be a list of ids"):
        bench.add_query("q3", "x", "d1")


# --- exactness: each facade reproduces its tool, repeats and empty inputs included ------


def test_autorag_precision_counts_unique_hits_over_the_raw_length() -> None:
    assert autorag.retrieval_precision([["a"]], ["a", "a"]) == 0.5
    assert autorag.retrieval_precision([["a"], ["b"]], ["a", "x", "b", "a"]) == 0.5


def test_autorag_ndcg_ideal_counts_every_listed_id() -> None:
    # the ideal holds min(2 listed ids, 2 predictions) = 2 ones: DCG 1 / IDCG (1 + 1/log2 3)
    assert autorag.retrieval_ndcg([["a"], ["a"]], ["a", "x"]) == pytest.approx(
        1 / (1 + 1 / math.log2(3))
    )
    assert autorag.retrieval_ndcg([["a"], ["a"]], ["a", "x"]) == pytest.approx(0.6131, abs=1e-4)
    # a repeated hit adds gain again
    assert autorag.retrieval_ndcg([["a", "b"]], ["a", "a"]) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("gt", "pred"),
    [
        (None, ["a"]),
        ([["a"]], None),
        ([], ["a"]),
        ([["a"]], []),
        ([["a"], []], ["a"]),
        ([["a", " "]], ["a"]),
        ([["a"]], ["a", ""]),
    ],
)
def test_autorag_gives_none_where_autorag_does(gt: list | None, pred: list | None) -> None:
    for function in (
        autorag.retrieval_precision,
        autorag.retrieval_recall,
        autorag.retrieval_f1,
        autorag.retrieval_mrr,
        autorag.retrieval_map,
        autorag.retrieval_ndcg,
    ):
        assert function(gt, pred) is None, function.__name__


def test_autorag_takes_its_keywords() -> None:
    assert autorag.retrieval_recall(retrieval_gt=AUTORAG_GT, pred=AUTORAG_PRED) == 0.5
    assert autorag.retrieval_map(pred=AUTORAG_PRED, retrieval_gt=AUTORAG_GT) == pytest.approx(
        5 / 12
    )
    assert autorag.retrieval_recall([AUTORAG_GT, []], [AUTORAG_PRED, ["x"]]) == [0.5, None]


def test_remem_recall_all_of_empty_gold_is_zero() -> None:
    pooled, rows = remem.RetrievalRecallAll().calculate_metric_scores(
        [[], ["gold text"]], [["anything"], ["gold text"]], [1]
    )
    assert rows == [{"Recall_all@1": 0.0}, {"Recall_all@1": 1.0}]
    assert pooled == {"Recall_all@1": 0.5}


def test_remem_pools_rounded_to_four_decimals() -> None:
    pooled, rows = remem.RetrievalRecall().calculate_metric_scores(
        [["a", "b", "c"], ["a"], ["a"]], [["a"], ["x"], ["x"]], [1]
    )
    assert rows[0]["Recall@1"] == pytest.approx(1 / 3)  # per example: unrounded
    assert pooled == {"Recall@1": 0.1111}  # mean 1/9, rounded as remem rounds it


def test_tutorial_keeps_repeats_as_its_code_does() -> None:
    result = tutorial.RetrievalResult("q", ["a", "a", "b"], {"a"})
    metrics = tutorial.RetrievalMetrics
    assert metrics.precision_at_k(result, 2) == 1.0  # the list is counted: a, a
    assert metrics.recall_at_k(result, 2) == 1.0  # set(["a", "a"])
    assert metrics.average_precision(result) == 2.0  # 1/1 + 2/2, over one relevant id
    assert metrics.ndcg_at_k(result, 3) == 1.0
    evaluator = tutorial.RetrievalEvaluator([1, 3])
    one = evaluator.evaluate_single("q", ["a", "a", "x"], {"a", "b"})
    assert one.precision == 0.5  # sets: {a} of {a, x}
    assert one.precision_at_k == {1: 1.0, 3: 2 / 3}  # the list: a, a of 3
    assert one.recall_at_k == {1: 0.5, 3: 0.5}
    assert one.first_relevant_position == 1 and one.retrieved_count == 2


def test_tutorial_query_dict_batches() -> None:
    evaluator = tutorial.RetrievalEvaluator(k_values=[1, 3, 5, 10])
    queries = [
        {"id": "q1", "retrieved": ["d1", "d2", "d3", "d4", "d5"], "relevant": {"d1", "d3", "d6"}},
        {"id": "q2", "retrieved": ["d7", "d8", "d9", "d10", "d11"], "relevant": {"d7", "d8"}},
    ]
    results = evaluator.evaluate_batch(queries)
    assert results["count"] == 2
    assert results["mrr"] == 1.0
    assert results["mean_p@3"] == pytest.approx(2 / 3)
    assert results["hit_rate"] == 1.0 and results["success@1"] == 1.0
    assert results["mean_precision"] == pytest.approx((2 / 5 + 2 / 5) / 2)
    assert evaluator.evaluate_batch([]) == {}
    with pytest.raises(rm.RagMetricsError, match=r"Query 0 lacks the key\(s\) 'relevant'"):
        evaluator.evaluate_batch([{"id": "q", "retrieved": []}])


def test_tutorial_report_is_the_tutorials() -> None:
    evaluator = tutorial.RetrievalEvaluator(k_values=[1, 10, 3])
    evaluator.evaluate([tutorial.RetrievalResult("q", ["a", "b"], {"b"})])
    report = evaluator.generate_report()
    # keys sorted as strings, as the tutorial sorts them; no F1 or hit-rate section
    assert "## Precision\n- P@1: 0.0000\n- P@10: 0.1000\n- P@3: 0.3333\n" in report
    assert "F1" not in report and "Hit" not in report
    assert report.endswith("## Overall\n- MAP: 0.5000\n- MRR: 0.5000\n")


def test_tutorial_agrees_with_the_core_without_repeats() -> None:
    rng = random.Random(3)
    results = []
    for q in range(60):
        docs = [f"d{i}" for i in range(30)]
        retrieved = rng.sample(docs, rng.randrange(1, 15))
        relevant = set(rng.sample(docs, rng.randrange(1, 6)))
        results.append(tutorial.RetrievalResult(f"q{q}", retrieved, relevant))
    ks = [1, 3, 5]
    values = tutorial.RetrievalEvaluator(ks).evaluate(results)
    qrels = {r.query_id: dict.fromkeys(r.relevant_doc_ids, 1) for r in results}
    run = {r.query_id: r.retrieved_doc_ids for r in results}
    names = [f"{m}@{k}" for k in ks for m in ("precision", "recall", "f1", "hit_rate")]
    core = rm.evaluate(qrels, run, [*names, "map", "mrr"]).aggregate
    for k in ks:
        assert values[f"P@{k}"] == pytest.approx(core[f"precision@{k}"])
        assert values[f"R@{k}"] == pytest.approx(core[f"recall@{k}"])
        assert values[f"F1@{k}"] == pytest.approx(core[f"f1@{k}"])
        assert values[f"Hit@{k}"] == pytest.approx(core[f"hit_rate@{k}"])
    assert values["MAP"] == pytest.approx(core["map"])
    assert values["MRR"] == pytest.approx(core["mrr"])


def _seed_code(name: str, start: str, stop: str) -> dict:
    """Run the code of a tutorial (a seed document beside the project) between two markers;
    its own functions are the reference, read in place and never copied."""
    text = shared_seed(name).read_text(encoding="utf-8")
    body = text[text.index(start) : text.index(stop)]
    code = "\n".join(
        line for line in body.splitlines() if not line.startswith(("```", "Evaluating Multiple"))
    )
    namespace: dict = {}
    exec(compile(code, name, "exec"), namespace)
    return namespace


def _random_lists(seed: int) -> list[tuple[str, list[str], set[str]]]:
    rng = random.Random(seed)
    cases = []
    for q in range(80):
        pool = [f"d{i}" for i in range(12)]
        # repeats on purpose: the tutorials keep them as their code does
        retrieved = [rng.choice(pool) for _ in range(rng.randrange(0, 12))]
        relevant = set(rng.sample(pool, rng.randrange(0, 5)))
        cases.append((f"q{q}", retrieved, relevant))
    return cases


def test_tutorial_evaluator_equals_the_blog_posts_code() -> None:
    seed = _seed_code("002_4269759e00444f93.txt", "import numpy as np", "Graded Relevance Metrics")
    cases = _random_lists(1)
    theirs = seed["RetrievalEvaluator"](k_values=[1, 3, 5, 10]).evaluate(
        [seed["RetrievalResult"](q, r, rel, []) for q, r, rel in cases]
    )
    ours_evaluator = tutorial.RetrievalEvaluator(k_values=[1, 3, 5, 10])
    ours = ours_evaluator.evaluate([tutorial.RetrievalResult(q, r, rel) for q, r, rel in cases])
    assert ours.keys() == theirs.keys()
    for key, value in theirs.items():
        assert ours[key] == pytest.approx(float(value), abs=1e-12), key
    report = seed["RetrievalEvaluator"]().generate_report(theirs)
    assert ours_evaluator.generate_report(ours) == report


def test_tutorial_batch_and_benchmark_equal_the_lessons_code() -> None:
    evaluator_code = _seed_code(
        "003_9c27ea466ac60542.txt",
        "from dataclasses import dataclass\nfrom typing import Dict, List, Set, Optional",
        "# Usage\nevaluator = RetrievalEvaluator",
    )
    cases = _random_lists(2)
    queries = [{"id": q, "retrieved": r, "relevant": rel} for q, r, rel in cases]
    theirs = evaluator_code["RetrievalEvaluator"](k_values=[1, 3, 5, 10]).evaluate_batch(queries)
    ours = tutorial.RetrievalEvaluator(k_values=[1, 3, 5, 10]).evaluate_batch(queries)
    assert ours == pytest.approx(theirs, abs=1e-12)
    graded = [
        dict(q, relevance_scores={d: 1 + i % 3 for i, d in enumerate(q["relevant"])})
        for q in queries
    ]
    assert tutorial.RetrievalEvaluator(k_values=[1, 5]).evaluate_batch(graded) == pytest.approx(
        evaluator_code["RetrievalEvaluator"](k_values=[1, 5]).evaluate_batch(graded), abs=1e-12
    )
    bench_code = _seed_code(
        "003_9c27ea466ac60542.txt",
        "from dataclasses import dataclass\nfrom typing import Callable, Dict, List, Set",
        "# Usage\nbenchmark",
    )
    theirs_bench, ours_bench = bench_code["RetrievalBenchmark"](), tutorial.RetrievalBenchmark()
    for q, _, rel in cases:
        if rel:
            theirs_bench.add_query(q, q, sorted(rel))
            ours_bench.add_query(q, q, sorted(rel))
    runs = {
        name: dict(zip((c[0] for c in cases), (c[1] for c in _random_lists(seed))))
        for seed, name in ((4, "a"), (5, "b"), (6, "c"))
    }
    for name, lists in runs.items():
        for k in (3, 5):
            expected = theirs_bench.run_evaluation(name, lists.__getitem__, k=k)
            assert ours_bench.run_evaluation(name, lists.__getitem__, k=k) == pytest.approx(
                expected, abs=1e-12
            )
    assert ours_bench.compare_retrievers() == theirs_bench.compare_retrievers()
