"""Parquet files and Arrow tables: exact round trips, ranx's column names, clear errors."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragmetrics as rm
from ragmetrics.cli._commands import main
from ragmetrics.formats import _columnar
from tests.conftest import rankings_beyond_ascii

pyarrow = pytest.importorskip("pyarrow")


def _random(seed: int = 4) -> tuple[rm.Qrels, rm.Run]:
    rng = random.Random(seed)
    judgments, results = {}, {}
    for i in range(200):
        docs = [f"d{j}" for j in range(40)]
        judgments[f"q{i}"] = {d: rng.randint(-1, 3) for d in rng.sample(docs, rng.randint(1, 15))}
        # scores that need every bit: ties, tiny gaps, negative and huge values
        results[f"q{i}"] = {
            d: rng.choice([rng.random(), 0.1 + 1e-17 * rng.randint(0, 3), -1e300, 5.0])
            for d in rng.sample(docs, rng.randint(1, 30))
        }
    return rm.Qrels.from_dict(judgments), rm.Run.from_dict(results)


def test_round_trips_are_exact(tmp_path: Path) -> None:
    qrels, run = _random()
    run.to_parquet(tmp_path / "run.parquet")
    qrels.to_parquet(tmp_path / "qrels.parquet")
    back = rm.Run.from_parquet(tmp_path / "run.parquet")
    assert back == run and back.name == "run"
    for query_id in run:  # every score, bit for bit
        assert np.array_equal(
            np.asarray(back.scores(query_id)).view(np.int64),
            np.asarray(run.scores(query_id)).view(np.int64),
        )
    assert rm.Qrels.from_parquet(tmp_path / "qrels.parquet") == qrels
    metrics = ["ndcg@10", "map", "bpref", "P@5"]
    assert rm.evaluate(qrels, back, metrics).aggregate == rm.evaluate(qrels, run, metrics).aggregate
    lists = rm.Run.from_lists({"q1": ["b", "a", "c"], "q2": ["z"]})
    lists.to_parquet(tmp_path / "lists.parquet")
    assert rm.Run.from_parquet(tmp_path / "lists.parquet").to_lists() == lists.to_lists()


def test_ranx_columns_and_record_batches() -> None:
    table = pyarrow.table(
        {"q_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"], "score": [0.5, 0.9, 1.0]}
    )
    run = rm.Run.from_arrow(table)
    assert run.to_lists() == {"q1": ["b", "a"], "q2": ["c"]}
    qrels = rm.Qrels.from_arrow(
        pyarrow.record_batch({"q_id": ["q1", "q2"], "doc_id": ["a", "c"], "score": [1, 2]})
    )
    assert qrels.to_dict() == {"q1": {"a": 1}, "q2": {"c": 2}}
    split = pyarrow.table({"query_id": ["q1", "q2", "q1"], "doc_id": ["a", "c", "b"]})
    assert rm.Run.from_arrow(split).to_lists() == {"q1": ["a", "b"], "q2": ["c"]}


def test_errors_name_the_columns(tmp_path: Path) -> None:
    table = pyarrow.table({"qid": ["q1"], "doc_id": ["a"], "score": [1.0]})
    with pytest.raises(rm.errors.InputFormatError, match=r"no query id column.*'qid'"):
        rm.Run.from_arrow(table)
    with pytest.raises(rm.errors.InputFormatError, match=r"no column 'docno'"):
        rm.Run.from_arrow(table, query_col="qid", doc_col="docno")
    with pytest.raises(rm.errors.InputFormatError, match="Expected a pyarrow Table"):
        rm.Run.from_arrow({"q": ["a"]})
    with pytest.raises(rm.errors.InputFormatError, match="No such file"):
        rm.Run.from_parquet(tmp_path / "absent.parquet")
    bad = pyarrow.table({"query_id": ["q1"], "doc_id": ["a"], "score": [float("nan")]})
    with pytest.raises(rm.errors.InputFormatError, match="score"):
        rm.Run.from_arrow(bad)


def test_the_cli_reads_parquet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, run = _random()
    run.to_parquet(tmp_path / "run.parquet")
    qrels.to_parquet(tmp_path / "qrels.parquet")
    assert main(["evaluate", str(tmp_path / "qrels.parquet"), str(tmp_path / "run.parquet"),
                 "-m", "map", "--format", "json"]) == 0  # fmt: skip
    assert '"map": ' + repr(rm.evaluate(qrels, run, ["map"])["map"]) in capsys.readouterr().out


def test_the_buffer_path_equals_the_careful_one() -> None:
    from ragmetrics.formats import _columnar

    _, run = _random(9)
    frame = run.to_pandas()
    table = pyarrow.Table.from_pandas(frame[["query_id", "doc_id", "score"]])
    assert _columnar.packed_columns(table, "query_id", "doc_id", "score") is not None
    careful = rm.Run.from_pandas(frame)
    assert rm.Run.from_arrow(table) == careful
    # sliced and chunked tables, non-ASCII ids, large strings: the same run either way
    chunked = pyarrow.concat_tables([table.slice(0, 100), table.slice(100)])
    assert rm.Run.from_arrow(chunked) == careful
    sliced = table.slice(7)
    assert rm.Run.from_arrow(sliced) == rm.Run.from_pandas(frame.iloc[7:])
    accented = pyarrow.table({"query_id": ["q1", "q1"], "doc_id": ["café", "b"], "score": [1, 2]})
    packed = _columnar.packed_columns(accented, "query_id", "doc_id", "score")
    assert packed is not None and packed.ids.tolist() == ["café".encode(), b"b"]
    assert rm.Run.from_arrow(accented).to_lists() == {"q1": ["b", "café"]}
    split = pyarrow.table({"query_id": ["q1", "q2", "q1"], "doc_id": ["a", "c", "b"],
                           "score": [3.0, 2.0, 1.0]})  # fmt: skip
    assert rm.Run.from_arrow(split).to_lists() == {"q1": ["a", "b"], "q2": ["c"]}


def test_ids_of_one_width_and_a_bad_byte_far_into_the_column() -> None:
    """UUIDs (one width) are read straight from Arrow's buffer; ids of mixed widths are
    padded; a space, tab, NUL or DEL anywhere (here past the first block the check reads),
    or a character beyond ASCII that is whitespace or a format character, sends the column
    to the careful path, which keeps the id exactly; an accented letter is kept as its
    UTF-8 bytes."""
    import uuid

    from ragmetrics.formats import _columnar

    rng = random.Random(3)
    ids = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(20_000)]
    queries = [f"q{i // 20}" for i in range(len(ids))]
    scores = [rng.random() for _ in ids]
    table = pyarrow.table({"query_id": queries, "doc_id": ids, "score": scores})
    packed = _columnar.packed_columns(table, "query_id", "doc_id", "score")
    assert packed is not None
    assert packed[2].dtype == np.dtype("S36")
    assert [i.decode() for i in packed[2][:3]] == ids[:3]
    expected = {}
    for q, d, s in zip(queries, ids, scores, strict=True):
        expected.setdefault(q, {})[d] = s
    assert rm.Run.from_arrow(table) == rm.Run.from_dict(expected)
    # a sliced table: its ids start where the slice does
    sliced = _columnar.packed_columns(table.slice(25), "query_id", "doc_id", "score")
    assert sliced is not None and sliced[2][0].decode() == ids[25]
    assert rm.Run.from_arrow(table.slice(40)) == rm.Run.from_dict(
        {q: docs for q, docs in expected.items() if int(q[1:]) >= 2}
    )
    mixed = pyarrow.table({"query_id": queries, "doc_id": [d[: 8 + i % 29] for i, d in
                           enumerate(ids)], "score": scores})  # fmt: skip
    packed = _columnar.packed_columns(mixed, "query_id", "doc_id", "score")
    assert packed is not None and packed[2].dtype == np.dtype("S40")  # whole words
    assert packed[2][1].decode() == ids[1][:9]
    for bad in (" ", "\t", "\x00", "\x7f", "\u00a0", "\u200b", "é"):
        for widths in ("one", "mixed"):
            far = list(ids) if widths == "one" else [d[: 8 + i % 29] for i, d in enumerate(ids)]
            far[-2] = far[-2][:5] + bad + far[-2][6:]  # byte ~720,000 of the column
            table = pyarrow.table({"query_id": queries, "doc_id": far, "score": scores})
            packed = _columnar.packed_columns(table, "query_id", "doc_id", "score")
            assert (packed is None) == (bad == "\x00"), (bad, widths)  # NUL: the padding's
            assert far[-2] in rm.Run.from_arrow(table)[queries[-2]]
            if packed is not None:
                assert packed.ids[-2].decode() == far[-2] and packed.ids[-1].decode() == far[-1]


_TITLES = ["Barack Obama", "Paris (France)", " lead", "trail ", "two  spaces", "tab\there",
           "a\u00a0b", "東京 駅", "line\nbreak", "\x01ctl", "x", "Barack Obama Sr."]  # fmt: skip


def test_one_very_long_id_stands_in_and_many_send_the_column_to_strings() -> None:
    """One doc id of 3,000 bytes among 60,000 short ones: padding every id to its width
    would take 180 MB, so it is packed as a stand-in of 16 bytes and the others stay as
    narrow as they were; the run is the same. Chunk texts used as ids (every one long)
    take the string path."""
    pyarrow = pytest.importorskip("pyarrow")
    from ragmetrics.data._store import store_of
    from ragmetrics.formats import _columnar, _packed

    docs = [f"d{i}" for i in range(60_000)]
    docs[777] = "chunk text used as an id " * 120
    queries = [f"q{i // 100}" for i in range(60_000)]
    table = pyarrow.table({"query_id": queries, "doc_id": docs, "score": [1.0] * 60_000})
    packed = _columnar.packed_columns(table, "query_id", "doc_id", "score")
    assert packed is not None and packed.ids.dtype.itemsize == _packed.STANDIN_WIDTH
    assert _packed.standin_rows(packed.ids).tolist() == [777]
    run = rm.Run.from_arrow(table)
    assert store_of(run).ids is not None and docs[777] in run["q7"]
    assert run.to_dict() == rm.Run.from_dict(run.to_dict()).to_dict()
    assert _packed.decode(packed.ids) == docs
    texts = pyarrow.table({"query_id": queries[:4000], "doc_id": [f"{i:0500d}" for i in
                           range(4000)], "score": [1.0] * 4000})  # fmt: skip
    assert _columnar.packed_columns(texts, "query_id", "doc_id", "score") is None


@pytest.mark.parametrize("nul", [False, True], ids=["titles", "a NUL among them"])
def test_ids_with_spaces_are_read_as_bytes_and_give_the_numbers_strings_give(
    tmp_path: Path, nul: bool
) -> None:
    """Doc ids keyed by title hold spaces (and may hold tabs, newlines, any character): read
    from Parquet, Arrow or dicts, they are packed as their bytes, joined with the qrels and
    ranked among tied scores as the strings are; an id holding a NUL, which the zero padding
    would hide, takes the string path."""
    pyarrow = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from ragmetrics.data._store import store_of
    from ragmetrics.formats import _columnar

    rng = random.Random(5)
    titles = [*_TITLES, *(f"Page {i} (film)" for i in range(300))]
    if nul:
        titles[7] = "nul\x00inside"
    rows = [(f"q{q}", d, float(rng.choice([0.5, 0.25, 1.0]))) for q in range(40)
            for d in rng.sample(titles, 25)]  # fmt: skip
    queries, docs, scores = (list(c) for c in zip(*rows, strict=True))
    table = pyarrow.table({"query_id": queries, "doc_id": docs, "score": scores})
    packed = _columnar.packed_columns(table, "query_id", "doc_id", "score")
    assert (packed is None) == nul
    path = tmp_path / "run.parquet"
    pq.write_table(table, path)
    as_dicts: dict[str, dict[str, float]] = {}
    for q, d, score in rows:
        as_dicts.setdefault(q, {})[d] = score
    judged = {q: {d: rng.randint(0, 3) for d in rng.sample(titles, 12)} for q in as_dicts}
    qrels = rm.Qrels.from_dict(judged)
    metrics = ["ndcg@10", "map", "P@5", "recall@20", "mrr@10"]
    # the reference on strings: one more query, unjudged, holding an id no bytes path takes
    strings = rm.Run.from_dict({**as_dicts, "unjudged": {"nul\x00id": 1.0}})
    assert store_of(strings).encoded() is None
    expected = rm.evaluate(qrels, strings, metrics).per_query
    runs = [rm.Run.from_parquet(path), rm.Run.from_arrow(table), rm.Run.from_dict(as_dicts)]
    for run in runs[:2]:
        assert (store_of(run).ids is None) == nul
    assert (store_of(runs[2]).encoded() is None) == nul  # dicts' ids are joined on bytes too
    for run in runs:
        assert rm.evaluate(qrels, run, metrics).per_query == expected
        assert run.to_dict() == as_dicts


def test_dictionary_encoded_columns_give_the_same_run_and_qrels(tmp_path: Path) -> None:
    """Parquet is read with its ids dictionary-encoded (each distinct id decoded once); a
    dictionary table from the caller, a non-ASCII id or a null take the paths they would."""
    plain = pyarrow.table(
        {
            "query_id": ["q1", "q1", "q2", "q2", "q2"],
            "doc_id": ["a", "b", "a", "c", "b"],
            "score": [0.5, 0.9, 0.1, 0.2, 0.3],
        }
    )
    encoded = plain.cast(
        pyarrow.schema(
            [
                ("query_id", pyarrow.dictionary(pyarrow.int32(), pyarrow.string())),
                ("doc_id", pyarrow.dictionary(pyarrow.int8(), pyarrow.string())),
                ("score", pyarrow.float64()),
            ]
        )
    )
    expected = rm.Run.from_arrow(plain)
    assert rm.Run.from_arrow(encoded) == expected
    # the ids are hashed through the dictionary: the judged docs are found all the same,
    # whether the qrels' ids are narrower or wider than the run's
    for judged in (
        {"q1": {"b": 2, "a": 1}, "q2": {"c": 1}},
        {"q1": {"a": 1, "long-id-here": 2}, "q2": {"b": 1}},
    ):
        metrics = ["ndcg@3", "map", "P@1"]
        rows = [(q, d, g) for q, docs in judged.items() for d, g in docs.items()]
        as_bytes = rm.Qrels.from_arrow(  # ids as bytes too: the hashed join
            pyarrow.table(
                {k: list(v) for k, v in zip(("query_id", "doc_id", "relevance"), zip(*rows))}
            )
        )
        assert rm.evaluate(as_bytes, rm.Run.from_arrow(encoded), metrics).per_query == (
            rm.evaluate(judged, expected.to_dict(), metrics).per_query
        )
    assert rm.Run.from_arrow(encoded).query_ids == ("q1", "q2")
    unicode = encoded.set_column(
        1, "doc_id", pyarrow.array(["é", "b", "a", "c", "b"]).dictionary_encode()
    )
    assert rm.Run.from_arrow(unicode)["q1"] == ("b", "é")
    with_null = encoded.set_column(
        1, "doc_id", pyarrow.array(["a", None, "a", "c", "b"]).dictionary_encode()
    )
    with pytest.raises(rm.InputFormatError, match="doc_id"):
        rm.Run.from_arrow(with_null)
    qrels = pyarrow.table(
        {"q_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"], "score": [1, 0, 2]}
    )
    qrels_path = tmp_path / "qrels.parquet"
    pyarrow.parquet.write_table(qrels, qrels_path)
    assert dict(rm.Qrels.from_parquet(qrels_path)["q1"]) == {"a": 1, "b": 0}


def test_row_groups_with_their_own_dictionaries(tmp_path: Path) -> None:
    """A Parquet file of many row groups: each has its own dictionary (shared by its
    chunks, never unified), and a query's rows run across row groups and files."""
    qrels, run = _random(12)
    frame = run.to_pandas()
    table = pyarrow.Table.from_pandas(frame[["query_id", "doc_id", "score"]])
    pyarrow.parquet.write_table(table, tmp_path / "run.parquet", row_group_size=37)
    read = rm.Run.from_parquet(tmp_path / "run.parquet")
    assert read == run
    folder = tmp_path / "parts"
    folder.mkdir()
    for i, start in enumerate(range(0, len(table), 501)):  # files cut inside queries
        pyarrow.parquet.write_table(
            table.slice(start, 501), folder / f"part-{i:03}.parquet", row_group_size=64
        )
    assert rm.Run.from_parquet(folder) == run
    qrels.to_parquet(tmp_path / "qrels.parquet")
    metrics = ["ndcg@10", "map", "bpref"]
    assert (
        rm.evaluate(rm.Qrels.from_parquet(tmp_path / "qrels.parquet"), read, metrics).per_query
        == rm.evaluate(qrels, run, metrics).per_query
    )


@pytest.mark.parametrize("distinct", [True, False])
def test_ids_read_as_a_dictionary_only_where_the_file_keeps_one(
    distinct: bool, tmp_path: Path
) -> None:
    # mostly distinct ids (UUIDs): the writer gives up its dictionary and the column is read
    # as plain strings (a dictionary would cost pyarrow more than the read); ids from a small
    # vocabulary stay dictionary codes. Either way the run is the same.
    import uuid

    import pyarrow.parquet

    from ragmetrics.formats._columnar import stored_as_dictionary

    rng = random.Random(3)
    vocabulary = [f"doc-{i}" for i in range(50)]
    rows: dict[str, list] = {"q_id": [], "doc_id": [], "score": []}
    results: dict[str, dict[str, float]] = {}
    for q in range(3000):
        if distinct:
            docs = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(20)]
        else:
            docs = rng.sample(vocabulary, 20)
        results[f"q{q}"] = {d: rng.random() for d in docs}
        for doc, score in results[f"q{q}"].items():
            rows["q_id"].append(f"q{q}")
            rows["doc_id"].append(doc)
            rows["score"].append(score)
    path = tmp_path / "run.parquet"
    pyarrow.parquet.write_table(pyarrow.table(rows), path, row_group_size=20_000)
    coded = stored_as_dictionary(
        [pyarrow.parquet.read_metadata(path)], ["q_id", "doc_id", "no such column"]
    )
    assert coded == (["q_id"] if distinct else ["q_id", "doc_id"])  # 20 rows a query id
    expected = rm.Run.from_dict(results)
    assert rm.Run.from_parquet(path) == expected
    qrels = rm.Qrels.from_dict({q: {next(iter(docs)): 1} for q, docs in results.items()})
    streamed = rm.evaluate_stream(qrels, path, ["map", "ndcg@10"], per_query=True)
    assert streamed.per_query == rm.evaluate(qrels, expected, ["map", "ndcg@10"]).per_query


@pytest.mark.parametrize("widths", ["mixed", "one"])
@pytest.mark.parametrize("compression", ["none", "snappy"])
def test_a_file_written_over_after_reading_leaves_the_run_and_qrels_alone(
    tmp_path: Path, compression: str, widths: str
) -> None:
    """Parquet is read memory-mapped; nothing read may stay a view of the file's pages, or a
    notebook that writes the file again would change (or crash) a run it already holds.
    Ids of one width are kept as Arrow's own buffer (no padding copy): that buffer too."""
    import pyarrow.parquet as pq

    qrels, run = _random(seed=9)
    if widths == "one":  # d7 -> doc-0007: every id 8 bytes
        qrels = rm.Qrels.from_dict(
            {q: {f"doc-{int(d[1:]):04d}": g for d, g in grades.items()}
             for q, grades in qrels.to_dict().items()}
        )  # fmt: skip
        run = rm.Run.from_dict(
            {q: {f"doc-{int(d[1:]):04d}": v for d, v in scores.items()}
             for q, scores in run.to_dict().items()}
        )  # fmt: skip
    rows = [(q, d, s) for q, scores in run.to_dict().items() for d, s in scores.items()]
    judged = [(q, d, g) for q, grades in qrels.to_dict().items() for d, g in grades.items()]
    files = {"run": tmp_path / "run.parquet", "qrels": tmp_path / "qrels.parquet"}
    for path, (columns, values) in zip(
        files.values(), ((rows, "score"), (judged, "relevance")), strict=True
    ):
        q, d, v = zip(*columns, strict=True)
        table = pyarrow.table({"query_id": q, "doc_id": d, values: v})
        # plain pages, uncompressed as well: the layout a view of the file could alias
        pq.write_table(table, path, compression=compression, use_dictionary=False)
    read, read_qrels = rm.Run.from_parquet(files["run"]), rm.Qrels.from_parquet(files["qrels"])
    expected = rm.evaluate(qrels, run, ["map", "ndcg@10"]).per_query
    for path in files.values():  # the same files (the same inodes), every byte overwritten
        size = path.stat().st_size
        with open(path, "r+b") as handle:
            handle.write(b"\xff" * size)
    with pytest.raises(rm.RagMetricsError, match="Parquet"):  # the overwrite took place
        rm.Run.from_parquet(files["run"])
    assert read == run and read_qrels == qrels
    assert rm.evaluate(read_qrels, read, ["map", "ndcg@10"]).per_query == expected


def test_every_file_of_a_folder_keeps_its_empty_rankings(tmp_path: Path) -> None:
    """A query ranked with no result is written in the Parquet file's metadata. pyarrow keeps
    the first file's metadata only when it reads a folder: the other files' empty rankings
    were lost, those queries counted missing from the run and left out of the mean
    (``missing="skip"``), where the stream scored them 0. Read in memory or streamed, a
    folder now gives the same numbers and counts, and a bad list names its file."""
    pq = pytest.importorskip("pyarrow.parquet")
    folder = tmp_path / "parts"
    folder.mkdir()
    rm.Run.from_dict({"q1": {"a": 2.0, "b": 1.0}}).to_parquet(folder / "part-0.parquet")
    rm.Run.from_dict({"q2": {"c": 1.0}, "q3": {}}).to_parquet(folder / "part-1.parquet")
    qrels = {"q1": {"a": 1}, "q2": {"c": 1}, "q3": {"d": 1}}
    run = rm.read_run(folder)
    assert run.to_dict() == {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0}, "q3": {}}
    in_memory = rm.evaluate(qrels, run, ["P@1"])
    streamed = rm.evaluate_stream(qrels, folder, ["P@1"], progress=False)
    assert in_memory.aggregate == streamed.aggregate == {"P@1": 2 / 3}
    assert in_memory.counts == streamed.counts and in_memory.counts.empty_rankings == 1
    table = pq.read_table(folder / "part-1.parquet")
    metadata = {**table.schema.metadata, b"ragmetrics.empty_rankings": b'{"q3": 1}'}
    pq.write_table(table.replace_schema_metadata(metadata), folder / "part-1.parquet")
    with pytest.raises(rm.errors.InputFormatError, match=r"part-1\.parquet: .*JSON list"):
        rm.read_run(folder)


def test_an_empty_ranking_keeps_the_runs_bytes_and_dropped_copies(tmp_path: Path) -> None:
    """Adding the empty rankings a file lists keeps the run as it was read (its ids as bytes,
    its repeated docs counted), instead of building it again from Python dicts (which lost
    the count of dropped copies, and read a large run at the speed of dicts)."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from ragmetrics.data._store import store_of

    table = pa.table(
        {"query_id": ["q1", "q1", "q1", "q2"], "doc_id": ["a", "b", "a", "c"],
         "score": [3.0, 2.0, 1.0, 1.0]}
    )  # fmt: skip
    table = table.replace_schema_metadata({b"ragmetrics.empty_rankings": b'["q3", "q2"]'})
    pq.write_table(table, tmp_path / "run.parquet")
    run = rm.read_run(tmp_path / "run.parquet")
    assert run.to_dict() == {"q1": {"a": 3.0, "b": 2.0}, "q2": {"c": 1.0}, "q3": {}}
    assert dict(run.duplicates) == {"q1": 1}
    assert store_of(run).encoded() is not None and store_of(run)._ids is not None
    counts = rm.evaluate({"q1": {"a": 1}, "q3": {"x": 1}}, run, ["P@1"]).counts
    assert counts.repeated_ids_dropped == 1 and counts.empty_rankings == 1


def test_a_bad_row_of_a_parquet_file_is_named_with_the_file(tmp_path: Path) -> None:
    """What the careful path finds wrong in a Parquet file's rows says which file, not
    "DataFrame" (the constructor it goes through)."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    judged = {"query_id": ["q1", "q1"], "doc_id": ["a", "a"], "relevance": [1, 2]}
    pq.write_table(pa.table(judged), tmp_path / "qrels.parquet")
    with pytest.raises(
        rm.errors.InputFormatError, match=r"^\S*qrels\.parquet: 'a' is judged twice"
    ):
        rm.read_qrels(tmp_path / "qrels.parquet")
    ranked = {"query_id": ["q1", None], "doc_id": ["a", "b"], "score": [1.0, 0.5]}
    pq.write_table(pa.table(ranked), tmp_path / "run.parquet")
    with pytest.raises(
        rm.errors.InputFormatError, match=r"^\S*run\.parquet: .*'query_id' is empty"
    ):
        rm.read_run(tmp_path / "run.parquet")


@pytest.mark.parametrize("distinct", [20, 240, 250, 260, 500])
def test_dictionary_ids_go_through_codes_only_when_they_repeat(distinct: int) -> None:
    """A dictionary-encoded doc column (Polars' categorical ids, a Parquet file's dictionary
    pages) is read through its codes when ids repeat (each distinct id hashed once); when
    its dictionaries together hold more than half its rows (mostly distinct ids, a
    dictionary a row group), the ids are decoded and read as plain strings. 4 chunks of 500
    rows, each with ``distinct`` ids of its own: 960 or 1,000 of 2,000 go through the codes, 1,040 do
    not. Both read the same run and give the same numbers."""
    rng = random.Random(distinct)
    rows = [
        (f"q{k // 20:03d}", f"doc-{k // 500}-{k % distinct:05d}", float(rng.randint(0, 9)))
        for k in range(2_000)
    ]
    columns = list(zip(*rows, strict=True))
    plain = pyarrow.table({"query_id": columns[0], "doc_id": columns[1], "score": columns[2]})
    coded = pyarrow.Table.from_batches(  # 4 chunks, each with its own dictionary
        [
            pyarrow.record_batch(
                [batch.column(0), batch.column(1).dictionary_encode(), batch.column(2)],
                names=batch.schema.names,
            )
            for batch in plain.to_batches(max_chunksize=500)
        ]
    )
    assert coded.column("doc_id").num_chunks == 4
    from ragmetrics.data._store import store_of

    run = rm.Run.from_arrow(coded)
    assert run == rm.Run.from_arrow(plain)
    assert (store_of(run)._dictionary is not None) == (distinct <= 250)
    qrels = {
        f"q{k // 20:03d}": {f"doc-{k // 500}-{k % distinct:05d}": 1} for k in range(0, 2_000, 3)
    }
    metrics = ["ndcg@10", "map", "P@5"]
    assert rm.evaluate(qrels, run, metrics).per_query == (
        rm.evaluate(qrels, run.to_dict(), metrics).per_query
    )


def test_a_grade_two_files_of_a_folder_disagree_on_names_the_folder(tmp_path: Path) -> None:
    """Read in memory, a folder is one table; its bad rows are named with their file (each
    file read alone, once something is wrong: tests/test_irregular_layouts.py). A doc judged
    in two files with two grades is a fault of the files together: the folder is named."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    judged = tmp_path / "qrels"
    judged.mkdir()
    pq.write_table(
        pa.table({"query_id": ["q1"], "doc_id": ["a"], "relevance": [1]}), judged / "a.parquet"
    )
    pq.write_table(
        pa.table({"query_id": ["q1"], "doc_id": ["a"], "relevance": [2]}), judged / "b.parquet"
    )
    with pytest.raises(rm.errors.InputFormatError, match=r"^\S*qrels: 'a' is judged twice"):
        rm.read_qrels(judged)


@pytest.mark.parametrize(
    ("missing", "encoded"),
    [("empty", False), ("empty", True), ("null in the dictionary", True)],
    ids=["empty string", "empty in a dictionary", "null in a dictionary"],
)
@pytest.mark.parametrize("layout", ["grouped", "scattered"])
def test_a_missing_query_id_in_arrow_is_named_never_read_as_a_query(
    missing: str, encoded: bool, layout: str
) -> None:
    """A query id that is empty, or a dictionary code that points at a null value (which
    Arrow does not count as a null), is refused with the row that holds it, from a run or
    qrels table grouped or not; it used to become a query named '' or None."""
    pa = pytest.importorskip("pyarrow")
    n = 30_000  # past the bounds that send a scattered column through its codes
    codes = np.tile([0, 1, 2], n // 3) if layout == "scattered" else np.repeat([0, 1, 2], n // 3)
    names = ["q0", "" if missing == "empty" else None, "q2"]
    if encoded:
        column = pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32)), pa.array(names))
    else:
        column = pa.array([names[c] for c in codes.tolist()])
    first = int(np.flatnonzero(codes == 1)[0])
    docs = pa.array([f"d{i}" for i in range(n)])
    run = pa.table({"query_id": column, "doc_id": docs, "score": pa.array(np.ones(n))})
    qrels = pa.table({"query_id": column, "doc_id": docs, "relevance": pa.array(np.ones(n, int))})
    for read in (lambda: rm.Run.from_arrow(run), lambda: rm.Qrels.from_arrow(qrels)):
        with pytest.raises(rm.errors.InputFormatError, match=f"'query_id'.* at row {first}\\b"):
            read()


def test_an_empty_id_in_a_dataframe_is_named() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"query_id": ["q1", "", "q2"], "doc_id": ["a", "b", "c"], "score": 1.0})
    with pytest.raises(rm.errors.InputFormatError, match="'query_id' has an empty id at row 1"):
        rm.Run.from_pandas(frame)
    frame = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", ""], "score": 1.0})
    with pytest.raises(rm.errors.InputFormatError, match="'doc_id' has an empty id at row 1"):
        rm.Run.from_pandas(frame)


def test_an_empty_id_in_json_records_is_named() -> None:
    with pytest.raises(rm.errors.InputFormatError, match="record 2: the query id is empty"):
        rm.Run.from_obj(
            [
                {"query_id": "q", "doc_id": "a", "score": 1},
                {"query_id": "", "doc_id": "b", "score": 1},
            ]
        )
    with pytest.raises(rm.errors.InputFormatError, match="record 1: the doc id is empty"):
        rm.Qrels.from_obj([{"query_id": "q", "doc_id": "", "relevance": 1}])


def test_a_bad_row_of_an_arrow_stream_is_counted_from_the_streams_start() -> None:
    """A stream's batch reports a bad row from its own start; the message says where the
    batch starts in the stream."""
    pa = pytest.importorskip("pyarrow")
    n = 3_000
    queries = np.repeat(np.array(["q0", "", "q2"]), n // 3)
    table = pa.table(
        {"query_id": queries, "doc_id": [f"d{i}" for i in range(n)], "score": np.ones(n)}
    )
    qrels = rm.Qrels.from_dict({"q0": {"d1": 1}})
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=400))
    with pytest.raises(rm.errors.InputFormatError, match=r"rows from row 800 on: .* at row 200;"):
        rm.evaluate_stream(qrels, reader, ["P@5"], progress=False)


@pytest.mark.parametrize("layout", ["grouped", "scattered"])
def test_dictionary_encoded_integer_query_ids_are_read_as_strings(layout: str) -> None:
    """Integer query ids are strings in a run, whether the column is plain or
    dictionary-encoded: the dictionary's integers used to become the query ids as they
    were, so that qrels of '7' found nothing in a run of 7 and every query scored 0."""
    pa = pytest.importorskip("pyarrow")
    n = 30_000
    codes = np.tile([7, 8, 9], n // 3) if layout == "scattered" else np.repeat([7, 8, 9], n // 3)
    column = pa.array(codes).dictionary_encode()
    docs = pa.array([f"d{i}" for i in range(n)])
    run = rm.Run.from_arrow(
        pa.table({"query_id": column, "doc_id": docs, "score": np.arange(n, dtype=float)})
    )
    qrels = rm.Qrels.from_arrow(
        pa.table({"query_id": column, "doc_id": docs, "relevance": np.ones(n, int)})
    )
    assert list(run) == list(qrels) == ["7", "8", "9"]
    best = {q: {run[q][0]: 1} for q in run}  # each query's top doc judged
    assert rm.evaluate(best, run, ["P@1"]).aggregate == {"P@1": 1.0}


@pytest.mark.parametrize("column", ["query_id", "doc_id"])
def test_boolean_ids_in_a_dataframe_are_refused(column: str) -> None:
    """A column of booleans is not ids (Arrow's reader already refused it): 'True' and
    'False' would silently become two ids."""
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "score": [1.0, 2.0]})
    frame[column] = [True, False]
    with pytest.raises(
        rm.errors.InputFormatError, match=f"'{column}' holds booleans \\(e.g. True\\)"
    ):
        rm.Run.from_pandas(frame)


@pytest.mark.parametrize("layout", ["string", "large_string", "dictionary", "parquet"])
def test_ids_beyond_ascii_take_the_buffer_path_with_the_careful_paths_numbers(
    tmp_path: Path, layout: str
) -> None:
    """Doc and query ids beyond ASCII (accents, CJK, Greek, a combining mark, an emoji), in
    columns of every layout Arrow gives, are packed as their UTF-8 bytes, and the numbers
    equal those of the same run given as dicts (ids as strings), tied scores (ordered by
    doc id) included, with qrels given as dicts or as Parquet."""
    import pyarrow.parquet as pq

    from ragmetrics.formats import _columnar

    rng = random.Random(21)
    rows, judged = [], {}
    for query, docs in rankings_beyond_ascii(rng, 40, 50, 20):
        for doc in docs:
            rows.append((query, doc, rng.choice([1.0, 0.5, 0.25, rng.random()])))
            if rng.random() < 0.3:
                judged.setdefault(query, {})[doc] = rng.randrange(3)
    rng.shuffle(rows)
    queries, docs, scores = (list(column) for column in zip(*rows, strict=True))
    kinds = {"large_string": pyarrow.large_string(), "dictionary": pyarrow.dictionary(
        pyarrow.int32(), pyarrow.string())}  # fmt: skip
    kind = kinds.get(layout, pyarrow.string())
    table = pyarrow.table({"query_id": pyarrow.array(queries, kind),
                           "doc_id": pyarrow.array(docs, kind), "score": scores})  # fmt: skip
    if layout == "parquet":
        pq.write_table(table, tmp_path / "run.parquet")
        table = pq.read_table(tmp_path / "run.parquet")
    packed = _columnar.packed_columns(table, "query_id", "doc_id", "score")
    assert packed is not None
    as_dicts: dict[str, dict[str, float]] = {}
    for q, d, s in rows:
        as_dicts.setdefault(q, {})[d] = s
    run = rm.Run.from_arrow(table)
    assert run == rm.Run.from_dict(as_dicts)
    metrics = ["ndcg@5", "map", "P@3", "mrr", "recall@10"]
    expected = rm.evaluate(judged, as_dicts, metrics)
    qrels_table = pyarrow.table({
        "query_id": [q for q, g in judged.items() for _ in g],
        "doc_id": [d for g in judged.values() for d in g],
        "relevance": [v for g in judged.values() for v in g.values()],
    })  # fmt: skip
    pq.write_table(qrels_table, tmp_path / "qrels.parquet")
    for qrels in (judged, rm.Qrels.from_dict(judged), rm.read_qrels(tmp_path / "qrels.parquet")):
        assert rm.evaluate(qrels, run, metrics).per_query == expected.per_query


_FRAMES = {
    "grouped": ([f"q{i // 7}" for i in range(70)], [f"d{i % 9}" for i in range(70)]),
    "scattered, repeated docs": (
        [f"q{i % 5}" for i in range(70)],
        [f"Page {i % 11} (film)" for i in range(70)],
    ),
    "an empty id": (["q1", "q1", "q2"], ["a", "", "b"]),
    "a missing id": (["q1", "q1", "q2"], ["a", None, "b"]),
}


@pytest.mark.parametrize("name", list(_FRAMES))
@pytest.mark.parametrize("scores", ["floats", "ints", "with inf", "with NaN"])
def test_a_dataframe_of_strings_reads_through_arrow_as_row_by_row(
    name: str, scores: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pandas keeps strings in Arrow (pandas 3's default, ``string[pyarrow]``) or as Python
    objects (pandas 2's default): either frame is read through Arrow, without a Python
    string per row, and gives the run, the dropped copies and the errors the row-by-row
    reader gives."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    from ragmetrics.data._store import store_of

    queries, docs = _FRAMES[name]
    values: list[float] = [float(i % 4) for i in range(len(queries))]
    if scores == "with inf":
        values[1] = float("inf")
    elif scores == "with NaN":
        values[1] = float("nan")
    column = [int(v) for v in values] if scores == "ints" else values
    plain = pd.DataFrame({"query_id": queries, "doc_id": docs, "score": column}, dtype=object)
    plain["score"] = plain["score"].astype("int64" if scores == "ints" else "float64")
    read = _read_both_ways(rm.Run.from_pandas, plain, monkeypatch)
    if read is not None:
        expected, *frames = read
        for got in frames:
            assert got == expected and got.duplicates == expected.duplicates
            if scores == "floats":  # read through Arrow: ids as bytes
                assert store_of(got).ids is not None


def _read_both_ways(read: Any, plain: Any, monkeypatch: pytest.MonkeyPatch) -> list[Any] | None:
    """``read`` of ``plain`` (Python objects) row by row, then of it and of the same frame
    with its ids in Arrow as ``read`` takes them; None when the row-by-row reader refuses the
    frame, after checking that both others are refused in the same words."""
    arrow = plain.astype({"query_id": "string[pyarrow]", "doc_id": "string[pyarrow]"})
    refused = None
    with monkeypatch.context() as patched:
        patched.setattr(_columnar, "packed_from_pandas", lambda *args, **kwargs: None)
        try:
            expected = read(plain)
        except rm.InputFormatError as error:
            refused = error
    if refused is None:
        return [expected, read(arrow), read(plain)]
    for frame in (arrow, plain):
        with pytest.raises(rm.InputFormatError, match=re.escape(str(refused))):
            read(frame)
    return None


@pytest.mark.parametrize(
    ("odd", "value"),
    [("bytes", b"d1"), ("an integer", 7), ("a float", 7.5), ("a numpy string", np.str_("d1"))],
)
def test_a_dataframe_of_objects_not_all_strings_reads_as_row_by_row(
    odd: str, value: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A column of Python objects goes through Arrow only when they are strings: bytes
    (which Arrow would take as text) and floats are refused as the row-by-row reader refuses
    them, integers become strings as there, numpy strings are strings."""
    pd = pytest.importorskip("pandas")
    docs = pd.Series(["a", value, "b", "c"], dtype=object)
    frame = pd.DataFrame({"query_id": ["q1", "q1", "q2", "q2"], "doc_id": docs})
    frame["score"] = [1.0, 0.5, 0.2, 0.1]
    with monkeypatch.context() as patched:
        patched.setattr(_columnar, "packed_from_pandas", lambda *args, **kwargs: None)
        try:
            expected = rm.Run.from_pandas(frame).to_dict()
        except rm.InputFormatError as error:
            expected = error
    if isinstance(expected, rm.InputFormatError):
        assert odd in ("bytes", "a float")
        with pytest.raises(rm.InputFormatError, match=re.escape(str(expected))):
            rm.Run.from_pandas(frame)
    else:
        assert rm.Run.from_pandas(frame).to_dict() == expected
        assert expected["q1"] == {"a": 1.0, str(value): 0.5}


@pytest.mark.parametrize("kind", ["int64", "uint64", "int32", "bool"])
def test_a_dataframe_of_integer_ids_reads_through_arrow_as_row_by_row(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Integer ids (MS MARCO's passage numbers) are written as decimal strings by Arrow, as
    the row-by-row reader writes them, and packed; a column of booleans is still refused."""
    pd = pytest.importorskip("pandas")
    from ragmetrics.data._store import store_of

    values = [0, 7, 2**31 - 1, 7, 12, 3] if kind != "bool" else [True, False] * 3
    if kind == "int64":
        values[1] = -5
    if kind == "uint64":
        values[2] = 2**64 - 1
    ids = pd.Series(values, dtype=kind)
    frame = pd.DataFrame({"query_id": pd.Series([4, 4, 4, 9, 9, 9], dtype=kind), "doc_id": ids})
    frame["score"] = [3.0, 2.0, 1.0, 1.0, 2.0, 2.0]
    frame["relevance"] = [1, 0, 2, 1, 0, 3]
    for read in (rm.Run.from_pandas, rm.Qrels.from_pandas):
        with monkeypatch.context() as patched:
            patched.setattr(_columnar, "packed_from_pandas", lambda *args, **kwargs: None)
            try:
                expected = read(frame).to_dict()
            except rm.InputFormatError as error:
                assert kind == "bool"
                with pytest.raises(rm.InputFormatError, match=re.escape(str(error))):
                    read(frame)
                continue
        got = read(frame)
        assert got.to_dict() == expected and store_of(got).ids is not None


def test_a_dataframe_reads_row_by_row_where_pyarrow_is_not_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """pandas runs without pyarrow: a frame of Python objects is then read row by row, not
    refused for want of the Parquet extra."""
    pd = pytest.importorskip("pandas")

    def missing() -> Any:
        raise rm.errors.MissingDependencyError("pyarrow is not installed")

    monkeypatch.setattr(_columnar, "import_pyarrow", missing)
    frame = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"]}, dtype=object)
    frame["score"] = [1.0, 0.5]
    frame["relevance"] = [1, 0]
    assert rm.Run.from_pandas(frame).to_dict() == {"q1": {"a": 1.0, "b": 0.5}}
    assert rm.Qrels.from_pandas(frame).to_dict() == {"q1": {"a": 1, "b": 0}}


_QRELS_FRAMES = {
    "grouped": ([f"q{i // 7}" for i in range(70)], [f"d{i}" for i in range(70)], None),
    "scattered": ([f"q{i % 5}" for i in range(70)], [f"Page {i} (film)" for i in range(70)], None),
    "a doc judged twice alike": (["q1", "q1", "q2"], ["a", "a", "b"], [2, 2, 1]),
    "a doc judged twice apart": (["q1", "q1", "q2"], ["a", "a", "b"], [2, 0, 1]),
    "an empty id": (["q1", "q1", "q2"], ["a", "", "b"], None),
    "a missing id": (["q1", "q1", "q2"], ["a", None, "b"], None),
}


@pytest.mark.parametrize("name", list(_QRELS_FRAMES))
def test_qrels_from_a_dataframe_of_strings_read_through_arrow_as_row_by_row(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Qrels with ids pandas keeps in Arrow or as Python strings, and integer grades, take
    the Arrow path and give the qrels and the errors the row-by-row reader gives."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    from ragmetrics.data._store import store_of

    queries, docs, grades = _QRELS_FRAMES[name]
    grades = grades or [i % 4 for i in range(len(queries))]
    plain = pd.DataFrame({"query_id": queries, "doc_id": docs}, dtype=object)
    plain["relevance"] = pd.Series(grades, dtype="int64")
    read = _read_both_ways(rm.Qrels.from_pandas, plain, monkeypatch)
    if read is not None:
        expected, *frames = read
        for got in frames:
            assert got.to_dict() == expected.to_dict()
            if name == "grouped":  # read through Arrow: ids as bytes
                assert store_of(got).ids is not None
