"""ragmetrics inside LlamaIndex: metric plug-ins, a dataset evaluator, a retrieval recorder.

- :class:`RagMetricsMetric`: ``RagMetricsMetric.from_name("ndcg@10")`` in
  ``RetrieverEvaluator(metrics=[...])``.
- :class:`RagMetricsRetrieverEvaluator`: a retriever over a ``ragmetrics.RetrievalDataset``.
- :class:`RetrievalRecorder`: records every retrieval of a pipeline into a ``ragmetrics.Run``.
"""

from llama_index.evaluation.ragmetrics._nodes import node_id, node_ids, node_texts
from llama_index.evaluation.ragmetrics.evaluator import RagMetricsRetrieverEvaluator
from llama_index.evaluation.ragmetrics.metrics import RagMetricsMetric
from llama_index.evaluation.ragmetrics.recorder import RetrievalRecord, RetrievalRecorder

__all__ = [
    "RagMetricsMetric",
    "RagMetricsRetrieverEvaluator",
    "RetrievalRecord",
    "RetrievalRecorder",
    "node_id",
    "node_ids",
    "node_texts",
]
