"""Real LlamaIndex objects, offline: a deterministic local embedding, a small corpus."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")
pytest.importorskip("llama_index.evaluation.ragmetrics")

from llama_index.core import Settings, VectorStoreIndex
from llama_index.core.schema import TextNode

import ragmetrics as rm
from ragmetrics.datasets import people
from tests.helpers import HashingEmbedding


@pytest.fixture(scope="session")
def dataset() -> rm.RetrievalDataset:
    return people()


@pytest.fixture(scope="session")
def nodes(dataset: rm.RetrievalDataset) -> list[TextNode]:
    return [
        TextNode(id_=doc_id, text=text, metadata={"source": doc_id})
        for doc_id, text in dataset.corpus.items()
    ]


@pytest.fixture(scope="session")
def vector_index(nodes: list[TextNode]) -> VectorStoreIndex:
    Settings.embed_model = HashingEmbedding()
    return VectorStoreIndex(nodes, embed_model=HashingEmbedding())
