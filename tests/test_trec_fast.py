"""The vectorized TREC reader gives exactly what the line-by-line reader gives.

Files are written with awkward but valid formatting (signs, exponents, long decimals, tabs,
CRLF, no final newline, a query split across the file, repeated docs), and with content the
fast reader must hand over to the careful one (comments, blank lines, non-ASCII, extra
fields). Either way the values must equal ``float()`` / ``int()`` of the fields.
"""

from __future__ import annotations

import random
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ragmetrics as rm
from ragmetrics.data._batches import batches
from ragmetrics.formats import _trec_fast
from ragmetrics.formats._io import read_trec_maps
from ragmetrics.formats._stream_io import trec_chunks
from ragmetrics.formats._trec_fast import read_plain_trec_packed
from tests.conftest import rankings_beyond_ascii, shared_file

_SCORES = [
    "0.5", "-0.25", "+3", "12", "1e-3", "-2.5E+2", "inf", "-inf", "0.1234567890123456789",
    "123456789012345678", ".5", "7.", "-0", "000.0100", "9007199254740993", "3.14159265358979",
]  # fmt: skip


def _careful_run(path: Path) -> dict[str, dict[str, float]]:
    maps, _ = read_trec_maps(
        path, n_columns=6, doc_col=2, value_col=4, value_kind="float",
        layout="query_id Q0 doc_id rank score tag", extra_fields=True, on_repeat="max",
    )  # fmt: skip
    return maps


def _fast_run(path: Path | str) -> Any:
    """The fast reader's columns of a run file, or None where it declines the file."""
    return read_plain_trec_packed(path, n_columns=6, doc_col=2, value_col=4, integer=False)


def _write_run(path: Path, rng: random.Random, *, crlf: bool, final_newline: bool) -> None:
    lines = []
    for q in rng.sample(range(40), 30):
        for rank in range(rng.randrange(1, 25)):
            score = rng.choice([*_SCORES, f"{rng.random():.6f}", f"{rng.uniform(-9, 9):.3f}"])
            doc = f"doc-{rng.randrange(60)}" + "x" * rng.choice([0, 0, 0, 90, 200])
            sep = rng.choice([" ", "\t", "  "])
            lines.append(sep.join([f"q{q}", "Q0", doc, str(rank), score, "tag"]))
    lines += lines[:7]  # a query comes back at the end, with repeated docs
    newline = "\r\n" if crlf else "\n"
    text = newline.join(lines) + (newline if final_newline else "")
    path.write_bytes(text.encode("ascii"))


@pytest.mark.parametrize("block_bytes", [97, 1 << 25], ids=["tiny blocks", "one block"])
@pytest.mark.parametrize("seed", range(6))
def test_fast_run_reader_equals_careful_reader(
    tmp_path: Path, seed: int, block_bytes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_trec_fast, "_BLOCK_BYTES", block_bytes)
    rng = random.Random(seed)
    path = tmp_path / "run.txt"
    _write_run(path, rng, crlf=seed % 2 == 1, final_newline=seed % 3 != 0)
    assert _fast_run(path) is not None
    run = rm.Run.from_trec(path)
    careful = _careful_run(path)
    assert run.query_ids == tuple(careful)
    for query_id, docs in careful.items():
        got = dict(zip(run[query_id], run.scores(query_id) or (), strict=True))
        assert got.keys() == docs.keys()
        for doc, score in docs.items():  # bit for bit, -0.0 and inf included
            assert np.array_equal(np.float64(got[doc]), np.float64(score))
            assert np.signbit(got[doc]) == np.signbit(score)


@pytest.mark.parametrize(
    "text",
    [
        "# a note \x01\nq1 Q0 d1 1 0.5 t\n",
        "q1 Q0 d1 1 0.5 t extra\n",
        "q1 Q0 d1 1 0x10 t\n",
        f"{'q' * 300} Q0 d1 1 0.5 t\n",
    ],
    ids=[
        "comment with a control byte",
        "extra field",
        "hex score",
        "300-byte query id",
    ],
)
def test_files_that_are_not_plain_go_to_the_careful_reader(tmp_path: Path, text: str) -> None:
    path = tmp_path / "run.txt"
    path.write_text(text, encoding="utf-8")
    assert _fast_run(path) is None
    if "0x10" in text:
        with pytest.raises(rm.InputFormatError, match=r"run\.txt, line 1: field 5 must be"):
            rm.Run.from_trec(path)
    elif "\x01" in text:  # the line rule holds in comments too
        with pytest.raises(rm.InputFormatError, match=r"run\.txt, line 1, column 10: U\+0001"):
            rm.Run.from_trec(path)
    else:
        assert len(rm.Run.from_trec(path)) == 1


@pytest.mark.parametrize("block_bytes", [300, 1 << 25], ids=["many blocks", "one block"])
def test_ids_beyond_ascii_are_read_by_the_fast_reader_as_the_careful_one_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block_bytes: int
) -> None:
    """Query and doc ids beyond ASCII (accents, CJK, Greek, a combining mark, an emoji) are
    read by blocks as their UTF-8 bytes: the run and the qrels equal the careful reader's,
    and so do the numbers, tied scores (ordered by doc id) included, whether the other side
    comes from a file (joined on bytes) or from dicts (joined on strings)."""
    monkeypatch.setattr(_trec_fast, "_BLOCK_BYTES", block_bytes)
    rng = random.Random(9)
    lines, judged = [], {}
    for query, docs in rankings_beyond_ascii(rng, 30, 40, 15):
        for rank, doc in enumerate(docs):
            lines.append(f"{query} Q0 {doc} {rank} {rng.choice(['1', '0.5', '0.25'])} t\n")
            if rng.random() < 0.4:
                judged[(query, doc)] = f"{query} 0 {doc} {rng.randrange(3)}\n"
    rng.shuffle(lines)  # queries scattered too
    path, qrels_path = tmp_path / "run.txt", tmp_path / "qrels.txt"
    path.write_text("".join(lines), encoding="utf-8")
    qrels_path.write_text("".join(judged.values()), encoding="utf-8")
    assert _fast_run(path) is not None
    run = rm.Run.from_trec(path)
    assert run.to_dict() == _careful_run(path)
    qrels = rm.Qrels.from_trec(qrels_path)
    careful_qrels = _careful_qrels(qrels_path)
    assert {q: dict(g) for q, g in qrels.items()} == careful_qrels
    metrics = ["ndcg@5", "map", "P@3", "mrr", "recall@10"]
    expected = rm.evaluate(careful_qrels, _careful_run(path), metrics)
    for given_qrels in (qrels, careful_qrels):
        got = rm.evaluate(given_qrels, run, metrics)
        assert got.per_query == expected.per_query
    assert rm.evaluate(qrels, run, ["ndcg@5"]).aggregate["ndcg@5"] > 0


@pytest.mark.parametrize(
    "field",
    ["d\u00a0x", "d\u200bx", "d\ufeffx", "d\u0085x", "d\u2028x", "d\u3000x", "\ue000", "d\U000e0001"],
    ids=["no-break space", "zero-width space", "byte-order mark", "NEL", "line separator",
         "ideographic space", "private use", "tag character"],
)  # fmt: skip
def test_a_character_the_line_rule_refuses_is_named_by_its_line_beyond_ascii(
    tmp_path: Path, field: str
) -> None:
    """A block holding a character beyond ASCII that is whitespace, a control or format
    character or private goes to the careful reader, which names its line, as before."""
    path = tmp_path / "run.txt"
    path.write_text(f"q1 Q0 dé 1 0.5 t\nq1 Q0 {field} 2 0.4 t\n", encoding="utf-8")
    assert _fast_run(path) is None
    with pytest.raises(rm.InputFormatError, match=r"run\.txt, line 2"):
        rm.Run.from_trec(path)


@pytest.mark.parametrize(
    "raw",
    [b"d\xc3(", b"d\xe2\x82", b"\x80d", b"d\xc0\xaf", b"d\xed\xa0\x80", b"d\xc3", b"d\x7f"],
    ids=["bad continuation", "cut at the id's end", "lone continuation", "overlong",
         "surrogate", "completed by the tag's first byte", "DEL"],
)  # fmt: skip
def test_bytes_that_are_not_utf8_are_named_by_their_line(tmp_path: Path, raw: bytes) -> None:
    """Bytes beyond ASCII that are not UTF-8 (a character cut, even when the next run of
    such bytes would complete it) are refused with the line named."""
    path = tmp_path / "run.txt"
    path.write_bytes(b"q1 Q0 d\xc3\xa9 1 0.5 t\nq1 Q0 " + raw + b" 2 0.4 \xa9t\n")
    assert _fast_run(path) is None
    with pytest.raises(rm.InputFormatError, match=r"run\.txt, line 2"):
        rm.Run.from_trec(path)


def test_a_score_with_digits_beyond_ascii_is_named_by_its_line(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 dé 1 0.5 t\nq1 Q0 d2 2 \u0663.5 t\n", encoding="utf-8")
    assert _fast_run(path) is None
    with pytest.raises(rm.InputFormatError, match=r"run\.txt, line 2: field 5 must be"):
        rm.Run.from_trec(path)


@pytest.mark.parametrize("block_bytes", [300, 1 << 25], ids=["many blocks", "one block"])
def test_blank_and_comment_lines_are_dropped_by_the_fast_reader_as_the_careful_one_skips_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block_bytes: int
) -> None:
    """Blank lines (whitespace alone, LF or CR LF) and comment lines (a first field that
    starts with ``#``, indented or not) anywhere in a run or qrels file are skipped by the
    careful reader; the fast reader drops them from their block and parses the rest, so
    the file is read by blocks with the careful reader's values. A ``#`` inside an id is
    not a comment. Streamed, the line of a later error is still named right."""
    monkeypatch.setattr(_trec_fast, "_BLOCK_BYTES", block_bytes)
    rng = random.Random(7)
    skipped = ["", "   ", "\t \t", "# a run of my retriever", "  # indented", "#q1 Q0 d1 1 9 t"]
    lines, judged = ["# header: query Q0 doc rank score tag"], []
    for q in range(40):
        for rank in range(rng.randrange(1, 12)):
            doc = rng.choice(["d", "d#", "x"]) + str(rng.randrange(30))
            lines.append(f"q{q} Q0 {doc} {rank} {rng.random():.4f} t")
            judged.append(f"q{q} 0 {doc} {len(doc)}")  # one grade a pair
            if rng.random() < 0.1:
                lines.append(rng.choice(skipped))
                judged.append(rng.choice(skipped))
    for ending in ("\n", "\r\n"):
        path, qrels_path = tmp_path / "run.txt", tmp_path / "qrels.txt"
        path.write_bytes((ending.join(lines) + ending + ending).encode())  # a blank line last
        qrels_path.write_bytes(ending.join(dict.fromkeys(judged)).encode())  # none last
        assert _fast_run(path) is not None
        assert rm.Run.from_trec(path).to_dict() == _careful_run(path)
        assert (
            read_plain_trec_packed(qrels_path, n_columns=4, doc_col=2, value_col=3, integer=True)
            is not None
        )
        assert {q: dict(g) for q, g in rm.Qrels.from_trec(qrels_path).items()} == (
            _careful_qrels(qrels_path)
        )
    # a bad score on the last line: streamed, its line is counted through the dropped lines
    lines.append("q99 Q0 d1 1 high t")
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(rm.InputFormatError, match=rf"run\.txt, line {len(lines)}: field 5"):
        rm.evaluate_stream({"q1": {"d1": 1}}, path, ["P@1"], progress=False)
    with pytest.raises(rm.InputFormatError, match=rf"run\.txt, line {len(lines)}: field 5"):
        rm.Run.from_trec(path)


_BODY = "".join(f"q{q} Q0 d{d}é 0 {d / 7:.4f} t\n" for q in range(30) for d in range(20))


@pytest.mark.parametrize("block_bytes", [700, 1 << 25], ids=["many blocks", "one block"])
@pytest.mark.parametrize(
    ("text", "by_blocks"),
    [
        ("# query Q0 doc rank score tag\n" + _BODY + "\n", True),
        ("\r\n# header\r\n" + _BODY.replace("\n", "\r\n") + "\r\n", True),
        ("\n" * 3 + _BODY.replace("t\nq7 ", "t\n\n# q7 next\nq7 ", 1), True),
        (_BODY.replace("t\n", "t\n\n"), True),  # a blank line after each: more than a few
        ("\t# indented header\n" + _BODY, True),
        ("# a note \x01\n" + _BODY, False),  # a control byte: the careful reader names it
        ("# header\n\rq0 Q0 x 0 1 t\n" + _BODY, False),  # a CR that ends no line
    ],
    ids=[
        "header and blank last line",
        "CR LF",
        "blank lines and a comment inside",
        "a blank line after each",
        "indented",
        "a control byte in a comment",
        "a lone CR",
    ],
)
def test_skipped_lines_told_by_their_first_byte_as_the_careful_reader_tells_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block_bytes: int, text: str, by_blocks: bool
) -> None:
    """A header comment or a blank last line is seen from the block's first and last bytes
    and dropped before the block is parsed once; comments and blank lines inside are told by
    each line's first byte, or, for lines that start with a space or a tab and for many
    dropped lines, by every byte. Ids beyond ASCII with a header comment are read by blocks
    too. The values are the careful reader's in every case."""
    monkeypatch.setattr(_trec_fast, "_BLOCK_BYTES", block_bytes)
    path = tmp_path / "run.txt"
    path.write_bytes(text.encode())
    assert (_fast_run(path) is not None) == by_blocks
    if "\x01" in text:
        with pytest.raises(rm.InputFormatError, match=r"run\.txt, line 1, column 10: U\+0001"):
            rm.Run.from_trec(path)
    elif "\rq0" in text:
        with pytest.raises(rm.InputFormatError, match=r"run\.txt, line 2"):
            rm.Run.from_trec(path)
    else:
        assert rm.Run.from_trec(path).to_dict() == _careful_run(path)


@pytest.mark.parametrize(
    ("head", "tail"), [("# header\n", ""), ("", "\n"), ("\n", ""), ("", "\r\n")]
)
def test_a_header_comment_and_a_blank_last_line_cost_no_second_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, head: str, tail: str
) -> None:
    """Told from the block's ends, the skipped lines are dropped before the block is parsed:
    a file of one block is parsed once, not once declined and once again."""
    calls = []
    parse = _trec_fast._read_block

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return parse(*args, **kwargs)

    monkeypatch.setattr(_trec_fast, "_read_block", counted)
    path = tmp_path / "run.txt"
    body = _BODY.replace("é", "")
    path.write_bytes(
        (head + (body.replace("\n", "\r\n") if tail == "\r\n" else body) + tail).encode()
    )
    assert _fast_run(path) is not None
    assert len(calls) == 1


@pytest.mark.parametrize("block_bytes", [150, 1 << 25], ids=["tiny blocks", "one block"])
@pytest.mark.parametrize("collide", [False, True], ids=["hashes", "every id one hash"])
def test_queries_that_come_back_are_grouped_on_bytes_as_the_careful_reader_reads_them(
    tmp_path: Path, block_bytes: int, collide: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs of one query that lie apart (in one block, across blocks, a run cut by a block's
    end) are grouped on the ids' bytes while the file is read: each query once, in the order
    first seen, its lines in file order. When ids share a hash the fast reader gives the
    file up and the careful reader reads it; a stream's batch gives its runs as they lie,
    and the strings' regrouping gives the same run. Qrels whose queries come back are read
    the same way."""
    from ragmetrics.formats import _query_codes

    monkeypatch.setattr(_trec_fast, "_BLOCK_BYTES", block_bytes)
    if collide:
        monkeypatch.setattr(_trec_fast, "hashes", lambda a, w: np.zeros(len(a), dtype=np.uint64))
        monkeypatch.setattr(_query_codes, "spread_hashes", lambda a: np.zeros(len(a), np.uint64))
    rng = random.Random(11)
    lines, judged = [], []
    widths = {f"q{i}": rng.choice([0, 0, 6, 7, 9, 20, 61, 63, 150, 253]) for i in range(25)}
    for _ in range(400):  # runs of 1-6 lines of 25 queries, ids of 2 to 256 bytes
        name = f"q{rng.randrange(25)}"
        q = name + "x" * widths[name]
        for _ in range(rng.randrange(1, 7)):
            doc = f"d{rng.randrange(40)}"
            lines.append(f"{q} Q0 {doc} 0 {rng.randrange(5)}.5 t\n")
            judged.append(f"{q} 0 {doc} 1\n")
    path, qrels_path = tmp_path / "run.txt", tmp_path / "qrels.txt"
    path.write_text("".join(lines))
    qrels_path.write_text("".join(dict.fromkeys(judged)))  # each judgment once
    fast = _fast_run(path)
    assert (fast is None) == collide  # read on bytes unless ids share a hash
    if fast is not None:
        assert len(set(fast[0])) == len(fast[0])  # each query once
    run, careful = rm.Run.from_trec(path), _careful_run(path)
    assert run.query_ids == tuple(careful)
    assert {q: dict(zip(run[q], run.scores(q) or (), strict=True)) for q in run} == careful
    assert sum(run.duplicates.values()) == len(lines) - sum(map(len, careful.values()))
    qrels = rm.Qrels.from_trec(qrels_path)
    assert {q: dict(qrels[q]) for q in qrels} == _careful_qrels(qrels_path)
    assert list(qrels) == list(_careful_qrels(qrels_path))
    # streamed in one batch, the blocks' runs are grouped the same way (on bytes), and when
    # a block is not plain (a tab), its chunk has no bytes and the strings regroup it all.
    # Past one batch (50 rows) the rows are spread over temporary files by query: on the
    # ids' bytes when the first block is plain (a careful chunk's strings hashed as their
    # bytes), on strings when it is not; either way each query lands in one part whole
    plain = list(lines)
    for tabbed in (None, len(lines) // 2, 0):
        lines = list(plain)
        if tabbed is not None:
            lines[tabbed] = lines[tabbed].replace(" Q0 ", "\tQ0 ")
        path.write_text("".join(lines))
        for batch_rows in (10**6, 50):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", rm.errors.RegroupedStreamWarning)
                parts = list(batches(trec_chunks(path, regroup=True), batch_rows, "run", None))
            assert (len(parts) > 1) == (batch_rows == 50)
            streamed = {
                q: dict(zip(r[q], r.scores(q) or (), strict=True)) for r in parts for q in r
            }
            assert sum(len(r) for r in parts) == len(careful)  # each query in one batch
            assert streamed == careful
            if batch_rows > 50:
                assert parts[0].query_ids == tuple(careful)


def test_a_spread_stream_decodes_the_query_ids_of_its_first_chunks_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chunk of the fast reader holds its query ids as bytes and decodes them to strings
    when first asked (split in two, each half decodes its own). A stream whose queries come
    back asks for them until it finds the query that comes back; the chunks it spreads
    over temporary files after that are grouped on their bytes and never decoded."""
    from ragmetrics.formats import _stream_io
    from ragmetrics.formats._stream_io import Chunk

    heads = np.array([b"q1", b"q22", b"q3"], dtype="S8")
    lengths = np.array([2, 1, 3], dtype=np.int64)
    chunk = Chunk(None, lengths, np.array([b"d"] * 6), np.zeros(6), heads)
    head, tail = chunk.split_last()
    assert (head.queries, tail.queries, chunk.queries) == (
        ["q1", "q22"],
        ["q3"],
        ["q1", "q22", "q3"],
    )
    assert (head.n_rows, tail.n_rows, head.n_runs) == (3, 3, 2)
    with pytest.raises(ValueError, match="query ids"):
        Chunk(None, lengths, [], None)

    monkeypatch.setattr(_trec_fast, "_BLOCK_BYTES", 4096)
    decoded: list[int] = []

    original = _stream_io.decode

    def counted(ids: np.ndarray) -> list[str]:
        decoded.append(len(ids))
        return original(ids)

    monkeypatch.setattr(_stream_io, "decode", counted)
    rng = random.Random(3)
    lines = [f"q{rng.randrange(300)} Q0 d{i} 0 {i % 7}.5 t\n" for i in range(6000)]
    path = tmp_path / "run.txt"
    path.write_text("".join(lines))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.errors.RegroupedStreamWarning)
        parts = list(batches(trec_chunks(path, regroup=True), 1000, "run", None))
    assert len(parts) > 1
    assert sum(decoded) < 1000  # the held chunks' runs, not the 6,000 rows' ids
    streamed = {q: dict(zip(r[q], r.scores(q) or (), strict=True)) for r in parts for q in r}
    assert streamed == _careful_run(path)


def test_fast_qrels_reader_equals_careful_reader(tmp_path: Path) -> None:
    rng = random.Random(5)
    lines = [
        f"q{q} 0 d{d} {rng.choice(['0', '1', '2', '-1', '+3', '007'])}"
        for q in range(50)
        for d in rng.sample(range(80), rng.randrange(1, 30))
    ]
    path = tmp_path / "qrels.txt"
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    assert (
        read_plain_trec_packed(path, n_columns=4, doc_col=2, value_col=3, integer=True) is not None
    )
    careful, _ = read_trec_maps(
        path, n_columns=4, doc_col=2, value_col=3, value_kind="int",
        layout="query_id iteration doc_id grade", on_repeat="same",
    )  # fmt: skip
    qrels = rm.Qrels.from_trec(path)
    assert {q: dict(qrels[q]) for q in qrels} == careful
    assert all(type(grade) is int for q in qrels for grade in qrels[q].values())


@pytest.mark.parametrize("lone", [None, "x", "-", "+", "."])
def test_fields_of_one_character_read_as_int_and_float_read_them(tmp_path: Path, lone: str) -> None:
    """Grades and scores that are all one character (qrels graded 0 to 9) are read as the
    digits they are, ints for grades and floats for scores; a lone character that is not a
    digit is not a number, and the careful reader names its line."""
    rng = random.Random(2)
    grades = [str(rng.randrange(10)) for _ in range(3_000)]
    if lone is not None:
        grades[2_345] = lone
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels_path.write_text("".join(f"q{i // 30} 0 d{i} {g}\n" for i, g in enumerate(grades)))
    run_path.write_text("".join(f"q{i // 30} Q0 d{i} 0 {g} t\n" for i, g in enumerate(grades)))
    if lone is not None:
        with pytest.raises(rm.RagMetricsError, match="line 2346"):
            rm.Qrels.from_trec(qrels_path)
        with pytest.raises(rm.RagMetricsError, match="line 2346"):
            rm.Run.from_trec(run_path)
        return
    fast = read_plain_trec_packed(qrels_path, n_columns=4, doc_col=2, value_col=3, integer=True)
    assert fast is not None and fast[3].dtype == np.int64
    assert fast[3].tolist() == [int(g) for g in grades]
    scores = _fast_run(run_path)
    assert scores is not None and scores[3].dtype == np.float64
    assert scores[3].tolist() == [float(g) for g in grades]
    qrels = rm.Qrels.from_trec(qrels_path)
    assert all(type(grade) is int for q in qrels for grade in qrels[q].values())


def test_conflicting_grades_still_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 d1 1\nq1 0 d2 0\nq1 0 d1 2\n", encoding="ascii")
    with pytest.raises(rm.InputFormatError, match=r"qrels\.txt, line 3: 'd1' is judged twice"):
        rm.Qrels.from_trec(path)


def test_nan_score_still_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 nan t\n", encoding="ascii")
    with pytest.raises(rm.InputFormatError, match=r"run\.txt, line 2: the score is NaN"):
        rm.Run.from_trec(path)


_REAL_FILES = [
    ("cacm", "qrels.cacm.txt"),
    ("cacm", "cacm-bm25.run.txt"),
    ("trec-qrels", "qrels.dl19-passage.txt"),
    ("trec-qrels", "qrels.rag24.test.txt"),
    ("trec_eval", "qrels.test"),
    ("trec_eval", "qrels.rel_level"),
    ("trec_eval", "qrels.123"),
    ("trec_eval", "results.test"),
    ("trec_eval", "results.comment.test"),
    ("trec_eval", "results.trunc"),
]


_CRLF_RUNS = {
    "CR LF": "q1 Q0 d1 1 0.5 t\r\nq1 Q0 d2 2 0.25 t\r\nq2 Q0 d1 1 -1e-05 t\r\n",
    "a space before CR LF": "q1 Q0 d1 1 0.5 t \r\nq1 Q0 d2 2 0.25 t\r\n",
    "a CR alone after a space": "q1 Q0 d1 1 0.5 \r\nq1 Q0 d2 2 0.25 t\r\n",
    "a CR inside a line": "q1 Q0 d1 1 0.5 t\rx\r\nq1 Q0 d2 2 0.25 t\r\n",
    "a CR at the end of the file": "q1 Q0 d1 1 0.5 t\r\nq1 Q0 d2 2 0.25 t\r",
    "CR LF, then LF": "q1 Q0 d1 1 0.5 t\r\nq1 Q0 d2 2 0.25 t\n",
    "LF, then CR LF": "q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.25 t\r\n",
    "a CR as the tag": "q1 Q0 d1 1 0.5 \r\r\nq1 Q0 d2 2 0.25 t\r\n",
    "a header comment, CR LF": "# run\r\nq1 Q0 d1 1 0.5 t\r\nq1 Q0 d2 2 0.25 t\r\n",
    "a blank line, CR LF": "q1 Q0 d1 1 0.5 t\r\n\r\nq2 Q0 d2 2 0.25 t\r\n\r\n",
}
_CRLF_QRELS = {
    "CR LF": "q1 0 d1 1\r\nq1 0 d2 0\r\nq2 0 d1 3\r\n",
    "a grade of CR": "q1 0 d1 1\r\nq1 0 d2 \r\n",
    "a grade before CR CR LF": "q1 0 d1 1\r\r\nq1 0 d2 0\r\n",
}


@pytest.mark.parametrize("name", [*_CRLF_RUNS, *(f"qrels: {n}" for n in _CRLF_QRELS)])
def test_cr_lf_line_ends_are_read_as_the_careful_reader_reads_them(
    tmp_path: Path, name: str
) -> None:
    """A CR before each LF is read as the end of its line's last field and cut off it; a CR
    anywhere else, or one that leaves a field empty, gives the careful reader's answer."""
    is_qrels = name.startswith("qrels: ")
    text = _CRLF_QRELS[name.removeprefix("qrels: ")] if is_qrels else _CRLF_RUNS[name]
    path = tmp_path / ("qrels.txt" if is_qrels else "run.txt")
    path.write_bytes(text.encode("ascii"))
    _reads_as_the_careful_reader(path, is_qrels=is_qrels)
    if name in ("CR LF", "qrels: CR LF", "a header comment, CR LF", "a blank line, CR LF"):
        # and the fast reader read it
        n_columns, value_col = (4, 3) if is_qrels else (6, 4)
        fast = read_plain_trec_packed(
            path, n_columns=n_columns, doc_col=2, value_col=value_col, integer=is_qrels
        )
        assert fast is not None


def _careful_qrels(path: Path) -> dict[str, dict[str, int]]:
    maps, _ = read_trec_maps(
        path, n_columns=4, doc_col=2, value_col=3, value_kind="int",
        layout="query_id iteration doc_id grade", on_repeat="same",
    )  # fmt: skip
    return maps


def _as_dicts(path: Path, *, is_qrels: bool) -> dict[str, dict[str, float]]:
    if is_qrels:
        return {q: dict(docs) for q, docs in rm.Qrels.from_trec(path).items()}
    run = rm.Run.from_trec(path)
    return {q: dict(zip(run[q], run.scores(q) or (), strict=True)) for q in run}


@pytest.mark.parametrize("parts", _REAL_FILES, ids=["/".join(p) for p in _REAL_FILES])
def test_real_files_read_the_same_either_way(parts: tuple[str, str]) -> None:
    """Whichever reader takes a real file, the result (or the error) is the careful one's."""
    _reads_as_the_careful_reader(shared_file(*parts), is_qrels="qrels" in parts[1])


def _reads_as_the_careful_reader(path: Path, *, is_qrels: bool) -> None:
    """``rm.Run`` / ``rm.Qrels`` read ``path`` as the careful reader does, or fail with its
    error, word for word."""
    try:
        expected: dict[str, Any] = _careful_qrels(path) if is_qrels else _careful_run(path)
    except rm.InputFormatError as error:
        with pytest.raises(rm.InputFormatError, match=re.escape(str(error))):
            _as_dicts(path, is_qrels=is_qrels)
        return
    assert _as_dicts(path, is_qrels=is_qrels) == expected


def _fields_buffer(
    fields: list[str], lead: str = "q" * 16
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The fields as a block the reader would see: ``lead``, then the fields."""
    text = (lead + " " + " ".join(fields) + "\n").encode("ascii")
    padded = np.frombuffer(text + bytes(256), dtype=np.uint8)
    lengths = np.array([len(f) for f in fields])
    starts = len(lead) + 1 + np.concatenate(([0], np.cumsum(lengths + 1)[:-1]))
    return padded, starts, starts + lengths


@pytest.mark.parametrize("integer", [False, True], ids=["scores", "grades"])
def test_fixed_point_numbers_equal_python_parsing(integer: bool) -> None:
    # blocks of short decimal fields are parsed by whole words; any other block is declined
    # (None) and parsed column by column: both must equal float() / int()
    rng = random.Random(11)
    odd = [
        "5",
        "-0.0",
        ".5",
        "+1.25",
        "1e5",
        "-",
        "+.5",
        "5.",
        "1.2.3",
        "--1",
        "0.1234567890123456",
    ]
    fast = long_blocks = long_fast = 0
    for _ in range(1500):
        if integer:
            fields = [str(rng.randint(-(10 ** rng.randint(0, 16)), 10 ** rng.randint(0, 16)))]
            fields += [str(rng.randint(-999, 999)) for _ in range(rng.randint(0, 40))]
        elif rng.random() < 0.5:
            form = f"{{:.{rng.choice([0, 1, 3, 6, 9, 14])}f}}"
            fields = [
                form.format(rng.uniform(-1, 1) * 10 ** rng.randint(0, 8))
                for _ in range(rng.randint(1, 40))
            ]
        elif rng.random() < 0.6:  # as Python writes floats (repr): as many decimals as needed
            fields = [
                repr(round(rng.uniform(-1, 1) * 10 ** rng.randint(0, 8), rng.randint(0, 9)))
                for _ in range(rng.randint(1, 40))
            ]
        elif rng.random() < 0.4:  # floats of all 17 digits, as repr writes scores
            fields = [
                repr(rng.uniform(-1, 1) * 10.0 ** rng.randint(-7, 17))
                for _ in range(rng.randint(1, 40))
            ]
            long_blocks += max(map(len, fields)) > 16
        elif rng.random() < 0.5:  # one scientific form for the block, as %e writes scores
            form = rng.choice([f"{{:.{rng.randint(0, 14)}e}}", "{:E}"])
            low, high = sorted(rng.choice([(-30, 0), (-8, 8), (-99, 99), (-150, 150)]))
            fields = [
                form.format(rng.uniform(-1, 1) * 10.0 ** rng.uniform(low, high))
                for _ in range(rng.randint(1, 40))
            ]
        else:  # scientific, as %e, %g and repr write small and large scores
            fields = [
                rng.choice([f"{{:.{rng.randint(0, 16)}e}}", "{:g}", "{!r}", "{:E}"]).format(
                    rng.uniform(-1, 1) * 10.0 ** rng.randint(-30, 30)
                )
                for _ in range(rng.randint(1, 40))
            ]
        if rng.random() < 0.3:
            fields[rng.randrange(len(fields))] = rng.choice([*odd, *_SCIENTIFIC, "+3", "-0"])
        # fields near the block's start (no full word before them) are read apart
        padded, starts, ends = _fields_buffer(fields, lead=rng.choice(["", "q", "q" * 16]))
        expected = [int(f) if integer else float(f) for f in fields if _parses(f, integer)]
        fixed = _trec_fast._fixed_point(padded, starts, ends, integer)
        if fixed is not None:
            fast += 1
            long_fast += max(map(len, fields)) > 16
            assert len(expected) == len(fields)
            assert fixed.tolist() == expected
            assert np.signbit(fixed).tolist() == np.signbit(np.array(expected, float)).tolist()
        parsed = _trec_fast._numbers(padded, starts, ends, integer)
        if len(expected) == len(fields):
            assert parsed is not None and parsed.tolist() == expected
        else:
            assert parsed is None  # not a number: the careful reader names the line
    assert fast > (300 if integer else 500)  # the word-wise path did run
    assert long_fast >= (0 if integer else long_blocks)  # and read the fields of 17 digits
    assert integer or long_blocks > 50


_SCIENTIFIC = [
    "1234567890123456", "1E+05", "1.e5", ".5e-3", "-0e-5", "+1e0", "1e0005", "1e00005", "1e",
    "e5", "1e+-5", "1e5.5", "1ee5", "1e5-", "9007199254740993e-22", "9007199254740993e-3",
    "12345678901234567e-18", "1e-400", "1e400", "1e22", "1e23", "-1.5E-22", "4.9e-324",
    "inf", "-Infinity", "0x1p3",
]  # fmt: skip


def _parses(field: str, integer: bool) -> bool:
    try:
        (int if integer else float)(field)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize(
    "fields",
    [
        ["-0.000000", "0.000000"],
        [".5", "-.5", "+.5"],
        ["5.", "60."],
        ["999999999999999"],
        ["0.5", "0.25", "-12.125", "3"],
        ["0.123456", "5", "-7"],
        ["0.1234567", "12345.678901", "-1.5", "123456789.5"],
        ["1234567.25", "0.000000000001"],
        ["4.859200e-06", "-1.000000e+00", "9.999999E+21"],
        ["-0.000000e+00", "5e-05", "1.5e+03"],
        ["1.234568e-30", "1.5e+05", "7.0e+22", "7.0e+23"],
        ["9999999999999999", "-12345.891234567", "0.5"],
        ["2.064399999999e-06", "1.8577e-06", "0.000123", "-1.2345678901234e-11"],
        ["9007199254740993e-20", "-2.5e-05", "0.000123"],
        ["0.16191238247649528", "0.4880576115223044", "0.5", "-12.345678901234567"],
        ["0.009921984396879375", "0.00012345678901234567", "+0.0000000000000000001"],
        [
            "123456789012345678",
            "1234567890123456789",
            "9999999999999999999",
            "1",
            "0.9999999999999999999",
            "12345678901234567890123",
        ],
        ["0.12345678901234567891", ".123456789012345678", "123456789012345678."],
        ["7.070330000000001e-06", "1.7501e-05", "-2.0643999999999997e-06", "5e-05"],
        ["1.2345678901234567e+20", "1.2345678901234567e-25", "9.999999999999999e+22"],
    ],
    ids=[
        "signed zero",
        "no integer digit",
        "no decimal digit",
        "15 digits",
        "decimals differ",
        "no dot in some",
        "dot in either word",
        "dot in the first word",
        "exponents",
        "exponents: signed zero, no dot",
        "exponents: powers past 10**22 (by float())",
        "16 digits (past 53 bits)",
        "exponents mixed with decimals",
        "16 digits and an exponent",
        "17 digits, as repr writes them",
        "leading zeros past 18 digits",
        "integers past 18 digits (by float())",
        "past 18 digits, no integer or decimal digit",
        "17 digits before an exponent",
        "17 digits, powers past the extended division (by float())",
    ],
)
def test_fixed_point_edge_forms(fields: list[str]) -> None:
    padded, starts, ends = _fields_buffer(fields)
    fixed = _trec_fast._fixed_point(padded, starts, ends, False)
    assert fixed is not None
    assert fixed.tolist() == [float(f) for f in fields]
    assert np.signbit(fixed).tolist() == [f.startswith("-") for f in fields]


@pytest.mark.parametrize(
    "fields",
    [
        ["0.123456789012345678901234"],
        ["0.12345678901234567", "1e5"],
        ["1e5"],
        ["0.5", "-"],
        ["1.2.5"],
        ["0.25", "12.5.1234567"],
        ["1-5"],
        ["--15"],
        ["0.16191238247649528", "0.123456789.12345678"],
        ["0.16191238247649528", "-0.12345678901234-567"],
        ["0.16191238247649528", "0.1234567890123456+7"],
        ["1.23456789012345678901234e-05"],
        ["1e-05", "1e-100"],
        ["1.25e-100", "3.5e+123"],
        ["1.5e-05", "1.5e+5"],
        ["1.5x-05"],
        ["e-05"],
        ["1.2.5e-05"],
        ["1.5e-0x"],
    ],
    ids=[
        "25 characters",
        "17 characters and an exponent of one digit",
        "exponent",
        "sign alone",
        "two dots",
        "two dots in two words",
        "sign inside",
        "two signs",
        "two dots in 17 digits",
        "a sign inside 17 digits",
        "a sign late in 17 digits",
        "25 characters before an exponent (read column by column)",
        "exponents of two widths",
        "exponents of three digits (read column by column)",
        "an exponent of one digit",
        "no exponent mark",
        "nothing before the exponent",
        "two dots before an exponent",
        "a letter in the exponent",
    ],
)
def test_fixed_point_declines_other_layouts(fields: list[str]) -> None:
    padded, starts, ends = _fields_buffer(fields)
    assert _trec_fast._fixed_point(padded, starts, ends, False) is None


@pytest.mark.parametrize("block_bytes", [300, 1 << 25], ids=["small blocks", "one block"])
def test_fixed_decimal_run_reads_like_the_careful_reader(
    tmp_path: Path, block_bytes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the usual run file: every score with six decimals (read word by word)
    monkeypatch.setattr(_trec_fast, "_BLOCK_BYTES", block_bytes)
    rng = random.Random(2)
    path = tmp_path / "run.txt"
    lines = [
        f"q{q} Q0 d{rng.randrange(500)} {rank} {rng.uniform(-30, 30):.6f} bm25"
        for q in range(40)
        for rank in range(1, 30)
    ]
    path.write_text("\n".join(lines) + "\n")
    careful = _careful_run(path)
    run = rm.Run.from_trec(path)
    assert run.to_dict() == careful


@pytest.mark.parametrize("n_threads", [1, 3], ids=["one thread", "three threads"])
@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_many_blocks_plain_or_gzip_keep_their_order_and_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compressed: bool, n_threads: int
) -> None:
    """A file of many blocks, plain or gzip, parsed on one thread or several: the values
    come in file order, equal to the careful reader's; a block that is not plain (a comment
    line half-way) hands the file to the careful reader, and no parsing thread outlives the
    read; a line too long in the last block and a truncated gzip stream are named."""
    import gzip
    import threading

    from ragmetrics._util import threads

    monkeypatch.setattr(_trec_fast, "_BLOCK_BYTES", 200)  # many blocks
    monkeypatch.setattr(threads, "_THREADS", n_threads)
    running = threading.active_count()
    rng = random.Random(4)
    lines = [f"q{q} Q0 d{d} {d} {rng.random():.5f} t\n" for q in range(60) for d in range(9)]
    text = "".join(lines).encode()

    def write(name: str, data: bytes) -> Path:
        path = tmp_path / name
        path.write_bytes(gzip.compress(data) if compressed else data)
        return path

    run = rm.Run.from_trec(write("run.txt", text))
    assert run.to_dict() == _careful_run(tmp_path / "run.txt")
    assert list(run)[:3] == ["q0", "q1", "q2"]
    # a comment line half-way: the fast reader stops, the careful one reads it all
    commented = text.replace(b"q30 Q0 d0", b"# a note\nq30 Q0 d0", 1)
    assert rm.Run.from_trec(write("noted.txt", commented)).to_dict() == run.to_dict()
    assert threading.active_count() == running
    too_long = text + b"q99 Q0 " + b"d" * (1 << 20) + b" 1 0.5 t\n"  # past the line rule
    with pytest.raises(rm.InputFormatError, match=r"line 541"):
        rm.Run.from_trec(write("long.txt", too_long))
    if compressed:
        whole = gzip.compress(text)
        (tmp_path / "cut.txt").write_bytes(whole[: len(whole) // 2])
        with pytest.raises(rm.InputFormatError, match="corrupt or truncated"):
            rm.Run.from_trec(tmp_path / "cut.txt")


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_line_number_counts_the_lines_before_an_offset(tmp_path: Path, compressed: bool) -> None:
    """``line_number`` (the line an error names, read again from the file's start): every
    offset of a small file, offsets past its 1 MB reading blocks, past its end, and a file
    that cannot be opened again (0)."""
    import gzip

    short = b"q1 Q0 a 1 0.5 t\n\nq1 Q0 bb 2 0.4 t\nq2 Q0 c 1 0.3 t\n"
    long_lines = [b"q%d Q0 d 1 0.5 t\n" % i for i in range(150_000)]  # 2.4 MB
    for name, data in (("short.txt", short), ("long.txt", b"".join(long_lines))):
        path = tmp_path / name
        path.write_bytes(gzip.compress(data) if compressed else data)
        offsets = range(len(data) + 1) if data is short else (0, 1 << 20, len(data) - 5)
        for offset in offsets:
            assert _trec_fast.line_number(path, offset) == data[:offset].count(b"\n") + 1
        beyond = _trec_fast.line_number(path, len(data) + 1000)
        assert beyond == data.count(b"\n") + 1  # past the end: the lines there are
    assert _trec_fast.line_number(tmp_path / "gone.txt", 10) == 0
    assert _trec_fast.line_number(object(), 10) == 0


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("q1 Q0 d1 1 0.5\nt\nq1 Q0 d2 2 0.4 t\n", 1),  # a record's last field on the next line
        ("q1 Q0 d1 1 0.5 t q1\nQ0 d2 2 0.4 t\n", 2),  # a newline inside the next record
        ("q1 Q0 d1\n1 0.5 t\nq1 Q0 d2 2 0.4 t\n", 1),  # a record cut in half
        # as many newlines as records, but the first after a record's fifth field
        ("q1 Q0 d1 1 0.5\nt q1 Q0 d2 2 0.4 t\n", 1),
        # as many newlines as records, none right after a record (a trailing space)
        ("q1 Q0 d1 1 0.5 t q1\nQ0 d2 2 0.4 t \n", 2),
    ],
)
def test_a_record_split_over_lines_is_refused_by_both_readers(
    tmp_path: Path, text: str, line: int
) -> None:
    """Six fields a record in all, but a newline that is not right after a record's last
    field: the fast reader declines the block and the careful reader names the line."""
    path = tmp_path / "run.txt"
    path.write_text(text)
    assert _fast_run(path) is None
    with pytest.raises(rm.InputFormatError, match=rf"run\.txt, line {line}: expected at least 6"):
        rm.Run.from_trec(path)


_NOT_NUMBERS = ["1/234567", "12/34567", "0.1/2345", "/1234567", "1:5", "0.5:", ":", "9:.5",
                "1.2:3", "0.12345:", "12345678:", "1234567/.5"]  # fmt: skip


@pytest.mark.parametrize("bad", _NOT_NUMBERS)
@pytest.mark.parametrize(
    "neighbours",
    [("0.250000", "0.125000"), ("0.25", "0.125"), ("0.16191238247649528", "0.4880576115223044")],
    ids=["decimals", "repr", "repr of 17 digits"],
)
def test_bytes_next_to_the_digits_and_the_dot_are_not_read_as_them(
    tmp_path: Path, bad: str, neighbours: tuple[str, str]
) -> None:
    """``/`` and ``:`` sit on either side of the digits in ASCII, and ``/`` is ``.`` with its
    lowest bit flipped: a score holding one is refused with its line, whichever word-wise
    path (every row's dot at one byte, or each row's own) reads the block."""
    path = tmp_path / "run.txt"
    first, second = neighbours
    path.write_text(f"q1 Q0 a 1 {first} t\nq1 Q0 b 2 {second} t\nq1 Q0 c 3 {bad} t\n")
    with pytest.raises(rm.InputFormatError, match=r"run\.txt, line 3: field 5 must be"):
        rm.Run.from_trec(path)


# bytes beside the exponent's: "d" and "f" beside "e", "," and "*" beside "+" and "-",
# "/" and ":" beside the digits; a mark or a sign alone; an exponent in a wrong place
_NOT_EXPONENTS = ["1.5d-05", "1.5f-05", "1.5e,05", "1.5e*05", "1.5e-0/", "1.5e-:5", "1.5e/05",
                  "1.5e-0:", "1.5e+1:", "1.5e-05e", "1.5-e05", "e-05", "-e-05", ".e-05",
                  "1.5e-05.", "1.5e--5", "1.5ee05", "1.5E-0x", "1.5e-0\x7f"]  # fmt: skip


@pytest.mark.parametrize("bad", _NOT_EXPONENTS)
@pytest.mark.parametrize(
    "neighbours",
    [
        ("2.500000e-05", "1.250000e-06"),
        ("2.5e-05", "1.2500000000000001e-06"),
        ("0.25", "0.125"),
        ("7.070330000000001e-06", "0.16191238247649528"),
    ],
    ids=["%e", "repr", "decimals", "repr of 17 digits"],
)
def test_bytes_next_to_an_exponents_bytes_are_not_read_as_them(
    tmp_path: Path, bad: str, neighbours: tuple[str, str]
) -> None:
    """Exponents are read apart from the digits before them: a score whose exponent holds a
    byte beside the ones it may hold is refused with its line, beside scores of either
    form."""
    path = tmp_path / "run.txt"
    first, second = neighbours
    path.write_text(f"q1 Q0 a 1 {first} t\nq1 Q0 b 2 {second} t\nq1 Q0 c 3 {bad} t\n")
    with pytest.raises(rm.InputFormatError, match=r"run\.txt, line 3[:,] "):
        rm.Run.from_trec(path)


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("block_bytes", [200, 1 << 21])
@pytest.mark.parametrize("mark", [b"", b"\xef\xbb\xbf"], ids=["no BOM", "BOM"])
def test_a_line_without_end_is_named_before_it_is_read_whole(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    compressed: bool,
    block_bytes: int,
    mark: bytes,
) -> None:
    """A file whose last 3 MB hold no line end: the fast reader stops reading at the line
    rule's length and names the file and the line's number (counted over every block read
    before it, a byte-order mark included: it named line 540 here), itself, not by handing
    over to the careful reader."""
    import gzip

    monkeypatch.setattr(_trec_fast, "_BLOCK_BYTES", block_bytes)
    lines = [f"q{q} Q0 d{d} {d} 0.{d}5 t\n" for q in range(60) for d in range(9)]
    data = mark + "".join(lines).encode() + b"x" * (3 << 20)
    path = tmp_path / "endless.txt"
    path.write_bytes(gzip.compress(data) if compressed else data)
    message = r"endless\.txt, line 541: the line is longer than 1,048,576 bytes"
    with pytest.raises(rm.InputFormatError, match=message):
        _fast_run(path)
    with pytest.raises(rm.InputFormatError, match=message):
        rm.Run.from_trec(path)


def test_a_handle_without_a_name_is_called_the_input() -> None:
    import io

    endless = io.BytesIO(b"q1 Q0 d 1 0.5 t\n" + b"x" * (3 << 20))
    with pytest.raises(rm.InputFormatError, match=r"^the input, line 0: the line is longer"):
        list(_trec_fast._blocks(endless, []))


@pytest.mark.parametrize("end", ["\n", "\r\n"], ids=["LF", "CRLF"])
def test_a_line_of_the_longest_length_allowed_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, end: str
) -> None:
    """A line of exactly the line rule's length (without its end) is read, whatever block
    it starts in: with 1-byte blocks the rest of the line is read past each block."""
    from ragmetrics.formats._rules import MAX_LINE_BYTES

    monkeypatch.setattr(_trec_fast, "_BLOCK_BYTES", 1)
    prefix, suffix = "q1 Q0 ", " 1 0.5 t"
    doc = "d" * (MAX_LINE_BYTES - len(prefix) - len(suffix))
    path = tmp_path / "wide.txt"
    path.write_text(f"q0 Q0 a 1 0.5 t{end}{prefix}{doc}{suffix}{end}q2 Q0 b 1 0.5 t{end}")
    assert rm.Run.from_trec(path).to_dict() == {
        "q0": {"a": 0.5},
        "q1": {doc: 0.5},
        "q2": {"b": 0.5},
    }


def test_standard_input_is_read_once_by_the_careful_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    """``-`` cannot be read twice: the fast reader leaves it to the careful one, which reads
    every line, even of a block the fast reader would have declined (a comment)."""
    import io
    import types

    text = b"# a note\nq1 Q0 a 1 0.5 t\nq1 Q0 b 2 0.25 t\nq2 Q0 c 1 0.125 t\n"
    monkeypatch.setattr("sys.stdin", types.SimpleNamespace(buffer=io.BytesIO(text)))
    assert _fast_run("-") is None
    assert rm.Run.from_trec("-").to_dict() == {"q1": {"a": 0.5, "b": 0.25}, "q2": {"c": 0.125}}


@given(st.text(alphabet="ab \t\n\r", min_size=1, max_size=40))
def test_fields_are_found_alike_with_one_separator_or_many(text: str) -> None:
    """Each field's start and end, found from the separators alone (one between fields, none
    before the first) or from every flip of separator and not, are the same."""
    data = np.frombuffer(text.encode(), dtype=np.uint8)
    space = np.ones(len(data) + 2, dtype=bool)
    np.less_equal(data, 32, out=space[1:-1])
    edges = np.flatnonzero(space[1:] != space[:-1])
    ends, starts = _trec_fast._fields(space)
    if starts is None:  # each field starts right after the one before it ends
        starts = _trec_fast._starts(ends, None, 0, 1)
    assert starts.tolist() == edges[0::2].tolist()
    assert ends.tolist() == edges[1::2].tolist()


@pytest.mark.parametrize(
    "doc", ["uuid", "short", "mixed"], ids=["UUIDs", "short ids", "ids of mixed widths"]
)
@pytest.mark.parametrize("scores", ["%.6f", "repr", "grades"])
def test_a_parse_keeps_nothing_of_its_blocks_buffer(
    doc: str, scores: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each block's buffer is read into again for a later block, so what a parse returns
    must be copies: scribbling over the buffer after the parse changes nothing of it."""
    import io
    import uuid

    rng = random.Random(7)
    lines = []
    for q in range(300):
        for rank in range(1, 8):
            if doc == "uuid":
                name = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            else:
                name = (
                    f"d{rng.randrange(10 ** rng.choice([1, 3, 6, 12] if doc == 'mixed' else [3]))}"
                )
            value = {"%.6f": f"{rng.random():.6f}", "repr": repr(rng.uniform(-5, 5)),
                     "grades": str(rng.randrange(4))}[scores]  # fmt: skip
            lines.append(f"q{q} Q0 {name} {rank} {value} t\n")
    data = "".join(lines).encode()
    integer = scores == "grades"
    monkeypatch.setattr(_trec_fast, "_BLOCK_BYTES", 5000)
    blocks = list(_trec_fast._blocks(io.BytesIO(data), []))  # one buffer each: none spare
    assert len(blocks) > 4
    for block in blocks:
        parsed = _trec_fast._read_block(block, 6, 2, 4, integer)
        assert parsed is not None
        parsed = parsed[:4]  # the four columns
        kept = [column.copy() for column in parsed]
        block.buffer[:] = np.frombuffer(b"9.5 x\n", dtype=np.uint8)[
            np.arange(len(block.buffer)) % 6
        ]
        assert [column.tobytes() for column in parsed] == [column.tobytes() for column in kept]


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_columns_are_whole_when_the_file_changes_its_shape_half_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compressed: bool
) -> None:
    """Each column is copied into one array sized from the lines read so far. A file whose
    second half has far shorter lines (more rows than that size), then wider doc ids, then
    integer-looking scores, still reads as the careful reader reads it."""
    import gzip

    monkeypatch.setattr(_trec_fast, "_BLOCK_BYTES", 512)
    rng = random.Random(11)
    lines = [f"query{q:04d} Q0 {'d' * 30}{q}-{r} {r} {rng.random():.9f} long-tag\n"
             for q in range(40) for r in range(5)]  # fmt: skip
    lines += [f"s{q} Q0 e{r} {r} {r} t\n" for q in range(40) for r in range(20)]
    lines += [f"w{q} Q0 {'w' * 70}{r} {r} 0.{r}5 t\n" for q in range(10) for r in range(5)]
    data = "".join(lines).encode()
    path = tmp_path / "shapes.txt"
    path.write_bytes(gzip.compress(data) if compressed else data)
    packed = _fast_run(path)
    assert packed is not None
    queries, lengths, docs, scores = packed
    assert queries == list(dict.fromkeys(line.split()[0] for line in lines))
    assert sum(lengths) == len(docs) == len(scores) == len(lines)
    assert [d.decode() for d in docs.tolist()] == [line.split()[2] for line in lines]
    assert scores.tolist() == [float(line.split()[4]) for line in lines]
    assert rm.Run.from_trec(path).to_dict() == _careful_run(path)


def test_rows_go_to_one_array_while_they_fit() -> None:
    rows = _trec_fast._Rows()
    rows.append(np.array([b"ab", b"c"], dtype="S8"), 3)
    rows.append(np.array([b"d"], dtype="S4"), 2)  # narrower: zero-padded into the array
    first = rows.array
    rows.append(np.array([b"e", b"f"], dtype="S8"), 0)
    assert rows.array is first and not rows.done  # the estimate of 3 more held
    rows.append(np.array([b"wider-than-8"], dtype="S16"), 0)  # a new, wider array
    rows.append(np.array([b"g"] * 5, dtype="S8"), 0)  # more rows than expected
    joined = rows.joined()
    assert joined.dtype == np.dtype("S16")
    assert joined.tolist() == [b"ab", b"c", b"d", b"e", b"f", b"wider-than-8", *[b"g"] * 5]


def test_an_estimate_too_large_to_allocate_holds_the_rows_it_has() -> None:
    """A first block of short lines may promise far more rows than the file holds; when no
    array of that size can be had, the rows at hand get an array of their own."""
    rows = _trec_fast._Rows()
    ids = np.array([b"a" * 36, b"b" * 36], dtype="S40")
    rows.append(ids, 1 << 45)  # 1.4 PB of ids
    rows.append(ids[:1], 0)
    assert rows.joined().tolist() == [b"a" * 36, b"b" * 36, b"a" * 36]
