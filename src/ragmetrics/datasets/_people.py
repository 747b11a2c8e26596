"""A synthetic question set about invented people, and a bag-of-words embedding that needs
no model: enough to build a real index in LlamaIndex or LangChain and see the adapters work,
offline and deterministically.

Each document says where one person lives and what they eat; each question names one person,
so exactly one document answers it (grade 2). Word overlap finds it, which is what the hashed
embedding measures.
"""

from __future__ import annotations

import hashlib
import random

import numpy as np

from ragmetrics.data._dataset import RetrievalDataset

__all__ = ["hashed_embedding", "people"]

_FIRST = [
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
]
_LAST = [
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
]
_NAMES = [first + last for first in _FIRST for last in _LAST]
_CITIES = ("Lyon", "Porto", "Quito", "Oslo", "Cairo", "Lima", "Hanoi", "Perth", "Turin", "Accra")
_FOODS = ("figs", "rice", "olives", "plums", "bread", "lentils", "honey", "pears")


def people(n_docs: int = 300, seed: int = 0) -> RetrievalDataset:
    """``n_docs`` documents ``doc0``, ``doc1``, ... and as many questions ``q0``, ``q1``, ...;
    question ``qi`` is answered by ``doc{i}`` alone (grade 2). The same seed gives the same set.

    Example:
        >>> from ragmetrics.datasets import people
        >>> data = people(3)
        >>> data.queries["q1"]
        'Where does Allex live and what does Allex eat?'
        >>> data.relevant_docs["q1"]
        {'doc1': 2}
    """
    rng = random.Random(seed)
    corpus, queries, relevant = {}, {}, {}
    for i in range(n_docs):
        name = _NAMES[i % len(_NAMES)] + ("" if i < len(_NAMES) else str(i))
        city, food = rng.choice(_CITIES), rng.choice(_FOODS)
        corpus[f"doc{i}"] = (
            f"{name} lives in {city}. Every morning {name} eats {food} with friends."
        )
        queries[f"q{i}"] = f"Where does {name} live and what does {name} eat?"
        relevant[f"q{i}"] = {f"doc{i}": 2}
    return RetrievalDataset(queries=queries, corpus=corpus, relevant_docs=relevant)


def hashed_embedding(text: str, dim: int = 256) -> list[float]:
    """The words of ``text`` (lower-cased, ``.`` and ``?`` dropped) counted into ``dim`` buckets
    by their MD5, then scaled to length 1: texts sharing words point the same way. No model, no
    download, the same vector on every machine; for trying a pipeline, not for real retrieval.

    Example:
        >>> from ragmetrics.datasets import hashed_embedding
        >>> a, b = hashed_embedding("Where does Bo live?"), hashed_embedding("Bo lives in Oslo.")
        >>> round(sum(x * y for x, y in zip(a, b)), 3)  # one shared word of four and four
        0.25
    """
    vector = np.zeros(dim)
    for word in text.lower().replace("?", " ").replace(".", " ").split():
        vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % dim] += 1.0
    norm = np.linalg.norm(vector)
    return (vector / norm if norm else vector).tolist()
