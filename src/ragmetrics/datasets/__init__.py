"""Evaluation sets the project writes itself, for demos, notebooks and tests.

- :func:`demo`: the ``make demo`` set: 45 originals (dated ``user:`` / ``assistant:``
  sessions and handbook pages) and 30 questions graded 1..5 (5 answers, 4 confirms, 3 same
  topic, 1 misleading). Deterministic for a seed; no download.
- :func:`people`: questions about invented people, one answering document each, and
  :func:`hashed_embedding`, a bag-of-words vector that needs no model: a real LlamaIndex or
  LangChain index, offline, to try the adapters on.

Example:
    >>> from ragmetrics.datasets import demo
    >>> data = demo()
    >>> len(data.queries), len(data.corpus)
    (30, 45)
"""

from ragmetrics.datasets._demo import build as demo
from ragmetrics.datasets._demo import write as write_demo
from ragmetrics.datasets._people import hashed_embedding, people

__all__ = ["demo", "hashed_embedding", "people", "write_demo"]
