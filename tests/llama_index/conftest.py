"""Real LlamaIndex objects, offline: a deterministic local embedding, a small corpus."""

from __future__ import annotations

import hashlib
import random

import numpy as np
import pytest

pytest.importorskip("llama_index.core")
pytest.importorskip("llama_index.evaluation.ragmetrics")

from llama_index.core import Settings, VectorStoreIndex
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.schema import TextNode

import ragmetrics as rm


class HashingEmbedding(BaseEmbedding):
    """Bag of words hashed into 256 dimensions, L2-normalized: deterministic, no download."""

    def _vector(self, text: str) -> list[float]:
        vector = np.zeros(256)
        for word in text.lower().replace("?", " ").replace(".", " ").split():
            vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % 256] += 1.0
        norm = np.linalg.norm(vector)
        return (vector / norm if norm else vector).tolist()

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)


NAMES = [
    f"{a}{b}"
    for a in (
        "Al",
        "Bo",
        "Cy",
        "Di",
        "Ed",
        "Fa",
        "Gu",
        "Ha",
        "Io",
        "Ju",
        "Ka",
        "Lo",
        "Mi",
        "No",
        "Os",
        "Pa",
        "Qu",
        "Ro",
    )
    for b in (
        "ran",
        "lex",
        "mo",
        "vik",
        "dra",
        "sel",
        "tor",
        "ny",
        "phe",
        "zu",
        "bel",
        "cas",
        "dor",
        "fin",
        "gal",
        "hen",
        "ix",
    )
]
CITIES = ["Lyon", "Porto", "Quito", "Oslo", "Cairo", "Lima", "Hanoi", "Perth", "Turin", "Accra"]
FOODS = ["figs", "rice", "olives", "plums", "bread", "lentils", "honey", "pears"]


def make_corpus(
    n_docs: int = 300, seed: int = 0
) -> tuple[dict[str, str], dict[str, str], dict[str, dict[str, int]]]:
    """Documents about invented people; each question names one person."""
    rng = random.Random(seed)
    corpus, queries, relevant = {}, {}, {}
    for i in range(n_docs):
        name = NAMES[i % len(NAMES)] + ("" if i < len(NAMES) else str(i))
        city, food = rng.choice(CITIES), rng.choice(FOODS)
        corpus[f"doc{i}"] = (
            f"{name} lives in {city}. Every morning {name} eats {food} with friends."
        )
        queries[f"q{i}"] = f"Where does {name} live and what does {name} eat?"
        relevant[f"q{i}"] = {f"doc{i}": 2}
    return corpus, queries, relevant


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
