"""Any Arrow stream: Polars frames, DuckDB results and pyarrow readers (``__arrow_c_stream__``)
are read by ``Run.from_arrow``, ``Qrels.from_arrow`` and ``evaluate_stream`` without pandas,
with the same numbers as ``evaluate()`` on the same rows."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ragmetrics as rm

pl = pytest.importorskip("polars")
duckdb = pytest.importorskip("duckdb")
pa = pytest.importorskip("pyarrow")

METRICS = ["ndcg@10", "map", "P@5", "recall@100", "mrr", "bpref", "err@10", "success@3"]


def _rows(seed: int = 2) -> tuple[dict, dict]:
    rng = random.Random(seed)
    run: dict[str, list] = {"query_id": [], "doc_id": [], "score": []}
    for q in range(300):
        for d in rng.sample(range(500), rng.choice([1, 20, 120])):
            run["query_id"].append(f"q{q:03d}")
            run["doc_id"].append(f"doc-{d}")
            run["score"].append(rng.choice([0.1, 0.2, 0.3, 0.7]))  # ties
    qrels: dict[str, list] = {"query_id": [], "doc_id": [], "relevance": []}
    for q in range(310):
        for d in rng.sample(range(500), 15):
            qrels["query_id"].append(f"q{q:03d}")
            qrels["doc_id"].append(f"doc-{d}")
            qrels["relevance"].append(rng.choice([0, 1, 2, 3]))
    return run, qrels


def _reference(run: dict, qrels: dict) -> rm.EvaluationResult:
    return rm.evaluate(
        rm.Qrels.from_arrow(pa.table(qrels)), rm.Run.from_arrow(pa.table(run)), METRICS
    )


def _same(a: rm.EvaluationResult, b: rm.EvaluationResult) -> None:
    assert a.aggregate == b.aggregate and a.counts == b.counts
    assert a.query_ids == b.query_ids
    assert np.array_equal(a.values, b.values, equal_nan=True)


def test_polars_and_duckdb_give_the_numbers_of_evaluate() -> None:
    run, qrels = _rows()
    reference = _reference(run, qrels)
    frame, judged = pl.DataFrame(run), pl.DataFrame(qrels)
    assert pa.table(frame).schema.field("doc_id").type == pa.string_view()  # views, as Polars gives
    sources = {
        "polars": frame,
        "polars lazy": frame.lazy().collect(),
        "duckdb": duckdb.sql("select * from frame"),
        "reader": pa.RecordBatchReader.from_batches(
            pa.table(run).schema, pa.table(run).to_batches(max_chunksize=997)
        ),
    }
    for name, source in sources.items():
        qrels_of = rm.Qrels.from_arrow(
            judged if name != "duckdb" else duckdb.sql("select * from judged")
        )
        streamed = rm.evaluate_stream(
            qrels_of, source, METRICS, per_query=True, batch_rows=1500, progress=False
        )
        _same(reference, streamed)
    in_memory = rm.evaluate(rm.Qrels.from_arrow(judged), rm.Run.from_arrow(frame), METRICS)
    _same(reference, in_memory)
    from_duckdb = rm.Run.from_arrow(duckdb.sql("select * from frame"))
    assert from_duckdb.to_dict() == rm.Run.from_arrow(pa.table(run)).to_dict()


def test_ranx_columns_and_a_rank_order_without_scores() -> None:
    run = rm.Run.from_arrow(pl.DataFrame({"q_id": ["a", "a", "b"], "doc_id": ["y", "x", "z"]}))
    assert list(run["a"]) == ["y", "x"] and list(run["b"]) == ["z"]  # the row order ranks


def test_bad_streams_are_named() -> None:
    with pytest.raises(rm.RagMetricsError, match="holds"):
        rm.Run.from_arrow(pl.DataFrame({"query_id": [[1], [2]], "doc_id": ["a", "b"]}))
    with pytest.raises(rm.RagMetricsError):
        rm.Run.from_arrow(
            pl.DataFrame({"query_id": ["q", None], "doc_id": ["a", "b"], "score": [1.0, 2.0]})
        )
    with pytest.raises(rm.RagMetricsError, match="Arrow C stream"):
        rm.Run.from_arrow(object())
    ungrouped = pl.DataFrame(
        {"query_id": ["q1", "q2", "q1"], "doc_id": ["a", "b", "c"], "score": [1.0, 1.0, 1.0]}
    )
    with pytest.warns(rm.errors.RegroupedStreamWarning, match="not grouped"):
        grouped = rm.evaluate_stream(
            {"q1": {"c": 1}}, ungrouped, ["map"], batch_rows=1, progress=False
        )
    expected = rm.evaluate({"q1": {"c": 1}}, rm.Run.from_arrow(ungrouped), ["map"])
    assert grouped.aggregate == expected.aggregate == {"map": 1.0}  # ties: c before a


def test_no_detour_through_pandas(tmp_path: Path) -> None:
    script = tmp_path / "no_pandas.py"
    script.write_text(
        "import sys\n"
        "import ragmetrics._util.optional as optional\n"
        "import ragmetrics.formats._columnar as columnar\n"
        "def refuse(*args, **kwargs):\n"
        "    raise SystemExit('the rows went through pandas')\n"
        "optional.import_pandas = refuse  # every use of pandas in ragmetrics goes through it\n"
        "columnar.decoded = refuse  # the careful path's way to pandas\n"
        "import polars as pl, duckdb, ragmetrics as rm\n"
        "run = pl.DataFrame({'query_id': ['q1', 'q1', 'q2'], 'doc_id': ['a', 'b', 'c'],"
        " 'score': [0.9, 0.5, 0.2]})\n"
        "qrels = rm.Qrels.from_arrow(pl.DataFrame({'query_id': ['q1', 'q2'],"
        " 'doc_id': ['b', 'c'], 'relevance': [1, 1]}))\n"
        "print(rm.evaluate_stream(qrels, run, ['mrr'], progress=False).aggregate['mrr'])\n"
        "print(rm.evaluate(qrels, rm.Run.from_arrow(duckdb.sql('select * from run')), ['mrr'])"
        ".aggregate['mrr'])\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0.75", "0.75"]
