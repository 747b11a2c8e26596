"""The columnar store behind Run and Qrels, and each branch of its hashed join.

The join (``Store._hash_join``) answers only when it is sure; every way it can be wrong is a
branch that hands over to the string path (``None``). Each test below builds the case of one
branch, checks that the branch decides (the join's answer), and that the numbers equal the
string path's; hashes are replaced by hand-made ones where a case needs a collision.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragmetrics as rm
from ragmetrics.data._store import Store, store_of
from ragmetrics.formats import _packed
from tests.conftest import scored_run

METRICS = ["P@1", "P@3", "recall@3", "map", "mrr", "ndcg@3"]


@pytest.fixture(autouse=True, params=["sorted", "compared"])
def join_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test runs against both ways of the join: rows of keys sorted, or each judged
    doc compared with its query's results (chosen by cost; forced here)."""
    from ragmetrics.data import _store

    monkeypatch.setattr(_store, "_SORT_STEPS", 0 if request.param == "sorted" else 10**9)
    return str(request.param)


def _write_trec(path: Path, lines: list[tuple[str, str, float]]) -> Path:
    path.write_text("".join(f"{q} Q0 {d} 0 {s!r} t\n" for q, d, s in lines))
    return path


def _trec_run(tmp_path: Path, lines: list[tuple[str, str, float]]) -> rm.Run:
    run = rm.Run.from_trec(_write_trec(tmp_path / "run.txt", lines))
    assert store_of(run).ids is not None  # kept as bytes: the hashed join applies
    return run


def _join(qrels: rm.Qrels, run: rm.Run) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    judged = store_of(qrels)
    return store_of(run)._hash_join(judged, store_of(run).rows(list(judged.query_ids)))


def _same_as_strings(qrels: rm.Qrels, run: rm.Run) -> dict[str, dict[str, float | None]]:
    by_strings = rm.Run.from_dict(run.to_dict())
    assert store_of(by_strings).ids is None
    found = rm.evaluate(qrels, run, METRICS).per_query
    assert found == rm.evaluate(qrels, by_strings, METRICS).per_query
    return found


def _hashes_by_hand(table: dict[bytes, int]) -> object:
    """A hash function that gives the ids of ``table`` their hash, and others the real one.

    Each hand-made hash sets bits the join keeps (16 to 62) and varies in the low bits it
    drops, so ids that differ only there still collide."""
    real = _packed.hashes

    def hashes(ids: np.ndarray, words: int) -> np.ndarray:
        hashed = real(ids, words).copy()
        for i, doc in enumerate(ids.tolist()):
            if doc in table:
                hashed[i] = np.uint64(table[doc] << 40) | np.uint64(len(doc) * 77 + i)
        return hashed

    return hashes


def test_judged_ids_wider_than_every_run_id(tmp_path: Path) -> None:
    # run ids fit one 8-byte word; a judged id needs two: both sides must be hashed at two
    run = _trec_run(tmp_path, [("q1", "d1", 0.9), ("q1", "d2", 0.5), ("q2", "d3", 0.7)])
    qrels = rm.Qrels.from_dict({"q1": {"d2": 2, "a-much-longer-id": 1}, "q2": {"d3": 1}})
    located = _join(qrels, run)
    assert located is not None and len(located[0]) == 2  # the join answered and found both
    found = _same_as_strings(qrels, run)
    assert found["q1"]["ndcg@3"] == pytest.approx(0.4796249331)
    assert found["q2"]["P@1"] == 1.0


def test_a_result_and_a_judged_doc_with_one_hash_are_compared_byte_for_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "a" is retrieved, "b" is judged: their hashes collide; only the bytes tell them apart
    monkeypatch.setattr(_packed, "hashes", _hashes_by_hand({b"a": 5, b"b": 5}))
    run = _trec_run(tmp_path, [("q1", "a", 0.9), ("q1", "c", 0.5)])
    qrels = rm.Qrels.from_dict({"q1": {"b": 1, "c": 1}})
    assert _join(qrels, run) is None
    found = _same_as_strings(qrels, run)
    assert found["q1"]["P@1"] == 0.0 and found["q1"]["mrr"] == 0.5


def test_two_results_with_one_hash_hand_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, join_kind: str
) -> None:
    # "a" and "c" are both retrieved for q1 and collide: not a result and its judgment.
    # Sorted keys cannot tell which pair is which and hand over; compared, results never
    # meet each other, and "b" is found where it is
    monkeypatch.setattr(_packed, "hashes", _hashes_by_hand({b"a": 6, b"c": 6}))
    run = _trec_run(tmp_path, [("q1", "a", 0.9), ("q1", "c", 0.5), ("q1", "b", 0.1)])
    qrels = rm.Qrels.from_dict({"q1": {"b": 1}})
    located = _join(qrels, run)
    if join_kind == "sorted":
        assert located is None
    else:
        assert located is not None and [a.tolist() for a in located] == [[0], [2], [0]]
    assert _same_as_strings(qrels, run)["q1"]["mrr"] == pytest.approx(1 / 3)


def test_a_short_key_shared_with_an_earlier_result_is_looked_for_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "a" and "b" share the top 16 bits of their hashes (both 0 here) but not the rest: the
    # compared join's short key of "b" first meets "a"; it must still find "b" at rank 2,
    # beside "c" found at once (in any order: the caller sorts hits by rank). "x" (not
    # retrieved) meets "a" the same way and must not be found at all
    monkeypatch.setattr(_packed, "hashes", _hashes_by_hand({b"a": 5, b"b": 6, b"x": 7}))
    run = _trec_run(tmp_path, [("q1", "a", 0.9), ("q1", "b", 0.5), ("q1", "c", 0.1)])
    qrels = rm.Qrels.from_dict({"q1": {"x": 3, "b": 1, "c": 2}})
    located = _join(qrels, run)
    assert located is not None
    assert sorted(zip(*(a.tolist() for a in located))) == [(0, 1, 1), (0, 2, 2)]
    assert _same_as_strings(qrels, run)["q1"]["mrr"] == 0.5


def test_a_short_key_never_meets_the_padding_of_a_short_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the last query's row is padded to the longest; "zz" has the short key 1 (its top 16
    # hash bits are 0): it must not be taken for the padding past the end of the ids
    monkeypatch.setattr(_packed, "hashes", _hashes_by_hand({b"zz": 5}))
    run = _trec_run(
        tmp_path, [("q2", "a", 0.9), ("q2", "b", 0.5), ("q2", "c", 0.1), ("q1", "d", 0.3)]
    )
    qrels = rm.Qrels.from_dict({"q1": {"zz": 1, "d": 2}})
    located = _join(qrels, run)
    assert located is not None
    assert [a.tolist() for a in located] == [[0], [0], [1]]  # "d": column 0, judged doc 1
    assert _same_as_strings(qrels, run)["q1"]["P@1"] == 1.0


def test_two_judged_docs_with_one_hash_hand_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_packed, "hashes", _hashes_by_hand({b"x": 7, b"y": 7}))
    run = _trec_run(tmp_path, [("q1", "a", 0.9), ("q1", "y", 0.5)])
    qrels = rm.Qrels.from_dict({"q1": {"x": 2, "y": 1}})
    assert _join(qrels, run) is None
    assert _same_as_strings(qrels, run)["q1"]["P@3"] == pytest.approx(1 / 3)


def test_a_result_its_judgment_and_a_third_id_with_one_hash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_packed, "hashes", _hashes_by_hand({b"a": 8, b"c": 8}))
    run = _trec_run(tmp_path, [("q1", "a", 0.9), ("q1", "b", 0.5)])
    qrels = rm.Qrels.from_dict({"q1": {"a": 1, "c": 3}})
    assert _join(qrels, run) is None
    assert _same_as_strings(qrels, run)["q1"]["P@1"] == 1.0


def test_equal_ids_join_whatever_their_low_hash_bits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the hand-made hashes of "a" differ in the bits the join drops: it must still find "a"
    monkeypatch.setattr(_packed, "hashes", _hashes_by_hand({b"a": 9}))
    run = _trec_run(tmp_path, [("q1", "z", 0.9), ("q1", "a", 0.5)])
    qrels = rm.Qrels.from_dict({"q1": {"a": 1}})
    located = _join(qrels, run)
    assert located is not None and located[1].tolist() == [1]
    assert _same_as_strings(qrels, run)["q1"]["mrr"] == 0.5


def test_judgments_too_uneven_for_one_matrix_hand_over(tmp_path: Path) -> None:
    run = _trec_run(tmp_path, [(f"q{q}", f"d{i}", float(i)) for q in range(10) for i in range(5)])
    many = {f"x{i}": 1 for i in range(5000)}  # one query judges far more than the others
    judgments = {f"q{q}": {"d0": 2} for q in range(10)}
    qrels = rm.Qrels.from_dict({**judgments, "q1": {"d4": 1, **many}})
    assert _join(qrels, run) is None
    found = _same_as_strings(qrels, run)
    assert found["q1"]["P@1"] == 1.0 and found["q3"]["mrr"] == 0.2


def test_the_three_forms_of_doc_ids_give_the_same_columns() -> None:
    maps = [{"b": 2, "a": 0}, {}, {"c": 1}]
    by_maps = Store.from_maps(["q1", "q2", "q3"], maps)
    by_tuples = Store.from_tuples(["q1", "q2", "q3"], [("b", "a"), (), ("c",)], np.array([2, 0, 1]))
    ids = _packed.encode([["b", "a", "c"]], 3)
    assert ids is not None
    by_bytes = Store.from_bytes(["q1", "q2", "q3"], np.array([2, 0, 1]), ids, np.array([2, 0, 1]))
    for store in (by_maps, by_tuples, by_bytes):
        assert store.tuples() == [("b", "a"), (), ("c",)]
        assert store.maps() == maps
        assert store.values is not None and store.values.tolist() == [2, 0, 1]
        assert store.offsets.tolist() == [0, 2, 2, 3]
        assert store.rows(["q3", "x", "q1"]).tolist() == [2, -1, 0]
        subset = store.subset(["q3", "q1"])
        assert subset.tuples() == [("c",), ("b", "a")] and subset.values is not None
        assert subset.values.tolist() == [1, 2, 0]
        assert store.greater(np.array([0]), np.array([0]), np.array([1])).tolist() == [True]
        ranked = store.ranked("float64")
        assert ranked.tuples() == [("b", "a"), (), ("c",)]


def test_ties_rank_by_doc_id_descending_in_every_form() -> None:
    values = np.array([1.0, 2.0, 1.0, 1.0])
    ids = _packed.encode([["b", "a", "d", "c"]], 4)
    assert ids is not None
    for store in (
        Store.from_tuples(["q"], [("b", "a", "d", "c")], values),
        Store.from_bytes(["q"], np.array([4]), ids, values),
    ):
        assert store.ranked("float64").tuples() == [("a", "d", "c", "b")]


@pytest.mark.parametrize("seed", range(3))
def test_tied_ids_of_many_widths_rank_as_strings_do(seed: int) -> None:
    # bytes ids are ordered as integers read big-endian, a word at a time: ids that share
    # their first words, a prefix of another, the edges of printable ASCII, 1 to 30 bytes
    rng = random.Random(seed)
    stems = ["", "abcdefgh", "abcdefghabcdefgh", "~", "!"]
    alphabet = "!09AZaz~"
    queries = []
    for _ in range(40):
        docs = {
            rng.choice(stems) + "".join(rng.choices(alphabet, k=rng.randint(0, 14))) or "x"
            for _ in range(rng.randint(1, 30))
        }
        queries.append(sorted(docs, key=lambda _: rng.random()))
    values = np.array([float(rng.randint(0, 2)) for docs in queries for _ in docs])
    lengths = np.array([len(docs) for docs in queries])
    ids = _packed.encode(queries, int(lengths.sum()))
    assert ids is not None
    store = Store.from_bytes([f"q{i}" for i in range(40)], lengths, ids, values)
    starts = np.concatenate(([0], np.cumsum(lengths)))
    expected = [
        tuple(doc for _, doc in sorted(zip(values[a:b].tolist(), docs), reverse=True))
        for docs, a, b in zip(queries, starts, starts[1:])
    ]
    assert store.ranked("float64").tuples() == expected


def test_a_ranking_longer_than_the_column_tags_hands_over(tmp_path: Path) -> None:
    # a result's column is kept in the low 15 bits of its key: past that, strings answer
    lines = [("q1", f"d{i}", float(-i)) for i in range(70_000)]
    run = _trec_run(tmp_path, lines)
    # columns past 65,535 overflow into the hash: d66001's key would then match nothing
    # (and d66000's would pair with the wrong column, caught by the byte check)
    qrels = rm.Qrels.from_dict({"q1": {"d66001": 1}})
    assert _join(qrels, run) is None
    found = _same_as_strings(qrels, run)
    assert found["q1"]["mrr"] == pytest.approx(1 / 66_002)


def test_a_join_of_many_queries_spans_several_blocks(tmp_path: Path) -> None:
    # 30,000 queries: more than one block of rows (sorted) or of judged docs (compared); the
    # join must answer (not hand over) and agree with the string path
    rng = np.random.default_rng(5)
    lines, judgments = [], {}
    for q in range(30_000):
        docs = rng.choice(1_000_000, size=8, replace=False)
        lines.extend((f"q{q}", f"d{d}", float(8 - i)) for i, d in enumerate(docs))
        judged = [*rng.choice(docs, size=3, replace=False), 2_000_000 + q]
        judgments[f"q{q}"] = {f"d{d}": int(rng.integers(0, 3)) for d in judged}
    run = _trec_run(tmp_path, lines)
    qrels = rm.Qrels.from_dict(judgments)
    located = _join(qrels, run)
    assert located is not None and len(located[0]) == 90_000
    _same_as_strings(qrels, run)


@pytest.mark.parametrize("judged_share", ["few", "many"])
def test_string_runs_find_judged_docs_alike_by_sets_and_by_scanning(
    judged_share: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # runs of strings find their judged docs by intersecting each query's judged docs with
    # its results, or (judged docs many) by looking each result up in its query's judgments;
    # both must give the same rows, positions and values, with ids no bytes path reads
    from ragmetrics.data import _store

    rng = random.Random(len(judged_share))
    alphabet = ["a", "b", "é", " ", "\t", "0", "中", "\x00"]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(300):
        pool = list({"".join(rng.choices(alphabet, k=rng.randint(1, 4))) for _ in range(40)})
        if q % 9:
            run[f"q{q}"] = {
                d: rng.choice([0.5, rng.random()]) for d in rng.sample(pool, len(pool) // 2)
            }
        count = 2 if judged_share == "few" else len(pool) // 2
        qrels[f"q{q}"] = {d: rng.randint(-1, 4) for d in rng.sample(pool, count)}
    judged, results = rm.Qrels.from_dict(qrels), rm.Run.from_dict(run)
    store, judged_store = store_of(results), store_of(judged)
    rows = store.rows(list(judged_store.query_ids))
    answers = []
    for hits in (0, 10**9):  # never scan, always scan; with a progress bar or without
        monkeypatch.setattr(_store, "_SCAN_HITS", hits)
        for progress in (False, True):
            found_rows, positions, values = store.find(judged_store, rows, progress=progress)
            answers.append(sorted(zip(found_rows.tolist(), positions.tolist(), values.tolist())))
    assert answers[0] == answers[1] == answers[2] == answers[3] and len(answers[0]) > 100
    expected = sorted(
        (row, position, float(qrels[query][doc]))
        for row, query in enumerate(judged_store.query_ids)
        for position, doc in enumerate(store.tuples()[rows[row]] if rows[row] >= 0 else ())
        if doc in qrels[query]
    )
    assert answers[0] == expected


def test_a_repeated_doc_in_a_run_too_uneven_to_pad_is_found(tmp_path: Path) -> None:
    """One query of 5,000 results beside 2,000 of one or two: too uneven for one padded
    matrix, so the store cannot rule repeats out by its hashes and regroups the run, which
    keeps the best-scored copy of a repeated doc and counts the other."""
    lines = [f"q0 Q0 d{i} {i} {1 - i / 10_000:.6f} t\n" for i in range(5_000)]
    for q in range(1, 2_001):
        lines.append(f"q{q} Q0 d{q} 1 0.5 t\n")
        if q == 7:  # q7's doc again, next to it, with a better score
            lines.append("q7 Q0 d7 2 0.9 t\n")
    path = tmp_path / "uneven.txt"
    path.write_text("".join(lines))
    run = rm.Run.from_trec(path)
    assert run["q7"] == ("d7",) and run.scores("q7") == (0.9,)
    assert run.duplicates == {"q7": 1}
    qrels = rm.Qrels.from_dict({"q7": {"d7": 1}})
    assert rm.evaluate(qrels, run, ["P@2"]).aggregate == {"P@2": 0.5}


@pytest.mark.parametrize("source", ["dict", "trec"])
def test_a_run_in_rank_order_in_float64_is_tied_in_float32(source: str, tmp_path: Path) -> None:
    """Rows written in descending score order, as systems write them, whose scores differ
    only past float32's precision: ranked as given with ``float64``, but tied, and so by doc
    id descending, with ``float32`` (pytrec_eval's order), whichever path checks the order."""
    rng = random.Random(3)
    results: dict[str, dict[str, float]] = {}
    for q in range(200):
        base = [1.0 - k / 64 for k in range(10)]
        docs = sorted(rng.sample(range(1000), 20))  # ascending ids: float32 ties reverse them
        scores = [b + e * 1e-12 for b in base for e in (1, 0)]  # pairs equal in float32
        results[f"q{q}"] = {f"d{d:03d}": s for d, s in zip(docs, scores, strict=True)}
    run = scored_run(results, source, tmp_path)
    qrels = rm.Qrels.from_dict({q: {next(iter(scored)): 1} for q, scored in results.items()})
    for precision, expected in (("float64", 1.0), ("float32", 0.5)):
        got = rm.evaluate(qrels, run, ["mrr"], score_precision=precision).aggregate["mrr"]
        assert got == expected, precision


def test_every_array_a_store_holds_is_read_only(tmp_path: Path) -> None:
    """A store is shared by every result built from it: its arrays (lengths, offsets,
    values, ids, the encoded ids it keeps) refuse writes, in each of its three forms."""
    by_bytes = store_of(_trec_run(tmp_path, [("q1", "d1", 0.9), ("q1", "d2", 0.5)]))
    by_tuples = store_of(rm.Run.from_dict({"q1": {"d1": 0.9, "d2": 0.5}}))
    by_maps = store_of(rm.Qrels.from_dict({"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1}}))
    for store in (by_bytes, by_tuples, by_maps):
        arrays = [store.lengths, store.offsets, store.values, store.encoded()]
        if store.ids is not None:
            arrays.append(store.ids)
        for array in arrays:
            assert array is not None
            with pytest.raises(ValueError, match="read-only"):
                array[0] = array[0]


def test_too_few_judged_docs_choose_the_set_join_without_reading_a_result() -> None:
    # 2 judged docs against 20 results a query cannot be a tenth of hits: the choice is made
    # on the counts alone (a result here would raise if it were looked up: a list is unhashable)
    from ragmetrics.data._store import _mostly_hits

    judged = [{"a": 1, "b": 0}] * 50
    unreadable: list[tuple[Any, ...]] = [tuple([[]] * 20)] * 50
    assert _mostly_hits(judged, unreadable) is False
    with pytest.raises(TypeError):  # many judged docs: the sample is intersected
        _mostly_hits([dict.fromkeys("abcdefghij", 1)] * 50, unreadable)


@pytest.mark.parametrize("hits", [0, 10**9])
def test_joins_of_strings_show_one_judging_bar_over_the_queries(
    hits: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # the set join (few hits) and the scan join (many) both count queries, named "judging"
    from ragmetrics.data import _store

    monkeypatch.setattr(_store, "_SCAN_HITS", hits)
    qrels = rm.Qrels.from_dict({f"q{q}": {"d1": 1, "d2": 0} for q in range(37)})
    run = rm.Run.from_dict({f"q{q}": {"d1": 0.5, "d3": 0.4} for q in range(37)})
    judged, results = store_of(qrels), store_of(run)
    rows = results.rows(list(judged.query_ids))
    found_rows, positions, values = results.find(judged, rows, progress=True)
    assert found_rows.tolist() == list(range(37)) and set(positions.tolist()) == {0}
    assert values.dtype == np.float64 and set(values.tolist()) == {1.0}
    bar = capsys.readouterr().err
    assert bar.startswith("\rjudging: ") and "| 37/37 [" in bar
    results.find(judged, rows)  # no bar unless asked
    assert capsys.readouterr().err == ""


def test_a_repeat_in_a_row_shorter_than_others_is_found(tmp_path: Path) -> None:
    """Rows of uneven lengths share one padded matrix of hashes: a doc repeated in a short
    row must be told from the padding beside it, wherever its hash sorts among its row's.
    One repeat a run (a second, found, would send the whole run to the string path)."""
    rng = random.Random(4)
    path = tmp_path / "run.txt"
    for _ in range(40):
        lines = [("q-long", f"x{i}", float(-i)) for i in range(40)]
        n = rng.randint(20, 30)  # more docs than padding: the padding pairs cannot cover it
        docs = [f"d{d}" for d in rng.sample(range(10**6), n)]
        lines.extend(("q-short", d, float(n - i)) for i, d in enumerate(docs))
        lines.append(("q-short", docs[rng.randrange(n)], -1.0))  # lower: the first stays
        run = rm.Run.from_trec(_write_trec(path, lines))
        assert run.duplicates == {"q-short": 1}
        assert run["q-short"] == tuple(docs)


def test_a_judged_query_missing_from_the_run_finds_nothing(tmp_path: Path) -> None:
    # a query the run lacks has no results to meet: not even the doc that opens the run
    run = _trec_run(tmp_path, [("q1", "d1", 0.9), ("q1", "d2", 0.5), ("q2", "d3", 0.7)])
    qrels = rm.Qrels.from_dict({"q0": {"d1": 1}, "q1": {"d2": 1}, "q2": {"d3": 1}})
    located = _join(qrels, run)
    assert located is not None
    assert sorted(zip(located[0].tolist(), located[1].tolist(), strict=True)) == [(1, 1), (2, 0)]
    found = rm.evaluate(qrels, run, ["P@1"], missing="zero").per_query
    assert found == {"q0": {"P@1": 0.0}, "q1": {"P@1": 0.0}, "q2": {"P@1": 1.0}}


@pytest.mark.parametrize("content", ["split", "non-ascii"])
def test_qrels_read_by_the_careful_path_keep_integer_grades(content: str, tmp_path: Path) -> None:
    # qrels the fast reader hands over (a query split across the file; an id it cannot
    # keep as bytes) are integers all the same: not "real-valued" grades
    second = "q1 0 d3 2\n" if content == "split" else "q2 0 dé 2\n"
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 d1 1\nq2 0 d2 0\n" + second)
    qrels = rm.Qrels.from_trec(path)
    assert not qrels.has_real_grades
    assert qrels.max_grade() == 2 and isinstance(qrels.max_grade(), int)


@pytest.mark.parametrize("seed", range(6))
def test_run_starts_names_where_each_run_of_equal_rows_starts(seed: int) -> None:
    """The linear-time start of each item's run equals a binary search for its value, on
    sorted rows with runs of every length (one, many, the whole array) and on none."""
    from ragmetrics._util.arrays import run_starts

    rng = np.random.default_rng(seed)
    size = [0, 1, 2, 50, 1000, 5000][seed]
    rows = np.sort(rng.integers(0, max(1, size // (seed + 1)), size))
    assert run_starts(rows).tolist() == np.searchsorted(rows, rows).tolist()
    assert run_starts(np.zeros(size, dtype=np.int64)).tolist() == [0] * size


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("tie_width", [None, 16])
@pytest.mark.parametrize(
    "written", ["as drawn", "in trec_eval's order", "ties ascending", "one tie swapped"]
)
def test_ties_are_ranked_by_id_descending_in_runs_short_and_long(
    tmp_path: Path,
    seed: int,
    tie_width: int | None,
    written: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Tied scores are ranked by doc id descending (trec_eval), from a TREC file (ids as
    bytes) and from dicts (ids as strings), equal to a plain sort, query by query and for
    the whole run at once: runs of ties (each sorted as a row) whose ids share their first 8
    bytes or differ only past them, and, with one score for a whole query, a long run; with
    rows held to 16, the long runs take the one global sort. A file already in trec_eval's
    order keeps it, one with every tie the other way round has its ties reversed, and one
    with a single tied pair the other way round is put right."""
    from ragmetrics.data import _order

    if tie_width is not None:
        monkeypatch.setattr(_order, "_TIE_WIDTH", tie_width)
    breaking = _order._break_ties
    rng = np.random.default_rng(seed)
    run: dict[str, dict[str, float]] = {}
    for q in range(60):
        n = int(rng.integers(1, 90))
        long_tie = q % 20 == 0  # one query tied throughout: a run of up to 89 ties
        prefix = ["FBIS0000", "FBIS000", "LA12", "D"][int(rng.integers(0, 4))]
        docs = {
            f"{prefix}{int(rng.integers(0, 40)):0{int(rng.integers(1, 12))}d}" for _ in range(n)
        }
        grid = 1 if long_tie else int(rng.integers(2, 6))
        run[f"q{q}"] = {d: float(rng.integers(0, grid)) / 4 for d in docs}
    lines = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    if written != "as drawn":  # doc id down (or up), then (stable) by query, score down
        lines.sort(key=lambda line: line[1], reverse=written != "ties ascending")
        lines.sort(key=lambda line: (line[0], -line[2]))
    if written == "one tie swapped":
        tied = [i for i in range(len(lines) - 1) if lines[i][::2] == lines[i + 1][::2]]
        i = tied[len(tied) // 2]
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    from_file = _trec_run(tmp_path, lines)
    broken = []
    monkeypatch.setattr(_order, "_break_ties", lambda *a: broken.append(1) or breaking(*a))
    from_file.rankings()
    assert bool(broken) is (written in ("as drawn", "one tie swapped"))
    for made in (from_file, rm.Run.from_dict(run)):
        expected = {
            q: tuple(sorted(docs, key=lambda d, docs=docs: (docs[d], d), reverse=True))
            for q, docs in run.items()
        }
        for q in run:
            assert made.ranking(q) == expected[q], q
        assert dict(zip(made.query_ids, made.rankings(), strict=True)) == expected


@pytest.mark.parametrize("repeat_in", [None, 0, 7, 299])
def test_repeats_are_found_in_any_block_and_told_from_a_collision(
    monkeypatch: pytest.MonkeyPatch, repeat_in: int | None
) -> None:
    """A bytes store rules out a doc held twice by a query by sorting each row's hashes, a
    block of rows at a time: a repeat in any block (the first, one inside, the last) is
    found, and two different ids with one full hash (a collision) are told apart by their
    bytes, not taken for a repeat."""
    from ragmetrics.data import _store

    monkeypatch.setattr(_store, "BLOCK_CELLS", 64)  # six rows of ten a block
    real = _packed.hashes

    def colliding(ids: np.ndarray, words: int) -> np.ndarray:
        hashed = real(ids, words).copy()
        hashed[np.isin(ids, np.array([b"x-one", b"y-two"]))] = np.uint64(12345)
        return hashed

    monkeypatch.setattr(_packed, "hashes", colliding)
    rows = [[f"q{q}d{j}" for j in range(10)] for q in range(300)]
    rows[3][2], rows[3][8] = "x-one", "y-two"  # one hash, two ids
    if repeat_in is not None:
        rows[repeat_in][9] = rows[repeat_in][4]
    ids = np.array([d.encode() for row in rows for d in row])
    store = Store.from_bytes(
        [f"q{q}" for q in range(300)], np.full(300, 10), ids, np.zeros(len(ids))
    )
    assert store.has_repeats() is (repeat_in is not None)
