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
    classes: list[list[int]] | None = None  # one subgroup: docs by level, highest first
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
    classes: list[tuple[float, list[int]]] = []
    for _, _, doc, level in block:
        if not classes or classes[-1][0] != level:
            classes.append((level, []))
        classes[-1][1].append(number[doc])
    group = _Group(classes=[ids for _, ids in classes])
    for index, (level, ids) in enumerate(classes):
        seen = sum(1 for i in ids if i < n_ret)
        if level > 0.0:
            group.rel_ret += seen
            group.rel += len(ids)
        else:
            group.nonrel_ret += seen
            group.nonrel += len(ids)
        for _, lower in classes[index + 1 :]:
            for a in ids:
                for b in lower:
                    pairs[a, b] += 1
                    if a == b:
                        raise PrefsError(
                            "trec_eval.form_prefs_counts: a doc has two levels in one subgroup",
                            4,
                        )
                    if a < b:
                        if b < n_ret:
                            group.ful_ret += 1
                        elif a < n_ret:
                            group.ful_imp += 1
                        else:
                            group.notoccur += 1
                    elif a < n_ret:
                        group.poss_ret += 1
                    elif b < n_ret:
                        group.poss_imp += 1
                    else:
                        group.notoccur += 1
    group.poss_ret += group.ful_ret
    group.poss_imp += group.ful_imp
    return group


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
        kept_nonrel = classes[-1][:keep]

        def within(ids: list[int]) -> list[int]:
            if not retrieved_only:
                return ids
            out = []
            for i in ids:
                if i >= n_ret:
                    break
                out.append(i)
            return out

        for index, ids in enumerate(classes):
            for lower in classes[index + 1 : len(classes) - 1]:
                for a in within(ids):
                    for b in within(lower):
                        if a < b and (retrieved_only or a < n_ret):
                            ful += 1
                        else:
                            poss += 1
        for ids in classes:
            for a in within(ids):
                for b in within(kept_nonrel):
                    if a < b and (retrieved_only or a < n_ret):
                        ful += 1
                    else:
                        poss += 1
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


def _pair(query: QueryPrefs, parts: tuple[bool, bool, bool]) -> float:
    """The mean over doc pairs with a preference of the share of it the ranking fulfils
    (counts summed over groups); ``parts``: pairs among retrieved docs, between retrieved
    and others, and among others (counted as pairs only)."""
    c, n_ret, n = query.pairs, query.n_retrieved, query.n_judged
    total, n_pairs = 0.0, 0
    if parts[0]:
        for i in range(n_ret):
            for j in range(i + 1, n_ret):
                if c[i, j] or c[j, i]:
                    n_pairs += 1
                    total += float(c[i, j]) / float(c[i, j] + c[j, i])
    if parts[1]:
        for i in range(n_ret):
            for j in range(n_ret, n):
                if c[i, j] or c[j, i]:
                    n_pairs += 1
                    total += float(c[i, j]) / float(c[i, j] + c[j, i])
    if parts[2]:
        for i in range(n_ret, n):
            for j in range(i + 1, n):
                if c[i, j] or c[j, i]:
                    n_pairs += 1
    return total / n_pairs if n_pairs else 0.0


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
