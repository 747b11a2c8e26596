"""RAG set metrics: the rarity-aware family RA-nWG@K, PROC@K, %PROC@K and companions.

The reader of the top-K is an LLM that consumes a *set*, so these metrics ignore the order
inside the first K distinct docs and ask how much of the best available evidence made it in.
They read utility grades g in 1..5 of the query's labeled pool U (5 decisive, 4 highly
relevant, 3 partial, 2 weak, 1 distractor); ``grade_map`` maps other scales onto 1..5.

Weights (per query, from the grade prevalences of U; ``docs/metrics.md``, "RAG set metrics"):

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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragmetrics._util.arrays import pad_rows, row_sums
from ragmetrics.errors import GradeScaleError
from ragmetrics.metrics.judged import JudgedRun
from ragmetrics.metrics.registry import (
    ALPHA,
    CAP3,
    CAP4,
    WEIGHTING,
    Cutoff,
    Kernel,
    MetricSpec,
    Scale,
    register,
)

__all__ = [
    "BASE_UTILITY",
    "FALLBACK_WEIGHTS",
    "Utility",
    "check_query_grades",
    "check_utility_scale",
    "harm",
    "n_recall_4plus",
    "n_recall_5",
    "pct_proc",
    "precision_4plus",
    "proc",
    "proposed_grade_map",
    "ra_nwg",
    "rarity_weights",
    "unjudged",
    "utility",
]

BASE_UTILITY = np.array([0.0, 0.0, 0.0, 0.1, 0.5, 1.0])  # index = grade (0 unused)
FALLBACK_WEIGHTS = np.array([0.0, 0.0, 0.0, 0.2, 1.0, 1.0])  # when U has no grade 5


@dataclass(frozen=True)
class Utility:
    """Utility view of a judged batch under one weighting, shared by the set metrics.

    Attributes:
        grades: utility grade (1..5) of the doc at each rank, 0 outside U or in the padding.
        weights: rarity weight of the doc at each rank (0 outside U).
        grade_weights: per query, the weight of each grade 0..5.
        oracle_cumsum: per query, cumulative sums of U's weights sorted descending.
    """

    grades: np.ndarray
    weights: np.ndarray
    grade_weights: np.ndarray
    oracle_cumsum: np.ndarray


def rarity_weights(
    n_grade: np.ndarray,
    *,
    alpha: float = ALPHA.default,
    cap4: float = CAP4.default,
    cap3: float = CAP3.default,
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


def proposed_grade_map(grades: Iterable[int]) -> dict[int, int]:
    """A map of a grade scale onto utility grades 1..5: the highest positive grade to 5, the
    next to 4, and so on down to 2; grades of 0 or below to 1, and so is 1 itself on a scale
    that starts at 1 (1..3 labels, say: 1 is "not relevant" there too, never promoted).

    Example:
        >>> proposed_grade_map([0, 1, 2, 3])
        {0: 1, 1: 3, 2: 4, 3: 5}
        >>> proposed_grade_map([0, 1])
        {0: 1, 1: 5}
        >>> proposed_grade_map([1, 2, 3])
        {1: 1, 2: 4, 3: 5}
    """
    distinct = sorted(set(grades))
    floor = 1 if distinct and distinct[0] == 1 and len(distinct) > 1 else 0
    positive = [g for g in distinct if g > floor]
    rank = {g: max(2, 5 - i) for i, g in enumerate(reversed(positive))}
    return {g: rank.get(g, 1) for g in distinct}


def check_utility_scale(
    grades: Iterable[int], grade_map: Mapping[int, int] | None, labels: Iterable[str]
) -> None:
    """Raise unless the qrels' grades (all of them, distinct) are plainly on the utility
    scale 1..5, after ``grade_map``: every grade mapped and in 1..5, and some grade 4 or 5
    (binary, all-1 or 0..3 qrels read as utility grades would make every query NA or call
    relevant docs harmful). The message proposes a map."""
    distinct = sorted({int(g) for g in grades})
    if not distinct:
        return
    needed = ", ".join(labels)
    found = "{" + ", ".join(map(str, distinct)) + "}"
    proposal = proposed_grade_map(distinct)
    if grade_map is not None:
        unmapped = [g for g in distinct if g not in grade_map]
        if unmapped:
            raise GradeScaleError(
                f"grade_map does not map the grade(s) {', '.join(map(str, unmapped))} found in "
                f"the qrels (grades {found}); add them, e.g. grade_map={proposal}."
            )
        mapped = sorted({grade_map[g] for g in distinct})
        if max(mapped) >= 4:
            return
        raise GradeScaleError(
            f"The RAG set metrics ({needed}) need utility grades where 4 or 5 mark the useful "
            f"evidence, but grade_map "
            f"maps the qrels' grades {found} to {mapped}: no grade 4 or 5, so nothing would count "
            f"as highly relevant. A map such as grade_map={proposal} reads the top grade as "
            f"decisive."
        )
    if distinct[0] >= 1 and distinct[-1] <= 5 and distinct[-1] >= 4:
        return
    kind = _describe_scale(distinct)
    raise GradeScaleError(
        f"The RAG set metrics ({needed}) need utility grades 1..5 (5 decisive, 4 highly "
        f"relevant, 3 partial, 2 weak, 1 not relevant); these qrels have grades {found}{kind}. "
        f"Map them with "
        f"grade_map={proposal}, or give your own map."
    )


def check_query_grades(
    grades: Iterable[int], grade_map: Mapping[int, int] | None, labels: Iterable[str]
) -> None:
    """The check of :func:`check_utility_scale` for the judgments of one query scored on
    its own (the adapters' plug-ins): every grade mapped by ``grade_map`` when one is given;
    without one, grades in 1..5 and not all 1 (ids given without grades, read as binary).
    One query may lack a 4 or 5 (partial evidence only), so that is not required.

    Example:
        >>> check_query_grades([3, 2], None, ["ra_nwg@5"])  # partial evidence: fine
        >>> check_query_grades([1], None, ["ra_nwg@5"])  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        ragmetrics.errors.GradeScaleError: ... grade_map={1: 5} ...
    """
    distinct = sorted({int(g) for g in grades})
    if not distinct:
        return
    if grade_map is not None:
        if all(g in grade_map for g in distinct):
            return
    elif distinct[0] >= 1 and distinct[-1] <= 5 and distinct != [1]:
        return
    check_utility_scale(distinct, grade_map, labels)  # raises, with the map to use


def _describe_scale(distinct: list[int]) -> str:
    if set(distinct) <= {0, 1}:
        return " (binary judgments)"
    if 0 in distinct and set(distinct) <= {0, 1, 2, 3}:
        return " (a 0..3 scale, as TREC)"
    if distinct[0] >= 1 and distinct[-1] <= 3:
        return (
            " (within 1..5 but without a 4 or 5: read as utility grades, no document is "
            "useful evidence and every query is NA; if the labels are on a 1..3 scale, its "
            "top grade is the decisive one)"
        )
    return ", outside 1..5"


def _utility_lookup(grade_map: Mapping[int, int] | None, grades: np.ndarray) -> np.ndarray:
    """Raw grades -> utility grades (the map was checked by ``check_utility_scale``)."""
    raw = grades.astype(np.int64)
    if grade_map is None:
        return raw
    values, inverse = np.unique(raw, return_inverse=True)
    mapped = np.fromiter(map(grade_map.__getitem__, values.tolist()), np.int64, len(values))
    return mapped[inverse].reshape(raw.shape)


def utility(judged: JudgedRun, alpha: float, cap4: float, cap3: float) -> Utility:
    """The utility view of ``judged`` under one weighting (computed once per evaluation)."""

    def make() -> Utility:
        rows, u_grades = _judged_utility(judged)
        grade_weights = rarity_weights(_grade_counts(judged), alpha=alpha, cap4=cap4, cap3=cap3)
        # oracle: U's weights sorted descending, cumulated
        padded = pad_rows(judged.judged_counts, grade_weights[rows, u_grades], min_width=1)
        oracle = np.cumsum(-np.sort(-padded, axis=1), axis=1)
        # ranked docs: raw grade -> utility grade -> weight
        ranked = _utility_grades(judged)
        weights = np.take_along_axis(grade_weights, ranked, axis=1)
        return Utility(ranked, weights, grade_weights, oracle)

    return judged.cached(("utility", alpha, cap4, cap3), make)


def _judged_utility(judged: JudgedRun) -> tuple[np.ndarray, np.ndarray]:
    """Each judged doc's query row and utility grade, query by query."""
    rows = np.repeat(np.arange(judged.n_queries), judged.judged_counts)
    return rows, _utility_lookup(judged.grade_map, judged.judged_grades)


def _utility_grades(judged: JudgedRun) -> np.ndarray:
    """The utility grade (1..5) of the doc at each rank; 0 where unjudged or padding."""

    def make() -> np.ndarray:
        grades = np.zeros((judged.n_queries, judged.depth), dtype=np.int64)
        grades[judged.hit_rows, judged.hit_ranks] = _utility_lookup(
            judged.grade_map, judged.hit_grades
        )
        return grades

    return judged.cached("utility_grades", make)


def _grade_counts(judged: JudgedRun) -> np.ndarray:
    """Per query, the count of each utility grade 0..5 in U (whatever the weighting)."""

    def make() -> np.ndarray:
        rows, u_grades = _judged_utility(judged)  # 1..5: check_utility_scale saw to it
        flat = np.bincount(rows * 6 + u_grades, minlength=judged.n_queries * 6)
        return flat.reshape(judged.n_queries, 6)

    return judged.cached("grade_counts", make)


def _oracle_at(table: np.ndarray, cutoff: int) -> np.ndarray:
    """Row-wise value of a cumulative table at column ``cutoff - 1`` (last column if shorter)."""
    return table[:, min(cutoff, table.shape[1]) - 1]


def _pool_cumsum(judged: JudgedRun, weighting: tuple[float, float, float]) -> np.ndarray:
    """Per query, cumulative sums of the pool's weights (within U) sorted descending."""

    def make() -> np.ndarray:
        grade_weights = utility(judged, *weighting).grade_weights
        pool_grades = _utility_grades(judged.pooled())  # 0 outside U
        weights = np.take_along_axis(grade_weights, pool_grades, axis=1)
        if not weights.shape[1]:
            return np.zeros((judged.n_queries, 1))
        table: np.ndarray = np.cumsum(-np.sort(-weights, axis=1), axis=1)
        return table

    return judged.cached(("pool_cumsum", *weighting), make)


def _ratio_or_na(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    out = np.full(np.shape(denominator), np.nan)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def _top(matrix: np.ndarray, cutoff: int) -> np.ndarray:
    return matrix[:, :cutoff]


def ra_nwg(
    judged: JudgedRun, cutoff: int | None, *, alpha: float, cap4: float, cap3: float
) -> np.ndarray:
    """RA-nWG@K = G_obs / G_oracle: the share of the best achievable utility that the first K
    distinct docs carry. Range [0, 1]; NA when G_oracle = 0.

    Example:
        >>> grades = {"q": {"a": 5, "b": 4, "c": 3, "d": 1, "e": 2}}
        >>> u = locate_in_lists(grades, {"q": ["a", "d", "x", "b"]})
        >>> w = dict(alpha=1.0, cap4=1.0, cap3=0.25)
        >>> # one doc of each grade in U: p_g = 1/5, so w5 = 1, w4 = 2.5 / 5, w3 = 0.5 / 5
        >>> ra_nwg(u, 2, **w).round(6).tolist()  # (w(a) + w(d)) / (w5 + w4) = 1 / 1.5
        [0.666667]
    """
    assert cutoff is not None
    util = utility(judged, alpha, cap4, cap3)
    # summed largest first, as the oracle is: the same docs give the same bits (a perfect
    # selection scores exactly 1), a subset never sums above the oracle, and the padding
    # around a query in its batch changes nothing
    observed = row_sums(-np.sort(-_top(util.weights, cutoff), axis=1))
    return _ratio_or_na(observed, _oracle_at(util.oracle_cumsum, cutoff))


def proc(
    judged: JudgedRun, cutoff: int | None, *, alpha: float, cap4: float, cap3: float
) -> np.ndarray:
    """PROC@K = G_pool / G_oracle: the ceiling the candidate pool allows (retrieval quality).
    Range [0, 1]; NA when G_oracle = 0.

    Example:
        >>> grades = {"q": {"a": 5, "b": 4, "c": 3, "d": 1, "e": 2}}
        >>> u = locate_in_lists(grades, {"q": ["a", "d", "x", "b"]})
        >>> w = dict(alpha=1.0, cap4=1.0, cap3=0.25)
        >>> proc(u, 2, **w).tolist()  # the whole ranking holds a and b: 1.5 / 1.5
        [1.0]
    """
    assert cutoff is not None
    util = utility(judged, alpha, cap4, cap3)
    return _ratio_or_na(
        _oracle_at(_pool_cumsum(judged, (alpha, cap4, cap3)), cutoff),
        _oracle_at(util.oracle_cumsum, cutoff),
    )


def pct_proc(
    judged: JudgedRun, cutoff: int | None, *, alpha: float, cap4: float, cap3: float
) -> np.ndarray:
    """%PROC@K = RA-nWG@K / PROC@K: how much of the pool's ceiling the selection realized
    (reranking / selection efficiency). NA when PROC@K is 0 or NA.

    Example:
        >>> grades = {"q": {"a": 5, "b": 4, "c": 3, "d": 1, "e": 2}}
        >>> u = locate_in_lists(grades, {"q": ["a", "d", "x", "b"]})
        >>> w = dict(alpha=1.0, cap4=1.0, cap3=0.25)
        >>> pct_proc(u, 2, **w).round(6).tolist()  # RA-nWG / PROC = (1 / 1.5) / 1
        [0.666667]
    """
    weighting: dict[str, Any] = {"alpha": alpha, "cap4": cap4, "cap3": cap3}
    return _ratio_or_na(
        ra_nwg(judged, cutoff, **weighting),
        np.nan_to_num(proc(judged, cutoff, **weighting), nan=0.0),
    )


def n_recall_4plus(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """|{d in S_K : g >= 4}| / min(K, R4+), R4+ = n4 + n5; NA when R4+ = 0.

    Example:
        >>> grades = {"q": {"a": 5, "b": 4, "c": 3, "d": 1, "e": 2}}
        >>> u = locate_in_lists(grades, {"q": ["a", "d", "x", "b"]})
        >>> n_recall_4plus(u, 2).tolist()  # a of {a, b}: 1 / min(2, 2)
        [0.5]
    """
    assert cutoff is not None
    found = (_top(_utility_grades(judged), cutoff) >= 4).sum(axis=1)
    n_grade = _grade_counts(judged)
    available = n_grade[:, 4] + n_grade[:, 5]
    return _ratio_or_na(found.astype(np.float64), np.minimum(cutoff, available).astype(np.float64))


def n_recall_5(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """|{d in S_K : g = 5}| / min(K, R5); NA when R5 = 0.

    Example:
        >>> grades = {"q": {"a": 5, "b": 4, "c": 3, "d": 1, "e": 2}}
        >>> u = locate_in_lists(grades, {"q": ["a", "d", "x", "b"]})
        >>> n_recall_5(u, 2).tolist()  # a: 1 / min(2, 1)
        [1.0]
    """
    assert cutoff is not None
    found = (_top(_utility_grades(judged), cutoff) == 5).sum(axis=1)
    return _ratio_or_na(
        found.astype(np.float64),
        np.minimum(cutoff, _grade_counts(judged)[:, 5]).astype(np.float64),
    )


def precision_4plus(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """|{d in S_K : g >= 4}| / K. Never NA.

    Example:
        >>> grades = {"q": {"a": 5, "b": 4, "c": 3, "d": 1, "e": 2}}
        >>> u = locate_in_lists(grades, {"q": ["a", "d", "x", "b"]})
        >>> precision_4plus(u, 2).tolist()  # a among a, d
        [0.5]
    """
    assert cutoff is not None
    found: np.ndarray = (_top(_utility_grades(judged), cutoff) >= 4).sum(axis=1)
    return found / cutoff


def harm(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """|{d in S_K : d in U and g <= 2}| / K: the share of the prompt given to weak or
    distracting evidence (lower is better). Never NA.

    Example:
        >>> grades = {"q": {"a": 5, "b": 4, "c": 3, "d": 1, "e": 2}}
        >>> u = locate_in_lists(grades, {"q": ["a", "d", "x", "b"]})
        >>> harm(u, 2).tolist()  # d (grade 1) among a, d
        [0.5]
    """
    assert cutoff is not None
    grades = _top(_utility_grades(judged), cutoff)
    weak: np.ndarray = ((grades >= 1) & (grades <= 2)).sum(axis=1)
    return weak / cutoff


def unjudged(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """|{d in S_K : d not in U}| / K: how much of the top K nobody graded (a diagnostic of
    the judgments, not of the system; lower means the other numbers are better founded).

    Example:
        >>> grades = {"q": {"a": 5, "b": 4, "c": 3, "d": 1, "e": 2}}
        >>> u = locate_in_lists(grades, {"q": ["a", "d", "x", "b"]})
        >>> unjudged(u, 4).tolist()  # x among a, d, x, b
        [0.25]
    """
    assert cutoff is not None
    outside: np.ndarray = _top(judged.retrieved & ~judged.judged, cutoff).sum(axis=1)
    return outside / cutoff


def _set_metric(name: str, kernel: Kernel, summary: str, **traits: Any) -> MetricSpec:
    # runs at import, before a mutation tool switches a mutant on (see classic._classic)
    traits.setdefault("scale", Scale.UTILITY)  # pragma: no mutate
    traits.setdefault("pure", True)  # pragma: no mutate
    return MetricSpec(name, kernel, Cutoff.REQUIRED, "set", summary, **traits)  # pragma: no mutate


register(
    _set_metric(
        "ra_nwg",
        ra_nwg,
        "rarity-aware utility captured in the top-K set",
        params=WEIGHTING,
        can_be_na=True,
    ),
    "ra-nwg",
    "ranwg",
)
register(
    _set_metric(
        "proc",
        proc,
        "pool-restricted oracle ceiling (retrieval quality)",
        params=WEIGHTING,
        can_be_na=True,
        needs_pool=True,
    )
)
register(
    _set_metric(
        "pct_proc",
        pct_proc,
        "RA-nWG / PROC (selection efficiency)",
        params=WEIGHTING,
        can_be_na=True,
        needs_pool=True,
    ),
    "%proc",
)
register(
    _set_metric(
        "n_recall_4plus", n_recall_4plus, "grade >= 4 docs found / min(K, R4+)", can_be_na=True
    )
)
register(_set_metric("n_recall_5", n_recall_5, "grade 5 docs found / min(K, R5)", can_be_na=True))
register(
    _set_metric(
        "precision_4plus",
        precision_4plus,
        "grade >= 4 docs in the top K / K",
        perfect_is_one=False,
    )
)
register(
    _set_metric(
        "harm",
        harm,
        "weak or distracting docs (grade <= 2) in the top K / K",
        higher_is_better=False,
        perfect_is_one=False,
    )
)
register(
    _set_metric(
        "unjudged",
        unjudged,
        "ungraded docs in the top K / K",
        higher_is_better=False,
        perfect_is_one=False,
        scale=Scale.ANY,
    )
)
