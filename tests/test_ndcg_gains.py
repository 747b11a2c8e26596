"""``ndcg(gains=...)``: grades replaced by gains in the ranking and in the ideal alike.

Checked against a plain-Python nDCG on random qrels (negative, zero and positive grades),
random gain tables (gains below zero, grades the table does not name) and both gain forms,
at several cutoffs; and every malformed table is refused with the same sentence.
"""

from __future__ import annotations

import math
import random

import pytest

import ragmetrics as rm
from ragmetrics.errors import InvalidParameterError


def _reference(
    qrels: dict[str, int], ranking: list[str], table: dict[int, float], k: int | None, exp: bool
) -> float:
    def gain(grade: int) -> float:
        value = max(table.get(grade, float(grade)), 0.0)
        return 2.0**value - 1.0 if exp else value

    top = ranking if k is None else ranking[:k]
    dcg = sum(gain(qrels[d]) / math.log2(i + 2) for i, d in enumerate(top) if d in qrels)
    ideal = sorted((gain(g) for g in qrels.values()), reverse=True)
    ideal = ideal if k is None else ideal[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def _label(table: dict[int, float], k: int | None, exp: bool) -> str:
    text = ";".join(f"{grade}:{gain!r}" for grade, gain in table.items())
    dcg = "dcg='exp-log2'," if exp else ""
    return f"ndcg({dcg}gains='{text}')" + ("" if k is None else f"@{k}")


@pytest.mark.parametrize("seed", range(6))
def test_gains_equal_a_plain_reference(seed: int) -> None:
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(30)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(25):
        judged = rng.sample(docs, rng.randint(1, 12))
        qrels[f"q{q}"] = {d: rng.randint(-1, 4) for d in judged}
        retrieved = rng.sample(docs, rng.randint(1, 15))
        scores = rng.sample(range(1000), len(retrieved))  # distinct: one order
        run[f"q{q}"] = {d: float(s) for d, s in zip(retrieved, scores)}
    grades = rng.sample([-1, 0, 1, 2, 3, 4], rng.randint(1, 4))
    table = {g: rng.choice([0.0, -0.5, 0.25, 1.5, 3.0, 7.0]) for g in grades}
    cases = [(k, exp) for k in (None, 1, 3, 10) for exp in (False, True)]
    labels = [_label(table, k, exp) for k, exp in cases]
    per_query = rm.evaluate(qrels, run, labels).per_query
    for q, judged in qrels.items():
        ranking = sorted(run[q], key=run[q].__getitem__, reverse=True)
        for (k, exp), label in zip(cases, labels):
            expected = _reference(judged, ranking, table, k, exp)
            assert per_query[q][label] == pytest.approx(expected, abs=1e-12), (q, label)


def test_the_ideal_is_regraded_too() -> None:
    # grade 1 earns nothing, grade 0 earns 5: the best possible ranking puts c first
    qrels = {"q": {"a": 2, "b": 1, "c": 0}}
    best = rm.evaluate(qrels, {"q": {"c": 3.0, "a": 2.0, "b": 1.0}}, ["ndcg(gains='1:0;0:5')"])
    assert best.aggregate["ndcg(gains='1:0;0:5')"] == pytest.approx(1.0)
    worse = rm.evaluate(qrels, {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}, ["ndcg(gains='1:0;0:5')"])
    expected = (2.0 + 5.0 / 2.0) / (5.0 + 2.0 / math.log2(3))
    assert worse.aggregate["ndcg(gains='1:0;0:5')"] == pytest.approx(expected, abs=1e-12)


def test_spaces_and_empty_parts_are_allowed() -> None:
    qrels = {"q": {"a": 2, "b": 1, "c": 3}}
    run = {"q": {"b": 3.0, "a": 2.0, "x": 1.0}}
    plain = rm.evaluate(qrels, run, ["ndcg(gains='1:0;3:0.5')"]).aggregate
    spaced = rm.evaluate(qrels, run, ["ndcg(gains=' 1 : 0 ; ;3:0.5;')"]).aggregate
    assert list(spaced.values()) == list(plain.values())
    # a gain of 0.5 for grade 3 ranks it below grade 2 in the ideal: a, c, b
    expected = (2.0 / math.log2(3)) / (2.0 + 0.5 / math.log2(3))
    assert plain["ndcg(gains='1:0;3:0.5')"] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    "text", ["1", "1:", "1:x", "a:1", "1.5:1", ":1", "1:0;1:2", "1:inf", "1:-inf", "1:nan"]
)
def test_a_malformed_table_is_refused(text: str) -> None:
    with pytest.raises(InvalidParameterError) as caught:
        rm.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, [f"ndcg(gains='{text}')"])
    assert str(caught.value) == (
        f"gains={text!r}: write each grade once as 'grade:gain' (an integer grade, a finite "
        f"gain), separated by ';', e.g. '1:0;2:0.5'."
    )
