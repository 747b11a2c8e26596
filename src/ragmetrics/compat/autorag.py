"""AutoRAG's retrieval metrics over grouped ground truth, with AutoRAG's exact semantics.

Ground truth is a list of groups, ``[["a", "b"], ["c"]]``: AND across groups, OR within one
(a or b, and c). Every function takes one query (``retrieval_gt``: list of groups, ``pred``:
list of ids, positionally or by those names) and returns a float, or a batch (lists of
those) and returns a list. As AutoRAG does, a query with no ground truth or no prediction,
an empty group or a blank id scores ``None``, not 0 and not an error. On gt
``[["test-1", "test-2"], ["test-3"]]`` and pred
``["test-1", "pred-1", "test-2", "pred-3"]``: precision 0.5, recall 0.5, f1 0.5, mrr 0.5,
map 5/12, ndcg 0.703918.

- precision: distinct retrieved ids that belong to some group / number retrieved (so a
  repeated prediction lowers it: gt ``[["a"]]``, pred ``["a", "a"]`` gives 0.5).
- recall: groups with a retrieved member / number of groups (the core's ``group_recall``).
- f1: their harmonic mean (0 when both are 0).
- mrr: per group, 1 / rank of its first retrieved member (0 if none); averaged over groups.
  This is AutoRAG's definition, not trec_eval's reciprocal rank.
- map: per group, the mean precision at the ranks of its members; averaged over groups.
- ndcg: binary gain over the raw prediction list (a repeated hit adds gain again); the ideal
  is ``min(ids listed in gt, |pred|)`` ones, an id listed in two groups counted twice
  (gt ``[["a"], ["a"]]``, pred ``["a", "x"]`` gives 0.6131).

The token-level metrics compare passage *contents* after SQuAD-style normalization (lowercase,
no punctuation, no articles, single spaces); each retrieved passage is scored against its best
ground-truth passage, and the scores are averaged over the retrieved passages.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from ragmetrics._util.answers import normalize_answer
from ragmetrics.errors import RagMetricsError

Groups = Sequence[Sequence[str]]


def _is_batch(pred: Sequence[Any]) -> bool:
    return bool(pred) and not isinstance(pred[0], str) and pred[0] is not None


Score = float | None


def _apply(
    single: Callable[[Groups, Sequence[str]], float], gt: Any, pred: Any
) -> Score | list[Score]:
    if isinstance(pred, str) or isinstance(gt, str):
        raise RagMetricsError(
            "retrieval_gt is a list of groups of ids and pred a list of ids, not strings."
        )
    for name, value in (("retrieval_gt", gt), ("pred", pred)):
        if value is not None and not isinstance(value, Sequence):
            raise RagMetricsError(
                f"{name} must be a list (of groups of ids, or of ids); got {type(value).__name__}."
            )
    if pred is not None and _is_batch(pred):
        if gt is None or len(gt) != len(pred):
            raise RagMetricsError(
                f"retrieval_gt has {0 if gt is None else len(gt)} queries but pred has "
                f"{len(pred)}; pass one of each per query."
            )
        return [_one(single, g, p) for g, p in zip(gt, pred, strict=True)]
    return _one(single, gt, pred)


def _one(single: Callable[[Groups, Sequence[str]], float], gt: Any, pred: Any) -> Score:
    """One query's value, or None where AutoRAG returns None: no ground truth or no
    prediction, an empty group, or an id that is blank once stripped."""
    if not gt or not pred:
        return None
    if not isinstance(gt, Sequence) or not isinstance(pred, Sequence):
        raise RagMetricsError("retrieval_gt and pred of one query must be lists.")
    for group in gt:
        if isinstance(group, str) or not isinstance(group, Sequence):
            raise RagMetricsError(
                f"A ground-truth group must be a list of ids; got the string {group!r}."
            )
        if not group or any(not isinstance(i, str) or not i.strip() for i in group):
            return None
    if any(not isinstance(i, str) or not i.strip() for i in pred):
        return None
    return single(gt, pred)


def _precision(gt: Groups, pred: Sequence[str]) -> float:
    wanted = set().union(*gt)
    return len(wanted.intersection(pred)) / len(pred)  # unique hits over the raw length


def _recall(gt: Groups, pred: Sequence[str]) -> float:
    found = set(pred)
    return sum(bool(found.intersection(g)) for g in gt) / len(gt)


def _f1(gt: Groups, pred: Sequence[str]) -> float:
    p, r = _precision(gt, pred), _recall(gt, pred)
    return 2 * p * r / (p + r) if p + r else 0.0


def _mrr(gt: Groups, pred: Sequence[str]) -> float:
    total = 0.0
    for group in map(set, gt):
        rank = next((i for i, p in enumerate(pred, start=1) if p in group), None)
        total += 0.0 if rank is None else 1.0 / rank
    return total / len(gt)


def _map(gt: Groups, pred: Sequence[str]) -> float:
    total = 0.0
    for group in map(set, gt):
        hits, precisions = 0, []
        for rank, p in enumerate(pred, start=1):
            if p in group:
                hits += 1
                precisions.append(hits / rank)
        total += sum(precisions) / len(precisions) if precisions else 0.0
    return total / len(gt)


def _ndcg(gt: Groups, pred: Sequence[str]) -> float:
    wanted = set().union(*gt)
    dcg = sum(1.0 / math.log2(i + 2) for i, p in enumerate(pred) if p in wanted)
    listed = sum(map(len, gt))  # every id listed, repeats across groups included
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(listed, len(pred))))
    return dcg / ideal if ideal > 0 else 0.0


def retrieval_precision(retrieval_gt: Any, pred: Any) -> Score | list[Score]:
    """Distinct retrieved ids that belong to some group / number retrieved (a repeated
    prediction lowers it)."""
    return _apply(_precision, retrieval_gt, pred)


def retrieval_recall(retrieval_gt: Any, pred: Any) -> Score | list[Score]:
    """Groups with a retrieved member / number of groups."""
    return _apply(_recall, retrieval_gt, pred)


def retrieval_f1(retrieval_gt: Any, pred: Any) -> Score | list[Score]:
    """Harmonic mean of retrieval_precision and retrieval_recall (0 when both are 0)."""
    return _apply(_f1, retrieval_gt, pred)


def retrieval_mrr(retrieval_gt: Any, pred: Any) -> Score | list[Score]:
    """Mean over groups of 1 / rank of the group's first retrieved member."""
    return _apply(_mrr, retrieval_gt, pred)


def retrieval_map(retrieval_gt: Any, pred: Any) -> Score | list[Score]:
    """Mean over groups of the mean precision at the ranks holding a member of the group."""
    return _apply(_map, retrieval_gt, pred)


def retrieval_ndcg(retrieval_gt: Any, pred: Any) -> Score | list[Score]:
    """Binary nDCG over the raw prediction list (a repeated hit adds gain again); the ideal
    has ``min(ids listed in retrieval_gt, len(pred))`` relevant slots."""
    return _apply(_ndcg, retrieval_gt, pred)


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
        truths = [t for group in gt_contents for t in group]
        best = [max(_token_scores(t, p)[index] for t in truths) for p in pred_contents]
        return sum(best) / len(best)

    return score


def retrieval_token_precision(gt_contents: Any, pred_contents: Any) -> Score | list[Score]:
    """Token precision of each retrieved passage against its best ground-truth passage, averaged."""
    return _apply(_token_metric(0), gt_contents, pred_contents)


def retrieval_token_recall(gt_contents: Any, pred_contents: Any) -> Score | list[Score]:
    """Token recall of each retrieved passage against its best ground-truth passage, averaged."""
    return _apply(_token_metric(1), gt_contents, pred_contents)


def retrieval_token_f1(gt_contents: Any, pred_contents: Any) -> Score | list[Score]:
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
