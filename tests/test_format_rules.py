"""The line, id and number rules of every reader (formats._rules), function by function:
exact results and exact messages, so that a changed rule or a lost hint fails here."""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import pytest

from ragmetrics.errors import FormatLossWarning, InputFormatError
from ragmetrics.formats import _rules as rules


def test_describe_names_every_character() -> None:
    assert rules.describe("\xa0") == "U+00A0 NO-BREAK SPACE"
    assert rules.describe("\t") == "U+0009 TAB"
    assert rules.describe("\ufeff") == "U+FEFF BYTE ORDER MARK"
    assert rules.describe("\x80") == "U+0080"  # no name at all
    assert rules.describe("\U0001f600") == "U+1F600 GRINNING FACE"


def test_ids_a_trec_file_cannot_hold() -> None:
    assert rules.unwritable_id_reason("") == "it is empty"
    assert rules.unwritable_id_reason("a b") == "it holds U+0020 SPACE"
    assert rules.unwritable_id_reason("ab\tc") == "it holds U+0009 TAB"
    assert rules.unwritable_id_reason("a\u2028") == "it holds U+2028 LINE SEPARATOR"
    assert rules.unwritable_id_reason("doc-1/é") is None
    rules.check_trec_ids(["a", "b-2"], "doc id", "run.trec")
    with pytest.raises(InputFormatError) as caught:
        rules.check_trec_ids(["a", "b c"], "doc id", Path("out/run.trec"))
    assert str(caught.value) == (
        "Cannot write doc id 'b c' to the TREC file 'out/run.trec': it holds U+0020 SPACE, "
        "and a TREC file separates fields by whitespace, so it would read back as other "
        "data. Write JSON or Parquet instead (to_json, to_parquet), which keep any id."
    )


def test_the_format_loss_warning_names_the_queries() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rules.warn_format_loss([f"q{i}" for i in range(7)], "no result", Path("r.trec"))
    assert [w.category for w in caught] == [FormatLossWarning]
    assert str(caught[0].message) == (
        "7 queries have no result ('q0', 'q1', 'q2', 'q3', 'q4', ...); a TREC file has no "
        "line for them, so 'r.trec' reads back without them (as missing queries). Write "
        "JSON or Parquet (to_json, to_parquet) to keep them."
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rules.warn_format_loss(["q1"], "no result", "r.trec")
    assert "1 queries have no result ('q1'); a TREC" in str(caught[0].message)


def test_path_names() -> None:
    assert rules.path_name(Path("a/b.trec")) == "a/b.trec"
    assert rules.path_name("-") == "-"
    assert rules.path_name(3) == "3"


def test_numbers_are_ascii() -> None:
    assert rules.parse_int("12") == 12
    assert rules.parse_int("-3") == -3
    assert rules.parse_int(str(2**63 - 1)) == 2**63 - 1
    assert rules.parse_int(str(-(2**63))) == -(2**63)
    for bad in ("1_0", "١", "１", str(2**63), str(-(2**63) - 1)):
        with pytest.raises(ValueError, match=r"\S"):
            rules.parse_int(bad)
    assert rules.parse_float("1e3") == 1000.0
    assert rules.parse_float("-0.5") == -0.5
    for bad in ("1_0.5", "٣", "１.0"):
        with pytest.raises(ValueError, match=r"\S"):
            rules.parse_float(bad)
    assert rules.ascii_int(" 12 ") == 12
    assert rules.ascii_int("+5") == 5
    assert rules.ascii_int("-5") == -5
    assert rules.ascii_int("-0") == 0
    for bad in ("", " ", "+", "-", "1.0", "١٢", "1_0", "12a", "++1"):
        assert rules.ascii_int(bad) is None, bad
    assert rules.cli_int("7") == 7
    with pytest.raises(
        argparse.ArgumentTypeError, match=r"^expected an integer in ASCII digits, got '٧'$"
    ):
        rules.cli_int("٧")
    assert rules.cli_float(" 0.25 ") == 0.25
    with pytest.raises(argparse.ArgumentTypeError, match=r"^expected a number in ASCII, got 'x'$"):
        rules.cli_float("x")


def test_trec_records_follow_the_line_rule() -> None:
    lines = ["q1 0 a 1\r\n", "\n", "# a comment\n", "  \t \n", "q1\t0  b 2", "q2 0 c 0\r"]
    assert list(rules.trec_records(lines, "f", first_line=10)) == [
        (10, ["q1", "0", "a", "1"]),
        (14, ["q1", "0", "b", "2"]),
        (15, ["q2", "0", "c", "0"]),
    ]


@pytest.mark.parametrize(
    ("char", "hint"),
    [
        (
            "\ufeff",
            "a byte-order mark inside the file (two files joined with cat?); remove it, e.g. "
            "with sed 's/\\xef\\xbb\\xbf//'",
        ),
        ("\x0b", "a line break other than LF inside a line; convert the file to LF line ends"),
        ("\r", "a line break other than LF inside a line; convert the file to LF line ends"),
        ("\u2029", "a line break other than LF inside a line; convert the file to LF line ends"),
        (
            "\xa0",
            "fields are separated by ASCII spaces or tabs, and ids hold no whitespace, control "
            "or format character; other tools would split this line differently",
        ),
    ],
)
def test_a_refused_character_is_named_with_its_place_and_a_hint(char: str, hint: str) -> None:
    body = "q1\t0 doc" + char + "x 1"
    with pytest.raises(InputFormatError) as caught:
        list(rules.trec_records(["ok 0 a 1", body], Path("data/q.txt"), first_line=3))
    expected = (
        f"data/q.txt, line 4, column 9: {rules.describe(char)} is not allowed in a TREC "
        f"file: {hint}. Line: {body!r}."
    )
    assert str(caught.value) == expected


def test_a_refused_line_is_shown_cut_at_200_characters() -> None:
    body = "\x0c" + "a" * 300
    error = rules.bad_character("f", 1, body)
    assert str(error).endswith(f"Line: {body[:200]!r}.")


def test_a_line_past_the_limit_is_refused() -> None:
    wide = "é" * (rules.MAX_LINE_BYTES // 2)  # 2 bytes each: exactly the limit
    assert list(rules.trec_records([wide], "f")) == [(1, [wide])]
    with pytest.raises(InputFormatError) as caught:
        list(rules.trec_records(["x", wide + "a"], "big.trec"))
    assert str(caught.value) == (
        f"big.trec, line 2: the line is longer than {rules.MAX_LINE_BYTES:,} bytes (a file "
        f"without line ends, or not a TREC file?)."
    )
    with pytest.raises(InputFormatError, match=r"big\.trec, line 7: the line is longer"):
        list(rules.checked_lines([wide + "a\n"], "big.trec", first_line=7))


def test_checked_lines_cut_pieces_into_lines() -> None:
    pieces = ["q1 0 a 1\r\nq1 0 b 2\n", "# c\n\nq2 0 c 0\n", "q3 0 d 1\r"]
    assert list(rules.checked_lines(pieces, "f", first_line=5)) == [
        (5, ["q1 0 a 1", "q1 0 b 2"], False),
        (7, ["# c", "", "q2 0 c 0"], False),
        (10, ["q3 0 d 1"], False),
    ]
    assert list(rules.checked_lines(["q1 0 a_b 1\n"], "f")) == [(1, ["q1 0 a_b 1"], True)]
    assert list(rules.checked_lines(["q1 0 é 1\n"], "f")) == [(1, ["q1 0 é 1"], True)]
    assert list(rules.checked_lines(["q1\t0\ta\t1\n"], "f")) == [(1, ["q1\t0\ta\t1"], False)]


def test_checked_lines_name_the_bad_line_and_the_file() -> None:
    with pytest.raises(InputFormatError) as caught:
        list(rules.checked_lines(["a 0 b 1\n", "c 0 d 1\nq1 0 x\x0cy 1\n"], Path("in/r.trec")))
    assert str(caught.value).startswith(
        "in/r.trec, line 3, column 7: U+000C FORM FEED is not allowed in a TREC file"
    )


def test_text_chunks_end_at_line_ends() -> None:
    import io

    handle = io.StringIO("aaaa\nbb\ncccccc\nd", newline="\n")
    assert list(rules.text_chunks(handle, size=3)) == ["aaaa\n", "bb\n", "cccccc\n", "d"]
    assert list(rules.text_chunks(io.StringIO("", newline="\n"))) == []


def test_a_sign_is_plus_or_minus_only() -> None:
    assert rules.ascii_int("+5") == 5 and rules.ascii_int("-5") == -5
    assert rules.ascii_int("X5") is None and rules.ascii_int("") is None


def test_text_chunks_end_at_line_ends_even_for_a_line_near_the_limit() -> None:
    import io

    near = (
        "q" * (rules.MAX_LINE_BYTES - 1) + "\n"
    )  # the longest line: 1 character read, then the rest
    chunks = list(rules.text_chunks(io.StringIO(near + "q2 a\n"), size=1))
    assert all(c.endswith("\n") for c in chunks) and "".join(chunks) == near + "q2 a\n"
    assert chunks[0] == near


def test_format_loss_names_five_queries_and_says_when_there_are_more() -> None:
    with pytest.warns(FormatLossWarning) as caught:
        rules.warn_format_loss([f"q{i}" for i in range(6)], "empty rankings", "out.txt")
    text = str(caught[0].message)
    assert "6 queries" in text and "'q4', ..." in text and "'q5'" not in text
    with pytest.warns(FormatLossWarning) as caught:
        rules.warn_format_loss([f"q{i}" for i in range(5)], "empty rankings", "out.txt")
    assert "..." not in str(caught[0].message).split(";")[0]
