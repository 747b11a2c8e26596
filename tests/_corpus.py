"""A synthetic corpus for the adapter tests, and a deterministic hashing embedding."""

from __future__ import annotations

import hashlib
import random

import numpy as np

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


def hash_vector(text: str, dim: int = 256) -> list[float]:
    """Bag of words hashed into ``dim`` dimensions, L2-normalized: deterministic, offline."""
    vector = np.zeros(dim)
    for word in text.lower().replace("?", " ").replace(".", " ").split():
        vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % dim] += 1.0
    norm = np.linalg.norm(vector)
    return (vector / norm if norm else vector).tolist()
