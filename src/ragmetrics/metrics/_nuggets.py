"""Nugget metrics: how much of what a good answer needs the retrieval found (``docs/metrics.md``).

A query's nuggets are the facts a good answer needs, each vital or okay, each supported by
some documents (:class:`~ragmetrics.Nuggets`). A nugget is found at depth k when one of its
supporting documents is among the first k results. Every kernel here is NA for a query
without nuggets: there is nothing to find.
"""

from __future__ import annotations

import numpy as np

from ragmetrics.metrics.judged import JudgedRun, NuggetHits
from ragmetrics.metrics.registry import Cutoff, MetricSpec, register

__all__ = [
    "nugget_recall",
    "sufficiency",
    "sufficient_k",
    "vital_recall",
    "weighted_nugget_recall",
]

# TREC RAG's weights of a nugget in its weighted recall: vital 1, okay 0.5
VITAL_WEIGHT = 1.0
OKAY_WEIGHT = 0.5


def _hits(judged: JudgedRun) -> NuggetHits:
    if judged.nuggets is None:
        raise RuntimeError(
            "The nuggets were not located: a metric whose spec has needs_nuggets=True was "
            "computed on a run judged without nuggets."
        )
    return judged.nuggets


def _found(hits: NuggetHits, cutoff: int | None) -> np.ndarray:
    """True where a nugget has a supporting doc within the first ``cutoff`` ranks."""
    found: np.ndarray = hits.first < (np.inf if cutoff is None else cutoff)
    return found


def _share(part: np.ndarray, whole: np.ndarray) -> np.ndarray:
    """part / whole per query, NaN where whole is 0 (NA)."""
    out = np.full(len(whole), np.nan)
    np.divide(part, whole, out=out, where=whole != 0)
    return out


def nugget_recall(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """The share of the query's nuggets with a supporting doc in the top k; NA without
    nuggets.

    Example:
        >>> from ragmetrics.metrics.judged import NuggetHits
        >>> hits = NuggetHits(np.array([[0.0, 4.0, np.inf]]), np.array([[True, False, False]]),
        ...                   np.array([3]))
        >>> nugget_recall(_judged(hits), 3).tolist()  # the first of three found by rank 3
        [0.3333333333333333]
    """
    hits = _hits(judged)
    return _share(_found(hits, cutoff).sum(axis=1).astype(np.float64), hits.counts)


def vital_recall(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """The share of the query's vital nuggets found in the top k; NA without vital nuggets.

    Example:
        >>> hits = NuggetHits(np.array([[0.0, 4.0, np.inf]]), np.array([[True, True, False]]),
        ...                   np.array([3]))
        >>> vital_recall(_judged(hits), 3).tolist()  # one of the two vital ones
        [0.5]
    """
    hits = _hits(judged)
    found = (_found(hits, cutoff) & hits.vital).sum(axis=1).astype(np.float64)
    return _share(found, hits.n_vital.astype(np.float64))


def weighted_nugget_recall(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """Found nuggets weighted as TREC RAG weighs them (vital 1, okay 0.5), over the weight
    of all the query's nuggets; NA without nuggets.

    Example:
        >>> hits = NuggetHits(np.array([[0.0, 4.0, np.inf]]), np.array([[True, False, False]]),
        ...                   np.array([3]))
        >>> weighted_nugget_recall(_judged(hits), None).tolist()  # (1 + 0.5) / (1 + 0.5 + 0.5)
        [0.75]
    """
    hits = _hits(judged)
    weights = np.where(hits.vital, VITAL_WEIGHT, OKAY_WEIGHT) * hits.real
    found = (weights * _found(hits, cutoff)).sum(axis=1)
    return _share(found, weights.sum(axis=1))


def _needed(hits: NuggetHits) -> np.ndarray:
    """The nuggets an answer must hold: the vital ones, or every one where none is vital."""
    needed: np.ndarray = np.where((hits.n_vital > 0)[:, None], hits.vital, hits.real)
    return needed


def sufficiency(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """1 when every vital nugget (every nugget, when none is vital) has a supporting doc in
    the top k, else 0; NA without nuggets.

    Example:
        >>> hits = NuggetHits(np.array([[0.0, 4.0, np.inf]]), np.array([[True, True, False]]),
        ...                   np.array([3]))
        >>> sufficiency(_judged(hits), 4).tolist(), sufficiency(_judged(hits), 5).tolist()
        ([0.0], [1.0])
    """
    hits = _hits(judged)
    missed = (_needed(hits) & ~_found(hits, cutoff)).any(axis=1)
    values = np.where(missed, 0.0, 1.0)
    values[hits.counts == 0] = np.nan
    return values


def sufficient_k(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """The smallest k at which the ranking is sufficient (a diagnostic): the deepest first
    rank among the needed nuggets; NA without nuggets, and NA when some needed nugget has no
    supporting doc anywhere in the ranking (no k is sufficient).

    Example:
        >>> hits = NuggetHits(np.array([[0.0, 4.0, np.inf]]), np.array([[True, True, False]]),
        ...                   np.array([3]))
        >>> sufficient_k(_judged(hits), None).tolist()  # the second vital nugget, at rank 5
        [5.0]
    """
    hits = _hits(judged)
    deepest: np.ndarray = (
        np.where(_needed(hits), hits.first, -np.inf).max(axis=1, initial=-np.inf) + 1.0
    )
    deepest[~np.isfinite(deepest) | (hits.counts == 0)] = np.nan
    return deepest


def _judged(hits: NuggetHits) -> JudgedRun:
    """A one-query judged run carrying ``hits`` (the examples above)."""
    empty = np.zeros(0, dtype=np.int64)
    return JudgedRun(
        ("q",), empty, empty, np.zeros(0), np.zeros(1, dtype=np.int64), np.ones(1, bool), 0,
        np.zeros(1, dtype=np.int64), np.zeros(0), 0.0, nuggets=hits,
    )  # fmt: skip


def _nugget_metric(
    name: str, kernel: object, cutoff: Cutoff, summary: str, **traits: object
) -> MetricSpec:
    return MetricSpec(
        name, kernel, cutoff, "nugget", summary, params=(), can_be_na=True,  # type: ignore[arg-type]
        needs_nuggets=True, pure=True, **traits,  # type: ignore[arg-type]
    )  # fmt: skip


register(
    _nugget_metric(
        "nugget_recall",
        nugget_recall,
        Cutoff.REQUIRED,
        "nuggets with a supporting doc in the top k",
    ),
    "nugget_r",
)
register(
    _nugget_metric(
        "vital_recall", vital_recall, Cutoff.REQUIRED, "vital nuggets supported in the top k"
    )
)
register(
    _nugget_metric(
        "weighted_nugget_recall",
        weighted_nugget_recall,
        Cutoff.REQUIRED,
        "nuggets supported in the top k, vital 1, okay 0.5 (TREC RAG)",
    )
)
register(
    _nugget_metric(
        "sufficiency",
        sufficiency,
        Cutoff.REQUIRED,
        "1 if every vital nugget (every nugget, none vital) is supported in the top k",
    ),
    "sufficient",
)
register(
    _nugget_metric(
        "sufficient_k",
        sufficient_k,
        Cutoff.NONE,
        "the smallest k that is sufficient (a diagnostic; NA if none is)",
        higher_is_better=False,
        unit_range=False,
        perfect_is_one=False,
    )
)
