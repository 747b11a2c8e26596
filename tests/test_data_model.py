"""Qrels, Run and RetrievalDataset: construction, order, round-trips and counting."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ragmetrics as rm
from ragmetrics.data._store import store_of
from tests.conftest import shared_file


def test_run_orders_by_score_then_doc_id_descending() -> None:
    run = rm.Run.from_dict({"q": {"a": 0.5, "b": 0.9, "c": 0.5, "d": 0.1}})
    assert run["q"] == ("b", "c", "a", "d")
    assert run.scores("q") == (0.9, 0.5, 0.5, 0.1)


def test_from_lists_keeps_the_given_order() -> None:
    run = rm.Run.from_lists({"q": ["z", "a", "m"]})
    assert run["q"] == ("z", "a", "m")
    assert run.scores("q") is None
    assert not run.is_scored


def test_repeated_ids_keep_first_position_and_are_counted() -> None:
    run = rm.Run.from_lists({"q": ["a", "b", "a", "c", "b"], "r": ["x"]})
    assert run["q"] == ("a", "b", "c")
    assert run.duplicates == {"q": 2}
    result = rm.evaluate({"q": {"c": 1}}, run, ["mrr"])
    assert result.aggregate["mrr"] == pytest.approx(1 / 3)
    assert result.counts.repeated_ids_dropped == 2


def test_repeated_ids_in_a_scored_file_keep_the_best_ranked_copy(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("q Q0 a 1 0.2 t\nq Q0 b 2 0.5 t\nq Q0 a 3 0.9 t\n")
    run = rm.Run.from_trec(path)
    assert run["q"] == ("a", "b")
    assert run.duplicates == {"q": 1}


def test_queries_split_across_a_file_are_regrouped(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 a 1 0.2 t\nq2 Q0 b 1 0.5 t\nq1 Q0 c 2 0.9 t\n")
    run = rm.Run.from_trec(path)
    assert run.query_ids == ("q1", "q2")
    assert run["q1"] == ("c", "a")


def test_immutability() -> None:
    qrels = rm.Qrels.from_dict({"q": {"a": 1}})
    with pytest.raises(TypeError):
        qrels["q"]["a"] = 2  # type: ignore[index]
    run = rm.Run.from_lists({"q": ["a"]})
    with pytest.raises(TypeError):
        run["q"][0] = "b"  # type: ignore[index]
    source = {"q": {"a": 1}}
    copied = rm.Qrels.from_dict(source)
    source["q"]["a"] = 5
    assert copied["q"]["a"] == 1


def test_len_ids_and_repr() -> None:
    qrels = rm.Qrels.from_dict({"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1}})
    run = rm.Run.from_dict({"q1": {"d1": 0.9}}, name="bm25")
    assert len(qrels) == 2 and qrels.query_ids == ("q1", "q2")
    assert repr(qrels) == "Qrels(2 queries, 3 judgments)"
    assert repr(run) == "Run('bm25', 1 queries, 1 results, scored)"


@pytest.mark.parametrize("kind", ["trec", "json"])
def test_round_trips(tmp_path: Path, kind: str) -> None:
    qrels = rm.Qrels.from_dict({"q1": {"d1": 2, "d2": 0, "d3": -1}, "q2": {"d4": 1}})
    run = rm.Run.from_dict({"q1": {"d1": 0.25, "d9": 0.75}, "q2": {"d4": 1.0, "d5": 1.0}})
    qpath, rpath = tmp_path / f"qrels.{kind}", tmp_path / f"run.{kind}"
    getattr(qrels, f"to_{kind}")(qpath)
    getattr(run, f"to_{kind}")(rpath)
    assert getattr(rm.Qrels, f"from_{kind}")(qpath) == qrels
    assert getattr(rm.Run, f"from_{kind}")(rpath).to_lists() == run.to_lists()


def test_jsonl_records(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    rows = [
        {"query_id": "q", "doc_id": "a", "score": 0.1},
        {"query_id": "q", "doc_id": "b", "score": 0.7},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows))
    assert rm.Run.from_json(path)["q"] == ("b", "a")
    qpath = tmp_path / "qrels.jsonl"
    qpath.write_text(json.dumps({"qid": "q", "docid": "a", "relevance": 2}) + "\n")
    assert rm.Qrels.from_json(qpath)["q"] == {"a": 2}


def test_pandas_round_trip() -> None:
    run = rm.Run.from_dict({"q1": {"a": 0.5, "b": 0.7}, "q2": {"c": 0.1}})
    frame = run.to_pandas()
    assert list(frame.columns) == ["query_id", "doc_id", "rank", "score"]
    assert rm.Run.from_pandas(frame) == run
    qrels = rm.Qrels.from_dict({"q1": {"a": 1}})
    assert rm.Qrels.from_pandas(qrels.to_pandas()) == qrels
    unscored = rm.Run.from_pandas(
        pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["y", "x"]}), score_col=None
    )
    assert unscored["q"] == ("y", "x")


def test_pandas_missing_column_names_the_fix() -> None:
    with pytest.raises(
        rm.InputFormatError, match=r"lacks the column\(s\) 'score'.*\*_col keywords"
    ):
        rm.Run.from_pandas(pd.DataFrame({"query_id": ["q"], "doc_id": ["a"]}))


def test_trec_file_with_comments_and_blank_lines() -> None:
    with_comments = rm.Qrels.from_trec(shared_file("trec_eval", "qrels.test.with-comments"))
    plain = rm.Qrels.from_trec(shared_file("trec_eval", "qrels.test"))
    assert with_comments.n_judgments >= plain.n_judgments - 1
    assert "CR#93E-1860" in with_comments["301"]  # a '#' inside a doc id is not a comment


def test_dataset_round_trip_and_legacy_json(tmp_path: Path) -> None:
    dataset = rm.RetrievalDataset(
        queries={"q1": "who wrote it?", "q2": "when?"},
        corpus={"d1": "text one", "d2": "text two"},
        relevant_docs={"q1": {"d1": 3}, "q2": ["d2"]},
    )
    assert dataset.qrels["q1"] == {"d1": 3} and dataset.qrels["q2"] == {"d2": 1}
    path = tmp_path / "ds.json"
    dataset.to_json(path)
    assert rm.RetrievalDataset.from_json(path) == dataset
    legacy = tmp_path / "legacy.json"
    legacy.write_text(
        json.dumps(
            {
                "queries": {"q": "x?"},
                "corpus": {"n1": "a", "n2": "b"},
                "relevant_docs": {"q": ["n2"]},
                "mode": "text",
            }
        )
    )
    loaded = rm.RetrievalDataset.from_json(legacy)
    assert loaded.qrels["q"] == {"n2": 1} and loaded.mode == "text"


def test_dataset_rejects_unknown_relevant_doc() -> None:
    with pytest.raises(
        ValueError, match=r"relevant_docs names docs that are not in the corpus: \['d9'\]"
    ):
        rm.RetrievalDataset(
            queries={"q": "x"}, corpus={"d1": "t"}, relevant_docs={"q": ["d1", "d9"]}
        )


def test_counts_report_what_was_left_out() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    run = {"q1": {"a": 1.0}, "q3": {}, "extra": {"z": 1.0}}
    zero = rm.evaluate(qrels, run, ["mrr"])
    assert zero.counts.queries == 3 and zero.counts.missing_from_run == 1
    assert zero.counts.not_judged == 1 and zero.counts.empty_rankings == 1
    assert zero.missing_query_ids == ("q2",) and zero.unjudged_query_ids == ("extra",)
    assert zero.aggregate["mrr"] == pytest.approx(1 / 3)
    skip = rm.evaluate(qrels, run, ["mrr"], missing="skip")
    assert skip.counts.queries == 2 and skip.aggregate["mrr"] == pytest.approx(1 / 2)
    assert "1 judged but missing from the run (scored 0)" in zero.to_markdown()


@pytest.mark.parametrize("order", ["same", "shuffled"])
def test_counts_with_empty_judgments_and_any_query_order(order: str) -> None:
    # a query with no judgment is not judged, even when the run ranks it; the counts do not
    # depend on whether qrels and run list their queries in the same order
    qrels = {"q1": {"a": 1}, "q2": {}, "q3": {"c": 1}, "q4": {"d": 2}}
    run = {"q1": {"a": 1.0}, "q2": {"b": 1.0}, "q3": {"x": 1.0}, "q4": {"d": 0.5}}
    if order == "shuffled":
        run = dict(reversed(run.items()))
    result = rm.evaluate(qrels, run, ["mrr"])
    assert result.counts.judged == 3 and result.counts.queries == 3
    assert result.unjudged_query_ids == ("q2",) and result.counts.missing_from_run == 0
    assert result.query_ids == ("q1", "q3", "q4")
    assert result.per_query == {"q1": {"mrr": 1.0}, "q3": {"mrr": 0.0}, "q4": {"mrr": 1.0}}
    skip = rm.evaluate({**qrels, "q5": {"e": 1}}, run, ["mrr"], missing="skip")
    assert skip.query_ids == ("q1", "q3", "q4") and skip.missing_query_ids == ("q5",)


def test_result_renderings() -> None:
    result = rm.evaluate(
        {"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": ["a"], "q2": ["x", "b"]}, ["mrr", "P@1"]
    )
    frame = result.to_pandas()
    assert frame.loc["q2", "mrr"] == pytest.approx(0.5)
    payload = json.loads(result.to_json())
    assert payload["aggregate"]["mrr"] == pytest.approx(0.75)
    assert payload["per_query"]["q1"]["P@1"] == 1.0
    assert "<table>" in result._repr_html_()
    assert "| mrr | 0.7500 | 2 | 0 |" in result.to_markdown()
    assert result["mrr"] == pytest.approx(0.75)
    with pytest.raises(KeyError, match=r"'ndcg' was not evaluated"):
        result["ndcg"]


def test_repeated_evaluations_reuse_the_qrels_grades_safely() -> None:
    """Each run of a comparison asks the qrels for the same grades: they are kept, read-only,
    and a different set of queries gets its own."""
    qrels = rm.Qrels.from_dict({"q1": {"a": 2, "b": 0}, "q2": {"c": 1}, "q3": {"d": 1}})
    full = rm.Run.from_dict({"q1": {"a": 0.2, "b": 0.9}, "q2": {"c": 1.0}, "q3": {"x": 1.0}})
    partial = rm.Run.from_dict({"q2": {"c": 1.0}})
    first = rm.evaluate(qrels, full, ["ndcg@2", "mrr"])
    assert rm.evaluate(qrels, full, ["ndcg@2", "mrr"]).per_query == first.per_query
    skipped = rm.evaluate(qrels, partial, ["mrr"], missing="skip")
    assert skipped.per_query == {"q2": {"mrr": 1.0}}
    assert rm.evaluate(qrels, full, ["mrr"]).aggregate["mrr"] == pytest.approx((0.5 + 1 + 0) / 3)
    store = store_of(qrels)
    for array in (store.values, store.lengths, store.subset(["q3", "q1"]).values):
        assert array is not None
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 5
    assert store.lengths.tolist() == [2, 1, 1]
    assert store.subset(["q3", "q1"]).values.tolist() == [1, 2, 0]


def test_run_lengths_are_read_only(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 a 1 0.5 t\nq1 Q0 b 2 0.4 t\n")
    for run in (rm.Run.from_dict({"q1": {"a": 0.5}}), rm.Run.from_trec(path)):
        with pytest.raises(ValueError, match="read-only"):
            run.lengths[0] = 5


def test_n_positive_counts_grades_above_zero() -> None:
    qrels = rm.Qrels.from_dict({"q1": {"a": 2, "b": 0, "c": -1}, "q2": {"d": 1}, "q3": {"e": 0}})
    assert qrels.n_positive == 2
    assert rm.Qrels.from_dict({"q": {"a": 0.25, "b": 0.0}}).n_positive == 1


@pytest.mark.parametrize("seed", range(12))
def test_grade_values_are_the_distinct_grades_ascending(seed: int) -> None:
    rng = np.random.default_rng(seed)
    low, span = int(rng.integers(-5, 3)), int(rng.choice([0, 1, 4, 30, 10**6]))
    grades = rng.integers(low, low + span + 1, size=int(rng.integers(1, 60)))
    qrels = rm.Qrels({"q": {f"d{i}": int(g) for i, g in enumerate(grades)}})
    found = qrels.grade_values()
    assert found.dtype == np.unique(grades).dtype
    assert found.tolist() == np.unique(grades).tolist()
    real = rm.Qrels({"q": {"a": 0.5, "b": 2.0, "c": 0.5}})
    assert real.grade_values().tolist() == [0.5, 2.0]


@pytest.mark.parametrize("depth", [1, 3, 7, 40])
def test_truncate_keeps_each_rankings_best_in_every_store_form(depth: int, tmp_path: Path) -> None:
    """``Run.truncate`` on a run of strings (sliced row by row), of bytes (read from TREC)
    and of ranked lists: each ranking's first ``depth`` docs and their scores, ties in
    trec_eval's order, as a walk down the full rankings gives them."""
    import random

    rng = random.Random(depth)  # rankings of 0 to 12 docs, ties among them
    scored = {
        f"q{i}": {
            f"d{rng.randrange(60)}": float(rng.randint(0, 3)) for _ in range(rng.randint(0, 12))
        }
        for i in range(30)
    }
    from_dict = rm.Run.from_dict(scored)
    with pytest.warns(rm.FormatLossWarning):  # the empty rankings: kept by the others
        from_dict.to_trec(tmp_path / "run.txt")
    lists = rm.Run.from_lists({q: list(from_dict[q]) for q in from_dict.query_ids})
    # a run not yet ranked (its best found as arrays) and one ranked already (sliced)
    runs = [rm.Run.from_dict(scored), from_dict, rm.Run.from_trec(tmp_path / "run.txt"), lists]
    for run in runs:
        cut = run.truncate(depth)
        assert cut.query_ids == run.query_ids
        for query_id in run.query_ids:
            assert cut[query_id] == run[query_id][:depth]
            scores = run.scores(query_id)
            expected = None if scores is None else scores[:depth]
            assert cut.scores(query_id) == expected
        assert cut.lengths.tolist() == [min(n, depth) for n in run.lengths.tolist()]


@pytest.mark.parametrize("scored", [True, False])
def test_to_trec_writes_each_ranking_as_a_line_by_line_walk_does(
    scored: bool, tmp_path: Path
) -> None:
    """The file ``to_trec`` writes against lines written one by one from the rankings as
    read back: 5,000 queries, scores that ``repr`` writes in every form, ties, ids beyond
    ASCII, a tag holding braces."""
    import random

    rng = random.Random(11)
    odd = [0.1 + 0.2, 1e-300, -0.0, 1e16, 3.0, -2.5e-7, 123456789.123456789]
    rankings = {
        f"q{i}-é": {f"d{rng.randrange(500)}·": rng.choice(odd) for _ in range(rng.randint(1, 6))}
        for i in range(5000)
    }
    if scored:
        run = rm.Run.from_dict(rankings, name="{tag}")
    else:
        run = rm.Run.from_lists({q: list(d) for q, d in rankings.items()}, name="{tag}")
    run.to_trec(tmp_path / "run.txt")
    expected = []
    for query_id in run.query_ids:
        scores = run.scores(query_id) or tuple(float(n) for n in range(len(run[query_id]), 0, -1))
        for rank, (doc, score) in enumerate(zip(run[query_id], scores, strict=True), start=1):
            expected.append(f"{query_id} Q0 {doc} {rank} {score!r} {{tag}}\n")
    assert (tmp_path / "run.txt").read_text(encoding="utf-8") == "".join(expected)


def test_to_trec_names_the_first_id_it_cannot_write(tmp_path: Path) -> None:
    """An id a TREC file cannot hold is refused, named with its character, and nothing is
    written."""
    for bad, reason in (
        ("a b", r"U\+0020 SPACE"),
        ("x\u2028", r"U\+2028"),
        ("t\tab", r"U\+0009"),
    ):
        run = rm.Run.from_dict({"q1": {"ok": 1.0, bad: 0.5}, "q2": {"fine": 1.0}})
        with pytest.raises(rm.InputFormatError, match=reason):
            run.to_trec(tmp_path / "run.txt")
        assert not (tmp_path / "run.txt").exists()
