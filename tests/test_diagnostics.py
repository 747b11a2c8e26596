"""trec_eval's relevance strings (``relstring.k``) from the Python API."""

from __future__ import annotations

import pytest

import ragmetrics as rm
from ragmetrics.engine._diagnostics import relevance_strings


def test_relevance_strings_as_trec_eval_prints_them() -> None:
    qrels = {"q1": {"a": 3, "b": 0, "c": -2, "d": 10}, "q2": {"x": 1}, "q3": {"y": 1}}
    run = {"q1": {"a": 0.1, "b": 0.9, "z": 0.5, "c": 0.5, "d": 0.2}, "q2": {"w": 1.0}}
    # b, then the tie z/c broken by doc id down (z first), then d, a
    assert relevance_strings(qrels, run) == {"q1": "0-.>3", "q2": "-", "q3": ""}
    assert relevance_strings(qrels, run, 2) == {"q1": "0-", "q2": "-", "q3": ""}
    assert relevance_strings(qrels, run, 0)["q1"] == ""
    assert relevance_strings(qrels, run, query_ids=["q2", "nope"]) == {"q2": "-", "nope": ""}
    lists = {"q1": ["d", "a", "e"]}
    assert relevance_strings(rm.Qrels.from_dict(qrels), lists) == {"q1": ">3-", "q2": "", "q3": ""}
    real = rm.Qrels.from_dict({"q": {"a": 2.7, "b": -0.5}})  # read as trec_eval reads them
    assert relevance_strings(real, {"q": ["a", "b"]}) == {"q": "20"}
    for bad in (-1, 2.5, True):
        with pytest.raises(rm.InvalidParameterError, match="k must be"):
            relevance_strings(qrels, run, bad)  # type: ignore[arg-type]
