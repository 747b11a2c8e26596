"""The statistics of comparisons against scipy and statsmodels: the Wilcoxon signed-rank
test, every correction for multiple comparisons, two-way ANOVA, the equivalence test, the
effect size and its interval, the randomized Tukey HSD test against its exact
(enumerated) null distribution, the distributions behind them, and the topic-set-size
planner against the exact power."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest

import ragmetrics as rm
from ragmetrics.analysis import _distributions as distributions
from ragmetrics.analysis.stats import adjust, corrections, paired_interval, wilcoxon_test
from ragmetrics.analysis.systems import (
    anova_two_way,
    effect_size_interval,
    paired_t_power,
    topic_set_size,
    tost,
    tukey_hsd,
)
from ragmetrics.errors import InvalidParameterError

scipy_stats = pytest.importorskip("scipy.stats")
multitest = pytest.importorskip("statsmodels.stats.multitest")


@pytest.mark.parametrize("n", [3, 8, 13, 14, 25, 50, 51, 300])
@pytest.mark.parametrize("kind", ["continuous", "ties", "zeros"])
def test_wilcoxon_equals_scipy(n: int, kind: str) -> None:
    rng = np.random.default_rng(n)
    for _ in range(5):
        a, b = rng.random(n), rng.random(n)
        if kind == "ties":  # metric values on a coarse grid, as P@10 has
            a, b = np.round(a * 10) / 10, np.round(b * 10) / 10
        if kind == "zeros":
            b[: n // 3] = a[: n // 3]
        expected = scipy_stats.wilcoxon(a, b).pvalue
        assert wilcoxon_test(a, b) == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_wilcoxon_interval_inverts_the_test() -> None:
    rng = np.random.default_rng(3)
    for shift in (0.0, 0.05, 0.2):
        a = rng.random(60)
        b = a + shift + rng.normal(0, 0.1, 60)
        p, low, high = paired_interval(b, a, test="wilcoxon", alpha=0.05)
        assert p == pytest.approx(scipy_stats.wilcoxon(b, a).pvalue, rel=1e-9)
        assert (p < 0.05) == (not low <= 0 <= high)
        walsh = [(x + y) / 2 for x, y in itertools.combinations_with_replacement(b - a, 2)]
        assert low <= float(np.median(walsh)) <= high  # the Hodges-Lehmann estimate


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ("bonferroni", "bonferroni"),
        ("holm", "holm"),
        ("holm-sidak", "holm-sidak"),
        ("bh", "fdr_bh"),
        ("by", "fdr_by"),
    ],
)
def test_corrections_equal_statsmodels(ours: str, theirs: str) -> None:
    rng = np.random.default_rng(7)
    for m in (1, 2, 5, 17, 100):
        p = rng.random(m) ** 3
        p[: m // 4] = p[0]  # ties among the p-values
        expected = multitest.multipletests(p, method=theirs)[1]
        np.testing.assert_allclose(adjust(list(p), ours), expected, rtol=1e-12, atol=1e-15)


def test_every_correction_is_offered_by_compare_and_the_cli() -> None:
    from ragmetrics.cli._commands import build_parser

    parser = build_parser()
    compare_parser = next(
        a
        for a in parser._subparsers._group_actions[0].choices.values()
        if a.prog.endswith("compare")
    )
    offered = next(a for a in compare_parser._actions if a.dest == "correction").choices
    assert set(corrections()) == set(offered)
    tests = next(a for a in compare_parser._actions if a.dest == "test").choices
    assert {"wilcoxon", "tukey-hsd"} <= set(tests)


def _scores(systems: int, queries: int, seed: int, spread: float = 0.1) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    base = rng.random(queries)
    return {
        f"s{i}": np.clip(base + spread * i + rng.normal(0, 0.15, queries), 0, 1)
        for i in range(systems)
    }


def test_anova_equals_statsmodels() -> None:
    pandas = pytest.importorskip("pandas")
    formula = pytest.importorskip("statsmodels.formula.api")
    sm = pytest.importorskip("statsmodels.api")
    scores = _scores(4, 30, seed=1, spread=0.05)
    ours = anova_two_way(scores)
    rows = [(s, q, v) for s, values in scores.items() for q, v in enumerate(values)]
    frame = pandas.DataFrame(rows, columns=["system", "query", "value"])
    table = sm.stats.anova_lm(formula.ols("value ~ C(system) + C(query)", frame).fit(), typ=2)
    assert ours.f_system == pytest.approx(table.loc["C(system)", "F"], rel=1e-10)
    assert ours.p_system == pytest.approx(table.loc["C(system)", "PR(>F)"], rel=1e-9)
    assert ours.f_query == pytest.approx(table.loc["C(query)", "F"], rel=1e-10)
    assert ours.p_query == pytest.approx(table.loc["C(query)", "PR(>F)"], rel=1e-9)
    assert ours.ss_residual == pytest.approx(table.loc["Residual", "sum_sq"], rel=1e-10)
    assert ours.df_residual == table.loc["Residual", "df"]


def test_tost_equals_statsmodels() -> None:
    weightstats = pytest.importorskip("statsmodels.stats.weightstats")
    rng = np.random.default_rng(5)
    for delta, shift in ((0.03, 0.0), (0.03, 0.02), (0.01, 0.05), (0.2, -0.1)):
        a = rng.random(50)
        b = a + shift + rng.normal(0, 0.05, 50)
        ours = tost(a, b, delta)
        p, lower, upper = weightstats.ttost_paired(b, a, -delta, delta)
        assert ours.p_value == pytest.approx(p, rel=1e-9)
        assert ours.p_lower == pytest.approx(lower[1], rel=1e-9)
        assert ours.p_upper == pytest.approx(upper[1], rel=1e-9)
        assert ours.equivalent == (p < 0.05) == (-delta < ours.low and ours.high < delta)


def test_effect_size_and_its_interval() -> None:
    rng = np.random.default_rng(9)
    a = rng.random(80)
    b = a + 0.05 + rng.normal(0, 0.1, 80)
    ours = effect_size_interval(a, b, n_resamples=4000, seed=1)
    t = scipy_stats.ttest_rel(b, a).statistic
    assert ours.d_z == pytest.approx(t / math.sqrt(80), rel=1e-12)
    assert ours.g_z == pytest.approx(ours.d_z * (1 - 3 / (4 * 79 - 1)), rel=1e-12)

    def dz(d: np.ndarray, axis: int = -1) -> np.ndarray:
        return d.mean(axis=axis) / d.std(axis=axis, ddof=1)

    theirs = scipy_stats.bootstrap(
        (b - a,), dz, method="percentile", n_resamples=4000, random_state=2
    ).confidence_interval
    assert ours.low == pytest.approx(theirs.low, abs=0.06)
    assert ours.high == pytest.approx(theirs.high, abs=0.06)
    assert ours.low < ours.d_z < ours.high


def test_randomized_tukey_hsd_approaches_its_exact_null_distribution() -> None:
    """3 systems x 5 queries: every permutation within every query (6^5 of them) gives the
    exact p-values that the randomized test estimates."""
    scores = {
        "a": [0.9, 0.7, 0.8, 0.6, 0.9],
        "b": [0.5, 0.4, 0.6, 0.5, 0.3],
        "c": [0.7, 0.6, 0.9, 0.4, 0.6],
    }
    matrix = np.array(list(scores.values()))
    ranges = []
    for perm in itertools.product(list(itertools.permutations(range(3))), repeat=5):
        shuffled = np.array([[matrix[perm[q][s], q] for q in range(5)] for s in range(3)])
        means = shuffled.mean(axis=1)
        ranges.append(means.max() - means.min())
    null = np.array(ranges)
    result = tukey_hsd(scores, n_permutations=20_000, seed=4)
    for (x, y), p in result.p_values.items():
        gap = abs(matrix[ord(x) - 97].mean() - matrix[ord(y) - 97].mean())
        exact = float(np.mean(null >= gap - 1e-12))
        assert p == pytest.approx(exact, abs=0.012)
    assert result.groups() == {"a": "a", "b": "b", "c": "ab"} or result.groups()["a"] == "a"


def test_tukey_groups_in_compare_and_its_limits() -> None:
    rng = np.random.default_rng(2)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in range(8)} for i in range(60)}
    runs = {  # each run knows the grades to some degree
        name: {
            q: {d: float(rng.random() + insight * grade) for d, grade in judged.items()}
            for q, judged in qrels.items()
        }
        for name, insight in (("weak", 0.0), ("mid", 0.05), ("strong", 3.0))
    }
    comparison = rm.compare(qrels, runs, ["ndcg@5"], test="tukey-hsd", n_permutations=3000)
    groups = comparison.groups("ndcg@5")
    assert groups["strong"] == "a" and "a" not in groups["weak"]
    table = comparison.to_table()
    assert f"{comparison.means['strong']['ndcg@5']:.4f} a" in table
    assert "Runs sharing a letter do not differ significantly" in table
    assert comparison.settings["correction"] is None
    with pytest.raises(InvalidParameterError, match="leave baseline"):
        rm.compare(qrels, runs, ["ndcg@5"], test="tukey-hsd", baseline="weak")


def test_distributions_equal_scipy() -> None:
    for x, d1, d2 in ((0.5, 3, 10), (2.5, 1, 40), (7.0, 5, 5), (0.01, 20, 200)):
        assert distributions.f_sf(x, d1, d2) == pytest.approx(scipy_stats.f.sf(x, d1, d2), rel=1e-9)
    for x, df, nc in (
        (2.0, 10, 1.5),
        (-1.0, 3, 2.5),
        (1.97, 500, 2.8),
        (2.5, 1, 0.5),
        (0.0, 30, 0.0),
    ):
        assert distributions.noncentral_t_cdf(x, df, nc) == pytest.approx(
            scipy_stats.nct.cdf(x, df, nc), abs=1e-7
        )
    for p in (0.5, 0.8, 0.975, 0.999, 1e-6):
        assert distributions.normal_quantile(p) == pytest.approx(scipy_stats.norm.ppf(p), rel=1e-10)


@pytest.mark.parametrize(
    ("min_diff", "sd", "alpha", "power"),
    [(0.05, 0.2, 0.05, 0.8), (0.02, 0.15, 0.05, 0.9), (0.1, 0.3, 0.01, 0.8), (0.3, 0.2, 0.05, 0.8)],
)
def test_topic_set_size_is_the_smallest_n_with_the_power(
    min_diff: float, sd: float, alpha: float, power: float
) -> None:
    def exact_power(n: int) -> float:
        df = n - 1
        critical = scipy_stats.t.ppf(1 - alpha / 2, df)
        nc = math.sqrt(n) * min_diff / sd
        return float(scipy_stats.nct.sf(critical, df, nc) + scipy_stats.nct.cdf(-critical, df, nc))

    n = topic_set_size(min_diff, sd=sd, alpha=alpha, power=power)
    assert exact_power(n) >= power > exact_power(n - 1)
    assert paired_t_power(n, min_diff, sd, alpha=alpha) == pytest.approx(exact_power(n), abs=1e-6)
    rng = np.random.default_rng(0)
    a = rng.random(200)
    b = a + rng.normal(0, sd, 200)
    assert topic_set_size(min_diff, pilot=(a, b), alpha=alpha, power=power) == topic_set_size(
        min_diff, sd=float((b - a).std(ddof=1)), alpha=alpha, power=power
    )
    with pytest.raises(InvalidParameterError, match=r"sd .* or a pilot"):
        topic_set_size(min_diff)


def test_the_command_line_runs_the_new_tests(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ragmetrics.cli._commands import main

    rng = np.random.default_rng(4)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in range(8)} for i in range(25)}
    (tmp_path / "q.json").write_text(json.dumps(qrels))
    paths = []
    for name in ("a", "b", "c"):
        run = {q: {f"d{j}": float(rng.random()) for j in range(8)} for q in qrels}
        (tmp_path / f"{name}.json").write_text(json.dumps(run))
        paths.append(str(tmp_path / f"{name}.json"))
    common = [str(tmp_path / "q.json"), *paths, "-m", "ndcg@5", "--permutations", "300"]
    assert main(["compare", *common, "--test", "tukey-hsd"]) == 0
    assert "Runs sharing a letter do not differ significantly" in capsys.readouterr().out
    assert main(["report", *common, "--test", "tukey-hsd", "-o", str(tmp_path / "r.html")]) == 0
    assert "randomized Tukey HSD" in (tmp_path / "r.html").read_text(encoding="utf-8")
    assert main(["compare", *common, "--test", "wilcoxon", "--correction", "by"]) == 0
    assert "Benjamini-Yekutieli correction" in capsys.readouterr().out


def test_an_interval_that_ties_end_at_zero_is_zero_and_says_so() -> None:
    """26 tied queries and 4 that all lose: no shift past 0 survives the randomization test,
    so the interval ends at exactly 0 (not at the bisection's 1e-12) and the table writes
    ``0 (ties)``, with the legend saying why that agrees with p >= alpha."""
    a = np.array([0.5] * 26 + [0.6, 0.8, 0.7, 0.9])
    b = np.array([0.5] * 26 + [0.5, 0.5, 0.5, 0.5])
    p, low, high = paired_interval(a, b, test="randomization", alpha=0.05)
    assert p >= 0.05 and low == 0.0 and high > 0.0
    qrels = {f"q{i}": {"good": 1} for i in range(30)}
    base = {f"q{i}": ["good"] for i in range(30)}
    worse = {f"q{i}": (["x", "good"] if i < 4 else ["good"]) for i in range(30)}
    comparison = rm.compare(qrels, {"base": base, "worse": worse}, ["mrr"], baseline="base")
    (test,) = comparison.tests
    assert test.ci_high == 0.0 and test.wins == 0 and test.p_value >= 0.05
    table = comparison.tests_markdown()
    assert "0 (ties)\\]" in table and "An end written `0 (ties)` is exactly 0" in table


def _bootstrap_reference(d: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """The bootstrap test's null distribution from its definition: ``resamples`` draws of
    the queries (in the library's batches of 2,000, one generator), |mean of the centred|."""
    rng = np.random.default_rng(seed)
    centred = d - d.mean()
    sizes = [min(2000, resamples - start) for start in range(0, resamples, 2000)]
    draws = [rng.integers(0, len(d), size=(size, len(d))) for size in sizes]
    return np.abs(np.concatenate([centred[x].mean(axis=1) for x in draws]))


@pytest.mark.parametrize("resamples", [1, 19, 2003])  # 2,003: a second batch of 3
@pytest.mark.parametrize("kind", ["continuous", "coarse"])
def test_the_bootstrap_test_and_interval_equal_their_definition(resamples: int, kind: str) -> None:
    """p = (1 + #{|M| >= |mean d|}) / (1 + B), counted on the library's own draws; the
    interval is mean +- the needed-th largest |M|, needed = ceil(alpha (B + 1) - 1) (at
    least 1): the widest shift the same test does not reject. Coarse differences make
    resampled means equal the observed one exactly (counted)."""
    from ragmetrics.analysis.stats import bootstrap_test

    rng = np.random.default_rng(resamples)
    n = 12
    a = rng.random(n) if kind == "continuous" else rng.integers(0, 3, n) / 2
    b = rng.random(n) if kind == "continuous" else rng.integers(0, 3, n) / 2
    d = a - b
    extremes = _bootstrap_reference(d, resamples, seed=3)
    observed = abs(d.mean())
    expected_p = (1 + int((extremes >= observed - 1e-12).sum())) / (1 + resamples)
    assert bootstrap_test(a, b, n_resamples=resamples, seed=3) == expected_p
    for alpha in (0.05, 0.5, 0.9):
        p, low, high = paired_interval(
            a, b, test="bootstrap", alpha=alpha, n_resamples=resamples, seed=3
        )
        assert p == expected_p
        needed = max(1, math.ceil(alpha * (resamples + 1) - 1 - 1e-9))
        half = np.sort(extremes)[::-1][needed - 1]
        if (p >= alpha) == (d.mean() - half <= 0 <= d.mean() + half):  # not nudged at 0
            assert low == pytest.approx(d.mean() - half, abs=1e-9)
            assert high == pytest.approx(d.mean() + half, abs=1e-9)


def test_defaults_seeds_and_tiny_inputs_of_the_paired_tests() -> None:
    """The documented defaults (10,000 permutations or resamples, seed 0; a 95% bootstrap
    interval of 1,000 resamples) are what a call without them uses, the seed decides the
    draws, one query is a valid input and none gives NaN; the t-test of two queries is
    finite, of constant differences 0 (or 1 when they are all 0)."""
    from ragmetrics.analysis.stats import (
        bootstrap_ci,
        bootstrap_test,
        randomization_test,
        t_test,
    )

    rng = np.random.default_rng(8)
    a, b = rng.random(30), rng.random(30)
    assert randomization_test(a, b) == randomization_test(a, b, n_permutations=10_000, seed=0)
    assert randomization_test(a, b) != randomization_test(a, b, seed=1)
    assert (randomization_test(a, b) * 10_001) % 1 == pytest.approx(0.0, abs=1e-6)
    assert bootstrap_test(a, b) == bootstrap_test(a, b, n_resamples=10_000, seed=0)
    assert bootstrap_test(a, b) != bootstrap_test(a, b, seed=1)
    assert (bootstrap_test(a, b) * 10_001) % 1 == pytest.approx(0.0, abs=1e-6)
    assert bootstrap_ci(a) == bootstrap_ci(a, n_resamples=1_000, level=0.95, seed=0)
    assert bootstrap_ci(a) != bootstrap_ci(a, seed=1)
    assert bootstrap_ci(a) != bootstrap_ci(a, level=0.9)
    one, none = np.array([0.7]), np.array([])
    assert randomization_test(one, one - 0.5, n_permutations=99) == 1.0  # either sign: as far
    # no resample is as far, but one query cannot be significant: floored at 2 / 2^1
    assert bootstrap_test(one, one - 0.5, n_resamples=99) == 1.0
    assert math.isnan(randomization_test(none, none)) and math.isnan(bootstrap_test(none, none))
    p2 = t_test(np.array([0.9, 0.4]), np.array([0.1, 0.3]))
    assert 0 < p2 < 1 and p2 == pytest.approx(scipy_stats.ttest_rel([0.9, 0.4], [0.1, 0.3]).pvalue)
    _, low, high = paired_interval(
        np.array([0.9, 0.4]), np.array([0.1, 0.3]), test="t-test", alpha=0.05
    )
    assert math.isfinite(low) and math.isfinite(high) and low < 0.45 < high
    # every query +0.1: t is undefined; the exact sign-flip test of 3 queries gives 2 / 2^3
    assert t_test(np.array([0.5, 0.7, 0.9]), np.array([0.4, 0.6, 0.8])) == 0.25
    assert t_test(np.array([0.5, 0.7]), np.array([0.5, 0.7])) == 1.0
    assert math.isnan(t_test(one, one))


def test_edges_of_the_paired_tests_and_their_words() -> None:
    """Paired inputs must be two vectors of one length (a matrix is refused too); the
    Wilcoxon test of no nonzero difference is 1, of balanced differences at most 1 (as
    scipy), of one query a number; the interval's defaults are the documented ones; the
    effect size of two queries is finite; unknown and clashing test names are refused in
    words."""
    from ragmetrics.analysis.stats import PairedTestSpec, effect_size, paired_test, register_test

    with pytest.raises(rm.RagMetricsError) as caught:
        wilcoxon_test(np.zeros((2, 3)), np.zeros((2, 3)))
    assert str(caught.value) == (
        "The first system's values must be a flat sequence of numbers; got shape (2, 3)."
    )
    same = np.array([0.5, 0.5, 0.5])
    assert wilcoxon_test(same, same) == 1.0
    a, b = np.array([0.1, 0.9, 0.2, 0.8]), np.array([0.2, 0.8, 0.1, 0.9])
    assert wilcoxon_test(a, b) == 1.0 == scipy_stats.wilcoxon(a, b).pvalue
    rng = np.random.default_rng(2)
    big_a = np.round(rng.random(40) * 4) / 4
    big_b = big_a[::-1].copy()  # mirrored: the differences are balanced, with ties
    assert wilcoxon_test(big_a, big_b) <= 1.0
    assert wilcoxon_test(big_a, big_b) == pytest.approx(scipy_stats.wilcoxon(big_a, big_b).pvalue)
    assert 0 < wilcoxon_test(np.array([0.9]), np.array([0.1])) <= 1.0
    x, y = rng.random(25), rng.random(25)
    for test in ("randomization", "bootstrap"):
        assert paired_interval(x, y, test=test, alpha=0.05) == paired_interval(
            x, y, test=test, alpha=0.05, n_resamples=10_000, seed=0
        )
        assert paired_interval(x, y, test=test, alpha=0.05) != paired_interval(
            x, y, test=test, alpha=0.05, seed=1
        )
        p_one, _, _ = paired_interval(np.array([0.7]), np.array([0.2]), test=test, alpha=0.05)
        assert 0 < p_one <= 1.0
    assert effect_size(np.array([0.9, 0.4]), np.array([0.1, 0.3])) == pytest.approx(
        0.45 / np.std([0.8, 0.1], ddof=1)
    )
    with pytest.raises(InvalidParameterError) as caught:
        paired_test("sign")
    assert str(caught.value).startswith("test must be one of 'randomization', ")
    assert str(caught.value).endswith("; got 'sign'.")
    with pytest.raises(InvalidParameterError) as caught:
        register_test(PairedTestSpec("t-test", "another t", None, lambda d, a, n, s: (1, 0, 0)))
    assert str(caught.value).startswith("A paired test named 't-test' is already registered")
