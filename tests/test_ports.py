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


ir_measures = pytest.importorskip("ir_measures")

IR_MEASURES_NAMES = [
    "nDCG@10",
    "nDCG",
    "P(rel=2)@5",
    "P@10",
    "IPrec@0.5",
    "IPrec@0.0",
    "NumRet",
    "NumRet(rel=1)",
    "NumRel",
    "NumQ",
    "Judged@10",
    "Judged@5",
    "ERR@10",
    "ERR@5",
    "nDCG(dcg='exp-log2')@10",
    "AP",
    "AP@100",
    "R@20",
    "RR",
    "RR@10",
    "RR(rel=2)@10",
    "Rprec",
    "Bpref",
    "infAP",
    "Success@5",
    "SetP",
    "SetR",
    "SetF",
    "SetAP",
    "SetP(relative=True)",
    "nDCG(judged_only=True)@10",
    "AP(rel=2)",
    "nDCG(gains={0:0,1:1,2:5,3:10})@10",
    "MRR@10",
    "SetF(beta=0.5)",
    "MAP",
    "NDCG@5",
    "Precision@5",
    "Recall@10",
    "RPrec",
    "BPref",
    "NumRelRet",
    "SetF(rel=2,beta=0.5)",  # parameters print in the order given, as there
    "SetF(beta=0.5,rel=2)",
]


def _ir_inputs(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = random.Random(seed)
    qrels = {
        str(i): {f"d{j}": rng.choice([0, 0, 1, 2, 3]) for j in rng.sample(range(40), 15)}
        for i in range(30)
    }
    qrels["98"] = {}  # a query without judgments
    qrels["97"] = {"d1": 2, "d2": 0}  # a judged query the run does not answer
    run = {  # a coarse grid of scores: ties, which each implementation breaks its own way
        str(i): {
            f"d{j}": rng.choice([0.1, 0.2, 0.3, 0.5, 0.7, 0.9]) for j in rng.sample(range(40), 25)
        }
        for i in range(32)
    }
    run["99"] = {}
    return qrels, run


@pytest.mark.parametrize("name", IR_MEASURES_NAMES)
def test_every_ir_measures_name_means_what_it_means_there(name: str) -> None:
    from ragmetrics.compat import ir_measures as port_irm

    qrels, run = _ir_inputs(3)
    theirs = {
        m.query_id: m.value
        for m in ir_measures.iter_calc([ir_measures.parse_measure(name)], qrels, run)
    }
    measure = port_irm.parse_measure(name)
    assert str(measure) == str(ir_measures.parse_measure(name))
    ours = {m.query_id: m.value for m in port_irm.iter_calc([measure], qrels, run)}
    assert ours.keys() == theirs.keys()
    # gdeval (ERR, exp-log2 nDCG) prints its values to 5 decimals: ir_measures reads those
    close = 5e-6 if "ERR" in name or "exp-log2" in name else 1e-12
    for query_id, value in theirs.items():
        assert ours[query_id] == pytest.approx(value, abs=close), query_id
    aggregate = port_irm.calc_aggregate([measure], qrels, run)[measure]
    expected = ir_measures.calc_aggregate([ir_measures.parse_measure(name)], qrels, run)
    assert aggregate == pytest.approx(next(iter(expected.values())), abs=close)


def test_every_ir_measures_name_in_one_call_means_what_it_means_alone() -> None:
    """Every name at once: the trec_eval-backed ones are evaluated together where they read
    the qrels alike (and apart where two print the same name: ``SetF`` with two betas),
    each with the values it has alone in ir_measures."""
    from ragmetrics.compat import ir_measures as port_irm

    qrels, run = _ir_inputs(7)
    # each measure once (MRR@10 is RR@10, NDCG@5 is nDCG@5)
    names = list({str(ir_measures.parse_measure(n)): n for n in IR_MEASURES_NAMES}.values())
    ours: dict[tuple[str, str], float] = {}
    for metric in port_irm.iter_calc([port_irm.parse_measure(n) for n in names], qrels, run):
        key = (str(metric.measure), metric.query_id)
        assert key not in ours
        ours[key] = metric.value
    for name in names:
        measure = ir_measures.parse_measure(name)
        for metric in ir_measures.iter_calc([measure], qrels, run):
            close = 5e-6 if "ERR" in name or "exp-log2" in name else 1e-12
            got = ours.pop((str(measure), metric.query_id))
            assert got == pytest.approx(metric.value, abs=close), (name, metric.query_id)
    assert not ours


def test_ir_measures_objects_pandas_and_refusals() -> None:
    pandas = pytest.importorskip("pandas")
    from ragmetrics.compat import ir_measures as port_irm
    from ragmetrics.compat.ir_measures import AP, Judged, P, nDCG

    qrels, run = _ir_inputs(5)
    measures = [nDCG @ 10, P(rel=2) @ 5, AP, Judged @ 10]
    assert [str(m) for m in measures] == ["nDCG@10", "P(rel=2)@5", "AP", "Judged@10"]
    frame_q = pandas.DataFrame(
        [(q, d, g) for q, docs in qrels.items() for d, g in docs.items()],
        columns=["query_id", "doc_id", "relevance"],
    )
    frame_r = pandas.DataFrame(
        [(q, d, s) for q, docs in run.items() for d, s in docs.items()],
        columns=["query_id", "doc_id", "score"],
    )
    from_frames = port_irm.calc_aggregate(measures, frame_q, frame_r)
    theirs = ir_measures.calc_aggregate(
        [ir_measures.parse_measure(str(m)) for m in measures], frame_q, frame_r
    )
    assert {str(m): v for m, v in from_frames.items()} == pytest.approx(
        {str(m): v for m, v in theirs.items()}, abs=1e-12
    )
    evaluator = port_irm.evaluator(measures, frame_q)
    assert evaluator.calc_aggregate(frame_r) == from_frames
    with pytest.raises(InvalidParameterError, match="P needs a cutoff"):
        port_irm.calc_aggregate([P], qrels, run)
    with pytest.raises(InvalidParameterError, match="Rprec takes no cutoff"):
        port_irm.parse_measure("Rprec@10")
    with pytest.raises(InvalidParameterError, match="has no parameter 'gain'"):
        port_irm.parse_measure("nDCG(gain=2)@10")
    from ragmetrics.errors import UnknownMetricError

    with pytest.raises(UnknownMetricError, match="not offered by the ir_measures port"):
        port_irm.parse_measure("alpha_nDCG@10")
