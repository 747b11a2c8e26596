"""Slices: metrics per segment of the queries, with intervals and per-segment tests."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

import ragmetrics as rm
from ragmetrics.analysis.stats import adjust, paired_interval
from ragmetrics.errors import InputFormatError


def _data() -> tuple[dict, dict]:
    rng = random.Random(2)
    qrels = {f"q{i}": {f"d{j}": rng.randint(0, 2) for j in range(10)} for i in range(40)}
    runs = {
        name: {
            q: {f"d{j}": rng.random() + boost * qrels[q][f"d{j}"] for j in range(10)} for q in qrels
        }
        for name, boost in (("bm25", 0.0), ("mid", 0.4), ("good", 3.0))
    }
    return qrels, runs


def test_a_result_per_segment() -> None:
    qrels, runs = _data()
    result = rm.evaluate(qrels, runs["mid"], ["ndcg@10", "P@5"])
    segments = {q: ("finance" if i % 3 else "legal") for i, q in enumerate(qrels) if i < 37}
    table = rm.by_segment(result, segments, n_bootstrap=500)
    assert table.unassigned == ("q37", "q38", "q39")
    for row in table.rows:
        members = [q for q, s in segments.items() if s == row.segment]
        values = [result.per_query[q][row.metric] for q in members]
        assert row.n == len(members) and row.na == 0
        assert row.mean == pytest.approx(float(np.mean(values)))
        assert row.ci_low <= row.mean <= row.ci_high
    assert {r.segment for r in table.rows} == {"finance", "legal"}
    assert "3 queries have no segment" in table.to_markdown()
    frame = table.to_pandas()
    assert list(frame.columns[:3]) == ["run", "segment", "metric"] and len(frame) == 4
    by_function = rm.by_segment(result, lambda q: "even" if int(q[1:]) % 2 == 0 else None)
    assert by_function.unassigned == tuple(q for q in qrels if int(q[1:]) % 2)
    with pytest.raises(InputFormatError, match="segments must map query ids"):
        rm.by_segment(result, ["finance"])  # type: ignore[arg-type]


def test_a_comparison_per_segment_tests_within_each() -> None:
    qrels, runs = _data()
    comparison = rm.compare(qrels, runs, ["ndcg@10"], baseline="bm25", n_permutations=400)
    half = {q: ("A" if i < 20 else "B") for i, q in enumerate(qrels)}
    table = comparison.by_segment(half)
    assert set(table.runs) == {"bm25", "mid", "good"}
    assert len(table.tests) == 2 * 2  # segments x pairs
    for segment in ("A", "B"):
        members = [q for q, s in half.items() if s == segment]
        family = [t for t in table.tests if t.segment == segment]
        raw = []
        for test in family:
            x = np.array([comparison.results[test.a].per_query[q]["ndcg@10"] for q in members])
            y = np.array([comparison.results[test.b].per_query[q]["ndcg@10"] for q in members])
            p, low, high = paired_interval(y, x, test="randomization", alpha=0.05, n_resamples=400)
            assert (test.p_value, test.ci_low, test.ci_high) == (p, low, high)
            assert test.diff == pytest.approx(float((y - x).mean()))
            raw.append(p)
        assert [t.p_adjusted for t in family] == adjust(raw, "holm")
    strong = [t for t in table.tests if t.b == "good"]
    assert all(t.significant for t in strong)


def test_the_command_line_prints_segments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from ragmetrics.cli._commands import main

    qrels, runs = _data()
    (tmp_path / "q.json").write_text(json.dumps(qrels))
    for name in ("bm25", "good"):
        (tmp_path / f"{name}.json").write_text(json.dumps(runs[name]))
    (tmp_path / "seg.txt").write_text(
        "# query segment\n" + "".join(f"q{i} {'A' if i < 20 else 'B'}\n" for i in range(38))
    )
    args = ["-m", "ndcg@10", "--segments", str(tmp_path / "seg.txt")]
    assert main(["evaluate", str(tmp_path / "q.json"), str(tmp_path / "good.json"), *args]) == 0
    out = capsys.readouterr().out
    assert "2 queries have no segment" in out and "A        ndcg@10  20" in out
    paths = [str(tmp_path / "bm25.json"), str(tmp_path / "good.json")]
    assert main(["compare", str(tmp_path / "q.json"), *paths, *args]) == 0
    assert "| A | ndcg@10 | bm25 | good | 20 |" in capsys.readouterr().out
    (tmp_path / "seg.json").write_text(json.dumps({"q1": "A", "q2": 3}))
    json_args = ["-m", "ndcg@10", "--segments", str(tmp_path / "seg.json"), "--format", "json"]
    assert (
        main(["evaluate", str(tmp_path / "q.json"), str(tmp_path / "good.json"), *json_args]) == 2
    )
    assert "--segments prints tables" in capsys.readouterr().err
    (tmp_path / "bad.txt").write_text("q1 A\nq1 B\n")
    bad = ["-m", "ndcg@10", "--segments", str(tmp_path / "bad.txt")]
    assert main(["evaluate", str(tmp_path / "q.json"), str(tmp_path / "good.json"), *bad]) == 2
    assert "query 'q1' is in two segments" in capsys.readouterr().err


def test_segments_as_keywords_of_evaluate_compare_and_the_report(tmp_path: Path) -> None:
    """``segments=`` in evaluate and compare gives what ``by_segment`` gives; NaN and None in
    a pandas Series leave a query out, counted; the report shows the slices; a wrong type is
    refused before anything is evaluated."""
    pd = pytest.importorskip("pandas")
    from ragmetrics.report._report import write_report

    qrels, runs = _data()
    series = pd.Series({q: ("A" if i < 20 else "B") for i, q in enumerate(qrels)})
    series["q3"], series["q4"] = float("nan"), None
    result = rm.evaluate(qrels, runs["mid"], ["ndcg@10"], segments=series)
    assert result.segments is not None and result.segments.unassigned == ("q3", "q4")
    expected = rm.by_segment(result, series)
    assert result.segments.rows == expected.rows
    assert rm.evaluate(qrels, runs["mid"], ["ndcg@10"]).segments is None

    comparison = rm.compare(
        qrels, runs, ["ndcg@10"], baseline="bm25", n_permutations=400, segments=series
    )
    assert comparison.segments is not None
    assert comparison.segments.tests == comparison.by_segment(series).tests
    assert {row.segment for row in comparison.segments.rows} == {"A", "B"}
    page = write_report(comparison, tmp_path / "report.html", plots=False).read_text()
    assert "By segment" in page and "2 queries have no segment" in page
    assert (
        "By segment"
        not in write_report(
            rm.compare(qrels, runs, ["ndcg@10"], n_permutations=100), tmp_path / "plain.md"
        ).read_text()
    )

    with pytest.raises(InputFormatError, match="segments must map query ids"):
        rm.compare(qrels, runs, ["ndcg@10"], segments=3)
    with pytest.raises(InputFormatError, match="segments must map query ids"):
        rm.evaluate(qrels, runs["mid"], ["ndcg@10"], segments="language")


def test_segments_from_the_datasets_query_metadata(tmp_path: Path) -> None:
    """A dataset's query metadata names the slices: by field or by a function of it; the
    metadata survives the JSON round trip, and a query without it is counted, not sliced."""
    from ragmetrics.datasets import demo

    data = demo()
    data.to_json(tmp_path / "d.json")
    again = rm.RetrievalDataset.from_json(tmp_path / "d.json")
    assert again.query_metadata == data.query_metadata and again.query_metadata
    by_source = data.segments("source")
    assert set(by_source.values()) == {"conversation", "handbook"}
    run = {q: list(data.corpus)[:10] for q in data.queries}
    result = rm.evaluate(data.qrels, run, ["recall@10"], segments=by_source)
    assert result.segments is not None and not result.segments.unassigned
    chat = next(r for r in result.segments.rows if r.segment == "conversation")
    assert chat.n + chat.na == 19
    unanswered = data.segments(lambda meta: "none" if meta["evidence"] == "no answer" else None)
    assert sorted(q for q, s in unanswered.items() if s) == [
        "chat-cat",
        "chat-salary",
        "chat-wedding",
    ]
    partial = rm.RetrievalDataset(
        queries={"a": "?", "b": "?"}, relevant_docs={"a": ["d"]}, query_metadata={"a": {"t": 1}}
    )
    assert partial.segments("t") == {"a": 1, "b": None}
    with pytest.raises(InputFormatError, match="query_metadata names queries"):
        rm.RetrievalDataset(queries={"a": "?"}, relevant_docs={}, query_metadata={"z": {}})
    with pytest.raises(InputFormatError, match="metadata field name"):
        partial.segments(3)
