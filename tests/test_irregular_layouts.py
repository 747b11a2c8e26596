"""Runs as users bring them (a doc repeated within a query, a query's rows apart, both) read
from TREC text and Parquet give what the same run as dicts gives: the same rankings, the
same metrics, the repeated copies counted per query. Reading them keeps the ids as bytes and
mends only the queries that need it (benchmarks/bench_irregular.py measures the cost)."""

from __future__ import annotations

import importlib.util
import itertools
import json
import random
import warnings
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragmetrics as rm
from tests.conftest import best_copies as _expected
from tests.conftest import standins_out_of_order

METRICS = ["ndcg@10", "map", "recall@20", "mrr", "P@5"]


def _rows(seed: int) -> list[tuple[str, str, float]]:
    rng = random.Random(seed)
    rows = []
    for q in range(60):
        docs = [f"d{rng.randrange(10**7)}" for _ in range(rng.randint(1, 30))]
        for d in docs:
            rows.append((f"q{q}", d, float(rng.randint(0, 9))))  # ties
        if q % 7 == 0 and len(docs) > 1:  # a repeat: the same doc again, another score
            rows.append((f"q{q}", docs[0], float(rng.randint(0, 9))))
            rows.append((f"q{q}", docs[-1], float(rng.randint(0, 9))))
    return rows


@pytest.mark.parametrize("layout", ["grouped", "by doc id", "shuffled"])
@pytest.mark.parametrize("fmt", ["trec", "parquet"])
def test_repeats_and_scattered_queries_read_as_the_dict_does(
    tmp_path: Path, layout: str, fmt: str
) -> None:
    rows = _rows(3)
    if layout == "by doc id":
        rows = sorted(rows, key=lambda r: r[1])
    elif layout == "shuffled":
        random.Random(4).shuffle(rows)
    expected, copies = _expected(rows)
    path = tmp_path / f"run.{'txt' if fmt == 'trec' else 'parquet'}"
    if fmt == "trec":
        path.write_text("".join(f"{q} Q0 {d} 0 {s} r\n" for q, d, s in rows))
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        columns = list(zip(*rows, strict=True))
        pq.write_table(
            pa.table({"query_id": columns[0], "doc_id": columns[1], "score": columns[2]}), path
        )
    run = rm.read_run(path)
    assert run.to_dict() == expected
    assert dict(run.duplicates) == copies and sum(copies.values()) > 0
    qrels = {q: dict.fromkeys(list(docs)[::3], 1) for q, docs in expected.items()}
    assert (
        rm.evaluate(qrels, run, METRICS).per_query
        == rm.evaluate(qrels, expected, METRICS).per_query
    )


def test_a_trec_file_whose_first_query_id_begins_with_a_bracket_is_trec(tmp_path: Path) -> None:
    """Its first byte made it JSON to the format sniffer: read as JSON, refused by the
    stream (found by tests/test_properties.py)."""
    run = tmp_path / "run"
    run.write_text("[ Q0 d1 1 0.5 t\n{x} Q0 d2 1 0.4 t\n")
    qrels = tmp_path / "qrels"
    qrels.write_text("[ 0 d1 1\n")
    assert rm.read_run(run).to_dict() == {"[": {"d1": 0.5}, "{x}": {"d2": 0.4}}
    assert dict(rm.read_qrels(qrels)["["]) == {"d1": 1}
    streamed = rm.evaluate_stream(rm.read_qrels(qrels), run, ["P@1"], progress=False)
    assert streamed.aggregate == {"P@1": 1.0}


def test_the_stable_order_of_many_codes_is_numpys() -> None:
    """Scattered queries are grouped by a 16-bit radix sort of their codes; past 65,536
    queries, by two such passes; past 2**32, by sorting each code packed with its row
    number (and keys too wide for that by 16-bit radix passes): the order must be numpy's
    stable argsort, exactly (codes of int64 and of int32, as the TREC reader numbers
    queries), and the keys given back sorted."""
    from ragmetrics._util.arrays import sorted_keys, stable_order

    rng = np.random.default_rng(0)
    for n_codes in (
        1,
        3,
        65_536,
        65_537,
        5_000_000,
        1 << 24,
        (1 << 24) + 1,
        1 << 32,
        (1 << 32) + 1,
        1 << 40,
    ):
        codes = rng.integers(0, n_codes, 100_000)
        codes[:500] = n_codes - 1  # the largest code, and many of it
        assert (stable_order(codes, n_codes) == np.argsort(codes, kind="stable")).all()
        if n_codes < 1 << 31:
            narrow = codes.astype(np.int32)
            assert (stable_order(narrow, n_codes) == np.argsort(codes, kind="stable")).all()
    for n, key_bits in ((0, 20), (1, 20), (2, 63), (70_000, 17), (70_000, 47), (70_000, 48)):
        # 70,000 rows take 17 bits: keys of 48 bits do not fit beside them
        keys = rng.integers(0, 1 << key_bits, n, dtype=np.uint64)
        keys[: n // 2] = keys[n // 2 : 2 * (n // 2)]  # equal keys, whose order must hold
        ordered, order = sorted_keys(keys, key_bits)
        assert (order == np.argsort(keys, kind="stable")).all()
        assert (ordered == np.sort(keys)).all()


def _id_rows(ids: list[str], width: int = 16) -> np.ndarray:
    rows = np.zeros((len(ids), width), dtype=np.uint8)
    for i, query in enumerate(ids):
        rows[i, : len(query)] = np.frombuffer(query.encode(), dtype=np.uint8)
    return rows


def test_a_scattered_blocks_lines_are_grouped_by_query_in_first_seen_order() -> None:
    """A TREC block whose query ids change on many lines is grouped by query inside the
    block (hash keys, sorted with their line numbers): each query's lines together, in file order,
    queries in the order first seen; checked against the plain Python grouping."""
    from ragmetrics.formats._trec_fast import _grouped

    rng = random.Random(5)
    for n_queries, n_lines in ((1, 50), (300, 5_000), (4_000, 30_000)):
        names = [f"q{rng.randrange(10**12)}" for _ in range(n_queries)]
        ids = [rng.choice(names) for _ in range(n_lines)]
        grouped = _grouped(_id_rows(ids))
        assert grouped is not None
        order, first_lines, counts = grouped
        first_seen = list(dict.fromkeys(ids))
        rank = {query: i for i, query in enumerate(first_seen)}
        assert order.tolist() == sorted(range(n_lines), key=lambda i: (rank[ids[i]], i))
        assert first_lines.tolist() == [ids.index(query) for query in first_seen]
        assert counts.tolist() == [ids.count(query) for query in first_seen]


def test_ids_sharing_a_key_leave_the_block_in_file_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two ids with one key are never taken for one query: the block stays as it is and the
    run is still read right (the lines grouped across blocks afterwards)."""
    from ragmetrics.formats import _trec_fast

    ids = [f"q{i % 400}" for i in range(4_000)]
    rows = _id_rows(ids)
    monkeypatch.setattr(_trec_fast, "hashes", lambda a, w: np.zeros(len(a), dtype=np.uint64))
    assert _trec_fast._grouped(rows) is None
    # hashes that differ only in the low bits, where the line numbers go: one key, refused
    monkeypatch.setattr(
        _trec_fast, "hashes", lambda a, w: (np.arange(len(a)) % 2048).astype(np.uint64)
    )
    assert _trec_fast._grouped(rows) is None
    path = tmp_path / "run.txt"
    path.write_text("".join(f"{q} Q0 d{i} 0 {i % 7} r\n" for i, q in enumerate(ids)))
    expected: dict[str, dict[str, float]] = {}
    for i, q in enumerate(ids):
        expected.setdefault(q, {})[f"d{i}"] = float(i % 7)
    assert rm.read_run(path).to_dict() == expected


def test_keys_that_differ_only_in_their_high_bits_are_told_apart(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The grouping keeps a hash's bits above those of the line numbers: ids whose hashes
    differ only in bits 20-28, 32-40 or 55-63 must still come out as separate queries."""
    from ragmetrics.formats import _trec_fast

    rng = random.Random(6)
    names = [f"q{i}" for i in range(300)]
    ids = [rng.choice(names) for _ in range(3_000)]
    for shift in (20, 32, 55):
        code = {name.encode(): np.uint64(i) << np.uint64(shift) for i, name in enumerate(names)}
        monkeypatch.setattr(
            _trec_fast, "hashes", lambda a, w, code=code: np.array([code[x] for x in a.tolist()])
        )
        grouped = _trec_fast._grouped(_id_rows(ids))
        assert grouped is not None
        first_seen = list(dict.fromkeys(ids))
        assert grouped[2].tolist() == [ids.count(query) for query in first_seen]


def test_a_block_is_scattered_whether_its_queries_come_back_early_or_late() -> None:
    """The comebacks of a block's runs are counted on its first runs first: a block whose
    queries come back only after them must still be found scattered, and one whose few
    comebacks stay under 5% of its runs must not."""
    from ragmetrics.formats import _trec_fast

    def scattered(ids: list[str]) -> bool:
        rows = _id_rows(ids)
        first_lines, _ = _trec_fast._query_runs(rows)
        return _trec_fast._scattered(rows, first_lines)

    distinct = [f"q{i}" for i in range(20_000)]  # each query a run of one line
    late = [f"q{i % 20_000}" for i in range(0, 200_000, 7)][:10_000]
    assert not scattered(distinct)
    assert scattered(distinct + late)  # 10,000 of 30,000 runs come back, all late
    assert scattered(late + distinct)  # early
    assert not scattered(distinct + late[:1_000])  # under 5% of the runs


@pytest.mark.parametrize("depth", [1, 2, 5, 20])
def test_only_files_whose_queries_come_back_are_grouped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, depth: int
) -> None:
    """A file grouped by query is read as it is, however shallow its rankings (a query
    changing on every line does not come back); the same lines sorted by doc id are put in
    query order once, for the whole file (at depth 1 no query comes back there either; at
    depth 2, 90,000 queries: numbers past 16 bits). Both read as the same run."""
    from ragmetrics.formats import _query_codes, _trec_fast

    calls: list[int] = []  # the files put in query order (their rows)
    stable_order = _query_codes.stable_order

    def counting(codes: np.ndarray, n_codes: int) -> np.ndarray:
        calls.append(len(codes))
        return stable_order(codes, n_codes)

    monkeypatch.setattr(_query_codes, "stable_order", counting)
    rng = random.Random(depth)
    lines = [
        (f"q{q:06d}", f"{rng.randrange(10**7):07d}", rank)
        for q in range(180_000 // depth)
        for rank in range(depth)
    ]
    regular, by_doc = tmp_path / "regular.txt", tmp_path / "by_doc.txt"
    regular.write_text("".join(f"{q} Q0 d{d} {r} {-r} x\n" for q, d, r in lines))
    by_doc.write_text(
        "".join(f"{q} Q0 d{d} {r} {-r} x\n" for q, d, r in sorted(lines, key=lambda x: x[1]))
    )
    assert regular.stat().st_size > 2 * _trec_fast._BLOCK_BYTES  # several blocks
    first = rm.read_run(regular)
    assert calls == []
    second = rm.read_run(by_doc)
    if depth == 1:  # one line a query: sorted by doc id, no query comes back either
        assert calls == []
    else:
        assert calls == [len(lines)]
    assert first.to_dict() == second.to_dict()


@pytest.mark.parametrize("depth", [1, 5, 20])
def test_only_parquet_runs_whose_queries_come_back_are_grouped_by_codes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, depth: int
) -> None:
    """The Parquet reader's grouping through the query column's codes is for queries that
    come back, not for short runs: a grouped column of any depth is read run by run (qrels
    of a few judgments a query went through the codes, a 60% slower read); the same rows
    shuffled are grouped by codes, in row groups of every size. Both read as the same run."""
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    from ragmetrics.formats import _columnar

    calls: list[int] = []
    scattered = _columnar._scattered_queries

    def counting(column: object) -> tuple[list[str], object, object]:
        calls.append(1)
        return scattered(column)

    monkeypatch.setattr(_columnar, "_scattered_queries", counting)
    rng = random.Random(depth)
    rows = [
        (f"q{q:06d}", f"d{rng.randrange(10**7):07d}", float(-rank))
        for q in range(60_000 // depth)
        for rank in range(depth)
    ]
    shuffled = rows[:]
    rng.shuffle(shuffled)
    for name, table_rows in (("grouped", rows), ("shuffled", shuffled)):
        columns = list(zip(*table_rows, strict=True))
        table = pa.table({"query_id": columns[0], "doc_id": columns[1], "score": columns[2]})
        pq.write_table(table, tmp_path / f"{name}.parquet", row_group_size=7_001)
    first = rm.read_run(tmp_path / "grouped.parquet")
    assert calls == []
    second = rm.read_run(tmp_path / "shuffled.parquet")
    assert calls == ([] if depth == 1 else [1])
    assert first.to_dict() == second.to_dict()


@pytest.mark.parametrize("layout", ["by doc id", "grouped", "scattered past the start"])
@pytest.mark.parametrize("encoded", [False, True])
def test_a_column_sorted_by_doc_id_is_known_scattered_from_its_first_rows(
    monkeypatch: pytest.MonkeyPatch, layout: str, encoded: bool
) -> None:
    """Whether a long query column's rows lie apart is decided from its first rows when
    they show it (every row a run of its own, as sorted by doc id), before the four times
    5% of its rows that decide a shorter column: the rest is never listed.
    A grouped column is listed whole and read run by run; a column grouped at its start and
    scattered after is still found scattered. The run read is the same either way."""
    pa = pytest.importorskip("pyarrow")

    from ragmetrics.formats import _columnar

    rng = np.random.default_rng(4)
    n_queries, depth = 3_000, 100
    queries = np.repeat(np.arange(n_queries), depth)
    if layout == "by doc id":
        queries = queries[rng.permutation(len(queries))]
    elif layout == "scattered past the start":
        tail = slice(len(queries) // 2, None)
        queries[tail] = queries[tail][rng.permutation(len(queries) // 2)]
    column = pa.array(np.char.add("q", queries.astype(str)))
    if encoded:
        column = column.dictionary_encode()
    listed: list[int] = []
    runs = _columnar._runs
    monkeypatch.setattr(_columnar, "_runs", lambda part: listed.append(len(part)) or runs(part))
    monkeypatch.setattr(_columnar, "_PROBE_ROWS", 20_000)  # (131,072 in a column of 1.3M rows)
    found, scattered = _columnar._column_runs(pa.chunked_array([column]))
    assert found is not None
    assert scattered == (layout != "grouped")
    assert sum(listed) == (_columnar._PROBE_ROWS if layout == "by doc id" else len(queries))
    docs = pa.array(np.char.add("d", rng.permutation(len(queries)).astype(str)))
    table = pa.table({"query_id": column, "doc_id": docs, "score": rng.random(len(queries))})
    expected: dict[str, dict[str, float]] = {}
    for q, d, v in zip(*(table.column(i).to_pylist() for i in range(3)), strict=True):
        expected.setdefault(q, {})[d] = v
    run = rm.Run.from_arrow(table)
    assert list(run) == list(expected) and run.to_dict() == expected


@pytest.mark.parametrize(
    ("index_type", "sharing"),
    [
        *[(kind, "some") for kind in (np.int32, np.uint16, np.uint32, np.int64)],
        *[(np.int32, shared) for shared in ("none", "one", "one, listing an id twice")],
        (np.int32, "one chunk, listing an id twice"),
    ],
)
def test_a_scattered_dictionary_query_column_reads_as_its_plain_strings(
    index_type: type, sharing: str
) -> None:
    """A query column read dictionary-encoded (Parquet's pages, Polars' categoricals) is
    grouped through its chunks' codes, not decoded and encoded again. The dictionaries may
    differ from chunk to chunk or be shared by chunks (some, or one by all), list ids in any
    order, twice, or ids no row uses, with codes of any integer type: queries must
    still come in the order first seen, each with its rows in order, and repeated docs be
    dropped and counted as for plain strings."""
    pa = pytest.importorskip("pyarrow")

    from ragmetrics.formats import _columnar

    rng = np.random.default_rng(9)
    names = [f"q{i}" for i in range(3_000)]
    chunks, plain = [], []
    dictionaries = []
    for _ in range(3):
        listed = rng.permutation(len(names) + 50)  # 50 ids no row uses
        dictionaries.append(
            pa.array([f"unused{i - len(names)}" if i >= len(names) else names[i] for i in listed])
        )
    # one dictionary lists an id twice; two chunks share one dictionary, as a Parquet row
    # group's chunks do
    dictionaries[2] = pa.concat_arrays([dictionaries[2], pa.array([names[7], names[1]])])
    used_by = {
        "some": [*dictionaries, dictionaries[0]],
        "none": dictionaries,
        "one, listing an id twice": [dictionaries[2]] * 4,
        "one": [dictionaries[1]] * 4,
        "one chunk, listing an id twice": [dictionaries[2]],
    }[sharing]
    for dictionary in used_by:
        listed = np.array(dictionary.to_pylist())
        used = np.flatnonzero(~np.char.startswith(listed.astype(str), "unused"))
        indices = rng.choice(used, 60_000 // len(used_by)).astype(index_type)
        chunks.append(pa.DictionaryArray.from_arrays(pa.array(indices), dictionary))
        plain.append(dictionary.take(pa.array(indices)))
    n = 60_000
    docs = pa.array([f"d{i}" for i in rng.integers(0, 30, n)])  # many repeats in a query
    scores = pa.array(rng.integers(0, 9, n).astype(np.float64))
    coded = pa.table({"query_id": pa.chunked_array(chunks), "doc_id": docs, "score": scores})
    strings = pa.table({"query_id": pa.chunked_array(plain), "doc_id": docs, "score": scores})
    assert _columnar._column_runs(coded.column("query_id"))[1]  # taken as scattered
    if sharing in ("some", "none"):  # dictionaries unified: an id listed twice is one query
        queries, _, _ = _columnar._scattered_queries(coded.column("query_id"))
        assert len(set(queries)) == len(queries)
    run, expected = rm.Run.from_arrow(coded), rm.Run.from_arrow(strings)
    first_seen = list(dict.fromkeys(pa.chunked_array(plain).to_pylist()))
    assert list(run) == list(expected) == first_seen
    assert run.to_dict() == expected.to_dict()
    assert dict(run.duplicates) == dict(expected.duplicates) and sum(run.duplicates.values())
    by_hand: dict[str, dict[str, float]] = {}  # a repeated doc keeps its best score
    rows = zip(
        plain_ids := pa.chunked_array(plain).to_pylist(),
        docs.to_pylist(),
        scores.to_pylist(),
        strict=True,
    )
    for q, d, v in rows:
        kept = by_hand.setdefault(q, {})
        kept[d] = max(v, kept.get(d, v))
    assert run.to_dict() == by_hand
    assert sum(run.duplicates.values()) == len(plain_ids) - sum(map(len, by_hand.values()))


@pytest.mark.parametrize("layout", ["one table", "files apart", "one file unlike"])
def test_spark_part_files_stream_grouped_as_the_folder_reads_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str
) -> None:
    """Part files hash-partitioned by doc (each holds rows of every query, as Spark leaves a
    join's output) stream with the numbers and repeat counts of the folder read in memory.
    Files that together fit a batch, in one layout, are read as one table and grouped there:
    the stream never turns to regrouping. Files past a batch, or one written unlike the
    others, are read apart, and the stream regroups them."""
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    from ragmetrics.data import _batches

    calls: list[int] = []
    regrouped = _batches.regrouped

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return regrouped(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_batches, "regrouped", counting)
    rng = random.Random(11)
    rows = [  # 8 files, 12 docs a query: about 9,000 runs of a query, 7,500 of them back
        (f"q{q:04d}", f"d{rng.randrange(10**7)}", float(rng.randint(0, 40)))
        for q in range(1_500)
        for _ in range(12)
    ]
    rows.append((rows[5][0], rows[5][1], 99.0))  # a repeat, in another file than its first
    part = [int(d[1:]) % 8 for _, d, _ in rows]
    part[-1] = (part[5] + 1) % 8
    for kind, name in ((pa.float64(), "alike"), (pa.float32(), "spark")):
        folder = tmp_path / name
        folder.mkdir()
        for k in range(8):
            mine = [r for r, p in zip(rows, part, strict=True) if p == k]
            columns = list(zip(*mine, strict=True))
            unlike = name == "spark" and layout == "one file unlike" and k == 4
            scores = pa.array(columns[2], type=kind if unlike else pa.float64())
            table = pa.table({"query_id": columns[0], "doc_id": columns[1], "score": scores})
            pq.write_table(table, folder / f"part-{k:05d}-c000.snappy.parquet")
        (folder / "_SUCCESS").touch()
    qrels = {q: {d: 1} for q, d, _ in rows[::5]}
    expected = rm.evaluate(qrels, rm.read_run(tmp_path / "alike"), METRICS)
    assert expected.counts.repeated_ids_dropped == 1
    batch_rows = 3_000 if layout == "files apart" else 20_000
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.errors.RegroupedStreamWarning)
        streamed = rm.evaluate_stream(
            qrels,
            tmp_path / "spark",
            METRICS,
            per_query=True,
            batch_rows=batch_rows,
            progress=False,
        )
    assert streamed.per_query == expected.per_query
    assert streamed.counts == expected.counts
    assert calls == ([] if layout == "one table" else [1])


def test_a_bad_row_of_a_streamed_part_file_names_the_file(tmp_path: Path) -> None:
    """Part files read as one table, one holding a row without a doc id: each is read again
    alone, so that the message names the file that holds the row, streamed or read in
    memory (its row then counted in that file)."""
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    folder = tmp_path / "parts"
    folder.mkdir()
    good = {"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "score": [1.0, 2.0]}
    pq.write_table(pa.table(good), folder / "part-0.parquet")
    pq.write_table(pa.table({**good, "doc_id": ["c", None]}), folder / "part-1.parquet")
    with pytest.raises(rm.errors.InputFormatError, match=r"part-1\.parquet: .*'doc_id' is empty"):
        rm.evaluate_stream({"q1": {"a": 1}}, folder, "P@1", progress=False)
    with pytest.raises(
        rm.errors.InputFormatError, match=r"part-1\.parquet: .*'doc_id' is empty .* row 1;"
    ):
        rm.read_run(folder)
    big = {
        "query_id": [f"q{i // 10}" for i in range(100)],
        "doc_id": [f"d{i}" if i != 73 else None for i in range(100)],
        "score": [float(-i) for i in range(100)],
    }
    pq.write_table(pa.table(big), tmp_path / "big.parquet")  # read 30 rows at a time
    with pytest.raises(
        rm.errors.InputFormatError,
        match=r"big\.parquet, the rows from row 60 on: .*'doc_id' is empty .* at row 13",
    ):
        rm.evaluate_stream({"q1": {"a": 1}}, tmp_path / "big.parquet", "P@1", batch_rows=30)


@pytest.mark.parametrize("layout", ["grouped", "by doc id", "scattered late"])
def test_a_parquet_column_scattered_from_its_first_rows_is_known_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str
) -> None:
    """Whether a query column is grouped by codes is decided on its first rows (four times
    the bound of runs that may come back) when they decide it: a column sorted by doc id,
    every row a run, never has the rest of its runs listed. A column grouped there is
    listed on (the first rows' runs and the rest's make the whole), and one scattered only
    later is still grouped by codes. Each reads as the same run."""
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    from ragmetrics.formats import _columnar

    listed: list[int] = []
    by_codes: list[int] = []
    runs, scattered = _columnar._runs, _columnar._scattered_queries

    def listing(column: object) -> object:
        listed.append(len(column))  # type: ignore[arg-type]
        return runs(column)

    def grouping(column: object) -> object:
        by_codes.append(1)
        return scattered(column)

    monkeypatch.setattr(_columnar, "_runs", listing)
    monkeypatch.setattr(_columnar, "_scattered_queries", grouping)
    rng = random.Random(5)
    rows = [  # 100,000 rows: at most 5,000 runs may come back; the first 20,000 decide
        (f"q{q:05d}", f"d{rng.randrange(10**8):08d}", float(rng.randint(0, 30)))
        for q in range(2_000)
        for _ in range(50)
    ]
    expected = rm.read_run(_parquet(pq, pa, tmp_path / "grouped.parquet", rows)).to_dict()
    listed.clear()
    if layout == "by doc id":
        rows.sort(key=lambda row: row[1])
    elif layout == "scattered late":
        late = rows[60_000:]
        rng.shuffle(late)
        rows[60_000:] = late
    run = rm.read_run(_parquet(pq, pa, tmp_path / "run.parquet", rows))
    assert run.to_dict() == expected
    assert listed == ([20_000] if layout == "by doc id" else [20_000, 80_000])
    assert by_codes == ([] if layout == "grouped" else [1])


def _parquet(pq: Any, pa: Any, path: Path, rows: list[tuple[str, str, float]]) -> Path:
    columns = list(zip(*rows, strict=True))
    pq.write_table(
        pa.table({"query_id": columns[0], "doc_id": columns[1], "score": columns[2]}), path
    )
    return path


SOURCES = [
    "trec",
    "trec gzip",
    "jsonl",
    "parquet",
    "parquet parts",
    "arrow stream",
    "pandas",
    "polars",
]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("layout", ["grouped", "by doc id", "shuffled"])
def test_every_reader_and_the_stream_give_the_dicts_numbers_and_counts(
    tmp_path: Path, seed: int, layout: str
) -> None:
    """One run (repeated docs, ties, queries ranked with nothing where the format can say
    so) in each layout, read from every source in memory and streamed in batches of
    several sizes, gives the numbers and counts of the same run as a dict, and counts the
    same dropped copies. (A folder read in memory lost its later files' empty rankings, and
    adding them lost the dropped copies: each path had been tested alone.)"""
    pa = pytest.importorskip("pyarrow")

    import pyarrow.parquet as pq

    rows = _rows(seed)
    if seed % 2:  # ids that take the careful paths: not ASCII, or past 256 bytes
        odd = {rows[k][1]: f"{rows[k][1]}-é" if k % 2 else rows[k][1] * 40 for k in (3, 8, 20)}
        rows = [(q, odd.get(d, d), s) for q, d, s in rows]
    if layout == "by doc id":
        rows = sorted(rows, key=lambda r: r[1])
    elif layout == "shuffled":
        random.Random(seed).shuffle(rows)
    expected, copies = _expected(rows)
    nothing = [f"empty{k}" for k in range(seed + 1)]  # ranked with no result (Parquet only)
    qrels = {q: dict.fromkeys(list(docs)[::3], 1) for q, docs in expected.items()}
    qrels.update({q: {"x": 1} for q in nothing})
    qrels["judged only"] = {"y": 2}
    qrels[next(iter(expected))] = {"z": 0}  # ranked, nothing relevant: NA for recall
    columns = list(zip(*rows, strict=True))
    table = pa.table({"query_id": columns[0], "doc_id": columns[1], "score": columns[2]})
    listed = {b"ragmetrics.empty_rankings": json.dumps(nothing).encode()}
    _text_files(
        tmp_path / "run",
        [f"{q} Q0 {d} 0 {s} r" for q, d, s in rows],
        [{"query_id": q, "doc_id": d, "score": s} for q, d, s in rows],
    )
    pq.write_table(table.replace_schema_metadata(listed), tmp_path / "run.parquet")
    parts = tmp_path / "parts"
    parts.mkdir()
    third = table.num_rows // 3
    for k, (start, stop) in enumerate([(0, third), (third, 2 * third), (2 * third, None)]):
        part = table.slice(start, None if stop is None else stop - start)
        part = part.replace_schema_metadata(listed if k == 1 else None)  # one file lists them
        pq.write_table(part, parts / f"part-{k}.parquet")
    metrics = ["ndcg@10", "map", "P@5", "recall@20", "mrr"]
    for source in SOURCES:
        with_empty = source.startswith("parquet") or source == "arrow stream"
        truth = expected | ({q: {} for q in nothing} if with_empty else {})
        want = rm.evaluate(qrels, truth, metrics)
        path = {
            "trec": tmp_path / "run.txt", "trec gzip": tmp_path / "run.txt.gz",
            "jsonl": tmp_path / "run.jsonl", "parquet": tmp_path / "run.parquet",
            "parquet parts": parts,
        }.get(source)  # fmt: skip
        if source == "arrow stream":
            reader = pq.ParquetFile(tmp_path / "run.parquet")
            batches = reader.iter_batches(batch_size=7)
            stream = pa.RecordBatchReader.from_batches(reader.schema_arrow, batches)
            run = rm.Run.from_arrow(stream)
        elif source == "pandas":
            run = rm.Run.from_pandas(table.to_pandas())
        elif source == "polars":
            if importlib.util.find_spec("polars") is None:
                continue  # the dev tools install it; the other sources still count
            import polars

            run = rm.Run.from_arrow(polars.from_arrow(table))
        else:
            assert path is not None
            run = rm.read_run(path)
        assert run.to_dict() == truth, source
        assert dict(run.duplicates) == copies, source
        got = rm.evaluate(qrels, run, metrics)
        assert got.per_query == want.per_query and got.aggregate == want.aggregate, source
        assert _counts(got) == _counts(want), source
        assert got.counts.repeated_ids_dropped == sum(copies.values())
        if source in ("jsonl", "pandas", "polars"):
            continue  # (JSON is read whole: it has no streaming reader)
        for batch_rows in (7, 50, 10_000):
            given: Any = path
            if path is None:  # an Arrow stream is read once: its queries must be grouped
                if layout != "grouped":
                    continue
                reader = pq.ParquetFile(tmp_path / "run.parquet")
                batches = reader.iter_batches(batch_size=7)
                given = pa.RecordBatchReader.from_batches(reader.schema_arrow, batches)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", rm.errors.RegroupedStreamWarning)
                streamed = rm.evaluate_stream(
                    qrels, given, metrics, per_query=True, batch_rows=batch_rows, progress=False
                )
            assert streamed.per_query == want.per_query, (source, batch_rows)
            assert streamed.aggregate == want.aggregate, (source, batch_rows)
            assert streamed.counts == got.counts, (source, batch_rows)


def _counts(result: Any) -> Any:
    """The counts without the dropped copies (a dict holds each doc once)."""
    import dataclasses

    return dataclasses.replace(result.counts, repeated_ids_dropped=0)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("layout", ["grouped", "shuffled"])
def test_every_qrels_reader_gives_the_same_judgments(
    tmp_path: Path, seed: int, layout: str
) -> None:
    """The same judgments (graded -1..3, some given twice alike, a query's rows apart in the
    shuffled layout) read from TREC, gzip, JSONL, Parquet, a folder of Parquet parts, pandas,
    Arrow and Polars hold the same grades and give the same numbers."""
    pa = pytest.importorskip("pyarrow")

    import pyarrow.parquet as pq

    rng = random.Random(seed)
    judged: dict[str, dict[str, int]] = {}
    rows: list[tuple[str, str, int]] = []
    for q in range(50):
        for _ in range(rng.randint(1, 20)):
            doc = f"d{rng.randrange(300)}"
            grade = judged.setdefault(f"q{q}", {}).setdefault(doc, rng.randint(-1, 3))
            rows.append((f"q{q}", doc, grade))  # a doc judged again keeps its grade
    if layout == "shuffled":
        rng.shuffle(rows)
    _text_files(
        tmp_path / "qrels",
        [f"{q} 0 {d} {g}" for q, d, g in rows],
        [{"query_id": q, "doc_id": d, "relevance": g} for q, d, g in rows],
    )
    columns = list(zip(*rows, strict=True))
    table = pa.table({"query_id": columns[0], "doc_id": columns[1], "relevance": columns[2]})
    pq.write_table(table, tmp_path / "qrels.parquet")
    parts = tmp_path / "parts"
    parts.mkdir()
    half = table.num_rows // 2
    pq.write_table(table.slice(0, half), parts / "part-0.parquet")
    pq.write_table(table.slice(half), parts / "part-1.parquet")
    made = {
        "trec": lambda: rm.read_qrels(tmp_path / "qrels.txt"),
        "gzip": lambda: rm.read_qrels(tmp_path / "qrels.txt.gz"),
        "jsonl": lambda: rm.read_qrels(tmp_path / "qrels.jsonl"),
        "parquet": lambda: rm.read_qrels(tmp_path / "qrels.parquet"),
        "parquet parts": lambda: rm.read_qrels(parts),
        "pandas": lambda: rm.Qrels.from_pandas(table.to_pandas()),
        "arrow": lambda: rm.Qrels.from_arrow(table),
    }
    if importlib.util.find_spec("polars") is not None:
        import polars

        made["polars"] = lambda: rm.Qrels.from_arrow(polars.from_arrow(table))
    run = {q: {f"d{k}": float(-k) for k in range(0, 300, 5)} for q in judged}
    metrics = ["ndcg@10", "map", "recall@20", "P@5"]
    want = rm.evaluate(judged, run, metrics)
    for source, make in made.items():
        qrels = make()
        assert qrels.to_dict() == judged, source
        got = rm.evaluate(qrels, run, metrics)
        assert got.per_query == want.per_query and got.counts == want.counts, source


def _text_files(stem: Path, lines: list[str], records: list[dict[str, Any]]) -> None:
    """``stem``.txt (TREC lines), ``stem``.txt.gz (the same, gzipped) and ``stem``.jsonl."""
    import gzip

    text = "".join(line + "\n" for line in lines)
    stem.with_suffix(".txt").write_text(text)
    with gzip.open(stem.with_suffix(".txt.gz"), "wt") as handle:
        handle.write(text)
    stem.with_suffix(".jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def test_a_folder_of_many_small_part_files_streams_within_a_low_open_files_limit(
    tmp_path: Path,
) -> None:
    """A folder of 400 small part files (each query in many of them) streams, by one
    process and by two, with at most 128 files open: files read together as one table are
    not held open while they wait, and a worker's share keeps one file open at a time."""
    pytest.importorskip("pyarrow")
    import subprocess
    import sys

    script = f"""
import resource, warnings
import pyarrow as pa, pyarrow.parquet as pq
import ragmetrics as rm
folder = {str(tmp_path)!r}
for k in range(400):
    rows = {{"query_id": [f"q{{k % 50}}"] * 2, "doc_id": [f"a{{k}}", f"b{{k}}"], "score": [1.0, 0.5]}}
    pq.write_table(pa.table(rows), f"{{folder}}/part-{{k:05d}}.parquet")
resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128))
qrels = {{f"q{{q}}": {{f"a{{q}}": 1}} for q in range(50)}}
want = rm.evaluate(qrels, rm.read_run(folder), ["P@1", "map"])
for workers in (1, 2):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = rm.evaluate_stream(qrels, folder, ["P@1", "map"], workers=workers, progress=False)
    assert got.aggregate == want.aggregate and got.counts == want.counts, workers
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_a_stream_spread_in_more_parts_than_files_it_may_open_gives_the_numbers(
    tmp_path: Path,
) -> None:
    """A scattered stream past one batch is written to one temporary file, however many
    parts its queries are cut into: with at most 64 files open, a run spread in 256 parts
    gives evaluate()'s numbers (one file a part failed with "Too many open files")."""
    import subprocess
    import sys

    from ragmetrics.data import _batches

    rng = random.Random(12)
    rows = [(f"q{q}", f"d{rng.randrange(10**6)}", rng.randint(0, 9)) for q in range(300)
            for _ in range(40)]  # fmt: skip
    rows.sort(key=lambda row: row[1])
    run = tmp_path / "run.txt"
    run.write_text("".join(f"{q} Q0 {d} 1 {s} t\n" for q, d, s in rows))
    assert run.stat().st_size > _batches.MAX_PARTS * 8 * 100  # 256 parts of 100 rows
    script = f"""
import resource, warnings
resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
import ragmetrics as rm
qrels = {{f"q{{q}}": {{f"d{{q}}": 1}} for q in range(300)}}
qrels.update({{q: {{d: 1}} for q, d, _ in {rows[::5]!r}}})
want = rm.evaluate(qrels, rm.read_run({str(run)!r}), ["map", "P@5"])
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    got = rm.evaluate_stream(qrels, {str(run)!r}, ["map", "P@5"], batch_rows=100, progress=False)
assert any("in 256 parts" in str(w.message) for w in seen), [str(w.message) for w in seen]
assert got.aggregate == want.aggregate and got.counts == want.counts
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


@pytest.mark.parametrize(
    "queries",
    [["q1", "q2", "q1", "q3"], ["q\n1", "q2", "q\n1"], ["qé", "q2", "qé"], ["only"]],
    ids=["ids", "an id with a newline", "an id past ASCII", "one id"],
)
@pytest.mark.parametrize("given", ["strings", "bytes"])
@pytest.mark.parametrize("docs", ["bytes", "strings"], ids=["doc bytes", "doc strings"])
@pytest.mark.parametrize("scored", [True, False], ids=["scores", "ranked"])
def test_a_stream_spread_over_temporary_files_reads_back_its_queries(
    tmp_path: Path, queries: list[str], given: str, docs: str, scored: bool
) -> None:
    """A stream larger than one batch whose queries come back is spread over part files and
    read back: each part gives back its queries' ids, lengths, docs and scores, in the order
    written (the chunk is written twice: a part's pieces lie apart in the file). Ids are written as bytes when the chunk holds them so (the fast TREC
    reader's) or when they are printable (UTF-8), else as strings (one joined string, or a
    list when an id holds a newline); doc ids as bytes or strings, as the chunk holds them;
    without scores, none come back. A query's part is a hash of its bytes that ignores the
    width of the array: the same from a chunk of bytes as from one of strings. A file cut
    short is named, not read as fewer rows or zeros."""
    from ragmetrics.data._batches import _pieces, _spread
    from ragmetrics.formats import _packed
    from ragmetrics.formats._stream_io import Chunk

    printable = all(q.isprintable() and " " not in q for q in queries)
    if given == "bytes" and not printable:
        pytest.skip("the fast reader gives printable ids only")
    lengths = np.arange(1, len(queries) + 1, dtype=np.int64)
    n = int(lengths.sum())
    heads = np.array([q.encode() for q in queries], dtype="S8") if given == "bytes" else None
    names: Any = [f"d{i}" + "x" * (i % 3) for i in range(n)]
    doc_ids = np.array([name.encode() for name in names]) if docs == "bytes" else names
    scores = np.arange(n) / 2 - 1 if scored else None
    chunk = Chunk(queries, lengths, doc_ids, scores, heads)
    file = (tmp_path / "rows").open("w+b")
    pieces = [array("q") for _ in range(3)]
    _spread(chunk, file, pieces)
    _spread(chunk, file, pieces)

    def rows_of(piece: Chunk) -> Iterator[tuple[object, object]]:
        given_docs = piece.docs.tolist() if isinstance(piece.docs, np.ndarray) else piece.docs
        given_scores = [None] * piece.n_rows if piece.scores is None else piece.scores.tolist()
        return iter(zip(given_docs, given_scores, strict=True))

    back: dict[str, list[tuple[object, object]]] = {}
    parts: dict[str, int] = {}
    for part, starts in enumerate(pieces):
        for piece in _pieces(file, starts):
            assert (piece.heads is not None) == printable
            assert (piece.scores is not None) == scored
            assert isinstance(piece.docs, np.ndarray) == (docs == "bytes")
            rows = rows_of(piece)
            for query, length in zip(piece.queries, piece.lengths.tolist(), strict=True):
                back.setdefault(query, []).extend(next(rows) for _ in range(length))
                assert parts.setdefault(query, part) == part  # each query in one part
    expected: dict[str, list[tuple[object, object]]] = {}
    for _ in range(2):
        rows = rows_of(chunk)
        for query, length in zip(queries, lengths.tolist(), strict=True):
            expected.setdefault(query, []).extend(next(rows) for _ in range(length))
    assert back == expected
    # the pieces of the parts lie one after the other, each chunk's parts in turn
    assert sorted(start for starts in pieces for start in starts)[0] == 0
    last = max(start for starts in pieces for start in starts)
    file.truncate(file.seek(0, 2) - 1)  # the last piece cut short
    with pytest.raises(rm.errors.RagMetricsError, match="ended before its rows did"):
        list(_pieces(file, [last]))
    file.close()
    encoded = [q.encode() for q in queries]
    wide = _packed.spread_hashes(np.array(encoded, dtype="S40"))
    assert wide.tolist() == _packed.spread_hashes(np.array(encoded)).tolist()


@pytest.mark.parametrize("scored", [True, False], ids=["scores", "ranked lists"])
@pytest.mark.parametrize("source", ["parquet", "trec"])
def test_a_shuffled_stream_past_one_batch_gives_the_in_memory_numbers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scored: bool, source: str
) -> None:
    """A run whose rows are shuffled, streamed in batches of 500 rows, so through temporary
    files: its chunks of printable ASCII ids are spread and regrouped on bytes, and one
    query id past ASCII (its chunk then kept as strings: the careful reader's, for TREC)
    lands in its one part too. Values and counts equal evaluate()'s. Parquet's row groups
    of 700 rows (TREC blocks of 4 kB) make chunks that cut queries anywhere; a query with a
    long id, only in the middle third of the rows, makes the chunks there wider than the
    others, and every other query must land in the same part from both kinds."""
    from ragmetrics.formats import _trec_fast

    if source == "trec" and not scored:
        pytest.skip("a TREC run always has scores")
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    monkeypatch.setattr(_trec_fast, "_BLOCK_BYTES", 4096)
    rng = random.Random(f"{source}-{scored}")
    rows = [
        (f"q{q}", f"d{d}", rng.random()) for q in range(300) for d in rng.sample(range(999), 20)
    ]
    rng.shuffle(rows)
    rows = [("qé" if q == "q7" else q, d, s) for q, d, s in rows]
    third = len(rows) // 3
    long_id = [("q-" + "x" * 40, f"d{d}", rng.random()) for d in range(0, 999, 5)]
    middle = [row for pair in zip(long_id, rows[third:], strict=False) for row in pair]
    rows = rows[:third] + middle + rows[third + len(long_id) :]
    qrels = {q: {f"d{d}": 1 for d in range(0, 999, 7)} for q in {r[0] for r in rows}}
    if source == "parquet":
        path = tmp_path / "run.parquet"
        columns = {"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows]}
        if scored:
            columns["score"] = [r[2] for r in rows]
        pq.write_table(pa.table(columns), path, row_group_size=700)
    else:
        path = tmp_path / "run.txt"
        path.write_text("".join(f"{q} Q0 {d} 1 {s!r} t\n" for q, d, s in rows), encoding="utf-8")
    metrics = ["P@5", "map", "recall@10"]
    expected = rm.evaluate(qrels, rm.read_run(path), metrics)
    with pytest.warns(rm.errors.RegroupedStreamWarning, match="temporary file"):
        streamed = rm.evaluate_stream(
            qrels, path, metrics, per_query=True, batch_rows=500, progress=False
        )
    assert streamed.per_query == expected.per_query
    assert streamed.aggregate == expected.aggregate and streamed.counts == expected.counts


def _chunk_rows(chunks: list[Any]) -> list[tuple[str, str]]:
    """The (query id, doc id) of every row of a stream reader's chunks, in their order."""
    return [
        (query, doc if isinstance(doc, str) else doc.decode())
        for chunk in chunks
        for query, doc in zip(np.repeat(chunk.queries, chunk.lengths), chunk.docs, strict=True)
    ]


@pytest.mark.parametrize("scattered", [False, True], ids=["grouped", "by doc id"])
def test_a_parquet_streams_row_groups_are_joined_into_chunks_of_batch_rows(
    tmp_path: Path, scattered: bool
) -> None:
    """A Parquet file of small row groups whose query ids are read as dictionaries (pyarrow
    gives a batch a row group then) is streamed in chunks of up to ``batch_rows`` rows, not
    one a row group (each chunk is grouped, and spread in a stream of scattered queries, on
    its own); the rows are the file's, in its order, and the numbers evaluate()'s."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from ragmetrics.formats._stream_io import Columns, parquet_chunks

    rng = random.Random(5)
    rows = [
        (f"q{q:03d}", f"d{rng.randrange(10**6)}", rng.random())
        for q in range(500)
        for _ in range(20)
    ]
    if scattered:
        rows.sort(key=lambda row: row[1])
    columns = list(zip(*rows, strict=True))
    path = tmp_path / "run.parquet"
    table = pa.table({"query_id": columns[0], "doc_id": columns[1], "score": columns[2]})
    pq.write_table(table, path, row_group_size=700)
    chunks = list(parquet_chunks(path, Columns(), 3_000))
    sizes = [chunk.n_rows for chunk in chunks]
    assert sum(sizes) == len(rows) and max(sizes) <= 3_000
    assert sum(size > 700 for size in sizes) >= 3  # row groups joined
    read = _chunk_rows(chunks)
    if scattered:  # each chunk's queries grouped by its reader
        assert sorted(read) == sorted((q, d) for q, d, _ in rows)
    else:
        assert read == [(q, d) for q, d, _ in rows]
    qrels = {q: {d: 1} for q, d, _ in rows[::9]}
    expected = rm.evaluate(qrels, rm.read_run(path), METRICS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.errors.RegroupedStreamWarning)
        streamed = rm.evaluate_stream(
            qrels, path, METRICS, batch_rows=3_000, per_query=True, progress=False
        )
    assert streamed.per_query == expected.per_query
    assert streamed.counts == expected.counts


@pytest.mark.parametrize("layout", ["by doc id", "grouped"])
def test_a_streams_blocks_grow_once_its_queries_come_back_scattered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str
) -> None:
    """The stream's reader of a TREC file (``regroup``) reads the blocks after the first one
    whose queries came back scattered four times as large: fewer, longer runs of each query
    to spread over the temporary file and group again. A file grouped by query keeps its
    blocks, and so does the in-memory reader of the scattered file (no ``regroup``). The rows
    are the file's either way, in its order within each block's queries."""
    from ragmetrics.formats import _trec_fast
    from ragmetrics.formats._stream_io import trec_chunks

    block = 64_000  # about 2,800 lines, where some 400 queries come back, sorted by doc id
    monkeypatch.setattr(_trec_fast, "_BLOCK_BYTES", block)
    # buffers with little room past a block: a small block's buffer cannot hold a grown one
    monkeypatch.setattr(_trec_fast, "MAX_LINE_BYTES", 200)
    rng = random.Random(11)
    rows = [(f"q{q:03d}", f"d{rng.randrange(10**6):07d}") for q in range(400) for _ in range(250)]
    if layout == "by doc id":
        rows.sort(key=lambda row: row[1])
    path = tmp_path / "run.txt"
    path.write_text("".join(f"{q} Q0 {d} 1 {n % 7} t\n" for n, (q, d) in enumerate(rows)))
    lines = block // len("q000 Q0 d0000000 1 0 t\n") + 1  # the most a block holds
    for regroup in (True, False):
        chunks = list(trec_chunks(path, regroup=regroup))
        sizes = [chunk.n_rows for chunk in chunks]
        assert max(sizes[:4]) <= lines  # the first blocks: as large as ever
        if layout == "by doc id" and regroup:
            assert sum(lines < n <= 4 * lines for n in sizes) >= 3
        else:
            assert max(sizes) <= lines
        assert sorted(_chunk_rows(chunks)) == sorted(rows)


@pytest.mark.parametrize("source", ["parquet", "arrow stream", "trec"])
def test_a_first_batch_grouped_by_its_reader_spreads_the_stream_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str
) -> None:
    """A file sorted by doc id, read in batches of ``batch_rows`` rows: its first batch is a
    chunk whose queries the reader had to bring together (a Parquet batch, a block of the
    TREC reader), and it would complete the first batch. The stream spreads the rows over
    temporary files from there, with the numbers and counts of evaluate(), instead of
    scoring that batch and then meeting its queries again: a file would be read twice
    (never, here: the second reading fails), an Arrow stream, which cannot be read again,
    refused."""
    from ragmetrics.engine import stream
    from ragmetrics.formats import _trec_fast

    def read_again(*args: object) -> None:
        raise AssertionError("the stream was read a second time")

    monkeypatch.setattr(stream, "_regrouped", read_again)
    rng = random.Random(4)
    rows = [
        (f"q{q:04d}", f"d{rng.randrange(10**6):07d}", float(rng.randint(0, 30)))
        for q in range(1_000)
        for _ in range(20)
    ]
    rows.sort(key=lambda row: row[1])  # each batch holds runs of one row of most queries
    qrels = {q: {d: 1} for q, d, _ in rows[::7]}
    if source == "trec":
        # blocks of about 2,400 lines, each with some 900 queries that come back in it
        monkeypatch.setattr(_trec_fast, "_BLOCK_BYTES", 64_000)
        path = tmp_path / "run.txt"
        path.write_text("".join(f"{q} Q0 {d} 1 {s} t\n" for q, d, s in rows))
        expected = rm.evaluate(qrels, rm.read_run(path), METRICS)
        with pytest.warns(rm.errors.RegroupedStreamWarning, match="temporary file"):
            streamed = rm.evaluate_stream(
                qrels, path, METRICS, batch_rows=2_000, per_query=True, progress=False
            )
        assert streamed.per_query == expected.per_query
        assert streamed.counts == expected.counts
        return
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    columns = list(zip(*rows, strict=True))
    path = tmp_path / "run.parquet"
    table = pa.table({"query_id": columns[0], "doc_id": columns[1], "score": columns[2]})
    pq.write_table(table, path, row_group_size=8_000)
    expected = rm.evaluate(qrels, rm.read_run(path), METRICS)
    given: Any = path
    if source == "arrow stream":
        given = pa.RecordBatchReader.from_batches(
            table.schema, pq.ParquetFile(path).iter_batches(batch_size=8_000)
        )
    with pytest.warns(rm.errors.RegroupedStreamWarning, match="temporary file"):
        streamed = rm.evaluate_stream(
            qrels, given, METRICS, batch_rows=8_000, per_query=True, progress=False
        )
    assert streamed.per_query == expected.per_query
    assert streamed.counts == expected.counts


def test_a_workers_share_grouped_by_its_reader_is_refused_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker's share of a Parquet file sorted by doc id (other shares hold rows of the
    same queries) whose first chunk its reader had to group is refused before the worker
    spreads anything, so that the caller reads the file in one process; the same chunks
    read alone are spread and grouped. With two workers, the numbers are evaluate()'s."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from ragmetrics.data import _batches
    from ragmetrics.formats._stream_io import Columns, parquet_chunks

    rng = random.Random(8)
    rows = sorted(
        ((f"q{q:04d}", f"d{rng.randrange(10**6):07d}", float(rng.randint(0, 30)))
         for q in range(1_000) for _ in range(20)),
        key=lambda row: row[1],
    )  # fmt: skip
    columns = list(zip(*rows, strict=True))
    path = tmp_path / "run.parquet"
    table = pa.table({"query_id": columns[0], "doc_id": columns[1], "score": columns[2]})
    pq.write_table(table, path, row_group_size=8_000)
    spread: list[int] = []
    regrouped = _batches.regrouped

    def counted(*args: Any, **kwargs: Any) -> Any:
        spread.append(1)
        return regrouped(*args, **kwargs)

    monkeypatch.setattr(_batches, "regrouped", counted)
    chunks = parquet_chunks(path, Columns(), 8_000)
    with pytest.raises(rm.errors.UngroupedInputError, match="not grouped by query"):
        next(_batches.batches(chunks, 8_000, str(path), None, share=True))
    assert spread == []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.errors.RegroupedStreamWarning)
        alone = list(_batches.batches(parquet_chunks(path, Columns(), 8_000), 8_000, "r", None))
    assert spread == [1] and sum(len(r) for r in alone) == 1_000
    qrels = {q: {d: 1} for q, d, _ in rows[::7]}
    expected = rm.evaluate(qrels, rm.read_run(path), METRICS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.errors.RegroupedStreamWarning)
        warnings.simplefilter("ignore", rm.errors.OneProcessWarning)
        streamed = rm.evaluate_stream(
            qrels, path, METRICS, batch_rows=8_000, workers=2, per_query=True, progress=False
        )
    assert streamed.per_query == expected.per_query
    assert streamed.counts == expected.counts


# --- the TREC readers' numbering of queries (formats._query_codes) ----------------------------


def _numbered_runs(
    runs: list[tuple[bytes, int]], cuts: list[int]
) -> tuple[list[str], np.ndarray, np.ndarray | None] | None:
    """``QueryCodes`` given ``runs`` (query id, rows) in pieces cut at ``cuts``."""
    from ragmetrics.formats._query_codes import QueryCodes

    codes = QueryCodes()
    bounds = [0, *cuts, len(runs)]
    for start, stop in itertools.pairwise(bounds):
        piece = runs[start:stop]
        if piece:
            heads = np.array([q for q, _ in piece])  # each piece its own width
            codes.add(heads, np.array([n for _, n in piece], dtype=np.int64))
    return codes.grouped()


def _walked(runs: list[tuple[bytes, int]]) -> tuple[list[str], list[int], list[int]]:
    """What the numbering must give, by a walk: the queries in the order first seen, their
    rows, and the rows' order that puts each query's together."""
    rows: dict[bytes, list[int]] = {}
    at = 0
    for query, n in runs:
        rows.setdefault(query, []).extend(range(at, at + n))
        at += n
    order = [row for query_rows in rows.values() for row in query_rows]
    return [q.decode() for q in rows], [len(r) for r in rows.values()], order


@pytest.mark.parametrize("seed", range(6))
def test_query_numbers_match_a_walk_over_the_runs(seed: int) -> None:
    """Queries of 1 to 40 bytes (some beyond ASCII, some sharing their first 8 or 16 bytes),
    in runs of 1 to 4 rows that come back anywhere, a run of one query cut over pieces, added
    in pieces of every size (one run, a few, more than one numbering at a time): the queries
    in the order first seen, their rows, and the order that puts each query's rows together,
    each query's in their order, as a walk gives them; a file whose runs never come back is
    left as it is."""
    rng = random.Random(seed)
    stems = ["", "shared-prefix-of", "exactly-sixteen-", "é"]
    names = [
        (rng.choice(stems) + f"{rng.randrange(10 ** rng.randint(1, 12))}")[:40].encode()
        for _ in range(rng.choice([1, 7, 300, 5_000]))
    ]
    names = list(dict.fromkeys(names))
    grouped = [(name, rng.randint(1, 4)) for name in names]
    scattered = [(rng.choice(names), rng.randint(1, 4)) for _ in range(rng.choice([50, 90_000]))]
    for runs in (grouped, scattered):
        n = len(runs)
        for cuts in ([], sorted(rng.sample(range(1, n), min(n - 1, 30))), list(range(1, n, 7))):
            result = _numbered_runs(runs, cuts)
            assert result is not None
            queries, counts, order = result
            expected_queries, expected_counts, expected_order = _walked(runs)
            assert queries == expected_queries
            assert counts.tolist() == expected_counts
            if runs is grouped or order is None:  # (scattered runs of one query: no comeback)
                assert expected_order == list(range(len(expected_order)))
                assert order is None
            else:
                assert order.tolist() == expected_order


def test_a_run_cut_where_pieces_meet_is_one_run() -> None:
    """A query's run split over two pieces (where two blocks meet) goes on, and does not
    make the file look scattered; the same query after another one does."""
    runs = [(b"a", 2), (b"a", 3), (b"b", 1), (b"b", 1), (b"b", 2)]
    result = _numbered_runs(runs, [1, 3, 4])
    assert result is not None
    assert (result[0], result[1].tolist(), result[2]) == (["a", "b"], [5, 4], None)
    result = _numbered_runs([(b"a", 1), (b"b", 1), (b"a", 1)], [2])
    assert result is not None
    assert result[2] is not None and result[2].tolist() == [0, 2, 1]


def test_a_run_that_goes_on_past_a_numbering_is_one_run() -> None:
    """Runs are numbered 65,536 at a time: a query's run cut where one numbering ends and
    the next begins is one run, and the file is still grouped (left as it is); a query of
    the first numbering that comes back in the second is found there."""
    names = [f"q{i}".encode() for i in range(70_000)]
    cuts = list(range(10_000, 70_001, 10_000))  # the first 70,000 runs numbered together
    runs = [(name, 1) for name in names] + [(names[-1], 2), (b"last", 1)]
    result = _numbered_runs(runs, cuts)
    assert result is not None
    queries, counts, order = result
    assert queries == [*(n.decode() for n in names), "last"]
    assert counts.tolist() == [1] * 69_999 + [3, 1]
    assert order is None
    runs = [(name, 1) for name in names] + [(b"last", 1), (names[5], 2)]
    result = _numbered_runs(runs, cuts)
    assert result is not None
    queries, counts, order = result
    assert queries == [*(n.decode() for n in names), "last"]
    assert counts.tolist() == [1] * 5 + [3] + [1] * 69_995
    assert order is not None and order.tolist() == _walked(runs)[2]


def test_more_than_65536_queries_scattered_are_numbered_and_grouped() -> None:
    """Past 16-bit numbers (the table grown many times, the stable sort of wider codes):
    150,000 queries, each in two runs far apart."""
    names = [f"{i:07d}".encode() for i in range(150_000)]
    rng = random.Random(3)
    later = names[:]
    rng.shuffle(later)
    runs = [(name, 1) for name in names] + [(name, 2) for name in later]
    result = _numbered_runs(runs, list(range(40_000, len(runs), 40_000)))
    assert result is not None
    queries, counts, order = result
    assert queries == [name.decode() for name in names]
    assert set(counts.tolist()) == {3}
    expected = _walked(runs)[2]
    assert order is not None and order.tolist() == expected


@pytest.mark.parametrize("bits", ["low", "high", "all"])
def test_ids_whose_hashes_meet_are_never_one_query(
    monkeypatch: pytest.MonkeyPatch, bits: str
) -> None:
    """Hashes that share their low bits (one slot of the table: the overflow list) still
    number the ids apart; hashes that share their high bits too, or the whole hash, make
    the numbering give up (None) rather than take two ids for one query, so the caller reads
    the rows another way. (The runs are numbered 65,536 at a time: the later pieces look
    the ids up in the table the first one made.)"""
    from ragmetrics.formats import _query_codes

    def shared(ids: np.ndarray) -> np.ndarray:
        numbers = np.array([int(x[1:]) for x in ids.tolist()], dtype=np.uint64)
        if bits == "low":  # one low part, the high 32 bits differ
            return (numbers << np.uint64(32)) | np.uint64(5)
        if bits == "high":  # one slot and the same high 32 bits: only the middle differs
            return (numbers << np.uint64(24)) | np.uint64(5)
        return np.zeros(len(ids), dtype=np.uint64)

    monkeypatch.setattr(_query_codes, "spread_hashes", shared)
    names = [f"q{i}".encode() for i in range(3_000)]
    rng = random.Random(4)
    runs = [(rng.choice(names), 1) for _ in range(140_000)]  # numbered in three pieces
    result = _numbered_runs(runs, list(range(10_000, 140_000, 10_000)))
    if bits == "low":
        assert result is not None
        expected_queries, expected_counts, expected_order = _walked(runs)
        assert result[0] == expected_queries
        assert result[1].tolist() == expected_counts
        assert result[2] is not None and result[2].tolist() == expected_order
    else:
        assert result is None


def test_a_file_sorted_by_doc_id_whose_query_ids_share_a_hash_is_read_by_the_careful_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fast reader gives such a file up; the run is the same."""
    from ragmetrics.formats import _query_codes

    path = tmp_path / "run.txt"
    path.write_text("".join(f"q{i % 3} Q0 d{i} 0 {i % 5} r\n" for i in range(30)))
    expected = rm.read_run(path).to_dict()
    monkeypatch.setattr(_query_codes, "spread_hashes", lambda a: np.zeros(len(a), np.uint64))
    from ragmetrics.formats._trec_fast import read_plain_trec_packed

    assert read_plain_trec_packed(path, n_columns=6, doc_col=2, value_col=4, integer=False) is None
    assert rm.read_run(path).to_dict() == expected


# --- ids past 256 bytes ---------------------------------------------------------------------


def _long_id_rows(seed: int) -> tuple[list[tuple[str, str, float]], list[str]]:
    """A run of short ids where a few docs have ids past 256 bytes (URLs sharing their
    first 300 bytes, and text beyond ASCII), often tied with each other."""
    rng = random.Random(seed)
    site = "https://example.com/" + "p" * 280 + "/"
    longs = [f"{site}{k}" for k in range(6)] + [f"{'é' * 140}{k}" for k in range(2)]
    rows = []
    for q in range(80):
        docs = [f"d{rng.randrange(10**6)}" for _ in range(rng.randint(1, 25))]
        docs += rng.sample(longs, rng.randint(0, 4)) if q % 3 == 0 else []
        rows += [(f"q{q}", d, float(rng.randint(0, 3))) for d in dict.fromkeys(docs)]
    return rows, longs


def _stream(qrels: Any, path: Path, metrics: list[str], batch_rows: int) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.errors.RegroupedStreamWarning)
        return rm.evaluate_stream(
            qrels, path, metrics, per_query=True, batch_rows=batch_rows, progress=False
        )


@pytest.mark.parametrize("layout", ["grouped", "by doc id"])
def test_an_id_past_256_bytes_stands_in_and_the_rest_of_the_run_stays_bytes(
    tmp_path: Path, layout: str
) -> None:
    """One id past 256 bytes sent a whole run to Python strings (Parquet 5.9x, TREC 12x
    slower): now it is packed as a stand-in of 16 bytes and only its rows are told apart.
    From TREC text, gzip, Parquet, an Arrow table and dicts, in memory and streamed, the
    ids stay bytes no wider than 24, the long ones come back whole, and the numbers are
    those of the same run's strings, with the judged long ids found and ties among them
    broken as their strings sort."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from ragmetrics.data._store import store_of
    from ragmetrics.formats import _packed

    rows, longs = _long_id_rows(7)
    if layout == "by doc id":
        rows.sort(key=lambda row: row[1])
    truth: dict[str, dict[str, float]] = {}
    for q, d, s in rows:
        truth.setdefault(q, {})[d] = s
    rng = random.Random(8)
    qrels = {q: {d: rng.randint(0, 2) for d in list(docs)[::2]} for q, docs in truth.items()}
    for q in list(qrels)[::9]:
        qrels[q].update(dict.fromkeys(longs[::4], 2))  # judged long ids, some not retrieved
    _text_files(tmp_path / "run", [f"{q} Q0 {d} 0 {s} r" for q, d, s in rows], [])
    columns = list(zip(*rows, strict=True))
    table = pa.table({"query_id": columns[0], "doc_id": columns[1], "score": columns[2]})
    pq.write_table(table, tmp_path / "run.parquet")
    metrics = ["ndcg@10", "map", "P@5", "recall@20", "mrr"]
    reference = rm.Run.from_lists(
        {q: sorted(m, key=lambda d: (-m[d], [-b for b in d.encode()])) for q, m in truth.items()}
    )
    want = rm.evaluate(qrels, reference, metrics)  # ranked lists: no tie to break
    judged_qrels = rm.Qrels.from_dict(qrels)
    assert store_of(judged_qrels).encoded() is not None
    runs = {
        "trec": rm.read_run(tmp_path / "run.txt"),
        "trec gzip": rm.read_run(tmp_path / "run.txt.gz"),
        "parquet": rm.read_run(tmp_path / "run.parquet"),
        "arrow": rm.Run.from_arrow(table),
        "dicts": rm.Run.from_dict(truth),
    }
    n_long = sum(d in longs for _, d, _ in rows)
    for source, run in runs.items():
        store = store_of(run)
        ids = store.ids if store.ids is not None else store.encoded()
        assert ids is not None and ids.dtype.itemsize <= 16, source
        assert len(_packed.standin_rows(ids)) == n_long, source
        assert run.to_dict() == truth, source
        for q in truth:
            assert run.ranking(q) == reference.ranking(q), (source, q)
        got = rm.evaluate(judged_qrels, run, metrics)
        assert got.per_query == want.per_query and got.aggregate == want.aggregate, source
    for name in ("run.txt", "run.parquet"):
        for batch_rows in (50, 100_000):
            streamed = _stream(judged_qrels, tmp_path / name, metrics, batch_rows)
            assert streamed.per_query == want.per_query, (name, batch_rows)


def test_two_long_ids_of_one_stand_in_are_never_confused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stand-in is 15 bytes of the id and 63 bits of its hash: two ids could share one.
    The process keeps each stand-in's id; an id whose stand-in another id already holds is
    not packed (that run takes the string path) and the numbers stay right; a store sent
    to another process brings its ids along, and one that meets another id there is
    refused by name."""
    import pickle

    from ragmetrics.data._store import store_of
    from ragmetrics.formats import _packed

    monkeypatch.setattr(_packed, "_LONG", {})
    one, other = "https://example.com/" + "a" * 300, "https://example.com/" + "b" * 300
    forged = _packed.standins([one.encode()])
    assert forged is not None
    _packed._LONG[forged[0]] = other  # as if ``other`` had come first with this stand-in
    path = tmp_path / "run.txt"
    path.write_text(f"q1 Q0 {one} 0 2 r\nq1 Q0 d1 0 1 r\n")
    run = rm.read_run(path)
    assert store_of(run).ids is None and run.to_dict() == {"q1": {one: 2.0, "d1": 1.0}}
    qrels = rm.Qrels.from_dict({"q1": {one: 1}})
    assert rm.evaluate(qrels, run, ["P@1"]).aggregate["P@1"] == 1.0
    monkeypatch.setattr(_packed, "_LONG", {})
    packed = rm.read_run(path)  # its own stand-in now: packed
    assert store_of(packed).ids is not None
    sent = pickle.dumps(store_of(packed))
    _packed._LONG.clear()  # a fresh process: it knows no stand-in
    received = pickle.loads(sent)
    assert received.docs_at(np.array([0, 0]), np.array([0, 1])) == [one, "d1"]
    _packed._LONG[forged[0]] = other
    with pytest.raises(rm.errors.RagMetricsError, match="share a hash"):
        pickle.loads(sent)


def test_a_worker_process_reads_and_judges_long_ids_as_this_one_does(tmp_path: Path) -> None:
    """``evaluate_stream(..., workers=2)`` with qrels whose judged ids include stand-ins:
    each worker, spawned (it knows no stand-in made here) or forked, finds them in its
    share and gives the numbers of one process."""
    rows, longs = _long_id_rows(9)
    path = tmp_path / "run.txt"
    path.write_text("".join(f"{q} Q0 {d} 0 {s} r\n" for q, d, s in rows))
    qrels = rm.Qrels.from_dict({q: dict.fromkeys(longs, 1) for q, _, _ in rows})
    metrics = ["map", "P@5"]
    one = rm.evaluate_stream(qrels, path, metrics, per_query=True, progress=False)
    assert one.aggregate["map"] > 0
    from ragmetrics.engine import _parallel

    for method in ("spawn", "fork"):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(_parallel, "_start_method", lambda method=method: method)
            shared = rm.evaluate_stream(
                qrels, path, metrics, per_query=True, progress=False, workers=2
            )
        assert shared.per_query == one.per_query and shared.aggregate == one.aggregate, method


@pytest.mark.parametrize("source", ["trec", "parquet", "dicts"])
def test_tied_long_ids_written_in_their_stand_ins_order_are_ranked_as_strings(
    tmp_path: Path, source: str
) -> None:
    """A run written in rank order, ties in descending byte order, needs no tie broken;
    but stand-ins' bytes do not sort as their ids: tied long ids written in their
    stand-ins' descending order (their strings' ascending) are ranked as trec_eval ranks
    them, the larger string first."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    low, high = standins_out_of_order()  # their stand-ins sort the other way round
    rows = [("q1", "d9", 3.0), ("q1", low, 2.0), ("q1", high, 2.0), ("q1", "d1", 1.0)]
    if source == "trec":
        path = tmp_path / "run.txt"
        path.write_text("".join(f"{q} Q0 {d} 0 {s} r\n" for q, d, s in rows))
        run = rm.read_run(path)
    elif source == "parquet":
        path = tmp_path / "run.parquet"
        run = rm.read_run(_parquet(pq, pa, path, rows))
    else:
        run = rm.Run.from_dict({"q1": {d: s for _, d, s in rows}})
    assert run.ranking("q1") == ("d9", high, low, "d1")
    qrels = {"q1": {high: 1}}
    assert rm.evaluate(qrels, run, ["P@2", "mrr"]).aggregate == {"P@2": 0.5, "mrr": 0.5}


def _one_url_rows(seed: int, url: str) -> list[tuple[str, str, float]]:
    rng = random.Random(seed)
    rows = []
    for q in range(120):
        docs = [f"d{rng.randrange(10**6)}" for _ in range(rng.randint(5, 40))]
        if q % 4 == 0:
            docs.insert(rng.randrange(len(docs)), url)
        rows += [(f"q{q}", d, float(rng.randint(0, 3))) for d in dict.fromkeys(docs)]
    return rows


@pytest.mark.parametrize("width", [100, 250])
def test_one_wide_id_among_short_ones_stands_in_and_meets_itself_unpadded(
    tmp_path: Path, width: int
) -> None:
    """One id of 100 or 250 bytes among short ones padded every id to its width (a run of
    two million ids read 2.6x, 5.5x slower from Parquet). An id four times as wide as the
    mean (and wider than a stand-in) is packed as a stand-in where at most one id in 64 is
    (the run), and as its bytes where many are (qrels of wide ids): the same id held both
    ways is judged, compared and fused as one, from every reader, as the strings are."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from ragmetrics.data._store import store_of
    from ragmetrics.formats import _packed

    url = ("https://example.com/page?q=" + "a" * width)[:width]
    rows = _one_url_rows(12, url)
    truth: dict[str, dict[str, float]] = {}
    for q, d, s in rows:
        truth.setdefault(q, {})[d] = s
    rng = random.Random(13)
    qrels_dict = {q: {url: 2, **{f"{url[:-3]}{k:03d}": 1 for k in range(3)}} for q in truth}
    for q, docs in truth.items():
        qrels_dict[q].update({d: rng.randint(0, 1) for d in list(docs)[1::5]})
    (tmp_path / "qrels.txt").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, m in qrels_dict.items() for d, g in m.items())
    )
    (tmp_path / "run.txt").write_text("".join(f"{q} Q0 {d} 0 {s} r\n" for q, d, s in rows))
    pq.write_table(
        pa.table(dict(zip(["query_id", "doc_id", "score"], zip(*rows, strict=True), strict=True))),
        tmp_path / "run.parquet",
    )
    qrels = rm.read_qrels(tmp_path / "qrels.txt")
    judged_ids = store_of(qrels).ids
    assert judged_ids is not None and not len(_packed.standin_rows(judged_ids))  # its bytes
    metrics = ["ndcg@10", "map", "P@5", "recall@20", "mrr"]
    want = rm.evaluate(qrels_dict, truth, metrics)
    assert want.aggregate["map"] > 0
    for name in ("run.txt", "run.parquet"):
        run = rm.read_run(tmp_path / name)
        ids = store_of(run).ids
        assert ids is not None and ids.dtype.itemsize <= 16, name  # none padded to the URL
        n_url = sum(d == url for _, d, _ in rows)
        assert len(_packed.standin_rows(ids)) == n_url, name
        assert run.to_dict() == truth, name
        got = rm.evaluate(qrels, run, metrics)
        assert got.per_query == want.per_query and got.aggregate == want.aggregate, name
        streamed = _stream(qrels, tmp_path / name, metrics, 500)
        assert streamed.per_query == want.per_query, name
    raw_run = rm.Run.from_dict({q: dict.fromkeys(m, 1.0) for q, m in qrels_dict.items()})
    fused = rm.fuse([rm.read_run(tmp_path / "run.txt"), raw_run], method="sum", norm=None)
    plain = rm.fuse([rm.Run.from_dict(truth), raw_run], method="sum", norm=None)
    assert fused.to_dict() == plain.to_dict()
    for q in plain.query_ids:
        assert fused.ranking(q) == plain.ranking(q), q


def test_a_stand_in_and_its_ids_bytes_hash_and_compare_as_one() -> None:
    """The join and the repeats compare ids through ``hashes`` and ``equal``: an id held as
    its bytes in one array and as a stand-in in another gets one hash (at any width the
    two are hashed at) and compares equal; other ids do not."""
    from ragmetrics.formats import _packed

    url = "https://example.com/" + "u" * 80
    short = [f"d{i}" for i in range(5000)]
    standing = _packed.encode([[url, *short]], 5001)
    raw = _packed.encode([[url, url + "x", "y" * 90]], 3)
    assert standing is not None and raw is not None
    assert _packed.standin_rows(standing).tolist() == [0] and not len(_packed.standin_rows(raw))
    words = _packed.n_words(standing, raw)
    for at in (words, words + 3):
        assert _packed.hashes(standing[:1], at)[0] == _packed.hashes(raw[:1], at)[0]
        assert _packed.hashes(standing[:1], at)[0] != _packed.hashes(raw[1:2], at)[0]
    pairs = _packed.equal(np.repeat(standing[:1], 3), raw)
    assert pairs.tolist() == [True, False, False]
    assert _packed.equal(standing[1:4], standing[1:4]).all()
    assert _packed.decode(standing[:3]) == [url, "d0", "d1"]
