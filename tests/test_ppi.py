"""Prediction-powered intervals on LLM labels: valid by simulation (coverage of the true
value over 500 synthetic datasets with a biased LLM), narrower than people's sample alone
when the LLM agrees well, and computed as written on real evaluations."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

import ragmetrics as rm
from ragmetrics.analysis.ppi import ppi_compare, ppi_evaluate, ppi_mean
from ragmetrics.errors import InvalidParameterError


def _simulate(seed: int, bias: float, noise: float, n_all: int = 400, n_human: int = 60):
    rng = np.random.default_rng(seed)
    truth = rng.beta(2, 3, size=n_all)  # per-query metric values; population mean 0.4
    llm = np.clip(truth + bias + rng.normal(0, noise, n_all), 0, 1)
    sample = rng.choice(n_all, size=n_human, replace=False)
    return llm, llm[sample], truth[sample]


def test_ppi_intervals_cover_the_truth_where_naive_ones_do_not() -> None:
    target = 2 / 5  # the mean of Beta(2, 3)
    covered = naive_covered = 0
    widths, human_widths = [], []
    for seed in range(500):
        llm_all, llm_sample, human = _simulate(seed, bias=0.08, noise=0.05)
        _, low, high = ppi_mean(llm_all, llm_sample, human)
        covered += low <= target <= high
        mean, sd = llm_all.mean(), llm_all.std(ddof=1) / np.sqrt(len(llm_all))
        naive_covered += mean - 1.96 * sd <= target <= mean + 1.96 * sd
        widths.append(high - low)
        human_widths.append(2 * 1.96 * human.std(ddof=1) / np.sqrt(len(human)))
    assert covered / 500 >= 0.93
    assert naive_covered / 500 < 0.5
    assert np.mean(widths) < 0.8 * np.mean(human_widths)  # the LLM agrees well: narrower


def _ppi_plus_plus(f_all: np.ndarray, f_n: np.ndarray, y_n: np.ndarray) -> tuple[float, float]:
    """PPI++ for a mean, written out from Angelopoulos, Duchi and Zrnic (2023), with the
    unlabelled set the queries people did not grade (``f_all`` minus the sample, which is
    its first ``n`` values here): the weight lambda = Cov(y, f) / (Var(f) + (n/N) Var_u(f)),
    clipped to [0, 1]; the estimate and its half-width at 95%."""
    n = len(y_n)
    f_u = f_all[n:]
    cov = sum((a - y_n.mean()) * (b - f_n.mean()) for a, b in zip(y_n, f_n, strict=True)) / (n - 1)
    lam = min(1.0, max(0.0, cov / (np.var(f_n, ddof=1) + n / len(f_u) * np.var(f_u, ddof=1))))
    est = lam * f_u.mean() + (y_n - lam * f_n).mean()
    var = lam**2 * np.var(f_u, ddof=1) / len(f_u) + np.var(y_n - lam * f_n, ddof=1) / n
    return est, 1.959963984540054 * math.sqrt(var)


@pytest.mark.parametrize(
    ("bias", "noise", "agrees"),
    [(0.08, 0.05, True), (0.0, 0.6, False), (0.3, 0.0, True)],
    ids=["good but biased", "poor: mostly noise", "biased, no noise"],
)
def test_power_tuned_intervals_cover_and_are_never_wider_than_peoples(
    bias: float, noise: float, agrees: bool
) -> None:
    """Over 400 simulated golden sets each: PPI++ covers the truth at its level with LLM
    labels good or poor, and is never wider than the interval from people's labels alone,
    where classic PPI (lambda = 1) can be much wider."""
    target = 2 / 5
    covered, classic_wider, ratios = 0, 0, []
    for seed in range(400):
        rng = np.random.default_rng(10_000 + seed)
        truth = rng.beta(2, 3, size=400)
        if agrees:
            llm = np.clip(truth + bias + rng.normal(0, noise, 400), 0, 1)
        else:  # labels that barely track the truth
            llm = np.clip(0.2 * truth + rng.uniform(0, 1, 400) * noise + 0.3, 0, 1)
        sample = rng.choice(400, size=40, replace=False)
        _est, low, high = ppi_mean(llm, llm[sample], truth[sample])
        covered += low <= target <= high
        human_half = 1.959963984540054 * truth[sample].std(ddof=1) / math.sqrt(40)
        assert (high - low) / 2 <= human_half * (1 + 1e-12)  # never wider, every time
        ratios.append((high - low) / 2 / human_half)
        _, c_low, c_high = ppi_mean(llm, llm[sample], truth[sample], tuning=1.0)
        classic_wider += (c_high - c_low) / 2 > human_half
    assert covered / 400 >= 0.92  # 95% intervals; 400 draws: 2 standard errors below 0.95
    if agrees:
        assert np.mean(ratios) < 0.8  # the LLM helps: clearly narrower
    else:
        assert classic_wider > 100  # classic PPI pays for poor labels; PPI++ does not


def test_ppi_mean_as_written() -> None:
    llm = [0.6, 0.8, 0.7, 0.9] * 5
    people = [x - 0.1 for x in llm[:10]]
    # classic PPI (lambda = 1): the LLM's mean, corrected by the mean difference
    estimate, low, high = ppi_mean(llm, llm[:10], people, tuning=1.0)
    assert estimate == pytest.approx(np.mean(llm[10:]) - 0.1)  # 0.76: the other ten
    f_var = np.var(llm[10:], ddof=1) / 10  # the LLM's mean over the 10 queries not graded
    half = 1.959963984540054 * np.sqrt(f_var + 0.0)
    assert (low, high) == pytest.approx((estimate - half, estimate + half))
    # power-tuned (the default)
    estimate, low, high = ppi_mean(llm, llm[:10], people)
    expected, half = _ppi_plus_plus(np.array(llm), np.array(llm[:10]), np.array(people))
    assert (estimate, low, high) == pytest.approx((expected, expected - half, expected + half))
    with pytest.raises(InvalidParameterError, match="tuning"):
        ppi_mean(llm, llm[:10], people, tuning=1.5)
    with pytest.raises(InvalidParameterError, match="equal-length"):
        ppi_mean([0.1, 0.2], [0.1], [0.1, 0.2])


def test_a_few_agreeing_human_labels_give_no_interval() -> None:
    """Two people agreeing with the LLM showed no spread and gave an interval of zero
    width; and human ids the LLM never graded were dropped silently."""
    llm = [0.6, 0.8, 0.7, 0.9]
    with pytest.raises(InvalidParameterError, match="10 or more human-graded queries"):
        ppi_mean(llm, llm[:2], llm[:2])
    with pytest.raises(InvalidParameterError, match="finite"):
        ppi_mean(llm * 3, [math.nan] * 10, llm * 2 + llm[:2])
    llm_qrels, human, runs = _graded(4)
    renamed = {q.upper(): grades for q, grades in human.items()}
    with (
        pytest.warns(rm.IdMismatchWarning),
        pytest.raises(InvalidParameterError, match=r"12 of the 12 human-graded .*'Q0'"),
    ):
        ppi_evaluate(llm_qrels, renamed, runs["bm25"], ["ndcg@5"])


def _graded(seed: int, n_sample: int = 12) -> tuple[dict, dict, dict]:
    rng = random.Random(seed)
    human = {f"q{i}": {f"d{j}": rng.randint(0, 2) for j in range(8)} for i in range(30)}
    llm = {  # the LLM grades generously
        q: {d: min(2, g + (rng.random() < 0.3)) for d, g in docs.items()}
        for q, docs in human.items()
    }
    runs = {
        name: {
            q: {f"d{j}": rng.random() + boost * human[q][f"d{j}"] for j in range(8)} for q in human
        }
        for name, boost in (("bm25", 0.0), ("hybrid", 1.0))
    }
    sample = {q: human[q] for q in list(human)[:n_sample]}
    return llm, sample, runs


def test_ppi_evaluate_and_compare_on_real_evaluations() -> None:
    llm, human, runs = _graded(3)
    (estimate,) = ppi_evaluate(llm, human, runs["hybrid"], ["ndcg@5"])
    on_llm = rm.evaluate(llm, runs["hybrid"], ["ndcg@5"]).per_query
    on_human = rm.evaluate(human, runs["hybrid"], ["ndcg@5"]).per_query
    f_all = np.array([on_llm[q]["ndcg@5"] for q in llm])
    f_n = np.array([on_llm[q]["ndcg@5"] for q in human])
    y_n = np.array([on_human[q]["ndcg@5"] for q in human])
    expected, half = _ppi_plus_plus(f_all, f_n, y_n)
    assert estimate.estimate == pytest.approx(expected)
    assert (estimate.low, estimate.high) == pytest.approx((expected - half, expected + half))
    assert 0.0 <= estimate.tuning <= 1.0
    assert (estimate.n_all, estimate.n_human) == (30, 12)
    assert estimate.naive == pytest.approx(f_all.mean())
    assert estimate.human_only == pytest.approx(y_n.mean())
    (difference,) = ppi_compare(llm, human, runs, ["ndcg@5"], baseline="bm25")
    assert difference.pair == ("bm25", "hybrid") and difference.estimate > 0
    with pytest.raises(InvalidParameterError, match="10 or more of the queries"):
        ppi_evaluate(llm, {"q1": human["q1"]}, runs["bm25"], ["ndcg@5"])


def test_ppi_as_keywords_of_evaluate_compare_and_the_report(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``human_qrels=`` in evaluate and compare gives the estimates ppi_evaluate and
    ppi_compare give, and the report shows them beside the naive intervals."""
    from ragmetrics.report._report import write_report

    llm, human, runs = _graded(5)
    metrics = ["ndcg@5", "P@3"]
    result = rm.evaluate(llm, runs["hybrid"], metrics, human_qrels=human)
    assert result.ppi is not None
    for ours, theirs in zip(
        result.ppi, ppi_evaluate(llm, human, runs["hybrid"], metrics), strict=True
    ):
        assert ours.metric == theirs.metric
        assert (ours.estimate, ours.low, ours.high) == pytest.approx(
            (theirs.estimate, theirs.low, theirs.high), abs=1e-15
        )
    assert rm.evaluate(llm, runs["hybrid"], metrics).ppi is None

    comparison = rm.compare(
        llm, runs, metrics, baseline="bm25", human_qrels=human, n_permutations=200
    )
    assert comparison.ppi is not None
    per_run = [e for e in comparison.ppi if e.pair is None]
    pairs = [e for e in comparison.ppi if e.pair is not None]
    assert len(per_run) == 2 * len(metrics) and len(pairs) == len(metrics)
    reference = ppi_compare(llm, human, runs, metrics, baseline="bm25")
    for ours, theirs in zip(pairs, reference, strict=True):
        assert ours.pair == theirs.pair == ("bm25", "hybrid")
        assert (ours.estimate, ours.low, ours.high) == pytest.approx(
            (theirs.estimate, theirs.low, theirs.high), abs=1e-15
        )
    page = write_report(comparison, tmp_path / "r.html", plots=False).read_text()
    assert "Intervals valid on LLM labels" in page and "people graded 12 of the queries" in page
    with pytest.raises(rm.RagMetricsError):
        rm.compare(llm, runs, metrics, human_qrels=[1, 2])


def test_the_planner_says_how_many_labels_a_width_needs() -> None:
    """From a pilot of human labels, the plan for a width; grading that many queries (200
    times over) gives intervals of about that width, and never more labels than people's
    labels alone would need."""
    from ragmetrics.analysis.ppi import ppi_plan

    rng = np.random.default_rng(3)
    truth = rng.beta(2, 3, 3000)
    for noise, helps in ((0.05, True), (0.6, False)):
        llm = np.clip(truth + rng.normal(0, noise, 3000), 0, 1)
        pilot = rng.choice(3000, 300, replace=False)
        plan = ppi_plan(llm, llm[pilot], truth[pilot], width=0.06)
        assert plan.n_human is not None and plan.n_human <= plan.n_people_only
        assert (plan.n_human < 0.7 * plan.n_people_only) == helps
        widths = []
        for _ in range(200):
            graded = rng.choice(3000, plan.n_human, replace=False)
            _, low, high = ppi_mean(llm, llm[graded], truth[graded])
            widths.append(high - low)
        assert abs(np.mean(widths) - 0.06) < 0.1 * 0.06  # as planned, within 10%
    tiny = ppi_plan(llm, llm[pilot], truth[pilot], width=1e-4)
    assert tiny.n_human is None and tiny.expected_width > 1e-4  # not reachable: said so
    with pytest.raises(InvalidParameterError, match="width"):
        ppi_plan(llm, llm[pilot], truth[pilot], width=0)


def test_estimates_per_segment_are_the_segments_own() -> None:
    llm, human, runs = _graded(6, n_sample=24)
    segments = {q: "even" if int(q[1:]) % 2 == 0 else "odd" for q in llm}
    estimates = ppi_evaluate(llm, human, runs["hybrid"], ["ndcg@5"], segments=segments)
    assert [e.segment for e in estimates] == [None, "even", "odd"]
    for part in ("even", "odd"):
        inside = {q: g for q, g in llm.items() if segments[q] == part}
        people = {q: g for q, g in human.items() if segments[q] == part}
        run = {q: r for q, r in runs["hybrid"].items() if q in inside}
        (alone,) = ppi_evaluate(inside, people, run, ["ndcg@5"])
        (ours,) = [e for e in estimates if e.segment == part]
        assert (ours.estimate, ours.low, ours.high, ours.n_human) == pytest.approx(
            (alone.estimate, alone.low, alone.high, alone.n_human)
        )
    pairs = ppi_compare(llm, human, runs, ["ndcg@5"], baseline="bm25", segments=segments)
    assert [(e.segment, e.pair) for e in pairs] == [
        (None, ("bm25", "hybrid")), ("even", ("bm25", "hybrid")), ("odd", ("bm25", "hybrid")),
    ]  # fmt: skip


def test_missing_is_the_callers_to_choose() -> None:
    """ppi_evaluate(..., missing="skip") raised a raw TypeError (missing given twice)."""
    llm, human, runs = _graded(7)
    run = {q: r for q, r in runs["hybrid"].items() if q != "q29"}  # one LLM-graded query absent
    (skipped,) = ppi_evaluate(llm, human, run, ["ndcg@5"], missing="skip")
    (zero,) = ppi_evaluate(llm, human, run, ["ndcg@5"])
    assert (skipped.n_all, zero.n_all) == (29, 30)
