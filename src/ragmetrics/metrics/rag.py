"""RAG set metrics: the rarity-aware family RA-nWG@K, PROC@K, %PROC@K and companions.

The reader of the top-K is an LLM that consumes a *set*, so these metrics ignore the order
inside the first K distinct docs and ask how much of the best available evidence made it in.
They read utility grades g in 1..5 of the query's labeled pool U (5 decisive, 4 highly
relevant, 3 partial, 2 weak, 1 distractor); ``grade_map`` maps other scales onto 1..5.

Weights (per query, from the grade prevalences of U; METRICS.md, "RAG set metrics"):

    b5 = 1, b4 = 0.5, b3 = 0.1, b2 = b1 = 0;  p_g = n_g / |U|;  r_g = b_g / p_g^alpha
    w5 = 1, w4 = min(r4 / r5, cap4), w3 = min(r3 / r5, cap3), w2 = w1 = 0
    and when U has no grade 5: w5 = 1, w4 = 1, w3 = 0.2.

    G_obs    = sum of w over the first K distinct docs (0 for a doc outside U)
    G_oracle = sum of the K largest weights in U
    G_pool   = sum of the K largest weights in U among the candidate pool
               (the query's whole ranking, or the ``pool=`` run; a query that run
               does not cover falls back to its own ranking)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ragmetrics.errors import RagMetricsError
from ragmetrics.judge import JudgedRun, judge, pad_rows
from ragmetrics.metrics.registry import Cutoff, Kernel, MetricSpec, register
from ragmetrics.run import Run

BASE_UTILITY = np.array([0.0, 0.0, 0.0, 0.1, 0.5, 1.0])  # index = grade (0 unused)
FALLBACK_WEIGHTS = np.array([0.0, 0.0, 0.0, 0.2, 1.0, 1.0])  # when U has no grade 5


@dataclass(frozen=True)
class Utility:
    """Utility view of a judged batch, shared by every set metric.

    Attributes:
        grades: utility grade (1..5) of the doc at each rank, 0 outside U or in the padding.
        weights: rarity weight of the doc at each rank (0 outside U).
        grade_weights: per query, the weight of each grade 0..5.
        oracle_cumsum: per query, cumulative sums of U's weights sorted descending.
        n_grade: per query, the count of each grade 0..5 in U.
    """

    grades: np.ndarray
    weights: np.ndarray
    grade_weights: np.ndarray
    oracle_cumsum: np.ndarray
    n_grade: np.ndarray


def rarity_weights(
    n_grade: np.ndarray, *, alpha: float = 1.0, cap4: float = 1.0, cap3: float = 0.25
) -> np.ndarray:
    """Per-query weight of each grade 0..5 from the grade counts of U (rows of ``n_grade``).

    Example:
        >>> w = rarity_weights(np.array([[0, 1, 1, 3, 2, 1]]))  # grades 1..5 of case 1
        >>> w[0, 3:].round(6).tolist()
        [0.033333, 0.25, 1.0]
    """
    n_grade = np.asarray(n_grade, dtype=np.float64)
    total = n_grade[:, 1:].sum(axis=1, keepdims=True)
    prevalence = np.divide(n_grade, total, out=np.zeros_like(n_grade), where=total > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        rarity = np.where(prevalence > 0, BASE_UTILITY / prevalence**alpha, 0.0)
    r5 = rarity[:, 5:6]
    ratio = np.divide(rarity, r5, out=np.zeros_like(rarity), where=r5 > 0)
    weights = np.zeros_like(rarity)
    weights[:, 5] = 1.0
    weights[:, 4] = np.minimum(ratio[:, 4], cap4)
    weights[:, 3] = np.minimum(ratio[:, 3], cap3)
    no_five = n_grade[:, 5] == 0
    weights[no_five] = FALLBACK_WEIGHTS
    return weights


def map_grades(
    raw: np.ndarray,
    query_rows: np.ndarray,
    query_ids: tuple[str, ...],
    grade_map: Mapping[int, int] | None,
) -> np.ndarray:
    """Map raw judged grades onto 1..5 (``grade_map``), or check they already are."""
    values, inverse = np.unique(raw, return_inverse=True)
    mapped = np.empty(len(values), dtype=np.int64)
    for position, value in enumerate(values.tolist()):
        grade = int(value)
        if grade_map is not None:
            if grade not in grade_map:
                row = int(query_rows[np.flatnonzero(inverse == position)[0]])
                raise RagMetricsError(
                    f"Query '{query_ids[row]}' has grade {grade}, which grade_map does not map; "
                    f"add it, e.g. grade_map={{..., {grade}: 1}}."
                )
            grade = int(grade_map[grade])
        if not 1 <= grade <= 5:
            row = int(query_rows[np.flatnonzero(inverse == position)[0]])
            source = f"grade {int(value)} (mapped to {grade})" if grade_map else f"grade {grade}"
            raise RagMetricsError(
                f"The RAG set metrics need utility grades 1..5; query '{query_ids[row]}' has "
                f"{source}. Map your scale with grade_map={{...}}, e.g. TREC 0-3 as "
                f"{{0: 1, 1: 3, 2: 4, 3: 5}}."
            )
        mapped[position] = grade
    return mapped[inverse].reshape(raw.shape)


def utility(judged: JudgedRun) -> Utility:
    """The utility view of ``judged`` (computed once per evaluation)."""
    cached = judged.cache.get("utility")
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    options = judged.options
    grade_map = options.get("grade_map")
    lengths = judged.judged_counts
    rows = np.repeat(np.arange(judged.n_queries), lengths)
    u_grades = map_grades(judged.judged_grades.astype(np.int64), rows, judged.query_ids, grade_map)
    n_grade = np.zeros((judged.n_queries, 6), dtype=np.int64)
    np.add.at(n_grade, (rows, u_grades), 1)
    grade_weights = rarity_weights(
        n_grade,
        alpha=float(options.get("alpha", 1.0)),
        cap4=float(options.get("cap4", 1.0)),
        cap3=float(options.get("cap3", 0.25)),
    )
    # oracle: U's weights sorted descending, cumulated
    padded = pad_rows(lengths, grade_weights[rows, u_grades], min_width=1)
    oracle = np.cumsum(-np.sort(-padded, axis=1), axis=1)
    # ranked docs: raw grade -> utility grade -> weight
    ranked = _utility_grades(judged, grade_map)
    weights = np.take_along_axis(grade_weights, ranked, axis=1)
    result = Utility(ranked, weights, grade_weights, oracle, n_grade)
    judged.cache["utility"] = result
    return result


def _utility_grades(judged: JudgedRun, grade_map: Mapping[int, int] | None) -> np.ndarray:
    """The utility grade (1..5) of the doc at each rank; 0 where unjudged or padding."""
    grades = np.zeros((judged.n_queries, judged.depth), dtype=np.int64)
    grades[judged.hit_rows, judged.hit_ranks] = map_grades(
        judged.hit_grades.astype(np.int64), judged.hit_rows, judged.query_ids, grade_map
    )
    return grades


def _oracle_at(table: np.ndarray, cutoff: int) -> np.ndarray:
    """Row-wise value of a cumulative table at column ``cutoff - 1`` (last column if shorter)."""
    return table[:, min(cutoff, table.shape[1]) - 1]


def _pool_cumsum(judged: JudgedRun) -> np.ndarray:
    """Per query, cumulative sums of the pool's weights (within U) sorted descending."""
    cached = judged.cache.get("pool_cumsum")
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    util = utility(judged)
    pool = judged.options.get("pool") or judged.run
    absent = [q for q in judged.query_ids if q not in pool and q in judged.run]
    if absent:
        # a query the pool run does not cover is its own pool (its whole ranking)
        merged = {q: list(pool[q]) for q in pool.query_ids}
        merged.update({q: list(judged.run[q]) for q in absent})
        pool = Run.from_lists(merged)
    pooled = judge(
        judged.qrels,
        pool,
        list(judged.query_ids),
        depth=None,
        relevance_threshold=judged.relevance_threshold,
    )
    grades = _utility_grades(pooled, judged.options.get("grade_map"))
    weights = np.take_along_axis(util.grade_weights, grades, axis=1)
    table = (
        np.cumsum(-np.sort(-weights, axis=1), axis=1)
        if weights.shape[1]
        else np.zeros((judged.n_queries, 1))
    )
    judged.cache["pool_cumsum"] = table
    return table


def _ratio_or_na(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    out = np.full(np.shape(denominator), np.nan)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def _top(matrix: np.ndarray, cutoff: int) -> np.ndarray:
    return matrix[:, :cutoff]


def ra_nwg(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """RA-nWG@K = G_obs / G_oracle: the share of the best achievable utility that the first K
    distinct docs carry. Range [0, 1]; NA when G_oracle = 0."""
    assert cutoff is not None
    util = utility(judged)
    observed = _top(util.weights, cutoff).sum(axis=1)
    return _ratio_or_na(observed, _oracle_at(util.oracle_cumsum, cutoff))


def proc(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """PROC@K = G_pool / G_oracle: the ceiling the candidate pool allows (retrieval quality).
    Range [0, 1]; NA when G_oracle = 0."""
    assert cutoff is not None
    util = utility(judged)
    return _ratio_or_na(
        _oracle_at(_pool_cumsum(judged), cutoff), _oracle_at(util.oracle_cumsum, cutoff)
    )


def pct_proc(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """%PROC@K = RA-nWG@K / PROC@K: how much of the pool's ceiling the selection realized
    (reranking / selection efficiency). NA when PROC@K is 0 or NA."""
    return _ratio_or_na(ra_nwg(judged, cutoff), np.nan_to_num(proc(judged, cutoff), nan=0.0))


def n_recall_4plus(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """|{d in S_K : g >= 4}| / min(K, R4+), R4+ = n4 + n5; NA when R4+ = 0."""
    assert cutoff is not None
    util = utility(judged)
    found = (_top(util.grades, cutoff) >= 4).sum(axis=1)
    available = util.n_grade[:, 4] + util.n_grade[:, 5]
    return _ratio_or_na(found.astype(np.float64), np.minimum(cutoff, available).astype(np.float64))


def n_recall_5(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """|{d in S_K : g = 5}| / min(K, R5); NA when R5 = 0."""
    assert cutoff is not None
    util = utility(judged)
    found = (_top(util.grades, cutoff) == 5).sum(axis=1)
    return _ratio_or_na(
        found.astype(np.float64), np.minimum(cutoff, util.n_grade[:, 5]).astype(np.float64)
    )


def precision_4plus(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """|{d in S_K : g >= 4}| / K. Never NA."""
    assert cutoff is not None
    found: np.ndarray = (_top(utility(judged).grades, cutoff) >= 4).sum(axis=1)
    return found / cutoff


def harm(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """|{d in S_K : d in U and g <= 2}| / K: the share of the prompt given to weak or
    distracting evidence (lower is better). Never NA."""
    assert cutoff is not None
    grades = _top(utility(judged).grades, cutoff)
    weak: np.ndarray = ((grades >= 1) & (grades <= 2)).sum(axis=1)
    return weak / cutoff


def unjudged(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """|{d in S_K : d not in U}| / K: how much of the top K nobody graded (a diagnostic of
    the judgments, not of the system; lower means the other numbers are better founded)."""
    assert cutoff is not None
    outside: np.ndarray = _top(judged.retrieved & ~judged.judged, cutoff).sum(axis=1)
    return outside / cutoff


def _set_metric(name: str, kernel: Kernel, summary: str, *, one: bool, na: bool) -> MetricSpec:
    return MetricSpec(
        name,
        kernel,
        Cutoff.REQUIRED,
        "set",
        summary,  # type: ignore[arg-type]
        perfect_is_one=one,
        can_be_na=na,
    )


register(
    _set_metric(
        "ra_nwg", ra_nwg, "rarity-aware utility captured in the top-K set", one=True, na=True
    ),
    "ra-nwg",
    "ranwg",
)
register(
    _set_metric(
        "proc", proc, "pool-restricted oracle ceiling (retrieval quality)", one=True, na=True
    )
)
register(
    _set_metric("pct_proc", pct_proc, "RA-nWG / PROC (selection efficiency)", one=True, na=True),
    "%proc",
)
register(
    _set_metric(
        "n_recall_4plus", n_recall_4plus, "grade >= 4 docs found / min(K, R4+)", one=True, na=True
    )
)
register(
    _set_metric("n_recall_5", n_recall_5, "grade 5 docs found / min(K, R5)", one=True, na=True)
)
register(
    _set_metric(
        "precision_4plus", precision_4plus, "grade >= 4 docs in the top K / K", one=False, na=False
    )
)
register(
    _set_metric(
        "harm", harm, "weak or distracting docs (grade <= 2) in the top K / K", one=False, na=False
    )
)
register(_set_metric("unjudged", unjudged, "ungraded docs in the top K / K", one=False, na=False))
