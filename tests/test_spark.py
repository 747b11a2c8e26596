"""ragmetrics.spark.evaluate on a real local Spark (pyspark with the machine's JDK): equal to
evaluate() bit for bit, whatever the partitions, with qrels as Qrels, dict or DataFrame."""

from __future__ import annotations

import os
import random
import shutil
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import ragmetrics as rm

REQUIRED = os.environ.get("RAGMETRICS_REQUIRE_SPARK") == "1"


def _need(condition: bool, message: str) -> None:
    if not condition:
        if REQUIRED:
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        _need(False, "needs pyspark (make test-spark installs it)")
    _need(shutil.which("java") is not None, "needs a JDK (java) for Spark")
    os.environ["PYSPARK_PYTHON"] = sys.executable  # executors run this interpreter
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("ragmetrics-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "5")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _rows(seed: int = 3) -> tuple[list[tuple[str, str, float]], dict[str, dict[str, int]]]:
    rng = random.Random(seed)
    rows = []
    for q in range(120):
        for d in rng.sample(range(300), rng.choice([1, 15, 80])):
            rows.append((f"q{q}", f"d{d}", rng.choice([0.1, 0.4, 0.9])))  # ties
    rng.shuffle(rows)  # a DataFrame has no order: queries come interleaved
    qrels = {f"q{q}": {f"d{d}": rng.choice([0, 1, 2, 3]) for d in rng.sample(range(300), 12)}
             for q in range(125)}  # fmt: skip
    return rows, qrels


METRICS = ["ndcg@10", "map", "P@5", "recall@100", "mrr", "bpref", "err@10", "num_ret"]


def test_equal_to_evaluate_for_any_partitions(spark: Any) -> None:
    from ragmetrics import spark as rm_spark

    rows, qrels = _rows()
    df = spark.createDataFrame(rows, ["query_id", "doc_id", "score"])
    run = {}
    for q, d, s in rows:
        run.setdefault(q, {})[d] = s
    reference = rm.evaluate(qrels, run, METRICS)
    for partitions in (None, 1, 7):
        result = rm_spark.evaluate(df, qrels, METRICS, num_partitions=partitions, per_query=True)
        assert result.aggregate == reference.aggregate and result.counts == reference.counts
        assert result.query_ids == reference.query_ids
        assert np.array_equal(result.values, reference.values, equal_nan=True)
    as_frame = spark.createDataFrame(
        [(q, d, g) for q, docs in qrels.items() for d, g in docs.items()],
        ["query_id", "doc_id", "relevance"],
    )
    assert rm_spark.evaluate(df, as_frame, METRICS).aggregate == reference.aggregate
    assert (
        rm_spark.evaluate(df, rm.Qrels.from_dict(qrels), METRICS).aggregate == reference.aggregate
    )


def test_ranx_columns_and_row_order_as_the_ranking(spark: Any) -> None:
    from ragmetrics import spark as rm_spark

    rows = [("a", "x"), ("a", "y"), ("b", "z"), ("a", "w"), ("b", "v")]
    qrels = {"a": {"y": 1}, "b": {"v": 2}}
    lists = {"a": ["x", "y", "w"], "b": ["z", "v"]}
    ordered = spark.createDataFrame(rows, ["q_id", "doc_id"]).coalesce(1)
    result = rm_spark.evaluate(ordered, qrels, ["mrr", "ndcg"])
    assert result.aggregate == rm.evaluate(qrels, lists, ["mrr", "ndcg"]).aggregate


def test_refusals_are_clear(spark: Any) -> None:
    from ragmetrics import spark as rm_spark

    df = spark.createDataFrame([("q", "d", 1.0)], ["query_id", "doc_id", "score"])
    with pytest.raises(rm.UnknownMetricError):
        rm_spark.evaluate(df, {"q": {"d": 1}}, ["ndgc@10"])
    with pytest.raises(rm.RagMetricsError, match=r"pyspark\.sql\.DataFrame"):
        rm_spark.evaluate({"q": ["d"]}, {"q": {"d": 1}}, ["map"])
    with pytest.raises(rm.RagMetricsError, match="empty"):
        rm_spark.evaluate(df.filter("score < 0"), {"q": {"d": 1}}, ["map"])
