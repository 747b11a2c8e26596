"""Real langchain-core objects, offline: an in-memory vector store and a BM25 retriever."""

from __future__ import annotations

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langchain_ragmetrics")

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever
from langchain_core.vectorstores import InMemoryVectorStore
from pydantic import ConfigDict
from rank_bm25 import BM25Okapi

import ragmetrics as rm
from tests._corpus import hash_vector, make_corpus


class HashingEmbeddings(Embeddings):
    """Bag of words hashed into 256 dimensions: deterministic, no download."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [hash_vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return hash_vector(text)


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


@pytest.fixture(scope="session")
def dataset() -> rm.RetrievalDataset:
    corpus, queries, relevant = make_corpus()
    return rm.RetrievalDataset(queries=queries, corpus=corpus, relevant_docs=relevant)


@pytest.fixture(scope="session")
def documents(dataset: rm.RetrievalDataset) -> list[Document]:
    return [Document(page_content=t, metadata={"doc_id": d}) for d, t in dataset.corpus.items()]


@pytest.fixture(scope="session")
def vector_store(documents: list[Document]) -> InMemoryVectorStore:
    store = InMemoryVectorStore(embedding=HashingEmbeddings())
    store.add_documents(documents)
    return store


@pytest.fixture(scope="session")
def bm25(documents: list[Document]) -> BM25Retriever:
    return BM25Retriever(documents=documents, k=5)
