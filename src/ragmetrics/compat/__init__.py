"""Compatibility facades: the APIs and numbers of tools users come from, on top of the core.

- :mod:`ragmetrics.compat.remem`: ``RetrievalRecall``, ``RetrievalRecallAll``,
  ``RetrievalNDCGAny`` with ``calculate_metric_scores``.
- :mod:`ragmetrics.compat.autorag`: AutoRAG's retrieval metrics over grouped ground truth.
- :mod:`ragmetrics.compat.tutorial`: the ``RetrievalEvaluator`` and ``RetrievalBenchmark``
  that retrieval tutorials teach.
- :mod:`ragmetrics.compat.pytrec_eval`: pytrec_eval's ``RelevanceEvaluator`` (change one
  import).
- :mod:`ragmetrics.compat.ir_measures`: ir_measures' ``iter_calc``, ``calc_aggregate``,
  ``evaluator``, ``parse_measure`` and measure objects (``nDCG@10``, ``P(rel=2)@5``).
"""

from ragmetrics.compat import autorag, ir_measures, pytrec_eval, remem, tutorial

__all__ = ["autorag", "ir_measures", "pytrec_eval", "remem", "tutorial"]
