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


def test_ppi_mean_as_written() -> None:
    llm = [0.6, 0.8, 0.7, 0.9] * 5
    estimate, low, high = ppi_mean(llm, llm[:10], [x - 0.1 for x in llm[:10]])
    assert estimate == pytest.approx(0.75 - 0.1)
    f_var = np.var(llm, ddof=1) / 20
    half = 1.959963984540054 * np.sqrt(f_var + 0.0)
    assert (low, high) == pytest.approx((estimate - half, estimate + half))
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


def _graded(seed: int) -> tuple[dict, dict, dict]:
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
    sample = {q: human[q] for q in list(human)[:12]}
    return llm, sample, runs


def test_ppi_evaluate_and_compare_on_real_evaluations() -> None:
    llm, human, runs = _graded(3)
    (estimate,) = ppi_evaluate(llm, human, runs["hybrid"], ["ndcg@5"])
    on_llm = rm.evaluate(llm, runs["hybrid"], ["ndcg@5"]).per_query
    on_human = rm.evaluate(human, runs["hybrid"], ["ndcg@5"]).per_query
    f_all = np.array([on_llm[q]["ndcg@5"] for q in llm])
    f_n = np.array([on_llm[q]["ndcg@5"] for q in human])
    y_n = np.array([on_human[q]["ndcg@5"] for q in human])
    assert estimate.estimate == pytest.approx(f_all.mean() + (y_n - f_n).mean())
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
