"""The locate step computes everything the kernels read: evidence groups located once (even
where a doc sits in several groups, or beyond the depth), the candidate pool judged with the
run, and no kernel reaching back to the qrels or the run."""

from __future__ import annotations

import dataclasses
import math
import random
import warnings
from pathlib import Path

import numpy as np
import pytest

import ragmetrics as rm
from ragmetrics.engine._locate import locate_judged
from ragmetrics.engine._nuggets import locate_nuggets
from ragmetrics.metrics.judged import JudgedRun
from ragmetrics.metrics.registry import Cutoff, registered


def _groups_reference(
    judgments: dict[str, int], groups: tuple[tuple[str, ...], ...] | None, ranking, k, rel
):
    """group_recall@k and recall_all@k of one query, straight from the definitions (no
    group: 0, as recall@k with R = 0, and NA)."""
    if groups is None:
        groups = tuple((d,) for d, g in judgments.items() if g >= rel)
    if not groups:
        return 0.0, math.nan
    top = set(ranking[:k])
    found = sum(any(d in top for d in group) for group in groups)
    return found / len(groups), float(found == len(groups))


def _random_case(rng: random.Random):
    docs = [f"d{i}" for i in range(30)]
    judgments, groups, run = {}, {}, {}
    for q in range(25):
        query = f"q{q}"
        judged = rng.sample(docs, rng.randint(1, 8))
        judgments[query] = {d: rng.randint(0, 3) for d in judged}
        if rng.random() < 0.6:  # given groups: overlapping, members graded 0 included
            groups[query] = tuple(
                tuple(rng.sample(judged, rng.randint(1, min(3, len(judged)))))
                for _ in range(rng.randint(1, 4))
            )
        if rng.random() < 0.9:  # some queries have no ranking
            run[query] = rng.sample(docs, rng.randint(0, 20))
    return judgments, groups, run


@pytest.mark.parametrize("seed", range(40))
def test_group_metrics_equal_their_definition(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    judgments, groups, lists = _random_case(rng)
    qrels = rm.Qrels(judgments, groups=groups)
    k, rel = rng.choice([1, 3, 5, 10, 40]), rng.choice([1, 2])
    metrics = [f"group_recall(rel={rel})@{k}", f"recall_all(rel={rel})@{k}"]
    # the run as dicts, and as a TREC file (ids packed as bytes, read back for the members)
    trec = tmp_path / "run.trec"
    trec.write_text(
        "".join(
            f"{q} Q0 {d} {r} {100 - r} t\n"
            for q, ranking in lists.items()
            for r, d in enumerate(ranking)
        )
    )
    for run in (rm.Run.from_lists(lists), rm.Run.from_trec(trec)):
        result = rm.evaluate(qrels, run, metrics)
        for query in judgments:
            expected = _groups_reference(
                judgments[query], groups.get(query), lists.get(query, []), k, rel
            )
            got = tuple(
                math.nan if v is None else v for v in map(result.per_query[query].get, metrics)
            )
            assert np.allclose(got, expected, equal_nan=True), (query, got, expected)


def test_a_doc_of_two_groups_counts_for_both() -> None:
    qrels = rm.Qrels({"q": {"a": 1, "b": 1, "c": 1}}, groups={"q": (("a", "b"), ("a", "c"))})
    result = rm.evaluate(qrels, {"q": ["x", "a"]}, ["group_recall@1", "group_recall@2"])
    assert result.aggregate == {"group_recall@1": 0.0, "group_recall@2": 1.0}


def _inputs_inside(judged: JudgedRun) -> list[str]:
    """The fields of a judged run (its pool included) that hold a Qrels or a Run."""
    found = []
    for field in dataclasses.fields(judged):
        value = getattr(judged, field.name)
        if isinstance(value, (rm.Qrels, rm.Run)):
            found.append(field.name)
        if isinstance(value, JudgedRun):
            found += [f"{field.name}.{name}" for name in _inputs_inside(value)]
    return found


def test_kernels_read_only_the_located_arrays() -> None:
    """Every registered metric computes from a judged run that holds neither the qrels nor
    the run: what a kernel needs, the locate step made."""
    qrels = rm.Qrels(
        {"q1": {"a": 5, "b": 4, "c": 1}, "q2": {"x": 3, "y": 2}},
        groups={"q1": (("a", "b"), ("c",))},
    )
    run = rm.Run.from_dict({"q1": {"a": 0.5, "c": 0.5, "z": 0.1}, "q2": {"y": 1.0, "w": 0.2}})
    pool = rm.Run.from_lists({"q1": ["a", "b", "c"]})
    judged = locate_judged(qrels, run, ["q1", "q2"], depth=None, pool=pool, with_pool=True)
    assert _inputs_inside(judged) == []
    assert judged.pool is not None and not judged.pool_is_self
    nuggets = rm.Nuggets.from_dict({"q1": {"n": {"text": "t", "vital": True, "support": ["c"]}}})
    found = locate_nuggets(nuggets, run, ["q1", "q2"], np.array([0, 1]), depth=None)
    with_nuggets = dataclasses.replace(judged, nuggets=found)
    assert _inputs_inside(with_nuggets) == []
    for spec in registered().values():
        params = {p.name: p.default for p in spec.params}
        cutoff = None if spec.cutoff is Cutoff.NONE else 2
        values = spec.kernel(with_nuggets if spec.needs_nuggets else judged, cutoff, **params)
        assert len(values) == 2, spec.name


def test_the_pool_is_located_with_the_run_and_only_when_asked() -> None:
    qrels = rm.Qrels({"q": {"a": 5, "b": 4}})
    run = rm.Run.from_lists({"q": ["x", "a", "b"]})
    plain = locate_judged(qrels, run, ["q"], depth=2)
    assert plain.pool is None and not plain.pool_is_self
    with pytest.raises(RuntimeError, match="candidate pool was not located"):
        plain.pooled()
    cut = locate_judged(qrels, run, ["q"], depth=2, with_pool=True)
    assert cut.pooled().depth == 3 and cut.pooled().hit_ranks.tolist() == [1, 2]
    whole = locate_judged(qrels, run, ["q"], depth=None, with_pool=True)
    assert whole.pooled() is whole  # judged in full already: the pool is the run itself
    # PROC@1 sees b through the pool beyond the cutoff: (1 + 0.5) / (1 + 0.5)
    result = rm.evaluate(qrels, run, ["proc@1", "pct_proc@1"])
    assert result.aggregate["proc@1"] == 1.0


def _fields(judged: JudgedRun) -> dict[str, object]:
    """Every field a kernel reads, comparable."""
    out: dict[str, object] = {}
    for field in dataclasses.fields(judged):
        if field.name in ("cache", "query_ids"):
            continue
        value = getattr(judged, field.name)
        if isinstance(value, np.ndarray):
            out[field.name] = (value.dtype.kind, value.tolist())
        elif isinstance(value, JudgedRun):
            out[field.name] = _fields(value)
        else:
            out[field.name] = value
    return out


@pytest.mark.parametrize("seed", range(30))
def test_one_ranking_is_located_as_the_batch_locates_it(seed: int) -> None:
    """``locate_in_ranking`` (the adapters' one-query path) gives the judged run
    ``locate_judged`` gives, field for field, pool and all, at any depth."""
    from ragmetrics.engine._locate import locate_in_ranking

    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(25)]
    judgments = {d: rng.randint(-1, 4) for d in rng.sample(docs, rng.randint(0, 10))}
    ranking = tuple(rng.sample(docs, rng.randint(0, 20)))
    depth = rng.choice([None, 1, 3, 10, 40])
    with_pool = rng.random() < 0.7
    grade_map = rng.choice([None, {g: max(1, g) for g in range(-1, 5)}])
    one = locate_in_ranking(
        judgments, ranking, query_id="q", depth=depth, grade_map=grade_map, with_pool=with_pool
    )
    if not judgments:  # a batch needs a judged query; the one-ranking path takes it anyway
        assert one.judged_counts.tolist() == [0] and one.max_grade == 0.0
        return
    qrels = rm.Qrels({"q": judgments})
    run = rm.Run.from_lists({"q": list(ranking)})
    batch = locate_judged(qrels, run, ["q"], depth=depth, grade_map=grade_map, with_pool=with_pool)
    assert _fields(one) == _fields(batch)
    if with_pool:
        assert _fields(one.pooled()) == _fields(batch.pooled())


def test_ndcg_deeper_than_the_discount_table() -> None:
    """A ranking of 3,000 docs: the discounts past the first table are made on demand."""
    ranking = [f"d{i}" for i in range(3000)]
    judged = {"d1499": 2, "d2998": 1, "d5": 0}
    value = rm.evaluate({"q": judged}, {"q": ranking}, "ndcg").aggregate["ndcg"]
    dcg = 2 / math.log2(1500 + 1) + 1 / math.log2(2999 + 1)
    assert value == pytest.approx(dcg / (2 / math.log2(2) + 1 / math.log2(3)), rel=1e-15)


@pytest.mark.parametrize("seed", range(12))
def test_ranks_of_located_docs_equal_a_plain_sort(seed: int) -> None:
    """Each judged doc's rank (score down, then doc id down, as trec_eval) whichever way it
    is found: rows compared whole, rows sorted (a query with many judged docs), rows of one
    length or of many."""
    rng = random.Random(seed)
    uniform = seed % 2 == 0
    scores: dict[str, dict[str, float]] = {}
    judgments: dict[str, dict[str, int]] = {}
    for q in range(30):
        length = 40 if uniform else rng.randint(1, 80)
        docs = [f"d{rng.randrange(500):03d}" for _ in range(length * 2)]
        docs = list(dict.fromkeys(docs))[:length]
        scores[f"q{q}"] = {d: float(rng.choice([0.5, 0.25, rng.random()])) for d in docs}
        heavy = q == 0  # nearly every doc judged: the sorted path
        picked = docs if heavy else rng.sample(docs, min(len(docs), rng.randint(1, 5)))
        judgments[f"q{q}"] = dict.fromkeys(picked, 1)
    qrels, run = rm.Qrels(judgments), rm.Run.from_dict(scores)
    judged = locate_judged(qrels, run, sorted(judgments), depth=None)
    for row, query in enumerate(sorted(judgments)):
        order = sorted(scores[query], key=lambda d: (-scores[query][d], [-ord(c) for c in d]))
        expected = sorted(order.index(d) for d in judgments[query])
        assert sorted(judged.hit_ranks[judged.hit_rows == row].tolist()) == expected, query


def test_judged_share_is_ir_measures_judged() -> None:
    """Judged@k counts any judgment (a negative grade too) over the docs the top k holds:
    ir_measures gives Judged@2 = 0.5, Judged@4 = Judged@10 = 0.75 here."""
    qrels = {"q": {"a": 1, "b": 0, "c": -1}}
    run = {"q": {"a": 3.0, "x": 2.0, "b": 1.5, "c": 1.0}}
    result = rm.evaluate(qrels, run, ["Judged@2", "Judged@4", "Judged@10"])
    assert result.aggregate == {"Judged@2": 0.5, "Judged@4": 0.75, "Judged@10": 0.75}
    empty = rm.evaluate({"q": {"a": 1}}, rm.Run.from_lists({"q": []}), "judged@5")
    assert empty.per_query["q"]["judged@5"] is None  # nothing retrieved: NA


@pytest.mark.parametrize("seed", range(3))
def test_the_views_an_extension_kernel_reads_equal_their_definition(seed: int) -> None:
    """Every per-``rel`` view of a judged run, from the definition query by query: relevant
    docs and their ranks, R, bpref's N, hits at a cutoff, and each relevant doc's first rank
    as its own group when the qrels give none. Each ``rel`` is cached apart: asking for one
    level never answers for another."""
    rng = random.Random(seed)
    judgments: dict[str, dict[str, int]] = {}
    rankings: dict[str, list[str]] = {}
    for q in range(30):
        docs = [f"d{i}" for i in range(25)]
        judgments[f"q{q}"] = {d: rng.choice([-1, 0, 1, 2, 3]) for d in rng.sample(docs, 8)}
        rankings[f"q{q}"] = rng.sample(docs, rng.randrange(0, 20))
    judgments["none"] = {"z": 0}  # no relevant doc: no group
    qrels = rm.Qrels.from_dict(judgments)
    judged = locate_judged(qrels, rm.Run.from_lists(rankings), list(judgments), depth=None)
    assert not judged.has_groups
    for rel in (3, 1, 2, 1, 3):  # again, in another order: the cache answers per level
        first, n_groups = judged.group_first_ranks(rel)
        rows, ranks = judged.relevant_at(rel)
        for row, (q, grades) in enumerate(judgments.items()):
            ranking = rankings.get(q, [])
            relevant = sorted(rank for rank, d in enumerate(ranking) if grades.get(d, -9) >= rel)
            assert ranks[rows == row].tolist() == relevant
            n_rel = sum(g >= rel for g in grades.values())
            assert judged.n_relevant(rel)[row] == n_rel == n_groups[row]
            assert judged.n_nonrelevant(rel)[row] == sum(0 <= g < rel for g in grades.values())
            assert judged.hits(5, rel)[row] == sum(r < 5 for r in relevant)
            assert judged.hits(None, rel)[row] == len(relevant)
            expected = relevant + [math.inf] * (first.shape[1] - len(relevant))
            assert first[row].tolist() == expected
        assert first.shape == (len(judgments), max(1, int(n_groups.max())))


def test_lists_are_judged_with_their_pool_and_an_empty_run_has_no_groups() -> None:
    """``locate_in_lists`` judges the pool with the lists (PROC@k's kernels can read it); a
    depth cut judges the pool apart, in full; a judged run of no query has one empty group
    column."""
    from ragmetrics.engine._locate import locate_in_lists

    judged = locate_in_lists({"q": {"a": 2, "b": 1}}, {"q": ["x", "a"]})
    assert judged.pooled() is judged and judged.hit_ranks.tolist() == [1]
    qrels = rm.Qrels.from_dict({"q": {"a": 2, "b": 1}})
    run = rm.Run.from_lists({"q": ["x", "a"]})
    cut = locate_judged(qrels, run, ["q"], depth=1, with_pool=True)
    assert cut.depth == 1 and cut.hit_ranks.tolist() == []
    assert cut.pooled().depth == 2 and cut.pooled().hit_ranks.tolist() == [1]
    unpooled = locate_in_lists({"q": {"a": 2}}, {"q": ["a"]}, with_pool=False)
    with pytest.raises(RuntimeError, match="was not located"):
        unpooled.pooled()
    qrels = rm.Qrels.from_dict({"q": {"a": 1}})
    nothing = locate_judged(qrels, rm.Run.from_lists({"q": ["a"]}), [], depth=None)
    first, n_groups = nothing.group_first_ranks(1)
    assert first.shape == (0, 1) and n_groups.tolist() == []


def test_one_ranking_names_its_query_and_precision_in_the_run_and_its_pool() -> None:
    """``locate_in_ranking`` (the adapters' single-query path) labels the judged run and its
    separately judged pool with the query id (``"q"`` unless given) and the precision the
    scores were compared at, as the batch path does."""
    from ragmetrics.engine._locate import locate_in_ranking

    plain = locate_in_ranking({"a": 1}, ("a", "b"), depth=None)
    assert plain.query_ids == ("q",) and plain.score_precision == "float64"
    cut = locate_in_ranking(
        {"a": 1, "b": 2},
        ("a", "x", "b"),
        query_id="question-7",
        depth=1,
        score_precision="float32",
        with_pool=True,
    )
    pool = cut.pooled()
    assert cut.query_ids == pool.query_ids == ("question-7",)
    assert cut.score_precision == pool.score_precision == "float32"
    assert cut.lengths.tolist() == [1] and pool.lengths.tolist() == [3]
    assert pool.judged_counts.tolist() == [2] and pool.hit_grades.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("seed", range(30))
def test_a_run_judged_once_for_its_pool_equals_it_judged_at_each_depth(
    seed: int, tmp_path: Path
) -> None:
    """With PROC's pool the run itself, the run is judged in full once and cut to the
    depth: field for field the judged run of the depth, its pool the run judged in full
    (scores with ties, queries missing from the run, empty rankings, both precisions)."""
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(30)]
    judgments, run = {}, {}
    for q in range(20):
        judgments[f"q{q}"] = {d: rng.randint(-1, 5) for d in rng.sample(docs, rng.randint(1, 9))}
        if rng.random() < 0.85:
            run[f"q{q}"] = {d: rng.choice([0.5, 0.25, 1.0, rng.random()]) for d in rng.sample(docs, rng.randint(0, 25))}  # fmt: skip
    qrels = rm.Qrels(judgments)
    ranked = rm.Run.from_dict(run)
    if seed % 2:  # read from a file: the bytes path (empty rankings become missing queries)
        path = tmp_path / "run.txt"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rm.FormatLossWarning)
            ranked.to_trec(path)
        ranked = rm.Run.from_trec(path)
    query_ids = sorted(judgments)
    for depth in (1, 3, 10, 40):
        for precision in ("float64", "float32"):
            settings = {"grade_map": None, "score_precision": precision}
            once = locate_judged(qrels, ranked, query_ids, depth=depth, with_pool=True, **settings)
            apart = locate_judged(qrels, ranked, query_ids, depth=depth, **settings)
            whole = locate_judged(qrels, ranked, query_ids, depth=None, **settings)
            assert _fields(once) == _fields(dataclasses.replace(apart, pool=whole))
