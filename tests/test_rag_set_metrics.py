"""RA-nWG@K, PROC@K, %PROC@K and companions: the worked cases of METRICS.md and their options."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ragmetrics as rm
from ragmetrics.cli._commands import main
from ragmetrics.metrics._rag import rarity_weights
from tests.conftest import shared_file

CASE_U = {"a": 5, "b": 4, "c": 4, "d": 3, "e": 3, "f": 3, "g": 2, "h": 1}
SET_METRICS = [
    "ra_nwg@4",
    "proc@4",
    "pct_proc@4",
    "n_recall_4plus@4",
    "n_recall_5@4",
    "precision_4plus@4",
    "harm@4",
]


def test_case_1_weights_and_values() -> None:
    # n5 = 1, n4 = 2, n3 = 3 of N = 8: r5 = 8, r4 = 2, r3 = 0.1 / (3/8); w4 = 0.25, w3 = 1/30
    weights = rarity_weights(np.array([[0, 1, 1, 3, 2, 1]]))[0]
    assert weights[3:].tolist() == pytest.approx([1 / 30, 0.25, 1.0])
    values = rm.evaluate({"q": CASE_U}, {"q": ["b", "d", "e", "f"]}, SET_METRICS).aggregate
    g_obs, g_oracle = 0.25 + 3 / 30, 1 + 0.25 + 0.25 + 1 / 30
    assert values["ra_nwg@4"] == pytest.approx(g_obs / g_oracle)
    assert values["ra_nwg@4"] == pytest.approx(0.228261, abs=1e-6)
    assert values["proc@4"] == pytest.approx(0.228261, abs=1e-6)
    assert values["pct_proc@4"] == pytest.approx(1.0)
    assert values["n_recall_4plus@4"] == pytest.approx(1 / 3)
    assert values["n_recall_5@4"] == 0.0
    assert values["precision_4plus@4"] == 0.25
    assert values["harm@4"] == 0.0


def test_case_2_separate_pool() -> None:
    pool = rm.Run.from_lists({"q": ["b", "d", "e", "f", "a", "g", "x"]})
    values = rm.evaluate(
        {"q": CASE_U}, {"q": ["b", "d", "e", "f"]}, SET_METRICS, pool=pool
    ).aggregate
    assert values["proc@4"] == pytest.approx(0.858696, abs=1e-6)  # G_pool = 1 + .25 + 2/30
    assert values["pct_proc@4"] == pytest.approx(0.265823, abs=1e-6)
    assert values["ra_nwg@4"] == pytest.approx(0.228261, abs=1e-6)


def test_a_query_the_pool_does_not_cover_falls_back_to_its_own_ranking() -> None:
    # q2 is not in the pool: its PROC is read from its own ranking (as without pool=), while
    # q1's comes from the pool
    qrels = {"q1": CASE_U, "q2": CASE_U}
    run = {"q1": ["b", "d", "e", "f"], "q2": ["b", "d", "e", "f", "a", "c"]}
    pool = rm.Run.from_lists({"q1": ["b", "d", "e", "f", "a", "g", "x"]})
    with_pool = rm.evaluate(qrels, run, ["proc@4"], pool=pool).per_query
    without = rm.evaluate(qrels, run, ["proc@4"]).per_query
    assert with_pool["q1"]["proc@4"] == pytest.approx(0.858696, abs=1e-6)
    assert with_pool["q2"]["proc@4"] == without["q2"]["proc@4"] == pytest.approx(1.0)


def test_case_3_no_grade_five_uses_fallback_weights() -> None:
    names = ["ra_nwg@2", "proc@2", "pct_proc@2", "n_recall_4plus@2", "n_recall_5@2", "unjudged@2"]
    result = rm.evaluate({"q": {"a": 4, "b": 3, "c": 3, "d": 1}}, {"q": ["c", "x", "a"]}, names)
    values = result.aggregate
    assert values["ra_nwg@2"] == pytest.approx(0.2 / 1.2)
    assert values["proc@2"] == pytest.approx(1.0)
    assert values["pct_proc@2"] == pytest.approx(0.2 / 1.2)
    assert values["n_recall_4plus@2"] == 0.0
    assert values["n_recall_5@2"] is None
    assert values["unjudged@2"] == 0.5
    assert result.counts.na["n_recall_5@2"] == 1 and result.counts.valid["n_recall_5@2"] == 0


def test_case_4_repeated_doc_is_dropped_before_the_cut() -> None:
    values = rm.evaluate(
        {"q": {"a": 5, "b": 5, "c": 4, "d": 2, "e": 1}},
        {"q": ["d", "a", "a", "z", "c", "b"]},
        ["ra_nwg@3", "harm@3", "unjudged@3", "n_recall_5@3"],
    ).aggregate
    assert values == pytest.approx(
        {"ra_nwg@3": 1 / 3, "harm@3": 1 / 3, "unjudged@3": 1 / 3, "n_recall_5@3": 0.5}
    )


def test_na_is_left_out_of_the_mean_and_counted() -> None:
    qrels = {"q1": CASE_U, "q2": {"a": 1, "b": 2}}  # q2: nothing of weight, oracle 0
    result = rm.evaluate(qrels, {"q1": ["b", "d", "e", "f"], "q2": ["a"]}, ["ra_nwg@4", "harm@4"])
    assert result.per_query["q2"]["ra_nwg@4"] is None
    assert result.aggregate["ra_nwg@4"] == pytest.approx(0.228261, abs=1e-6)
    assert result.counts.valid["ra_nwg@4"] == 1 and result.counts.na["ra_nwg@4"] == 1
    assert result.aggregate["harm@4"] == pytest.approx((0 + 1 / 4) / 2)


def test_weighting_options_change_the_weights() -> None:
    qrels, run = {"q": CASE_U}, {"q": ["b", "d", "e", "f"]}
    flat = rm.evaluate(qrels, run, ["ra_nwg@4"], rarity_alpha=0.0).aggregate["ra_nwg@4"]
    # alpha = 0: r_g = b_g, w4 = 0.5, w3 = min(0.1, cap3) = 0.1
    assert flat == pytest.approx((0.5 + 0.3) / (1 + 0.5 + 0.5 + 0.1))
    capped = rm.evaluate(qrels, run, ["ra_nwg@4"], cap4=0.1, cap3=0.01).aggregate["ra_nwg@4"]
    assert capped == pytest.approx((0.1 + 0.03) / (1 + 0.1 + 0.1 + 0.01))


def test_grade_map_on_trec_graded_qrels() -> None:
    qrels = rm.Qrels.from_trec(shared_file("trec-qrels", "qrels.dl19-passage.txt"))
    ideal = {q: sorted(j, key=lambda d: (-j[d], d)) for q, j in qrels.items()}
    grade_map = {0: 1, 1: 3, 2: 4, 3: 5}
    result = rm.evaluate(
        qrels, ideal, ["ra_nwg@10", "proc@10", "n_recall_4plus@10"], grade_map=grade_map
    )
    # the ranking holds every judged doc, so the pool's ceiling is the oracle's
    assert result.aggregate["proc@10"] == pytest.approx(1.0)
    assert result.aggregate["n_recall_4plus@10"] == pytest.approx(1.0)
    # sorted by grade is not always the oracle set: a rare grade 3 can outweigh common 4s
    assert 0.99 < result.aggregate["ra_nwg@10"] <= 1.0
    assert result.counts.queries == len(qrels)
    with pytest.raises(
        rm.GradeScaleError,
        match=r"need utility grades 1\.\.5 .*these qrels have grades \{0, 1, 2, 3\} \(a 0\.\.3 "
        r"scale, as TREC\)\. Map them with grade_map=\{0: 1, 1: 3, 2: 4, 3: 5\}",
    ):
        rm.evaluate(qrels, ideal, ["ra_nwg@10"])


def test_grade_map_must_cover_every_grade() -> None:
    with pytest.raises(
        rm.GradeScaleError,
        match=r"grade_map does not map the grade\(s\) 7 found in the qrels \(grades \{7\}\); "
        r"add them, e\.g\. grade_map=\{7: 5\}",
    ):
        rm.evaluate({"q": {"a": 7}}, {"q": ["a"]}, ["ra_nwg@1"], grade_map={1: 1})


def test_classic_metrics_do_not_check_utility_grades() -> None:
    assert rm.evaluate({"q": {"a": 7}}, {"q": ["a"]}, ["ndcg@1"]).aggregate["ndcg@1"] == 1.0


def test_evidence_groups() -> None:
    qrels = rm.Qrels.from_groups({"q": [["a", "b"], ["c"]], "r": [["x"]]})
    run = {"q": ["b", "z", "c"], "r": ["y"]}
    result = rm.evaluate(
        qrels, run, ["group_recall@1", "group_recall@3", "recall_all@2", "recall_all@3"]
    )
    assert result.per_query["q"] == {
        "group_recall@1": 0.5,
        "group_recall@3": 1.0,
        "recall_all@2": 0.0,
        "recall_all@3": 1.0,
    }
    assert result.per_query["r"]["recall_all@3"] == 0.0
    assert qrels.groups("q") == (("a", "b"), ("c",))


def test_single_doc_groups_equal_recall() -> None:
    qrels = {"q": {"a": 1, "b": 1, "c": 0}}
    run = {"q": ["a", "x", "b"]}
    grouped = rm.Qrels.from_groups({"q": [["a"], ["b"]]})
    plain = rm.evaluate(qrels, run, ["recall@2", "group_recall@2"]).aggregate
    assert plain["recall@2"] == plain["group_recall@2"] == 0.5
    assert rm.evaluate(grouped, run, ["group_recall@2"]).aggregate["group_recall@2"] == 0.5


def test_graded_groups_and_json_round_trip(tmp_path: Path) -> None:
    qrels = rm.Qrels.from_groups({"q": [{"a": 5, "b": 4}, {"c": 3}]})
    assert qrels["q"] == {"a": 5, "b": 4, "c": 3}
    path = tmp_path / "groups.json"
    qrels.to_json(path)
    loaded = rm.Qrels.from_json(path)
    assert loaded == qrels and loaded.groups("q") == (("a", "b"), ("c",))


def test_group_errors() -> None:
    with pytest.raises(rm.InputFormatError, match=r"Group 0 of query 'q' is the string 'ab'"):
        rm.Qrels.from_groups({"q": ["ab"]})  # type: ignore[list-item]
    with pytest.raises(rm.InputFormatError, match=r"Group 1 of query 'q' is empty"):
        rm.Qrels.from_groups({"q": [["a"], []]})


def test_diagnose_splits_selection_and_retrieval_gaps() -> None:
    pool = rm.Run.from_lists({"q": ["b", "d", "e", "f", "a", "g", "x"]})
    result = rm.evaluate(
        {"q": CASE_U}, {"q": ["b", "d", "x", "g"]}, ["ra_nwg@4", "pct_proc@4"], pool=pool
    )
    diagnosis = result.diagnose("q")
    assert diagnosis.cutoff == 4
    assert [n.doc_id for n in diagnosis.missed_in_pool] == ["a"]
    assert [n.doc_id for n in diagnosis.missed_not_in_pool] == ["c"]
    assert [n.doc_id for n in diagnosis.harmful] == ["g"]
    assert [n.doc_id for n in diagnosis.unjudged] == ["x"]
    text = result.to_markdown(diagnostics=1)
    assert "selection gap): a (g5)" in text and "retrieval gap): c (g4)" in text


def test_robustness_grid_reports_order_changes() -> None:
    qrels = {"q": CASE_U}
    runs = {"fours": {"q": ["b", "c"]}, "five": {"q": ["a", "h"]}}
    grid = [(1.0, 1.0, 0.25), (0.0, 1.0, 0.25), (1.0, 0.1, 0.25)]
    result = rm.robustness(qrels, runs, "ra_nwg@2", grid=grid)
    # defaults: fours = 0.5 / 1.25, five = 1 / 1.25; cap4 = 0.1 keeps five ahead
    assert result.reference == ("five", "fours")
    assert result.stable
    flipped = rm.robustness(
        qrels,
        {"fours": {"q": ["b", "c"]}, "threes": {"q": ["d", "e"]}},
        "ra_nwg@2",
        grid=[(1.0, 1.0, 0.25), (1.0, 0.01, 0.25)],
    )
    assert not flipped.stable and flipped.changed == ((1.0, 0.01, 0.25),)
    assert "(changed)" in flipped.to_markdown()


@pytest.mark.parametrize("metric", ["ra_nwg@5", "proc@5", "pct_proc@5"])
def test_robustness_gives_what_each_setting_evaluated_alone_gives(metric: str) -> None:
    """Every setting of the grid is one label of one evaluation per run; each mean is the
    one an evaluation with that weighting alone gives, to the bit (pools and a query a run
    lacks included)."""
    import random

    rng = random.Random(metric)
    docs = [f"d{i}" for i in range(40)]
    qrels = {f"q{i}": {d: rng.randint(1, 5) for d in rng.sample(docs, 9)} for i in range(25)}
    runs = {
        name: rm.Run.from_lists({q: rng.sample(docs, 8) for q in list(qrels)[skip:]})
        for name, skip in (("a", 0), ("b", 3), ("c", 0))
    }
    pools = {name: rm.Run.from_lists({q: rng.sample(docs, 20) for q in qrels}) for name in runs}
    grid = [(0.0, 0.5, 0.1), (2.0, 1.0, 0.5), (0.5, 0.3, 0.0), (1.0, 1.0, 0.25)]
    result = rm.robustness(qrels, runs, metric, grid=grid, pools=pools)
    assert result.settings == tuple(grid)
    for row, (alpha, cap4, cap3) in enumerate(grid):
        for column, (name, run) in enumerate(runs.items()):
            alone = rm.evaluate(
                qrels, run, [metric], rarity_alpha=alpha, cap4=cap4, cap3=cap3, pool=pools[name]
            ).aggregate[metric]
            assert result.means[row, column] == alone, (alpha, cap4, cap3, name)


def test_cli_pool(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "q.json").write_text(json.dumps({"q": CASE_U}))
    (tmp_path / "r.json").write_text(json.dumps({"q": ["b", "d", "e", "f"]}))
    (tmp_path / "p.json").write_text(json.dumps({"q": ["b", "d", "e", "f", "a", "g", "x"]}))
    code = main(
        [
            "evaluate",
            str(tmp_path / "q.json"),
            str(tmp_path / "r.json"),
            "-m",
            "proc@4",
            "-m",
            "%proc@4",
            "--pool",
            str(tmp_path / "p.json"),
            "--format",
            "json",
        ]
    )
    payload = json.loads(capsys.readouterr().out)
    assert code == 0
    assert payload["aggregate"]["proc@4"] == pytest.approx(0.858696, abs=1e-6)
    assert payload["aggregate"]["%proc@4"] == pytest.approx(0.265823, abs=1e-6)
