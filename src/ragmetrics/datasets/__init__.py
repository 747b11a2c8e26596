"""Evaluation sets the project writes itself, for demos, notebooks and tests.

- :func:`demo`: the ``make demo`` set: 45 originals (dated ``user:`` / ``assistant:``
  sessions and handbook pages) and 30 questions graded 1..5 (5 answers, 4 confirms, 3 same
  topic, 1 misleading). Deterministic for a seed; no download.

Example:
    >>> from ragmetrics.datasets import demo
    >>> data = demo()
    >>> len(data.queries), len(data.corpus)
    (30, 45)
"""

from ragmetrics.datasets._demo import build as demo
from ragmetrics.datasets._demo import write as write_demo

__all__ = ["demo", "write_demo"]
