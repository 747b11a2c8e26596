"""The remem retrieval metrics: ``Recall@k``, ``Recall_all@k`` and ``NDCG_any@k``.

Each class has ``calculate_metric_scores(gold_docs, retrieved_chunks, k_list)`` returning
``(pooled_results, example_results)``: the mean over examples per key, rounded to 4
decimals as remem rounds it, and one dict per example (unrounded). Semantics:

- ``Recall@k`` = ``|set(L[:k]) & set(gold)| / |set(gold)|`` by exact string equality, 0 for
  an empty gold list (the core's recall@k over the first k entries, repeats and empty
  strings included as remem counts them).
- ``Recall_all@k`` = 1 if every gold doc has a chunk among the first k that
  :func:`~ragmetrics.matching.is_chunk_from_original` maps to it, else 0; 0 for an empty
  gold list (remem's own rule; LongMemEval's original scores 1 there).
- ``NDCG_any@k``: a chunk has relevance 1 if it comes from any gold doc;
  ``DCG = rel_1 + sum_{i>=2} rel_i / log2(i)`` (ranks 1 and 2 both weigh 1), the ideal sorts the
  relevances of the whole retrieved list, both cut at k; 0 when the ideal is 0.

The documentation of remem prints pooled numbers its own formulas do not give (e.g. a pooled
``Recall@1`` of 0.5 for per-example values 0.5 and 0); these classes follow the formulas.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ragmetrics.errors import RagMetricsError
from ragmetrics.matching import ChunkMatcher

Pooled = dict[str, float]
PerExample = list[dict[str, float]]


def _check(
    gold_docs: Sequence[Sequence[str]], retrieved: Sequence[Sequence[str]], k_list: Sequence[int]
) -> None:
    if not isinstance(gold_docs, Sequence) or not isinstance(retrieved, Sequence):
        raise RagMetricsError("gold_docs and retrieved_chunks must be lists of lists of strings.")
    if len(gold_docs) != len(retrieved):
        raise RagMetricsError(
            f"gold_docs has {len(gold_docs)} examples but retrieved_chunks has {len(retrieved)}; "
            f"pass one list of each per example."
        )
    if not gold_docs:
        raise RagMetricsError(
            "gold_docs and retrieved_chunks are empty: there is no example to score."
        )
    for position, (gold, chunks) in enumerate(zip(gold_docs, retrieved, strict=True)):
        if isinstance(gold, str) or isinstance(chunks, str):
            single = gold if isinstance(gold, str) else chunks
            raise RagMetricsError(
                f"Example {position}: gold_docs and retrieved_chunks hold lists of strings per "
                f"example, not a single string (wrap it: [{single!r}])."
            )
    if not k_list or any(not isinstance(k, int) or k < 1 for k in k_list):
        raise RagMetricsError(
            f"k_list must hold integers >= 1, e.g. [1, 5, 10]; got {list(k_list)!r}."
        )


def _pool(example_results: PerExample, keys: list[str]) -> Pooled:
    """The mean over examples, rounded to 4 decimals as remem rounds its pooled values."""
    return {key: round(float(np.mean([e[key] for e in example_results])), 4) for key in keys}


class _RememMetric:
    key = ""

    def __init__(self, global_config: Any | None = None) -> None:
        self.global_config = global_config

    def calculate_metric_scores(
        self,
        gold_docs: Sequence[Sequence[str]],
        retrieved_chunks: Sequence[Sequence[str]],
        k_list: Sequence[int] = (1, 5, 10, 20),
    ) -> tuple[Pooled, PerExample]:
        _check(gold_docs, retrieved_chunks, k_list)
        keys = [f"{self.key}@{k}" for k in k_list]
        per_example = self._per_example(gold_docs, retrieved_chunks, list(k_list))
        return _pool(per_example, keys), per_example

    def _per_example(
        self, gold: Sequence[Sequence[str]], retrieved: Sequence[Sequence[str]], k_list: list[int]
    ) -> PerExample:
        raise NotImplementedError


class RetrievalRecall(_RememMetric):
    """``Recall@k``: the share of gold docs among the first k retrieved ids (exact match)."""

    key = "Recall"

    def _per_example(
        self, gold: Sequence[Sequence[str]], retrieved: Sequence[Sequence[str]], k_list: list[int]
    ) -> PerExample:
        # remem's own arithmetic, example by example: any string is an id (an empty chunk
        # too, which matches no gold doc but ""), and an example without gold scores 0
        results: PerExample = []
        for gold_docs, chunks in zip(gold, retrieved, strict=True):
            wanted = set(gold_docs)
            results.append(
                {
                    f"{self.key}@{k}": len(set(chunks[:k]) & wanted) / len(wanted)
                    if wanted
                    else 0.0
                    for k in k_list
                }
            )
        return results


class RetrievalRecallAll(_RememMetric):
    """``Recall_all@k``: 1 if every gold doc has one of the first k chunks, else 0."""

    key = "Recall_all"

    def _per_example(
        self, gold: Sequence[Sequence[str]], retrieved: Sequence[Sequence[str]], k_list: list[int]
    ) -> PerExample:
        results: PerExample = []
        for gold_docs, chunks in zip(gold, retrieved, strict=True):
            originals = list(dict.fromkeys(gold_docs))
            matcher = ChunkMatcher(originals)
            first_rank = dict.fromkeys(range(len(originals)), np.inf)
            for rank, chunk in enumerate(chunks):
                for i in matcher.match_indices(chunk):
                    first_rank[i] = min(first_rank[i], rank)
            # an empty gold list scores 0, as remem does (Python's all() of nothing would be 1)
            results.append(
                {
                    f"{self.key}@{k}": float(
                        bool(first_rank) and all(r < k for r in first_rank.values())
                    )
                    for k in k_list
                }
            )
        return results


class RetrievalNDCGAny(_RememMetric):
    """``NDCG_any@k``: binary relevance "comes from some gold doc", remem's discount."""

    key = "NDCG_any"

    def _per_example(
        self, gold: Sequence[Sequence[str]], retrieved: Sequence[Sequence[str]], k_list: list[int]
    ) -> PerExample:
        results: PerExample = []
        for gold_docs, chunks in zip(gold, retrieved, strict=True):
            matcher = ChunkMatcher(list(dict.fromkeys(gold_docs)))
            relevance = np.array([1.0 if matcher.match_indices(c) else 0.0 for c in chunks])
            ideal = np.sort(relevance)[::-1]
            ranks = np.arange(1, len(relevance) + 1, dtype=np.float64)
            discount = 1.0 / np.log2(np.maximum(ranks, 2.0))  # ranks 1 and 2 both weigh 1
            row = {}
            for k in k_list:
                dcg = float(relevance[:k] @ discount[:k])
                idcg = float(ideal[:k] @ discount[:k])
                row[f"{self.key}@{k}"] = dcg / idcg if idcg > 0 else 0.0
            results.append(row)
        return results


__all__ = ["RetrievalNDCGAny", "RetrievalRecall", "RetrievalRecallAll"]
