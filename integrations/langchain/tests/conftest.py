"""Real langchain-core objects, offline: an in-memory vector store and a BM25 retriever."""

from __future__ import annotations

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langchain_ragmetrics")

from langchain_core.documents import Document
from langchain_core.vectorstores import InMemoryVectorStore

import ragmetrics as rm
from ragmetrics.datasets import people
from tests.helpers import BM25Retriever, HashingEmbeddings


@pytest.fixture(scope="session")
def dataset() -> rm.RetrievalDataset:
    return people()


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
