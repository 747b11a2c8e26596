"""Evaluation sets the project writes itself, for demos, notebooks and tests.

- :func:`demo`: the ``make demo`` set: 47 originals (dated ``user:`` / ``assistant:``
  sessions and handbook pages) and 33 questions, every original graded 1..5 for each (5
  answers, 4 confirms, 3 same topic, 2 weak, 1 not relevant or misleading). The evidence is
  uneven: one decisive passage among many partial ones, many confirmations, the answer
  said several times, or none (three questions). Deterministic for a seed; no download.
- :func:`people`: questions about invented people, one answering document each, and
  :func:`hashed_embedding`, a bag-of-words vector that needs no model: a real LlamaIndex or
  LangChain index, offline, to try the adapters on.

Example:
    >>> from ragmetrics.datasets import demo
    >>> data = demo()
    >>> len(data.queries), len(data.corpus)
    (33, 47)
"""

from ragmetrics.datasets._demo import build as demo
from ragmetrics.datasets._demo import nuggets as demo_nuggets
from ragmetrics.datasets._demo import write as write_demo
from ragmetrics.datasets._people import hashed_embedding, people

__all__ = ["demo", "demo_nuggets", "hashed_embedding", "people", "write_demo"]
