"""What a metric means is declared once in its MetricSpec, and everything reads it there:
parameters and names, direction, grade scale, and the wording of diagnostics."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

import ragmetrics as rm
from ragmetrics.metrics import parse_metric, registered
from ragmetrics.metrics.registry import CAP3, Scale
from ragmetrics.report.plots import decompositions
from tests.conftest import shared_file

GRADED = {"q1": {"a": 3, "b": 1, "c": 2, "d": 0}, "q2": {"e": 2, "f": 1}}
RANKED = {"q1": ["b", "x", "a", "d", "c"], "q2": ["f", "e"]}

# --- parameters, declared once -------------------------------------------------------------


def test_kernels_take_exactly_their_declared_parameters() -> None:
    for spec in registered().values():
        keywords = [
            p.name
            for p in inspect.signature(spec.kernel).parameters.values()
            if p.kind is p.KEYWORD_ONLY
        ]
        assert keywords == [p.name for p in spec.params], spec.name


def test_the_cap3_default_is_written_once() -> None:
    # evaluate(), diagnose() and robustness() read the declared default
    explicit = rm.evaluate({"q": {"a": 5, "b": 3, "c": 3}}, {"q": ["b"]}, ["ra_nwg@1"], cap3=0.25)
    default = rm.evaluate({"q": {"a": 5, "b": 3, "c": 3}}, {"q": ["b"]}, ["ra_nwg@1"])
    assert explicit.aggregate == default.aggregate
    assert CAP3.default == 0.25
    assert inspect.signature(rm.diagnose).parameters["cap3"].default == CAP3.default


@pytest.mark.parametrize(
    ("name", "same_as", "keywords"),
    [
        ("P(rel=2)@5", "P@5", {"relevance_threshold": 2}),
        ("R(rel=2)@5", "recall@5", {"relevance_threshold": 2}),
        ("AP(rel=2)", "map", {"relevance_threshold": 2}),
        ("RR(rel=3)", "mrr", {"relevance_threshold": 3}),
        ("nDCG(dcg='exp-log2')@10", "ndcg_exp@10", {}),
        ('nDCG(dcg="log2")@10', "ndcg@10", {}),
        ("ERR(max_grade=4)@10", "err@10", {"err_max_grade": 4}),
    ],
)
def test_parameters_in_the_name_equal_the_keywords(name: str, same_as: str, keywords: dict) -> None:
    in_name = rm.evaluate(GRADED, RANKED, [name]).column(name)
    as_keyword = rm.evaluate(GRADED, RANKED, [same_as], **keywords).column(same_as)
    assert np.array_equal(in_name, as_keyword)


def test_set_metric_parameters_in_the_name() -> None:
    qrels = {"q": {"a": 5, "b": 4, "c": 4, "d": 3, "e": 3, "f": 3, "g": 2, "h": 1}}
    run = {"q": ["b", "d", "e", "f"]}
    named = rm.evaluate(qrels, run, ["RA_nWG(alpha=0.5)@4", "ra_nwg@4"])
    keyword = rm.evaluate(qrels, run, ["ra_nwg@4"], rarity_alpha=0.5)
    assert named["RA_nWG(alpha=0.5)@4"] == keyword["ra_nwg@4"]
    assert named["ra_nwg@4"] == pytest.approx(0.228261, abs=1e-6)  # worked case 1
    # the name wins over the keyword: the keyword sets what the name leaves unset
    both = rm.evaluate(qrels, run, ["ra_nwg(alpha=1)@4", "ra_nwg@4"], rarity_alpha=0.5)
    assert both["ra_nwg(alpha=1)@4"] == named["ra_nwg@4"]
    assert both["ra_nwg@4"] == keyword["ra_nwg@4"]


def test_canonical_names_round_trip_with_parameters() -> None:
    for written, canonical in [
        ("P(rel=2)@5", "precision(rel=2)@5"),
        ("nDCG(dcg='exp-log2')@10", "ndcg_exp@10"),
        ("ndcg_exp@10", "ndcg_exp@10"),
        ("ERR(max_grade=4)", "err(max_grade=4.0)"),
        ("ra_nwg(cap3=0.25, alpha=0.5)@5", "ra_nwg(alpha=0.5)@5"),
        ("P.10", "precision@10"),
        ("ndcg_cut.10", "ndcg@10"),
        ("P_10", "precision@10"),
    ]:
        metric = parse_metric(written)
        assert metric.name == canonical, written
        assert parse_metric(metric.name).name == canonical
        again = parse_metric(metric.name)
        assert again.resolve({}).params == metric.resolve({}).params


@pytest.mark.parametrize(
    ("name", "error", "message"),
    [
        ("ndcg10", rm.UnknownMetricError, r"Unknown metric 'ndcg10'\. Did you mean 'ndcg@10'\?"),
        ("P5", rm.UnknownMetricError, r"Did you mean 'P@5'\?"),
        ("P_avgjg", rm.UnknownMetricError, r"'P_avgjg': P_avgjg is a trec_eval / ir_measures"),
        ("P(gains=2)@5", rm.InvalidParameterError, r"'precision' has no parameter 'gains'"),
        ("P(rel=1.5)@5", rm.InvalidParameterError, r"The 'rel' parameter of 'P\(rel=1\.5\)@5'"),
        ("nDCG(dcg=exp)@5", rm.InvalidParameterError, r"must be one of 'log2', 'exp-log2'"),
        ("ra_nwg(cap3=-1)@5", rm.InvalidParameterError, r"must be a number in \[0, 1\]"),
        ("P(rel 2)@5", rm.InvalidParameterError, r"write them as name=value"),
    ],
)
def test_name_errors(name: str, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        parse_metric(name)


def test_err_max_grade_below_the_judged_grades_is_refused() -> None:
    with pytest.raises(rm.InvalidParameterError, match=r"ERR's max_grade is 2 but the qrels"):
        rm.evaluate(GRADED, RANKED, ["err@5"], err_max_grade=2)


def test_list_metrics_declares_meaning() -> None:
    listing = {m["name"]: m for m in rm.list_metrics()}
    assert listing["harm"]["higher_is_better"] is False
    assert listing["ndcg"]["higher_is_better"] is True
    assert listing["ra_nwg"]["scale"] == Scale.UTILITY.value
    assert [p["name"] for p in listing["ra_nwg"]["params"]] == ["alpha", "cap4", "cap3"]
    assert "ndcg_exp" in listing["ndcg"]["aliases"]


# --- direction -----------------------------------------------------------------------------


def _harm_case() -> tuple[dict, dict, dict]:
    qrels = {f"q{i}": {"good": 5, "weak": 1} for i in range(40)}
    baseline = {q: ["weak", "x"] for q in qrels}  # harm@2 = 0.5 everywhere
    better = {q: ["good", "x"] for q in qrels}  # harm@2 = 0
    return qrels, baseline, better


@pytest.mark.parametrize("label", ["harm@2", "Harm@2"])
def test_lower_is_better_is_read_from_the_spec(label: str) -> None:
    qrels, baseline, better = _harm_case()
    cmp = rm.compare(qrels, {"base": baseline, "new": better}, [label], baseline="base")
    test = cmp.tests[0]
    assert test.diff == pytest.approx(-0.5)
    assert (test.wins, test.ties, test.losses) == (40, 0, 0)
    assert math.isnan(test.effect_size)  # every query improves by 0.5: no d_z (was inf)
    assert cmp.best(label) == "new"
    assert "**0.0000**▲" in cmp.to_markdown()
    assert f"better is lower for {label}" in cmp.legend()


def test_worst_queries_follow_the_direction() -> None:
    qrels = {"q1": {"a": 5, "b": 1}, "q2": {"a": 5, "b": 1}}
    result = rm.evaluate(qrels, {"q1": ["a", "b"], "q2": ["b", "a"]}, ["harm@1"])
    assert result.worst("harm@1", 1) == ["q2"]  # its top-1 is the weak doc


def test_the_decomposition_is_found_by_spec_not_by_spelling() -> None:
    qrels = {f"q{i}": {"a": 5, "b": 4, "c": 2} for i in range(4)}
    runs = {"x": {q: ["a", "c"] for q in qrels}, "y": {q: ["c", "b"] for q in qrels}}
    cmp = rm.compare(qrels, runs, ["RA-nWG@2", "proc@2", "%proc@2", "ndcg@2"])
    assert decompositions(cmp) == [("RA-nWG@2", "proc@2", "%proc@2")]
    other = rm.compare(qrels, runs, ["ra_nwg(alpha=0.5)@2", "proc@2", "%proc@2"])
    assert decompositions(other) == []  # another weighting: the bars would not multiply


# --- grade scale ---------------------------------------------------------------------------


def test_binary_qrels_are_refused_by_the_set_metrics_with_a_map() -> None:
    qrels = rm.Qrels.from_trec(shared_file("cacm", "qrels.cacm.txt"))
    run = rm.Run.from_trec(shared_file("cacm", "cacm-bm25.run.txt"))
    with pytest.raises(
        rm.GradeScaleError,
        match=r"The RAG set metrics \(ra_nwg@10, harm@10\) need utility grades 1\.\.5 .* these "
        r"qrels have grades \{1\} \(binary judgments\)\. Map them with grade_map=\{1: 5\}",
    ):
        rm.evaluate(qrels, run, ["ndcg@10", "ra_nwg@10", "harm@10"])
    mapped = rm.evaluate(qrels, run, ["P@10", "ra_nwg@10", "harm@10"], grade_map={1: 5})
    assert mapped["harm@10"] == 0.0  # before: harm@10 equal to P@10
    assert mapped.counts.na["ra_nwg@10"] == 0  # before: NA for every query


@pytest.mark.parametrize(
    ("grades", "proposal"),
    [
        ({0, 1}, r"\{0: 1, 1: 5\}"),
        ({0, 1, 2, 3}, r"\{0: 1, 1: 3, 2: 4, 3: 5\}"),
        ({1, 2, 3}, r"\{1: 1, 2: 4, 3: 5\}"),  # 1 stays "not relevant"
    ],
)
def test_plainly_other_scales_get_a_proposed_map(grades: set, proposal: str) -> None:
    qrels = {"q": {f"d{g}": g for g in grades}}
    with pytest.raises(rm.GradeScaleError, match=rf"grade_map={proposal}"):
        rm.evaluate(qrels, {"q": ["d1"]}, ["proc@1"])


def test_a_map_without_grade_four_or_five_is_refused() -> None:
    with pytest.raises(rm.GradeScaleError, match=r"grade_map maps the qrels' grades \{0, 1\} to"):
        rm.evaluate({"q": {"a": 1, "b": 0}}, {"q": ["a"]}, ["ra_nwg@1"], grade_map={0: 1, 1: 3})


def test_unjudged_and_classic_metrics_read_any_scale() -> None:
    result = rm.evaluate({"q": {"a": 1, "b": 0}}, {"q": ["a", "z"]}, ["unjudged@2", "ndcg@2"])
    assert result["unjudged@2"] == 0.5


# --- diagnostics follow the metrics asked for ----------------------------------------------


def test_classic_metrics_diagnose_by_the_threshold_and_call_nothing_harmful() -> None:
    # grades 1..3 fit in 1..5, but nDCG users mean "relevant from 1 up"
    qrels = {"q": {"a": 1, "b": 3, "c": 2}}
    result = rm.evaluate(qrels, {"q": ["a", "x"]}, ["ndcg@2"])
    diagnosis = result.diagnose("q")
    assert not diagnosis.utility_scale and diagnosis.harmful == ()
    assert {n.doc_id for n in diagnosis.missed_not_in_pool} == {"b", "c"}
    assert "harmful" not in diagnosis.to_markdown()
    assert "relevant (grade >= 1) not in the pool" in diagnosis.to_markdown()


def test_set_metrics_diagnose_on_the_mapped_utility_scale() -> None:
    qrels = {"q": {"a": 1, "b": 3, "c": 2, "d": 0}}
    grade_map = {0: 1, 1: 3, 2: 4, 3: 5}
    result = rm.evaluate(qrels, {"q": ["a", "d"]}, ["ra_nwg@2"], grade_map=grade_map)
    diagnosis = result.diagnose("q")
    # a (grade 1, relevant at the threshold) maps to utility 3: not harmful; d maps to 1
    assert [n.doc_id for n in diagnosis.harmful] == ["d"]
    assert [n.doc_id for n in diagnosis.missed_not_in_pool] == ["b", "c"]


# --- score precision -----------------------------------------------------------------------


def test_score_precision_check_value() -> None:
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 1.0 + 1e-9, "z": 1.0}}
    assert rm.evaluate(qrels, run, ["mrr"])["mrr"] == 1.0
    assert rm.evaluate(qrels, run, ["mrr"], score_precision="float32")["mrr"] == 0.5
    ranked = rm.Run.from_dict(run)
    assert ranked["q"] == ("a", "z")
    assert ranked.ranking("q", score_precision="float32") == ("z", "a")


# Scores that differ only past float32 precision. Expected values: trec_eval 10.0's own
# output (-q -m map -m recip_rank -m ndcg_cut.2 -m P.2, four decimals) for float64, and
# pytrec_eval's for float32.
ADVERSARIAL_QRELS = {"q1": {"a": 1, "c": 2}, "q2": {"m": 1, "n": 1}, "q3": {"x": 2, "y": 0}}
ADVERSARIAL_RUN = {
    "q1": {"a": 1.000000001, "z": 1.0, "c": 0.5},
    "q2": {"m": 2.0000000004, "zz": 2.0, "n": 2.0000000002},
    "q3": {"b": 0.30000000000000004, "x": 0.3, "y": 0.3},
}
TREC_EVAL_10 = {
    "q1": {"map": 0.8333, "recip_rank": 1.0, "ndcg_cut_2": 0.3801, "P_2": 0.5},
    "q2": {"map": 1.0, "recip_rank": 1.0, "ndcg_cut_2": 1.0, "P_2": 1.0},
    "q3": {"map": 0.3333, "recip_rank": 0.3333, "ndcg_cut_2": 0.0, "P_2": 0.0},
}


def test_float64_reproduces_trec_eval_10() -> None:
    result = rm.evaluate(
        ADVERSARIAL_QRELS, ADVERSARIAL_RUN, ["map", "recip_rank", "ndcg_cut_2", "P_2"]
    )
    for query, expected in TREC_EVAL_10.items():
        for name, value in expected.items():
            assert result.per_query[query][name] == pytest.approx(value, abs=5e-5), (query, name)


def test_float32_reproduces_pytrec_eval() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    families = {"map", "recip_rank", "ndcg_cut.2", "P.2"}
    expected = pytrec_eval.RelevanceEvaluator(ADVERSARIAL_QRELS, families).evaluate(ADVERSARIAL_RUN)
    result = rm.evaluate(
        ADVERSARIAL_QRELS,
        ADVERSARIAL_RUN,
        ["map", "recip_rank", "ndcg_cut_2", "P_2"],
        score_precision="float32",
    )
    for query, values in result.per_query.items():
        for name, value in values.items():
            assert value == expected[query][name], (query, name)
    default = rm.evaluate(ADVERSARIAL_QRELS, ADVERSARIAL_RUN, ["map"])
    assert default["map"] != result["map"]  # the case does tell the settings apart
