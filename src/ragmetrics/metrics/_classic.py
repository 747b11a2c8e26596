"""The classic ranking metrics, with trec_eval's conventions (``docs/metrics.md``).

Each kernel takes a judged batch, a cutoff (``None``: the whole ranking) and the metric's
declared parameters as keywords, and returns one value per query; NaN marks a query for
which the metric is not defined (NA). ``rel`` is the lowest grade that counts as relevant.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ragmetrics._util.arrays import first_of_runs, row_sums, run_starts
from ragmetrics.errors import InvalidParameterError
from ragmetrics.formats._rules import ascii_int
from ragmetrics.metrics.judged import JudgedRun, OneRanking, log2_ranks_list
from ragmetrics.metrics.registry import (
    DCG,
    GAINS,
    LEVEL,
    MAX_GRADE,
    REL,
    ROUNDING,
    Aggregate,
    Cutoff,
    Kernel,
    MetricSpec,
    register,
)

__all__ = [
    "average_precision",
    "bpref",
    "err",
    "f1",
    "group_recall",
    "hit_rate",
    "interpolated_precision",
    "ndcg",
    "precision",
    "r_precision",
    "recall",
    "recall_all",
    "reciprocal_rank",
    "relevant_count",
    "relevant_retrieved_count",
    "retrieved_count",
]


def _cut(matrix: np.ndarray, cutoff: int | None) -> np.ndarray:
    return matrix if cutoff is None else matrix[:, :cutoff]


def _safe_divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, and 0 where the denominator is 0."""
    shape = numerator.shape
    if denominator.shape != shape:
        shape = np.broadcast_shapes(shape, denominator.shape)
    out = np.zeros(shape, dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def precision(judged: JudgedRun, cutoff: int | None, *, rel: int) -> np.ndarray:
    """Fraction of the first k slots that hold a relevant doc: ``|rel in L_k| / k``.

    The denominator is k even when fewer than k docs were retrieved (trec_eval ``P_k``).
    Range [0, 1].

    Example:
        >>> j = locate_in_lists({"q": {"a": 2, "b": 1, "c": 0}}, {"q": ["x", "a", "c", "b"]})
        >>> precision(j, 2, rel=1).tolist()  # a among x, a: 1 / 2
        [0.5]
    """
    assert cutoff is not None
    return judged.hits(cutoff, rel) / cutoff


def recall(judged: JudgedRun, cutoff: int | None, *, rel: int) -> np.ndarray:
    """Fraction of the relevant docs found in the first k: ``|rel in L_k| / R``; 0 if R = 0.

    Example:
        >>> j = locate_in_lists({"q": {"a": 2, "b": 1, "c": 0}}, {"q": ["x", "a", "c", "b"]})
        >>> recall(j, 2, rel=1).tolist()  # a of {a, b}: 1 / 2
        [0.5]
    """
    return _safe_divide(judged.hits(cutoff, rel).astype(np.float64), judged.n_relevant(rel))


def f1(judged: JudgedRun, cutoff: int | None, *, rel: int) -> np.ndarray:
    """Harmonic mean of precision@k and recall@k; 0 when both are 0.

    Example:
        >>> j = locate_in_lists({"q": {"a": 2, "b": 1, "c": 0}}, {"q": ["x", "a", "c", "b"]})
        >>> f1(j, 2, rel=1).tolist()  # 2 * 0.5 * 0.5 / (0.5 + 0.5)
        [0.5]
    """
    p = precision(judged, cutoff, rel=rel)
    r = recall(judged, cutoff, rel=rel)
    return _safe_divide(2.0 * p * r, p + r)


def hit_rate(judged: JudgedRun, cutoff: int | None, *, rel: int) -> np.ndarray:
    """1 if a relevant doc is among the first k, else 0 (trec_eval ``success_k``).

    Example:
        >>> j = locate_in_lists({"q": {"a": 2, "b": 1, "c": 0}}, {"q": ["x", "a", "c", "b"]})
        >>> hit_rate(j, 1, rel=1).tolist(), hit_rate(j, 2, rel=1).tolist()
        ([0.0], [1.0])
    """
    return (judged.hits(cutoff, rel) > 0).astype(np.float64)


def reciprocal_rank(judged: JudgedRun, cutoff: int | None, *, rel: int) -> np.ndarray:
    """``1 / rank`` of the first relevant doc within the first k; 0 if there is none.

    Example:
        >>> j = locate_in_lists({"q": {"a": 2, "b": 1, "c": 0}}, {"q": ["x", "a", "c", "b"]})
        >>> reciprocal_rank(j, None, rel=1).tolist()  # a at rank 2
        [0.5]
    """
    rows, columns = judged.relevant_at(rel)
    if cutoff is not None:
        keep = columns < cutoff
        rows, columns = rows[keep], columns[keep]
    first = first_of_runs(rows)  # each query's first relevant doc
    values = np.zeros(judged.n_queries)
    values[rows[first]] = 1.0 / (columns[first] + 1.0)
    return values


def average_precision(judged: JudgedRun, cutoff: int | None, *, rel: int) -> np.ndarray:
    """``(1/R) * sum of precision@i over the relevant ranks i <= k``; 0 if R = 0.

    The divisor is R, not min(R, k), as trec_eval's ``map_cut_k``.

    Example:
        >>> j = locate_in_lists({"q": {"a": 2, "b": 1, "c": 0}}, {"q": ["x", "a", "c", "b"]})
        >>> average_precision(j, None, rel=1).tolist()  # (1/2 + 2/4) / 2
        [0.5]
        >>> average_precision(j, 3, rel=1).tolist()  # (1/2) / 2: b is past k
        [0.25]
    """
    rows, columns = judged.relevant_at(rel)
    if cutoff is not None:
        keep = columns < cutoff
        rows, columns = rows[keep], columns[keep]
    # the i-th relevant doc of a query (i = 1, 2, ...) at rank c + 1 adds precision i / (c + 1)
    ordinal = np.arange(1, len(rows) + 1) - run_starts(rows)
    summed = np.bincount(rows, weights=ordinal / (columns + 1.0), minlength=judged.n_queries)
    return _safe_divide(summed, judged.n_relevant(rel))


def ndcg(judged: JudgedRun, cutoff: int | None, *, dcg: str, gains: str = "") -> np.ndarray:
    """``DCG@k / IDCG@k``, ``DCG@k = sum_{i<=k} gain(d_i) / log2(i + 1)``; 0 when IDCG = 0.

    Gain ``max(grade, 0)`` with ``dcg="log2"`` (Järvelin and Kekäläinen, as trec_eval), or
    ``2^max(grade, 0) - 1`` with ``dcg="exp-log2"`` (Burges et al., 2005: ``ndcg_exp``).
    The ideal ranks every judged doc by grade; the relevance threshold does not change the
    gain. ``gains`` (``"1:0;2:0.5"``) replaces the grade of the grades it names before the
    gain is taken, in the ranking and in the ideal alike: on a 1..5 utility scale,
    ``gains="1:0"`` keeps "not relevant" from earning credit.

    Example:
        >>> j = locate_in_lists({"q": {"a": 2, "b": 1, "c": 0}}, {"q": ["x", "a", "c", "b"]})
        >>> # DCG = 2/log2(3) + 1/log2(5), IDCG = 2 + 1/log2(3)
        >>> ndcg(j, None, dcg="log2").round(6).tolist()
        [0.643322]
        >>> ndcg(j, 2, dcg="exp-log2").round(6).tolist()  # (3/log2(3)) / (3 + 1/log2(3))
        [0.521296]
        >>> # with gains="1:0" b earns nothing: (2 / log2(3)) / 2
        >>> ndcg(j, None, dcg="log2", gains="1:0").round(6).tolist()
        [0.63093]
    """
    exponential = dcg == "exp-log2"
    rows, ranks, grades = judged.hit_rows, judged.hit_ranks, judged.hit_grades
    if cutoff is not None:
        keep = ranks < cutoff
        rows, ranks, grades = rows[keep], ranks[keep], grades[keep]
    log2_ranks = judged.log2_ranks
    if gains:
        table = _gain_map(gains)
        grades = _regrade(grades, table)
        ideal = _cut(_ideal_regraded(judged, table), cutoff)
    else:
        ideal = _cut(judged.ideal_gains, cutoff)
    # 2^g overflows past g = 1023: such queries are scaled by 2^-top (the ratio is the same)
    top = ideal[:, 0] if ideal.shape[1] else np.zeros(judged.n_queries)
    shift = np.where(top > _EXP_SAFE, top, 0.0) if exponential else None
    earned = _gain(np.maximum(grades, 0.0), None if shift is None else shift[rows])
    # summed rank by rank in rank order, as trec_eval does (hits are sorted by row then rank,
    # and bincount adds each row's weights in order); unjudged docs add nothing
    observed = np.bincount(rows, weights=earned / log2_ranks[ranks], minlength=judged.n_queries)
    ideal_gains = _gain(ideal, None if shift is None else shift[:, None])
    idcg = row_sums(ideal_gains / log2_ranks[: ideal.shape[1]])
    return _safe_divide(observed, idcg)


def _gain_map(text: str) -> dict[int, float]:
    """``"1:0;2:0.5"`` as ``{1: 0.0, 2: 0.5}``."""
    table: dict[int, float] = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        grade, colon, value = part.partition(":")
        number = ascii_int(grade.strip())
        try:
            gain = float(value) if colon and number is not None else float("nan")
        except ValueError:
            gain = float("nan")
        if gain != gain or gain in (float("inf"), float("-inf")) or number in table:
            raise InvalidParameterError(
                f"gains={text!r}: write each grade once as 'grade:gain' (an integer grade, a "
                f"finite gain), separated by ';', e.g. '1:0;2:0.5'."
            )
        table[number] = gain  # type: ignore[index]
    return table


def _regrade(grades: np.ndarray, table: dict[int, float]) -> np.ndarray:
    """Each grade, or the gain ``table`` gives it (grades are compared as they are)."""
    out = grades.astype(np.float64, copy=True)
    for grade, gain in table.items():
        out[grades == grade] = gain
    return out


def _ideal_regraded(judged: JudgedRun, table: dict[int, float]) -> np.ndarray:
    """Per query, the judged docs' gains under ``table``, clipped at 0, sorted descending
    (padded with 0): the ideal ranking when the gains reorder the grades."""
    values = np.maximum(_regrade(judged.judged_grades, table), 0.0)
    rows = np.repeat(np.arange(judged.n_queries), judged.judged_counts)
    order = np.lexsort((-values, rows))
    starts = np.concatenate(([0], np.cumsum(judged.judged_counts)[:-1]))
    width = int(judged.judged_counts.max()) if judged.n_queries else 0
    ideal = np.zeros((judged.n_queries, width))
    ideal[rows, np.arange(len(rows)) - starts[rows]] = values[order]
    return ideal


_EXP_SAFE = 1000.0  # below this grade 2^g - 1 is computed as it is written


def _gain(grades: np.ndarray, shift: np.ndarray | None) -> np.ndarray:
    """The gain of each (non-negative) grade: the grade itself, or ``2^g - 1`` when
    ``shift`` is given (then ``2^(g - shift) - 2^-shift`` where the shift is not 0)."""
    if shift is None:
        return grades
    with np.errstate(over="ignore"):  # where it overflows, the scaled value is taken
        plain: np.ndarray = np.exp2(grades) - 1.0
    if not shift.any():
        return plain
    scaled: np.ndarray = np.exp2(grades - shift) - np.exp2(-shift)
    return np.where(shift > 0, scaled, plain)


def r_precision(judged: JudgedRun, cutoff: int | None, *, rel: int) -> np.ndarray:
    """Precision at rank R (the number of relevant docs); 0 if R = 0 (trec_eval ``Rprec``).

    Example:
        >>> j = locate_in_lists({"q": {"a": 2, "b": 1, "c": 0}}, {"q": ["x", "a", "c", "b"]})
        >>> r_precision(j, None, rel=1).tolist()  # R = 2: a among x, a
        [0.5]
    """
    n_relevant = judged.n_relevant(rel)
    rows, columns = judged.relevant_at(rel)
    hits = np.bincount(rows[columns < n_relevant[rows]], minlength=judged.n_queries)
    return _safe_divide(hits.astype(np.float64), n_relevant)


def err(judged: JudgedRun, cutoff: int | None, *, max_grade: float | None) -> np.ndarray:
    """Expected Reciprocal Rank: ``sum_i (1/i) R_i prod_{j<i} (1 - R_j)``.

    ``R_i = (2^g - 1) / 2^max_grade`` with ``g = max(grade, 0)``; ``max_grade`` is the highest
    grade judged in the qrels unless the parameter fixes it (Chapelle et al., 2009).

    Example:
        >>> j = locate_in_lists({"q": {"a": 2, "b": 1, "c": 0}}, {"q": ["x", "a", "c", "b"]})
        >>> # R_a = (2^2 - 1) / 2^2, R_b = 1 / 4: 0.75 / 2 + (1 - 0.75) * 0.25 / 4
        >>> err(j, None, max_grade=None).tolist()
        [0.390625]
    """
    if max_grade is not None and judged.max_grade > max_grade:
        raise InvalidParameterError(
            f"ERR's max_grade is {max_grade:g} but the qrels judge a grade of "
            f"{judged.max_grade:g}: its stopping probability would exceed 1. Raise max_grade to "
            f"the top of your grade scale, or leave it unset to use the highest grade judged."
        )
    top = judged.max_grade if max_grade is None else float(max_grade)
    gains = _cut(judged.gains, cutoff)
    if top <= 0 or gains.shape[1] == 0:
        return np.zeros(judged.n_queries)
    if top > _EXP_SAFE:  # 2^top overflows past 1023: the same ratio, scaled
        stop = np.exp2(gains - top) - np.exp2(-top)
    else:
        stop = (np.exp2(gains) - 1.0) / np.exp2(top)
    reach = np.cumprod(1.0 - stop, axis=1)
    reach = np.hstack([np.ones((judged.n_queries, 1)), reach[:, :-1]])
    ranks = np.arange(1, gains.shape[1] + 1, dtype=np.float64)
    return row_sums(stop * reach / ranks)


def recall_all(judged: JudgedRun, cutoff: int | None, *, rel: int) -> np.ndarray:
    """1 if every evidence group (every relevant doc, without groups) has a member in the
    first k, else 0; NA when the query has no relevant doc.

    Example:
        >>> j = locate_in_lists({"q": {"a": 2, "b": 1, "c": 0}}, {"q": ["x", "a", "c", "b"]})
        >>> recall_all(j, 2, rel=1).tolist(), recall_all(j, 4, rel=1).tolist()
        ([0.0], [1.0])
    """
    if not judged.has_groups:
        hits, n_relevant = judged.hits(cutoff, rel), judged.n_relevant(rel)
        return np.where(n_relevant > 0, (hits == n_relevant) * 1.0, np.nan)
    first, n_groups = judged.group_first_ranks(rel)
    limit = np.inf if cutoff is None else cutoff
    found = (first < limit).sum(axis=1)
    return np.where(n_groups > 0, (found == n_groups) * 1.0, np.nan)


def group_recall(judged: JudgedRun, cutoff: int | None, *, rel: int) -> np.ndarray:
    """Fraction of evidence groups with a member in the first k; 0 for a query with none.

    Without explicit groups each relevant doc is its own group, so this equals recall@k.

    Example:
        >>> j = locate_in_lists({"q": {"a": 2, "b": 1, "c": 0}}, {"q": ["x", "a", "c", "b"]})
        >>> group_recall(j, 2, rel=1).tolist()  # groups {a}, {b}: one found
        [0.5]
    """
    if not judged.has_groups:
        return recall(judged, cutoff, rel=rel)
    first, n_groups = judged.group_first_ranks(rel)
    limit = np.inf if cutoff is None else cutoff
    return _safe_divide((first < limit).sum(axis=1).astype(np.float64), n_groups)


def bpref(judged: JudgedRun, cutoff: int | None, *, rel: int) -> np.ndarray:
    """Binary preference (Buckley and Voorhees, 2004), as trec_eval computes it.

    Only judged docs count; unjudged retrieved docs are skipped. For each relevant doc
    retrieved, with ``n`` judged non-relevant docs ranked above it, add
    ``1 - min(n, R) / min(N, R)`` (1 when ``n = 0``); divide by ``R``. ``N`` is the number
    of docs judged non-relevant (grade 0 up to ``rel``; negative grades are not counted).
    0 when ``R = 0``.

    Example:
        >>> j = locate_in_lists({"q": {"a": 2, "b": 1, "c": 0}}, {"q": ["x", "a", "c", "b"]})
        >>> bpref(j, None, rel=1).tolist()  # a: no non-relevant above; b: c above, N = 1
        [0.5]
    """
    rows, grades = judged.hit_rows, judged.hit_grades
    nonrelevant = (grades >= 0) & (grades < rel)
    # the judged non-relevant docs above each hit of its query (hits are by query, then rank)
    seen = np.concatenate(([0], np.cumsum(nonrelevant)[:-1])) if len(rows) else rows
    above = seen - seen[run_starts(rows)] if len(rows) else seen
    relevant = grades >= rel
    n_rel = judged.n_relevant(rel)
    row = rows[relevant]
    bound = np.minimum(judged.n_nonrelevant(rel), n_rel)[row]
    found = np.minimum(above[relevant], n_rel[row])
    share = np.ones(len(row))
    np.divide(found, bound, out=share, where=found > 0)
    terms = np.where(found > 0, 1.0 - share, 1.0)
    summed = np.bincount(row, weights=terms, minlength=judged.n_queries)
    return _safe_divide(summed, n_rel)


def interpolated_precision(
    judged: JudgedRun, cutoff: int | None, *, rel: int, level: float, rounding: str = "nearest"
) -> np.ndarray:
    """Interpolated precision at a recall level, as trec_eval 10's ``iprec_at_recall``.

    The level is turned into a number of relevant docs, ``c = round(level * R)`` (halves
    up, as C's ``lround``); the value is the highest precision at or after the rank of the
    c-th relevant doc retrieved (for ``c = 0``, the highest precision anywhere), and 0 when
    fewer than c relevant docs are retrieved. ``rounding="trec9"`` takes
    ``c = floor(level * R + 0.9)`` instead, as trec_eval up to 9 and pytrec_eval do.

    Example:
        >>> j = locate_in_lists({"q": {"a": 1, "b": 1}}, {"q": ["a", "x", "b"]})
        >>> [interpolated_precision(j, None, rel=1, level=v).tolist() for v in (0.0, 0.5, 1.0)]
        [[1.0], [1.0], [0.6666666666666666]]
    """
    starts, found, best = judged.cached(
        ("best_precision_after", rel), lambda: _best_precision_after(judged, rel)
    )
    scaled = level * judged.n_relevant(rel)
    wanted = (
        np.floor(scaled + 0.9).astype(np.int64) if rounding == "trec9" else _round_half_up(scaled)
    )
    values = np.zeros(judged.n_queries)
    reached = (wanted <= found) & (found > 0)
    index = starts + np.maximum(wanted, 1) - 1
    values[reached] = best[index[reached]]
    return values


def _best_precision_after(judged: JudgedRun, rel: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where each query's relevant docs retrieved start (by query, then rank), how many it
    retrieved, and of each, the highest precision at its rank or after. The same for every
    recall level: made once."""
    rows, ranks = judged.relevant_at(rel)
    # the j-th relevant doc of a query at rank c + 1 has precision j / (c + 1)
    first = run_starts(rows)
    ordinal = np.arange(len(rows)) - first
    precision = (ordinal + 1) / (ranks + 1.0)
    # the highest precision from each relevant doc to the end of its query, by doubling:
    # after the step of width w, best[i] covers hits i .. i + 2w - 1 of its query
    found = np.bincount(rows, minlength=judged.n_queries)
    last = (first + found[rows] - 1) if len(rows) else first
    best = precision.copy()
    width = 1
    while width < (int(found.max()) if len(found) else 0):
        ahead = np.arange(len(rows)) + width
        within = ahead <= last
        best[within] = np.maximum(best[within], best[ahead[within]])
        width *= 2
    starts = np.zeros(judged.n_queries, dtype=np.int64)
    starts[rows] = first  # each query's first relevant hit
    return starts, found, best


def _round_half_up(values: np.ndarray) -> np.ndarray:
    """``lround`` of non-negative doubles: halves go up (Python's ``round`` goes to even)."""
    whole = np.floor(values)
    rounded: np.ndarray = (whole + (values - whole >= 0.5)).astype(np.int64)
    return rounded


def retrieved_count(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """How many docs each query retrieved (trec_eval's ``num_ret``; summed over a run).

    Example:
        >>> retrieved_count(locate_in_lists({"q": {"a": 1}}, {"q": ["a", "x", "y"]}), None).tolist()
        [3.0]
    """
    return judged.lengths.astype(np.float64)


def relevant_count(judged: JudgedRun, cutoff: int | None, *, rel: int) -> np.ndarray:
    """How many docs each query has judged relevant, ``R`` (``num_rel``; summed).

    Example:
        >>> j = locate_in_lists({"q": {"a": 1, "b": 0}}, {"q": ["x"]})
        >>> relevant_count(j, None, rel=1).tolist()
        [1.0]
    """
    return judged.n_relevant(rel).astype(np.float64)


def relevant_retrieved_count(judged: JudgedRun, cutoff: int | None, *, rel: int) -> np.ndarray:
    """How many relevant docs each query retrieved (``num_rel_ret``; summed).

    Example:
        >>> j = locate_in_lists({"q": {"a": 1, "b": 1}}, {"q": ["x", "b"]})
        >>> relevant_retrieved_count(j, None, rel=1).tolist()
        [1.0]
    """
    return judged.hits(None, rel).astype(np.float64)


# --- the kernels' twins for one ranking (MetricSpec.single) -----------------------------
# The same operations in the same order as the kernel above each, on one ranking in plain
# Python: a kernel's numpy set-up costs more than its sums on a 10-doc ranking, which is what
# an adapter's plug-in scores a call. tests/test_single_ranking.py holds each twin to its
# kernel, value for value, over random rankings, judgments and parameters.


def _precision_one(one: OneRanking, cutoff: int | None, *, rel: int) -> float:
    assert cutoff is not None
    return len(one.relevant_ranks(rel, cutoff)) / cutoff


def _recall_one(one: OneRanking, cutoff: int | None, *, rel: int) -> float:
    relevant = one.n_relevant(rel)
    return len(one.relevant_ranks(rel, cutoff)) / relevant if relevant else 0.0


def _hit_rate_one(one: OneRanking, cutoff: int | None, *, rel: int) -> float:
    return 1.0 if one.relevant_ranks(rel, cutoff) else 0.0


def _reciprocal_rank_one(one: OneRanking, cutoff: int | None, *, rel: int) -> float:
    ranks = one.relevant_ranks(rel, cutoff)
    return 1.0 / (ranks[0] + 1.0) if ranks else 0.0


def _average_precision_one(one: OneRanking, cutoff: int | None, *, rel: int) -> float:
    summed = 0.0
    for ordinal, rank in enumerate(one.relevant_ranks(rel, cutoff), 1):
        summed += ordinal / (rank + 1.0)
    relevant = one.n_relevant(rel)
    return summed / relevant if relevant else 0.0


def _ndcg_one(one: OneRanking, cutoff: int | None, *, dcg: str, gains: str = "") -> float | None:
    if dcg != "log2" or gains:
        return None  # the exponential gain and regraded gains: the kernel
    ideal = sorted((max(grade, 0.0) for grade in one.judged), reverse=True)
    if cutoff is not None:
        ideal = ideal[:cutoff]
    log2 = log2_ranks_list(max(one.length, len(ideal), 1))
    observed = 0.0
    for rank, grade in one.hits:
        if cutoff is None or rank < cutoff:
            observed += max(grade, 0.0) / log2[rank]
    idcg = 0.0
    for rank, gain in enumerate(ideal):
        idcg += gain / log2[rank]
    return observed / idcg if idcg != 0 else 0.0


def _classic(name: str, kernel: Kernel, cutoff: Cutoff, summary: str, **traits: Any) -> MetricSpec:
    # runs at import, before a mutation tool switches a mutant on: its mutants cannot be
    # tested that way (the registry tests check every spec it makes)
    traits.setdefault("params", (REL,))  # pragma: no mutate
    traits.setdefault("pure", True)  # pragma: no mutate
    return MetricSpec(name, kernel, cutoff, "classic", summary, **traits)  # pragma: no mutate


register(
    _classic(
        "precision",
        precision,
        Cutoff.REQUIRED,
        "relevant docs in the top k / k",
        perfect_is_one=False,
        single=_precision_one,
    ),
    "p",
    "prec",
)
register(
    _classic(
        "recall", recall, Cutoff.REQUIRED, "relevant docs in the top k / R", single=_recall_one
    ),
    "r",
)
register(
    _classic(
        "f1",
        f1,
        Cutoff.REQUIRED,
        "harmonic mean of precision@k and recall@k",
        perfect_is_one=False,
    )
)
register(
    _classic(
        "hit_rate",
        hit_rate,
        Cutoff.REQUIRED,
        "1 if a relevant doc is in the top k",
        single=_hit_rate_one,
    ),
    "success",
    "hit",
    "hitrate",
)
register(
    _classic(
        "mrr",
        reciprocal_rank,
        Cutoff.OPTIONAL,
        "1 / rank of the first relevant doc",
        single=_reciprocal_rank_one,
    ),
    "rr",
    "recip_rank",
    "reciprocal_rank",
)
register(
    _classic(
        "map",
        average_precision,
        Cutoff.OPTIONAL,
        "average precision over relevant ranks",
        single=_average_precision_one,
    ),
    "ap",
    "map_cut",
    "average_precision",
)
register(
    _classic(
        "ndcg",
        ndcg,
        Cutoff.OPTIONAL,
        "normalized DCG (linear gain, as trec_eval)",
        params=(DCG, GAINS),
        real_grades=True,
        single=_ndcg_one,
    ),
    "ndcg_cut",
    presets={"ndcg_exp": {"dcg": "exp-log2"}},
)
register(
    _classic("r_precision", r_precision, Cutoff.NONE, "precision at rank R"),
    "rprec",
    "r-precision",
    "rp",
)
register(
    _classic(
        "err",
        err,
        Cutoff.OPTIONAL,
        "expected reciprocal rank (graded)",
        params=(MAX_GRADE,),
        perfect_is_one=False,
        real_grades=True,
    )
)
register(
    _classic(
        "gm_map",
        average_precision,
        Cutoff.NONE,
        "average precision, geometric mean over queries",
        aggregate=Aggregate.GEOMETRIC,
    ),
)
register(
    _classic("bpref", bpref, Cutoff.NONE, "binary preference over judged docs", judged_only=True)
)
register(
    _classic(
        "iprec_at_recall",
        interpolated_precision,
        Cutoff.NONE,
        "interpolated precision at a recall level",
        params=(REL, LEVEL, ROUNDING),
        perfect_is_one=False,
    ),
    "iprec",
)
for _name, _kernel, _what, _params in (
    ("num_ret", retrieved_count, "docs retrieved", ()),
    ("num_rel", relevant_count, "docs judged relevant (R)", (REL,)),
    ("num_rel_ret", relevant_retrieved_count, "relevant docs retrieved", (REL,)),
):
    register(
        _classic(
            _name,
            _kernel,
            Cutoff.NONE,
            f"{_what}, summed over queries",
            params=_params,
            aggregate=Aggregate.SUM,
            perfect_is_one=False,
            unit_range=False,
        )
    )
register(
    _classic(
        "recall_all",
        recall_all,
        Cutoff.REQUIRED,
        "1 if every relevant doc / evidence group is in the top k",
        can_be_na=True,
    ),
)
register(
    _classic(
        "group_recall",
        group_recall,
        Cutoff.REQUIRED,
        "fraction of evidence groups with a member in the top k",
    ),
)
