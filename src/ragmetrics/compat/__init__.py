"""Compatibility facades: the APIs and numbers of tools users come from, on top of the core.

- :mod:`ragmetrics.compat.remem`: ``RetrievalRecall``, ``RetrievalRecallAll``,
  ``RetrievalNDCGAny`` with ``calculate_metric_scores``.
- :mod:`ragmetrics.compat.autorag`: AutoRAG's retrieval metrics over grouped ground truth.
- :mod:`ragmetrics.compat.tutorial`: the ``RetrievalEvaluator`` and ``RetrievalBenchmark``
  that retrieval tutorials teach.
"""

from ragmetrics.compat import autorag, remem, tutorial

__all__ = ["autorag", "remem", "tutorial"]
