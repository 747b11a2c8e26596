"""A gzip TREC run shared by N workers (``_stream_io.GzipShare``): each worker decompresses
from the start and skips to its share, and the shares, cut at query boundaries that the
workers on either side of a cut find alike, tile the decompressed file exactly. Run on both
gzip readers: zlib-ng's (the optional extra) and the standard library's."""

from __future__ import annotations

import gzip
import random
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

import ragmetrics as rm
from ragmetrics.engine import _parallel
from ragmetrics.formats import _io, _stream_io


@pytest.fixture(params=["zlib-ng", "stdlib"])
def reader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Which gzip reader opens the file; steps of 4 kB, and zlib-ng's reads of 8 kB (not
    512), so that a small file has many places to cut (the forked workers inherit both)."""
    if request.param == "zlib-ng":
        gzip_ng = pytest.importorskip("zlib_ng.gzip_ng", reason="the optional ragmetrics[gzip]")
        monkeypatch.setattr(gzip_ng, "READ_BUFFER_SIZE", 8192)
    else:
        monkeypatch.setattr(_io, "gzip_module", lambda: gzip)
        monkeypatch.setattr(_parallel, "gzip_module", lambda: gzip)
    monkeypatch.setattr(_stream_io, "_STEP", 4096)
    assert type(_io.open_bytes(_gzip_of(b"x"))).__module__.startswith(
        "zlib_ng" if request.param == "zlib-ng" else "gzip"
    )
    return str(request.param)


_FILES: list[Path] = []


def _gzip_of(data: bytes, members: int = 1) -> Path:
    """``data`` gzipped into a temporary file, in ``members`` gzip members (as ``cat a.gz
    b.gz`` makes), with zero bytes after the first member (which gzip readers skip)."""
    import tempfile

    cuts = np.linspace(0, len(data), members + 1).astype(int)
    parts = [gzip.compress(data[a:b], compresslevel=6) for a, b in pairwise(cuts)]
    if members > 1:
        parts[0] += b"\0" * 8
    handle = tempfile.NamedTemporaryFile(suffix=".gz", delete=False)  # noqa: SIM115
    handle.write(b"".join(parts))
    handle.close()
    _FILES.append(Path(handle.name))
    return Path(handle.name)


@pytest.fixture(autouse=True)
def _remove_files() -> Iterator[None]:
    yield
    while _FILES:
        _FILES.pop().unlink(missing_ok=True)


def _run_lines(seed: int, queries: int = 300) -> list[str]:
    """A run grouped by query: depths from 1 to 400 (one query far longer than a step),
    scores as Python writes them."""
    rng = random.Random(seed)
    lines = []
    for q in range(queries):
        depth = 2000 if q == queries // 2 else rng.choice([1, 3, 20, 100, 400])
        for rank in range(1, depth + 1):
            lines.append(f"q{q} Q0 doc-{rng.randrange(10**7)} {rank} {rng.random()} run\n")
    return lines


def _shares(path: Path, cuts: list[int]) -> list[tuple[int, bytes]]:
    """Each share's start and its bytes, read as the worker of that share reads it."""
    out = []
    for cut, following in pairwise([*cuts, None]):
        share = _stream_io.GzipShare(path, cut, following)
        try:
            out.append((share.start, _read_all(share, random.Random(cut))))
        finally:
            share.close()
    return out


def _read_all(share: _stream_io.GzipShare, rng: random.Random) -> bytes:
    """The share read by calls of every kind and size (the bytes must not depend on them)."""
    pieces = []
    while True:
        kind = rng.randrange(4)
        if kind == 0:
            piece = share.read(rng.choice([1, 7, 4096, 100_000]))
        elif kind == 1:
            piece = share.readline()
        elif kind == 2:
            piece = share.readline(rng.choice([1, 5, 50]))
        else:
            piece = share.read(rng.choice([3, 3000]))
        if not piece:
            return b"".join(pieces)
        pieces.append(piece)


@pytest.mark.parametrize("members", [1, 3])
def test_shares_tile_the_file_and_cut_between_queries(reader: str, members: int) -> None:
    data = "".join(_run_lines(1)).encode()
    path = _gzip_of(data, members)
    size = path.stat().st_size
    rng = random.Random(members)
    plans = [_stream_io.gzip_cuts(path, n, cost) for n in (2, 3, 8) for cost in (0.0, 0.23, 0.6)]
    plans += [[0, *sorted(rng.sample(range(1, size), k))] for k in (1, 4, 30)]
    plans.append([0, 1, 2, size - 1, size, size + 10])  # cuts at the edges, and past the end
    nonempty = 0
    for cuts in plans:
        shares = _shares(path, cuts)
        assert b"".join(part for _, part in shares) == data, cuts
        starts = [start for start, part in shares if part]
        nonempty += len(starts)
        assert starts[0] == 0
        for start in starts[1:]:
            before = data[:start].splitlines()[-1].split()[0]
            after = data[start:].split(b" ", 1)[0]
            assert data[start - 1 : start] == b"\n" and before != after
    assert nonempty > 3 * len(plans)  # the steps are small: most shares hold queries


def test_a_line_too_long_ends_the_search_for_a_boundary(reader: str) -> None:
    lines = _run_lines(2, queries=40)
    lines.insert(len(lines) // 2, "q-long Q0 " + "x" * ((1 << 20) + 10) + " 1 0.5 run\n")
    data = "".join(lines).encode()
    path = _gzip_of(data)
    size = path.stat().st_size
    for cuts in ([0, size // 2], [0, size // 3, size // 2, 2 * size // 3]):
        assert b"".join(part for _, part in _shares(path, cuts)) == data


def test_gzip_cuts_give_later_shares_less() -> None:
    path = _gzip_of(b"".join(line.encode() for line in _run_lines(3)))
    size = path.stat().st_size
    even = _stream_io.gzip_cuts(path, 4, 0.0)
    assert even == [round(size * k / 4) for k in range(4)]
    dear = _stream_io.gzip_cuts(path, 4, 0.6)
    widths = np.diff([*dear, size])
    assert dear[0] == 0 and np.all(np.diff(widths) < 0)  # each share smaller than the last
    a = 1 / 1.6  # every worker decompresses up to its share's end, then parses its share
    work = [(end / size) * 0.6 + (end - start) / size for start, end in pairwise([*dear, size])]
    assert np.allclose(work, work[0], rtol=1e-3), (work, a)
    assert _stream_io.gzip_cuts(_gzip_of(b"q Q0 d 1 1 r\n"), 50, 0.6)[0] == 0


def _same(a: rm.EvaluationResult, b: rm.EvaluationResult) -> None:
    assert a.aggregate == b.aggregate
    assert a.counts == b.counts
    assert a.query_ids == b.query_ids
    assert np.array_equal(a.values, b.values, equal_nan=True)


def _qrels(lines: list[str]) -> rm.Qrels:
    rng = random.Random(9)
    judged: dict[str, dict[str, int]] = {}
    for line in lines[::7]:
        query, _, doc, *_ = line.split()
        judged.setdefault(query, {})[doc] = rng.choice([0, 1, 2])
    judged["q-absent"] = {"d": 1}
    return rm.Qrels.from_dict(judged)


def test_workers_give_the_bits_of_one_process(reader: str, tmp_path: Path) -> None:
    lines = _run_lines(4)
    qrels = _qrels(lines)
    plain = tmp_path / "run.txt"
    plain.write_text("".join(lines))
    metrics = ["map", "ndcg@10", "recall@100", "mrr@10", "precision@5", "bpref", "unjudged@10"]
    one = rm.evaluate_stream(qrels, plain, metrics, per_query=True, batch_rows=700, progress=False)
    for members in (1, 4):
        packed = _gzip_of("".join(lines).encode(), members)
        for workers in (2, 3, 6):
            shared = rm.evaluate_stream(
                qrels, packed, metrics, per_query=True, batch_rows=700, workers=workers,
                progress=False,
            )  # fmt: skip
            _same(one, shared)
    assert one.counts.missing_from_run == 1


def test_bad_input_in_a_late_share_is_named_as_by_one_process(reader: str) -> None:
    lines = _run_lines(5)
    qrels = _qrels(lines)
    where = int(len(lines) * 0.9)
    bad = list(lines)
    bad[where] = bad[where].replace(" Q0 ", " Q0 doc\u00a0one ", 1)  # an odd field count
    path = _gzip_of("".join(bad).encode())
    with pytest.raises(rm.InputFormatError) as single:
        rm.evaluate_stream(qrels, path, ["map"], progress=False)
    with pytest.raises(rm.InputFormatError) as shared:
        rm.evaluate_stream(qrels, path, ["map"], workers=3, progress=False)
    assert str(shared.value) == str(single.value) and f"line {where + 1}" in str(single.value)

    long_line = list(lines)
    long_line.insert(where, "q-long Q0 " + "x" * ((1 << 20) + 10) + " 1 0.5 run\n")
    path = _gzip_of("".join(long_line).encode())
    with pytest.raises(rm.InputFormatError) as single:
        rm.evaluate_stream(qrels, path, ["map"], progress=False)
    with pytest.raises(rm.InputFormatError) as shared:
        rm.evaluate_stream(qrels, path, ["map"], workers=4, progress=False)
    assert str(shared.value) == str(single.value) and f"line {where + 1}" in str(single.value)

    whole = _gzip_of("".join(lines).encode())
    cut = whole.with_suffix(".cut.gz")
    cut.write_bytes(whole.read_bytes()[:-2000])
    _FILES.append(cut)
    with pytest.raises(rm.InputFormatError, match=r"the gzip stream is corrupt or truncated"):
        rm.evaluate_stream(qrels, cut, ["map"], workers=2, progress=False)


def test_standard_input_is_still_read_by_one_process(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import io
    import sys

    lines = _run_lines(6, queries=20)
    qrels = _qrels(lines)
    stdin = io.TextIOWrapper(io.BytesIO("".join(lines).encode()))
    monkeypatch.setattr(sys, "stdin", stdin)
    with pytest.warns(rm.OneProcessWarning, match="standard input is read in one pass"):
        piped = rm.evaluate_stream(qrels, "-", ["map"], workers=2, progress=False)
    (tmp_path / "run.txt").write_text("".join(lines))
    assert (
        piped.aggregate
        == rm.evaluate(qrels, rm.Run.from_trec(tmp_path / "run.txt"), ["map"]).aggregate
    )
