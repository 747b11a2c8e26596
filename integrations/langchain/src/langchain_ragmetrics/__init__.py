"""ragmetrics in LangChain: retrieval metrics as a callback, an evaluator, a LangSmith evaluator.

- :class:`RetrievalEvalCallbackHandler`: records and scores every retrieval of a chain.
- :func:`evaluate_retriever` / :func:`aevaluate_retriever`: a retriever over a dataset.
- :func:`langsmith_evaluator`: a function evaluator for LangSmith-style experiments.
"""

from langchain_ragmetrics._documents import content_hash, document_id, document_ids, document_texts
from langchain_ragmetrics.callbacks import RetrievalEvalCallbackHandler, RetrievalRecord
from langchain_ragmetrics.evaluation import (
    aevaluate_retriever,
    evaluate_retriever,
    langsmith_evaluator,
)
from langchain_ragmetrics.judge import ChatModelJudge, as_judge

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
]
