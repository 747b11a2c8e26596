"""ragmetrics in LangChain: retrieval metrics as a callback, an evaluator, a LangSmith evaluator.

- :class:`RetrievalEvalCallbackHandler`: records and scores every retrieval of a chain.
- :func:`evaluate_retriever` / :func:`aevaluate_retriever`: a retriever over a dataset.
- :func:`langsmith_evaluator`: a function evaluator for LangSmith-style experiments.
- :func:`question`: inside ``with question(query_id):`` an agent's retrievals belong to that
  query, whatever text it searched with.
"""

from langchain_ragmetrics._documents import content_hash, document_id, document_ids, document_texts
from langchain_ragmetrics.callbacks import RetrievalEvalCallbackHandler, RetrievalRecord
from langchain_ragmetrics.evaluation import (
    aevaluate_retriever,
    evaluate_retriever,
    langsmith_evaluator,
)
from langchain_ragmetrics.judge import ChatModelJudge, as_judge
from ragmetrics.adapters import question

__all__ = [
    "ChatModelJudge",
    "RetrievalEvalCallbackHandler",
    "RetrievalRecord",
    "aevaluate_retriever",
    "as_judge",
    "content_hash",
    "document_id",
    "document_ids",
    "document_texts",
    "evaluate_retriever",
    "langsmith_evaluator",
    "question",
]
