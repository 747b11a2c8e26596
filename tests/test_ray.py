"""ragmetrics.ray on a real local Ray instance with the machine's CPUs (at most 2)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from ragmetrics import Qrels, Run, evaluate
from ragmetrics.errors import InputFormatError, InvalidParameterError

pytest.importorskip("ray.data", reason="Ray Data is the [ray] extra: pip install 'ragmetrics[ray]'")
import ray
import ray.data

from ragmetrics import ray as ragmetrics_ray
from tests.test_stream import GRADE_MAP, METRICS, _data


@pytest.fixture(scope="module")
def local_ray() -> Iterator[Any]:
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    ray.init(
        num_cpus=min(2, os.cpu_count() or 1),
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
    )
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    yield ray
    ray.shutdown()


def _rows(run: Run) -> Any:
    frame = run.to_pandas()
    return ray.data.from_pandas(frame[["query_id", "doc_id", "score"]])


@pytest.mark.parametrize("blocks", [1, 16])
def test_ray_equals_evaluate_for_one_and_many_blocks(local_ray: Any, blocks: int) -> None:
    qrels, run = _data(7, n_queries=300)
    dataset = _rows(run).repartition(blocks)
    expected = evaluate(qrels, Run.from_pandas(run.to_pandas()), METRICS, grade_map=GRADE_MAP)
    result = ragmetrics_ray.evaluate(dataset, qrels, METRICS, per_query=True, grade_map=GRADE_MAP)
    assert result.aggregate == expected.aggregate  # bit for bit
    assert result.tallies == expected.tallies
    assert result.counts == expected.counts
    assert result.query_ids == expected.query_ids
    assert np.array_equal(result.values, expected.values, equal_nan=True)
    assert sorted(result.unjudged_query_ids) == sorted(expected.unjudged_query_ids)


def test_qrels_as_a_dataset_and_ranx_columns(local_ray: Any) -> None:
    qrels, run = _data(8, n_queries=120)
    judged = Qrels.from_dict(qrels)
    frame = run.to_pandas()[["query_id", "doc_id", "score"]].rename(columns={"query_id": "q_id"})
    dataset = ray.data.from_pandas(frame).repartition(4)
    qrels_rows = ray.data.from_pandas(judged.to_pandas())
    result = ragmetrics_ray.evaluate(dataset, qrels_rows, ["ndcg@10", "map"], num_partitions=3)
    assert result.aggregate == evaluate(judged, run, ["ndcg@10", "map"]).aggregate


def test_mistakes_are_named_before_ray_works(local_ray: Any) -> None:
    qrels, run = _data(9, n_queries=20)
    with pytest.raises(InputFormatError, match=r"ray\.data\.Dataset"):
        ragmetrics_ray.evaluate(run, qrels, "P@5")
    with pytest.raises(InvalidParameterError, match="missing"):
        ragmetrics_ray.evaluate(_rows(run), qrels, "P@5", missing="drop")
    no_docs = ray.data.from_items([{"query_id": "q1", "document": "a", "score": 1.0}])
    with pytest.raises(InputFormatError, match="no column 'doc_id'"):
        ragmetrics_ray.evaluate(no_docs, qrels, "P@5")
