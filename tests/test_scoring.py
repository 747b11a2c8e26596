"""QueryScorer: single rankings scored with the core's numbers, checked at construction."""

from __future__ import annotations

import math
import random

import pytest

import ragmetrics as rm
from ragmetrics.adapters._records import RetrievalLog
from ragmetrics.adapters._scoring import QueryScorer
from ragmetrics.errors import IdMismatchWarning, InputFormatError, InvalidParameterError

NAMES = [
    "hit_rate@3", "mrr", "P@5", "recall@5", "map", "ndcg@5", "ndcg_exp", "err@4",
    "r_precision", "ra_nwg@3", "pct_proc@3", "n_recall_5@3",
]  # fmt: skip
GRADE_MAP = {0: 1, 1: 2, 2: 4, 3: 5}


def _random(seed: int, n: int = 300) -> tuple[dict, dict]:  # type: ignore[type-arg]
    rng = random.Random(seed)
    judgments, rankings = {}, {}
    for i in range(n):
        pool = [f"d{j}" for j in range(20)]
        judgments[f"q{i}"] = {d: rng.randint(0, 3) for d in rng.sample(pool, rng.randint(1, 8))}
        rankings[f"q{i}"] = rng.sample(pool, rng.randint(0, 12))
    return judgments, rankings


def test_scores_with_qrels_equal_a_whole_evaluation() -> None:
    judgments, rankings = _random(1)
    core = rm.evaluate(judgments, rankings, NAMES, grade_map=GRADE_MAP)
    scorer = QueryScorer(NAMES, qrels=judgments, grade_map=GRADE_MAP)
    for query_id, ranking in rankings.items():
        scores = scorer.score(ranking, query_id=query_id)
        for name in NAMES:
            expected = core.per_query[query_id][name]
            if expected is None:
                assert scores[name] is None, (query_id, name)
            else:
                assert scores[name] == pytest.approx(expected, abs=1e-12), (query_id, name)


def test_evidence_groups_are_scored_as_in_their_qrels() -> None:
    qrels = rm.Qrels.from_groups({"q": [["a", "b"], ["c"]], "r": [["x"]]})
    scorer = QueryScorer(["group_recall@2", "mrr"], qrels=qrels)
    expected = rm.evaluate(qrels, {"q": ["b", "z", "c"]}, ["group_recall@2", "mrr"], missing="skip")
    assert scorer.score(["b", "z", "c"], query_id="q") == expected.per_query["q"]


def test_checked_at_construction() -> None:
    with pytest.raises(rm.UnknownMetricError):
        QueryScorer(["ndgc@5"])
    with pytest.raises(InvalidParameterError, match="missing"):
        QueryScorer(["mrr"], missing="skip")
    with pytest.raises(InvalidParameterError, match="relevance_treshold"):
        QueryScorer(["mrr"], relevance_treshold=2)
    with pytest.raises(rm.GradeScaleError, match="grade_map"):
        QueryScorer(["ra_nwg@5"], qrels={"q": {"a": 1, "b": 0}})


def test_inputs_are_checked_in_full() -> None:
    scorer = QueryScorer(["mrr"])
    with pytest.raises(InputFormatError, match=r"must be strings; .* 7"):
        scorer.score(["a", 7], {"a": 1})  # type: ignore[list-item]
    with pytest.raises(InputFormatError, match="grade of 'a'"):
        scorer.score(["a"], {"a": "high"})  # type: ignore[dict-item]
    with pytest.raises(InputFormatError, match="must be a list of doc ids"):
        scorer.score("abc", {"a": 1})
    assert scorer.score(["x", "a", "a"], {"a": 1}) == {"mrr": 0.5}  # a repeat is dropped
    assert scorer.score(["a"], {}) == {"mrr": None}  # nothing judged: NA


def test_the_last_ranking_is_scored_once_and_copies_are_the_callers() -> None:
    scorer = QueryScorer(["mrr", "P@2"])
    first = scorer.score(["x", "a"], {"a": 1})
    first["mrr"] = 99.0
    assert scorer.score(["x", "a"], {"a": 1}) == {"mrr": 0.5, "P@2": 0.5}
    assert scorer.value("P@2", ["a", "b"], {"a": 1, "b": 1}) == 1.0


def test_ids_of_another_form_warn_once() -> None:
    scorer = QueryScorer(["mrr"], id_hint=" Pass id_key=...")
    with pytest.warns(IdMismatchWarning, match=r"not of the form.* Pass id_key"):
        scorer.score(["1b4e28ba-2fa1-11d2", "6fa459ea-ee8a-3ca4"], {"doc1": 1})
    assert scorer.score(["7c9e6679-7425-40de"], {"doc2": 1}) == {"mrr": 0.0}  # no second
    alike = QueryScorer(["mrr"])
    assert alike.score(["doc7"], {"doc1": 1}) == {"mrr": 0.0}  # same form: a plain miss


def test_a_log_pairs_spans_and_never_keeps_them_open() -> None:
    log = RetrievalLog(queries={"hello": "q1"}, max_records=2)
    log.start("s1", "hello", retriever="R", tags=["t"])
    log.fail("s1", ValueError("boom"))
    log.fail("s9", ValueError("never started"))  # unknown span, no query: not recorded
    log.end("s2", ["a"], query="other")  # an end without a start is still recorded
    log.start("s3", "hello")
    log.end("s3", ["b"])
    assert log.open_spans == 0
    records = log.records()
    assert [r.span_id for r in records] == ["s2", "s3"]  # max_records keeps the newest
    assert log.run().to_lists() == {"other": ["a"], "q1": ["b"]}
    result = log.evaluate({"q1": {"b": 1}}, ["mrr"])
    assert result.aggregate == {"mrr": 1.0} and math.isclose(result["mrr"] or 0, 1.0)
