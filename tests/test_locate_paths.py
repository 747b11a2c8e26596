"""A scored run is judged without sorting it; the ranks it finds are those of the sorted run.

Each case judges the same results twice, as scored dicts (ranks counted from the scores) and
as the ranked lists of the sorted run (ranks are positions), and requires equal matrices.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragmetrics as rm
from ragmetrics.engine._locate import locate_judged
from tests.conftest import scored_run


def _assert_same_judgments(
    qrels: dict[str, dict[str, int]], scored: rm.Run, depth: int | None
) -> None:
    qrels_obj = rm.Qrels.from_dict(qrels)
    ranked = rm.Run.from_lists(scored.to_lists())
    query_ids = list(qrels)
    a = locate_judged(qrels_obj, scored, query_ids, depth=depth)
    b = locate_judged(qrels_obj, ranked, query_ids, depth=depth)
    for name in ("grades", "judged", "retrieved"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    for rel in (1, 2):
        for ours, theirs in zip(a.relevant_at(rel), b.relevant_at(rel), strict=True):
            assert np.array_equal(ours, theirs)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("depth", [None, 1, 5, 30])
def test_counted_ranks_equal_sorted_positions(seed: int, depth: int | None) -> None:
    rng = random.Random(seed)
    qrels, run = {}, {}
    for q in range(150):
        docs = [f"d{i}" for i in range(rng.randrange(1, 60))]
        qrels[f"q{q}"] = {
            d: rng.choice([-1, 0, 1, 2, 3])
            for d in rng.sample(docs, rng.randrange(1, min(8, len(docs)) + 1))
        }
        if rng.random() < 0.9:  # some judged queries have no ranking at all
            # coarse scores: many ties, broken by doc id descending
            run[f"q{q}"] = {
                d: rng.choice([0.1, 0.2, 0.3, rng.random()])
                for d in rng.sample(docs, rng.randrange(0, len(docs) + 1))
            }
    _assert_same_judgments(qrels, rm.Run.from_dict(run), depth)


@pytest.mark.parametrize("depth", [None, 3])
def test_equal_length_rankings_in_another_order(depth: int | None) -> None:
    """Every ranking has the same length (the reshape path); queries in another order, some
    judged queries absent from the run."""
    rng = random.Random(11)
    run = {f"q{q}": {f"d{i}": round(rng.random(), 1) for i in range(10)} for q in range(60)}
    qrels = {
        f"q{q}": {f"d{i}": rng.choice([0, 1, 2]) for i in rng.sample(range(14), 4)}
        for q in reversed(range(70))
    }
    _assert_same_judgments(qrels, rm.Run.from_dict(run), depth)


def test_very_uneven_rankings_are_sorted_instead() -> None:
    """One long ranking among short ones: padding would dwarf the run, so it is sorted."""
    run = {f"q{q}": {f"d{i}": float(i % 3) for i in range(2)} for q in range(50)}
    run["long"] = {f"d{i}": float(i % 7) for i in range(5000)}
    qrels = {q: {"d1": 1, "d0": 2, "d4": 1} for q in run}
    scored = rm.Run.from_dict(run)
    _assert_same_judgments(qrels, scored, None)


def test_infinite_scores_and_padding() -> None:
    run = rm.Run.from_dict(
        {"q": {"a": float("-inf"), "b": 0.0, "c": float("inf")}, "r": {"x": float("-inf")}}
    )
    assert run["q"] == ("c", "b", "a")
    _assert_same_judgments({"q": {"a": 1, "c": 1}, "r": {"x": 1}}, run, None)
    assert rm.evaluate({"q": {"a": 1}}, run, ["mrr"]).aggregate["mrr"] == pytest.approx(1 / 3)


def test_ties_with_a_missing_judged_doc() -> None:
    # all scores equal: the rank is the number of greater doc ids
    run = rm.Run.from_dict({"q": dict.fromkeys("abcde", 1.0)})
    qrels = {"q": {"b": 1, "z": 1}}
    _assert_same_judgments(qrels, run, None)
    assert rm.evaluate(qrels, run, ["mrr"]).aggregate["mrr"] == pytest.approx(1 / 4)


def test_ranking_is_made_only_when_asked() -> None:
    run = rm.Run.from_dict({"q": {"a": 0.1, "b": 0.9}})
    rm.evaluate({"q": {"a": 1}}, run, ["mrr"])
    assert not run._ranked  # evaluation did not sort
    assert run["q"] == ("b", "a") and not run._ranked  # one query asked: sorted alone
    big = rm.Run.from_dict({f"q{i}": {"a": 0.1, "b": float(i % 2)} for i in range(100)})
    asked = [big[f"q{i}"] for i in range(100)]  # past the first few, the run is ranked once
    assert "float64" in big._ranked
    assert asked == [("b", "a") if i % 2 else ("a", "b") for i in range(100)]
    assert big.scores("q1") == (1.0, 0.1) and big.scores("q2") == (0.1, 0.0)


def test_a_long_ranking_of_judged_tied_docs(tmp_path: Path) -> None:
    """Rows holding many judged docs are ranked by sorting (not by comparing each judged doc
    with the whole row), and their positions looked up, not searched: the same ranks."""
    rng = random.Random(3)
    run = {"long": {f"d{i}": float(rng.randrange(5)) for i in range(3000)}}
    run |= {f"q{q}": {f"d{i}": float(rng.randrange(3)) for i in range(20)} for q in range(30)}
    qrels = {q: {d: rng.choice([0, 1, 2]) for d in docs} for q, docs in run.items()}
    qrels["short"] = {"d1": 1}
    for depth in (None, 100):
        _assert_same_judgments(qrels, rm.Run.from_dict(run), depth)
        lines = [f"{q} Q0 {d} 0 {s} t\n" for q, docs in run.items() for d, s in docs.items()]
        (tmp_path / "run.txt").write_text("".join(lines))
        from_bytes = rm.Run.from_trec(tmp_path / "run.txt")  # ids kept as bytes
        _assert_same_judgments(qrels, from_bytes, depth)


def test_runs_written_in_rank_order_take_their_positions() -> None:
    """A run whose rows strictly fall (a TREC file in rank order, no ties) is ranked by
    position, checked once; a tie, a rise, or a row boundary hidden by empty rows is not."""
    from ragmetrics.data._store import store_of

    falling = {"a": {"x": 0.9, "y": 0.5}, "b": {}, "c": {"x": 0.95, "z": 0.2}}
    assert store_of(rm.Run.from_dict(falling)).in_rank_order("float64")
    for bad in (
        {"a": {"x": 0.9, "y": 0.9}},  # a tie: ids decide
        {"a": {"x": 0.1, "y": 0.5}},  # a rise
        {"e": {}, "a": {"x": 0.9}, "b": {"y": 0.1, "z": 0.7}},  # empty first row
        {"a": {"x": 0.9, "y": 0.1, "z": 0.5}, "b": {}},  # empty last row
        {"a": {"x": 1.00000001, "y": 1.0}},  # falls in float64, ties in float32
    ):
        run = rm.Run.from_dict(bad)
        precision = "float32" if "x" in bad["a"] and bad["a"]["x"] == 1.00000001 else "float64"
        assert not store_of(run).in_rank_order(precision)
        qrels = {q: dict.fromkeys(docs, 1) for q, docs in bad.items() if docs}
        _assert_same_judgments(qrels, run, None)


@pytest.mark.parametrize("seed", range(3))
def test_runs_in_rank_order_with_ties_sort_only_their_ties(seed: int) -> None:
    """A run whose rows never rise (a TREC file in rank order, with ties) is ranked by
    sorting only its runs of tied docs by id; equal to the ranked lists at every depth."""
    from ragmetrics.data._store import store_of

    rng = random.Random(seed)
    run: dict[str, dict[str, float]] = {"empty-first": {}}
    qrels: dict[str, dict[str, int]] = {"empty-first": {"x": 1}}
    for q in range(200):
        docs = [f"d{i}" for i in rng.sample(range(10_000), rng.randrange(1, 40))]
        scores = sorted((rng.choice([0.5, 0.25, rng.random()]) for _ in docs), reverse=True)
        run[f"q{q}"] = dict(zip(docs, scores))  # ids in no order within a tie
        qrels[f"q{q}"] = {d: rng.choice([0, 1, 2]) for d in rng.sample(docs, len(docs) // 2 + 1)}
    run["empty-last"] = {}
    scored = rm.Run.from_dict(run)
    store = store_of(scored)
    assert store.in_rank_order_but_ties("float64") and not store.in_rank_order("float64")
    for depth in (None, 1, 7):
        _assert_same_judgments(qrels, scored, depth)
    # rows that fall in float64 but tie in float32 are in rank order but for ties there
    close = rm.Run.from_dict({"a": {"x": 1.00000001, "y": 1.0, "z": 0.5}})
    assert store_of(close).in_rank_order("float64")
    assert store_of(close).in_rank_order_but_ties("float32")
    assert not store_of(close).in_rank_order("float32")
    located = locate_judged(
        rm.Qrels.from_dict({"a": {"x": 1, "y": 2}}), close, ["a"], depth=None,
        score_precision="float32",
    )  # fmt: skip
    assert located.hit_ranks.tolist() == [0, 1] and located.hit_grades.tolist() == [2.0, 1.0]
    rising = rm.Run.from_dict({"a": {"x": 0.5, "y": 0.5, "z": 0.7}})
    assert not store_of(rising).in_rank_order_but_ties("float64")


def test_the_pool_of_a_run_located_without_it_is_refused() -> None:
    # a metric that needs PROC's pool on a run located without it: a programming error,
    # named, never a silent zero
    qrels = rm.Qrels.from_dict({"q": {"a": 5, "b": 4}})
    run = rm.Run.from_lists({"q": ["b", "x"]})
    located = locate_judged(qrels, run, ["q"], depth=None)
    with pytest.raises(RuntimeError) as caught:
        located.pooled()
    assert str(caught.value) == (
        "The candidate pool was not located: a metric whose spec has needs_pool=True was "
        "computed on a run located without with_pool=True."
    )
    assert locate_judged(qrels, run, ["q"], depth=None, with_pool=True).pooled() is not None


@pytest.mark.parametrize("n_short", [0, 300])
def test_float32_ties_are_read_on_every_ranking_path(n_short: int) -> None:
    # scores that differ only below float32's precision tie under score_precision="float32"
    # (broken by doc id, as trec_eval) whether ranks are counted in a padded matrix or, for
    # rankings too uneven to pad (one deep query among many short ones), by sorting
    rng = random.Random(n_short)
    run: dict[str, dict[str, float]] = {"deep": {}}
    qrels: dict[str, dict[str, int]] = {"deep": {}}
    for i in range(4000):
        base = float(rng.randint(0, 50))  # many ties, each split below float32's precision
        run["deep"][f"d{i}"] = base + rng.choice([0.0, 1e-12, 2e-12])
        if i % 7 == 0:
            qrels["deep"][f"d{i}"] = rng.randint(1, 3)
    for q in range(n_short):
        run[f"s{q}"] = {"a": 1.0, "b": 1.0 + 1e-12}
        qrels[f"s{q}"] = {"a": 1}
    rounded = {q: {d: float(np.float32(s)) for d, s in docs.items()} for q, docs in run.items()}
    metrics = ["map", "ndcg@20", "P@10", "mrr"]
    as32 = rm.evaluate(qrels, run, metrics, score_precision="float32").per_query
    assert as32 == rm.evaluate(qrels, rounded, metrics).per_query
    assert as32 != rm.evaluate(qrels, run, metrics).per_query  # the precision matters here


@pytest.mark.parametrize("cells", [7, 64])
def test_ranks_compared_block_by_block_equal_sorted_positions(
    monkeypatch: pytest.MonkeyPatch, cells: int
) -> None:
    """Located docs are compared with their rows a block at a time: with blocks of a few
    docs, ties met only in later blocks (after blocks with none) are still broken by id,
    each in its own block; uneven rows (NaN padding) and negative scores included."""
    from ragmetrics.data import _order

    monkeypatch.setattr(_order, "BLOCK_CELLS", cells)
    rng = random.Random(cells)
    qrels, run = {}, {}
    for q in range(120):
        docs = [f"d{i}" for i in rng.sample(range(1000), rng.randrange(1, 12))]
        tied = q >= 60  # the first half has distinct scores, the second many ties
        run[f"q{q}"] = {
            d: -rng.choice([0.5, 1.5]) if tied else -rng.random() - 0.01 * i
            for i, d in enumerate(docs)
        }
        qrels[f"q{q}"] = {d: rng.choice([0, 1, 2]) for d in rng.sample(docs, min(2, len(docs)))}
    for depth in (None, 3):
        _assert_same_judgments(qrels, rm.Run.from_dict(run), depth)


@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_tied_hits_are_marked_at_the_precision_ranked(precision: str) -> None:
    """``hit_tied`` marks a judged doc whose score equals the judged doc's just above it in
    the same query, at the precision the ranking used (prefs_* read it), whichever path
    ranked them (every doc judged: the run is sorted by its ties)."""
    close = 1.0 + 2.0**-30  # above 1.0 in float64, equal in float32
    run = rm.Run.from_dict(
        {
            "a": {"x": close, "y": 1.0, "z": 0.5, "w": 0.5, "v": 0.25},
            "b": {"p": 0.5, "q": 0.4},  # b's first doc scores as a's last tie: not a tie
        }
    )
    grades = {"x": 2, "y": 1, "z": 1, "w": 3, "v": 1}  # the grades tell the docs apart
    qrels = rm.Qrels.from_dict({"a": grades, "b": {"p": 1, "q": 1}})
    judged = locate_judged(qrels, run, ["a", "b"], depth=None, score_precision=precision)
    tied = judged.hit_tied
    assert tied is not None
    if precision == "float32":  # x and y tie: by id descending, y first
        order, marks = ["y", "x", "z", "w", "v"], [False, True, False, True, False]
    else:
        order, marks = ["x", "y", "z", "w", "v"], [False, False, False, True, False]
    assert tied.tolist() == [*marks, False, False]
    assert judged.hit_ranks.tolist() == [0, 1, 2, 3, 4, 0, 1]
    assert judged.hit_grades.tolist() == [grades[d] for d in order] + [1, 1]
    assert list(run.ranking("a", score_precision=precision)) == order  # ties: ids descending


def _paths_taken(
    monkeypatch: pytest.MonkeyPatch,
    run: dict[str, dict[str, float]],
    judged_share: float,
    whole: str = "",
) -> list[tuple[str, int]]:
    """Which way each located doc of ``run`` was ranked: ``(path, located docs)`` per call,
    the ranks checked against the sorted run's positions. About ``judged_share`` of each
    query's docs are judged, all of query ``whole``'s."""
    from ragmetrics.data import _order

    calls: list[tuple[str, int]] = []

    def spy(name: str, inner: Any, rows_at: int) -> Any:
        def wrapped(*args: Any) -> Any:
            calls.append((name, len(args[rows_at])))
            return inner(*args)

        return wrapped

    monkeypatch.setattr(_order, "_ranks_by_sorting", spy("sort", _order._ranks_by_sorting, 2))
    monkeypatch.setattr(
        _order, "_ranks_by_comparing", spy("compare", _order._ranks_by_comparing, 4)
    )
    monkeypatch.setattr(_order, "_ranks_among_ties", spy("ties", _order._ranks_among_ties, 1))
    rng = random.Random(len(run))
    qrels = {
        q: {d: 1 for d in docs if q == whole or rng.random() < judged_share}
        or {next(iter(docs)): 1}
        for q, docs in run.items()
    }
    _assert_same_judgments(qrels, rm.Run.from_dict(run), None)
    return calls  # the sorted run's ranks are its positions: no call


def test_each_ranking_takes_the_path_its_cost_rule_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cost rules of ``rank_of``, observed: a query with many located docs is sorted
    (n log n: a million judged docs take seconds, not hours) while the light ones beside it
    are compared with their row; rankings too uneven to pad are sorted; a run in rank order
    but for ties has only its ties ordered; a uniform run with few located docs a row is
    compared."""
    rng = random.Random(7)

    def scores(n: int) -> dict[str, float]:
        return {f"d{i}": rng.random() for i in rng.sample(range(100_000), n)}

    heavy_and_light = {"heavy": scores(300)} | {f"q{i}": scores(100) for i in range(20)}
    calls = _paths_taken(monkeypatch, heavy_and_light, 0.01, whole="heavy")
    assert ("sort", 300) in calls  # the heavy query, all of it judged below
    assert [name for name, _ in calls] == ["sort", "compare"]
    uneven = {"deep": scores(5000)} | {f"q{i}": scores(3) for i in range(100)}
    assert [name for name, _ in _paths_taken(monkeypatch, uneven, 0.01)] == ["sort"]
    uniform = {f"q{i}": scores(20) for i in range(50)}
    assert [name for name, _ in _paths_taken(monkeypatch, uniform, 0.5)] == ["compare"]
    in_order_but_ties = {
        f"q{i}": dict(zip(scores(20), sorted([0.5, 0.5, *np.linspace(0, 0.4, 18)])[::-1]))
        for i in range(50)
    }
    assert [name for name, _ in _paths_taken(monkeypatch, in_order_but_ties, 0.5)] == ["ties"]
    # the same with about one doc a query located: comparing those few costs less
    assert [name for name, _ in _paths_taken(monkeypatch, in_order_but_ties, 0.01)] == ["compare"]


@pytest.mark.parametrize("layout", ["uniform", "padded", "uneven"])
@pytest.mark.parametrize("written", ["shuffled", "ascending"])
def test_sorted_rankings_equal_pythons_sort_on_every_path(layout: str, written: str) -> None:
    """A run sorted whole (its rankings, a written file) is in trec_eval's order, score
    descending then doc id descending, against Python's own sort: rows of one length
    (reshaped), of lengths a padded matrix holds, and too uneven to pad (one lexsort). The
    check is independent of the code it checks (comparing two of our own paths would not
    see an order that both got wrong). Scores below zero and -inf must not change places
    with a padded row's filler."""
    rng = random.Random(f"{layout}-{written}")
    if layout == "uniform":
        sizes = [12] * 40
    elif layout == "padded":
        sizes = [rng.randint(1, 60) for _ in range(40)]  # rows past 16: not insertion-sorted
    else:
        sizes = [3000] + [rng.randint(1, 3) for _ in range(60)]
    run: dict[str, dict[str, float]] = {}
    for q, size in enumerate(sizes):
        docs = [f"d{rng.randrange(10**6)}" for _ in range(size)]
        # ties, negative scores (below a padding of 0) and -inf (equal to a padding of inf)
        choices = [0.25, -0.5, 0.75, float("-inf"), rng.random() - 0.5]
        scored = {d: float(rng.choice(choices)) for d in docs}
        if written == "ascending":  # written worst first, as some tools write
            scored = dict(sorted(scored.items(), key=lambda kv: (kv[1], kv[0])))
        run[f"q{q}"] = scored
    expected = {
        q: [d for d, _ in sorted(docs.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)]
        for q, docs in run.items()
    }
    assert rm.Run.from_dict(run).to_lists() == expected


def _tied_store(n_queries: int, depth: int, tied_pairs: int, seed: int = 0) -> Any:
    """The store of a run from dicts (string ids), each query ``depth`` docs with distinct
    scores but for ``tied_pairs`` pairs of equal scores in all, written in no order."""
    from ragmetrics.data._store import store_of

    rng = random.Random(seed)
    run: dict[str, dict[str, float]] = {}
    left = tied_pairs
    for q in range(n_queries):
        scores = [float(i) for i in range(depth)]
        for i in range(0, depth - 1, 2):
            if left:
                scores[i + 1] = scores[i]
                left -= 1
        rng.shuffle(scores)
        run[f"q{q}"] = {f"d{rng.randrange(10**9)}": s for s in scores}
    assert not left
    return store_of(rm.Run.from_dict(run))


def test_string_ids_are_encoded_once_only_where_ties_are_many() -> None:
    """Ties between string ids are broken on the strings when they are few and on the ids
    encoded once as bytes when they are many (past an eighth of the run's docs): each side
    of the threshold, by how many tied docs a whole sort meets, and by how many tied pairs
    the ranks counted without sorting compare."""
    from ragmetrics.data import _order

    n_docs = 16 * 10  # an eighth: 20 tied docs
    for pairs, encoded in ((10, False), (11, True), (80, True)):
        store = _tied_store(16, 10, pairs)
        order = store.ranked_order("float64")
        assert store.was_encoded is encoded, pairs
        fresh = _tied_store(16, 10, pairs)  # the same, unsorted
        assert np.array_equal(fresh.ranked_order("float64"), order)
    assert n_docs // 8 == 20
    # counting: every doc located, each tie seen from both sides (two pairs per tie)
    for pairs, encoded in ((10, False), (11, True), (80, True)):
        store = _tied_store(16, 10, pairs)
        rows = np.repeat(np.arange(16), 10)
        positions = np.tile(np.arange(10), 16)
        ranks = _order.rank_of(store, rows, positions, "float64")
        assert store.was_encoded is encoded, pairs
        expected = np.empty_like(ranks)
        order = _tied_store(16, 10, pairs).ranked_order("float64")
        place = np.empty_like(order)
        place[order] = np.arange(len(order))
        expected[:] = place - np.repeat(np.arange(16) * 10, 10)
        assert np.array_equal(ranks, expected)


def test_rows_of_one_length_are_compared_without_padding(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rankings of one length (top-k from one retriever) are compared as one reshaped
    matrix; only rankings of several lengths are padded."""
    from ragmetrics.data import _order

    padded: list[int] = []
    pad = _order.pad_rows

    def counting(*args: Any, **kwargs: Any) -> np.ndarray:
        padded.append(1)
        return pad(*args, **kwargs)

    monkeypatch.setattr(_order, "pad_rows", counting)
    from ragmetrics.data._store import store_of

    uneven = {
        f"q{q}": {f"d{i}": float((i * 7) % 5 + i) for i in range(q % 9 + 2)} for q in range(30)
    }
    for store, expected in (
        (_tied_store(30, 10, 0, seed=3), []),
        (store_of(rm.Run.from_dict(uneven)), [1]),
    ):
        lengths = store.lengths
        rows = np.repeat(np.arange(len(lengths)), lengths)
        positions = np.concatenate([np.arange(n) for n in lengths.tolist()])
        padded.clear()
        ranks = _order.rank_of(store, rows, positions, "float64")
        assert padded == expected
        order = store.ranked_order("float64")
        place = np.empty_like(order)
        place[order] = np.arange(len(order))
        assert np.array_equal(ranks, place - np.repeat(store.offsets[:-1], lengths))


@pytest.mark.parametrize("source", ["trec", "dict"])
@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_a_run_in_rank_order_has_its_runs_of_ties_ordered_by_id(
    tmp_path: Any, source: str, precision: str
) -> None:
    """A run written in rank order but for runs of tied scores (2 to 6 docs, in any order of
    their ids): each judged doc's rank equals its place in Python's own sort, score
    descending then doc id descending. Runs of three or more are not their own inverse, so
    a rank read from the wrong side of the permutation shows. From dicts, one query in the
    middle has an empty ranking: a tie never spans the rows on either side of it."""
    rng = random.Random(f"{source}-{precision}")
    run: dict[str, dict[str, float]] = {}
    for q in range(60):
        if source == "dict" and q == 30:
            run[f"q{q}"] = {}
            continue
        scores: list[float] = []
        value = 100.0
        while len(scores) < 30:
            value -= rng.choice([0.25, 0.5, 1.0])
            scores += [value] * rng.choice([1, 1, 2, 3, 4, 6])
        docs = rng.sample([f"d{i:05d}" for i in range(100_000)], len(scores))
        run[f"q{q}"] = dict(zip(docs, scores, strict=True))  # written in this order
    # two rows of one score each, side by side (from dicts, an empty row between them): the
    # last doc of one and the first of the next have equal scores but do not tie
    run["flat-a"] = dict.fromkeys(rng.sample(range(10**6), 10), 1.0)
    if source == "dict":
        run["flat-empty"] = {}
    run["flat-b"] = dict.fromkeys(rng.sample(range(10**6), 10), 1.0)
    run["flat-a"] = {f"f{d}": v for d, v in run["flat-a"].items()}
    run["flat-b"] = {f"f{d}": v for d, v in run["flat-b"].items()}
    scored = scored_run(run, source, tmp_path)
    # each doc judged with its own grade: the grades in rank order name the docs
    qrels = {
        q: {d: 1 + i for i, d in enumerate(ranking)} or {"unretrieved": 1}
        for q, ranking in run.items()
    }
    judged = locate_judged(
        rm.Qrels.from_dict(qrels), scored, list(qrels), depth=None, score_precision=precision
    )
    expected_rows, expected_ranks, expected_grades = [], [], []
    for row, (q, ranking) in enumerate(run.items()):
        ordered = sorted(ranking.items(), key=lambda item: (item[1], item[0]), reverse=True)
        expected_rows += [row] * len(ordered)
        expected_ranks += range(len(ordered))
        expected_grades += [qrels[q][d] for d, _ in ordered]
    assert judged.hit_rows.tolist() == expected_rows
    assert judged.hit_ranks.tolist() == expected_ranks
    assert judged.hit_grades.tolist() == expected_grades
    longest_tie = max(list(r.values()).count(v) for r in run.values() for v in r.values())
    assert longest_tie >= 3
