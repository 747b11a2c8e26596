"""Real LlamaIndex objects, offline: a deterministic local embedding, a small corpus."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")
pytest.importorskip("llama_index.evaluation.ragmetrics")

from llama_index.core import Settings, VectorStoreIndex
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.schema import TextNode

import ragmetrics as rm
from tests._corpus import hash_vector, make_corpus


class HashingEmbedding(BaseEmbedding):
    """Bag of words hashed into 256 dimensions, L2-normalized: deterministic, no download."""

    def _vector(self, text: str) -> list[float]:
        return hash_vector(text)

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)


@pytest.fixture(scope="session")
def corpus_data() -> tuple[dict[str, str], dict[str, str], dict[str, dict[str, int]]]:
    return make_corpus()


@pytest.fixture(scope="session")
def dataset(corpus_data) -> rm.RetrievalDataset:  # type: ignore[no-untyped-def]
    corpus, queries, relevant = corpus_data
    return rm.RetrievalDataset(queries=queries, corpus=corpus, relevant_docs=relevant)


@pytest.fixture(scope="session")
def nodes(corpus_data) -> list[TextNode]:  # type: ignore[no-untyped-def]
    corpus, _, _ = corpus_data
    return [
        TextNode(id_=doc_id, text=text, metadata={"source": doc_id})
        for doc_id, text in corpus.items()
    ]


@pytest.fixture(scope="session")
def vector_index(nodes) -> VectorStoreIndex:  # type: ignore[no-untyped-def]
    Settings.embed_model = HashingEmbedding()
    return VectorStoreIndex(nodes, embed_model=HashingEmbedding())
