"""Real-valued grades (an LLM judge's 0.37, a click model's gain): taken by the metrics
whose formula takes a gain (nDCG, ERR), refused with a clear error by the others, and
nDCG equal to MTEB's ``ndcg_float`` definition where no scores tie."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest

import ragmetrics as rm
from ragmetrics.errors import GradeScaleError, InputFormatError


def _mteb_ndcg_float(gains: dict[str, float], scores: dict[str, float], k: int) -> float:
    """MTEB's ndcg_float, written from its definition: linear gains as given,
    DCG@k = sum gain(r) / log2(r + 1), the ideal from all of the query's gains sorted, tied
    scores credited their group's mean gain."""
    ranked = sorted(scores.items(), key=lambda item: -item[1])
    credited: list[float] = []
    i = 0
    while i < len(ranked):
        j = i
        while j < len(ranked) and ranked[j][1] == ranked[i][1]:
            j += 1
        group = [gains.get(doc, 0.0) for doc, _ in ranked[i:j]]
        credited += [sum(group) / len(group)] * len(group)
        i = j

    def dcg(values: list[float]) -> float:
        return sum(g / math.log2(r + 1) for r, g in enumerate(values[:k], start=1))

    ideal = dcg(sorted(gains.values(), reverse=True))
    return dcg(credited) / ideal if ideal > 0 else 0.0


def test_ndcg_equals_mteb_ndcg_float_without_ties() -> None:
    rng = random.Random(8)
    for _ in range(200):
        docs = [f"d{i}" for i in range(rng.randint(1, 30))]
        gains = {d: round(rng.random() * 3, 3) for d in rng.sample(docs, rng.randint(1, len(docs)))}
        scores = {d: rng.random() for d in rng.sample(docs, rng.randint(1, len(docs)))}
        k = rng.choice([1, 3, 5, 10, 20])
        if not any(not float(g).is_integer() for g in gains.values()):
            gains[next(iter(gains))] = 0.5
        ours = rm.evaluate({"q": gains}, {"q": scores}, [f"ndcg@{k}"])[f"ndcg@{k}"]
        assert ours == pytest.approx(_mteb_ndcg_float(gains, scores, k), rel=1e-12, abs=1e-15)


def test_err_takes_real_gains() -> None:
    gains = {"a": 0.5, "b": 2.0, "c": 1.25}
    scores = {"b": 0.9, "x": 0.8, "a": 0.7, "c": 0.6}
    top = max(gains.values())
    expected, still = 0.0, 1.0
    for rank, doc in enumerate(["b", "x", "a", "c"], start=1):
        r = (2 ** gains.get(doc, 0.0) - 1) / 2**top
        expected += still * r / rank
        still *= 1 - r
    assert rm.evaluate({"q": gains}, {"q": scores}, ["err"])["err"] == pytest.approx(expected)


def test_metrics_that_need_integer_grades_refuse_them() -> None:
    qrels = {"q": {"a": 0.37, "b": 1}}
    with pytest.raises(GradeScaleError) as caught:
        rm.evaluate(qrels, {"q": ["a", "b"]}, ["ndcg@10", "P@1", "map", "ra_nwg@5"])
    message = str(caught.value)
    assert "real-valued grades (such as 0.37)" in message
    assert "P@1, map, ra_nwg@5 decide relevance" in message
    assert "that take a gain as it is: err, ndcg" in message
    spec = {m["name"]: m for m in rm.list_metrics()}
    assert spec["ndcg"]["real_grades"] and not spec["precision"]["real_grades"]


def test_real_grades_are_read_kept_and_written_where_a_format_holds_them(tmp_path: Path) -> None:
    qrels = rm.Qrels.from_dict({"q1": {"a": 0.25, "b": 2.0}, "q2": {"c": 1}})
    assert qrels.has_real_grades and qrels.max_grade() == 2.0
    assert qrels.to_dict() == {"q1": {"a": 0.25, "b": 2}, "q2": {"c": 1}}
    assert not rm.Qrels.from_dict({"q1": {"a": 2.0}}).has_real_grades  # integral: a grade
    with pytest.raises(InputFormatError, match="Cannot write real-valued grades to the TREC file"):
        qrels.to_trec(tmp_path / "q.trec")
    qrels.to_json(tmp_path / "q.json")
    assert rm.Qrels.from_json(tmp_path / "q.json") == qrels
    pytest.importorskip("pyarrow")
    qrels.to_parquet(tmp_path / "q.parquet")
    assert rm.Qrels.from_parquet(tmp_path / "q.parquet").to_dict() == qrels.to_dict()
    records = tmp_path / "r.jsonl"
    records.write_text(
        "\n".join(
            json.dumps({"query_id": "q", "doc_id": d, "relevance": g})
            for d, g in [("a", 0.5), ("a", 0.75)]
        )
    )
    with pytest.raises(
        InputFormatError, match=r"Doc 'a' of query 'q' is judged twice, 0\.5 and 0\.75"
    ):
        rm.Qrels.from_json(records)
    for bad in (float("nan"), float("inf")):
        with pytest.raises(InputFormatError, match="must be a finite number"):
            rm.Qrels.from_dict({"q": {"a": bad}})
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame(
        {"query_id": ["q", "q"], "doc_id": ["a", "b"], "relevance": [0.5, np.float64(1.0)]}
    )
    assert rm.Qrels.from_pandas(frame).to_dict() == {"q": {"a": 0.5, "b": 1}}


@pytest.mark.parametrize("seed", range(4))
def test_ndcg_gains_equal_ir_measures_and_remapped_qrels(seed: int) -> None:
    """``ndcg(gains=...)`` maps grades to gains in the ranking and in the ideal alike: equal
    to ir_measures' ``nDCG(gains=...)`` and to plain nDCG on qrels remapped by hand, also
    where the gains reorder the grades (3 worth less than 2 here)."""
    ir_measures = pytest.importorskip("ir_measures")
    rng = random.Random(seed)
    qrels = {
        f"q{i}": {f"d{j}": rng.choice([1, 1, 2, 3, 4, 5]) for j in rng.sample(range(60), 20)}
        for i in range(25)
    }
    run = {f"q{i}": {f"d{j}": rng.random() for j in rng.sample(range(60), 30)} for i in range(25)}
    table = {1: 0.0, 3: 1.0, 5: 9.0}  # integers: ir_measures hands them to pytrec_eval
    gains = ";".join(f"{g}:{v}" for g, v in table.items())
    label = f"ndcg(gains='{gains}')@10"
    ours = rm.evaluate(qrels, run, [label]).per_query
    remapped = {
        q: {d: table.get(g, float(g)) for d, g in docs.items()} for q, docs in qrels.items()
    }
    by_hand = rm.evaluate(remapped, run, ["ndcg@10"]).per_query
    theirs = {
        m.query_id: m.value
        for m in ir_measures.iter_calc(
            [ir_measures.nDCG(gains={0: 0, 1: 0, 2: 2, 3: 1, 4: 4, 5: 9}) @ 10], qrels, run
        )
    }
    for query in qrels:
        assert ours[query][label] == pytest.approx(by_hand[query]["ndcg@10"], abs=1e-15)
        assert ours[query][label] == pytest.approx(theirs[query], abs=1e-6)


def test_ndcg_gains_are_refused_when_unreadable() -> None:
    for gains in ("1", "a:1", "1:x", "1:nan", "1:0;1:2"):
        with pytest.raises(rm.RagMetricsError, match="grade:gain"):
            rm.evaluate({"q": {"a": 1}}, {"q": ["a"]}, [f"ndcg(gains='{gains}')@5"])
