"""Utility labels (eRAG): each passage labelled by whether the user's generator answers
correctly from it alone; and `tracking`, Kendall's tau between a metric and end-to-end
answer quality across systems. The generator here reads a city out of a passage of the
people set (``<Name> lives in <City>. ...``), deterministic and offline."""

from __future__ import annotations

import asyncio
import math
import random
from pathlib import Path

import pytest

import ragmetrics as rm
from ragmetrics import goldset
from ragmetrics._util.answers import exact_match, normalize_answer, token_f1
from ragmetrics.datasets import people
from ragmetrics.errors import InvalidParameterError, UngradedPairsWarning

DATA = people()


def _city(passage: str) -> str:
    return passage.split(" lives in ")[1].split(".")[0] if " lives in " in passage else "unknown"


def _answer(question: str, passage: str) -> str:
    """The generator: the city of the passage when it speaks of the question's person."""
    person = question.split()[2]
    return _city(passage) if passage.startswith(person) else "I do not know"


def _references() -> dict[str, str]:
    return {q: _city(DATA.corpus[next(iter(DATA.qrels[q]))]) for q in DATA.queries}


def _run(seed: int = 0, depth: int = 5) -> dict[str, list[str]]:
    rng = random.Random(seed)
    docs = list(DATA.corpus)
    out = {}
    for q in list(DATA.queries)[:12]:
        relevant = [d for d, g in DATA.qrels[q].items() if g > 0]
        out[q] = rng.sample(docs, depth - 1)
        out[q].insert(rng.randrange(depth), relevant[0])
    return out


def test_labels_are_the_generators_answers_compared_with_the_references(tmp_path: Path) -> None:
    run, references = _run(), _references()
    for metric, compare in (("exact_match", exact_match), ("f1", token_f1)):
        labels = goldset.utility_qrels(
            DATA, run, None, answer=_answer, references=references, k=4, metric=metric,
            model_id="city-reader", cache=tmp_path / f"{metric}.sqlite",
        )  # fmt: skip
        for query_id, ranking in run.items():
            question = DATA.queries[query_id]
            expected = {
                doc: compare(_answer(question, DATA.corpus[doc]), [references[query_id]])
                for doc in dict.fromkeys(ranking[:4])
            }
            assert dict(labels.qrels[query_id]) == expected
        assert labels.provenance["metric"] == metric and labels.provenance["k"] == 4
    # "in Hanoi" against "Hanoi": F1 2/3, no exact match
    assert token_f1("in Hanoi", ["Hanoi"]) == pytest.approx(2 / 3)
    assert exact_match("in Hanoi", ["Hanoi"]) == 0 and normalize_answer("The Hanoi.") == "hanoi"


def test_cached_budgeted_and_resumed_exactly(tmp_path: Path) -> None:
    run, references, cache = _run(), _references(), tmp_path / "u.sqlite"
    calls: list[str] = []

    def counted(question: str, passage: str) -> str:
        calls.append(question)
        return _answer(question, passage)

    options = {"answer": counted, "references": references, "k": 3, "model_id": "g", "cache": cache}
    with pytest.warns(UngradedPairsWarning, match="left by the budget"):
        first = goldset.utility_qrels(
            DATA, run, None, limits=goldset.Limits(max_calls=10), **options
        )
    assert len(calls) == 10 and len(first.remaining) == 36 - 10
    second = goldset.utility_qrels(DATA, run, None, **options)
    assert len(calls) == 36 and second.usage.cache_hits == 10  # only the rest asked
    whole = goldset.utility_qrels(DATA, run, None, **{**options, "cache": None, "answer": _answer})
    assert second.qrels == whole.qrels
    goldset.utility_qrels(DATA, run, None, **options)
    assert len(calls) == 36  # everything cached: no call
    other = goldset.utility_qrels(DATA, run, None, **{**options, "model_id": "another"})
    assert len(calls) == 72 and other.qrels == whole.qrels  # another generator: asked again


def test_an_async_generator_and_a_notebooks_running_loop() -> None:
    async def answer(question: str, passage: str) -> str:
        await asyncio.sleep(0)
        return _answer(question, passage)

    async def inside_a_loop() -> goldset.UtilityLabels:
        return goldset.utility_qrels(
            DATA, _run(), None, answer=answer, references=_references(), k=2, model_id="a",
            cache=None,
        )  # fmt: skip

    labels = asyncio.run(inside_a_loop())
    assert len(labels.qrels) == 12


def test_what_cannot_be_labelled_is_refused_or_reported() -> None:
    run, references = _run(), _references()

    def call(**changed: object) -> goldset.UtilityLabels:
        options: dict = {"answer": _answer, "references": references, "model_id": "g",
                         "cache": None, **changed}  # fmt: skip
        return goldset.utility_qrels(DATA, run, None, **options)

    with pytest.raises(InvalidParameterError, match="model_id"):
        call(model_id=None)
    with pytest.raises(InvalidParameterError, match="metric"):
        call(metric="bleu")
    with pytest.raises(InvalidParameterError, match="k must"):
        call(k=0)
    with pytest.raises(InvalidParameterError, match="returned a int"):
        call(answer=lambda q, p: 3)
    with pytest.raises(InvalidParameterError, match="references of query"):
        call(references={"q0": []})
    with pytest.raises(InvalidParameterError, match="no passage text"):
        goldset.utility_qrels(DATA.queries, {"q0": ["nowhere"]}, DATA.corpus, answer=_answer,
                              references=references, model_id="g", cache=None)  # fmt: skip
    with pytest.warns(UngradedPairsWarning, match="no question or no reference"):
        labels = call(references={q: r for q, r in references.items() if q != "q0"})
    assert labels.skipped_queries == ["q0"]


def test_tracking_orders_systems_as_their_answers_do() -> None:
    """Four retrievers of growing quality: recall over utility labels and the end-to-end
    exact match (the generator given the top 2 passages) order them alike."""
    references = _references()
    metric, quality = {}, {}
    for name, noise in (("best", 0), ("good", 1), ("fair", 3), ("poor", 5)):
        run = _run(seed=7, depth=noise + 2)
        labels = goldset.utility_qrels(DATA, run, None, answer=_answer, references=references,
                                       k=10, model_id="g", cache=None)  # fmt: skip
        result = rm.evaluate(labels.qrels, run, ["recall@2"], missing="skip")
        metric[name] = {q: v["recall@2"] for q, v in result.per_query.items()}
        quality[name] = {
            q: float(any(exact_match(_answer(DATA.queries[q], DATA.corpus[d]), [references[q]])
                         for d in run[q][:2]))
            for q in run
        }  # fmt: skip
    found = goldset.tracking(metric, quality, n_boot=500)
    assert found.n_systems == 4 and found.n_queries == 12
    assert -1 <= found.low <= found.tau <= found.high <= 1
    # here recall@2 over utility labels is exactly "a top-2 passage lets the generator
    # answer", which is the end-to-end exact match: the orders agree completely
    assert found.tau == 1.0
    with pytest.raises(InvalidParameterError, match="three or more systems"):
        goldset.tracking({"a": {}, "b": {}}, {"a": {}, "b": {}})
    with pytest.raises(InvalidParameterError, match="a number is needed"):
        goldset.tracking(
            {s: {"q": "x", "r": 1} for s in "abc"}, {s: {"q": 1, "r": 1} for s in "abc"}
        )
    perfect = goldset.tracking(
        {s: {"q1": v, "q2": v} for s, v in zip("abc", (3, 2, 1), strict=True)},
        {s: {"q1": v, "q2": v} for s, v in zip("abc", (0.9, 0.5, 0.1), strict=True)},
        n_boot=100,
    )
    assert (perfect.tau, perfect.low, perfect.high) == (1.0, 1.0, 1.0)
    assert not math.isnan(found.tau)
