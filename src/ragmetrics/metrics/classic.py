"""The classic ranking metrics, with trec_eval's conventions (METRICS.md, first table).

Each kernel takes a judged batch and a cutoff (``None``: the whole ranking) and returns one
value per query; NaN marks a query for which the metric is not defined (NA).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ragmetrics.judge import JudgedRun
from ragmetrics.metrics.registry import Cutoff, MetricSpec, register


def _cut(matrix: np.ndarray, cutoff: int | None) -> np.ndarray:
    return matrix if cutoff is None else matrix[:, :cutoff]


def _safe_divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, and 0 where the denominator is 0."""
    out = np.zeros(np.broadcast(numerator, denominator).shape, dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def precision(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """Fraction of the first k slots that hold a relevant doc: ``|rel in L_k| / k``.

    The denominator is k even when fewer than k docs were retrieved (trec_eval ``P_k``).
    Range [0, 1].
    """
    assert cutoff is not None
    return judged.hits(cutoff) / cutoff


def recall(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """Fraction of the relevant docs found in the first k: ``|rel in L_k| / R``; 0 if R = 0."""
    return _safe_divide(judged.hits(cutoff).astype(np.float64), judged.n_relevant)


def f1(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """Harmonic mean of precision@k and recall@k; 0 when both are 0."""
    p = precision(judged, cutoff)
    r = recall(judged, cutoff)
    return _safe_divide(2.0 * p * r, p + r)


def hit_rate(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """1 if a relevant doc is among the first k, else 0 (trec_eval ``success_k``)."""
    return (judged.hits(cutoff) > 0).astype(np.float64)


def reciprocal_rank(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """``1 / rank`` of the first relevant doc within the first k; 0 if there is none."""
    rows, columns = judged.relevant_at
    if cutoff is not None:
        keep = columns < cutoff
        rows, columns = rows[keep], columns[keep]
    first = np.flatnonzero(np.diff(rows, prepend=-1))  # each query's first relevant doc
    values = np.zeros(judged.n_queries)
    values[rows[first]] = 1.0 / (columns[first] + 1.0)
    return values


def average_precision(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """``(1/R) * sum of precision@i over the relevant ranks i <= k``; 0 if R = 0.

    The divisor is R, not min(R, k), as trec_eval's ``map_cut_k``.
    """
    rows, columns = judged.relevant_at
    if cutoff is not None:
        keep = columns < cutoff
        rows, columns = rows[keep], columns[keep]
    # the i-th relevant doc of a query (i = 1, 2, ...) at rank c + 1 adds precision i / (c + 1)
    ordinal = np.arange(1, len(rows) + 1) - np.searchsorted(rows, rows)
    summed = np.bincount(rows, weights=ordinal / (columns + 1.0), minlength=judged.n_queries)
    return _safe_divide(summed, judged.n_relevant)


def _ndcg(
    judged: JudgedRun, cutoff: int | None, gain: Callable[[np.ndarray], np.ndarray]
) -> np.ndarray:
    rows, ranks, grades = judged.hit_rows, judged.hit_ranks, judged.hit_grades
    if cutoff is not None:
        keep = ranks < cutoff
        rows, ranks, grades = rows[keep], ranks[keep], grades[keep]
    discounts = judged.discounts
    # summed rank by rank, as trec_eval does; unjudged docs add nothing
    dcg = np.bincount(
        rows, weights=gain(np.maximum(grades, 0.0)) * discounts[ranks], minlength=judged.n_queries
    )
    ideal = _cut(judged.ideal_gains, cutoff)
    idcg = gain(ideal) @ discounts[: ideal.shape[1]]
    return _safe_divide(dcg, idcg)


def _linear(gains: np.ndarray) -> np.ndarray:
    return gains


def _exponential(gains: np.ndarray) -> np.ndarray:
    exponential: np.ndarray = np.exp2(gains) - 1.0
    return exponential


def ndcg(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """``DCG@k / IDCG@k`` with linear gain ``max(grade, 0)`` and discount ``log2(i + 1)``.

    The ideal ranks every judged doc by grade (Järvelin and Kekäläinen, as trec_eval);
    the threshold does not change the gain. 0 when IDCG = 0.
    """
    return _ndcg(judged, cutoff, _linear)


def ndcg_exp(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """nDCG with the exponential gain ``2^grade - 1`` (Burges et al., 2005)."""
    return _ndcg(judged, cutoff, _exponential)


def r_precision(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """Precision at rank R (the number of relevant docs); 0 if R = 0 (trec_eval ``Rprec``)."""
    n_relevant = judged.n_relevant
    rows, columns = judged.relevant_at
    hits = np.bincount(rows[columns < n_relevant[rows]], minlength=judged.n_queries)
    return _safe_divide(hits.astype(np.float64), n_relevant)


def err(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """Expected Reciprocal Rank: ``sum_i (1/i) R_i prod_{j<i} (1 - R_j)``.

    ``R_i = (2^g - 1) / 2^max_grade`` with ``g = max(grade, 0)``; ``max_grade`` is the highest
    grade judged in the qrels unless ``err_max_grade`` fixes it (Chapelle et al., 2009).
    """
    max_grade = judged.options.get("err_max_grade")
    top = judged.max_grade if max_grade is None else float(max_grade)
    gains = _cut(judged.gains, cutoff)
    if top <= 0 or gains.shape[1] == 0:
        return np.zeros(judged.n_queries)
    stop = (np.exp2(np.minimum(gains, top)) - 1.0) / np.exp2(top)
    reach = np.cumprod(1.0 - stop, axis=1)
    reach = np.hstack([np.ones((judged.n_queries, 1)), reach[:, :-1]])
    ranks = np.arange(1, gains.shape[1] + 1, dtype=np.float64)
    values: np.ndarray = (stop * reach / ranks).sum(axis=1)
    return values


def recall_all(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """1 if every evidence group (every relevant doc, without groups) has a member in the
    first k, else 0; NA when the query has no relevant doc."""
    if not judged.qrels.has_groups:
        hits = judged.hits(cutoff)
        return np.where(judged.n_relevant > 0, (hits == judged.n_relevant) * 1.0, np.nan)
    first, n_groups = judged.group_first_ranks
    limit = np.inf if cutoff is None else cutoff
    found = (first < limit).sum(axis=1)
    return np.where(n_groups > 0, (found == n_groups) * 1.0, np.nan)


def group_recall(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """Fraction of evidence groups with a member in the first k; 0 for a query with none.

    Without explicit groups each relevant doc is its own group, so this equals recall@k.
    """
    if not judged.qrels.has_groups:
        return recall(judged, cutoff)
    first, n_groups = judged.group_first_ranks
    limit = np.inf if cutoff is None else cutoff
    return _safe_divide((first < limit).sum(axis=1).astype(np.float64), n_groups)


register(
    MetricSpec(
        "precision",
        precision,
        Cutoff.REQUIRED,
        "classic",
        "relevant docs in the top k / k",
        perfect_is_one=False,
    ),
    "p",
    "prec",
)
register(
    MetricSpec("recall", recall, Cutoff.REQUIRED, "classic", "relevant docs in the top k / R"), "r"
)
register(
    MetricSpec(
        "f1",
        f1,
        Cutoff.REQUIRED,
        "classic",
        "harmonic mean of precision@k and recall@k",
        perfect_is_one=False,
    )
)
register(
    MetricSpec(
        "hit_rate", hit_rate, Cutoff.REQUIRED, "classic", "1 if a relevant doc is in the top k"
    ),
    "success",
    "hit",
    "hitrate",
)
register(
    MetricSpec(
        "mrr", reciprocal_rank, Cutoff.OPTIONAL, "classic", "1 / rank of the first relevant doc"
    ),
    "rr",
    "recip_rank",
    "reciprocal_rank",
)
register(
    MetricSpec(
        "map",
        average_precision,
        Cutoff.OPTIONAL,
        "classic",
        "average precision over relevant ranks",
    ),
    "ap",
    "map_cut",
    "average_precision",
)
register(
    MetricSpec("ndcg", ndcg, Cutoff.OPTIONAL, "classic", "normalized DCG, linear gain (trec_eval)"),
    "ndcg_cut",
)
register(
    MetricSpec("ndcg_exp", ndcg_exp, Cutoff.OPTIONAL, "classic", "normalized DCG, gain 2^grade - 1")
)
register(
    MetricSpec("r_precision", r_precision, Cutoff.NONE, "classic", "precision at rank R"),
    "rprec",
    "r-precision",
    "rp",
)
register(
    MetricSpec(
        "err",
        err,
        Cutoff.OPTIONAL,
        "classic",
        "expected reciprocal rank (graded)",
        perfect_is_one=False,
    )
)
register(
    MetricSpec(
        "recall_all",
        recall_all,
        Cutoff.REQUIRED,
        "classic",
        "1 if every relevant doc / evidence group is in the top k",
        can_be_na=True,
    ),
)
register(
    MetricSpec(
        "group_recall",
        group_recall,
        Cutoff.REQUIRED,
        "classic",
        "fraction of evidence groups with a member in the top k",
    ),
)
