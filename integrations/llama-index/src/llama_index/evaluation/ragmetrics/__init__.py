"""ragmetrics inside LlamaIndex: metric plug-ins, a dataset evaluator, a retrieval recorder.

- :class:`RagMetricsMetric`: ``RagMetricsMetric.from_names(["ndcg@10", "ra_nwg@5"])`` in
  ``RetrieverEvaluator(metrics=[...])``; :func:`register_metrics` for
  ``RetrieverEvaluator.from_metric_names``.
- :class:`RagMetricsRetrieverEvaluator`: a retriever over a whole dataset.
- :class:`RetrievalRecorder`: records every retrieval of a pipeline into a ``ragmetrics.Run``;
  inside ``with question(query_id):`` an agent's tool calls belong to that query.
"""

from llama_index.evaluation.ragmetrics._nodes import node_id, node_ids, node_texts
from llama_index.evaluation.ragmetrics.evaluator import RagMetricsRetrieverEvaluator
from llama_index.evaluation.ragmetrics.judge import LLMJudge, as_judge
from llama_index.evaluation.ragmetrics.metrics import (
    MetricKeyWarning,
    RagMetricsMetric,
    register_metrics,
)
from llama_index.evaluation.ragmetrics.recorder import RetrievalRecord, RetrievalRecorder
from ragmetrics.adapters import question

__all__ = [
    "LLMJudge",
    "MetricKeyWarning",
    "RagMetricsMetric",
    "RagMetricsRetrieverEvaluator",
    "RetrievalRecord",
    "RetrievalRecorder",
    "as_judge",
    "node_id",
    "node_ids",
    "node_texts",
    "question",
    "register_metrics",
]
