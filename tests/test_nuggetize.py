"""Nuggets from the user's LLM (goldset.make_nuggets, goldset.support_nuggets): what the
model is asked, how its replies are read, the cache, budget and exact resume, agreement
with people, and the nugget metrics on what it made. The model is a deterministic stand-in
that reads the prompt: it lists each passage's sentences as facts (the first vital) and
says a passage supports a fact when the passage holds the fact's words."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import ragmetrics as rm
from ragmetrics import goldset
from ragmetrics.datasets import people
from ragmetrics.errors import InvalidParameterError, UngradedPairsWarning

DATA = people()


def stand_in(prompt: str) -> str:
    """A model that follows the two prompts."""
    if "must contain" in prompt:
        material = prompt.split("reference answers):\n", 1)[1].split("\n\nWrite each fact")[0]
        sentences = [
            s.strip()
            for s in re.split(
                r"(?<=\.)\s+", re.sub(r"\[\d+\] |^- ", "", material, flags=re.MULTILINE)
            )
            if s.strip()
        ]
        return "\n".join(
            f"{'vital' if i == 0 else 'okay'}: {s.rstrip('.')}" for i, s in enumerate(sentences[:3])
        )
    fact = prompt.split("Fact: ", 1)[1].split("\n", 1)[0]
    passage = prompt.split("Passage:\n", 1)[1].split("\n\nReply with", 1)[0]
    return "yes" if fact.lower() in passage.lower() else "no"


def _questions(n: int = 8) -> dict[str, str]:
    return dict(list(DATA.queries.items())[:n])


def test_facts_are_listed_from_the_graded_evidence_then_supported(tmp_path: Path) -> None:
    cache = tmp_path / "n.sqlite"
    made = goldset.make_nuggets(
        _questions(), stand_in, evidence=DATA.qrels, passages=DATA.corpus, min_grade=1,
        model_id="stand-in", cache=cache,
    )  # fmt: skip
    assert made.nuggets.query_ids == tuple(sorted(_questions()))
    first = made.nuggets["q0"]
    passage = DATA.corpus[next(iter(DATA.qrels["q0"]))]
    assert [n.text for n in first.values()] == [s.strip().rstrip(".") for s in passage.split(". ")]
    assert [n.vital for n in first.values()] == [True, False]
    assert all(not n.support for n in first.values())  # support is labelled next
    run = {q: [next(iter(DATA.qrels[q])), "doc40", "doc41"] for q in _questions()}
    supported = goldset.support_nuggets(
        made, run, DATA.corpus, stand_in, questions=DATA.queries, k=3, model_id="stand-in",
        cache=cache,
    )  # fmt: skip
    for query_id, of_query in supported.nuggets.items():
        for nugget_id, nugget in of_query.items():
            expected = [d for d in run[query_id] if nugget.text.lower() in DATA.corpus[d].lower()]
            assert list(nugget.support) == expected, (query_id, nugget_id)
            for doc in run[query_id]:
                assert supported.labels[(query_id, nugget_id, doc)] == (doc in expected)
    # the nugget metrics read what was made: the relevant doc at rank 1 finds every nugget
    result = rm.evaluate(DATA.qrels, run, ["nugget_recall@1", "sufficiency@1"],
                         nuggets=supported.nuggets, missing="skip")  # fmt: skip
    assert result.aggregate == {"nugget_recall@1": 1.0, "sufficiency@1": 1.0}
    assert supported.provenance["prompt_version"] == "support-1"


def test_from_reference_answers_and_unreadable_replies(tmp_path: Path) -> None:
    refs = {"q0": "Alran lives in Hanoi. Alran eats honey.", "q1": ["Allex lives in Lyon."]}
    made = goldset.make_nuggets(_questions(2), stand_in, references=refs, model_id="s",
                                cache=None)  # fmt: skip
    assert [n.text for n in made.nuggets["q0"].values()] == [
        "Alran lives in Hanoi",
        "Alran eats honey",
    ]
    calls: list[str] = []

    def chatty(prompt: str) -> str:
        calls.append(prompt)
        return "Sure! Here are some thoughts about the question."

    with pytest.warns(UngradedPairsWarning, match="unread after re-asks"):
        lost = goldset.make_nuggets(_questions(2), chatty, references=refs, model_id="c",
                                    cache=None)  # fmt: skip
    assert len(lost.unread) == 2 and len(lost.nuggets) == 0
    assert len(calls) == 2 * 3  # the question, then two re-asks each: never guessed
    assert sum("held no line" in c for c in calls) == 2 * 2  # the re-asks, as written


def test_cached_budgeted_and_resumed_exactly(tmp_path: Path) -> None:
    cache = tmp_path / "n.sqlite"
    made = goldset.make_nuggets(_questions(), stand_in, evidence=DATA.qrels,
                                passages=DATA.corpus, min_grade=1, model_id="s", cache=cache)  # fmt: skip
    run = {q: list(DATA.corpus)[:4] for q in _questions()}
    calls: list[str] = []

    def counted(prompt: str) -> str:
        calls.append(prompt)
        return stand_in(prompt)

    options = {"questions": DATA.queries, "k": 4, "model_id": "s", "cache": cache}
    with pytest.warns(UngradedPairsWarning, match="left by the budget"):
        part = goldset.support_nuggets(made, run, DATA.corpus, counted,
                                       limits=goldset.Limits(max_calls=7), **options)  # fmt: skip
    assert len(calls) == 7 and len(part.remaining) == len(part.labels) + len(part.remaining) - 7
    rest = goldset.support_nuggets(made, run, DATA.corpus, counted, **options)
    whole = goldset.support_nuggets(made, run, DATA.corpus, stand_in, **{**options, "cache": None})
    assert rest.nuggets == whole.nuggets and rest.labels == whole.labels
    assert len(calls) == len(whole.labels)  # every question asked exactly once over both runs
    goldset.support_nuggets(made, run, DATA.corpus, counted, **options)
    assert len(calls) == len(whole.labels)  # all cached


def test_agreement_with_people_on_a_sample() -> None:
    llm = {("q", "n1", "a"): True, ("q", "n1", "b"): False, ("q", "n2", "a"): True,
           ("q", "n2", "b"): False, ("q", "n3", "c"): True}  # fmt: skip
    human = {("q", "n1", "a"): True, ("q", "n1", "b"): False, ("q", "n2", "a"): False,
             ("q", "n2", "b"): False, ("q", "x", "y"): True}  # fmt: skip
    found = goldset.support_agreement(llm, human)
    # 4 shared; 3 alike; llm yes 2/4, human yes 1/4; kappa = (0.75 - 0.5) / 0.5
    assert (found.n, found.agreement, found.llm_yes, found.human_yes) == (4, 0.75, 0.5, 0.25)
    assert found.kappa == pytest.approx(0.5)
    with pytest.raises(InvalidParameterError, match="two or more"):
        goldset.support_agreement(llm, {("q", "n1", "a"): True})
    with pytest.raises(InvalidParameterError, match="True or False"):
        goldset.support_agreement(llm, {("q", "n1", "a"): 1, ("q", "n1", "b"): 0})


def test_what_cannot_be_asked_is_refused() -> None:
    with pytest.raises(InvalidParameterError, match=r"graded evidence .* or its reference"):
        goldset.make_nuggets({"q": "who?"}, stand_in, model_id="s", cache=None)
    with pytest.raises(InvalidParameterError, match="model_id"):
        goldset.make_nuggets({"q": "who?"}, stand_in, references={"q": "x"}, cache=None)
    with pytest.raises(InvalidParameterError, match="has no passage text"):
        goldset.make_nuggets({"q0": "who?"}, stand_in, evidence={"q0": {"nowhere": 5}},
                             passages={}, model_id="s", cache=None)  # fmt: skip
    with pytest.raises(InvalidParameterError, match="max_nuggets"):
        goldset.make_nuggets({"q": "who?"}, stand_in, references={"q": "x"}, max_nuggets=0,
                             model_id="s", cache=None)  # fmt: skip
    nuggets = {"q": {"n": {"text": "t", "vital": True, "support": []}}}
    with pytest.raises(InvalidParameterError, match="no passage text"):
        goldset.support_nuggets(nuggets, {"q": ["d"]}, {}, stand_in, model_id="s", cache=None)
    with pytest.raises(InvalidParameterError, match="pairs is a run"):
        goldset.support_nuggets(nuggets, [("q",)], {}, stand_in, model_id="s", cache=None)
    assert goldset.parse_nuggets(None) == [] and goldset.parse_support(3) is None
