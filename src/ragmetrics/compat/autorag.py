"""AutoRAG's retrieval metrics over grouped ground truth, with AutoRAG's exact semantics.

Ground truth is a list of groups, ``[["a", "b"], ["c"]]``: AND across groups, OR within one
(a or b, and c). Every function takes one query (``gt``: list of groups, ``pred``: list of
ids) and returns a float, or a batch (``gt``: list of those, ``pred``: list of id lists) and
returns a list of floats. On gt ``[["test-1", "test-2"], ["test-3"]]`` and pred
``["test-1", "pred-1", "test-2", "pred-3"]``: precision 0.5, recall 0.5, f1 0.5, mrr 0.5,
map 5/12, ndcg 0.703918.

- precision: retrieved ids that belong to some group / number retrieved.
- recall: groups with a retrieved member / number of groups (the core's ``group_recall``).
- f1: their harmonic mean (0 when both are 0).
- mrr: per group, 1 / rank of its first retrieved member (0 if none); averaged over groups.
  This is AutoRAG's definition, not trec_eval's reciprocal rank.
- map: per group, the mean precision at the ranks of its members; averaged over groups.
- ndcg: binary gain over all gt ids, ideal ``min(|gt|, |pred|)`` ones (the core's ndcg@|pred|).

The token-level metrics compare passage *contents* after SQuAD-style normalization (lowercase,
no punctuation, no articles, single spaces); each retrieved passage is scored against its best
ground-truth passage, and the scores are averaged over the retrieved passages.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from ragmetrics.errors import RagMetricsError

Groups = Sequence[Sequence[str]]


def _is_batch(pred: Sequence[Any]) -> bool:
    return bool(pred) and not isinstance(pred[0], str)


def _apply(
    single: Callable[[Groups, Sequence[str]], float], gt: Any, pred: Any
) -> float | list[float]:
    if isinstance(pred, str) or isinstance(gt, str):
        raise RagMetricsError("gt is a list of groups of ids and pred a list of ids, not strings.")
    if _is_batch(pred):
        if len(gt) != len(pred):
            raise RagMetricsError(
                f"gt has {len(gt)} queries but pred has {len(pred)}; pass one of each per query."
            )
        return [single(g, p) for g, p in zip(gt, pred, strict=True)]
    return single(gt, pred)


def _groups(gt: Groups) -> list[frozenset[str]]:
    if not gt:
        raise RagMetricsError("The ground truth of a query is empty; give at least one group.")
    groups = []
    for group in gt:
        if isinstance(group, str):
            raise RagMetricsError(
                f"A ground-truth group must be a list of ids; got the string {group!r}."
            )
        groups.append(frozenset(group))
    return groups


def _precision(gt: Groups, pred: Sequence[str]) -> float:
    groups = _groups(gt)
    if not pred:
        return 0.0
    return sum(any(p in g for g in groups) for p in pred) / len(pred)


def _recall(gt: Groups, pred: Sequence[str]) -> float:
    groups = _groups(gt)
    found = set(pred)
    return sum(bool(g & found) for g in groups) / len(groups)


def _f1(gt: Groups, pred: Sequence[str]) -> float:
    p, r = _precision(gt, pred), _recall(gt, pred)
    return 2 * p * r / (p + r) if p + r else 0.0


def _mrr(gt: Groups, pred: Sequence[str]) -> float:
    groups = _groups(gt)
    total = 0.0
    for group in groups:
        rank = next((i for i, p in enumerate(pred, start=1) if p in group), None)
        total += 0.0 if rank is None else 1.0 / rank
    return total / len(groups)


def _map(gt: Groups, pred: Sequence[str]) -> float:
    groups = _groups(gt)
    total = 0.0
    for group in groups:
        hits, precisions = 0, []
        for rank, p in enumerate(pred, start=1):
            if p in group:
                hits += 1
                precisions.append(hits / rank)
        total += sum(precisions) / len(precisions) if precisions else 0.0
    return total / len(groups)


def _ndcg(gt: Groups, pred: Sequence[str]) -> float:
    relevant = frozenset().union(*_groups(gt))
    dcg = sum(1.0 / math.log2(i + 2) for i, p in enumerate(pred) if p in relevant)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(relevant), len(pred))))
    return dcg / ideal if ideal > 0 else 0.0


def retrieval_precision(gt: Any, pred: Any) -> float | list[float]:
    """Retrieved ids that belong to some group / number retrieved."""
    return _apply(_precision, gt, pred)


def retrieval_recall(gt: Any, pred: Any) -> float | list[float]:
    """Groups with a retrieved member / number of groups."""
    return _apply(_recall, gt, pred)


def retrieval_f1(gt: Any, pred: Any) -> float | list[float]:
    """Harmonic mean of retrieval_precision and retrieval_recall."""
    return _apply(_f1, gt, pred)


def retrieval_mrr(gt: Any, pred: Any) -> float | list[float]:
    """Mean over groups of 1 / rank of the group's first retrieved member."""
    return _apply(_mrr, gt, pred)


def retrieval_map(gt: Any, pred: Any) -> float | list[float]:
    """Mean over groups of the mean precision at the ranks of the group's members."""
    return _apply(_map, gt, pred)


def retrieval_ndcg(gt: Any, pred: Any) -> float | list[float]:
    """Binary nDCG over all ground-truth ids; the ideal has min(|gt|, |pred|) relevant slots."""
    return _apply(_ndcg, gt, pred)


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD normalization: lowercase, drop punctuation and articles, single spaces."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split())


def _token_scores(truth: str, predicted: str) -> tuple[float, float, float]:
    truth_tokens = normalize_answer(truth).split()
    predicted_tokens = normalize_answer(predicted).split()
    common = sum((Counter(truth_tokens) & Counter(predicted_tokens)).values())
    if common == 0:
        return 0.0, 0.0, 0.0
    precision = common / len(predicted_tokens)
    recall = common / len(truth_tokens)
    return precision, recall, 2 * precision * recall / (precision + recall)


def _token_metric(index: int) -> Callable[[Groups, Sequence[str]], float]:
    def score(gt_contents: Groups, pred_contents: Sequence[str]) -> float:
        truths = [t for group in _groups(gt_contents) for t in group]
        if not pred_contents:
            return 0.0
        best = [max(_token_scores(t, p)[index] for t in truths) for p in pred_contents]
        return sum(best) / len(best)

    return score


def retrieval_token_precision(gt_contents: Any, pred_contents: Any) -> float | list[float]:
    """Token precision of each retrieved passage against its best ground-truth passage, averaged."""
    return _apply(_token_metric(0), gt_contents, pred_contents)


def retrieval_token_recall(gt_contents: Any, pred_contents: Any) -> float | list[float]:
    """Token recall of each retrieved passage against its best ground-truth passage, averaged."""
    return _apply(_token_metric(1), gt_contents, pred_contents)


def retrieval_token_f1(gt_contents: Any, pred_contents: Any) -> float | list[float]:
    """Token F1 of each retrieved passage against its best ground-truth passage, averaged."""
    return _apply(_token_metric(2), gt_contents, pred_contents)


__all__ = [
    "normalize_answer",
    "retrieval_f1",
    "retrieval_map",
    "retrieval_mrr",
    "retrieval_ndcg",
    "retrieval_precision",
    "retrieval_recall",
    "retrieval_token_f1",
    "retrieval_token_precision",
    "retrieval_token_recall",
]
