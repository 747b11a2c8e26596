"""The kernels written as index arithmetic (AP, RR, nDCG) against the formulas written out.

Each reference below walks one ranking rank by rank, as the definition in docs/metrics.md
reads; the kernels work on coordinates of the judged docs only. Random batches with ties in
grades, unjudged and negative grades, empty rankings, judged docs never retrieved and
cutoffs shorter and longer than the rankings must agree to 1e-12.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from ragmetrics.engine._locate import locate_in_lists
from ragmetrics.metrics import _classic as classic


def _batch(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, list[str]]]:
    rng = random.Random(seed)
    judgments: dict[str, dict[str, int]] = {}
    rankings: dict[str, list[str]] = {}
    for q in range(150):
        pool = [f"d{i}" for i in range(rng.randint(1, 60))]
        judged = rng.sample(pool, rng.randint(1, len(pool)))
        judgments[f"q{q}"] = {d: rng.choice([-1, 0, 0, 1, 1, 2, 3]) for d in judged}
        rankings[f"q{q}"] = rng.sample(pool, rng.randint(0, len(pool)))
    return judgments, rankings


def _ap(ranking: list[str], grades: dict[str, int], rel: int, k: int | None) -> float:
    """(1/R) * sum over the relevant ranks i <= k of precision@i."""
    n_relevant = sum(g >= rel for g in grades.values())
    found, total = 0, 0.0
    for i, doc in enumerate(ranking[:k], start=1):
        if grades.get(doc, 0) >= rel:
            found += 1
            total += found / i
    return total / n_relevant if n_relevant else 0.0


def _rr(ranking: list[str], grades: dict[str, int], rel: int, k: int | None) -> float:
    """1 / rank of the first relevant doc within the first k."""
    for i, doc in enumerate(ranking[:k], start=1):
        if grades.get(doc, 0) >= rel:
            return 1.0 / i
    return 0.0


def _ndcg(ranking: list[str], grades: dict[str, int], k: int | None, exponential: bool) -> float:
    """DCG@k / IDCG@k with gain max(g, 0) (or 2^max(g, 0) - 1) and discount log2(i + 1)."""

    def gain(grade: int) -> float:
        g = max(grade, 0)
        return 2.0**g - 1.0 if exponential else float(g)

    dcg = sum(gain(grades.get(d, 0)) / math.log2(i + 1) for i, d in enumerate(ranking[:k], 1))
    ideal = sorted(grades.values(), reverse=True)[:k]
    idcg = sum(gain(g) / math.log2(i + 1) for i, g in enumerate(ideal, 1))
    return dcg / idcg if idcg else 0.0


CUTOFFS = [None, 1, 3, 10, 100]


@pytest.mark.parametrize("seed", range(4))
def test_index_arithmetic_equals_the_formulas(seed: int) -> None:
    judgments, rankings = _batch(seed)
    judged = locate_in_lists(judgments, rankings)
    queries = list(judgments)
    for k in CUTOFFS:
        for rel in (1, 2):
            expected = [_ap(rankings[q], judgments[q], rel, k) for q in queries]
            assert np.allclose(classic.average_precision(judged, k, rel=rel), expected, 0, 1e-12)
            expected = [_rr(rankings[q], judgments[q], rel, k) for q in queries]
            assert np.allclose(classic.reciprocal_rank(judged, k, rel=rel), expected, 0, 1e-12)
        for exponential, dcg in ((False, "log2"), (True, "exp-log2")):
            expected = [_ndcg(rankings[q], judgments[q], k, exponential) for q in queries]
            assert np.allclose(classic.ndcg(judged, k, dcg=dcg), expected, 0, 1e-12)


def test_the_references_can_tell_a_wrong_kernel() -> None:
    # a rank off by one in the reference must show: the comparison is not vacuous
    judgments, rankings = _batch(0)
    judged = locate_in_lists(judgments, rankings)
    shifted = [_ap(["pad", *rankings[q]], judgments[q], 1, None) for q in judgments]
    assert not np.allclose(classic.average_precision(judged, None, rel=1), shifted, 0, 1e-12)


def _bpref(ranking: list[str], grades: dict[str, int], rel: int) -> float:
    """(1/R) * sum over relevant docs retrieved of 1 - min(n, R) / min(N, R), n the judged
    non-relevant docs (grades 0 up to rel) above it; 1 when n = 0 (trec_eval's bpref)."""
    n_rel = sum(g >= rel for g in grades.values())
    n_nonrel = sum(0 <= g < rel for g in grades.values())
    above, total = 0, 0.0
    for doc in ranking:
        if doc not in grades:
            continue
        if grades[doc] >= rel:
            total += 1.0 - min(above, n_rel) / min(n_nonrel, n_rel) if above else 1.0
        elif grades[doc] >= 0:
            above += 1
    return total / n_rel if n_rel else 0.0


def _iprec(
    ranking: list[str], grades: dict[str, int], rel: int, level: float, trec9: bool
) -> float:
    """The highest precision at or after the c-th relevant doc retrieved, c = lround(level *
    R) (or floor(level * R + 0.9)); at c = 0 the highest anywhere; 0 if fewer are found."""
    n_rel = sum(g >= rel for g in grades.values())
    scaled = level * n_rel
    wanted = math.floor(scaled + 0.9) if trec9 else math.floor(scaled + 0.5)
    precisions = []
    for i, doc in enumerate(ranking, start=1):
        if grades.get(doc, 0) >= rel:
            precisions.append((len(precisions) + 1) / i)
    if not precisions or wanted > len(precisions):
        return 0.0
    return max(precisions[max(wanted, 1) - 1 :])


LEVELS = [0.0, 0.1, 0.25, 0.3, 0.5, 0.7, 0.75, 1.0]


@pytest.mark.parametrize("seed", range(4))
def test_bpref_iprec_and_counts_equal_the_formulas(seed: int) -> None:
    judgments, rankings = _batch(seed)
    judged = locate_in_lists(judgments, rankings)
    queries = list(judgments)
    for rel in (1, 2):
        expected = [_bpref(rankings[q], judgments[q], rel) for q in queries]
        assert np.allclose(classic.bpref(judged, None, rel=rel), expected, 0, 1e-12)
        for level in LEVELS:
            for trec9 in (False, True):
                expected = [_iprec(rankings[q], judgments[q], rel, level, trec9) for q in queries]
                rounding = "trec9" if trec9 else "nearest"
                got = classic.interpolated_precision(
                    judged, None, rel=rel, level=level, rounding=rounding
                )
                assert np.allclose(got, expected, 0, 1e-12), (rel, level, rounding)
        n_rel = [sum(g >= rel for g in judgments[q].values()) for q in queries]
        assert classic.relevant_count(judged, None, rel=rel).tolist() == n_rel
        found = [sum(judgments[q].get(d, 0) >= rel for d in rankings[q]) for q in queries]
        assert classic.relevant_retrieved_count(judged, None, rel=rel).tolist() == found
    assert classic.retrieved_count(judged, None).tolist() == [len(rankings[q]) for q in queries]


def test_iprec_rounds_halves_up_unless_trec9() -> None:
    # R = 2 and level 0.25: lround(0.5) = 1 (first relevant doc), floor(0.5 + 0.9) = 1;
    # level 0.05: lround(0.1) = 0 (anywhere), floor(0.1 + 0.9) = 1
    judged = locate_in_lists({"q": {"a": 1, "b": 1}}, {"q": ["x", "a", "y", "z", "b"]})
    for level, nearest, trec9 in ((0.25, 0.5, 0.5), (0.75, 0.4, 0.4), (0.05, 0.5, 0.5)):
        got = classic.interpolated_precision(judged, None, rel=1, level=level)
        assert got.tolist() == [nearest]
        got = classic.interpolated_precision(judged, None, rel=1, level=level, rounding="trec9")
        assert got.tolist() == [trec9]
    # R = 5, the relevant docs at ranks 1, 2, 5, 8, 9: precisions 1, 1, 3/5, 4/8, 5/9.
    # level 0.5: lround(2.5) = 3 (halves up; to even would be 2, giving 1.0), floor(3.4) = 3;
    # level 0.42: lround(2.1) = 2, floor(3.0) = 3; level 1: 5 either way
    grades = dict.fromkeys("abcde", 1)
    judged = locate_in_lists({"q": grades}, {"q": ["a", "b", "x", "y", "c", "z", "w", "d", "e"]})
    for level, nearest, trec9 in ((0.5, 0.6, 0.6), (0.42, 1.0, 0.6), (1.0, 5 / 9, 5 / 9)):
        got = classic.interpolated_precision(judged, None, rel=1, level=level)
        assert got == pytest.approx([nearest], abs=1e-15)
        got = classic.interpolated_precision(judged, None, rel=1, level=level, rounding="trec9")
        assert got == pytest.approx([trec9], abs=1e-15)


def _err(ranking: list[str], grades: dict[str, int], k: int | None, top: float) -> float:
    """sum over ranks i <= k of (1/i) R_i prod_{j<i} (1 - R_j), R = (2^g - 1) / 2^top."""
    total, reach = 0.0, 1.0
    for i, doc in enumerate(ranking[:k], start=1):
        stop = (2.0 ** max(grades.get(doc, 0), 0) - 1.0) / 2.0**top
        total += reach * stop / i
        reach *= 1.0 - stop
    return total


@pytest.mark.parametrize("seed", range(4))
def test_recall_family_r_precision_and_err_equal_the_formulas(seed: int) -> None:
    judgments, rankings = _batch(seed)
    judged = locate_in_lists(judgments, rankings)
    queries = list(judgments)
    for rel in (1, 2):
        n_rel = [sum(g >= rel for g in judgments[q].values()) for q in queries]
        top_r = [
            sum(judgments[q].get(d, 0) >= rel for d in rankings[q][:r])
            for q, r in zip(queries, n_rel)
        ]
        expected = [h / r if r else 0.0 for h, r in zip(top_r, n_rel)]
        assert np.allclose(classic.r_precision(judged, None, rel=rel), expected, 0, 1e-12)
        for k in CUTOFFS:
            hits = [sum(judgments[q].get(d, 0) >= rel for d in rankings[q][:k]) for q in queries]
            recall = [h / r if r else 0.0 for h, r in zip(hits, n_rel)]
            assert np.allclose(classic.recall(judged, k, rel=rel), recall, 0, 1e-12)
            assert np.allclose(classic.group_recall(judged, k, rel=rel), recall, 0, 1e-12)
            assert classic.hit_rate(judged, k, rel=rel).tolist() == [float(h > 0) for h in hits]
            if k is not None:
                every = [float(h == r) if r else math.nan for h, r in zip(hits, n_rel)]
                got = classic.recall_all(judged, k, rel=rel)
                assert np.array_equal(got, every, equal_nan=True), (k, rel)
    top = max(max(g.values()) for g in judgments.values())
    for k in CUTOFFS:
        expected = [_err(rankings[q], judgments[q], k, top) for q in queries]
        assert np.allclose(classic.err(judged, k, max_grade=None), expected, 0, 1e-12)
        expected = [_err(rankings[q], judgments[q], k, 5.0) for q in queries]
        assert np.allclose(classic.err(judged, k, max_grade=5), expected, 0, 1e-12)


def test_err_with_binary_grades() -> None:
    # the top grade is 1: a relevant doc stops the reader half the time
    judged = locate_in_lists({"q": {"a": 1, "b": 1, "c": 0}}, {"q": ["c", "a", "x", "b"]})
    assert classic.err(judged, None, max_grade=None).tolist() == [0.5 / 2 + 0.5 * 0.5 / 4]


@pytest.mark.parametrize("depth", [5, 1500, 3000])
def test_discounts_of_deep_rankings_are_built_fresh(depth: int) -> None:
    # the table of log2(rank + 1) is kept for the process: start from an empty one, so that
    # its first build (at least 1,024 ranks) and a build past that are both checked
    from ragmetrics.metrics import judged as judged_module

    kept = judged_module._LOG2_RANKS[0]
    judged_module._LOG2_RANKS[0] = np.empty(0)
    try:
        _check_deep_discounts(depth)
    finally:
        judged_module._LOG2_RANKS[0] = kept


def _check_deep_discounts(depth: int) -> None:
    from ragmetrics.metrics import judged as judged_module

    ranking = [f"d{i}" for i in range(depth)]
    grades = {ranking[0]: 1, ranking[depth // 2]: 3, ranking[-1]: 2, "never": 1}
    judged = locate_in_lists({"q": grades}, {"q": ranking})
    for k in (None, depth - 1):
        got = classic.ndcg(judged, k, dcg="log2")
        assert np.allclose(got, [_ndcg(ranking, grades, k, False)], 0, 1e-12), (depth, k)
    table = judged_module._LOG2_RANKS[0]
    assert len(table) >= max(depth, 1024) and not table.flags.writeable
    assert table[0] == 1.0 and table[-1] == math.log2(len(table) + 1)
