"""Every input is checked in full: a bad score, id, file or keyword anywhere is an error that
names what was wrong and where; a legal input that makes the numbers zeros by construction
is a warning."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest

import ragmetrics as rm

# --- scores --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "shown"),
    [
        (None, r"got None of type NoneType"),
        ("0.5", r"got '0\.5' of type str"),
        ("nan", r"got 'nan' of type str"),
        (b"1", r"got b'1' of type bytes"),
        (1j, r"got 1j of type complex"),
        ([0.5], r"got \[0\.5\] of type list"),
    ],
)
def test_a_score_that_is_not_a_real_number_is_named(bad: object, shown: str) -> None:
    # the issue's case: None in the middle of a query scored mrr 1.0 and P@1 1.0
    with pytest.raises(
        rm.InputFormatError,
        match=rf"The score of 'b' for query 'q' must be a real number; {shown}",
    ):
        rm.evaluate({"q": {"b": 1}}, {"q": {"a": 0.9, "b": bad, "c": 0.5}}, ["mrr", "P@1"])


def test_a_nan_score_anywhere_is_named() -> None:
    run = {f"q{i}": {f"d{j}": float(j) for j in range(50)} for i in range(300)}
    run["q217"]["d31"] = math.nan
    with pytest.raises(rm.InputFormatError, match=r"The score of 'd31' for query 'q217' is NaN"):
        rm.Run.from_dict(run)


def test_numbers_of_every_kind_are_scores_and_infinities_are_ordered() -> None:
    run = rm.Run.from_dict(
        {"q": {"a": 1, "b": np.float32(0.5), "c": np.int64(2), "d": -math.inf, "e": math.inf}}
    )
    assert run["q"] == ("e", "c", "a", "b", "d")


def test_json_records_refuse_string_scores_and_missing_ids(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text('{"query_id": "q", "doc_id": "a", "score": "0.5"}\n')
    with pytest.raises(
        rm.InputFormatError, match=r"record 1: the score of 'a' for query 'q' must be a real"
    ):
        rm.Run.from_json(path)
    path.write_text('{"query_id": null, "doc_id": "a", "score": 0.5}\n')
    with pytest.raises(rm.InputFormatError, match=r"record 1: the query id must be a string"):
        rm.Run.from_json(path)
    path.write_text('{"query_id": 7, "doc_id": 12, "score": 0.5}\n')
    assert rm.Run.from_json(path)["7"] == ("12",)  # integer ids, written as JSON numbers


def test_dataframe_scores_and_ids_are_checked() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [0.5, "0.3"]})
    with pytest.raises(rm.InputFormatError, match=r"The score of 'b' for query 'q'.*'0\.3'"):
        rm.Run.from_pandas(frame)
    frame = pd.DataFrame({"query_id": ["q", None], "doc_id": ["a", "b"], "score": [0.5, 0.3]})
    with pytest.raises(rm.InputFormatError, match=r"The column 'query_id' is empty .* at row 1"):
        rm.Run.from_pandas(frame)
    frame = pd.DataFrame({"query_id": ["q", "q"], "doc_id": [7.0, 8.0], "relevance": [1, 0]})
    with pytest.raises(rm.InputFormatError, match=r"The column 'doc_id' holds floats"):
        rm.Qrels.from_pandas(frame)
    ints = pd.DataFrame({"query_id": [1, 1], "doc_id": [7, 8], "relevance": [1, 0]})
    assert dict(rm.Qrels.from_pandas(ints)["1"]) == {"7": 1, "8": 0}


# --- ids -----------------------------------------------------------------------------------


def test_every_doc_id_is_checked_not_only_the_first() -> None:
    # the issue's case: an int id after the first scored 0 silently against qrels id "7"
    with pytest.raises(
        rm.InputFormatError, match=r"Doc ids of the run must be strings; query 'q' has 7 of type"
    ):
        rm.evaluate({"q": {"7": 1}}, {"q": {"a": 0.9, 7: 0.5}}, ["mrr"])
    with pytest.raises(rm.InputFormatError, match=r"query 'q2' has None of type NoneType"):
        rm.Run.from_lists({"q1": ["a"], "q2": ["b", "c", None]})


def test_a_none_id_inside_a_tie_is_an_input_error() -> None:
    with pytest.raises(rm.InputFormatError, match=r"query 'q' has None"):
        rm.evaluate({"q": {"7": 1}}, {"q": {"a": 0.5, None: 0.5}}, ["mrr"])


def test_an_empty_id_is_refused_and_does_not_end_the_check() -> None:
    # "".startswith stops at an empty id; the rest of that query is then checked one by one
    with pytest.raises(rm.InputFormatError, match=r"Doc ids of the run must not be empty"):
        rm.Run.from_dict({"q": {"": 1.0, "a": 0.5}})
    with pytest.raises(rm.InputFormatError, match=r"Doc ids of the run must not be empty"):
        rm.Run.from_lists({"q": ["a", ""]})
    with pytest.raises(rm.InputFormatError, match=r"Query ids of the qrels must not be empty"):
        rm.Qrels.from_dict({"": {"a": 1}})
    with pytest.raises(rm.InputFormatError, match=r"query 'q' has 3 of type int"):
        rm.Run.from_dict({"q": {"": 1.0, 3: 0.5}})


def test_every_qrels_doc_id_and_query_id_is_checked() -> None:
    with pytest.raises(
        rm.InputFormatError, match=r"Doc ids of the qrels must be strings; query 'q' has 2"
    ):
        rm.Qrels.from_dict({"p": {"a": 1}, "q": {"a": 1, 2: 1}})
    with pytest.raises(rm.InputFormatError, match=r"Query ids of the run must be strings"):
        rm.Run.from_dict({"q": {"a": 1.0}, 5: {"a": 1.0}})


def test_string_grades_are_refused() -> None:
    with pytest.raises(
        rm.InputFormatError, match=r"The grade of 'a' for query 'q' must be a number"
    ):
        rm.Qrels.from_dict({"q": {"a": "2"}})


# --- files ---------------------------------------------------------------------------------


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("size", [1, 40_000])  # one line; past the fast reader's first block
def test_a_non_utf8_byte_names_its_line(tmp_path: Path, size: int) -> None:
    lines = [f"q{i // 10} 0 d{i} {i % 3}\n".encode() for i in range(size)]
    lines.insert(size // 2, b"q1 0 caf\xe9 1\n")
    path = _write(tmp_path / "qrels.txt", b"".join(lines))
    line = size // 2 + 1
    with pytest.raises(
        rm.InputFormatError, match=rf"qrels\.txt, line {line}: byte 0xe9 at column 9 is not UTF-8"
    ):
        rm.Qrels.from_trec(path)


def test_a_leading_byte_order_mark_is_dropped(tmp_path: Path) -> None:
    qrels = _write(tmp_path / "q.txt", b"\xef\xbb\xbf1 0 a 1\n1 0 b 0\n")
    run = _write(tmp_path / "r.txt", b"\xef\xbb\xbf1 Q0 a 1 0.5 x\n1 Q0 b 2 0.4 x\n")
    assert rm.Qrels.from_trec(qrels).query_ids == ("1",)
    assert rm.Run.from_trec(run).query_ids == ("1",)
    # the careful reader too (a comment line sends the file there)
    commented = _write(tmp_path / "c.txt", b"\xef\xbb\xbf1 0 a 1\n# note\n")
    assert rm.Qrels.from_trec(commented).query_ids == ("1",)
    as_json = _write(tmp_path / "q.json", b'\xef\xbb\xbf{"1": {"a": 1}}')
    assert rm.Qrels.from_json(as_json).query_ids == ("1",)


def test_a_directory_or_a_missing_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(rm.InputFormatError, match=r"is a directory; give the path of a file"):
        rm.Run.from_trec(tmp_path)
    with pytest.raises(rm.InputFormatError, match=r"is a directory"):
        rm.Qrels.from_json(tmp_path)
    with pytest.raises(rm.InputFormatError, match=r"No such file"):
        rm.Qrels.from_trec(tmp_path / "absent.txt")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their permissions")
def test_an_unreadable_file_is_one_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "q.txt", b"1 0 a 1\n")
    path.chmod(0)
    with pytest.raises(rm.InputFormatError, match=r"Cannot read .*permission denied"):
        rm.Qrels.from_trec(path)


# --- keywords ------------------------------------------------------------------------------

QRELS = {"q": {"a": 5, "b": 3, "c": 3}}
RUN = {"q": ["b", "a"]}


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"cap3": -1}, r"cap3 must be a number in \[0, 1\] .*Got -1 instead"),
        ({"cap4": 1.5}, r"cap4 must be a number in \[0, 1\]"),
        ({"rarity_alpha": math.nan}, r"rarity_alpha must be a number >= 0 .*Got nan instead"),
        ({"rarity_alpha": "1"}, r"rarity_alpha must be a number >= 0"),
        ({"alpha": 0.5}, r"alpha= is not a keyword of evaluate\(\): .* rarity_alpha="),
        ({"err_max_grade": 0}, r"err_max_grade must be a number > 0 or None"),
        ({"err_max_grade": "x"}, r"err_max_grade must be a number > 0 or None"),
        ({"relevance_threshold": True}, r"relevance_threshold must be an integer"),
        ({"missing": "drop"}, r"missing must be one of 'zero', 'skip' or 'error'"),
        ({"score_precision": "double"}, r"score_precision must be 'float64' .* or 'float32'"),
        ({"grade_map": {0: 6}}, r"grade_map must map integer grades to utility grades 1\.\.5"),
        ({"grade_map": [1, 2]}, r"grade_map must be a non-empty mapping"),
        ({"progress": "yes"}, r"progress must be True, False or None"),
    ],
)
def test_every_keyword_is_checked_when_called(keywords: dict, message: str) -> None:
    # checked even where no metric reads it (ndcg@10 reads none of these)
    with pytest.raises(rm.InvalidParameterError, match=message):
        rm.evaluate(QRELS, RUN, ["ndcg@10"], **keywords)


def test_metrics_none_is_an_error_with_an_example() -> None:
    with pytest.raises(rm.InvalidParameterError, match=r"metrics must be a metric name or a list"):
        rm.evaluate(QRELS, RUN, None)  # type: ignore[arg-type]


def test_the_issue_cap3_case_no_longer_gives_a_negative_number() -> None:
    with pytest.raises(rm.RagMetricsError):
        rm.evaluate(QRELS, RUN, ["ra_nwg@1"], cap3=-1)


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"alpha": math.nan}, r"alpha must be a number in \(0, 1\)"),
        ({"alpha": 1.0}, r"alpha must be a number in \(0, 1\)"),
        ({"n_permutations": 0}, r"n_permutations must be an integer in \[1, 1e\+07\]"),
        ({"n_bootstrap": 2.5}, r"n_bootstrap must be an integer in \[1, 1e\+07\]"),
        ({"seed": -1}, r"seed must be an integer >= 0"),
        ({"correction": "fdr"}, r"correction must be one of 'none', 'bonferroni', 'holm'"),
        ({"cap3": 2}, r"cap3 must be a number in \[0, 1\]"),
        ({"grade_mapping": {1: 5}}, r"Unknown keyword\(s\) 'grade_mapping'; the keywords"),
    ],
)
def test_compare_checks_its_keywords_before_evaluating(keywords: dict, message: str) -> None:
    with pytest.raises(rm.InvalidParameterError, match=message):
        rm.compare(QRELS, {"a": RUN, "b": RUN}, ["ndcg@10"], **keywords)


def test_every_error_derives_from_ragmetrics_error() -> None:
    from ragmetrics.metrics import parse_metric, register, registered

    with pytest.raises(rm.RagMetricsError):
        parse_metric(5)  # type: ignore[arg-type]
    with pytest.raises(rm.RagMetricsError):
        register(registered()["ndcg"], "map")  # an alias taken by another metric


# --- warnings: one per call, with a hint ---------------------------------------------------


def test_no_shared_query_id_warns_once() -> None:
    with pytest.warns(rm.IdMismatchWarning) as caught:
        result = rm.evaluate(
            {"1": {"a": 1}, "2": {"b": 1}}, {"Q1": ["a"], "Q2": ["b"]}, ["mrr", "P@1"]
        )
    assert len(caught) == 1
    assert "share no query id: every judged query scores 0 (missing='zero')" in str(
        caught[0].message
    )
    assert "The run's ids look like 'Q1', 'Q2'" in str(caught[0].message)
    assert result.aggregate == {"mrr": 0.0, "P@1": 0.0}


def test_no_judged_retrieved_doc_warns_with_the_two_forms() -> None:
    qrels = {f"q{i}": {f"doc{i}": 1} for i in range(5)}
    run = {f"q{i}": [f"3f2a9c1e-{i}-4d5e", "0a1b2c3d-9-1f"] for i in range(5)}
    with pytest.warns(
        rm.IdMismatchWarning,
        match=r"No retrieved doc is judged in any query: every metric is 0\. .*query 'q0' "
        r"retrieved '3f2a9c1e-0-4d5e', '0a1b2c3d-9-1f', its judged docs are 'doc0'",
    ):
        rm.evaluate(qrels, run, ["recall@10"])


def test_one_query_that_missed_is_not_an_id_mismatch() -> None:
    # same form of ids: a routine miss, no warning (the suite turns warnings into errors)
    assert rm.evaluate({"q": {"doc1": 1}}, {"q": ["doc7"]}, ["mrr"]).aggregate["mrr"] == 0.0
    with pytest.warns(rm.IdMismatchWarning):  # another form: a path for a name
        rm.evaluate({"q": {"a.pdf": 1}}, {"q": ["/data/a.pdf"]}, ["mrr"])


def test_empty_judgments_warn_as_such() -> None:
    with pytest.warns(
        rm.UndefinedMetricWarning, match=r"The qrels judge no document: all 2 of their queries"
    ):
        result = rm.evaluate({"q": {}, "r": {}}, {"q": ["a"]}, ["mrr"])
    assert result.aggregate["mrr"] is None and result.counts.queries == 0
