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
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ragmetrics._util.arrays import row_sums, spans
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
# a worth beyond 10^15 a doc would let a utility overflow (10^18 docs at most)
_WORTH = 1e15
UTILITY_WEIGHTS = (
    Param("rel_ret", float, 1.0, "worth of each relevant doc retrieved", -_WORTH, _WORTH),
    Param("nonrel_ret", float, -1.0, "worth of each non-relevant doc retrieved", -_WORTH, _WORTH),
    Param("rel_missed", float, 0.0, "worth of each relevant doc not retrieved", -_WORTH, _WORTH),
    Param(
        "nonrel_missed", float, 0.0, "worth of each non-relevant doc not retrieved", -_WORTH, _WORTH
    ),
    Param(
        "n_docs",
        int,
        0,
        "docs in the collection (trec_eval -N; 0 as trec_eval without it), for nonrel_missed",
        low=0,
        high=1e18,
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
    with np.errstate(over="ignore"):  # a rank past every ranking: inf, a precision of 0
        ranks = np.floor(mult * relevant + 0.9)  # C's cast to long, for what it can hold
    rows, hit_ranks = judged.relevant_at(rel)
    within = np.bincount(rows[hit_ranks < ranks[rows]], minlength=judged.n_queries)
    return _ratio(within.astype(np.float64), ranks, ranks > 0)


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
    relevant = judged.n_relevant(rel).astype(np.float64)

    def value(walk: _Walk) -> np.ndarray:
        hit = walk.grades >= rel
        found = np.count_nonzero(hit, axis=1)
        with np.errstate(all="ignore"):
            end = np.where(walk.lengths > 0, found / walk.lengths, 0.0)
        # the precision at each relevant doc, and the best at it or below (the walk from
        # the last relevant doc up keeps the best so far, from the end's precision on)
        rows, ranks = np.nonzero(hit)
        index = np.arange(len(rows)) - (np.cumsum(found) - found)[rows]
        best = np.zeros((len(found), int(found.max()) if len(found) else 0))
        best[rows, index] = (index + 1) / (ranks + 1)
        best = np.maximum(np.maximum.accumulate(best[:, ::-1], axis=1)[:, ::-1], end[:, None])
        final = best[:, 0] if best.shape[1] else end
        return _interpolated_sums(best, final, found, relevant[walk.rows], targets, rounding)

    return _per_walk(judged, value) / len(targets)


def _interpolated_sums(
    best: np.ndarray,
    final: np.ndarray,
    found: np.ndarray,
    relevant: np.ndarray,
    levels: list[float],
    rounding: str,
) -> np.ndarray:
    """Per query, the sum over ``levels`` of the interpolated precision at the rank holding
    ``round(level x R)`` relevant docs, as trec_eval's walk adds them: levels from the last
    to the first, the relevant docs from the last up (``best[:, i]``: the best precision at
    the i-th relevant doc or below; ``final``: once the walk is done).

    The walk adds a level's precision when it reaches the level's count; a level it has
    passed (or of count 0) waits, with every level after it, for the walk's end. Levels
    past the relevant docs found add nothing while no level was reached before them."""
    total = np.zeros(len(found))
    skipping = np.ones(len(found), dtype=bool)  # no level reached yet
    waiting = np.zeros(len(found), dtype=bool)
    at = found - 1  # the relevant doc the walk is at
    for level in reversed(levels):
        with np.errstate(over="ignore"):  # a count past every ranking counts alike
            scaled = np.clip(level * relevant, -_FAR, _FAR)
        if rounding == "trec9":
            counts = np.floor(scaled + 0.9).astype(np.int64)
        else:
            counts = rounded_half_away(scaled)
        skipping &= counts > found
        reached = ~skipping & ~waiting & (counts >= 1) & (counts - 1 <= at)
        waiting |= ~skipping & ~reached
        if reached.any():
            which = np.flatnonzero(reached)
            total[which] += best[which, counts[which] - 1]
            at[which] = counts[which] - 1
        total[waiting] += final[waiting]
    return total


_FAR = 2.0**62  # more relevant docs than any ranking holds, and an exact int64


def _levels(text: str) -> list[float]:
    from ragmetrics.errors import InvalidParameterError

    try:
        levels = [float(part) for part in text.split(";")]
    except ValueError:
        levels = []
    if not levels or not all(map(math.isfinite, levels)):
        raise InvalidParameterError(
            f"levels={text!r}: give recall levels (finite numbers) separated by ';', "
            "e.g. '0;0.5;1'."
        )
    return levels


def round_half_away(x: float) -> int:
    """C's ``lround``: to the nearest integer, halves away from zero."""
    return int(rounded_half_away(np.array([x]))[0])


def rounded_half_away(x: np.ndarray) -> np.ndarray:
    """:func:`round_half_away` of each value (``x - trunc(x)`` is exact, so no sum rounds a
    value just under a half up), as int64."""
    whole = np.trunc(x)
    away = np.where(np.abs(x - whole) >= 0.5, np.sign(x), 0.0)
    rounded: np.ndarray = (whole + away).astype(np.int64)
    return rounded


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
#
# These kernels read each query's ranking rank by rank. They work on blocks of queries at
# once, each query one row of a matrix padded past its last rank (``_walks``); every sum
# trec_eval makes in rank order is a running sum along the row (``row_sums``), where a cell
# that adds nothing adds an exact 0, so each value is the one a query-by-query walk makes.

NONPOOL = -1  # a retrieved doc with no judgment
UNJUDGED = -2  # a retrieved doc judged with a negative grade: in the pool, not judged
PAST = -3  # a cell past the end of a ranking

PERSISTENCE = Param(
    "p", float, 0.9, "the user's persistence: the chance to read on", low=0.0, high=1.0
)
INFAP_EPSILON = 0.00001
# cells of one block's padded matrix (rows x widest): blocks of rankings of one length
# class (within a factor of two) are cut to stay within it (one ranking at least)
_BLOCK_CELLS = 1 << 20


class _Walk(NamedTuple):
    """Some queries' rankings as the rows of padded matrices.

    Attributes:
        rows: the queries' rows in the judged run.
        grades: the grade at each rank (``NONPOOL``, ``UNJUDGED``; ``PAST`` past the end).
        lengths: the docs each query retrieved.
        levels: how many docs each grade 0, 1, ... has among the query's judgments.
        n_levels: per query, the length ``np.bincount`` gives its grades (0: none).
    """

    rows: np.ndarray
    grades: np.ndarray
    lengths: np.ndarray
    levels: np.ndarray
    n_levels: np.ndarray


def _walks(judged: JudgedRun) -> list[_Walk]:
    """The judged run's queries in blocks (see ``_BLOCK_CELLS``), kept with it."""

    def make() -> list[_Walk]:
        counts = judged.judged_counts.astype(np.int64)
        # a block's matrices: its rankings, its ideal rankings, its docs counted by grade
        widths = np.maximum(np.maximum(judged.lengths.astype(np.int64), counts), _levels_of(judged))
        # a class per power of two of the width: a block pads its rows to at most twice
        classes = np.ceil(np.log2(np.maximum(widths, 1))).astype(np.int64)
        order = np.argsort(classes, kind="stable")
        bounds = np.flatnonzero(np.diff(classes[order])) + 1
        walks = []
        for members in np.split(order, bounds):
            widest = int(widths[members].max()) if len(members) else 0
            per_block = max(1, _BLOCK_CELLS // max(widest, 1))
            for start in range(0, len(members), per_block):
                walks.append(_walk(judged, np.sort(members[start : start + per_block])))
        return walks

    return judged.cached("trec_walks", make)


def _levels_of(judged: JudgedRun) -> np.ndarray:
    """Per query, its highest grade 0 or above plus one (0: none)."""
    counts = judged.judged_counts.astype(np.int64)
    grades = np.where(judged.judged_grades >= 0, np.trunc(judged.judged_grades), -1.0)
    top = np.full(len(counts), -1.0)
    filled = np.flatnonzero(counts > 0)
    if len(filled):
        offsets = np.cumsum(counts) - counts
        top[filled] = np.maximum.reduceat(grades, offsets[filled])
    return (top + 1).astype(np.int64)


def _walk(judged: JudgedRun, rows: np.ndarray) -> _Walk:
    """The queries ``rows`` (ascending) as one block."""
    lengths = judged.lengths[rows].astype(np.int64)
    width = int(lengths.max()) if len(rows) else 0
    columns = np.arange(width)
    grades = np.where(columns < lengths[:, None], NONPOOL, PAST)
    # the judged docs retrieved: their grades at their ranks (a negative grade: UNJUDGED)
    starts = np.searchsorted(judged.hit_rows, rows)
    ends = np.searchsorted(judged.hit_rows, rows, side="right")
    local, _, hits = spans(starts, ends - starts)
    located = judged.hit_grades[hits].astype(np.int64)
    grades[local, judged.hit_ranks[hits]] = np.where(located < 0, UNJUDGED, located)
    # each query's judged docs, counted by grade (the negative grades left out)
    counts = judged.judged_counts.astype(np.int64)
    offsets = np.cumsum(counts) - counts
    owner, _, where = spans(offsets[rows], counts[rows])
    own = judged.judged_grades[where]
    kept = own >= 0
    owner, own = owner[kept], own[kept].astype(np.int64)
    top = int(own.max()) + 1 if len(own) else 0
    levels = np.bincount(owner * top + own, minlength=len(rows) * top).reshape(len(rows), top)
    # the highest grade with a doc, plus one (the length np.bincount gives: 0 for none)
    n_levels = np.zeros(len(rows), dtype=np.int64)
    if top:
        n_levels = np.where(levels.any(axis=1), top - np.argmax(levels[:, ::-1] > 0, axis=1), 0)
    return _Walk(rows, grades, lengths, levels, n_levels)


def _gain_pairs(text: str) -> list[tuple[str, float]]:
    from ragmetrics.errors import InvalidParameterError

    pairs = []
    for part in filter(None, text.split(";")):
        grade, colon, gain = part.partition(":")
        try:
            pairs.append((grade.strip(), float(gain)))
        except ValueError:
            colon = ""
        if not colon or not abs(pairs[-1][1]) <= _MOST_GAIN:
            raise InvalidParameterError(
                f"gains={text!r}: write 'grade:gain' pairs separated by ';', e.g. '1:3;2:9' "
                f"(gains within +-{_MOST_GAIN:g})."
            )
        given = ascii_int(pairs[-1][0])
        if given is not None and given < 0:
            raise InvalidParameterError(
                f"gains={text!r}: grade {given} is below 0, where a doc counts as not judged; "
                "give gains to grades 0 and up."
            )
    return pairs


_MOST_GAIN = 1e15  # trec_eval orders gains by their difference cast to an integer


def _gain_table(n_levels: int, pairs: list[tuple[str, float]]) -> list[list[float]]:
    """trec_eval's gain table for a query whose grades reach ``n_levels``: ``[grade, gain,
    grade + 1]`` rows (the last 0 for a row that counts no docs: a grade given twice counts
    its docs in its first row), ascending by gain as trec_eval orders them (its comparison
    keeps the integer part of the difference, so gains closer than 1 keep their order:
    given pairs first, then the other grades from 0 up). The order depends on the grades
    reached alone, not on how many docs each has."""
    table: list[list[float]] = [[int(g), gain, 0] for g, gain in pairs if ascii_int(g) is not None]
    first: dict[int, list[float]] = {}
    for row in table:
        first.setdefault(int(row[0]), row)
    for grade in range(n_levels):
        if grade in first:
            first[grade][2] = grade + 1
        else:
            table.append([grade, float(grade), grade + 1])
    from functools import cmp_to_key

    def by_gain(a: list[float], b: list[float]) -> int:
        return int(a[1] - b[1])

    return sorted(table, key=cmp_to_key(by_gain))


def _gain_lookup(table: list[list[float]], top: int) -> np.ndarray:
    """Each grade's gain (the first row of it in ``table``), indexed by grade + 3 for the
    grades ``PAST`` .. ``top``; 0 for a grade the table lacks, and past a ranking's end."""
    lookup = np.zeros(top + 4)
    seen: set[int] = set()
    for grade, gain, _ in table:
        if int(grade) not in seen and -2 <= grade <= top:
            lookup[int(grade) + 3] = gain
        seen.add(int(grade))
    return lookup


def _gains(walk: _Walk, gains: str, *, scaled: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Each rank's gain (its grade's, 0 for a doc the table gives none) and the ideal
    ranking's positive gains rank by rank (padded with 0): the highest gain as often as
    docs are judged at it, then the next, as trec_eval walks its table from the top.
    ``scaled`` (rbp): a table whose gains leave [0, 1] is scaled into it first."""
    pairs = _gain_pairs(gains)
    n_rows, width = walk.grades.shape
    given = [ascii_int(g) for g, _ in pairs]
    top = max([walk.levels.shape[1] - 1, 0] + [g for g in given if g is not None])
    gained = np.zeros((n_rows, width))
    pieces: list[tuple[np.ndarray, float, np.ndarray]] = []  # rows, gain, docs: in order
    for n_levels in np.unique(walk.n_levels).tolist():
        table = _gain_table(n_levels, pairs)
        if scaled:  # the range of the gains and 0, as the trec_eval program finds it
            low = min([0.0] + [row[1] for row in table])
            high = max([0.0] + [row[1] for row in table])
            if low < 0 or high > 1:  # then high - low > 0
                for row in table:
                    row[1] = (row[1] - low) / (high - low)
        members = np.flatnonzero(walk.n_levels == n_levels)
        gained[members] = _gain_lookup(table, top)[walk.grades[members] + 3]
        if not table or table[-1][1] <= 0.0:
            continue  # no positive gain on top: no ideal ranking
        stopped = np.zeros(len(members), dtype=bool)
        present = np.any(walk.levels[members] > 0, axis=0).tolist()  # grades some have docs at
        for _, gain, counted in reversed(table):
            if not counted or not present[int(counted) - 1]:
                continue  # no docs at this grade: it adds nothing and stops nothing
            docs = walk.levels[members, int(counted) - 1]
            if gain <= 0.0:  # the walk ends at the first grade of docs without gain
                stopped |= docs > 0
                continue
            pieces.append((members, gain, np.where(stopped, 0, docs)))
    ideal_lengths = np.zeros(n_rows, dtype=np.int64)
    for members, _, docs in pieces:
        ideal_lengths[members] += docs
    ideal = np.zeros((n_rows, int(ideal_lengths.max()) if n_rows else 0))
    filled = np.zeros(n_rows, dtype=np.int64)
    columns = np.arange(ideal.shape[1])
    for members, gain, docs in pieces:
        start = filled[members][:, None]
        ideal[members] += np.where((columns >= start) & (columns < start + docs[:, None]), gain, 0)
        filled[members] += docs
    return gained, ideal


_LOG2: list[float] = []


def _log2_of_ranks(n: int) -> np.ndarray:
    """``log2(i + 2)`` for ranks ``i = 0 .. n-1``, from C's ``log2`` (as trec_eval divides by
    it), kept for the process."""
    while len(_LOG2) < n:
        _LOG2.append(math.log2(len(_LOG2) + 2))
    return np.asarray(_LOG2[:n], dtype=np.float64)


def _c_log2(values: np.ndarray) -> np.ndarray:
    """C's ``log2`` of each value (numpy's may differ in the last bit): each distinct
    value's once; -inf at 0 and NaN below, as C gives them."""
    distinct, where = np.unique(values, return_inverse=True)
    logs = np.array(
        [math.log2(x) if x > 0 else -math.inf if x == 0 else math.nan for x in distinct.tolist()],
        dtype=np.float64,
    )
    return logs[where.reshape(values.shape)]


def _widened(matrix: np.ndarray, width: int) -> np.ndarray:
    """``matrix`` with columns of 0 added up to ``width``."""
    if matrix.shape[1] >= width:
        return matrix
    wide = np.zeros((matrix.shape[0], width))
    wide[:, : matrix.shape[1]] = matrix
    return wide


class _Dcg(NamedTuple):
    """A block's discounted gains: each rank's gain and its term ``gain / log2(rank + 1)``
    (0 where the gain is), the ideal ranking's terms; both as wide as the wider."""

    gained: np.ndarray
    terms: np.ndarray
    ideal: np.ndarray
    ideal_terms: np.ndarray
    n_ideal: np.ndarray


def _dcg(walk: _Walk, gains: str) -> _Dcg:
    gained, ideal = _gains(walk, gains)
    width = max(gained.shape[1], ideal.shape[1])
    logs = _log2_of_ranks(width)
    with np.errstate(all="ignore"):
        terms = np.where(gained != 0, gained / logs[: gained.shape[1]], 0.0)
    n_ideal = np.count_nonzero(ideal, axis=1)
    ideal_terms = ideal / logs[: ideal.shape[1]]
    return _Dcg(
        _widened(gained, width), _widened(terms, width), _widened(ideal, width),
        _widened(ideal_terms, width), n_ideal,
    )  # fmt: skip


def _per_walk(judged: JudgedRun, value: Callable[[_Walk], np.ndarray]) -> np.ndarray:
    """One value per query: ``value`` of each block, put at its rows."""
    values = np.zeros(judged.n_queries)
    for walk in _walks(judged):
        values[walk.rows] = value(walk)
    return values


def ndcg_gains(judged: JudgedRun, cutoff: int | None, *, gains: str) -> np.ndarray:
    """nDCG over the whole ranking with a gain per grade (trec_eval's ``ndcg.1=3,2=9``):
    each retrieved doc adds its gain / log2(rank + 1), over the same sum for the judged docs
    in the order of their gains; 0 when no judged doc has a positive gain.

    Example:
        >>> j = locate_in_lists({"q": {"a": 1, "b": 2}}, {"q": ["a", "b"]})
        >>> ndcg_gains(j, None, gains="1:3;2:1").round(6).tolist()  # a is worth 3 here
        [1.0]
    """

    def value(walk: _Walk) -> np.ndarray:
        dcg = _dcg(walk, gains)
        results, best = row_sums(dcg.terms), row_sums(dcg.ideal_terms)
        return _ratio(results, best, best > 0.0)

    return _per_walk(judged, value)


def dcg(judged: JudgedRun, cutoff: int | None, *, gains: str) -> np.ndarray:
    """DCG over the whole ranking, each doc's gain (the grade, or ``gains``) / log2(rank + 1).

    Example:
        >>> j = locate_in_lists({"q": {"a": 1, "b": 2}}, {"q": ["x", "b"]})
        >>> dcg(j, None, gains="").tolist()  # 2 / log2(3)
        [1.261859507142915]
    """
    return _per_walk(judged, lambda walk: row_sums(_dcg(walk, gains).terms))


def ideal_dcg(judged: JudgedRun, cutoff: int | None, *, gains: str) -> np.ndarray:
    """The DCG of the best ordering of the judged docs (trec_eval's ``ideal_dcg``).

    Example:
        >>> j = locate_in_lists({"q": {"a": 1, "b": 2}}, {"q": ["x"]})
        >>> ideal_dcg(j, None, gains="").tolist()  # 2 / 1 + 1 / log2(3)
        [2.6309297535714578]
    """
    return _per_walk(judged, lambda walk: row_sums(_dcg(walk, gains).ideal_terms))


def ndcg_rel(judged: JudgedRun, cutoff: int | None, *, gains: str) -> np.ndarray:
    """nDCG averaged over the relevant docs: the nDCG at each retrieved doc with a positive
    gain, plus the final nDCG once for each ideal doc not retrieved, over the number of
    ideal docs (trec_eval's ``ndcg_rel``).

    Example:
        >>> j = locate_in_lists({"q": {"a": 1, "b": 1}}, {"q": ["a", "x"]})
        >>> ndcg_rel(j, None, gains="").round(4).tolist()
        [0.8066]
    """

    def value(walk: _Walk) -> np.ndarray:
        dcg = _dcg(walk, gains)
        # the ranking's and the ideal's DCG so far; past its end each stays at its total
        results = np.cumsum(dcg.terms, axis=1)
        best = np.cumsum(dcg.ideal_terms, axis=1)
        found = dcg.gained > 0
        last_results = results[:, -1] if results.shape[1] else np.zeros(len(walk.rows))
        last_best = best[:, -1] if best.shape[1] else np.zeros(len(walk.rows))
        m = dcg.n_ideal.astype(np.float64)
        with np.errstate(all="ignore"):
            total = row_sums(np.where(found, results / best, 0.0))
            missed = m - np.count_nonzero(found, axis=1)
            total += missed * last_results / last_best
            return np.where(total > 0.0, total / m, 0.0)

    return _per_walk(judged, value)


def r_ndcg(judged: JudgedRun, cutoff: int | None, *, rel: int, gains: str) -> np.ndarray:
    """nDCG averaged over the ranks where the ideal ranking's gain changes (and the end of
    the ranking); 0 when nothing is relevant (trec_eval's ``Rndcg``).

    Example:
        >>> j = locate_in_lists({"q": {"a": 2, "b": 1}}, {"q": ["b", "a"]})
        >>> r_ndcg(j, None, rel=1, gains="").round(4).tolist()
        [0.6799]
    """
    relevant = judged.n_relevant(rel)

    def value(walk: _Walk) -> np.ndarray:
        dcg = _dcg(walk, gains)
        results = np.cumsum(dcg.terms, axis=1)
        best = np.cumsum(dcg.ideal_terms, axis=1)
        m, n = dcg.n_ideal, walk.lengths
        columns = np.arange(dcg.ideal.shape[1])
        # the nDCG at rank j + 1 for each j after which the ideal gain changes, and at the
        # ideal's last positive gain: with the ranking's DCG as far as it goes
        changes = np.zeros(dcg.ideal.shape, dtype=bool)
        changes[:, :-1] = dcg.ideal[:, 1:] != dcg.ideal[:, :-1]
        changes &= columns < (m - 1)[:, None]
        changes |= columns == (m - 1)[:, None]
        with np.errstate(all="ignore"):
            total = row_sums(np.where(changes, results / best, 0.0))
            count = np.count_nonzero(changes, axis=1)
            # the ranking goes on past the ideal: its end counts once more
            past = (m > 0) & (m + 1 < n)
            if results.shape[1]:
                total = np.where(past, total + results[:, -1] / best[:, -1], total)
            values = total / (count + past)
        return np.where(relevant[walk.rows] == 0, 0.0, values)

    return _per_walk(judged, value)


def bin_g(judged: JudgedRun, cutoff: int | None, *, rel: int) -> np.ndarray:
    """Binary G: each relevant doc retrieved adds 1 / log2(2 + its non-relevant docs above
    it), over R (trec_eval's ``binG``).

    Example:
        >>> j = locate_in_lists({"q": {"a": 1, "b": 1}}, {"q": ["x", "a"]})
        >>> bin_g(j, None, rel=1).round(4).tolist()
        [0.3155]
    """
    relevant = judged.n_relevant(rel)

    def value(walk: _Walk) -> np.ndarray:
        hit = walk.grades >= rel
        width = hit.shape[1]
        # 2 + the non-relevant docs above each relevant one (an integer, from 2 up)
        above = 3 + np.arange(width) - np.cumsum(hit, axis=1)
        logs = _log2_of_ranks(width + 1)[np.where(hit, above - 2, 0)]
        total = row_sums(np.where(hit, 1.0 / logs, 0.0))
        found = hit.any(axis=1)
        with np.errstate(all="ignore"):
            return np.where(found, total / relevant[walk.rows], 0.0)

    return _per_walk(judged, value)


def g_measure(judged: JudgedRun, cutoff: int | None, *, gains: str) -> np.ndarray:
    """trec_eval's ``G``: gains discounted by log2 of 2 + the cost so far (the ideal's gains,
    at least 1 a doc) minus the gain so far, over the ideal's total gain.

    Example:
        >>> j = locate_in_lists({"q": {"a": 1, "b": 1}}, {"q": ["a", "b"]})
        >>> g_measure(j, None, gains="").tolist()
        [1.0]
    """

    def value(walk: _Walk) -> np.ndarray:
        gained, ideal = _gains(walk, gains)
        width = gained.shape[1]
        cost = np.cumsum(np.maximum(_widened(ideal, width)[:, :width], 1.0), axis=1)
        so_far = np.cumsum(gained, axis=1)
        hit = gained != 0
        terms = np.zeros(gained.shape)
        terms[hit] = gained[hit] / _c_log2((2.0 + cost[hit]) - so_far[hit])
        best = row_sums(ideal)
        return _ratio(row_sums(terms), best, best > 0.0)

    return _per_walk(judged, value)


def rbp(judged: JudgedRun, cutoff: int | None, *, p: float, gains: str) -> np.ndarray:
    """Rank-biased precision: (1 - p) x the sum of each doc's gain x p^(rank - 1), gains
    scaled into [0, 1] when some lie outside (Moffat and Zobel 2008; trec_eval's ``rbp``).

    Example:
        >>> j = locate_in_lists({"q": {"a": 1}}, {"q": ["a", "x"]})
        >>> rbp(j, None, p=0.5, gains="").tolist()
        [0.5]
    """

    def value(walk: _Walk) -> np.ndarray:
        gained, _ = _gains(walk, gains, scaled=True)
        weights = _persistence_weights(p, gained.shape[1])
        return (1.0 - p) * row_sums(np.where(gained != 0, gained * weights, 0.0))

    return _per_walk(judged, value)


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

    def value(walk: _Walk) -> np.ndarray:
        width = walk.grades.shape[1]
        weights = _persistence_weights(p, width + 1)  # the last: p^n, past the ranking's end
        unjudged = (walk.grades == NONPOOL) | (walk.grades == UNJUDGED)
        total = row_sums(np.where(unjudged, weights[:width], 0.0))
        return np.where(unjudged.any(axis=1), weights[walk.lengths] + (1 - p) * total, 0.0)

    return _per_walk(judged, value)


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

    def value(walk: _Walk) -> np.ndarray:
        grades = walk.grades
        unjudged = np.cumsum(grades == UNJUDGED, axis=1)
        below = np.cumsum((grades >= 0) & (grades < rel), axis=1)
        hit = grades >= rel
        found = np.cumsum(hit, axis=1) - 1  # relevant docs above each (rel_so_far - 1)
        at = np.broadcast_to(np.arange(grades.shape[1], dtype=np.float64), grades.shape)
        judged_above = (found + below + unjudged).astype(np.float64)
        with np.errstate(all="ignore"):
            terms = 1.0 / (at + 1.0) + (at / (at + 1.0)) * (judged_above / at) * (
                (found + INFAP_EPSILON) / ((found + below) + 2 * INFAP_EPSILON)
            )
        if terms.shape[1]:
            terms[:, 0] = 1.0
        total = row_sums(np.where(hit, terms, 0.0))
        counted = relevant[walk.rows]
        return np.where(counted > 0, total / np.maximum(counted, 1), total)

    return _per_walk(judged, value)


def yaap(judged: JudgedRun, cutoff: int | None, *, rel: int) -> np.ndarray:
    """trec_eval's ``yaap``: log((1 + S) / (1 + R - S)), S the sum of the precisions at the
    relevant docs retrieved.

    Example:
        >>> yaap(locate_in_lists({"q": {"a": 1}}, {"q": ["a"]}), None, rel=1).tolist()
        [0.6931471805599453]
    """
    relevant = judged.n_relevant(rel)

    def value(walk: _Walk) -> np.ndarray:
        hit = walk.grades >= rel
        ranks = np.arange(1, hit.shape[1] + 1, dtype=np.float64)
        total = row_sums(np.where(hit, np.cumsum(hit, axis=1) / ranks, 0.0))
        ratios = (1.0 + total) / (1.0 + relevant[walk.rows].astype(np.float64) - total)
        return np.array([_c_log(x) for x in ratios.tolist()], dtype=np.float64)

    return _per_walk(judged, value)


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
    if _name == "g":
        # gains ordered so that the ideal ranking stops before a gain above 1: the cost
        # falls behind the gain, and trec_eval takes the log2 of a number below 0 (NaN)
        _traits["can_be_na"] = True
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
