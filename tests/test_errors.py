"""Every error message is pinned: it says what was wrong and how to fix it."""

from __future__ import annotations

from pathlib import Path

import pytest

import ragmetrics as rm


def test_unknown_metric_lists_close_matches() -> None:
    with pytest.raises(
        rm.UnknownMetricError, match=r"Unknown metric 'ndgc@10'\. Did you mean 'ndcg@10'"
    ):
        rm.evaluate({"q": {"a": 1}}, {"q": ["a"]}, ["ndgc@10"])


def test_cutoff_below_one() -> None:
    with pytest.raises(
        ValueError, match=r"The cutoff of 'ndcg@0' must be an integer >= 1\. Got 0 instead"
    ):
        rm.evaluate({"q": {"a": 1}}, {"q": ["a"]}, ["ndcg@0"])


def test_cutoff_not_an_integer() -> None:
    with pytest.raises(ValueError, match=r"The cutoff of 'P@ten' must be an integer >= 1"):
        rm.evaluate({"q": {"a": 1}}, {"q": ["a"]}, ["P@ten"])


def test_missing_cutoff() -> None:
    with pytest.raises(ValueError, match=r"'precision' needs a cutoff: write 'precision@10'"):
        rm.evaluate({"q": {"a": 1}}, {"q": ["a"]}, ["precision"])


def test_refused_cutoff() -> None:
    with pytest.raises(ValueError, match=r"'r_precision' takes no cutoff"):
        rm.evaluate({"q": {"a": 1}}, {"q": ["a"]}, ["r_precision@5"])


def test_no_metric() -> None:
    with pytest.raises(ValueError, match=r"No metric was asked for"):
        rm.evaluate({"q": {"a": 1}}, {"q": ["a"]}, [])


def test_non_numeric_grade() -> None:
    with pytest.raises(
        rm.InputFormatError, match=r"The grade of 'a' for query 'q' must be a number.*'high'"
    ):
        rm.Qrels.from_dict({"q": {"a": "high"}})


def test_fractional_grade() -> None:
    """A fractional grade is a real-valued gain: kept, and refused by the metrics that
    compare grades with a threshold (tests/test_real_grades.py)."""
    assert rm.Qrels.from_dict({"q": {"a": 1.5}}).has_real_grades
    with pytest.raises(rm.GradeScaleError, match=r"real-valued grades \(such as 1\.5\)"):
        rm.evaluate({"q": {"a": 1.5}}, {"q": ["a"]}, ["P@1"])


def test_non_numeric_score() -> None:
    with pytest.raises(
        rm.InputFormatError,
        match=r"The score of 'b' for query 'q' must be a real number; got 'x' of type str",
    ):
        rm.Run.from_dict({"q": {"a": 1.0, "b": "x"}})


def test_nan_score() -> None:
    with pytest.raises(rm.InputFormatError, match=r"The score of 'b' for query 'q' is NaN"):
        rm.Run.from_dict({"q": {"a": 1.0, "b": float("nan")}})


def test_non_string_doc_id() -> None:
    with pytest.raises(
        rm.InputFormatError,
        match=r"Doc ids of the run must be strings; query 'q' has 7 of type int",
    ):
        rm.Run.from_dict({"q": {7: 1.0}})  # type: ignore[dict-item]


def test_non_string_doc_id_in_lists() -> None:
    with pytest.raises(
        rm.InputFormatError,
        match=r"Doc ids of the run must be strings; query 'q' has 3 of type int",
    ):
        rm.Run.from_lists({"q": ["a", 3]})  # type: ignore[list-item]


def test_lists_given_to_from_dict() -> None:
    with pytest.raises(
        rm.InputFormatError,
        match=r"must be a mapping of doc id to score; got list\. For ranked lists",
    ):
        rm.Run.from_dict({"q": ["a", "b"]})  # type: ignore[dict-item]


def test_wrong_type_for_qrels() -> None:
    with pytest.raises(rm.RagMetricsError, match=r"qrels must be a Qrels, a dict .* got list"):
        rm.evaluate([("q", "a", 1)], {"q": ["a"]}, ["mrr"])  # type: ignore[arg-type]


def test_malformed_trec_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 0.5 tag\n# a comment\n\nq1 Q0 d2 2 tag\n")
    with pytest.raises(
        rm.InputFormatError,
        match=r"run\.txt, line 4: expected at least 6 whitespace-separated fields",
    ):
        rm.Run.from_trec(path)


def test_bad_score_in_trec_file(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 0.5 tag\nq1 Q0 d2 2 high tag\n")
    with pytest.raises(
        rm.InputFormatError, match=r"run\.txt, line 2: field 5 must be a number, got 'high'"
    ):
        rm.Run.from_trec(path)


def test_nan_in_trec_file(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 nan tag\n")
    with pytest.raises(rm.InputFormatError, match=r"run\.txt, line 1: the score is NaN"):
        rm.Run.from_trec(path)


def test_bad_grade_in_qrels_file(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 d1 1\nq1 0 d2 yes\n")
    with pytest.raises(
        rm.InputFormatError,
        match=r"qrels\.txt, line 2: field 4 must be an integer \(ASCII digits, within int64\), got 'yes'",
    ):
        rm.Qrels.from_trec(path)


def test_conflicting_duplicate_judgment(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 d1 1\nq1 0 d1 2\n")
    with pytest.raises(
        rm.InputFormatError,
        match=r"'d1' is judged twice for query 'q1' with different grades \(1 and 2\)",
    ):
        rm.Qrels.from_trec(path)


def test_missing_file() -> None:
    with pytest.raises(rm.InputFormatError, match=r"No such file: 'nowhere\.txt'"):
        rm.Run.from_trec("nowhere.txt")


def test_empty_run() -> None:
    with pytest.raises(rm.RagMetricsError, match=r"The run is empty: it has no query"):
        rm.evaluate({"q": {"a": 1}}, {}, ["mrr"])


def test_empty_qrels() -> None:
    with pytest.raises(rm.RagMetricsError, match=r"The qrels are empty"):
        rm.evaluate({}, {"q": ["a"]}, ["mrr"])


def test_missing_error_policy() -> None:
    with pytest.raises(
        rm.MissingQueryError,
        match=r"1 judged queries have no ranking in the run \('q2'\)\. Pass missing='zero'",
    ):
        rm.evaluate({"q": {"a": 1}, "q2": {"b": 1}}, {"q": ["a"]}, ["mrr"], missing="error")


def test_bad_missing_policy() -> None:
    with pytest.raises(
        rm.RagMetricsError, match=r"missing must be one of 'zero', 'skip' or 'error'; got 'drop'"
    ):
        rm.evaluate({"q": {"a": 1}}, {"q": ["a"]}, ["mrr"], missing="drop")  # type: ignore[arg-type]


def test_bad_threshold_type() -> None:
    with pytest.raises(
        rm.RagMetricsError,
        match=r"relevance_threshold must be an integer >= 0 \(the lowest grade that counts as relevant, inclusive\)\. Got 0\.5",
    ):
        rm.evaluate({"q": {"a": 1}}, {"q": ["a"]}, ["mrr"], relevance_threshold=0.5)  # type: ignore[arg-type]


def test_no_shared_query_warns() -> None:
    with pytest.warns(
        rm.IdMismatchWarning,
        match=r"The run and the qrels share no query id: no query is counted\. The run's ids "
        r"look like 'other', the qrels' like 'q'",
    ):
        rm.evaluate({"q": {"a": 1}}, {"other": ["a"]}, ["mrr"], missing="skip")


def test_run_constructor_is_guarded() -> None:
    with pytest.raises(TypeError, match=r"Build a Run with Run\.from_dict"):
        rm.Run()


def test_a_warning_points_at_the_callers_line() -> None:
    """A warning raised deep inside ragmetrics names the line that called ragmetrics (it
    named the last ragmetrics frame, one level short)."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rm.evaluate({"q": {"a": 1}, "r": {"c": 1}}, {"q": {"b": 0.5}, "r": {"d": 0.5}}, ["P@1"])
    assert caught and all(w.filename == __file__ for w in caught), [
        (w.filename, w.lineno) for w in caught
    ]


def test_a_negative_threshold_is_refused() -> None:
    """A negative grade marks a doc judged as not to be counted: no threshold goes below 0
    (one did count unjudged docs as relevant: binG 2.0)."""
    with pytest.raises(rm.InvalidParameterError, match=r"must be an integer >= 0 .* Got -1"):
        rm.evaluate({"q": {"a": 1}}, {"q": ["a", "x"]}, ["bin_g"], relevance_threshold=-1)


def test_a_text_parameter_given_a_number_says_to_quote_it() -> None:
    """``levels=0.5`` reads as a number, where the levels are a text: the message says how
    to write it (it used to say the value must be a number, which it was)."""
    with pytest.raises(rm.InvalidParameterError, match=r"must be a text in quotes \(levels='0;"):
        rm.evaluate({"q": {"a": 1}}, {"q": ["a"]}, ["eleven_point_average(levels=0.5)"])
