"""What the tests build on: an embedding that needs no model, a BM25 retriever over a fixed
list of documents, and the small passage set the grading tests read."""

from __future__ import annotations

import numpy as np
from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict
from rank_bm25 import BM25Okapi

import ragmetrics as rm
from ragmetrics.datasets import hashed_embedding


class HashingEmbeddings(Embeddings):
    """ragmetrics' bag-of-words vector as LangChain embeddings: deterministic, offline."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [hashed_embedding(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return hashed_embedding(text)


class BM25Retriever(BaseRetriever):
    """BM25 (rank_bm25's Okapi) over a fixed list of documents."""

    documents: list[Document]
    k: int = 5
    model: BM25Okapi | None = None

    model_config = ConfigDict(arbitrary_types_allowed=True)

    def model_post_init(self, context: object) -> None:
        self.model = BM25Okapi([_tokens(d.page_content) for d in self.documents])

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        assert self.model is not None
        scores = self.model.get_scores(_tokens(query))
        best = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[: self.k]
        return [self.documents[i] for i in best]


def _tokens(text: str) -> list[str]:
    return text.lower().replace(".", " ").replace("?", " ").split()


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
