"""Tables handed straight to evaluate (and every entry point that reads qrels and runs the
same way): a pandas DataFrame, a pyarrow Table, a stream of record batches, a Polars frame.
Each is read by its columns as the readers name them, gives the values of the same data
built first, and a table of the wrong kind or with unknown columns is refused with what it
has and how to name it, never read as something else."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ragmetrics as rm

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")

METRICS = ["ndcg@10", "map", "recip_rank", "P@5"]
QRELS = {
    "query_id": ["q1", "q1", "q2", "q3", "q3"],
    "doc_id": ["a", "c", "b", "x", "a"],
    "relevance": [1, 2, 1, 0, 3],
}
RUN = {
    "query_id": ["q2", "q1", "q1", "q1", "q2", "q3"],  # not grouped by query
    "doc_id": ["b", "a", "b", "c", "d", "a"],
    "score": [0.9, 0.5, 0.7, 0.1, 0.3, 0.2],
}


def _built() -> rm.EvaluationResult:
    qrels = rm.Qrels.from_pandas(pd.DataFrame(QRELS))
    run = rm.Run.from_pandas(pd.DataFrame(RUN))
    return rm.evaluate(qrels, run, METRICS)


def _stream(frame: Any) -> Any:
    table = pa.Table.from_pandas(frame, preserve_index=False)
    return pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=2))


def _polars(frame: Any) -> Any:
    polars = pytest.importorskip("polars")
    return polars.from_pandas(frame)


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda f: f, id="pandas"),
        pytest.param(lambda f: pa.Table.from_pandas(f, preserve_index=False), id="pyarrow"),
        pytest.param(_stream, id="batches"),
        pytest.param(_polars, id="polars"),
    ],
)
def test_a_table_gives_the_values_of_the_data_built_first(make: Any) -> None:
    expected = _built()
    found = rm.evaluate(make(pd.DataFrame(QRELS)), make(pd.DataFrame(RUN)), METRICS)
    assert found.per_query == expected.per_query
    assert found.aggregate == expected.aggregate


def test_ranx_names_and_grade_columns_are_read_too() -> None:
    qrels = pd.DataFrame(QRELS).rename(columns={"query_id": "q_id", "relevance": "grade"})
    run = pd.DataFrame(RUN).rename(columns={"query_id": "q_id"})
    assert rm.evaluate(qrels, run, METRICS).aggregate == _built().aggregate


def test_a_run_without_scores_ranks_each_query_in_row_order() -> None:
    run = pd.DataFrame({"query_id": ["q1", "q1", "q1"], "doc_id": ["c", "b", "a"]})
    found = rm.evaluate(pd.DataFrame(QRELS), run, ["recip_rank"], missing="skip")
    assert found.per_query["q1"]["recip_rank"] == 1.0  # c, graded 2, ranked first


@pytest.mark.parametrize("kind", ["pandas", "pyarrow"])
def test_swapped_tables_are_refused_not_read_as_the_other(kind: str) -> None:
    def make(frame: Any) -> Any:
        return frame if kind == "pandas" else pa.Table.from_pandas(frame, preserve_index=False)

    qrels, run = make(pd.DataFrame(QRELS)), make(pd.DataFrame(RUN))
    with pytest.raises(rm.InputFormatError, match=r"Is it a run\? .*judgments first"):
        rm.evaluate(run, qrels, METRICS)
    with pytest.raises(rm.InputFormatError, match=r"'relevance' holds grades: is it the qrels"):
        rm.evaluate(qrels, qrels, METRICS)


def test_a_qrels_table_of_scores_alone_is_not_read_as_grades() -> None:
    # ranx names qrels' grades "score"; a run's scores are named so too: evaluate does not
    # guess which (Qrels.from_arrow reads ranx's qrels, refusing real-valued scores)
    ranx_qrels = pd.DataFrame(QRELS).rename(columns={"relevance": "score"})
    with pytest.raises(rm.InputFormatError, match=r"has 'query_id', 'doc_id', 'score'"):
        rm.evaluate(ranx_qrels, pd.DataFrame(RUN), METRICS)


def test_unknown_columns_are_named_with_the_fix() -> None:
    run = pd.DataFrame(RUN).rename(columns={"doc_id": "passage"})
    with pytest.raises(rm.InputFormatError) as refused:
        rm.evaluate(pd.DataFrame(QRELS), run, METRICS)
    message = str(refused.value)
    assert "'passage'" in message and "Run.from_pandas(table, query_col=" in message
    with pytest.raises(rm.InputFormatError, match=r"Qrels.from_arrow\(table"):
        rm.evaluate(pa.table({"qid": ["q1"], "doc_id": ["a"], "relevance": [1]}), RUN, METRICS)


def test_a_bad_row_in_a_table_is_refused_with_its_place() -> None:
    run = pd.DataFrame(RUN)
    run.loc[3, "score"] = np.nan
    with pytest.raises(rm.RagMetricsError):
        rm.evaluate(pd.DataFrame(QRELS), run, METRICS)
    qrels = pd.DataFrame(QRELS)
    qrels.loc[1, "doc_id"] = None
    with pytest.raises(rm.InputFormatError, match="row 1"):
        rm.evaluate(qrels, pd.DataFrame(RUN), METRICS)


def test_other_objects_are_still_refused_with_the_ways_in() -> None:
    with pytest.raises(rm.InputFormatError, match=r"a table \(pandas, Polars, pyarrow\)"):
        rm.evaluate([("q1", "a", 1)], RUN, METRICS)
    with pytest.raises(rm.InputFormatError, match=r"Run.from_parquet"):
        rm.evaluate(pd.DataFrame(QRELS), 42, METRICS)
