"""Runs and qrels read from plain TREC files keep their doc ids as bytes; the judge joins
them by hashing.

Each case writes the same data to TREC files and builds it from dicts too; both must agree on
every metric per query, on rankings, judgments and the repeats dropped, also when hashes
collide on purpose (the join must notice and compare strings instead).
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

import ragmetrics as rm
from ragmetrics.data._store import store_of
from ragmetrics.formats import _packed

METRICS = ["P@1", "P@5", "recall@20", "map", "mrr", "ndcg@10", "ndcg_exp", "r_precision", "err@5"]


def _random_case(
    seed: int, *, repeats: bool = False, split: bool = False
) -> tuple[dict[str, dict[str, int]], list[tuple[str, str, float]]]:
    """Graded qrels and run lines (query, doc, score) with ties, ids of many widths, queries
    missing on either side, and (on request) repeated docs and queries split in two."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    lines: list[tuple[str, str, float]] = []
    for q in range(120):
        query = f"q{q}"
        pool = [f"d{rng.randrange(10 ** rng.randint(1, 6))}x" for _ in range(60)]
        if q % 7:
            qrels[query] = {d: rng.choice([-1, 0, 1, 2, 3]) for d in rng.sample(pool, 12)}
        if q % 11 == 0:
            continue  # judged, never retrieved
        docs = list(dict.fromkeys(rng.sample(pool, rng.randint(1, 40))))
        if repeats and q % 5 == 0:
            docs += rng.sample(docs, min(2, len(docs)))
        for doc in docs:
            lines.append((query, doc, float(rng.choice([1, 2, 3, rng.random()]))))
    if split:  # move the first query's last line to the end of the file
        lines.append(lines.pop(next(i for i, line in enumerate(lines) if line[0] != "q1") - 1))
    return qrels, lines


def _write(lines: list[tuple[str, str, float]], path: Path) -> Path:
    with open(path, "w") as handle:
        handle.writelines(f"{q} Q0 {d} 0 {s!r} tag\n" for q, d, s in lines)
    return path


def _as_dict(lines: list[tuple[str, str, float]]) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    for query, doc, score in lines:
        docs = run.setdefault(query, {})
        docs[doc] = max(score, docs.get(doc, score))
    return run


def _assert_same(qrels: rm.Qrels, a: rm.Run, b: rm.Run) -> None:
    for missing in ("zero", "skip"):
        first = rm.evaluate(qrels, a, METRICS, missing=missing)
        second = rm.evaluate(qrels, b, METRICS, missing=missing)
        assert first.per_query == second.per_query
        assert first.counts.queries == second.counts.queries
    assert a.to_lists() == b.to_lists()


@pytest.mark.parametrize("seed", range(4))
def test_packed_run_equals_the_same_run_from_dicts(seed: int, tmp_path: Path) -> None:
    qrels, lines = _random_case(seed)
    run = rm.Run.from_trec(_write(lines, tmp_path / "run.txt"))
    assert store_of(run).ids is not None  # the case exercises the bytes path
    _assert_same(rm.Qrels.from_dict(qrels), run, rm.Run.from_dict(_as_dict(lines)))
    assert run.duplicates == {}


def test_repeated_docs_are_kept_once_and_counted(tmp_path: Path) -> None:
    qrels, lines = _random_case(9, repeats=True)
    run = rm.Run.from_trec(_write(lines, tmp_path / "run.txt"))
    expected = rm.Run.from_dict(_as_dict(lines))
    _assert_same(rm.Qrels.from_dict(qrels), run, expected)
    assert sum(run.duplicates.values()) == len(lines) - expected.n_results > 0


def test_a_query_split_across_the_file(tmp_path: Path) -> None:
    qrels, lines = _random_case(3, split=True)
    run = rm.Run.from_trec(_write(lines, tmp_path / "run.txt"))
    _assert_same(rm.Qrels.from_dict(qrels), run, rm.Run.from_dict(_as_dict(lines)))


def test_judged_ids_that_cannot_be_bytes(tmp_path: Path) -> None:
    # a non-ASCII or zero-byte judged id never matches a packed run; strings answer instead
    qrels, lines = _random_case(4)
    qrels["q1"]["dé"] = 2
    qrels["q2"][lines[0][1] + "\x00"] = 3
    run = rm.Run.from_trec(_write(lines, tmp_path / "run.txt"))
    judged = rm.Qrels.from_dict(qrels)
    assert store_of(judged).encoded() is None
    _assert_same(judged, run, rm.Run.from_dict(_as_dict(lines)))


@pytest.mark.parametrize("buckets", [1, 3, 1000])
def test_colliding_hashes_change_nothing(
    buckets: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every id hashed into a few buckets: equal hashes everywhere, equal ids rarely
    real = _packed.hashes

    def crowded(ids: np.ndarray, words: int) -> np.ndarray:
        # in the bits the join keeps (16 to 62), plus noise in the low bits it drops
        return (real(ids, words) % np.uint64(buckets) << np.uint64(20)) | (
            real(ids, words) >> np.uint64(50)
        )

    monkeypatch.setattr(_packed, "hashes", crowded)
    qrels, lines = _random_case(5, repeats=buckets == 3)
    run = rm.Run.from_trec(_write(lines, tmp_path / "run.txt"))
    expected = rm.Run.from_dict(_as_dict(lines))
    _assert_same(rm.Qrels.from_dict(qrels), run, expected)
    assert sum(run.duplicates.values()) == len(lines) - expected.n_results
    read = rm.Qrels.from_trec(_write_qrels(qrels, tmp_path / "qrels.txt"))
    assert store_of(read).ids is not None and read.to_dict() == qrels  # no repeat seen where none
    _assert_same(read, run, expected)


def _encode(ids: list[str]) -> np.ndarray | None:
    return _packed.encode([ids[:2], (), ids[2:]], len(ids))  # groups, one of them empty


def test_ids_as_bytes_round_trip() -> None:
    ids = ["a", "abcdefgh", "abcdefghi", "x" * 40, "Q0-17"]
    packed = _encode(ids)
    assert packed is not None and _packed.decode(packed) == ids
    wide = np.array(ids, dtype="S64")  # the same ids in a wider array hash the same
    words = _packed.n_words(packed, wide)
    assert np.array_equal(_packed.hashes(packed, words), _packed.hashes(wide, words))
    for ids in (["a\x00"], ["ok", "\x00"], ["\ud800"]):  # a NUL (the padding), a lone surrogate
        assert _encode(ids) is None, ids
    # whitespace, controls and format characters of any kind are kept, and given back whole
    kept = (["a b"], ["ok", "tab\there"], ["\x7f"], ["a\u00a0b"], ["\u200b"], ["é", "a\u3000"],
            ["  ", "a"], [" lead", "trail ", "x"], ["line\nbreak", "y"], ["\x01\x1f", "\r\n"],
            ["Barack Obama", "Paris (France)", "東京 駅"])  # fmt: skip
    for ids in kept:
        encoded = _encode(ids)
        assert encoded is not None and _packed.decode(encoded) == ids, ids
    for unusual in (["", "a"], ["a" * 256, "b" * 256], ["x\ny", "z"], ["~!", "}{"],
                    ["é", "東京", "📚"], ["é" * 128, "ü\nx"]):  # fmt: skip
        encoded = _encode(unusual)  # empty, long, newline, the edges of printable ASCII, UTF-8
        assert encoded is not None and encoded.tolist() == [i.encode() for i in unusual]
    for long in (["a" * 300, "b" * 300], ["a" * 257, "b"], ["x\ny" * 90, "z"], ["é" * 129, "a"]):
        encoded = _encode(long)  # past 256 bytes: a stand-in of 16 bytes, given back whole
        assert encoded is not None and encoded.dtype.itemsize == 16, long
        assert _packed.decode(encoded) == long
        assert _packed.standin_rows(encoded).tolist() == [i for i, d in enumerate(long)
                                                          if len(d.encode()) > 256]  # fmt: skip
    accented = ["café", "東京-1", "e\u0301", "naïve"]
    packed = _encode(accented)
    assert packed is not None and _packed.decode(packed) == accented
    empty = _packed.encode([], 0)
    assert empty is not None and len(empty) == 0 and _packed.decode(empty) == []


@pytest.mark.parametrize(
    "ids",
    [
        [str(uuid) for uuid in ("0" * 36, "f" * 36, "a-b-c".ljust(36, "9"))],  # one width
        ["abc", "abd", "ab", "abcd"],  # one width but the last, then shorter, then longer
        ["abc", "de", "fgh"],  # the first width breaks in the middle
        ["x" * 8, "y" * 8],  # whole words
        ["z"],
    ],
)
def test_ids_of_one_width_or_nearly(ids: list[str]) -> None:
    packed = _packed.encode([ids], len(ids))
    assert packed is not None and packed.tolist() == [i.encode() for i in ids]
    assert _packed.decode(packed) == ids


def _write_qrels(qrels: dict[str, dict[str, int]], path: Path) -> Path:
    with open(path, "w") as handle:
        for query, docs in qrels.items():
            handle.writelines(f"{query} 0 {doc} {grade}\n" for doc, grade in docs.items())
    return path


@pytest.mark.parametrize("seed", range(3))
def test_packed_qrels_equal_the_same_qrels_from_dicts(seed: int, tmp_path: Path) -> None:
    qrels, lines = _random_case(seed)
    qrels["empty-grades"] = {"z": 0}
    read = rm.Qrels.from_trec(_write_qrels(qrels, tmp_path / "qrels.txt"))
    assert store_of(read).ids is not None  # kept as bytes: nothing made per judgment yet
    expected = rm.Qrels.from_dict(qrels)
    assert len(read) == len(expected) and read.query_ids == expected.query_ids
    assert "q1" in read and "nope" not in read
    assert read.n_judgments == expected.n_judgments
    assert read.max_grade() == expected.max_grade() == 3
    runs = [
        rm.Run.from_trec(_write(lines, tmp_path / "run.txt")),
        rm.Run.from_dict(_as_dict(lines)),
    ]
    for run in runs:
        _assert_same(read, run, runs[1])
    _assert_same(read, runs[0], runs[1])
    assert read == expected and read.to_dict() == qrels  # dicts made on demand
    assert dict(read["q1"]) == qrels["q1"]


def test_packed_qrels_fall_back_for_repeats_and_split_queries(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 a 1\nq2 0 b 2\nq1 0 c 0\nq1 0 a 1\n")  # q1 split; a twice, same
    read = rm.Qrels.from_trec(path)
    assert read.to_dict() == {"q1": {"a": 1, "c": 0}, "q2": {"b": 2}}
    path.write_text("q1 0 a 1\nq1 0 a 2\n")
    with pytest.raises(rm.InputFormatError, match=r"line 2"):
        rm.Qrels.from_trec(path)


def test_packed_qrels_with_a_subset_of_queries(tmp_path: Path) -> None:
    # missing="skip" counts fewer queries than the qrels hold: the columns are not in order
    qrels, lines = _random_case(7)
    read = rm.Qrels.from_trec(_write_qrels(qrels, tmp_path / "qrels.txt"))
    kept = [line for line in lines if line[0] in {"q1", "q2", "q5"}]
    run = rm.Run.from_trec(_write(kept, tmp_path / "run.txt"))
    _assert_same(read, run, rm.Run.from_dict(_as_dict(kept)))


def test_every_byte_of_an_id_takes_part_in_its_hash() -> None:
    """Equal hashes are always checked byte for byte, so a poor hash still gives the right
    numbers, but slowly: ids that share long prefixes (URLs, paths, the chunk ids of one
    document) would all meet in the same places of every join. Each byte of every word must
    change the hash, and 100,000 such ids must not share one."""
    base = b"d" * 40
    variants = np.array([base[:k] + b"e" + base[k + 1 :] for k in range(len(base))])
    hashed = _packed.hashes(variants, _packed.n_words(variants))
    assert len(set(hashed.tolist())) == len(base)
    urls = np.array(
        [f"https://example.org/docs/part/{i:08d}#chunk-{i % 7}".encode() for i in range(100_000)]
    )
    for size in (100, 100_000):  # one chunk of the hashing, and several
        assert len(np.unique(_packed.hashes(urls[:size], _packed.n_words(urls)))) == size


def test_a_few_ids_past_256_bytes_stand_in_and_many_are_not_packed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Packed ids are padded to the widest: one id of 2,000 bytes among 100,000 short ones
    would take 200 MB (4 GB at 500,000). So an id past 256 bytes is packed as a stand-in of
    16 bytes (its first bytes, a NUL, a hash), in every array alike (ids of one width too:
    the same id must pack the same beside others), and given back whole. Chunk texts of 200
    to 2,000 bytes, every one past the limit, are not packed (the string path answers), nor
    are more long ids than the process keeps."""
    short = [f"d{i}" for i in range(100_000)]
    ids = [*short[:500], "x" * 2000, *short[500:]]
    packed = _packed.encode([ids], 100_001)
    assert packed is not None and packed.dtype == np.dtype("S16")
    assert _packed.standin_rows(packed).tolist() == [500] and _packed.decode(packed) == ids
    assert packed[500][:8] == b"x" * 7 + b"\x00"  # its first bytes, then the NUL
    for few in (["x" * 2000, "y\nz"], ["x" * 300, "y" * 290], [f"{i:0300d}" for i in range(16)]):
        packed = _packed.encode([few], len(few))
        assert (
            packed is not None and packed.dtype == np.dtype("S16") and _packed.decode(packed) == few
        )
    alone = _packed.encode([["x" * 300]], 1)
    mixed = _packed.encode([["a", "x" * 300]], 2)
    assert alone is not None and mixed is not None and alone[0] == mixed[1]  # one rule
    texts = [f"{i:0300d}" for i in range(17)]  # every id long: strings
    assert _packed.encode([texts], len(texts)) is None
    assert _packed.encode([[*texts, *short[:118]]], 135) is None  # past 1 in 8
    assert _packed.encode([[*texts, *short[:119]]], 136) is not None
    url = "https://example.com/" + "u" * 80  # 100 bytes: four times the mean and more
    urls = [f"{url[:-3]}{k:03d}" for k in range(20)]
    for others, width in ((short[:1000], 16), ([*urls, *short[:200]], 104), (urls, 100)):
        packed = _packed.encode([[url, *others]], len(others) + 1)
        assert packed is not None and packed.dtype.itemsize == width, width
        # up to 16, or one in 64, stand in; more are padded, as wide ids should be
        assert len(_packed.standin_rows(packed)) == (width == 16)
        assert _packed.decode(packed) == [url, *others]
    newline = ["a\nb", url, *short[:200]]  # encoded one by one: the same rule
    packed = _packed.encode([newline], len(newline))
    assert packed is not None and packed.dtype.itemsize == 16 and _packed.decode(packed) == newline
    assert _packed.standin_rows(packed).tolist() == [1]
    eight = [f"d{i:07d}" for i in range(1000)]
    near = _packed.encode([["x" * 30, *eight]], 1001)  # 30 bytes: not 4x the mean
    assert near is not None and near.dtype.itemsize == 32 and not len(_packed.standin_rows(near))
    monkeypatch.setattr(_packed, "_MAX_LONG", len(_packed._LONG) + 1)  # room for one more id
    twice = _packed.encode([["a", "z" * 300, "z" * 300]], 3)  # one id, kept once
    assert twice is not None and _packed.decode(twice) == ["a", "z" * 300, "z" * 300]
    assert _packed.encode([["a", "z" * 300, "w" * 300]], 3) is None  # the process is full
    monkeypatch.setattr(_packed, "_MAX_LONG", len(_packed._LONG) + 1)  # room for one, two come
    assert _packed.encode([["a", "v" * 300, "u" * 300]], 3) is None


@pytest.mark.parametrize(
    ("ids", "width"),
    [
        (["3be93fb8-d995-4a62-9b11-96f741b79d35"], 36),  # one UUID
        (["3be93fb8-d995-4a62-9b11-96f741b79d35", "58921843-1e0b-4ee5-a7be-99ae5052aa32"], 36),
        ([f"{i:036d}" for i in range(50)], 36),  # many of one width: rows of a matrix
        (["ab", "abcde", "abc"], 8),  # widths differ: cut at the newlines, whole words
        (["x" * 17, "y"], 24),
        (["a" * 256, "b"], 256),  # the widest the cut path holds
        (["a" * 256, "b" * 256], 256),  # of one width: the rows of a matrix
        (["a\nb" * 20, "c"], 60),  # a newline inside: one by one, as wide as the longest
        ([], 8),
    ],
)
def test_how_ids_are_cut_shows_in_their_width(ids: list[str], width: int) -> None:
    """Ids of one width (UUIDs, the ids of LlamaIndex and LangChain) are cut as the rows of a
    matrix, as wide as they are; ids of several widths are cut at the newlines that join
    them, into whole 8-byte words (the hashing then views them without a copy); ids holding
    a newline are encoded one by one. The width of the array says which path each took: a
    path that silently fell back would give the right ids, slowly. (Ids past 256 bytes
    stand in: test above.)"""
    packed = _packed.encode([ids], len(ids))
    assert packed is not None
    assert packed.dtype == np.dtype(f"S{width}")
    assert packed.tolist() == [i.encode() for i in ids]


def test_whole_word_ids_are_hashed_from_a_view_and_in_chunks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ids already whole words are read in place, not copied; a long array is hashed a chunk
    at a time, each id once (a chunk loop that re-read the rest of the array would still give
    the same hashes, in quadratic time)."""
    ids = np.array([f"{i:016d}".encode() for i in range(10)])
    assert np.shares_memory(_packed._words(ids, 2, "<u8"), ids)
    narrow = np.array([b"abc", b"de"])
    assert _packed._words(narrow, 1, "<u8").shape == (2, 1)
    assert _packed.n_words(narrow) == 1 and _packed.n_words(ids) == 2
    hashed_rows: list[int] = []
    chunk = _packed._hashes

    def counting(part: np.ndarray, words: int) -> np.ndarray:
        hashed_rows.append(len(part))
        return chunk(part, words)

    monkeypatch.setattr(_packed, "_hashes", counting)
    monkeypatch.setattr(_packed, "_HASH_CHUNK", 4)
    many = np.array([f"d{i}".encode() for i in range(11)])
    whole = _packed.hashes(many, 1)
    assert hashed_rows == [4, 4, 3]
    assert np.array_equal(whole, chunk(many, 1))


def test_word_rows_reach_the_last_start_the_buffer_holds() -> None:
    """``word_rows`` reads whole words from every start up to the buffer's end and clears
    every byte past each field: fields of one width (cleared in their last word only, or
    not at all when they fill it) and of several (cleared word by word), an empty field
    among them; no field at all gives no row."""
    data = b"abcdefghijklmnopqrstuvwxyz0123456789ABCDEF"
    buffer = np.frombuffer(data, dtype=np.uint8).copy()
    for widths in ([3, 3], [13, 13], [16, 16], [0, 0], [13, 2], [0, 9], [8, 16]):
        n_words = max(1, -(-max(widths) // 8))
        last = len(buffer) - 8 * n_words  # the last start that holds n_words words
        starts = np.array([0, last])
        rows = _packed.word_rows(buffer, starts, np.array(widths))
        assert rows.shape == (2, 8 * n_words)
        for row, start, width in zip(rows, starts, widths, strict=True):
            assert bytes(row[:width]) == data[start : start + width]
            assert not row[width:].any()  # zero past each field
    assert _packed.word_view(buffer).shape == (len(buffer) - 7,)
    none = _packed.word_rows(buffer, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    assert none.shape == (0, 8)


@pytest.mark.parametrize("width", [1, 2, 3, 4, 6, 7, 8, 9, 12, 16, 36, 40, 41, 64])
def test_ids_compared_as_words_equal_numpys_comparison(width: int) -> None:
    """Each pair differs, if at all, in one byte anywhere (the first, the last, a padding
    byte of a shorter id), or is equal: word by word gives numpy's answer."""
    rng = random.Random(width)
    left, right = [], []
    for _ in range(400):
        length = rng.randint(1, width)
        ident = bytes(rng.choice(b"abcXYZ019-_ \xc3\xa9") for _ in range(length))
        other = bytearray(ident)
        change = rng.random()
        if change < 0.4:
            at = rng.choice([0, length - 1, rng.randrange(length)])
            other[at] = (other[at] % 255) + 1  # another byte, never NUL
        elif change < 0.55 and length < width:
            other += b"q"  # one byte longer: where the other has padding
        left.append(ident)
        right.append(bytes(other))
    a = np.array(left, dtype=f"S{width}")
    b = np.array(right, dtype=f"S{width}")
    expected = a == b
    assert 0 < expected.sum() < len(expected)
    assert np.array_equal(_packed.equal(a, b), expected)
    assert np.array_equal(_packed.equal(a[::-1], b[::-1]), expected[::-1])  # views too
    wider = b.astype(f"S{width + 3}")  # two widths: numpy's comparison, the same answer
    assert np.array_equal(_packed.equal(a, wider), expected)
    assert _packed.equal(a[:0], b[:0]).shape == (0,)
