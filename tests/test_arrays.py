"""Array helpers that the readers and the evaluation share: rows padded into a matrix, and
Arrow string ids made fixed-width bytes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmetrics._util import arrays
from ragmetrics._util.arrays import pad_rows


def _masked(counts: np.ndarray, values: np.ndarray, width: int, fill: float) -> np.ndarray:
    padded = np.full((len(counts), width), fill)
    padded[np.arange(width) < counts[:, None]] = values
    return padded


@settings(max_examples=200, deadline=None)
@given(
    n_rows=st.integers(1, 600),
    width=st.integers(0, 12),
    short=st.lists(st.tuples(st.integers(0, 599), st.integers(0, 12)), max_size=40),
    extra=st.integers(0, 3),
)
def test_pad_rows_gives_every_row_its_values_then_the_fill(
    n_rows: int, width: int, short: list[tuple[int, int]], extra: int
) -> None:
    """Rows of one width with a few shorter (copied as blocks between them) or many (through
    a mask), a first or last row short, a min_width past every row: each row holds its
    values in order, then the fill."""
    counts = np.full(n_rows, width, dtype=np.int64)
    for row, count in short:
        if row < n_rows:
            counts[row] = min(count, width)
    values = np.arange(int(counts.sum()), dtype=np.float64) + 0.5
    min_width = int(counts.max()) + extra if extra else 0
    got = pad_rows(counts, values, min_width=min_width, fill=-1.0)
    expected = _masked(counts, values, max(int(counts.max()), min_width), -1.0)
    assert got.dtype == values.dtype
    assert np.array_equal(got, expected)


@pytest.mark.parametrize("kind", ["string", "large_string"])
@pytest.mark.parametrize("piece_rows", [3, 1 << 18])
def test_string_ids_become_fixed_width_bytes_piece_by_piece(
    monkeypatch: pytest.MonkeyPatch, kind: str, piece_rows: int
) -> None:
    """Ids of several widths over several arrays (a Parquet column's chunks) are padded with
    zeros to whole 8-byte words, a piece at a time, in order; ids of one width come as they
    are; ids beyond ASCII are padded byte by byte (Arrow would pad them by characters); an id
    that is empty, or holds a NUL, in any piece, sends the column to the string path (None);
    spaces, tabs and other characters are kept as they are."""
    pa = pytest.importorskip("pyarrow")
    from ragmetrics.formats import _columnar

    monkeypatch.setattr(_columnar, "_PAD_ROWS", piece_rows)
    kind_of = getattr(pa, kind)()
    chunks = [["d1", "doc-22", "x" * 9], ["7"], ["d" * 16, "e5"]]
    arrays = [pa.array(c, type=kind_of) for c in chunks]
    got = _columnar._fixed_width(arrays)
    assert got is not None
    assert got.dtype == np.dtype("S16")
    assert got.tolist() == [i.encode() for c in chunks for i in c]
    uuid_like = [pa.array(["a" * 36, "b" * 36], type=kind_of), pa.array(["c" * 36], type=kind_of)]
    one_width = _columnar._fixed_width(uuid_like)
    assert one_width.dtype == np.dtype("S36")
    assert one_width.tolist() == [b"a" * 36, b"b" * 36, b"c" * 36]
    single = _columnar._fixed_width(uuid_like[0])
    assert single.tolist() == [b"a" * 36, b"b" * 36]
    for bad in ("", "d\x002"):  # empty, or holding a NUL (the padding's byte)
        last = pa.array(["e1", "e2", bad], type=kind_of)
        assert _columnar._fixed_width([*arrays, last]) is None, bad
    for kept in ("d\t2", "d 2", "d\u00a0", "\u200b", " ", "a\nb\x7f"):
        last = pa.array(["e1", "e2", kept], type=kind_of)
        got = _columnar._fixed_width([*arrays, last])
        assert got is not None and got.tolist()[-1] == kept.encode(), kept
    accented = [*arrays, pa.array(["é1", "東京-22", "e\u0301" * 7], type=kind_of)]
    got = _columnar._fixed_width(accented)
    assert got is not None and got.dtype == np.dtype("S24")  # 21 bytes, whole words
    assert got.tolist() == [
        i.encode() for c in [*chunks, ["é1", "東京-22", "e\u0301" * 7]] for i in c
    ]


@pytest.mark.parametrize("width", [0, 1, 7, 20, 100, 1000])
def test_row_counts_equal_numpys_row_sums(width: int) -> None:
    rng = np.random.default_rng(width)
    for rows, density in ((0, 0.5), (1, 0.5), (300, 0.0), (300, 1.0), (300, 0.3)):
        mask = rng.random((rows, width)) < density
        counts = arrays.row_counts(mask)
        assert counts.dtype == np.int64
        assert np.array_equal(counts, mask.sum(axis=1))
    # a view (a block of a larger matrix, one column left out)
    mask = rng.random((50, width + 1)) < 0.5
    assert np.array_equal(arrays.row_counts(mask[::2, 1:]), mask[::2, 1:].sum(axis=1))
