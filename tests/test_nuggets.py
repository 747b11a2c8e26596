"""Nuggets as data and the nugget metrics (docs/metrics.md, "Nugget metrics").

The metrics are checked against a direct reading of their definitions (written here, query
by query, without the library's arrays) on random runs with ties and repeats and random
nuggets (vital and okay, unsupported, supported by unjudged docs); on the worked example of
the docs; across every entry point (evaluate, compare, the stream with workers, the command
line); and on LoCoMo, whose questions name the dialogue turns that hold their evidence.
"""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import ragmetrics as rm
from ragmetrics.errors import InputFormatError, InvalidParameterError

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo10.json"
NAMES = [
    "nugget_recall@1", "nugget_recall@5", "vital_recall@3", "weighted_nugget_recall@5",
    "sufficiency@2", "sufficiency@10", "sufficient_k",
]  # fmt: skip


# --- the definitions, read directly --------------------------------------------------------


def _direct(nuggets: dict[str, Any], ranking: list[str], name: str) -> float | None:
    """One metric of one query from its definition: the ranking as given (best first)."""
    if not nuggets:
        return None
    base, _, k_text = name.partition("@")
    depth = int(k_text) if k_text else len(ranking)
    top = ranking[:depth]

    def found(nugget: dict[str, Any]) -> bool:
        return any(doc in top for doc in nugget["support"])

    every = list(nuggets.values())
    vital = [n for n in every if n["vital"]]
    needed = vital or every
    if base == "nugget_recall":
        return sum(map(found, every)) / len(every)
    if base == "vital_recall":
        return sum(map(found, vital)) / len(vital) if vital else None
    if base == "weighted_nugget_recall":
        weight = {True: 1.0, False: 0.5}
        return sum(weight[n["vital"]] for n in every if found(n)) / sum(
            weight[n["vital"]] for n in every
        )
    if base == "sufficiency":
        return 1.0 if all(map(found, needed)) else 0.0
    assert base == "sufficient_k"
    for k in range(1, len(ranking) + 1):
        if all(any(d in ranking[:k] for d in n["support"]) for n in needed):
            return float(k)
    return None


def _random_case(seed: int, shortest: int = 0) -> tuple[dict, dict, dict]:
    rng = random.Random(seed)
    qrels, run, nuggets = {}, {}, {}
    for q in range(30):
        docs = [f"d{rng.randrange(10**6)}" for _ in range(rng.randint(1, 25))]
        qrels[f"q{q}"] = {d: rng.randint(0, 3) for d in rng.sample(docs, rng.randint(1, len(docs)))}
        # scores with ties, a repeated doc now and then
        ranked = [rng.choice([*docs, "x1", "x2"]) for _ in range(rng.randint(shortest, 30))]
        run[f"q{q}"] = {d: float(rng.randint(0, 6)) for d in ranked}
        if q % 7 == 0:
            continue  # a judged query without nuggets: NA
        nuggets[f"q{q}"] = {
            f"n{i}": {
                "text": f"fact {i}",
                "vital": rng.random() < 0.4,
                "support": rng.sample([*docs, "x1", "never"], rng.randint(0, 3)),
            }
            for i in range(rng.randint(1, 6))
        }
    nuggets["not judged"] = {"n": {"text": "t", "vital": True, "support": ["d1"]}}
    return qrels, run, nuggets


@pytest.mark.parametrize("seed", range(4))
def test_every_nugget_metric_equals_its_definition(seed: int) -> None:
    qrels, run, nuggets = _random_case(seed)
    result = rm.evaluate(qrels, run, NAMES, nuggets=nuggets)
    ordered = rm.Run.from_dict(run)  # the run's own order: score, then doc id descending
    for query_id in qrels:
        ranking = list(ordered[query_id]) if query_id in ordered else []
        for name in NAMES:
            expected = _direct(nuggets.get(query_id, {}), ranking, name)
            assert result.per_query[query_id][name] == expected, (query_id, name)
    assert result.counts.na["nugget_recall@1"] == sum(1 for q in qrels if q not in nuggets)


def test_the_worked_example_of_the_docs() -> None:
    nuggets = {
        "q": {
            "a": {"text": "A", "vital": True, "support": ["d1", "d9"]},
            "b": {"text": "B", "vital": False, "support": ["d3"]},
            "c": {"text": "C", "vital": True, "support": []},
        }
    }
    run = {"q": ["d3", "d2", "d1"]}
    names = ["nugget_recall@1", "nugget_recall@3", "vital_recall@3", "weighted_nugget_recall@3",
             "sufficiency@3", "sufficient_k"]  # fmt: skip
    values = rm.evaluate({"q": {"d1": 1}}, run, names, nuggets=nuggets).per_query["q"]
    assert values == {
        "nugget_recall@1": 1 / 3, "nugget_recall@3": 2 / 3, "vital_recall@3": 0.5,
        "weighted_nugget_recall@3": 0.6, "sufficiency@3": 0.0, "sufficient_k": None,
    }  # fmt: skip
    del nuggets["q"]["c"]
    values = rm.evaluate({"q": {"d1": 1}}, run, ["sufficiency@2", "sufficiency@3", "sufficient_k"],
                         nuggets=nuggets).per_query["q"]  # fmt: skip
    assert values == {"sufficiency@2": 0.0, "sufficiency@3": 1.0, "sufficient_k": 3.0}


def test_every_entry_point_gives_the_same_numbers(tmp_path: Path) -> None:
    qrels, run, nuggets = _random_case(9, shortest=1)  # a TREC file holds no empty ranking
    expected = rm.evaluate(qrels, run, NAMES, nuggets=nuggets)
    path = tmp_path / "run.txt"
    rm.Run.from_dict(run).to_trec(path)
    for workers in (1, 2):
        streamed = rm.evaluate_stream(
            qrels, path, NAMES, nuggets=nuggets, per_query=True, workers=workers, progress=False
        )
        assert streamed.per_query == expected.per_query
    other = {q: dict(reversed(list(d.items()))) for q, d in run.items()}
    comparison = rm.compare(qrels, {"a": run, "b": other}, NAMES[:3], nuggets=nuggets,
                            n_permutations=50)  # fmt: skip
    assert comparison.means["a"] == {n: expected.aggregate[n] for n in NAMES[:3]}
    nugget_file = tmp_path / "nuggets.jsonl"
    rm.Nuggets.from_dict(nuggets).to_jsonl(nugget_file)
    qrels_file = tmp_path / "qrels.txt"
    rm.Qrels.from_dict(qrels).to_trec(qrels_file)
    done = subprocess.run(
        [sys.executable, "-m", "ragmetrics", "evaluate", str(qrels_file), str(path),
         "-m", "nugget_recall@5", "-m", "sufficient_k", "--nuggets", str(nugget_file),
         "--format", "json"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    aggregate = json.loads(done.stdout)["aggregate"]
    assert aggregate["nugget_recall@5"] == pytest.approx(expected.aggregate["nugget_recall@5"])
    assert aggregate["sufficient_k"] == pytest.approx(expected.aggregate["sufficient_k"])


def test_nuggets_round_trip_and_refuse_what_they_cannot_read(tmp_path: Path) -> None:
    _, _, raw = _random_case(1)
    nuggets = rm.Nuggets.from_dict(raw)
    for path, write in (
        (tmp_path / "n.json", nuggets.to_json),
        (tmp_path / "n.jsonl", nuggets.to_jsonl),
    ):
        write(path)
        assert rm.Nuggets.from_json(path) == nuggets
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(raw))
    assert rm.Nuggets.from_json(plain) == nuggets
    assert repr(nuggets).startswith(f"Nuggets({len(raw)} queries")

    def refused(value: Any, match: str) -> None:
        with pytest.raises(InputFormatError, match=match):
            rm.Nuggets.from_dict(value)

    refused([], "mapping of query id")
    refused({"": {}}, "query id of the nuggets must be a non-empty string")
    refused({"q": []}, "must map nugget id")
    refused({"q": {"n": "text"}}, "must be an object")
    refused({"q": {"n": {"text": "t", "vital": "yes"}}}, "'vital' .* true or false")
    refused({"q": {"n": {"text": "t", "support": "d1"}}}, "list of doc ids")
    refused({"q": {"n": {"text": "t", "support": ["d1", ""]}}}, "supporting doc id")
    refused({"q": {"n": {"text": 3}}}, "text of the nugget")
    refused({"q": {"n": {"text": "t", "weight": 2}}}, "unknown field.*'weight'")
    twice = tmp_path / "twice.jsonl"
    twice.write_text('{"query_id": "q", "nugget_id": "n", "text": "t"}\n' * 2)
    with pytest.raises(InputFormatError, match="appears twice"):
        rm.Nuggets.from_json(twice)
    with pytest.raises(InvalidParameterError, match="pass nuggets="):
        rm.evaluate({"q": {"a": 1}}, {"q": ["a"]}, ["nugget_recall@5"])
    with pytest.raises(InvalidParameterError, match="nuggets= takes Nuggets"):
        rm.evaluate({"q": {"a": 1}}, {"q": ["a"]}, ["nugget_recall@5"], nuggets=[1])


def test_a_chunk_run_finds_a_nugget_through_its_original() -> None:
    originals = {"s1": "user: the cat sleeps\nassistant: on the mat", "s2": "user: dogs bark"}
    matcher = rm.matching.ChunkMatcher(originals) if hasattr(rm, "matching") else None
    from ragmetrics.matching import ChunkMatcher

    matcher = ChunkMatcher(originals)
    chunks = {"q": {"assistant: on the mat": 2.0, "user: dogs bark": 1.0}}
    matched = matcher.match_run(chunks)
    nuggets = {"q": {"n": {"text": "where the cat is", "vital": True, "support": ["s1"]}}}
    result = matched.evaluate(
        {"q": {"s1": 1}}, ["nugget_recall@1", "sufficient_k"], nuggets=nuggets
    )
    assert result.per_query["q"] == {"nugget_recall@1": 1.0, "sufficient_k": 1.0}


@pytest.mark.skipif(not LOCOMO.exists(), reason="needs ../shared/data/locomo (real LoCoMo data)")
def test_on_locomo_the_evidence_turns_as_nuggets_agree_with_evidence_groups() -> None:
    """LoCoMo's questions name the turns that hold their evidence. Each evidence turn made a
    vital nugget (supported by that turn), and each made an evidence group: a word-overlap
    retriever over the conversation's turns then scores the same through both code paths
    (nugget_recall = group_recall, sufficiency = recall_all), and sufficient_k says at
    which depth sufficiency turns to 1."""
    samples = json.loads(LOCOMO.read_text(encoding="utf-8"))
    qrels: dict[str, dict[str, int]] = {}
    groups: dict[str, list[list[str]]] = {}
    nuggets: dict[str, dict[str, Any]] = {}
    run: dict[str, dict[str, float]] = {}
    for sample in samples[:4]:
        name = sample["sample_id"]
        turns = {
            f"{name}:{t['dia_id']}": t["text"]
            for key, value in sample["conversation"].items()
            if key.startswith("session_") and isinstance(value, list)
            for t in value
        }
        words = {doc: set(text.lower().split()) for doc, text in turns.items()}
        for position, qa in enumerate(sample["qa"]):
            evidence = [f"{name}:{e}" for e in qa.get("evidence", []) if f"{name}:{e}" in turns]
            if not evidence:
                continue
            query_id = f"{name}:q{position}"
            qrels[query_id] = dict.fromkeys(evidence, 1)
            groups[query_id] = [[doc] for doc in dict.fromkeys(evidence)]
            nuggets[query_id] = {
                doc: {"text": turns[doc], "vital": True, "support": [doc]}
                for doc in dict.fromkeys(evidence)
            }
            asked = set(str(qa["question"]).lower().split())
            scored = {doc: float(len(asked & w)) for doc, w in words.items()}
            run[query_id] = dict(sorted(scored.items(), key=lambda x: -x[1])[:50])
    assert len(qrels) > 300
    names = [
        "nugget_recall@5",
        "nugget_recall@20",
        "sufficiency@5",
        "sufficiency@20",
        "sufficient_k",
    ]
    by_nuggets = rm.evaluate(qrels, run, names, nuggets=nuggets).per_query
    by_groups = rm.evaluate(
        rm.Qrels.from_groups(groups), run, ["group_recall@5", "group_recall@20", "recall_all@5",
                                            "recall_all@20"]
    ).per_query  # fmt: skip
    for query_id in qrels:
        got, want = by_nuggets[query_id], by_groups[query_id]
        assert got["nugget_recall@5"] == want["group_recall@5"]
        assert got["nugget_recall@20"] == want["group_recall@20"]
        assert got["sufficiency@5"] == want["recall_all@5"]
        assert got["sufficiency@20"] == want["recall_all@20"]
        k = got["sufficient_k"]
        for depth, label in ((5, "sufficiency@5"), (20, "sufficiency@20")):
            assert (got[label] == 1.0) == (k is not None and k <= depth), query_id
    assert not math.isnan(
        rm.evaluate(qrels, run, ["nugget_recall@20"], nuggets=nuggets).aggregate["nugget_recall@20"]
    )
