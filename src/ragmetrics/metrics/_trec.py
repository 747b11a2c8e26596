"""The rest of trec_eval's measures: set measures over the whole retrieved list, relative
precision, utility, R-precision at multiples of R, the 11-point average and the share of
unjudged docs, each defined as trec_eval 10 computes it (docs/metrics.md says how).

Every kernel reads only the located arrays and returns one value per query. Where trec_eval's
arithmetic has an order (a ratio of products, a sum over levels), the kernel keeps it, so the
values equal trec_eval's to the last bit.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator

import numpy as np

from ragmetrics._util.trec_names import PREFERENCE_COUNTS, PREFERENCE_MEASURES
from ragmetrics.formats._rules import ascii_int
from ragmetrics.metrics._classic import bpref
from ragmetrics.metrics.judged import JudgedRun
from ragmetrics.metrics.registry import (
    GAINS,
    REL,
    ROUNDING,
    Aggregate,
    Cutoff,
    Kernel,
    MetricSpec,
    Param,
    register,
)

__all__ = [
    "BETA",
    "GAINS",
    "LEVELS",
    "MULTIPLE",
    "PERSISTENCE",
    "PREFERENCE_MEASURES",
    "UTILITY_WEIGHTS",
    "bin_g",
    "dcg",
    "eleven_point_average",
    "g_measure",
    "ideal_dcg",
    "inferred_ap",
    "judged_share",
    "ndcg_gains",
    "ndcg_rel",
    "nonrelevant_judged_retrieved",
    "preference_kernel",
    "r_ndcg",
    "r_precision_multiple",
    "rbp",
    "rbp_residual",
    "relative_precision",
    "round_half_away",
    "set_ap",
    "set_f",
    "set_precision",
    "set_recall",
    "set_relative_precision",
    "unjudged_rate",
    "utility",
    "yaap",
]

BETA = Param("beta", float, 1.0, "weight of recall against precision in set_f", low=0.0)
MULTIPLE = Param("mult", float, 1.0, "the rank as a multiple of R (rank = mult x R)", low=0.0)
LEVELS = Param(
    "levels",
    str,
    "0;0.1;0.2;0.3;0.4;0.5;0.6;0.7;0.8;0.9;1",
    "the recall levels averaged, separated by ';'",
)
UTILITY_WEIGHTS = (
    Param("rel_ret", float, 1.0, "worth of each relevant doc retrieved"),
    Param("nonrel_ret", float, -1.0, "worth of each non-relevant doc retrieved"),
    Param("rel_missed", float, 0.0, "worth of each relevant doc not retrieved"),
    Param("nonrel_missed", float, 0.0, "worth of each non-relevant doc not retrieved"),
    Param(
        "n_docs",
        int,
        0,
        "docs in the collection (trec_eval -N; 0 as trec_eval without it), for nonrel_missed",
        low=0,
    ),
)


def _counts(judged: JudgedRun, rel: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per query, as floats: docs retrieved, relevant docs retrieved, relevant docs (R)."""
    retrieved = judged.lengths.astype(np.float64)
    found = judged.hits(None, rel).astype(np.float64)
    return retrieved, found, judged.n_relevant(rel).astype(np.float64)


def _ratio(numerator: np.ndarray, denominator: np.ndarray, where: np.ndarray) -> np.ndarray:
    out = np.zeros(np.shape(numerator), dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=where)
    return out


def set_precision(judged: JudgedRun, cutoff: int | None, *, rel: int) -> np.ndarray:
    """Relevant docs retrieved / docs retrieved, over the whole list (0 when nothing is).

    Example:
        >>> j = locate_in_lists({"q": {"a": 1, "b": 1, "c": 0}}, {"q": ["x", "a", "c", "b"]})
        >>> set_precision(j, None, rel=1).tolist()
        [0.5]
    """
    retrieved, found, _ = _counts(judged, rel)
    return _ratio(found, retrieved, retrieved > 0)


def set_recall(judged: JudgedRun, cutoff: int | None, *, rel: int) -> np.ndarray:
    """Relevant docs retrieved / R, over the whole list (0 when R = 0).

    Example:
        >>> j = locate_in_lists({"q": {"a": 1, "b": 1, "c": 0}}, {"q": ["x", "a"]})
        >>> set_recall(j, None, rel=1).tolist()
        [0.5]
    """
    _, found, relevant = _counts(judged, rel)
    return _ratio(found, relevant, relevant > 0)


def set_relative_precision(judged: JudgedRun, cutoff: int | None, *, rel: int) -> np.ndarray:
    """Relevant docs retrieved / min(docs retrieved, R): the share of the best a list of
    that length could hold (0 when either is 0).

    Example:
        >>> j = locate_in_lists({"q": {"a": 1, "b": 1, "c": 0}}, {"q": ["x", "a", "c", "b"]})
        >>> set_relative_precision(j, None, rel=1).tolist()
        [1.0]
    """
    retrieved, found, relevant = _counts(judged, rel)
    return _ratio(found, np.minimum(retrieved, relevant), (retrieved > 0) & (relevant > 0))


def set_ap(judged: JudgedRun, cutoff: int | None, *, rel: int) -> np.ndarray:
    """Unranked average precision: (relevant retrieved)^2 / (docs retrieved x R), i.e. set
    precision x set recall (0 when either count is 0).

    Example:
        >>> j = locate_in_lists({"q": {"a": 1, "b": 1, "c": 0}}, {"q": ["x", "a", "c", "b"]})
        >>> set_ap(j, None, rel=1).tolist()
        [0.5]
    """
    retrieved, found, relevant = _counts(judged, rel)
    return _ratio(found * found, retrieved * relevant, (retrieved > 0) & (relevant > 0))


def set_f(judged: JudgedRun, cutoff: int | None, *, rel: int, beta: float) -> np.ndarray:
    """F-measure of set precision P and set recall R: (beta + 1) P R / (beta P + R), as
    trec_eval weighs it (beta = 1: the harmonic mean); 0 when nothing relevant is retrieved.

    Example:
        >>> j = locate_in_lists({"q": {"a": 1, "b": 1, "c": 0}}, {"q": ["x", "a"]})
        >>> set_f(j, None, rel=1, beta=1.0).tolist()
        [0.5]
    """
    retrieved, found, relevant = _counts(judged, rel)
    some = found > 0
    precision = _ratio(found, retrieved, some)
    recall = _ratio(found, relevant, some)
    return _ratio((beta + 1.0) * precision * recall, beta * precision + recall, some)


def nonrelevant_judged_retrieved(judged: JudgedRun, cutoff: int | None, *, rel: int) -> np.ndarray:
    """How many retrieved docs are judged below ``rel`` (grade 0 up; a negative grade is
    trec_eval's "in the pool but not judged"); summed over a run.

    Example:
        >>> j = locate_in_lists({"q": {"a": 1, "b": 0, "c": -1}}, {"q": ["a", "b", "c", "x"]})
        >>> nonrelevant_judged_retrieved(j, None, rel=1).tolist()
        [1.0]
    """
    below = (judged.hit_grades >= 0) & (judged.hit_grades < rel)
    counts = np.bincount(judged.hit_rows[below], minlength=judged.n_queries)
    return counts.astype(np.float64)


def relative_precision(judged: JudgedRun, cutoff: int | None, *, rel: int) -> np.ndarray:
    """Relevant docs in the top k / min(k, R): precision against the best possible at that
    depth (0 when R = 0).

    Example:
        >>> j = locate_in_lists({"q": {"a": 1, "b": 1, "c": 0}}, {"q": ["x", "a", "c", "b"]})
        >>> relative_precision(j, 2, rel=1).tolist()
        [0.5]
    """
    assert cutoff is not None
    relevant = judged.n_relevant(rel).astype(np.float64)
    found = judged.hits(cutoff, rel).astype(np.float64)
    return _ratio(found, np.minimum(float(cutoff), relevant), relevant > 0)


def utility(
    judged: JudgedRun,
    cutoff: int | None,
    *,
    rel: int,
    rel_ret: float,
    nonrel_ret: float,
    rel_missed: float,
    nonrel_missed: float,
    n_docs: int,
) -> np.ndarray:
    """Linear utility of the retrieved set: each relevant doc retrieved is worth ``rel_ret``,
    each other doc retrieved ``nonrel_ret``, each relevant doc missed ``rel_missed`` and each
    other doc of the collection (``n_docs`` docs) left out ``nonrel_missed``.

    Example:
        >>> j = locate_in_lists({"q": {"a": 1, "b": 1, "c": 0}}, {"q": ["x", "a", "c"]})
        >>> w = dict(rel_ret=1.0, nonrel_ret=-1.0, rel_missed=0.0, nonrel_missed=0.0)
        >>> utility(j, None, rel=1, n_docs=0, **w).tolist()  # 1 - 2
        [-1.0]
    """
    retrieved = judged.lengths.astype(np.int64)
    found = judged.hits(None, rel).astype(np.int64)
    relevant = judged.n_relevant(rel).astype(np.int64)
    with np.errstate(over="ignore"):  # trec_eval's long arithmetic wraps past 2^63 as well
        left_out = np.int64(n_docs) + found - retrieved - relevant
    value: np.ndarray = (
        rel_ret * found
        + nonrel_ret * (retrieved - found)
        + rel_missed * (relevant - found)
        + nonrel_missed * left_out
    )
    return value


def r_precision_multiple(
    judged: JudgedRun, cutoff: int | None, *, rel: int, mult: float
) -> np.ndarray:
    """Precision at rank ``mult`` x R (the rank is ``mult * R + 0.9`` truncated, as
    trec_eval counts it); 0 when that rank is 0. ``mult=1``: R-precision.

    Example:
        >>> j = locate_in_lists({"q": {"a": 1, "b": 1, "c": 0}}, {"q": ["x", "a", "c", "b"]})
        >>> r_precision_multiple(j, None, rel=1, mult=2.0).tolist()  # top 4 hold a and b
        [0.5]
    """
    relevant = judged.n_relevant(rel).astype(np.float64)
    ranks = (mult * relevant + 0.9).astype(np.int64)
    rows, hit_ranks = judged.relevant_at(rel)
    within = np.bincount(rows[hit_ranks < ranks[rows]], minlength=judged.n_queries)
    return _ratio(within.astype(np.float64), ranks.astype(np.float64), ranks > 0)


def eleven_point_average(
    judged: JudgedRun, cutoff: int | None, *, rel: int, levels: str, rounding: str = "nearest"
) -> np.ndarray:
    """Interpolated precision averaged over recall levels (default 0, 0.1, ..., 1): at each
    level l, the best precision at any rank holding round(l x R) relevant docs or more; 0
    for a level the ranking never reaches. ``rounding="trec9"`` takes floor(l x R + 0.9)
    relevant docs instead, as trec_eval up to 9 and pytrec_eval do.

    Example:
        >>> j = locate_in_lists({"q": {"a": 1, "b": 1}}, {"q": ["a", "x", "b"]})
        >>> eleven_point_average(j, None, rel=1, levels="0;0.5;1").round(6).tolist()
        [0.888889]
    """
    targets = _levels(levels)
    relevant = judged.n_relevant(rel)
    rows, ranks = judged.relevant_at(rel)
    starts = np.searchsorted(rows, np.arange(judged.n_queries + 1))
    values = np.zeros(judged.n_queries)
    for row in range(judged.n_queries):
        found = ranks[starts[row] : starts[row + 1]]
        values[row] = _interpolated_sum(
            found, int(judged.lengths[row]), int(relevant[row]), targets, rounding
        )
    return values / len(targets)


def _levels(text: str) -> list[float]:
    from ragmetrics.errors import InvalidParameterError

    try:
        levels = [float(part) for part in text.split(";")]
    except ValueError:
        levels = []
    if not levels:
        raise InvalidParameterError(
            f"levels={text!r}: give recall levels separated by ';', e.g. '0;0.5;1'."
        )
    return levels


def _interpolated_sum(
    found: np.ndarray, retrieved: int, relevant: int, levels: list[float], rounding: str = "nearest"
) -> float:
    """The sum over ``levels`` (walked from the last to the first, as trec_eval does) of the
    interpolated precision at the rank holding ``round(level x R)`` relevant docs.

    ``found``: the 0-based ranks of the relevant docs retrieved, ascending."""
    counts = [
        math.floor(level * relevant + 0.9)
        if rounding == "trec9"
        else round_half_away(level * relevant)
        for level in levels
    ]
    position = len(counts) - 1
    total = 0.0
    n_found = len(found)
    while position >= 0 and counts[position] > n_found:
        position -= 1  # never reached: adds nothing
    best = n_found / retrieved if retrieved else 0.0
    # walk the relevant docs from the last: the precision at each, kept as the best so far
    # (with the non-relevant ranks between, whose precision is lower, ignored)
    for index in range(n_found - 1, -1, -1):
        rank = int(found[index]) + 1
        best = max(best, (index + 1) / rank)
        while position >= 0 and counts[position] == index + 1:
            total += best
            position -= 1
    while position >= 0:
        total += best
        position -= 1
    return total


def round_half_away(x: float) -> int:
    """C's ``lround``: to the nearest integer, halves away from zero (``x - trunc(x)`` is
    exact, so no sum rounds a value just under a half up)."""
    whole = math.trunc(x)
    if abs(x - whole) >= 0.5:
        whole += 1 if x > 0 else -1
    return whole


def unjudged_rate(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """Docs in the top k with no judgment (or a negative one, trec_eval's "not judged") / k;
    ranks past the list's end count as judged.

    Example:
        >>> j = locate_in_lists({"q": {"a": 1, "b": -1}}, {"q": ["a", "b", "x"]})
        >>> unjudged_rate(j, 4).tolist()
        [0.5]
    """
    assert cutoff is not None
    depth = np.minimum(judged.lengths, cutoff)
    judged_within = np.bincount(
        judged.hit_rows[(judged.hit_ranks < cutoff) & (judged.hit_grades >= 0)],
        minlength=judged.n_queries,
    )
    rate: np.ndarray = (depth - judged_within) / float(cutoff)
    return rate


# --- measures that walk each ranking as trec_eval does ----------------------------------

NONPOOL = -1  # a retrieved doc with no judgment
UNJUDGED = -2  # a retrieved doc judged with a negative grade: in the pool, not judged

PERSISTENCE = Param("p", float, 0.9, "the user's persistence: the chance to read on", low=0.0)
INFAP_EPSILON = 0.00001


def _rankings(judged: JudgedRun) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per query: the grade at each retrieved rank (``NONPOOL`` when unjudged, ``UNJUDGED``
    when judged negative) and how many docs each grade 0, 1, ... has among the judgments."""

    def make() -> list[tuple[np.ndarray, np.ndarray]]:
        starts = np.searchsorted(judged.hit_rows, np.arange(judged.n_queries + 1))
        ends = np.cumsum(judged.judged_counts)
        out = []
        for row in range(judged.n_queries):
            grades = np.full(int(judged.lengths[row]), NONPOOL, dtype=np.int64)
            found = slice(starts[row], starts[row + 1])
            located = judged.hit_grades[found].astype(np.int64)
            grades[judged.hit_ranks[found]] = np.where(located < 0, UNJUDGED, located)
            own = judged.judged_grades[ends[row] - judged.judged_counts[row] : ends[row]]
            own = own[own >= 0].astype(np.int64)
            levels = np.bincount(own) if len(own) else np.zeros(0, dtype=np.int64)
            out.append((grades, levels))
        return out

    return judged.cached("trec_rankings", make)


def _gain_pairs(text: str) -> list[tuple[str, float]]:
    from ragmetrics.errors import InvalidParameterError

    pairs = []
    for part in filter(None, text.split(";")):
        grade, colon, gain = part.partition(":")
        try:
            pairs.append((grade.strip(), float(gain)))
        except ValueError:
            colon = ""
        if not colon:
            raise InvalidParameterError(
                f"gains={text!r}: write 'grade:gain' pairs separated by ';', e.g. '1:3;2:9'."
            )
    return pairs


def _gain_table(levels: np.ndarray, pairs: list[tuple[str, float]]) -> list[list[float]]:
    """``[grade, gain, docs judged at that grade]`` rows, ascending by gain as trec_eval
    orders them (its comparison keeps the integer part of the difference, so gains closer
    than 1 keep their order: given pairs first, then the other grades from 0 up)."""
    table: list[list[float]] = [[int(g), gain, 0] for g, gain in pairs if ascii_int(g) is not None]
    for grade, count in enumerate(levels.tolist()):
        for row in table:
            if row[0] == grade:
                row[2] = count
                break
        else:
            table.append([grade, float(grade), count])
    from functools import cmp_to_key

    def by_gain(a: list[float], b: list[float]) -> int:
        return int(a[1] - b[1])

    return sorted(table, key=cmp_to_key(by_gain))


def _gain_of(table: list[list[float]]) -> dict[int, float]:
    gains: dict[int, float] = {}
    for grade, gain, _ in table:
        gains.setdefault(int(grade), gain)
    return gains


_LOG2: list[float] = []


def _log2_of_ranks(n: int) -> np.ndarray:
    """``log2(i + 2)`` for ranks ``i = 0 .. n-1``, from C's ``log2`` (as trec_eval divides by
    it), kept for the process."""
    while len(_LOG2) < n:
        _LOG2.append(math.log2(len(_LOG2) + 2))
    return np.asarray(_LOG2[:n], dtype=np.float64)


def _gains_at(grades: np.ndarray, table: list[list[float]]) -> np.ndarray:
    """Each rank's gain: its grade's gain in ``table``, 0 for an unjudged doc."""
    gain_of = _gain_of(table)
    top = max([int(g) for g in gain_of] + [0, int(grades.max()) if len(grades) else 0])
    lookup = np.zeros(top + 3)  # grades -2 .. top
    for grade, gain in gain_of.items():
        if grade >= -2:
            lookup[grade + 2] = gain
    return lookup[grades + 2] if len(grades) else np.zeros(0)


def _ideal_sequence(table: list[list[float]]) -> np.ndarray:
    """The ideal ranking's positive gains, rank by rank: the highest gain as often as docs
    are judged at it, then the next (trec_eval's walk from the top of its table)."""
    if not table or table[-1][1] <= 0.0:
        return np.zeros(0)
    gains: list[float] = []
    for _, gain, count in reversed(table):
        if not count:
            continue
        if gain <= 0.0:
            break
        gains.extend([gain] * int(count))
    return np.asarray(gains, dtype=np.float64)


def _gain_walks(judged: JudgedRun, gains: str) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Per query: its row, each rank's gain, and the ideal ranking's positive gains."""
    pairs = _gain_pairs(gains)
    for row, (grades, levels) in enumerate(_rankings(judged)):
        table = _gain_table(levels, pairs)
        yield row, _gains_at(grades, table), _ideal_sequence(table)


def _dcg_sums(gained: np.ndarray, ideal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The DCG of the ranking and of the ideal one, cumulated rank by rank in order."""
    results = np.cumsum(np.where(gained != 0, gained / _log2_of_ranks(len(gained)), 0.0))
    return results, np.cumsum(ideal / _log2_of_ranks(len(ideal)))


def _in_order(terms: np.ndarray) -> float:
    """The terms added one by one, first to last (``cumsum`` adds in order)."""
    return float(np.cumsum(terms)[-1]) if len(terms) else 0.0


def _dcg_totals(judged: JudgedRun, gains: str) -> Iterator[tuple[int, float, float]]:
    """Per query: its row, the DCG of its ranking and of the ideal one, added rank by rank
    as trec_eval adds them (the ideal only while its gain is positive)."""
    for row, gained, ideal in _gain_walks(judged, gains):
        hit = gained != 0
        results = _in_order(gained[hit] / _log2_of_ranks(len(gained))[hit])
        yield row, results, _in_order(ideal / _log2_of_ranks(len(ideal)))


def ndcg_gains(judged: JudgedRun, cutoff: int | None, *, gains: str) -> np.ndarray:
    """nDCG over the whole ranking with a gain per grade (trec_eval's ``ndcg.1=3,2=9``):
    each retrieved doc adds its gain / log2(rank + 1), over the same sum for the judged docs
    in the order of their gains; 0 when no judged doc has a positive gain.

    Example:
        >>> j = locate_in_lists({"q": {"a": 1, "b": 2}}, {"q": ["a", "b"]})
        >>> ndcg_gains(j, None, gains="1:3;2:1").round(6).tolist()  # a is worth 3 here
        [1.0]
    """
    values = np.zeros(judged.n_queries)
    for row, results, best in _dcg_totals(judged, gains):
        if best > 0.0:
            values[row] = results / best
    return values


def dcg(judged: JudgedRun, cutoff: int | None, *, gains: str) -> np.ndarray:
    """DCG over the whole ranking, each doc's gain (the grade, or ``gains``) / log2(rank + 1).

    Example:
        >>> j = locate_in_lists({"q": {"a": 1, "b": 2}}, {"q": ["x", "b"]})
        >>> dcg(j, None, gains="").tolist()  # 2 / log2(3)
        [1.261859507142915]
    """
    return np.array([results for _, results, _ in _dcg_totals(judged, gains)], dtype=np.float64)


def ideal_dcg(judged: JudgedRun, cutoff: int | None, *, gains: str) -> np.ndarray:
    """The DCG of the best ordering of the judged docs (trec_eval's ``ideal_dcg``).

    Example:
        >>> j = locate_in_lists({"q": {"a": 1, "b": 2}}, {"q": ["x"]})
        >>> ideal_dcg(j, None, gains="").tolist()  # 2 / 1 + 1 / log2(3)
        [2.6309297535714578]
    """
    return np.array([best for _, _, best in _dcg_totals(judged, gains)], dtype=np.float64)


def ndcg_rel(judged: JudgedRun, cutoff: int | None, *, gains: str) -> np.ndarray:
    """nDCG averaged over the relevant docs: the nDCG at each retrieved doc with a positive
    gain, plus the final nDCG once for each ideal doc not retrieved, over the number of
    ideal docs (trec_eval's ``ndcg_rel``).

    Example:
        >>> j = locate_in_lists({"q": {"a": 1, "b": 1}}, {"q": ["a", "x"]})
        >>> ndcg_rel(j, None, gains="").round(4).tolist()
        [0.8066]
    """
    values = np.zeros(judged.n_queries)
    for row, gained, ideal in _gain_walks(judged, gains):
        n, m = len(gained), len(ideal)
        results, best = _dcg_sums(gained, ideal)
        found = np.flatnonzero(gained > 0)
        with np.errstate(all="ignore"):
            at = best[np.minimum(found, m - 1)] if m else np.zeros(len(found))
            total = _in_order(results[found] / at)
            last_results = float(results[-1]) if n else 0.0
            last_best = float(best[-1]) if m else 0.0
            total += float(np.float64(m - len(found)) * last_results / np.float64(last_best))
        if total > 0.0:
            values[row] = total / m
    return values


def r_ndcg(judged: JudgedRun, cutoff: int | None, *, rel: int, gains: str) -> np.ndarray:
    """nDCG averaged over the ranks where the ideal ranking's gain changes (and the end of
    the ranking); 0 when nothing is relevant (trec_eval's ``Rndcg``).

    Example:
        >>> j = locate_in_lists({"q": {"a": 2, "b": 1}}, {"q": ["b", "a"]})
        >>> r_ndcg(j, None, rel=1, gains="").round(4).tolist()
        [0.6799]
    """
    relevant = judged.n_relevant(rel)
    values = np.zeros(judged.n_queries)
    for row, gained, ideal in _gain_walks(judged, gains):
        if relevant[row] == 0:
            continue
        n, m = len(gained), len(ideal)
        results, best = _dcg_sums(gained, ideal)
        # the ideal gain changes after rank i - 1 for each i in ``changes`` (and past its
        # last positive gain): nDCG there, with the ranking's DCG as far as it goes
        changes = [i for i in range(1, m) if ideal[i] != ideal[i - 1]] + ([m] if m else [])
        at = np.asarray(changes, dtype=np.int64)
        reached = np.minimum(at - 1, n - 1)
        so_far = np.where(reached >= 0, results[np.maximum(reached, 0)] if n else 0.0, 0.0)
        terms: list[float] = (so_far / best[at - 1]).tolist() if len(at) else []
        if m and m + 1 < n:  # the ranking goes on past the ideal: its end counts once more
            terms.append(float(results[-1]) / float(best[-1]))
        with np.errstate(invalid="ignore"):  # no change at all: 0 / 0, as trec_eval
            values[row] = np.float64(_in_order(np.asarray(terms))) / np.float64(len(terms))
    return values


def bin_g(judged: JudgedRun, cutoff: int | None, *, rel: int) -> np.ndarray:
    """Binary G: each relevant doc retrieved adds 1 / log2(2 + its non-relevant docs above
    it), over R (trec_eval's ``binG``).

    Example:
        >>> j = locate_in_lists({"q": {"a": 1, "b": 1}}, {"q": ["x", "a"]})
        >>> bin_g(j, None, rel=1).round(4).tolist()
        [0.3155]
    """
    relevant = judged.n_relevant(rel)
    values = np.zeros(judged.n_queries)
    for row, (grades, _) in enumerate(_rankings(judged)):
        ranks = np.flatnonzero(grades >= rel)
        if not len(ranks):
            continue
        above = 3 + ranks - np.arange(1, len(ranks) + 1)  # 2 + the non-relevant docs above
        logs = np.array([math.log2(float(x)) for x in above.tolist()])
        values[row] = _in_order(1.0 / logs) / float(relevant[row])
    return values


def g_measure(judged: JudgedRun, cutoff: int | None, *, gains: str) -> np.ndarray:
    """trec_eval's ``G``: gains discounted by log2 of 2 + the cost so far (the ideal's gains,
    at least 1 a doc) minus the gain so far, over the ideal's total gain.

    Example:
        >>> j = locate_in_lists({"q": {"a": 1, "b": 1}}, {"q": ["a", "b"]})
        >>> g_measure(j, None, gains="").tolist()
        [1.0]
    """
    values = np.zeros(judged.n_queries)
    for row, gained, ideal in _gain_walks(judged, gains):
        n = len(gained)
        padded = np.zeros(n)
        padded[: min(n, len(ideal))] = ideal[:n]
        cost = np.cumsum(np.maximum(padded, 1.0))  # the ideal's gain, at least 1 a rank
        so_far = np.cumsum(gained)
        hit = np.flatnonzero(gained != 0)
        spread = (2.0 + cost[hit]) - so_far[hit]
        logs = np.array([math.log2(x) for x in spread.tolist()])
        g = _in_order(gained[hit] / logs) if len(hit) else 0.0
        best = _in_order(ideal)
        if best > 0.0:
            values[row] = g / best
    return values


def rbp(judged: JudgedRun, cutoff: int | None, *, p: float, gains: str) -> np.ndarray:
    """Rank-biased precision: (1 - p) x the sum of each doc's gain x p^(rank - 1), gains
    scaled into [0, 1] when some lie outside (Moffat and Zobel 2008; trec_eval's ``rbp``).

    Example:
        >>> j = locate_in_lists({"q": {"a": 1}}, {"q": ["a", "x"]})
        >>> rbp(j, None, p=0.5, gains="").tolist()
        [0.5]
    """
    pairs = _gain_pairs(gains)
    values = np.zeros(judged.n_queries)
    for row, (grades, levels) in enumerate(_rankings(judged)):
        table = _gain_table(levels, pairs)
        low = min((r[1] for r in table), default=0.0)
        high = max((r[1] for r in table), default=0.0)
        if low < 0 or high > 1:
            for entry in table:
                entry[1] = (entry[1] - low) / (high - low)
        gained = _gains_at(grades, table)
        weights = _persistence_weights(p, len(gained))
        hit = gained != 0
        values[row] = (1.0 - p) * _in_order(gained[hit] * weights[hit])
    return values


def _persistence_weights(p: float, n: int) -> np.ndarray:
    """``1, p, p*p, ...`` for ``n`` ranks, each the previous times ``p`` (as trec_eval
    multiplies them)."""
    weights = np.ones(n)
    if n > 1:
        weights[1:] = np.cumprod(np.full(n - 1, p))
    return weights


def rbp_residual(judged: JudgedRun, cutoff: int | None, *, p: float) -> np.ndarray:
    """How much RBP could still rise if every unjudged doc retrieved were fully relevant,
    plus the weight of the ranks past the end; 0 when every doc is judged (``rbp_resid``).

    Example:
        >>> j = locate_in_lists({"q": {"a": 1}}, {"q": ["a", "x"]})
        >>> rbp_residual(j, None, p=0.5).tolist()  # 0.25 left past rank 2, 0.5 x 0.5 at x
        [0.5]
    """
    values = np.zeros(judged.n_queries)
    for row, (grades, _) in enumerate(_rankings(judged)):
        n = len(grades)
        weights = _persistence_weights(p, n + 1)  # the last: p^n, past the ranking's end
        unjudged = grades < 0
        if unjudged.any():
            values[row] = weights[n] + (1 - p) * _in_order(weights[:n][unjudged])
    return values


def inferred_ap(judged: JudgedRun, cutoff: int | None, *, rel: int) -> np.ndarray:
    """Inferred average precision (Yilmaz and Aslam 2006): average precision estimated from
    a sampled pool, where a negative grade marks a pooled doc left unjudged and a doc
    outside the pool is skipped (trec_eval's ``infAP``).

    Example:
        >>> grades = {"q": {"a": 1, "b": 0, "c": -1, "d": 1}}
        >>> j = locate_in_lists(grades, {"q": ["b", "c", "a", "d"]})
        >>> inferred_ap(j, None, rel=1).round(4).tolist()
        [0.4792]
    """
    relevant = judged.n_relevant(rel)
    values = np.zeros(judged.n_queries)
    for row, (grades, _) in enumerate(_rankings(judged)):
        unjudged = np.cumsum(grades == UNJUDGED)
        below = np.cumsum((grades >= 0) & (grades < rel))
        hits = np.flatnonzero(grades >= rel)
        total = 0.0
        if len(hits):
            found = np.arange(len(hits))  # relevant docs above each (rel_so_far - 1)
            at = hits.astype(np.float64)
            judged_above = (found + below[hits] + unjudged[hits]).astype(np.float64)
            with np.errstate(all="ignore"):
                terms = 1.0 / (at + 1.0) + (at / (at + 1.0)) * (judged_above / at) * (
                    (found + INFAP_EPSILON) / ((found + below[hits]) + 2 * INFAP_EPSILON)
                )
            terms[hits == 0] = 1.0
            total = _in_order(terms)
        if relevant[row]:
            total /= float(relevant[row])
        values[row] = total
    return values


def yaap(judged: JudgedRun, cutoff: int | None, *, rel: int) -> np.ndarray:
    """trec_eval's ``yaap``: log((1 + S) / (1 + R - S)), S the sum of the precisions at the
    relevant docs retrieved.

    Example:
        >>> yaap(locate_in_lists({"q": {"a": 1}}, {"q": ["a"]}), None, rel=1).tolist()
        [0.6931471805599453]
    """
    relevant = judged.n_relevant(rel)
    values = np.zeros(judged.n_queries)
    for row, (grades, _) in enumerate(_rankings(judged)):
        hits = np.flatnonzero(grades >= rel)
        total = _in_order(np.arange(1, len(hits) + 1) / (hits + 1.0))
        values[row] = _c_log((1.0 + total) / (1.0 + float(relevant[row]) - total))
    return values


def _c_log(x: float) -> float:
    """C's ``log``: -inf at 0, NaN (printed -nan) below; ``math.log`` calls it otherwise
    (numpy's may differ in the last bit)."""
    if x > 0.0:
        return math.log(x)
    return -math.inf if x == 0.0 else -math.nan


def judged_share(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
    """ir_measures' ``Judged@k``: the docs of the top k that have a judgment (any grade,
    negative too), over the docs the top k holds; NA for an empty ranking.

    Example:
        >>> j = locate_in_lists({"q": {"a": 1, "b": -1}}, {"q": ["a", "x", "b"]})
        >>> judged_share(j, 10).round(4).tolist()  # 2 of the 3 docs retrieved
        [0.6667]
    """
    assert cutoff is not None
    within = np.minimum(judged.lengths, cutoff).astype(np.float64)
    found = np.bincount(judged.hit_rows[judged.hit_ranks < cutoff], minlength=judged.n_queries)
    out = np.full(judged.n_queries, np.nan)
    np.divide(found, within, out=out, where=within > 0)
    return out


def preference_kernel(name: str) -> Kernel:
    """The kernel of trec_eval's preference measure ``name`` (``prefs_simp``, ...) on graded
    judgments: each query's grades are one group of preferences (a higher grade is preferred
    to a lower one), as ``trec_eval -R qrels_prefs`` reads a qrels file whose second column
    is one value. Tied scores are ordered as trec_eval's preference code orders them: by doc
    id up (every other measure puts doc id down).

    Example:
        >>> j = locate_in_lists({"q": {"a": 2, "b": 1, "c": 0}}, {"q": ["b", "a", "c"]})
        >>> preference_kernel("prefs_simp")(j, None).tolist()  # a > b missed; a > c, b > c kept
        [0.6666666666666666]
    """

    def kernel(judged: JudgedRun, cutoff: int | None) -> np.ndarray:
        # here: the preference counts load only when a preference measure is computed
        from ragmetrics.metrics._preferences import Entry, count_query
        from ragmetrics.metrics._preferences import values as preference_value

        values = np.zeros(judged.n_queries)
        starts = np.searchsorted(judged.hit_rows, np.arange(judged.n_queries + 1))
        ends = np.cumsum(judged.judged_counts)
        grades = judged.hit_grades[_ties_reversed(judged.hit_tied)]
        for row in range(judged.n_queries):
            found = grades[starts[row] : starts[row + 1]].tolist()  # rank order
            left = Counter(judged.judged_grades[ends[row] - judged.judged_counts[row] : ends[row]])
            left.subtract(found)  # the judged docs not retrieved
            entries: list[Entry] = [("0", "0", f"r{k}", g) for k, g in enumerate(found)]
            entries += [("0", "0", f"u{k}", g) for k, g in enumerate(sorted(left.elements()))]
            if entries:
                query = count_query(entries, [f"r{k}" for k in range(len(found))])
                values[row] = preference_value(query, name)
        return values

    return kernel


def _ties_reversed(tied: np.ndarray | None) -> np.ndarray | slice:
    """The order of the hits with each run of tied hits reversed (doc id up instead of
    down); all hits as they are when nothing ties."""
    if tied is None or not tied.any():
        return slice(None)
    first = np.flatnonzero(~tied)  # each run's first hit (hit 0 never ties)
    last = np.append(first[1:], len(tied)) - 1
    run = np.cumsum(~tied) - 1
    order: np.ndarray = first[run] + last[run] - np.arange(len(tied))
    return order


def _trec(name: str, kernel, cutoff: Cutoff, summary: str, **traits) -> MetricSpec:  # type: ignore[no-untyped-def]
    traits.setdefault("params", (REL,))
    traits.setdefault("perfect_is_one", False)
    traits.setdefault("pure", True)
    return MetricSpec(name, kernel, cutoff, "classic", summary, **traits)


register(
    _trec("set_precision", set_precision, Cutoff.NONE, "relevant retrieved / retrieved"),
    "set_p",
    "setp",
)
register(_trec("set_recall", set_recall, Cutoff.NONE, "relevant retrieved / R"), "setr")
register(
    _trec(
        "set_relative_precision",
        set_relative_precision,
        Cutoff.NONE,
        "relevant retrieved / min(retrieved, R)",
    ),
    "set_relative_p",
)
register(_trec("set_ap", set_ap, Cutoff.NONE, "set precision x set recall"), "set_map", "setap")
register(
    _trec("set_f", set_f, Cutoff.NONE, "F of set precision and set recall", params=(REL, BETA)),
    "setf",
)
register(
    _trec(
        "num_nonrel_judged_ret",
        nonrelevant_judged_retrieved,
        Cutoff.NONE,
        "docs judged non-relevant retrieved, summed over queries",
        aggregate=Aggregate.SUM,
        unit_range=False,
        counts_judged=True,
    ),
    "numnonreljudgedret",
)
register(
    _trec(
        "relative_precision",
        relative_precision,
        Cutoff.REQUIRED,
        "relevant docs in the top k / min(k, R)",
    ),
    "relative_p",
)
register(
    _trec(
        "utility",
        utility,
        Cutoff.NONE,
        "linear utility of the retrieved set",
        params=(REL, *UTILITY_WEIGHTS),
        unit_range=False,
        can_be_negative=True,
    )
)
register(
    _trec(
        "r_precision_mult",
        r_precision_multiple,
        Cutoff.NONE,
        "precision at rank mult x R",
        params=(REL, MULTIPLE),
    ),
    "rprec_mult",
)
register(
    _trec(
        "eleven_point_average",
        eleven_point_average,
        Cutoff.NONE,
        "interpolated precision averaged over recall levels",
        params=(REL, LEVELS, ROUNDING),
    ),
    "11pt_avg",
    "11pt",
)
register(
    _trec(
        "unjudged_rate",
        unjudged_rate,
        Cutoff.REQUIRED,
        "docs in the top k without a judgment / k",
        params=(),
        higher_is_better=False,
        counts_judged=True,
    ),
    "unj",
)

register(
    _trec(
        "judged",
        judged_share,
        Cutoff.REQUIRED,
        "docs of the top k with a judgment / docs in the top k (ir_measures' Judged)",
        params=(),
        can_be_na=True,
        counts_judged=True,
    )
)
register(
    _trec(
        "gm_bpref",
        bpref,
        Cutoff.NONE,
        "bpref, geometric mean over queries",
        aggregate=Aggregate.GEOMETRIC,
        judged_only=True,
        perfect_is_one=True,
    )
)
for _name, _kernel, _what, _params, _aliases in (
    (
        "ndcg_gains",
        ndcg_gains,
        "nDCG with a gain per grade (trec_eval's ndcg.1=3,...)",
        (GAINS,),
        (),
    ),
    ("dcg", dcg, "discounted cumulative gain", (GAINS,), ()),
    ("ideal_dcg", ideal_dcg, "DCG of the ideal ranking", (GAINS,), ()),
    ("ndcg_rel", ndcg_rel, "nDCG averaged over the relevant docs", (GAINS,), ()),
    ("r_ndcg", r_ndcg, "nDCG averaged where the ideal gain changes", (REL, GAINS), ("rndcg",)),
    ("bin_g", bin_g, "binary G", (REL,), ("bing",)),
    ("g", g_measure, "trec_eval's G", (GAINS,), ()),
    ("rbp", rbp, "rank-biased precision", (PERSISTENCE, GAINS), ()),
    ("rbp_resid", rbp_residual, "what RBP could still gain from unjudged docs", (PERSISTENCE,), ()),
    ("infap", inferred_ap, "inferred average precision", (REL,), ("inf_ap",)),
    ("yaap", yaap, "trec_eval's yaap", (REL,), ()),
):
    _traits: dict[str, object] = {"params": _params}
    if _name in ("dcg", "ideal_dcg", "yaap"):
        _traits["unit_range"] = False
    if _name == "yaap":
        _traits["can_be_negative"] = True
    if _name in ("rbp_resid",):
        _traits["counts_judged"] = True
        _traits["unit_range"] = False  # p^n + (1 - p) x sum may round past 1, as in trec_eval
        _traits["higher_is_better"] = False
    if _name == "r_ndcg":
        _traits["can_be_na"] = True  # the ideal gain never changes: 0 / 0, as trec_eval
    if _name in ("infap",):
        _traits["counts_judged"] = True
    register(_trec(_name, _kernel, Cutoff.NONE, _what, **_traits), *_aliases)

for _name in PREFERENCE_MEASURES:
    _counted = _name in PREFERENCE_COUNTS
    register(
        _trec(
            _name.lower(),
            preference_kernel(_name),
            Cutoff.NONE,
            "preferences between graded docs kept by the ranking (trec_eval's " + _name + ")",
            params=(),
            counts_judged=True,
            **({"aggregate": Aggregate.SUM, "unit_range": False} if _counted else {}),
        )
    )
