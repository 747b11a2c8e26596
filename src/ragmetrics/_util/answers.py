"""Comparing a generated answer with reference answers, as SQuAD does: lower case, no
punctuation, no articles (a, an, the), single spaces; then an exact match, or the token F1."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

__all__ = ["exact_match", "normalize_answer", "token_f1"]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD normalization: lowercase, drop punctuation and articles, single spaces.

    Example:
        >>> normalize_answer("The  Eiffel tower, in PARIS!")
        'eiffel tower in paris'
    """
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split())


def exact_match(answer: str, references: Sequence[str]) -> int:
    """1 when the normalized answer equals a normalized reference, else 0.

    Example:
        >>> exact_match("the Eiffel Tower.", ["Eiffel tower", "la tour Eiffel"])
        1
    """
    given = normalize_answer(answer)
    return int(any(given == normalize_answer(r) for r in references))


def token_f1(answer: str, references: Sequence[str]) -> float:
    """The best token F1 of the normalized answer against any normalized reference.

    Example:
        >>> token_f1("Eiffel tower in Paris", ["the Eiffel tower"])  # 2 of 4, 2 of 2
        0.6666666666666666
    """
    given = normalize_answer(answer).split()
    best = 0.0
    for reference in references:
        wanted = normalize_answer(reference).split()
        common = sum((Counter(given) & Counter(wanted)).values())
        if common:
            precision, recall = common / len(given), common / len(wanted)
            best = max(best, 2 * precision * recall / (precision + recall))
    return best
