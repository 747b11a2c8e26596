"""What the tests build on: an embedding that needs no model, and the small passage set the
grading tests read."""

from __future__ import annotations

import numpy as np
from llama_index.core.embeddings import BaseEmbedding

import ragmetrics as rm
from ragmetrics.datasets import hashed_embedding


class HashingEmbedding(BaseEmbedding):
    """ragmetrics' bag-of-words vector as a LlamaIndex embedding: deterministic, offline."""

    def _get_query_embedding(self, query: str) -> list[float]:
        return hashed_embedding(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return hashed_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return hashed_embedding(text)


def passages() -> rm.RetrievalDataset:
    """12 questions over 40 passages; passage ``dN`` reads ``passage N on topic ...``, so a
    grader can derive its grade from the text it is shown."""
    queries = {f"q{i}": f"question number {i} about topic {i % 4}" for i in range(12)}
    corpus = {f"d{j}": f"passage {j} on topic {j % 4}" + " filler" * (j % 7) for j in range(40)}
    return rm.RetrievalDataset(queries=queries, corpus=corpus, relevant_docs={"q0": ["d0"]})


def two_runs() -> list[rm.Run]:
    """Two runs over :func:`passages` that share part of their top results."""
    rng = np.random.default_rng(3)
    first = {f"q{i}": [f"d{j}" for j in rng.permutation(40)[:8]] for i in range(12)}
    second = {q: [*reversed(docs[:5]), "d39"] for q, docs in first.items()}
    return [rm.Run.from_lists(first, name="bm25"), rm.Run.from_lists(second, name="dense")]
