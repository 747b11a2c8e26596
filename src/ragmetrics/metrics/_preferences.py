"""Preference judgments counted against a ranking, and trec_eval's measures of them
(``prefs_*``): for ``ragmetrics trec_eval -R prefs`` and for the registered metrics, which
read a query's graded judgments as one group of preferences.

A preference file holds lines ``query group subgroup doc level``: within a subgroup, a doc
with a higher level is preferred to one with a lower level. A group (one user's judgments)
with one subgroup orders its docs into classes of equal level; a group with several
subgroups holds the preferences they state and every one they imply (a > b in one subgroup
and b > c in another give a > c). ``-R qrels_prefs`` reads an ordinary qrels file the same
way, each value of its second column a group with one subgroup.

Each preference a > b is then counted against the ranking: fulfilled when a is retrieved
above b (or a retrieved and b not: "implied"), not when b is above a (or only b retrieved),
and "not occurring" when neither is retrieved. The measures are ratios of those counts,
summed or averaged over the groups, as trec_eval 10 defines them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragmetrics._util.arrays import spans

__all__ = ["Entry", "PrefsError", "QueryPrefs", "count_query", "query_values", "values"]


class PrefsError(Exception):
    """Judgments trec_eval cannot score (it stops with this exit code)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


Entry = tuple[str, str, str, float]  # group, subgroup, doc, level


@dataclass
class _Group:
    """The counts of one judgment group against one ranking."""

    ful_ret: int = 0
    poss_ret: int = 0
    ful_imp: int = 0
    poss_imp: int = 0
    notoccur: int = 0
    rel: int = 0
    rel_ret: int = 0
    nonrel: int = 0
    nonrel_ret: int = 0
    classes: list[np.ndarray] | None = None  # one subgroup: docs by level, highest first
    prefers: np.ndarray | None = None  # several: prefers[a, b] when a is preferred to b
    level_of: np.ndarray | None = None


@dataclass
class QueryPrefs:
    """A query's groups counted against its ranking; docs are numbered 0.. in rank order
    for the retrieved ones (``n_retrieved`` of them), then by id for the others."""

    groups: list[_Group]
    n_judged: int
    n_retrieved: int
    pairs: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int64))
    shares: tuple[np.ndarray, np.ndarray, int] | None = None  # see _pair_shares


def count_query(entries: list[Entry], ranking: list[str]) -> QueryPrefs:
    """Count every group's preferences against ``ranking`` (best first, already cut)."""
    judged = {doc for _, _, doc, _ in entries}
    retrieved = [doc for doc in ranking if doc in judged]
    number = {doc: i for i, doc in enumerate(retrieved)}
    for doc in sorted(judged - set(retrieved)):
        number[doc] = len(number)
    n, n_ret = len(number), len(retrieved)
    ordered = sorted(entries, key=lambda e: (e[0], e[1], -e[3], number[e[2]]))
    pairs = np.zeros((n, n), dtype=np.int64)
    groups = []
    start = 0
    while start < len(ordered):
        end = start
        while end < len(ordered) and ordered[end][0] == ordered[start][0]:
            end += 1
        block = ordered[start:end]
        subgroups = {e[1] for e in block}
        if len(subgroups) == 1:
            groups.append(_by_classes(block, number, n_ret, pairs))
        else:
            groups.append(_by_array(block, number, n, n_ret, pairs))
        start = end
    return QueryPrefs(groups, n, n_ret, pairs)


def _by_classes(
    block: list[Entry], number: dict[str, int], n_ret: int, pairs: np.ndarray
) -> _Group:
    """A group of one subgroup: its docs in classes of equal level (``block`` is sorted by
    level, highest first, then by number), each doc preferred to every doc of every lower
    class; the preferences counted as arrays, a block of preferring docs at a time."""
    nums = np.fromiter((number[doc] for _, _, doc, _ in block), dtype=np.int64, count=len(block))
    levels = np.fromiter((entry[3] for entry in block), dtype=np.float64, count=len(block))
    bounds = np.flatnonzero(np.diff(levels)) + 1  # where each class after the first starts
    class_ids = np.split(nums, bounds)
    group = _Group(classes=class_ids)
    for level, ids in zip(levels[np.concatenate(([0], bounds))].tolist(), class_ids, strict=True):
        seen = int(np.count_nonzero(ids < n_ret))
        if level > 0.0:
            group.rel_ret += seen
            group.rel += len(ids)
        else:
            group.nonrel_ret += seen
            group.nonrel += len(ids)
    # entry i prefers every entry from the end of its class on
    m = len(block)
    ends = np.append(bounds, m)
    class_end = np.repeat(ends, np.diff(np.concatenate(([0], ends))))
    counts = m - class_end
    flat = pairs.reshape(-1)
    n = pairs.shape[1]
    step = max(1, _PAIR_CELLS // max(m, 1))
    for first in range(0, m, step):
        rows = slice(first, first + step)
        which, _, at = spans(class_end[rows], counts[rows])
        a, b = nums[rows][which], nums[at]
        if bool((a == b).any()):
            raise PrefsError("trec_eval.form_prefs_counts: a doc has two levels in one subgroup", 4)
        np.add.at(flat, a * n + b, 1)
        before = a < b
        a_ret, b_ret = a < n_ret, b < n_ret
        group.ful_ret += int(np.count_nonzero(before & b_ret))
        group.ful_imp += int(np.count_nonzero(before & ~b_ret & a_ret))
        group.poss_ret += int(np.count_nonzero(~before & a_ret))
        group.poss_imp += int(np.count_nonzero(~before & ~a_ret & b_ret))
        group.notoccur += int(np.count_nonzero(~(a_ret | b_ret)))
    group.poss_ret += group.ful_ret
    group.poss_imp += group.ful_imp
    return group


_PAIR_CELLS = 1 << 20  # preferences counted a block of about this many at a time


def _by_array(
    block: list[Entry], number: dict[str, int], n: int, n_ret: int, pairs: np.ndarray
) -> _Group:
    prefers = np.zeros((n, n), dtype=bool)
    level_of = np.full(n, -1.0)
    for position, (_, subgroup, doc, level) in enumerate(block):
        a = number[doc]
        if (level_of[a] > 0.0 and level == 0.0) or (level_of[a] == 0.0 and level > 0.0):
            raise PrefsError(
                f"trec_eval.form_prefs_counts: doc '{doc}' has both 0 and non-0 rel_level assigned",
                4,
            )
        level_of[a] = level
        later = position + 1
        while later < len(block) and block[later][1] == subgroup and block[later][3] == level:
            later += 1
        while later < len(block) and block[later][1] == subgroup:
            prefers[a, number[block[later][2]]] = True
            later += 1
    # every implied preference: the closure of the relation (reachability)
    reach = prefers | np.eye(n, dtype=bool)
    while True:
        wider = (prefers.astype(np.int64) @ reach.astype(np.int64)) > 0
        wider |= np.eye(n, dtype=bool)
        if np.array_equal(wider, reach):
            break
        reach = wider
    np.fill_diagonal(reach, False)
    if (reach & reach.T).any():
        raise PrefsError("trec_eval.form_prefs_counts: Pref inconsistency found", 134)
    group = _Group(prefers=reach, level_of=level_of)
    group.rel_ret = int(np.count_nonzero(level_of[:n_ret] > 0.0))
    group.nonrel_ret = int(np.count_nonzero(level_of[:n_ret] == 0.0))
    group.rel = int(np.count_nonzero(level_of > 0.0))
    group.nonrel = int(np.count_nonzero(level_of == 0.0))
    pairs += reach
    top, bottom = reach[:n_ret], reach[n_ret:]
    group.poss_ret = int(np.count_nonzero(np.tril(top[:, :n_ret], -1)))
    group.ful_ret = int(np.count_nonzero(np.triu(top[:, :n_ret], 1)))
    group.ful_imp = int(np.count_nonzero(top[:, n_ret:]))
    group.poss_imp = int(np.count_nonzero(bottom[:, :n_ret]))
    group.notoccur = int(np.count_nonzero(bottom[:, n_ret:]))
    group.poss_ret += group.ful_ret
    group.poss_imp += group.ful_imp
    return group


def _recount(group: _Group, n_ret: int, *, retrieved_only: bool) -> tuple[int, int]:
    """Fulfilled and possible preferences with the non-relevant docs cut to as many as the
    relevant ones (``prefs_avgjg_Rnonrel``; ``retrieved_only``: among retrieved docs)."""
    ful = poss = 0
    if group.classes is not None:
        classes = group.classes
        keep = group.rel_ret if retrieved_only else group.rel
        # a class's docs ascend: the retrieved ones (numbered first) are a prefix
        within = [ids[ids < n_ret] if retrieved_only else ids for ids in classes]
        kept_nonrel = classes[-1][:keep]
        if retrieved_only:
            kept_nonrel = kept_nonrel[kept_nonrel < n_ret]
        for index, ids in enumerate(within):
            lower = within[index + 1 : len(within) - 1]
            if lower:
                won, pairs = _preferred_before(ids, np.concatenate(lower), n_ret, retrieved_only)
                ful, poss = ful + won, poss + pairs - won
        for ids in within:
            won, pairs = _preferred_before(ids, kept_nonrel, n_ret, retrieved_only)
            ful, poss = ful + won, poss + pairs - won
        return ful, poss + ful
    assert group.prefers is not None
    assert group.level_of is not None
    prefers, level_of = group.prefers, group.level_of
    n = len(level_of)
    span = n_ret if retrieved_only else n
    seen, cut = 0, span
    for i in range(span):
        if level_of[i] == 0.0:
            seen += 1
            if seen == group.rel + 1:
                cut = i
                break
    dropped = np.zeros(n, dtype=bool)
    dropped[cut:] = level_of[cut:] == 0.0
    kept = ~dropped
    block = prefers & kept[:, None] & kept[None, :]
    top = block[:n_ret]
    poss += int(np.count_nonzero(np.tril(top[:, :n_ret], -1)))
    ful += int(np.count_nonzero(np.triu(top[:, :n_ret], 1)))
    if not retrieved_only:
        ful += int(np.count_nonzero(top[:, n_ret:]))
        bottom = block[n_ret:]
        poss += int(np.count_nonzero(bottom[:, :n_ret]))
        poss += int(np.count_nonzero(bottom[:, n_ret:]))
    return ful, poss + ful


def _preferred_before(
    higher: np.ndarray, lower: np.ndarray, n_ret: int, retrieved_only: bool
) -> tuple[int, int]:
    """Of the pairs (a of ``higher``, b of ``lower``): how many the ranking fulfils (a
    numbered before b, and a retrieved unless ``retrieved_only``), and how many in all."""
    counted = higher if retrieved_only else higher[higher < n_ret]
    below = np.sort(lower)
    after = len(below) - np.searchsorted(below, counted, side="right")
    return int(after.sum()), len(higher) * len(lower)


def _pair(query: QueryPrefs, parts: tuple[bool, bool, bool]) -> float:
    """The mean over doc pairs with a preference of the share of it the ranking fulfils
    (counts summed over groups); ``parts``: pairs among retrieved docs, between retrieved
    and others, and among others (counted as pairs only). The shares are added one by one
    in trec_eval's order (a running sum): the same double as its loop."""
    if query.shares is None:
        query.shares = _pair_shares(query)
    running, counts, among_others = query.shares
    assert parts[0]  # every measure counts the pairs among retrieved docs
    shared = int(counts[0]) + (int(counts[1]) if parts[1] else 0)  # the pairs with a share
    n_pairs = shared + (among_others if parts[2] else 0)
    if not n_pairs:
        return 0.0
    return (float(running[shared - 1]) if shared else 0.0) / n_pairs


def _pair_shares(query: QueryPrefs) -> tuple[np.ndarray, np.ndarray, int]:
    """For :func:`_pair`, once a query: the running sum of the shares ``c[i, j] / (c[i, j]
    + c[j, i])`` of the pairs with a preference, first those among retrieved docs (i < j <
    n_ret), then those between a retrieved doc and another (i < n_ret <= j), each part row
    by row; how many of each; and how many pairs among the other docs."""
    c, n_ret = query.pairs, query.n_retrieved
    top = c[:n_ret, :n_ret]
    above = _upper(n_ret)
    forward = [top[above], c[:n_ret, n_ret:].reshape(-1)]
    backward = [top.T[above], c[n_ret:, :n_ret].T.reshape(-1)]
    shares, counts = [], np.zeros(2, dtype=np.int64)
    for part, (f, b) in enumerate(zip(forward, backward, strict=True)):
        some = (f != 0) | (b != 0)
        kept_f, kept_b = f[some].astype(np.float64), b[some].astype(np.float64)
        shares.append(kept_f / (kept_f + kept_b))
        counts[part] = len(kept_f)
    rest = c[n_ret:, n_ret:]  # symmetric once or-ed with its transpose; no doc with itself
    among_others = int(np.count_nonzero((rest != 0) | (rest.T != 0))) // 2
    return np.cumsum(np.concatenate(shares)), counts, among_others


def _upper(n: int) -> np.ndarray:
    """The cells above the diagonal of an n x n matrix (kept for the sizes of rankings)."""
    mask = _UPPER.get(n)
    if mask is None:
        mask = np.triu(np.ones((n, n), dtype=bool), 1)
        if n <= _KEPT_UPPER:
            _UPPER[n] = mask
    return mask


_KEPT_UPPER = 1024


_UPPER: dict[int, np.ndarray] = {}


def _ratio(numerator: int, denominator: int) -> float:
    with np.errstate(all="ignore"):
        return float(np.float64(numerator) / np.float64(denominator))


def values(query: QueryPrefs, name: str) -> float:
    """One preference measure of one query, as trec_eval computes it."""
    groups, n_ret = query.groups, query.n_retrieved
    if name == "prefs_num_prefs_poss":
        return float(sum(g.poss_ret + g.poss_imp + g.notoccur for g in groups))
    if name == "prefs_num_prefs_ful":
        return float(sum(g.ful_ret + g.ful_imp for g in groups))
    if name == "prefs_num_prefs_ful_ret":
        return float(sum(g.ful_ret for g in groups))
    if name.startswith("prefs_simp"):
        ful, poss = _simple(groups, name)
        return ful / poss if poss else 0.0
    if name == "prefs_pair":
        return _pair(query, (True, True, True))
    if name == "prefs_pair_ret":
        return _pair(query, (True, False, False))
    if name == "prefs_pair_imp":
        return _pair(query, (True, True, False))
    total = 0.0
    for group in groups:
        if name in ("prefs_avgjg_Rnonrel", "prefs_avgjg_Rnonrel_ret"):
            total += _rnonrel(group, n_ret, retrieved_only=name.endswith("_ret"))
            continue
        ful, poss = _simple([group], name.replace("avgjg", "simp"))
        if poss:
            total += ful / poss
    return total / len(groups) if total > 0.0 else 0.0


def _simple(groups: list[_Group], name: str) -> tuple[int, int]:
    ful = sum(g.ful_ret for g in groups)
    poss = sum(g.poss_ret for g in groups)
    if name in ("prefs_simp", "prefs_simp_imp"):
        ful += sum(g.ful_imp for g in groups)
        poss += sum(g.poss_imp for g in groups)
    if name == "prefs_simp":
        poss += sum(g.notoccur for g in groups)
    return ful, poss


def _rnonrel(group: _Group, n_ret: int, *, retrieved_only: bool) -> float:
    relevant = group.rel_ret if retrieved_only else group.rel
    nonrelevant = group.nonrel_ret if retrieved_only else group.nonrel
    if relevant >= nonrelevant:
        ful = group.ful_ret + (0 if retrieved_only else group.ful_imp)
        poss = group.poss_ret
        if not retrieved_only:
            poss += group.poss_imp + group.notoccur
        ful += group.rel_ret * (relevant - nonrelevant)
        poss += group.rel * (relevant - nonrelevant)
        return _ratio(ful, poss)
    ful, poss = _recount(group, n_ret, retrieved_only=retrieved_only)
    return _ratio(ful, poss)


def query_values(entries: list[Entry], ranking: list[str], names: list[str]) -> dict[str, Any]:
    """Every asked measure of one query."""
    query = count_query(entries, ranking)
    return {name: values(query, name) for name in names}
