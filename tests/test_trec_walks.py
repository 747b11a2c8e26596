"""trec_eval's walking measures (ndcg_rel, Rndcg, G, binG, rbp, rbp_resid, infAP, yaap, the
interpolated precision average, DCG with gains) are computed over blocks of queries padded
into matrices. Each value must be, to the last bit, the one a walk down a single ranking
makes, as trec_eval's C loops walk it: the reference below walks one query at a time in
plain Python floats, in rank order."""

from __future__ import annotations

import math
import random
import struct
from collections.abc import Callable

import pytest

import ragmetrics as rm
from ragmetrics.metrics import _trec

GAINS = ["", "1:3;2:9;4:4.5", "0:1;1:2", "2:5", "1:0;0:5", "1:0.3;2:0.6;3:0.9", "0:0.5;1:2;1:7"]
LEVELS = ["0;0.1;0.2;0.3;0.4;0.5;0.6;0.7;0.8;0.9;1", "1;0;0.5", "0.5;0.5;0", "2;1;0.3"]


def _inputs(seed: int) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """Queries of uneven depths (0 to 1,200 docs) and judgments (none to 300; negative
    grades, gaps between grades), tied scores; some judged queries with an empty ranking."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, float]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(rng.choice([1, 4, 30])):
        n_judged, depth = rng.choice([1, 5, 40, 300]), rng.choice([0, 1, 3, 12, 100, 1200])
        pool = [f"d{i}" for i in range(2 * max(n_judged, depth) + 1)]
        scale = rng.choice([[0, 1], [0, 1, 2, 3], [-1, 0, 1, 2], [0, 0, 4], [1], [-2, 5, 0]])
        qrels[f"q{q}"] = {doc: rng.choice(scale) for doc in rng.sample(pool, n_judged)}
        run[f"q{q}"] = {doc: float(rng.randrange(6)) for doc in rng.sample(pool, depth)}
    return qrels, run


def _walked(
    qrels: dict[str, dict[str, float]], run: dict[str, dict[str, float]]
) -> dict[str, tuple[list[int], list[int]]]:
    """Per query: the grade at each rank of its ranking in trec_eval's order (-1 for a doc
    not judged, -2 for a negative grade) and its judged docs counted by grade 0, 1, ..."""
    ranked = rm.Run.from_dict(run)
    out = {}
    for query, docs in zip(ranked.query_ids, ranked.rankings(), strict=True):
        judged = qrels[query]
        grades = []
        for doc in docs:
            grade = judged.get(doc)
            grades.append(-1 if grade is None else -2 if int(grade) < 0 else int(grade))
        kept = [int(g) for g in judged.values() if g >= 0]
        levels = [kept.count(g) for g in range(max(kept) + 1)] if kept else []
        out[query] = (grades, levels)
    return out


def _table(levels: list[int], gains: str, scaled: bool = False) -> tuple[dict[int, float], list]:
    """The query's gain per grade and its ideal ranking's positive gains (trec_eval's gain
    table, ordered as :func:`_trec._gain_table` orders it)."""
    table = _trec._gain_table(len(levels), _trec._gain_pairs(gains))
    if scaled:
        low, high = min([0.0] + [r[1] for r in table]), max([0.0] + [r[1] for r in table])
        if low < 0 or high > 1:
            for row in table:
                row[1] = (row[1] - low) / (high - low)
    gain_of: dict[int, float] = {}
    for grade, gain, _ in table:
        gain_of.setdefault(int(grade), gain)
    ideal: list[float] = []
    if table and table[-1][1] > 0.0:
        for _, gain, counted in reversed(table):
            docs = levels[int(counted) - 1] if counted else 0
            if not docs:
                continue
            if gain <= 0.0:
                break
            ideal += [gain] * docs
    return gain_of, ideal


def _log2(x: float) -> float:
    return math.log2(x)


def _ndcg_rel(grades: list[int], levels: list[int], gains: str) -> float:
    gain_of, ideal = _table(levels, gains)
    sums, bests = _dcgs(grades, levels, gains)
    total, n_found = 0.0, 0
    for rank, gain in enumerate(gain_of.get(g, 0.0) for g in grades):
        if gain > 0:
            n_found += 1
            at = bests[min(rank, len(ideal) - 1)] if ideal else 0.0
            total += _divide(sums[rank], at)
    last = sums[-1] if sums else 0.0
    total += _divide(float(len(ideal) - n_found) * last, bests[-1] if bests else 0.0)
    return total / len(ideal) if total > 0.0 else 0.0


def _divide(a: float, b: float) -> float:
    """C's division: a / 0 is inf, 0 / 0 NaN."""
    if b == 0.0:
        return math.nan if a == 0.0 or a != a else math.copysign(math.inf, a)
    return a / b


def _dcgs(grades: list[int], levels: list[int], gains: str) -> tuple[list[float], list[float]]:
    """The ranking's DCG and the ideal's, rank by rank."""
    gain_of, ideal = _table(levels, gains)
    results, best, sums, bests = 0.0, 0.0, [], []
    for rank, grade in enumerate(grades):
        gain = gain_of.get(grade, 0.0)
        if gain != 0:
            results += gain / _log2(rank + 2)
        sums.append(results)
    for rank, gain in enumerate(ideal):
        best += gain / _log2(rank + 2)
        bests.append(best)
    return sums, bests


def _ndcg(grades: list[int], levels: list[int], gains: str) -> float:
    sums, bests = _dcgs(grades, levels, gains)
    best = bests[-1] if bests else 0.0
    return (sums[-1] if sums else 0.0) / best if best > 0.0 else 0.0


def _r_ndcg(grades: list[int], levels: list[int], relevant: int, gains: str) -> float:
    if not relevant:
        return 0.0
    _, ideal = _table(levels, gains)
    sums, bests = _dcgs(grades, levels, gains)
    total, terms = 0.0, 0
    for i in range(len(ideal)):
        if i == len(ideal) - 1 or ideal[i + 1] != ideal[i]:  # the ideal gain changes after i
            so_far = sums[min(i, len(sums) - 1)] if sums else 0.0
            total += _divide(so_far, bests[i])
            terms += 1
    if ideal and len(ideal) + 1 < len(grades):
        total += _divide(sums[-1], bests[-1])
        terms += 1
    return _divide(total, float(terms))


def _yaap(grades: list[int], relevant: int, rel: int) -> float:
    total, found = 0.0, 0
    for rank, grade in enumerate(grades):
        if grade >= rel:
            found += 1
            total += found / (rank + 1.0)
    ratio = (1.0 + total) / (1.0 + float(relevant) - total)
    return math.log(ratio) if ratio > 0 else -math.inf if ratio == 0 else -math.nan


def _g(grades: list[int], levels: list[int], gains: str) -> float:
    gain_of, ideal = _table(levels, gains)
    cost = so_far = total = 0.0
    for rank, grade in enumerate(grades):
        gain = gain_of.get(grade, 0.0)
        cost += max(ideal[rank] if rank < len(ideal) else 0.0, 1.0)
        so_far += gain
        if gain != 0:
            total += gain / _log2((2.0 + cost) - so_far)
    best = 0.0
    for gain in ideal:
        best += gain
    return total / best if best > 0.0 else 0.0


def _rbp(grades: list[int], levels: list[int], gains: str, p: float) -> float:
    gain_of, _ = _table(levels, gains, scaled=True)
    total, weight = 0.0, 1.0
    for grade in grades:
        gain = gain_of.get(grade, 0.0)
        if gain != 0:
            total += gain * weight
        weight *= p
    return (1.0 - p) * total


def _rbp_resid(grades: list[int], p: float) -> float:
    total, weight = 0.0, 1.0
    for grade in grades:
        if grade < 0:
            total += weight
        weight *= p
    return weight + (1 - p) * total if any(g < 0 for g in grades) else 0.0


def _bin_g(grades: list[int], relevant: int, rel: int) -> float:
    total, found = 0.0, 0
    for rank, grade in enumerate(grades):
        if grade >= rel:
            found += 1
            total += 1.0 / _log2(float(3 + rank - found))
    return total / float(relevant) if found else 0.0


def _infap(grades: list[int], relevant: int, rel: int) -> float:
    total = 0.0
    found = below = unjudged = 0
    eps = _trec.INFAP_EPSILON
    for rank, grade in enumerate(grades):
        unjudged += grade == -2
        below += 0 <= grade < rel
        if grade < rel:
            continue
        if rank == 0:
            total += 1.0
        else:
            at = float(rank)
            judged_above = float(found + below + unjudged)
            total += 1.0 / (at + 1.0) + (at / (at + 1.0)) * (judged_above / at) * (
                (found + eps) / ((found + below) + 2 * eps)
            )
        found += 1
    return total / float(relevant) if relevant else total


def _interpolated(grades: list[int], relevant: int, rel: int, levels: str, rounding: str) -> float:
    targets = [float(x) for x in levels.split(";")]
    if rounding == "trec9":
        counts = [math.floor(t * relevant + 0.9) for t in targets]
    else:
        counts = [_trec.round_half_away(t * relevant) for t in targets]
    hits = [rank for rank, grade in enumerate(grades) if grade >= rel]
    position, total = len(counts) - 1, 0.0
    while position >= 0 and counts[position] > len(hits):
        position -= 1
    best = len(hits) / len(grades) if grades else 0.0
    for index in range(len(hits) - 1, -1, -1):
        best = max(best, (index + 1) / (hits[index] + 1))
        while position >= 0 and counts[position] == index + 1:
            total += best
            position -= 1
    while position >= 0:
        total += best
        position -= 1
    return total / len(targets)


def _same(a: float | None, b: float | None) -> bool:
    """The same double, bit for bit; NaN and NA (None: a 0 / 0) alike."""
    a, b = (math.nan if x is None else x for x in (a, b))
    return struct.pack("<d", a) == struct.pack("<d", b) or (a != a and b != b)


def _references() -> dict[str, Callable[[list[int], list[int], int], float]]:
    """Each metric label and its walk down one ranking (``grades``, ``levels``, R)."""
    refs: dict[str, Callable[[list[int], list[int], int], float]] = {}
    for g in GAINS:
        refs[f"ndcg_gains(gains='{g}')"] = lambda gr, lv, r, g=g: _ndcg(gr, lv, g)
        refs[f"dcg(gains='{g}')"] = lambda gr, lv, r, g=g: (_dcgs(gr, lv, g)[0] or [0.0])[-1]
        refs[f"ideal_dcg(gains='{g}')"] = lambda gr, lv, r, g=g: (_dcgs(gr, lv, g)[1] or [0.0])[-1]
        refs[f"r_ndcg(rel=1,gains='{g}')"] = lambda gr, lv, r, g=g: _r_ndcg(gr, lv, r, g)
        refs[f"ndcg_rel(gains='{g}')"] = lambda gr, lv, r, g=g: _ndcg_rel(gr, lv, g)
        refs[f"g(gains='{g}')"] = lambda gr, lv, r, g=g: _g(gr, lv, g)
        refs[f"rbp(p=0.8,gains='{g}')"] = lambda gr, lv, r, g=g: _rbp(gr, lv, g, 0.8)
    refs["rbp_resid(p=0.9)"] = lambda gr, lv, r: _rbp_resid(gr, 0.9)
    for rel in (1, 2):
        refs[f"bin_g(rel={rel})"] = lambda gr, lv, r, rel=rel: _bin_g(gr, r, rel)
        refs[f"yaap(rel={rel})"] = lambda gr, lv, r, rel=rel: _yaap(gr, r, rel)
        refs[f"infap(rel={rel})"] = lambda gr, lv, r, rel=rel: _infap(gr, r, rel)
        for levels in LEVELS:
            for rounding in ("nearest", "trec9"):
                label = f"eleven_point_average(rel={rel},levels='{levels}',rounding='{rounding}')"
                refs[label] = lambda gr, lv, r, rel=rel, lvl=levels, rd=rounding: _interpolated(
                    gr, r, rel, lvl, rd
                )
    return refs


@pytest.mark.parametrize("seed", range(12))
def test_walks_equal_one_ranking_walked_at_a_time(seed: int) -> None:
    qrels, run = _inputs(seed)
    refs = _references()
    per_query = rm.evaluate(qrels, run, list(refs)).per_query
    walked = _walked(qrels, run)
    for query, (grades, levels) in walked.items():
        for label, reference in refs.items():
            rel = 2 if "rel=2" in label else 1
            relevant = sum(1 for g in qrels[query].values() if g >= rel)
            expected = reference(grades, levels, relevant)
            assert _same(per_query[query][label], expected), (query, label)


@pytest.mark.parametrize("cells", [1, 64, 5000])
def test_any_cut_into_blocks_gives_the_same_values(
    cells: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Queries cut into blocks of one row, of a few, or into several classes of width give
    the values of the whole run in one block, to the bit."""
    labels = [*_references(), "r_ndcg(rel=2,gains='2:5')"]
    for seed in range(4):
        qrels, run = _inputs(100 + seed)
        whole = rm.evaluate(qrels, run, labels).per_query
        monkeypatch.setattr(_trec, "_BLOCK_CELLS", cells)
        cut = rm.evaluate(qrels, run, labels).per_query
        monkeypatch.undo()
        for query, values in whole.items():
            for label in labels:
                assert _same(cut[query][label], values[label]), (seed, query, label)


@pytest.mark.parametrize("levels", ["inf", "0;nan", "-inf;0.5"])
def test_recall_levels_that_are_not_finite_are_refused(levels: str) -> None:
    with pytest.raises(rm.InvalidParameterError, match="finite numbers"):
        rm.evaluate({"q": {"a": 1}}, {"q": ["a"]}, [f"eleven_point_average(levels='{levels}')"])


def test_a_level_past_every_ranking_counts_as_any_level_past_it() -> None:
    """1e308 x R overflows to inf: still a count no ranking reaches, as level 2 gives."""
    qrels, run = {"q": {"a": 1, "b": 1}}, {"q": ["a", "x", "b"]}
    far, near = (
        rm.evaluate(qrels, run, [f"eleven_point_average(levels='0;{x}')"]).aggregate
        for x in ("1e308", "2")
    )
    assert list(far.values()) == list(near.values()) == [0.5]


def test_a_huge_grade_keeps_its_query_in_a_block_of_its_own() -> None:
    """Docs are counted by grade in a matrix as wide as the highest grade: a query graded
    up to 100,000 goes to a block of its width class, not into the others' blocks (which
    would make each of their rows that wide), and its gain table is built in one pass."""
    from ragmetrics.engine._locate import locate_judged

    qrels = {f"q{i}": {"a": 1, "b": 0} for i in range(3000)}
    qrels["q7"]["a"] = 100_000
    run = {f"q{i}": {"a": 2.0, "b": 1.0, "c": 0.5} for i in range(3000)}
    judged = locate_judged(
        rm.Qrels.from_dict(qrels), rm.Run.from_dict(run), list(qrels), depth=None
    )
    walks = _trec._walks(judged)
    assert all(w.levels.size <= max(_trec._BLOCK_CELLS, 100_001) for w in walks)
    assert [len(w.rows) for w in walks if w.levels.shape[1] > 2] == [1]
    values = rm.evaluate(qrels, run, ["dcg", "ndcg_rel"]).per_query
    assert values["q7"]["dcg"] == 100_000.0
    assert values["q8"]["dcg"] == 1.0 and values["q8"]["ndcg_rel"] == 1.0
