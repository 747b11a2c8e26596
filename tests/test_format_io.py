"""The TREC reader's plumbing (formats._io) function by function: gzip found by its bytes,
the UTF-8 error naming the line of the first bad byte, widths, repeats, run-length
encodings and regrouping; exact results and messages."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from ragmetrics.errors import InputFormatError
from ragmetrics.formats import _io


def test_gzip_is_found_by_its_bytes_and_closed_with_its_file(tmp_path: Path) -> None:
    packed = tmp_path / "run.txt"  # no .gz: the magic bytes decide
    packed.write_bytes(gzip.compress(b"q1 Q0 d 1 1.0 t\n"))
    handle = _io.open_bytes(packed)
    assert handle.read() == b"q1 Q0 d 1 1.0 t\n"
    inner = handle.fileobj  # type: ignore[attr-defined]
    _io.close_bytes(handle)
    assert handle.closed and inner.closed
    plain = tmp_path / "plain.txt"
    plain.write_bytes(b"\x1fx")  # one magic byte only: plain
    handle = _io.open_bytes(plain)
    assert handle.read() == b"\x1fx"
    _io.close_bytes(handle)
    assert handle.closed


def test_a_corrupt_gzip_stream_is_one_error(tmp_path: Path) -> None:
    cut = tmp_path / "cut.gz"
    cut.write_bytes(gzip.compress(b"q1 Q0 d 1 1.0 t\n" * 1000)[:-20])
    with pytest.raises(
        InputFormatError, match=r"cut\.gz: the gzip stream is corrupt or truncated .*gzip -t"
    ):
        _io.read_trec_maps(
            cut, n_columns=6, doc_col=2, value_col=4, value_kind="float", layout="run"
        )


def test_the_first_bad_byte_is_named_by_its_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"q1 0 a 1\nq1 0 b 1\nq1 0 caf\xe9 1\n")
    with pytest.raises(InputFormatError) as caught:
        _io.read_trec_maps(
            path, n_columns=4, doc_col=2, value_col=3, value_kind="int", layout="qrels"
        )
    assert str(caught.value) == (
        f"{path}, line 3: byte 0xe9 at column 9 is not UTF-8 text; save the file as UTF-8 "
        f"(or convert it, e.g. with iconv)."
    )


def test_widths_and_repeats(tmp_path: Path) -> None:
    path = tmp_path / "q.txt"
    path.write_text("q1 0 a 1\nq1 0 a 1\nq1 0 b 2\n")
    maps, repeats = _io.read_trec_maps(
        path, n_columns=4, doc_col=2, value_col=3, value_kind="int", layout="L", on_repeat="same"
    )
    assert maps == {"q1": {"a": 1, "b": 2}} and repeats == {"q1": 1}
    path.write_text("q1 0 a 1\nq1 0 a 2\n")
    with pytest.raises(InputFormatError) as caught:
        _io.read_trec_maps(
            path,
            n_columns=4,
            doc_col=2,
            value_col=3,
            value_kind="int",
            layout="L",
            on_repeat="same",
        )
    assert str(caught.value) == (
        f"{path}, line 2: 'a' is judged twice for query 'q1' with different grades (1 and 2); "
        f"keep one judgment per pair."
    )
    path.write_text("q1 Q0 a 1 0.5 t\nq1 Q0 a 2 0.9 t\nq1 Q0 a 3 0.1 t\n")
    maps, repeats = _io.read_trec_maps(
        path, n_columns=6, doc_col=2, value_col=4, value_kind="float", layout="R"
    )
    assert maps == {"q1": {"a": 0.9}} and repeats == {"q1": 2}  # the best copy is kept
    path.write_text("q1 Q0 a 1 0.5 t extra words\n")
    maps, _ = _io.read_trec_maps(
        path, n_columns=6, doc_col=2, value_col=4, value_kind="float", layout="R",
        extra_fields=True,
    )  # fmt: skip
    assert maps == {"q1": {"a": 0.5}}
    path.write_text("q1 Q0 a 1 0.5\n")
    with pytest.raises(InputFormatError) as caught:
        _io.read_trec_maps(
            path, n_columns=6, doc_col=2, value_col=4, value_kind="float", layout="R",
            extra_fields=True,
        )  # fmt: skip
    assert str(caught.value) == (
        f"{path}, line 1: expected at least 6 whitespace-separated fields (R), found 5: "
        f"'q1 Q0 a 1 0.5'."
    )


def test_run_length_encodings_and_regrouping() -> None:
    assert _io.runs_of([]) == ([], [])
    assert _io.runs_of(["a", "a", "b", "a"]) == (["a", "b", "a"], [2, 1, 1])
    queries, lengths = ["a"], [2]
    _io._extend_runs(queries, lengths, ["a", "c", "c"])
    assert (queries, lengths) == (["a", "c"], [3, 2])
    _io._extend_runs(queries, lengths, ["d"])
    assert (queries, lengths) == (["a", "c", "d"], [3, 2, 1])
    grouped = _io.group_contiguous(
        ["a", "b", "a"], [2, 1, 1], ["x1", "x2", "y1", "x3"], np.array([1.0, 2.0, 3.0, 4.0])
    )
    assert grouped[0] == ["a", "b"]
    assert grouped[1].tolist() == [3, 1]
    assert grouped[2] == ["x1", "x2", "x3", "y1"]
    assert grouped[3].tolist() == [1.0, 2.0, 4.0, 3.0]
    same = _io.group_contiguous(["a", "b"], [1, 1], ["x", "y"], np.array([1.0, 2.0]))
    assert same[0] == ["a", "b"] and same[2] == ["x", "y"]


def test_near_misses_name_the_reader() -> None:
    qrels = "query_id iteration doc_id grade"
    run = "query_id Q0 doc_id rank score tag"
    assert _io._near_miss(["q", "d", "1"], qrels) == (
        " Three fields are qrels without the iteration column (BEIR's qrels/*.tsv, "
        "query_id doc_id grade): read them with Qrels.from_tsv."
    )
    assert _io._near_miss(["q", "0", "d", "1"], run) == (
        " Four fields are TREC qrels, not a run: read them with Qrels.from_trec."
    )
    assert _io._near_miss(["q", "d", "0.5"], run) == (
        " Three fields (query_id doc_id score) are not a TREC run: read them with pandas and "
        "Run.from_pandas, or write the 6 TREC columns."
    )
    assert _io._near_miss(["q", "d"], qrels) == ""
    assert _io._near_miss(["q", "d", "1", "x", "y"], run) == ""
    assert _io._near_miss(["q", "d", "1"], "other layout") == ""


def test_a_bad_byte_far_into_a_big_file_is_named_by_its_line(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    line = b"q1 0 doc-%07d 1\n"
    body = b"".join(line % i for i in range(120_000))  # more than one block of 1 MB
    path.write_bytes(body + b"q1 0 caf\xe9 1\n")
    with pytest.raises(InputFormatError, match=r"big\.txt, line 120001: byte 0xe9 at column 9"):
        _io.read_trec_maps(
            path, n_columns=4, doc_col=2, value_col=3, value_kind="int", layout="qrels"
        )
