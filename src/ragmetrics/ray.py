"""Evaluate a run held in a Ray Dataset, on one machine or a cluster (the ``[ray]`` extra).

The run's rows are co-partitioned by query id (Ray Data's own ``groupby`` shuffle: a hash
repartition with sorted partitions, or a range sort), so that each block holds whole queries.
Each block is then scored by the kernel of :func:`~ragmetrics.evaluate` into a
:class:`~ragmetrics.engine.stream.PartialResult`, and the driver merges those exactly: the numbers
equal ``evaluate()`` on the same rows bit for bit, however many blocks there are.
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping, Sequence
from typing import Any

from ragmetrics._util.optional import import_pyarrow, import_ray
from ragmetrics.data._batches import batches
from ragmetrics.data._qrels import Qrels
from ragmetrics.engine._result import EvaluationResult
from ragmetrics.engine._settings import as_qrels, metric_list
from ragmetrics.engine.stream import PartialResult, merge, partial
from ragmetrics.errors import InputFormatError, RagMetricsError
from ragmetrics.formats._stream_io import Columns, arrow_chunk

__all__ = ["evaluate"]


def evaluate(
    dataset: Any,
    qrels: Qrels | Mapping[str, Mapping[str, int]] | Any,
    metrics: str | Sequence[str],
    *,
    per_query: bool = False,
    query_col: str | None = None,
    doc_col: str = "doc_id",
    score_col: str | None = None,
    num_partitions: int | None = None,
    name: str | None = None,
    **keywords: Any,
) -> EvaluationResult:
    """Evaluate the run rows of a Ray ``Dataset`` against qrels.

    Args:
        dataset: a ``ray.data.Dataset`` with one row per result: query id (``query_id`` or
            ranx's ``q_id``), ``doc_id`` and ``score`` (without a score column, the row order
            within each query is the ranking, which a shuffle does not keep: give scores).
        qrels: a :class:`Qrels`, a ``{qid: {doc: grade}}`` dict, or a Ray ``Dataset`` of
            judgments (``query_id``, ``doc_id``, ``relevance``), gathered on the driver. The
            qrels are sent once to Ray's object store and read by every task.
        metrics: metric names, as for :func:`~ragmetrics.evaluate`.
        per_query: keep per-query values (gathered on the driver).
        query_col, doc_col, score_col: the run's column names.
        num_partitions: partitions of the shuffle by query (Ray's default when None).
        name: the run's name in the result.
        **keywords: those of :func:`~ragmetrics.evaluate`.

    Returns:
        The :class:`EvaluationResult` of :func:`~ragmetrics.evaluate` on the same rows.
    """
    checked = _qrels(qrels)
    columns = Columns(query_col, doc_col, score_col)
    parts = _partials(dataset, checked, metrics, per_query, columns, num_partitions, keywords)
    if not parts:
        raise RagMetricsError("The dataset is empty: it has no result row to evaluate.")
    return merge(parts).result(checked, name=name)


def _partials(
    dataset: Any,
    qrels: Qrels,
    metrics: str | Sequence[str],
    per_query: bool,
    columns: Columns,
    num_partitions: int | None,
    keywords: dict[str, Any],
) -> list[PartialResult]:
    """One :class:`~ragmetrics.engine.stream.PartialResult` per block of whole queries."""
    ray = import_ray()
    pyarrow = import_pyarrow()
    if not isinstance(dataset, ray.data.Dataset):
        raise InputFormatError(
            f"dataset must be a ray.data.Dataset of run rows; got {type(dataset).__name__}. "
            f"For a Run in memory use ragmetrics.evaluate; for a file, evaluate_stream."
        )
    partial(qrels, _EMPTY_RUN(), metrics, **keywords)  # checks names and keywords first
    query, doc, score = columns.resolve(list(dataset.columns()))
    qrels_ref = ray.put(qrels)
    names = metric_list(metrics)

    def score_block(table: Any) -> Any:
        judged = ray.get(qrels_ref)
        grouped = table.sort_by(query)  # stable: a query's rows keep their order
        chunk = arrow_chunk(grouped, query, doc, score)
        state = [
            pickle.dumps(partial(judged, run, names, per_query=per_query, **keywords))
            for run in batches([chunk], max(grouped.num_rows, 1), "a block of the dataset", None)
        ]
        return pyarrow.table({"partial": pyarrow.array(state, type=pyarrow.binary())})

    shuffled = _by_query(dataset, query, num_partitions)
    # batch_size=None: each call gets one whole block, so each query is whole in one call
    # (the guarantee Ray Data's own map_groups rests on)
    scored = shuffled.map_batches(score_block, batch_size=None, batch_format="pyarrow")
    return [pickle.loads(row["partial"]) for row in scored.take_all()]


def _by_query(dataset: Any, query: str, num_partitions: int | None) -> Any:
    """The dataset with each query's rows in one block, as Ray Data's groupby makes it."""
    from ray.data.context import ShuffleStrategy

    if dataset.context.shuffle_strategy in (ShuffleStrategy.HASH_SHUFFLE,):
        partitions = num_partitions or dataset.context.default_hash_shuffle_parallelism
        return dataset.repartition(partitions, keys=[query], sort=True)
    return dataset.sort(query)


def _qrels(qrels: Any) -> Qrels:
    ray = import_ray()
    if isinstance(qrels, ray.data.Dataset):
        pyarrow = import_pyarrow()
        tables = [ray.get(ref) for ref in qrels.to_arrow_refs()]
        return Qrels.from_arrow(pyarrow.concat_tables(tables))
    return as_qrels(qrels)


def _EMPTY_RUN() -> Any:  # noqa: N802 - a constant made on use
    from ragmetrics.data._run import Run

    return Run.from_lists({"(none)": []})
