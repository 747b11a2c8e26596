"""trec_eval's preference counts (``metrics._preferences``), counted as arrays, against a
plain walk over every pair of docs, one at a time, on random judgments and rankings: the
same counts, the same pair matrix and the same doubles, bit for bit."""

from __future__ import annotations

import random

import numpy as np
import pytest

from ragmetrics.metrics import _preferences as prefs


def _walk_classes(classes: list[list[int]], n_ret: int) -> dict[str, int]:
    """Each doc of a class preferred to each doc of every lower class, pair by pair."""
    counts = dict.fromkeys(("ful_ret", "poss_ret", "ful_imp", "poss_imp", "notoccur"), 0)
    for index, ids in enumerate(classes):
        for lower in classes[index + 1 :]:
            for a in ids:
                for b in lower:
                    if a < b:
                        key = "ful_ret" if b < n_ret else "ful_imp" if a < n_ret else "notoccur"
                    else:
                        key = "poss_ret" if a < n_ret else "poss_imp" if b < n_ret else "notoccur"
                    counts[key] += 1
    counts["poss_ret"] += counts["ful_ret"]
    counts["poss_imp"] += counts["ful_imp"]
    return counts


def _walk_recount(group: prefs._Group, n_ret: int, retrieved_only: bool) -> tuple[int, int]:
    """prefs_avgjg_Rnonrel's recount of a group of one subgroup, pair by pair."""
    assert group.classes is not None
    classes = [list(map(int, ids)) for ids in group.classes]
    keep = group.rel_ret if retrieved_only else group.rel
    kept_nonrel = classes[-1][:keep]

    def within(ids: list[int]) -> list[int]:
        return [i for i in ids if i < n_ret] if retrieved_only else ids

    ful = poss = 0
    pairs = [(ids, lower) for i, ids in enumerate(classes) for lower in classes[i + 1 : -1]]
    pairs += [(ids, kept_nonrel) for ids in classes]
    for ids, lower in pairs:
        for a in within(ids):
            for b in within(lower):
                if a < b and (retrieved_only or a < n_ret):
                    ful += 1
                else:
                    poss += 1
    return ful, poss + ful


def _walk_pair(query: prefs.QueryPrefs, parts: tuple[bool, bool, bool]) -> float:
    """prefs_pair's mean share, pair by pair, added in trec_eval's order."""
    c, n_ret, n = query.pairs, query.n_retrieved, query.n_judged
    total, n_pairs = 0.0, 0
    spans = [(range(n_ret), lambda i: range(i + 1, n_ret), True)] if parts[0] else []
    spans += [(range(n_ret), lambda i: range(n_ret, n), True)] if parts[1] else []
    spans += [(range(n_ret, n), lambda i: range(i + 1, n), False)] if parts[2] else []
    for rows, columns, shared in spans:
        for i in rows:
            for j in columns(i):
                if c[i, j] or c[j, i]:
                    n_pairs += 1
                    if shared:
                        total += float(c[i, j]) / float(c[i, j] + c[j, i])
    return total / n_pairs if n_pairs else 0.0


def _case(seed: int) -> tuple[list[prefs.Entry], list[str]]:
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(rng.randint(1, 60))]
    entries: list[prefs.Entry] = []
    for group in range(rng.randint(1, 3)):
        levels = [0.0, 1.0, 2.0, 3.5][: rng.randint(1, 4)]
        for doc in rng.sample(docs, rng.randint(1, len(docs))):
            entries.append((f"g{group}", "s", doc, rng.choice(levels)))
    ranking = rng.sample([*docs, "x1", "x2"], rng.randint(0, len(docs) + 2))
    return entries, ranking


@pytest.mark.parametrize("seed", range(60))
def test_preference_counts_equal_a_walk_over_every_pair(seed: int) -> None:
    entries, ranking = _case(seed)
    query = prefs.count_query(entries, ranking)
    n_ret = query.n_retrieved
    for group in query.groups:
        assert group.classes is not None
        walked = _walk_classes([list(map(int, ids)) for ids in group.classes], n_ret)
        assert {key: getattr(group, key) for key in walked} == walked
        for retrieved_only in (False, True):
            got = prefs._recount(group, n_ret, retrieved_only=retrieved_only)
            assert got == _walk_recount(group, n_ret, retrieved_only)
    # the pair matrix: every class pair of every group once
    expected = np.zeros_like(query.pairs)
    for group in query.groups:
        assert group.classes is not None
        for index, ids in enumerate(group.classes):
            for lower in group.classes[index + 1 :]:
                for a in ids:
                    for b in lower:
                        expected[a, b] += 1
    assert np.array_equal(query.pairs, expected)
    for parts in [(True, True, True), (True, False, False), (True, True, False)]:
        assert prefs._pair(query, parts) == _walk_pair(query, parts)  # bit for bit


def test_a_doc_at_two_levels_of_one_subgroup_is_refused_as_trec_eval_refuses_it() -> None:
    entries = [("g", "s", "a", 2.0), ("g", "s", "b", 1.0), ("g", "s", "a", 0.0)]
    with pytest.raises(prefs.PrefsError, match="two levels in one subgroup") as raised:
        prefs.count_query(entries, ["a", "b"])
    assert raised.value.code == 4


def test_preferences_are_counted_a_block_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of one preferring doc give the counts of one block of all."""
    entries, ranking = _case(3)
    whole = prefs.count_query(entries, ranking)
    monkeypatch.setattr(prefs, "_PAIR_CELLS", 1)
    cut = prefs.count_query(entries, ranking)
    assert np.array_equal(whole.pairs, cut.pairs)
    keys = ("ful_ret", "poss_ret", "ful_imp", "poss_imp", "notoccur", "rel", "rel_ret")
    for a, b in zip(whole.groups, cut.groups, strict=True):
        assert [getattr(a, k) for k in keys] == [getattr(b, k) for k in keys]
