"""The findings of a hostile user's pass over fusion, the statistics and the other surfaces
added in the third round, each pinned: an exact value or a RagMetricsError, never a NaN, an
invented zero or a raw Python error."""

from __future__ import annotations

import math
import random
import warnings
from pathlib import Path

import numpy as np
import pytest

import ragmetrics as rm
from ragmetrics.analysis import stats, systems
from ragmetrics.errors import InputFormatError, InvalidParameterError, UndefinedMetricWarning
from ragmetrics.fusion import fuse, optimize_fusion

# --- fusion -------------------------------------------------------------------------------

PLAIN = {"q1": {"a": 1.0, "b": 2.0, "c": 3.0}}


def _finite_and_ordered(run: rm.Run) -> None:
    for query, scored in run.to_dict().items():
        values = list(scored.values())
        assert all(math.isfinite(v) for v in values), (query, scored)
        assert list(run[query]) == sorted(scored, key=lambda d: (-scored[d], d), reverse=False) or (
            values == sorted(values, reverse=True)
        )


def test_an_infinite_score_is_refused_where_the_scores_are_read() -> None:
    infinite = {"q1": {"a": math.inf, "b": 2.0, "c": 1.0}}
    with pytest.raises(InputFormatError, match=r"doc 'a' of query 'q1' the score inf"):
        fuse([infinite, PLAIN], method="sum")
    # by rank, an infinite score is only the best: fused exactly
    fused = fuse([infinite, PLAIN], method="rrf")
    assert fused["q1"][0] in ("a", "c")
    _finite_and_ordered(fused)


@pytest.mark.parametrize("norm", ["min-max", "min-max-inverted", "sum", "zmuv", "max"])
def test_scores_at_the_ends_of_float64_normalize_to_finite_values_in_order(norm: str) -> None:
    huge = {"q1": {"a": 1e308, "b": 0.0, "c": -1e308}, "q2": {"a": 1.0, "b": 0.5}}
    fused = fuse([huge, huge], method="sum", norm=norm)
    _finite_and_ordered(fused)
    expected = ["c", "b", "a"] if norm == "min-max-inverted" else ["a", "b", "c"]
    assert list(fused["q1"]) == expected
    # the query without overflow keeps the plain arithmetic, bit for bit
    assert (
        fused.to_dict()["q2"]
        == fuse([huge["q2"] and {"q2": huge["q2"]}] * 2, method="sum", norm=norm).to_dict()["q2"]
    )


def test_min_max_of_huge_scores_is_the_exact_min_max() -> None:
    huge = {"q1": {"a": 1e308, "b": 0.0, "c": -1e308}}
    fused = fuse([huge, {"q1": {"a": 0.0, "b": 0.0, "c": 0.0}}], method="sum").to_dict()
    assert fused["q1"] == {"a": 1.0, "b": 0.5, "c": 0.0}


def test_a_fused_score_that_overflows_is_refused() -> None:
    huge = {"q1": {"a": 1e308, "b": 0.0}}
    with pytest.raises(InputFormatError, match=r"too large to combine"):
        fuse([huge, huge], method="sum", norm=None)


@pytest.mark.parametrize(
    ("method", "params", "match"),
    [
        ("probfuse", {"probs": [[math.nan], [0.5]]}, r"'probs' of run 1 holds nan"),
        ("probfuse", {"probs": [[1.5], [0.5]]}, r"in \[0, 1\]"),
        ("bayesfuse", {"log_odds": [[math.inf], [0.5]]}, r"'log_odds' of run 1 holds inf"),
        ("mapfuse", {"map_scores": [0.5, -1.0]}, r"'map_scores' of run 2"),
        ("posfuse", {"probs": [["x"], [0.5]]}, r"not numbers"),
    ],
)
def test_learned_parameters_are_checked(method: str, params: dict, match: str) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        fuse([PLAIN, PLAIN], method=method, params=params)


@pytest.mark.parametrize(
    ("step", "match"),
    [
        (0, "must be > 0"),
        (math.nan, "finite number"),
        (1e-300, "must divide 1"),
        (2.0, "must divide 1"),
        (0.3, "must divide 1"),
        ("x", "finite number"),
    ],
)
def test_a_bad_weight_step_is_refused(step: object, match: str) -> None:
    runs = [PLAIN, {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}}]
    with pytest.raises(InvalidParameterError, match=match):
        optimize_fusion({"q1": {"a": 1}}, runs, step=step, show_progress=False)


def test_a_grid_too_large_is_refused_up_front_with_its_size() -> None:
    runs = [PLAIN, {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}}] * 4
    with pytest.raises(InvalidParameterError, match=r"888,030 settings of 8 weights"):
        optimize_fusion({"q1": {"a": 1}}, runs, step=0.05, show_progress=False)
    with pytest.raises(InvalidParameterError, match=r"100,000,000,000 settings of k"):
        optimize_fusion({"q1": {"a": 1}}, runs[:2], method="rrf", max_k=10**12, show_progress=False)
    best = optimize_fusion({"q1": {"a": 1}}, runs[:3], step=0.5, show_progress=False)
    assert sum(best["weights"]) == pytest.approx(1.0)


def test_the_weight_grid_is_every_composition_in_order() -> None:
    from itertools import product

    from ragmetrics.fusion._methods import weight_grid

    for n, step in ((2, 0.1), (3, 0.25), (4, 0.5)):
        units = round(1 / step)
        expected = [c for c in product(range(units + 1), repeat=n) if sum(c) == units]
        got = weight_grid(n, {"step": step})
        assert [tuple(round(w / step) for w in g["weights"]) for g in got] == expected


# --- statistics ---------------------------------------------------------------------------


def test_a_test_not_run_does_not_move_the_others_corrections() -> None:
    for method in ("bh", "by", "holm", "bonferroni", "holm-sidak"):
        with_nan = stats.adjust([0.01, math.nan, 0.02, 0.03], method)
        without = stats.adjust([0.01, 0.02, 0.03], method)
        assert math.isnan(with_nan[1])
        assert [with_nan[0], with_nan[2], with_nan[3]] == without


@pytest.mark.parametrize("p", [1.5, -0.1, math.inf])
def test_adjust_refuses_p_outside_0_1(p: float) -> None:
    with pytest.raises(InvalidParameterError, match=r"must lie in \[0, 1\]"):
        stats.adjust([0.01, p], "holm")


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_the_bootstrap_cannot_call_a_handful_of_queries_significant(n: int) -> None:
    a = np.linspace(0.5, 0.9, n)
    p = stats.bootstrap_test(a, a - 0.3)
    assert p >= 2.0 ** (1 - n)
    assert p >= 0.05
    qrels = {f"q{i}": {"a": 1} for i in range(n)}
    good = {f"q{i}": ["a"] for i in range(n)}
    bad = {f"q{i}": ["x", "a"] for i in range(n)}
    cmp = rm.compare(qrels, {"bad": bad, "good": good}, ["mrr"], test="bootstrap")
    assert not any(t.significant for t in cmp.tests)


def test_a_constant_improvement_has_no_standardized_effect() -> None:
    base = np.linspace(0.1, 0.6, 10)
    with pytest.warns(UndefinedMetricWarning, match="undefined"):
        assert math.isnan(stats.effect_size(base + 0.25, base))
    with pytest.warns(UndefinedMetricWarning, match="undefined"):
        found = systems.effect_size_interval(base, base + 0.25)
    assert math.isnan(found.d_z) and math.isnan(found.low) and math.isnan(found.high)
    with pytest.raises(InvalidParameterError, match="finite"):
        systems.effect_size_interval(base, np.r_[base[:-1] + 0.25, math.nan])


def test_an_effect_interval_contains_its_estimate() -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(3, 12))
        a, b = rng.random(n), rng.random(n)
        found = systems.effect_size_interval(a, b, n_resamples=500)
        assert found.low <= found.d_z <= found.high or math.isinf(found.low)


def test_float_noise_is_no_difference_for_any_test() -> None:
    a = np.full(12, 0.1) + 0.2
    b = np.full(12, 0.3)
    assert (a != b).all()
    for name in stats.paired_tests():
        p, _, _ = stats.paired_interval(a, b, test=name, alpha=0.05)
        assert p == 1.0 or p > 0.05, name
    assert stats.t_test(a, b) == 1.0
    assert stats.wilcoxon_test(a, b) == 1.0
    anova = systems.anova_two_way({"a": a, "b": b})
    assert anova.p_system == 1.0
    qrels = {f"q{i}": {"a": 1} for i in range(12)}
    run = {f"q{i}": ["a"] for i in range(12)}
    cmp = rm.compare(qrels, {"x": run, "y": dict(run)}, ["mrr"], test="t-test")
    assert cmp.tests[0].ties == 12 and not cmp.tests[0].significant


def test_the_planners_refuse_what_they_cannot_answer() -> None:
    with pytest.raises(InvalidParameterError, match="more than 1,000,000,000 queries"):
        systems.topic_set_size(1e-200, sd=0.2)
    with pytest.raises(InvalidParameterError, match=r"alpha must be in \[1e-12, 1\)"):
        systems.topic_set_size(0.05, sd=0.2, alpha=1e-300)
    with pytest.raises(InvalidParameterError, match="sd must be a positive number"):
        systems.paired_t_power(10, 0.1, 0)
    with pytest.raises(InvalidParameterError, match="min_diff must be a finite number"):
        systems.paired_t_power(10, math.nan, 0.2)
    assert systems.topic_set_size(0.05, sd=0.2) == 128
    assert systems.paired_t_power(10, 0.0, 0.2) == pytest.approx(0.05, abs=1e-9)
    # the answer is the smallest n whose power reaches the target
    n = systems.topic_set_size(0.01, sd=0.3, alpha=1e-6)
    assert systems.paired_t_power(n, 0.01, 0.3, alpha=1e-6) >= 0.8
    assert systems.paired_t_power(n - 1, 0.01, 0.3, alpha=1e-6) < 0.8


def test_no_warning_leaks_from_numpy_in_fusion() -> None:
    huge = {"q1": {"a": 1e308, "b": 0.0, "c": -1e308}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fuse([huge, huge], method="sum", norm="zmuv")


# --- compare and evaluate -----------------------------------------------------------------


def test_compare_keeps_an_adapter_results_unasked_queries_out() -> None:
    from ragmetrics.adapters._records import RetrievalLog
    from ragmetrics.errors import QueryMismatchWarning

    qrels = {f"q{i}": {"a": 1} for i in range(8)}
    log = RetrievalLog()
    for i in range(6):  # the pipeline was asked 6 of the 8 judged questions
        log.start(f"s{i}", f"question {i}", query_id=f"q{i}")
        log.end(f"s{i}", ["a"] if i % 2 else ["x", "a"])
    handler = log.evaluate(qrels, ["mrr"])
    assert handler.aggregate["mrr"] == pytest.approx(0.75)
    other = {f"q{i}": ["a"] for i in range(8)}
    with pytest.warns(QueryMismatchWarning, match=r"never saw 2 of the judged queries"):
        cmp = rm.compare(qrels, {"handler": handler, "other": other}, ["mrr"])
    assert cmp.results["handler"].aggregate["mrr"] == pytest.approx(0.75)  # not 0.5625
    assert cmp.tests[0].n == 6


def test_swapped_qrels_and_run_are_refused() -> None:
    qrels = rm.Qrels.from_dict({"q1": {"a": 1, "b": 2}, "q2": {"c": 1}})
    run = rm.Run.from_dict({"q1": {"a": 0.9, "b": 0.5}, "q2": {"c": 0.5, "a": 0.7}})
    with pytest.raises(InputFormatError, match=r"The qrels given are a Run.*Swap"):
        rm.evaluate(run, qrels, ["map"])
    with pytest.raises(InputFormatError, match="Swap"):
        rm.compare(run, {"a": qrels, "b": qrels}, ["map"])
    with pytest.raises(rm.GradeScaleError, match="swapped"):
        rm.evaluate(run.to_dict(), qrels.to_dict(), ["map"])


def test_a_run_file_given_as_qrels_is_refused(tmp_path) -> None:
    pytest.importorskip("pyarrow")
    run = rm.Run.from_dict({"q1": {"a": 0.9, "b": 0.5}, "q2": {"c": 0.5}})
    run.to_parquet(tmp_path / "run.parquet")
    with pytest.raises(InputFormatError, match="a run's scores, not grades"):
        rm.Qrels.from_parquet(tmp_path / "run.parquet")
    # named on purpose, real-valued gains in a 'score' column are read
    gains = rm.Qrels.from_parquet(tmp_path / "run.parquet", grade_col="score")
    assert gains["q1"]["a"] == 0.9


def test_diagnose_takes_the_dicts_evaluate_takes() -> None:
    found = rm.diagnose({"q1": {"a": 1, "b": 1}}, {"q1": {"a": 0.5, "x": 0.1}}, "q1", 2)
    assert [n.doc_id for n in found.selected] == ["a", "x"]


@pytest.mark.parametrize(
    ("segments", "match"),
    [
        ({"q1": 1, "q2": "1"}, r"1 and '1' .* both read '1'"),
        ({"q1": True, "q2": "True"}, r"True and 'True' .* both read 'True'"),
        ({"q1": [1], "q2": 1}, r"is a list"),
    ],
)
def test_segment_labels_that_print_alike_are_refused(segments: dict, match: str) -> None:
    qrels = {"q1": {"a": 1}, "q2": {"a": 1}}
    run = {"q1": ["a"], "q2": ["x", "a"]}
    with pytest.raises(InputFormatError, match=match):
        rm.evaluate(qrels, run, ["mrr"], segments=segments)


def test_segment_na_and_repeated_index() -> None:
    pd = pytest.importorskip("pandas")
    qrels = {"q1": {"a": 1}, "q2": {"a": 1}}
    run = {"q1": ["a"], "q2": ["x", "a"]}
    found = rm.evaluate(qrels, run, ["mrr"], segments={"q1": np.float32("nan"), "q2": "x"})
    assert found.segments is not None
    assert {r.segment for r in found.segments.rows} == {"x"}
    assert found.segments.unassigned == ("q1",)
    same = rm.evaluate(qrels, run, ["mrr"], segments={"q1": np.int64(1), "q2": 1})
    assert same.segments is not None and {r.segment for r in same.segments.rows} == {"1"}
    repeated = pd.Series(["a", "b"], index=["q1", "q1"])
    with pytest.raises(InputFormatError, match="repeats query ids"):
        rm.evaluate(qrels, run, ["mrr"], segments=repeated)


def test_alpha_means_the_significance_level_only() -> None:
    qrels = {f"q{i}": {"a": 5, "b": 4, "c": 4, "d": 4} for i in range(6)}
    run = {f"q{i}": ["b", "a", "c"] for i in range(6)}
    with pytest.raises(InvalidParameterError, match=r"rarity_alpha="):
        rm.evaluate(qrels, run, ["ra_nwg@2"], alpha=0.5)
    flat = rm.evaluate(qrels, run, ["ra_nwg@1"], rarity_alpha=0.0).aggregate["ra_nwg@1"]
    steep = rm.evaluate(qrels, run, ["ra_nwg@1"], rarity_alpha=2.0).aggregate["ra_nwg@1"]
    assert flat != steep
    cmp = rm.compare(qrels, {"x": run, "y": dict(run)}, ["ra_nwg@1"], rarity_alpha=0.0, alpha=0.01)
    assert cmp.results["x"].aggregate["ra_nwg@1"] == flat


@pytest.mark.parametrize(
    ("grades", "proposal"), [({1, 2, 3}, "{1: 1, 2: 4, 3: 5}"), ({1, 3}, "{1: 1, 3: 5}")]
)
def test_labels_1_to_3_are_never_advised_to_read_not_relevant_as_relevant(
    grades: set[int], proposal: str
) -> None:
    qrels = {"q": {f"d{g}": g for g in grades}}
    with pytest.raises(rm.GradeScaleError) as refused:
        rm.evaluate(qrels, {"q": ["d1"]}, ["ra_nwg@5"])
    assert f"grade_map={proposal}" in str(refused.value)
    assert "without a 4 or 5" in str(refused.value)


def test_the_remem_facade_takes_empty_chunks_and_k_1_quietly() -> None:
    from ragmetrics.compat.remem import RetrievalNDCGAny, RetrievalRecall, RetrievalRecallAll

    gold = [["hello world", "b"], ["c"]]
    chunks = [["", "hello world", "x"], ["c"]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "every metric is 0" for k = 1
        pooled, each = RetrievalRecall().calculate_metric_scores(gold, chunks, [1, 2, 5])
        RetrievalRecallAll().calculate_metric_scores(gold, chunks, [1, 2])
        RetrievalNDCGAny().calculate_metric_scores(gold, chunks, [1, 2])
    assert each == [
        {"Recall@1": 0.0, "Recall@2": 0.5, "Recall@5": 0.5},
        {"Recall@1": 1.0, "Recall@2": 1.0, "Recall@5": 1.0},
    ]
    assert pooled == {"Recall@1": 0.5, "Recall@2": 0.75, "Recall@5": 0.75}


def test_parts_scored_against_other_qrels_are_refused_not_misplaced() -> None:
    from ragmetrics.engine.stream import merge, partial

    qrels = {f"q{i}": {"a": 1} for i in range(8)}
    run = {f"q{i}": ["a"] if i == 7 else ["x", "a"] for i in range(8)}
    first = {q: qrels[q] for q in ("q0", "q1", "q2")}
    second = {q: qrels[q] for q in ("q7",)}
    a = partial(first, {q: run[q] for q in first}, ["mrr"], per_query=True)
    b = partial(second, {q: run[q] for q in second}, ["mrr"], per_query=True)
    with pytest.raises(InvalidParameterError, match="scored against the same qrels"):
        merge([a, b])
    with pytest.raises(InvalidParameterError, match="scored against other qrels"):
        a.result(qrels)
    # against the full qrels, every part lands on its own query
    a = partial(qrels, {q: run[q] for q in first}, ["mrr"], per_query=True)
    b = partial(qrels, {q: run[q] for q in second}, ["mrr"], per_query=True)
    merged = merge([a, b]).result(qrels, name="parts")
    whole = rm.evaluate(qrels, {q: run[q] for q in (*first, *second)}, ["mrr"])
    assert merged.per_query["q7"] == whole.per_query["q7"] == {"mrr": 1.0}
    assert merged.aggregate == whole.aggregate


def test_judged_only_drops_negative_grades_everywhere() -> None:
    """trec_eval's -J keeps docs judged >= 0; the ports kept a doc judged -1."""
    from ragmetrics.compat import ir_measures
    from ragmetrics.compat.pytrec_eval import RelevanceEvaluator

    qrels = {"q1": {"a": 1, "neg": -1, "b": 0}, "q2": {"c": 2, "d": -2}}
    run = {"q1": {"neg": 0.9, "a": 0.8, "x": 0.7, "b": 0.6}, "q2": {"d": 0.9, "c": 0.5}}
    # judged-only rankings: q1 = [a, b], q2 = [c]
    expected = rm.evaluate(qrels, {"q1": ["a", "b"], "q2": ["c"]}, ["P@1", "map"])
    found = rm.evaluate(qrels, run, ["P@1", "map"], judged_only=True)
    assert found.per_query == expected.per_query
    assert found.settings["judged_only"] is True
    ported = RelevanceEvaluator(qrels, {"P_1", "map"}, judged_docs_only_flag=True).evaluate(run)
    assert ported["q1"]["P_1"] == 1.0 and ported["q2"]["P_1"] == 1.0
    measured = {
        (m.query_id, str(m.measure)): m.value
        for m in ir_measures.iter_calc([ir_measures.P(judged_only=True) @ 1], qrels, run)
    }
    assert measured == {("q1", "P(judged_only=True)@1"): 1.0, ("q2", "P(judged_only=True)@1"): 1.0}
    streamed = rm.evaluate_stream(qrels, [rm.Run.from_dict(run)], ["P@1"], judged_only=True)
    assert streamed.aggregate["P@1"] == 1.0
    with pytest.raises(InvalidParameterError, match="judged_only must be True or False"):
        rm.evaluate(qrels, run, ["P@1"], judged_only="yes")


@pytest.mark.parametrize("source", ["trec", "dict", "lists", "unicode"])
def test_judged_only_keeps_the_runs_dropped_copies_and_its_order(
    tmp_path: Path, source: str
) -> None:
    """``judged_only`` keeps each ranking's judged docs in their order, counts the copies
    of repeated docs the run dropped when it was read (they were reported as 0: the run was
    rebuilt from dicts), and keeps a run read as bytes in bytes. The judged docs are found
    as evaluation finds them; this holds them equal to the docs looked up one by one."""
    from ragmetrics.data._run import judged_docs_only
    from ragmetrics.data._store import store_of

    rng = random.Random(len(source))
    accent = "é" if source == "unicode" else ""
    qrels = {
        f"q{q}": {f"d{d}{accent}": rng.randint(-1, 2) for d in rng.sample(range(60), 15)}
        for q in range(30)
    }
    lines = [
        f"q{q} Q0 d{rng.randrange(60)}{accent} 0 {rng.randint(0, 9)} t"
        for q in range(33)
        for _ in range(25)
    ]
    (tmp_path / "run.txt").write_text("\n".join(lines) + "\n")
    run = rm.read_run(tmp_path / "run.txt")
    if source == "dict":
        run = rm.Run.from_dict(run.to_dict())
    elif source == "lists":
        run = rm.Run.from_lists(run.to_lists())
    kept = judged_docs_only(run, rm.Qrels.from_dict(qrels))
    judged = {q: {d for d, g in docs.items() if g >= 0} for q, docs in qrels.items()}
    if run.is_scored:
        expected = {
            q: {d: s for d, s in docs.items() if d in judged.get(q, ())}
            for q, docs in run.to_dict().items()
        }
        assert kept.to_dict() == expected
        assert [list(v) for v in kept.to_dict().values()] == [list(v) for v in expected.values()]
    else:
        lists = {
            q: [d for d in docs if d in judged.get(q, ())] for q, docs in run.to_lists().items()
        }
        assert kept.to_lists() == lists
    assert dict(kept.duplicates) == dict(run.duplicates)
    assert (source == "trec") <= (store_of(kept)._ids is not None)
    if source == "trec":
        assert sum(run.duplicates.values()) > 0
        counts = rm.evaluate(qrels, run, ["map"], judged_only=True).counts
        assert counts.repeated_ids_dropped == sum(run.duplicates.values())


def test_truncation_and_added_rankings_keep_the_runs_bytes_and_dropped_copies(
    tmp_path: Path,
) -> None:
    """trec_eval's ``-M`` (``Run.truncate``), ``-c`` (a one-doc ranking for each judged
    query the run lacks) and optimize_fusion's training queries work on the run as it was
    read: each ranking's best docs (ties in trec_eval's order), ids as bytes, the dropped
    copies counted; they used to read the whole run as Python dicts and build it again,
    losing the copies."""
    from ragmetrics.data._run import restricted, with_rankings
    from ragmetrics.data._store import store_of

    lines = ["q1 Q0 a 1 0.5 t", "q1 Q0 b 2 0.9 t", "q1 Q0 c 3 0.5 t", "q1 Q0 a 4 0.1 t"]
    lines += ["q2 Q0 d 1 0.3 t"]
    (tmp_path / "run.txt").write_text("\n".join(lines) + "\n")
    run = rm.read_run(tmp_path / "run.txt")
    assert dict(run.duplicates) == {"q1": 1}
    cut = run.truncate(2)
    assert cut.to_dict() == {"q1": {"b": 0.9, "c": 0.5}, "q2": {"d": 0.3}}  # c before a: a tie
    assert dict(cut.duplicates) == {"q1": 1} and store_of(cut)._ids is not None
    added = with_rankings(run, {"q3": {"zz-bogus": 1.0}})
    assert added.to_dict() == {**run.to_dict(), "q3": {"zz-bogus": 1.0}}
    assert dict(added.duplicates) == {"q1": 1} and store_of(added)._ids is not None
    unicode = with_rankings(run, {"q3": {"é": 1.0}, "q4": {}})  # not bytes: as strings
    assert unicode.to_dict() == {**run.to_dict(), "q3": {"é": 1.0}, "q4": {}}
    part = restricted(run, ["q2", "q1"])  # optimize_fusion's training queries
    assert part.to_dict() == {"q2": {"d": 0.3}, "q1": run.to_dict()["q1"]}
    assert dict(part.duplicates) == {"q1": 1} and store_of(part)._ids is not None
    assert dict(restricted(run, ["q2"]).duplicates) == {}
    lists = rm.Run.from_lists({"q1": ["x", "y", "z"]})
    assert lists.truncate(2).to_lists() == {"q1": ["x", "y"]}
    assert with_rankings(lists, {"q2": {"w": 1.0}}).to_lists() == {
        "q1": ["x", "y", "z"],
        "q2": ["w"],
    }


# --- outputs and files --------------------------------------------------------------------


def _small_comparison() -> tuple[dict, dict, rm.Comparison]:
    qrels = {f"q{i}": {"a": 1} for i in range(6)}
    runs = {"x": {q: ["a", "b"] for q in qrels}, "y": {q: ["b", "a"] for q in qrels}}
    return qrels, runs, rm.compare(qrels, runs, ["mrr"], n_permutations=100)


def test_a_markdown_report_leaves_the_users_files_alone(tmp_path) -> None:
    from ragmetrics.report._report import write_report

    pytest.importorskip("matplotlib")
    qrels, runs, cmp = _small_comparison()
    folder = tmp_path / "rep_files"
    folder.mkdir()
    (folder / "plot9.png").write_bytes(b"mine")
    write_report(cmp, tmp_path / "rep.md", qrels=qrels, runs=runs)  # runs as dicts
    ours = sorted(p.name for p in folder.glob("plot*.png") if p.name != "plot9.png")
    assert ours
    write_report(cmp, tmp_path / "rep.md", plots=False)
    assert sorted(p.name for p in folder.iterdir()) == ["plot9.png"]
    assert (folder / "plot9.png").read_bytes() == b"mine"
    with pytest.raises(rm.RagMetricsError, match="explorer_k must be an integer >= 1"):
        write_report(cmp, tmp_path / "rep.html", explorer_k=-1)
    with pytest.raises(rm.RagMetricsError, match="takes a Comparison"):
        write_report({"not": "a comparison"}, tmp_path / "rep.html")  # type: ignore[arg-type]


def test_a_killed_writes_leftover_is_removed_by_the_next_write(tmp_path) -> None:
    import subprocess
    import sys

    from ragmetrics.formats._atomic import write_text

    target = tmp_path / "out.txt"
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead = int(child.stdout)  # a process that has ended
    orphan = tmp_path / f".out.txt.{dead}.abc.part"
    orphan.write_text("half")
    alive = tmp_path / f".out.txt.{1}.abc.part"  # pid 1 is alive: not ours to remove
    alive.write_text("other")
    write_text(target, "done")
    assert target.read_text() == "done"
    assert not orphan.exists() and alive.exists()


def test_csv_cells_are_not_formulas_and_latex_is_escaped() -> None:
    qrels = {"=HYPERLINK(1)": {"a": 1}, "-1": {"a": 1}, "@SUM(1)": {"a": 1}}
    run = {q: ["a"] for q in qrels}
    text = rm.evaluate(qrels, run, ["mrr"]).to_csv(per_query=True)
    assert "'=HYPERLINK(1),1.0" in text and "\n-1,1.0" in text and "'@SUM(1)" in text
    _, _, cmp = _small_comparison()
    with pytest.raises(rm.RagMetricsError, match="LaTeX label"):
        cmp.to_latex(label="x}\\evil")
    qrels6 = {f"q{i}": {"a": 1} for i in range(6)}
    named = rm.compare(
        qrels6, {"x\n\ny": {q: ["a"] for q in qrels6}, "z": {key: ["a"] for key in qrels6}}, ["mrr"]
    )
    assert "\n\n" not in named.to_latex()


def test_qrels_json_written_before_the_module_move_is_read(tmp_path) -> None:
    import json

    old = tmp_path / "old.json"
    old.write_text(
        json.dumps({"format": "ragmetrics.qrels", "version": 1, "judgments": {"q": {"a": 2}}})
    )
    assert rm.Qrels.from_json(old).to_dict() == {"q": {"a": 2}}


def test_the_ports_refuse_parameters_out_of_range() -> None:
    from ragmetrics.compat import ir_measures
    from ragmetrics.compat.pytrec_eval import RelevanceEvaluator

    qrels, run = {"q1": {"a": 1, "b": 2}}, {"q1": {"a": 0.5, "b": 0.4, "c": 0.1}}
    for bad, match in (
        (lambda: ir_measures.AP(rel=1e400), "rel must be a whole number"),
        (lambda: ir_measures.parse_measure("AP(rel=1e400)"), "rel must be a whole number"),
        (lambda: ir_measures.RBP(p=1.5), r"p must be a number in \(0, 1\)"),
        (lambda: ir_measures.parse_measure("P(rel=2, rel=3)@5"), "'rel' twice"),
        (lambda: ir_measures.P @ 0, "cutoff must be an integer >= 1"),
    ):
        with pytest.raises(rm.RagMetricsError, match=match):
            bad()
    # a cutoff of 5,000 digits is the largest long, as C's atol reads it
    found = RelevanceEvaluator(qrels, {"P." + "9" * 5000}).evaluate(run)
    assert list(found["q1"]) == ["P_9223372036854775807"]


def test_running_out_of_memory_is_named_with_the_way_out() -> None:
    import subprocess
    import sys

    script = """
import resource, ragmetrics as rm
qrels = {"q0": {"d0": 1}}
qrels = {f"q{i}": {f"d{j}": 1 for j in range(0, 2000, 7)} for i in range(2000)}
run = rm.Run.from_lists({q: [f"d{j}" for j in range(2000)] for q in qrels})
rm.evaluate({"q0": {"d0": 1}}, {"q0": ["d0"]}, ["ndcg@5"])  # everything loaded
size = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
_, hard = resource.getrlimit(resource.RLIMIT_AS)
resource.setrlimit(resource.RLIMIT_AS, (size + (48 << 20), hard))
try:
    rm.evaluate(qrels, run, ["ndcg@2000", "map", "P@2000", "recall@2000", "bpref"])
except rm.RagMetricsError as exc:
    print("refused:", exc)
except MemoryError:
    print("raw MemoryError")
else:
    print("no error")
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert "raw MemoryError" not in done.stdout, done.stdout + done.stderr
    if "refused:" not in done.stdout:
        pytest.skip(f"could not run out of memory here: {done.stdout.strip()} {done.stderr[-200:]}")
    assert "evaluate_stream" in done.stdout


def test_a_folder_of_other_files_given_as_a_run_is_named_as_such(tmp_path) -> None:
    pytest.importorskip("pyarrow")
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "readme.txt").write_text("x\n")
    with pytest.raises(InputFormatError, match=r"is a folder.*not Parquet \(readme.txt\)"):
        rm.Run.from_parquet(folder)
