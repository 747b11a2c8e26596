"""Compatibility facades: the APIs and numbers of tools users come from, on top of the core.

- :mod:`ragmetrics.compat.remem`: ``RetrievalRecall``, ``RetrievalRecallAll``,
  ``RetrievalNDCGAny`` with ``calculate_metric_scores``.
- :mod:`ragmetrics.compat.autorag`: AutoRAG's retrieval metrics over grouped ground truth.
- :mod:`ragmetrics.compat.tutorial`: the ``RetrievalEvaluator`` and ``RetrievalBenchmark``
  that retrieval tutorials teach.
- :mod:`ragmetrics.compat.pytrec_eval`: pytrec_eval's ``RelevanceEvaluator`` (change one
  import).
"""

from ragmetrics.compat import autorag, pytrec_eval, remem, tutorial

__all__ = ["autorag", "pytrec_eval", "remem", "tutorial"]
