"""Hostile but legal input: read exactly, or refused with an error naming the place.

Each test pins one way an input used to give a silently wrong number: ids with whitespace in
Parquet, Unicode whitespace and line breaks in TREC lines, numbers that are not ASCII, grades
past int64, byte-order marks inside a file, gzip without line ends. Every TREC case runs
through every reader: in memory (fast and careful), streaming, and gzip.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

import ragmetrics as rm
from ragmetrics.formats._rules import MAX_LINE_BYTES

pyarrow = pytest.importorskip("pyarrow")


def _streamed(qrels: rm.Qrels, path: Path, metrics: list[str]) -> dict[str, float | None]:
    return rm.evaluate_stream(qrels, path, metrics, progress=False).aggregate


# --- ids in Parquet and Arrow --------------------------------------------------------------


@pytest.mark.parametrize("doc", ["a b", "a\tb", "a\x00", "a\x00b", " a", "a\n"])
def test_arrow_ids_with_whitespace_or_nul_are_kept_exactly(doc: str, tmp_path: Path) -> None:
    table = pyarrow.table(
        {"query_id": ["q1"] * 3, "doc_id": [doc, "c", "d"], "relevance": [1, 0, 2]}
    )
    assert rm.Qrels.from_arrow(table)["q1"] == {doc: 1, "c": 0, "d": 2}
    run_table = pyarrow.table(
        {"query_id": ["q1"] * 3, "doc_id": [doc, "c", "d"], "score": [3.0, 2.0, 1.0]}
    )
    run = rm.Run.from_arrow(run_table)
    assert run["q1"] == (doc, "c", "d")
    qrels = rm.Qrels.from_dict({"q1": {doc: 1}})
    # the same P@1 whether or not another judged id is non-ASCII (hashed or string join)
    other = rm.Qrels.from_dict({"q1": {doc: 1, "é": 1}})
    assert rm.evaluate(qrels, run, ["P@1"]).aggregate == {"P@1": 1.0}
    assert rm.evaluate(other, run, ["P@1"]).aggregate == {"P@1": 1.0}
    path = tmp_path / "run.parquet"
    pyarrow.parquet.write_table(run_table, path)
    assert rm.Run.from_parquet(path)["q1"] == (doc, "c", "d")
    assert _streamed(qrels, path, ["P@1"]) == {"P@1": 1.0}


def test_a_uint64_grade_past_int64_is_refused_not_wrapped() -> None:
    for value in (2**64 - 1, 2**63):
        table = pyarrow.table(
            {"query_id": ["q1"], "doc_id": ["a"], "relevance": pyarrow.array([value], "uint64")}
        )
        with pytest.raises(rm.InputFormatError, match=rf"is {value}, outside the signed 64-bit"):
            rm.Qrels.from_arrow(table)
    with pytest.raises(rm.InputFormatError, match="outside the signed 64-bit"):
        rm.Qrels.from_dict({"q1": {"a": 2**63}})
    small = pyarrow.table(
        {"query_id": ["q1"], "doc_id": ["a"], "relevance": pyarrow.array([3], "uint64")}
    )
    assert rm.Qrels.from_arrow(small)["q1"] == {"a": 3}


def test_none_and_empty_ids_are_refused() -> None:
    with pytest.raises(
        rm.InputFormatError, match="Query ids of the qrels must be strings; got None"
    ):
        rm.Qrels.from_dict({None: {"a": 1}})  # type: ignore[dict-item]
    with pytest.raises(rm.InputFormatError, match="Query ids of the run must be strings; got None"):
        rm.Run.from_dict({None: {"a": 1.0}})  # type: ignore[dict-item]
    with pytest.raises(rm.InputFormatError, match="must not be empty"):
        rm.Run.from_dict({"": {"a": 1.0}})


# --- TREC lines: one rule for every reader -------------------------------------------------


def _readers(tmp_path: Path, text: str) -> list[tuple[str, Path]]:
    plain = tmp_path / "run.txt"
    plain.write_bytes(text.encode("utf-8"))
    packed = tmp_path / "run.txt.gz"
    packed.write_bytes(gzip.compress(text.encode("utf-8")))
    return [("plain", plain), ("gzip", packed)]


def _outcome(path: Path, qrels: rm.Qrels) -> list[object]:
    """What each reader makes of a run file: its values, or the error's first words."""
    results: list[object] = []
    for read in (
        lambda: rm.evaluate(qrels, rm.Run.from_trec(path), ["P@1", "mrr"]).aggregate,
        lambda: _streamed(qrels, path, ["P@1", "mrr"]),
    ):
        try:
            results.append(read())
        except rm.InputFormatError as error:
            results.append(str(error).split(": ", 1)[1][:40])
    return results


@pytest.mark.parametrize(
    "char",
    ["\xa0", "\u3000", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\u2028", "\u2029",
     "\x00", "\x7f", "\r", "\ufeff", "\u200b"],
)  # fmt: skip
def test_unicode_whitespace_and_controls_in_a_line_are_refused_by_every_reader(
    char: str, tmp_path: Path
) -> None:
    qrels = rm.Qrels.from_dict({"q1": {"a": 1}, "q2": {"b": 1}})
    # inside a field, and in place of a separator (where str.split would take it for one)
    for middle in (f"doc{char}one 7 0.5 tag", f"doc 7{char}0.5 tag"):
        text = f"q1 Q0 a 1 0.9 t\nq1 Q0 {middle}\nq2 Q0 b 1 0.3 t\n"
        for _, path in _readers(tmp_path, text):
            with pytest.raises(rm.InputFormatError, match=r"line 2, column 1\d: U\+"):
                rm.Run.from_trec(path)
            with pytest.raises(rm.InputFormatError, match=r"line 2, column 1\d: U\+"):
                rm.evaluate_stream(qrels, path, ["P@1"], progress=False)


def test_tabs_and_crlf_line_ends_read_the_same_as_spaces(tmp_path: Path) -> None:
    qrels = rm.Qrels.from_dict({"q1": {"b": 1}, "q2": {"c": 1}})
    expected = None
    for text in (
        "q1 Q0 a 1 0.9 t\nq1 Q0 b 2 0.5 t\nq2 Q0 c 1 0.3 t\n",
        "q1\tQ0\ta\t1\t0.9\tt\nq1\tQ0\tb\t2\t0.5\tt\nq2 \t Q0 c 1 0.3 t\n",
        "q1 Q0 a 1 0.9 t\r\nq1 Q0 b 2 0.5 t\r\nq2 Q0 c 1 0.3 t\r\n",
        "q1 Q0 a 1 0.9 t\r\nq1 Q0 b 2 0.5 t\r\nq2 Q0 c 1 0.3 t",
    ):
        for _, path in _readers(tmp_path, text):
            outcome = _outcome(path, qrels)
            assert outcome[0] == outcome[1]
            expected = expected or outcome[0]
            assert outcome[0] == expected == {"P@1": 0.5, "mrr": 0.75}


def test_a_byte_order_mark_inside_a_file_names_the_line(tmp_path: Path) -> None:
    one = "q1 Q0 a 1 0.9 t\n".encode("utf-8-sig")
    path = tmp_path / "joined.txt"
    path.write_bytes(one + "q2 Q0 b 1 0.9 t\n".encode("utf-8-sig"))
    with pytest.raises(
        rm.InputFormatError, match=r"line 2, column 1: U\+FEFF BYTE ORDER MARK.*cat"
    ):
        rm.Run.from_trec(path)
    path.write_bytes(one)  # at the start it is dropped
    assert rm.Run.from_trec(path).query_ids == ("q1",)


@pytest.mark.parametrize("score", ["1_000", "١٢", "１２", "0x10", "nan", "-NaN", "½", "1e", "--1"])
def test_scores_must_be_ascii_real_numbers(score: str, tmp_path: Path) -> None:
    qrels = rm.Qrels.from_dict({"q1": {"a": 1}})
    for order in (
        f"q1 Q0 a 1 {score} t\nq1 Q0 b 2 0.5 t\n",
        f"q1 Q0 b 2 0.5 t\nq1 Q0 a 1 {score} t\n",
    ):
        for _, path in _readers(tmp_path, order):
            with pytest.raises(
                rm.InputFormatError, match=r"line \d: (field 5 must be|the score is NaN)"
            ):
                rm.Run.from_trec(path)
            with pytest.raises(
                rm.InputFormatError, match=r"line \d: (field 5 must be|the score is NaN)"
            ):
                rm.evaluate_stream(qrels, path, ["P@1"], progress=False)


@pytest.mark.parametrize("grade", ["1_0", "٣", "３", str(2**63), str(-(2**63) - 1), "1.0"])
def test_grades_must_be_ascii_integers_within_int64(grade: str, tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text(f"q1 0 a 1\nq1 0 b {grade}\n", encoding="utf-8")
    with pytest.raises(rm.InputFormatError, match=r"line 2: field 4 must be an integer"):
        rm.Qrels.from_trec(path)
    path.write_text(f"q1 0 a 1\nq1 0 b {2**63 - 1}\nq1 0 c {-(2**63)}\n", encoding="utf-8")
    assert rm.Qrels.from_trec(path)["q1"] == {"a": 1, "b": 2**63 - 1, "c": -(2**63)}


def test_a_score_is_exact_whatever_the_reader(tmp_path: Path) -> None:
    text = "q1 Q0 a 1 inf t\nq1 Q0 b 2 -inf t\nq1 Q0 c 3 1e-300 t\nq1 Q0 d 4 +2.5E3 t\n"
    for _, path in _readers(tmp_path, text):
        assert rm.Run.from_trec(path).to_dict()["q1"] == {
            "a": float("inf"), "d": 2500.0, "c": 1e-300, "b": float("-inf"),
        }  # fmt: skip


def test_gzip_without_line_ends_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "run.txt.gz"
    with gzip.open(path, "wb") as handle:
        for _ in range(8):
            handle.write(b"x" * (MAX_LINE_BYTES // 2))  # 4 MB of one line, 8 kB compressed
    qrels = rm.Qrels.from_dict({"q1": {"a": 1}})
    with pytest.raises(rm.InputFormatError, match=r"line 1: the line is longer than 1,048,576"):
        rm.Run.from_trec(path)
    with pytest.raises(rm.InputFormatError, match=r"line 1: the line is longer than 1,048,576"):
        rm.evaluate_stream(qrels, path, ["P@1"], progress=False)
    with pytest.raises(rm.InputFormatError, match=r"line 1: the line is longer"):
        rm.Qrels.from_trec(path)


def test_gzip_is_read_by_every_reader_and_named_when_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "qrels.gz"
    path.write_bytes(gzip.compress(b"q1 0 a 1\nq1 0 b 0\n"))
    assert rm.Qrels.from_trec(path)["q1"] == {"a": 1, "b": 0}
    run = tmp_path / "run.txt.gz"
    data = gzip.compress(b"q1 Q0 a 1 0.5 t\n" * 1000)
    run.write_bytes(data)
    assert rm.Run.from_trec(run)["q1"] == ("a",)
    run.write_bytes(data[: len(data) // 2])  # truncated
    with pytest.raises(rm.InputFormatError, match=r"run\.txt\.gz: the gzip stream is corrupt"):
        rm.Run.from_trec(run)
    flipped = bytearray(data)
    flipped[len(flipped) // 2] ^= 0xFF
    run.write_bytes(bytes(flipped))
    with pytest.raises(rm.InputFormatError, match=r"the gzip stream is corrupt"):
        rm.evaluate_stream(rm.Qrels.from_dict({"q1": {"a": 1}}), run, ["P@1"], progress=False)


# --- last bits -------------------------------------------------------------------------------


def test_ndcg_divides_by_the_log_as_trec_eval_does() -> None:
    # trec_eval and pytrec_eval: 0.6309297535714574; a reciprocal multiplied gave ...575
    result = rm.evaluate({"q": {"a": 0, "b": 3}}, {"q": ["a", "b"]}, ["ndcg", "ndcg@2"])
    assert result.aggregate == {"ndcg": 0.6309297535714574, "ndcg@2": 0.6309297535714574}


def test_grades_past_1023_keep_exponential_gains_defined() -> None:
    qrels = {"q": {"a": 1030, "b": 1}}
    result = rm.evaluate(qrels, {"q": ["a", "b"]}, ["ndcg_exp", "err"])
    assert result.aggregate == {"ndcg_exp": 1.0, "err": 1.0}
    value = rm.evaluate(qrels, {"q": ["b", "a"]}, ["ndcg_exp", "err", "ndcg_exp@1"]).aggregate
    # (1 + (2^1030 - 1) / log2(3)) / (2^1030 - 1 + 1 / log2(3)): 1 / log2(3) to the last bits
    assert value["ndcg_exp"] == pytest.approx(1 / np.log2(3), rel=1e-15)
    assert value["err"] == 0.5
    assert 0 < value["ndcg_exp@1"] < 1e-300  # (2^1 - 1) / (2^1030 - 1)


# --- JSON and Parquet that cannot be read ----------------------------------------------------


def test_a_json_key_given_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "qrels.json"
    path.write_text('{"q1": {"a": 1, "b": 0, "a": 2}}', encoding="utf-8")
    with pytest.raises(rm.InputFormatError, match=r"qrels\.json: the key 'a' appears twice"):
        rm.Qrels.from_json(path)
    path = tmp_path / "run.jsonl"
    path.write_text(
        '{"query_id": "q1", "doc_id": "a", "score": 1}\n{"query_id": "q1", "query_id": "q2", "doc_id": "b", "score": 1}\n'
    )
    with pytest.raises(
        rm.InputFormatError, match=r"run\.jsonl, line 2: the key 'query_id' appears twice"
    ):
        rm.Run.from_json(path)


def test_json_nested_too_deep_or_without_judgments_is_named(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(rm.InputFormatError, match="nested too deeply"):
        rm.Run.from_json(path)
    with pytest.raises(rm.InputFormatError, match="nested too deeply"):
        rm.RetrievalDataset.from_json(path)
    path.write_text('{"format": "ragmetrics.data._qrels", "groups": {}}')
    with pytest.raises(rm.InputFormatError, match="needs a 'judgments' object"):
        rm.Qrels.from_json(path)


def test_jsonl_records_holding_a_line_separator_stay_whole(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(
        '{"query_id": "q\u20281", "doc_id": "a\u2029b", "score": 1}\n', encoding="utf-8"
    )
    assert rm.Run.from_json(path)["q\u20281"] == ("a\u2029b",)


def test_parquet_that_cannot_be_read_is_named(tmp_path: Path) -> None:
    good = tmp_path / "run.parquet"
    pyarrow.parquet.write_table(
        pyarrow.table({"query_id": ["q1"] * 3, "doc_id": ["a", "b", "c"], "score": [1.0, 2, 3]}),
        good,
    )
    data = bytearray(good.read_bytes())
    data[len(data) // 2] ^= 0xFF
    flipped = tmp_path / "flipped.parquet"
    flipped.write_bytes(bytes(data))
    (tmp_path / "empty").mkdir()
    two = tmp_path / "two"
    two.mkdir()
    pyarrow.parquet.write_table(
        pyarrow.table({"query_id": ["q1"], "doc_id": ["a"], "score": [1.0]}), two / "a.parquet"
    )
    pyarrow.parquet.write_table(
        pyarrow.table({"query_id": [1], "doc_id": [2], "score": ["x"]}), two / "b.parquet"
    )
    lists = tmp_path / "lists.parquet"
    pyarrow.parquet.write_table(
        pyarrow.table({"query_id": ["q1"], "doc_id": [["a", "b"]], "score": [1.0]}), lists
    )
    qrels = rm.Qrels.from_dict({"q1": {"a": 1}})
    cases = {
        flipped: r"flipped\.parquet: cannot be read as Parquet",
        tmp_path / "empty": r"empty' holds no Parquet file",
        two: r"(two: the Parquet files of this folder have different columns|b\.parquet: the column 'score' holds string)",
        lists: r"the column 'doc_id' holds list<.*explode",
    }
    for path, message in cases.items():
        with pytest.raises(rm.InputFormatError, match=message):
            rm.Run.from_parquet(path)
        with pytest.raises(rm.InputFormatError, match=message):
            rm.evaluate_stream(qrels, path, ["P@1"], progress=False)
    with pytest.raises(rm.InputFormatError, match=r"the column 'doc_id' holds list<"):
        rm.Qrels.from_arrow(
            pyarrow.table({"query_id": ["q1"], "doc_id": [["a"]], "relevance": [1]})
        )


# --- what outputs print ------------------------------------------------------------------------

PAYLOAD = "<img src=x onerror=alert(1)>|`x`[a](javascript:b)&\n\x1b[31m"


def test_markdown_and_text_outputs_escape_ids(tmp_path: Path) -> None:
    qrels = {PAYLOAD: {PAYLOAD: 5, "b": 4}}
    run = {PAYLOAD: [PAYLOAD, "c"]}
    result = rm.evaluate(qrels, run, ["ra_nwg@2", "P@1"])
    for text in (
        result.to_markdown(per_query=True, diagnostics=1),
        rm.compare(qrels, {PAYLOAD: run, "b": {PAYLOAD: ["c"]}}, ["P@1"]).to_markdown(),
    ):
        assert "<img" not in text and "\x1b" not in text and "`x`" not in text
        assert "&lt;img src=x onerror=alert(1)&gt;\\|\\`x\\`\\[a\\](javascript:b)&amp;" in text
        table_lines = [line for line in text.split("\n") if line.startswith("|")]
        assert all(line.endswith("|") for line in table_lines)  # no row broken in two
    for text in (
        result.to_table(per_query=True),
        str(rm.compare(qrels, {PAYLOAD: run, "b": {PAYLOAD: ["c"]}}, ["P@1"])),
    ):
        assert "\x1b" not in text and "\\x1b[31m" in text and "\\n" in text


def test_a_markdown_report_escapes_ids_and_the_html_shows_them_as_text(tmp_path: Path) -> None:
    from ragmetrics.report._report import write_report

    qrels = rm.Qrels.from_dict({"q1": {"a": 5, "b": 4}, "q2": {"a": 5}})
    runs = {
        PAYLOAD: rm.Run.from_lists({"q1": ["a"], "q2": ["a"]}),
        "b": rm.Run.from_lists({"q1": ["b"], "q2": ["x"]}),
    }
    comparison = rm.compare(qrels, runs, ["ra_nwg@1"], baseline=PAYLOAD)
    markdown = write_report(comparison, tmp_path / "r.md", title=PAYLOAD, plots=False).read_text()
    assert "<img" not in markdown and "\x1b" not in markdown
    page = write_report(comparison, tmp_path / "r.html", title=PAYLOAD, plots=False).read_text()
    assert (
        "<img src=x" not in page
        and "&lt;img src=x onerror=alert(1)&gt;|`x`[a](javascript:b)&amp;" in page
    )


# --- writers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("doc", ["a b", "a\tb", "a\nb", "a\x00", "\ufeffa", "a\u2028b"])
def test_trec_writers_refuse_ids_they_cannot_write_faithfully(doc: str, tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("previous\n")
    with pytest.raises(rm.InputFormatError, match=r"Cannot write the doc id .* to the TREC file"):
        rm.Run.from_dict({"q1": {doc: 1.0}}).to_trec(path)
    with pytest.raises(rm.InputFormatError, match=r"Cannot write the doc id .*JSON or Parquet"):
        rm.Qrels.from_dict({"q1": {doc: 1}}).to_trec(path)
    with pytest.raises(rm.InputFormatError, match=r"Cannot write the query id"):
        rm.Qrels.from_dict({doc: {"a": 1}}).to_trec(path)
    assert path.read_text() == "previous\n"  # refused before a byte was written
    run = rm.Run.from_dict({"q1": {doc: 1.0, "b": 0.5}})  # JSON and Parquet keep the id
    run.to_json(tmp_path / "run.json")
    assert rm.Run.from_json(tmp_path / "run.json").to_dict() == run.to_dict()
    run.to_parquet(tmp_path / "run.parquet")
    assert rm.Run.from_parquet(tmp_path / "run.parquet").to_dict() == run.to_dict()


def test_a_lone_surrogate_is_refused_by_every_writer(tmp_path: Path) -> None:
    run = rm.Run.from_dict({"q1": {"a\udc80": 1.0}})
    for write in (run.to_json, run.to_trec):
        target = tmp_path / "out"
        with pytest.raises(rm.RagMetricsError, match=r"U\+DC80"):
            write(target)
        assert not target.exists() and not list(tmp_path.glob(".out*"))


def test_a_failed_write_leaves_the_previous_file_intact(tmp_path: Path) -> None:
    """A write that fails part-way (here: past the process's file size limit, as a full disk
    would) leaves the old file whole, and no temporary file behind."""
    import subprocess
    import sys

    target = tmp_path / "result.json"
    target.write_text('{"good": true}')
    script = (
        "import resource, signal, ragmetrics as rm\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))\n"
        "run = rm.Run.from_dict({f'q{i}': {f'd{j}': 1.0 for j in range(50)} for i in range(200)})\n"
        "try:\n"
        f"    run.to_json({str(target)!r})\n"
        "except rm.RagMetricsError as error:\n"
        "    print(type(error).__name__, error)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.stdout.startswith("WriteError Cannot write"), done.stdout + done.stderr
    assert "Nothing was changed" in done.stdout
    assert target.read_text() == '{"good": true}'
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]


def test_run_names_with_mathtext_or_controls_draw(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from ragmetrics.report._report import write_report

    qrels = rm.Qrels.from_dict({"q1": {"a": 5, "b": 4}, "q2": {"a": 5, "c": 3}})
    runs = {
        "$\\frac$": rm.Run.from_lists({"q1": ["a", "b"], "q2": ["c", "a"]}),
        "b\x1b[2J": rm.Run.from_lists({"q1": ["b"], "q2": ["x"]}),
    }
    metrics = ["ra_nwg@2", "proc@2", "pct_proc@2", "ndcg@2"]
    comparison = rm.compare(qrels, runs, metrics)
    page = write_report(comparison, tmp_path / "r.html", qrels=qrels, runs=runs)
    assert page.read_text().count("data:image/png;base64") >= 3


def test_an_empty_ranking_survives_the_parquet_round_trip(tmp_path: Path) -> None:
    qrels = rm.Qrels.from_dict({"q1": {"a": 1}, "q2": {"b": 1}})
    for run in (
        rm.Run.from_dict({"q1": {"a": 1.0}, "q2": {}}),
        rm.Run.from_lists({"q1": ["a"], "q2": []}),
    ):
        path = tmp_path / "run.parquet"
        run.to_parquet(path)
        back = rm.Run.from_parquet(path)
        assert back.query_ids == ("q1", "q2") and back["q2"] == ()
        expected = {"P@1": 0.5}  # q2 counts, with 0, even with missing="skip"
        assert rm.evaluate(qrels, back, ["P@1"], missing="skip").aggregate == expected
        streamed = rm.evaluate_stream(qrels, path, ["P@1"], missing="skip", progress=False)
        assert streamed.aggregate == expected


def test_a_trec_writer_warns_about_queries_it_cannot_hold(tmp_path: Path) -> None:
    with pytest.warns(rm.FormatLossWarning, match=r"1 queries have an empty ranking \('q2'\)"):
        rm.Run.from_lists({"q1": ["a"], "q2": []}).to_trec(tmp_path / "run.txt")
    with pytest.warns(rm.FormatLossWarning, match=r"1 queries have no judgment \('q2'\)"):
        rm.Qrels.from_dict({"q1": {"a": 1}, "q2": {}}).to_trec(tmp_path / "qrels.txt")


@pytest.mark.parametrize("name", ["P@١٠", "P@１０", "P_١٠", "P(rel=٢)@5", "RA_nWG(alpha=٠.٥)@5"])
def test_metric_names_read_ascii_digits_only(name: str) -> None:
    with pytest.raises(rm.RagMetricsError):
        rm.evaluate({"q": {"a": 1}}, {"q": ["a"]}, [name])


def test_command_line_numbers_are_ascii(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ragmetrics.cli._commands import main

    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("q1 0 a 1\n")
    run.write_text("q1 Q0 a 1 0.5 t\n")
    for argv in (
        ["evaluate", str(qrels), str(run), "-m", "map", "-l", "١"],
        ["evaluate", str(qrels), str(run), "-m", "map", "--grade-map", "0:1,١:5"],
        ["compare", str(qrels), f"a={run}", f"b={run}", "-m", "map", "--alpha", "٠.٠٥"],
    ):
        assert main(argv) == 2  # argparse's exit, returned as the code
        err = capsys.readouterr().err
        assert "ASCII" in err or "GRADE:UTILITY" in err
    # trec_eval's flags stop as trec_eval stops on a bad flag: exit 1, one line
    assert main(["trec_eval", "-l", "１", str(qrels), str(run)]) == 1
    assert "-l '１' is not an integer" in capsys.readouterr().err


def test_standard_input_is_read_by_the_careful_reader_and_left_open() -> None:
    import subprocess
    import sys

    script = (
        "import gc, sys, ragmetrics as rm\n"
        "run = rm.Run.from_trec('-'); gc.collect()\n"
        "print(run.to_dict(), sys.stdin.closed)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=b"q1 Q0 a 1 0.5 t\r\nq1 Q0 b 2 0.25 t\n",
        capture_output=True,
        check=True,
    )
    assert done.stdout.decode().strip() == "{'q1': {'a': 0.5, 'b': 0.25}} False"
