"""compare(): paired tests (checked against scipy), reproducibility, corrections, rendering."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

import ragmetrics as rm
from ragmetrics.analysis.stats import (
    adjust,
    bootstrap_test,
    randomization_test,
    student_t_sf2,
    t_test,
)
from ragmetrics.cli._commands import main
from tests.conftest import shared_file

scipy_stats = pytest.importorskip("scipy.stats")


@pytest.fixture(scope="module")
def cacm() -> tuple[rm.Qrels, dict[str, rm.Run]]:
    qrels = rm.Qrels.from_trec(shared_file("cacm", "qrels.cacm.txt"))
    bm25 = rm.Run.from_trec(shared_file("cacm", "cacm-bm25.run.txt"))
    rng = random.Random(0)
    swapped = rm.Run.from_lists({q: list(r[:3])[::-1] + list(r[3:]) for q, r in bm25.items()})
    thinned = rm.Run.from_lists({q: [d for d in r if rng.random() < 0.8] for q, r in bm25.items()})
    return qrels, {"bm25": bm25, "swap3": swapped, "drop20": thinned}


def test_t_test_equals_scipy_on_real_runs(cacm) -> None:  # type: ignore[no-untyped-def]
    qrels, runs = cacm
    comparison = rm.compare(
        qrels, runs, ["ndcg@10", "map", "recall@100"], baseline="bm25", test="t-test"
    )
    for test in comparison.tests:
        a = comparison.results[test.a].column(test.metric)
        b = comparison.results[test.b].column(test.metric)
        expected = scipy_stats.ttest_rel(b, a).pvalue
        if np.isnan(expected):  # scipy: every difference is 0
            assert test.p_value == 1.0
        else:
            assert test.p_value == pytest.approx(expected, rel=1e-9)


def test_student_t_tail_against_scipy() -> None:
    for t, df in [(0.3, 2), (1.96, 30), (4.0, 7), (12.0, 200)]:
        assert student_t_sf2(t, df) == pytest.approx(2 * scipy_stats.t.sf(t, df), rel=1e-10)


def test_randomization_test_is_seeded_and_sensible() -> None:
    rng = np.random.default_rng(3)
    a = rng.random(50)
    shifted = a + 0.2 + rng.normal(0, 0.05, 50)
    assert randomization_test(shifted, a, seed=1) == randomization_test(shifted, a, seed=1)
    assert randomization_test(shifted, a, n_permutations=2000) == pytest.approx(1 / 2001)
    noise = a + rng.normal(0, 0.05, 50)
    p_noise = randomization_test(noise, a)
    assert p_noise > 0.05
    # agrees with scipy's exact permutation test on a small sample
    small_a, small_b = a[:10], noise[:10]
    exact = scipy_stats.permutation_test(
        (small_b - small_a,), np.mean, permutation_type="samples", n_resamples=np.inf
    ).pvalue
    assert randomization_test(small_b, small_a, n_permutations=20_000) == pytest.approx(
        exact, abs=0.02
    )
    assert bootstrap_test(shifted, a) < 0.01
    assert t_test(a, a) == 1.0


def test_corrections() -> None:
    p = [0.01, 0.04, 0.03]
    assert adjust(p, "bonferroni") == pytest.approx([0.03, 0.12, 0.09])
    assert adjust(p, "holm") == pytest.approx([0.03, 0.06, 0.06])
    assert adjust(p, None) == p
    with pytest.raises(
        rm.RagMetricsError,
        match=r"correction must be one of 'none', 'bonferroni', 'holm', .* got 'fdr'",
    ):
        adjust(p, "fdr")


def test_comparison_contents(cacm) -> None:  # type: ignore[no-untyped-def]
    qrels, runs = cacm
    comparison = rm.compare(qrels, runs, ["ndcg@10", "P@5"], baseline="bm25", correction="holm")
    swap = comparison.test("ndcg@10", "bm25", "swap3")
    assert swap.significant and swap.diff < 0 and swap.p_adjusted >= swap.p_value
    assert (
        swap.wins + swap.ties + swap.losses == swap.n == comparison.results["bm25"].counts.queries
    )
    assert swap.ci_low <= swap.diff <= swap.ci_high
    unchanged = comparison.test("P@5", "bm25", "swap3")  # reordering the top 3 keeps P@5
    assert unchanged.ties == unchanged.n and not unchanged.significant
    low, high = comparison.intervals["bm25"]["ndcg@10"]
    assert low <= comparison.means["bm25"]["ndcg@10"] <= high
    assert comparison.best("ndcg@10") == "bm25"
    text = comparison.to_markdown()
    assert (
        "| bm25 (baseline) | **0.4543** |" in text
        and "0.3956▼" in text
        and "Holm correction" in text
    )
    payload = json.loads(comparison.to_json())
    assert payload["baseline"] == "bm25" and len(payload["tests"]) == 4
    assert list(comparison.to_pandas().index) == ["bm25", "swap3", "drop20"]
    assert len(comparison.tests_to_pandas()) == 4
    assert "<table>" in comparison._repr_html_()


def test_all_pairs_get_letters(cacm) -> None:  # type: ignore[no-untyped-def]
    qrels, runs = cacm
    comparison = rm.compare(qrels, runs, ["ndcg@10"])
    assert len(comparison.tests) == 3
    assert "**0.4543**bc" in comparison.to_markdown()


def test_compare_errors(cacm) -> None:  # type: ignore[no-untyped-def]
    qrels, runs = cacm
    with pytest.raises(
        rm.RagMetricsError, match=r"compare needs two or more runs to compare \(got 1\)"
    ):
        rm.compare(qrels, {"bm25": runs["bm25"]}, ["map"])
    with pytest.raises(
        rm.RagMetricsError, match=r"The baseline 'x' is not one of the runs: bm25, swap3, drop20"
    ):
        rm.compare(qrels, runs, ["map"], baseline="x")
    with pytest.raises(
        rm.RagMetricsError, match=r"test must be one of 'randomization', 't-test', 'bootstrap'"
    ):
        rm.compare(qrels, runs, ["map"], test="sign")


def test_cli_compare(capsys: pytest.CaptureFixture[str]) -> None:
    qrels = shared_file("cacm", "qrels.cacm.txt")
    run = shared_file("cacm", "cacm-bm25.run.txt")
    code = main(
        [
            "compare",
            str(qrels),
            f"a={run}",
            f"b={run}",
            "-m",
            "map",
            "--baseline",
            "a",
            "--format",
            "json",
        ]
    )
    payload = json.loads(capsys.readouterr().out)
    assert code == 0 and payload["tests"][0]["p_value"] == 1.0 and payload["tests"][0]["ties"] > 0
    code = main(["compare", str(qrels), f"a={run}", f"a={run}", "-m", "map"])
    assert code == 2 and "Two runs are named 'a'" in capsys.readouterr().err


def test_verdict_says_what_is_significant_or_that_nothing_is() -> None:
    qrels = {f"q{i}": {"a": 1} for i in range(40)}
    good = {f"q{i}": ["a", "x"] for i in range(40)}
    bad = {f"q{i}": ["x", "y", "a"] for i in range(40)}
    found = rm.compare(qrels, {"bad": bad, "good": good}, ["mrr"], baseline="bad")
    assert found.verdict().startswith("good is significantly better than bad on mrr (+0.6667")
    same = rm.compare(qrels, {"bad": bad, "copy": dict(bad)}, ["mrr"], baseline="bad")
    assert same.verdict().startswith("No run differs significantly from bad on any metric")
