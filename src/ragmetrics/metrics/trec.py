"""The rest of trec_eval's measures: set measures over the whole retrieved list, relative
precision, utility, R-precision at multiples of R, the 11-point average and the share of
unjudged docs, each defined as trec_eval 10 computes it (docs/metrics.md says how).

Every kernel reads only the located arrays and returns one value per query. Where trec_eval's
arithmetic has an order (a ratio of products, a sum over levels), the kernel keeps it, so the
values equal trec_eval's to the last bit.
"""

from __future__ import annotations

import math

import numpy as np

from ragmetrics.engine.locate import JudgedRun, locate_in_lists  # noqa: F401 - doctests
from ragmetrics.metrics.registry import REL, Aggregate, Cutoff, MetricSpec, Param, register

__all__ = [
    "BETA",
    "LEVELS",
    "MULTIPLE",
    "UTILITY_WEIGHTS",
    "eleven_point_average",
    "nonrelevant_judged_retrieved",
    "r_precision_multiple",
    "relative_precision",
    "set_ap",
    "set_f",
    "set_precision",
    "set_recall",
    "set_relative_precision",
    "unjudged_rate",
    "utility",
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
    judged: JudgedRun, cutoff: int | None, *, rel: int, levels: str
) -> np.ndarray:
    """Interpolated precision averaged over recall levels (default 0, 0.1, ..., 1): at each
    level l, the best precision at any rank holding round(l x R) relevant docs or more; 0
    for a level the ranking never reaches.

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
            found, int(judged.lengths[row]), int(relevant[row]), targets
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
    found: np.ndarray, retrieved: int, relevant: int, levels: list[float]
) -> float:
    """The sum over ``levels`` (walked from the last to the first, as trec_eval does) of the
    interpolated precision at the rank holding ``round(level x R)`` relevant docs.

    ``found``: the 0-based ranks of the relevant docs retrieved, ascending."""
    counts = [_round_half_away(level * relevant) for level in levels]
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


def _round_half_away(x: float) -> int:
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


def _trec(name: str, kernel, cutoff: Cutoff, summary: str, **traits) -> MetricSpec:  # type: ignore[no-untyped-def]
    traits.setdefault("params", (REL,))
    traits.setdefault("perfect_is_one", False)
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
        params=(REL, LEVELS),
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
