"""The one-import ports: ``ragmetrics.compat.pytrec_eval`` gives pytrec_eval's nested dicts,
measure for measure, on the real TREC runs beside the project and on runs with ties."""

from __future__ import annotations

import random
from typing import Any

import pytest

from ragmetrics.compat import pytrec_eval as port
from ragmetrics.errors import InvalidParameterError
from tests.conftest import shared_file

pytrec_eval = pytest.importorskip("pytrec_eval")


def _assert_same(ours: dict[str, dict[str, float]], theirs: dict[str, dict[str, float]]) -> None:
    assert ours.keys() == theirs.keys()
    for query_id, values in theirs.items():
        assert ours[query_id].keys() == values.keys(), query_id
        for measure, value in values.items():
            assert ours[query_id][measure] == pytest.approx(value, rel=1e-12, abs=1e-12), (
                query_id,
                measure,
            )


def _read(qrels_name: str, run_name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    with open(shared_file(*qrels_name.split("/"))) as handle:
        qrels = pytrec_eval.parse_qrel(handle)
    with open(shared_file(*run_name.split("/"))) as handle:
        run = pytrec_eval.parse_run(handle)
    return qrels, run


@pytest.mark.parametrize(
    ("measures", "options"),
    [
        ({"all_trec"}, {}),
        ({"official"}, {"relevance_level": 2}),
        ({"P_5", "P.10,20", "ndcg_cut.10", "map_cut_100", "recall.1000"}, {}),
        ({"all_trec"}, {"judged_docs_only_flag": True}),
        ({"ndcg", "bpref", "infAP", "Rprec_mult.0.5,2"}, {"relevance_level": 3}),
    ],
)
@pytest.mark.parametrize(
    "files",
    [
        ("trec_eval/qrels.test", "trec_eval/results.test"),
        ("trec_eval/qrels-302.test", "trec_eval/results-302.test"),
        ("cacm/qrels.cacm.txt", "cacm/cacm-bm25.run.txt"),
    ],
)
def test_relevance_evaluator_equals_pytrec_eval_on_real_runs(
    files: tuple[str, str], measures: set[str], options: dict[str, Any]
) -> None:
    qrels, run = _read(*files)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, measures, **options).evaluate(run)
    ours = port.RelevanceEvaluator(qrels, measures, **options).evaluate(run)
    _assert_same(ours, theirs)


def test_relevance_evaluator_on_ties_and_32_bit_scores() -> None:
    rng = random.Random(4)
    qrels = {f"q{q}": {f"d{d}": rng.choice([0, 1, 2]) for d in range(15)} for q in range(30)}
    qrels["empty"] = {}
    run = {
        f"q{q}": {f"d{d}": rng.choice([0.5, 1.0, 1.0 + 1e-9, 2.0]) for d in range(25)}
        for q in range(32)
    }
    for measures in ({"all_trec"}, {"ndcg_cut_5", "P_5", "recip_rank", "iprec_at_recall"}):
        theirs = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
        _assert_same(port.RelevanceEvaluator(qrels, measures).evaluate(run), theirs)


def test_the_names_and_the_refusals() -> None:
    assert port.supported_measures == set(pytrec_eval.supported_measures)
    for name in ("official", "set", "all_trec"):
        assert port.supported_nicknames[name] == set(pytrec_eval.supported_nicknames[name])
    with pytest.raises(InvalidParameterError, match="unsupported measure 'ndcg@10'"):
        port.RelevanceEvaluator({"q": {"a": 1}}, {"ndcg@10"})
    with pytest.raises(InvalidParameterError, match="a set of names"):
        port.RelevanceEvaluator({"q": {"a": 1}}, "map")
    assert port.RelevanceEvaluator({"q": {"a": 1}}, {"map"}).evaluate({}) == {}
    with pytest.raises(InvalidParameterError, match="relevance_level must be 1 or more"):
        port.RelevanceEvaluator({"q": {"a": 1}}, {"map"}, relevance_level=0)
    lines = ["q1 Q0 a 1 2.5 x", "q1 Q0 b 2 1.5 x"]
    assert port.parse_run(lines) == pytrec_eval.parse_run(lines)
    assert port.parse_qrel(["q1 0 a 1"]) == pytrec_eval.parse_qrel(["q1 0 a 1"])
