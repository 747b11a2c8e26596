"""Where nuggets are found (``engine._nuggets.locate_nuggets``), against a plain walk down
each ranking, on runs of every store form (strings from dicts, bytes from TREC files,
ranked lists), with queries that lack nuggets or rankings, shared supporting docs, ties,
cut depths and both score precisions."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragmetrics as rm
from ragmetrics.data._nuggets import Nuggets
from ragmetrics.engine import _nuggets
from ragmetrics.engine._nuggets import locate_nuggets


def _walk(nuggets: Nuggets, ranking: list[str], depth: int | None) -> list[tuple[float, bool]]:
    """Each nugget's first rank (inf: not within depth) and its flag, one ranking at a time."""
    top = ranking if depth is None else ranking[:depth]
    out = []
    for nugget in nuggets.values():
        ranks = [rank for rank, doc in enumerate(top) if doc in nugget.support]
        out.append((float(min(ranks)) if ranks else math.inf, nugget.vital))
    return out


def _case(seed: int) -> tuple[dict[str, dict[str, float]], dict[str, Any]]:
    rng = random.Random(seed)
    corpus = [f"doc-{rng.randrange(10**7)}" for _ in range(60)]
    run: dict[str, dict[str, float]] = {}
    nuggets: dict[str, Any] = {}
    for q in range(rng.randint(1, 40)):
        qid = f"q{q}"
        if rng.random() < 0.9:  # some queries have no ranking
            ranked = rng.sample(corpus, rng.randint(0, 40))
            run[qid] = {d: float(rng.randint(0, 5)) for d in ranked}  # many ties
        if rng.random() < 0.8:  # some have no nuggets
            nuggets[qid] = {
                f"n{i}": {
                    "text": "t",
                    "vital": rng.random() < 0.5,
                    # shared docs, docs of no ranking, empty supports
                    "support": rng.sample([*corpus[:20], "nowhere"], rng.randint(0, 4)),
                }
                for i in range(rng.randint(0, 7))
            }
    if not run:
        run["q0"] = {"d": 1.0}
    return run, nuggets


def _runs(run: dict[str, dict[str, float]], tmp_path: Path) -> dict[str, rm.Run]:
    path = tmp_path / "run.txt"
    path.write_text(
        "".join(f"{q} Q0 {d} 0 {s} r\n" for q, docs in run.items() for d, s in docs.items())
    )
    ordered = rm.Run.from_dict(run)
    return {
        "strings": ordered,
        "bytes": rm.Run.from_trec(path),
        "lists": rm.Run.from_lists({q: list(ordered[q]) for q in ordered.query_ids}),
    }


@pytest.mark.parametrize(
    ("few", "laid_out"),
    [(10**9, True), (0, False), (0, True)],
    ids=["every row at once", "the queries' rows alone", "the queries' rows of every row"],
)
@pytest.mark.parametrize("seed", range(30))
def test_nuggets_are_found_where_a_walk_finds_them(
    seed: int, few: int, laid_out: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every way to the nugget rows: every row, with the unevaluated ones left out; or only
    # the evaluated queries' rows (chosen when they are few), laid out for them alone, or
    # looked up among every query's, when those are laid out already
    monkeypatch.setattr(_nuggets, "_FEW", few)
    run, given = _case(seed)
    nuggets = Nuggets.from_dict(given)
    if laid_out:
        nuggets.support()
    rng = random.Random(seed)
    # the evaluated queries: some of the run's and the nuggets', some of neither, any order
    pool = sorted({*run, *given, "absent"})
    query_ids = rng.sample(pool, rng.randint(1, len(pool)))
    depth = rng.choice([None, 1, 3, 10])
    for form, stored in _runs(run, tmp_path).items():
        for precision in ("float64", "float32"):
            rows = np.array([stored.query_ids.index(q) if q in stored else -1 for q in query_ids])
            hits = locate_nuggets(
                nuggets, stored, query_ids, rows, depth=depth, score_precision=precision
            )
            rankings = stored.rankings(score_precision=precision)
            for row, query_id in enumerate(query_ids):
                ranking = list(rankings[rows[row]]) if rows[row] >= 0 else []
                expected = _walk(nuggets[query_id], ranking, depth) if query_id in given else []
                count = len(expected)
                assert hits.counts[row] == count, (form, query_id)
                assert hits.first[row, :count].tolist() == [f for f, _ in expected], (
                    form,
                    query_id,
                )
                assert hits.vital[row, :count].tolist() == [v for _, v in expected]
                assert np.isinf(hits.first[row, count:]).all() and not hits.vital[row, count:].any()


def test_the_support_table_is_made_once_and_names_each_doc_once() -> None:
    nuggets = Nuggets.from_dict(
        {
            "q1": {
                "a": {"text": "t", "vital": True, "support": ["d1", "d2"]},
                "b": {"text": "t", "vital": False, "support": ["d2", "d3"]},
            },
            "q2": {},
            "q3": {"c": {"text": "t", "vital": True, "support": ["d2"]}},
        }
    )
    table = nuggets.support()
    assert table is nuggets.support()
    assert table.docs.query_ids == ("q1", "q3")
    assert table.docs.tuples() == [("d1", "d2", "d3"), ("d2",)]
    assert table.counts.tolist() == [2, 1] and table.vital.tolist() == [True, False, True]
    # d2 of q1 (flat doc 1) supports nuggets 0 and 1; d2 of q3 (flat doc 3) nugget 0
    pairs = [
        table.pair_nuggets[start : start + size].tolist()
        for start, size in zip(table.starts, table.sizes, strict=True)
    ]
    assert pairs == [[0], [0, 1], [1], [0]]
    assert nuggets.n_nuggets == 3 and nuggets.n_vital == 2


def test_nuggets_supported_by_ids_bytes_cannot_hold_are_found() -> None:
    # a NUL, a newline, a lone surrogate, a very long id: the strings' path finds them
    ids = ["a\x00b", "line\nbreak", "é", "\ud800x", " ", "x" * 3000, "d"]
    run = {"q": {doc: float(score) for score, doc in enumerate(ids)}}
    given = {
        "q": {f"n{i}": {"text": "t", "vital": True, "support": [d]} for i, d in enumerate(ids)}
    }
    names = ["nugget_recall@3", "nugget_recall@7", "sufficient_k"]
    result = rm.evaluate({"q": {"d": 1}}, run, names, nuggets=given)
    assert result.per_query["q"] == {
        "nugget_recall@3": 3 / 7,
        "nugget_recall@7": 1.0,
        "sufficient_k": 7.0,
    }
