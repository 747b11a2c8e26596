"""Evaluate a run held in a Spark DataFrame (the ``[spark]`` extra: pyspark and pyarrow).

The rows are co-partitioned by query id (``repartition`` on the query column, then sorted
within each partition by query and by their original position, so that a query's rows are
together and in their order). Each partition is scored through Arrow (``mapInArrow``) by the
kernel of :func:`~ragmetrics.evaluate` into a
:class:`~ragmetrics.engine.stream.PartialResult`, sent back pickled (a few hundred bytes per
partition without per-query values), and the driver merges them exactly: the numbers equal
``evaluate()`` on the same rows bit for bit, however many partitions there are.

Spark MLlib's ``RankingMetrics`` follows its own conventions (binary relevance in nDCG before
Spark 3.4, no tie rule); these follow trec_eval, as every metric of ragmetrics does.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ragmetrics._util.optional import import_pyarrow
from ragmetrics.data._batches import batches
from ragmetrics.data._qrels import Qrels
from ragmetrics.engine._result import EvaluationResult
from ragmetrics.engine._settings import as_qrels, metric_list
from ragmetrics.engine.stream import Job, PartialResult, merge
from ragmetrics.errors import InputFormatError, MissingDependencyError, RagMetricsError
from ragmetrics.formats._stream_io import Columns, arrow_chunk

__all__ = ["evaluate"]

_ORDER = "__ragmetrics_row"  # the original position of each row, kept through the shuffle


def evaluate(
    df: Any,
    qrels: Qrels | Mapping[str, Mapping[str, int]] | Any,
    metrics: str | Sequence[str],
    *,
    per_query: bool = False,
    query_col: str | None = None,
    doc_col: str = "doc_id",
    score_col: str | None = None,
    num_partitions: int | None = None,
    batch_rows: int = 500_000,
    name: str | None = None,
    **keywords: Any,
) -> EvaluationResult:
    """Evaluate the run rows of a Spark DataFrame against qrels.

    Args:
        df: a ``pyspark.sql.DataFrame`` with one row per result: query id (``query_id`` or
            ranx's ``q_id``), ``doc_id`` and ``score`` (without a score column, the row
            order within each query is the ranking: it is kept through the shuffle).
        qrels: a :class:`Qrels`, a ``{qid: {doc: grade}}`` dict, or a Spark DataFrame of
            judgments (``query_id``, ``doc_id``, ``relevance``), gathered on the driver. The
            qrels go to the executors once, with the scoring function.
        metrics: metric names, as for :func:`~ragmetrics.evaluate`.
        per_query: keep per-query values (gathered on the driver).
        query_col, doc_col, score_col: the run's column names.
        num_partitions: partitions of the shuffle by query (Spark's
            ``spark.sql.shuffle.partitions`` when None).
        batch_rows: rows scored at a time within a partition.
        name: the run's name in the result.
        **keywords: those of :func:`~ragmetrics.evaluate`.

    Returns:
        The :class:`EvaluationResult` of :func:`~ragmetrics.evaluate` on the same rows.
    """
    functions = _pyspark_functions()
    if not hasattr(df, "mapInArrow") or not hasattr(df, "columns"):
        raise InputFormatError(
            f"df must be a pyspark.sql.DataFrame of run rows; got {type(df).__name__}. For a "
            f"Run in memory use ragmetrics.evaluate; for a file, evaluate_stream."
        )
    names = metric_list(metrics)
    query, doc, score = Columns(query_col, doc_col, score_col).resolve(list(df.columns))
    columns = Columns(query, doc, score)
    job = Job.of(  # names and keywords refused here, first
        _qrels(qrels),
        names,
        keywords,
        per_query=per_query,
        batch_rows=batch_rows,
        columns=columns,
        name=name,
    )
    checked = job.qrels
    kept = [query, doc] + ([score] if score else [])
    rows = df.select(*kept).withColumn(_ORDER, functions.monotonically_increasing_id())
    shuffled = (
        rows.repartition(num_partitions, query) if num_partitions else rows.repartition(query)
    )
    ordered = shuffled.sortWithinPartitions(query, _ORDER).drop(_ORDER)
    parts = ordered.mapInArrow(_scorer(job), "part binary").collect()
    states = [pickle.loads(row["part"]) for row in parts]
    if not states:
        raise RagMetricsError("The DataFrame is empty: it has no result row to evaluate.")
    return merge(states).result(checked, name=name)


def _scorer(job: Job) -> Any:
    """The function each executor runs over its partition's Arrow batches."""
    payload = pickle.dumps(job)

    def score(batches_in: Iterator[Any]) -> Iterator[Any]:
        import pyarrow

        work: Job = pickle.loads(payload)
        query, doc, score_col = work.columns.query_col, work.columns.doc_col, work.columns.score_col
        assert query is not None

        def chunks() -> Iterator[Any]:
            for batch in batches_in:
                if batch.num_rows:
                    yield arrow_chunk(pyarrow.Table.from_batches([batch]), query, doc, score_col)

        runs = batches(chunks(), work.batch_rows, "a partition of the DataFrame", work.name)
        state: PartialResult | None = work.score(runs, "a partition of the DataFrame")
        if state is not None:
            data = pickle.dumps(state)
            yield pyarrow.RecordBatch.from_pydict(
                {"part": pyarrow.array([data], type=pyarrow.binary())}
            )

    return score


def _qrels(qrels: Any) -> Qrels:
    """Qrels from a Qrels, a dict, or a Spark DataFrame of judgments (gathered here)."""
    if hasattr(qrels, "mapInArrow") and hasattr(qrels, "columns"):
        import_pyarrow()
        table = qrels.toArrow() if hasattr(qrels, "toArrow") else None
        if table is None:  # Spark before 4.0
            return Qrels.from_pandas(qrels.toPandas())
        return Qrels.from_arrow(table)
    return as_qrels(qrels)


def _pyspark_functions() -> Any:
    try:
        import pyspark.sql.functions as functions
    except ImportError:
        raise MissingDependencyError(
            "ragmetrics.spark needs pyspark, which ragmetrics does not install by itself. "
            "Install it with: pip install 'ragmetrics[spark]'"
        ) from None
    import_pyarrow()
    return functions
