"""Array helpers for values kept query by query: flat, with a length per query."""

from __future__ import annotations

from itertools import islice, repeat
from typing import Any

import numpy as np

from ragmetrics._util.threads import map_threaded


def offsets_of(lengths: np.ndarray) -> np.ndarray:
    """Where each query starts in the flat arrays, plus the total at the end."""
    if len(lengths) == 1:  # one query (single-query scoring): no cumulative sum to run
        return np.array([0, lengths[0]], dtype=np.int64)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


def stable_order(codes: np.ndarray, n_codes: int) -> np.ndarray:
    """``np.argsort(codes, kind="stable")`` for non-negative integer codes in
    ``[0, n_codes)``, faster: up to 16-bit codes, numpy's radix sort (a timsort of 500,000
    scattered int64 codes costs 15 ms; the radix sort 6 ms); up to 32-bit codes, two radix
    passes, the low 16 bits first, the high bits as bytes where they fit (10 million codes of
    17 bits: 0.28-0.30 s, against 0.69 s for :func:`sorted_keys`' one sort of 64-bit words
    on a machine whose numpy sorts them without vector instructions); wider codes, see
    :func:`sorted_keys`.

    Example:
        >>> stable_order(np.array([2, 0, 2, 1, 0]), 3).tolist()
        [1, 4, 3, 0, 2]
    """
    if n_codes <= 1 << 16:
        return np.argsort(codes.astype(np.uint16), kind="stable")
    if n_codes <= 1 << 32:
        high = (codes >> 16).astype(np.uint8 if n_codes <= 1 << 24 else np.uint16)
        order = np.argsort((codes & 0xFFFF).astype(np.uint16), kind="stable")
        ordered: np.ndarray = order[np.argsort(high[order], kind="stable")]
        return ordered
    return sorted_keys(codes, (n_codes - 1).bit_length())[1]


def sorted_keys(keys: np.ndarray, key_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """``keys`` (non-negative integers below ``2**key_bits``) sorted, and the stable order
    that sorts them (``np.argsort(keys, kind="stable")``).

    Each key is packed with its row number below it into one 64-bit word, and the words
    sorted by value, not by index: numpy sorts 64-bit values with the processor's vector
    instructions, and the row numbers make equal keys keep their order. 10 million codes
    of 17 bits: 165 ms, against 460 ms for two 16-bit radix passes and 1.2 s for numpy's
    stable argsort. Keys too wide to share a word with the row numbers are sorted 16 bits
    at a time by radix passes, the low bits first."""
    n = len(keys)
    row_bits = max(1, (n - 1).bit_length())
    if key_bits + row_bits <= 64:
        packed = keys.astype(np.uint64) << np.uint64(row_bits)
        packed |= np.arange(n, dtype=np.uint64)
        packed.sort()
        order = (packed & np.uint64((1 << row_bits) - 1)).astype(np.intp)
        packed >>= np.uint64(row_bits)
        return packed, order
    order = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
    shift = 16
    while key_bits > shift:
        digits = ((keys[order] >> shift) & 0xFFFF).astype(np.uint16)
        order = order[np.argsort(digits, kind="stable")]
        shift += 16
    return keys[order], order


def runs_in_order(lengths: np.ndarray, run_order: np.ndarray) -> np.ndarray:
    """The order of rows that takes whole runs of rows (``lengths``: each run's rows, in a
    row-after-row layout) in ``run_order``, each run's rows in their order.

    Example:
        >>> runs_in_order(np.array([2, 1, 3]), np.array([2, 0, 1])).tolist()
        [3, 4, 5, 0, 1, 2]
    """
    taken = lengths[run_order]
    order: np.ndarray = np.repeat(
        (np.cumsum(lengths) - lengths)[run_order] - (np.cumsum(taken) - taken), taken
    )
    order += np.arange(len(order))
    return order


def gathered(order: np.ndarray, *columns: np.ndarray) -> list[np.ndarray]:
    """Each of ``columns`` taken in ``order``, side by side on threads (numpy lets go of the
    interpreter while it gathers): a run's ids and scores put in a scattered order are two
    passes of cache misses each, 16 ms apiece for two million rows.

    Example:
        >>> ids, scores = gathered(np.array([2, 0]), np.array([5, 6, 7]), np.array([1.5, 2.5, 3.5]))
        >>> ids.tolist(), scores.tolist()
        ([7, 5], [3.5, 1.5])
    """
    return map_threaded(lambda column: column[order], columns)


def packed_in_order(
    order: np.ndarray,
    ids: np.ndarray,
    values: np.ndarray,
    dictionary: tuple[np.ndarray, np.ndarray] | None,
) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray] | None]:
    """A packed run's ids, values and, when it has them, dictionary codes (``(distinct,
    code per row)``) taken in ``order``, side by side (:func:`gathered`)."""
    if dictionary is None:
        ids, values = gathered(order, ids, values)
        return ids, values, None
    ids, values, codes = gathered(order, ids, values, dictionary[1])
    return ids, values, (dictionary[0], codes)


def first_of_runs(values: np.ndarray) -> np.ndarray:
    """Where each run of equal neighbours of ``values`` starts (its index)."""
    starts = np.ones(len(values), dtype=bool)
    np.not_equal(values[1:], values[:-1], out=starts[1:])
    return np.flatnonzero(starts)


def run_starts(rows: np.ndarray) -> np.ndarray:
    """For each item of the sorted ``rows``, where its run of equal values starts (as
    ``np.searchsorted(rows, rows)``, in linear time instead of a binary search each)."""
    first = first_of_runs(rows)
    return np.repeat(first, np.diff(first, append=len(rows)))


def lengths_of(items: list[Any]) -> np.ndarray:
    """``len`` of each item, as int64."""
    return np.fromiter(map(len, items), dtype=np.int64, count=len(items))


def split(flat: list[str], lengths: np.ndarray) -> list[tuple[str, ...]]:
    """Cut a flat list into one tuple per query (at C speed).

    Example:
        >>> split(["a", "b", "c"], np.array([2, 0, 1]))
        [('a', 'b'), (), ('c',)]
    """
    rest = iter(flat)
    return list(map(tuple, map(islice, repeat(rest), lengths.tolist())))


def spans(starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For spans ``[starts[i], starts[i] + counts[i])`` of a flat array: each element's span,
    its place within the span, and its index in the flat array.

    Example:
        >>> [a.tolist() for a in spans(np.array([5, 0]), np.array([2, 1]))]
        [[0, 0, 1], [0, 1, 0], [5, 6, 0]]
    """
    rows = np.repeat(np.arange(len(counts)), counts)
    columns = np.arange(len(rows)) - (np.cumsum(counts) - counts)[rows]
    return rows, columns, starts[rows] + columns


def pad_rows(
    counts: np.ndarray, values: np.ndarray, *, min_width: int = 0, fill: float = 0.0
) -> np.ndarray:
    """Values given query by query (the first ``counts[0]`` for row 0, and so on) as a
    matrix with one row per query, padded with ``fill`` (a view of ``values`` when every
    row is full).

    Example:
        >>> pad_rows(np.array([2, 1]), np.array([1.0, 2.0, 3.0])).tolist()
        [[1.0, 2.0], [3.0, 0.0]]
    """
    n_rows = len(counts)
    width = max(int(counts.max()) if n_rows else 0, min_width)
    if n_rows and width * n_rows == len(values):
        return values.reshape(n_rows, width)
    short = np.flatnonzero(counts != width)
    if len(short) <= max(16, n_rows // 256):
        return _pad_few(counts, values, short, width, fill)
    padded = np.full((n_rows, width), fill, dtype=values.dtype)
    # the cells a row's values fill, in row-major order: the values in their order (a mask
    # costs a byte a cell, where scattered indices cost sixteen a value and run slower)
    padded[np.arange(width) < counts[:, None]] = values
    return padded


def _pad_few(
    counts: np.ndarray, values: np.ndarray, short: np.ndarray, width: int, fill: float
) -> np.ndarray:
    """:func:`pad_rows` when few rows (``short``, ascending) are shorter than ``width``: the
    full rows between two short ones lie in ``values`` as they lie in the matrix, and are
    copied as one block; only the short rows are padded."""
    padded = np.empty((len(counts), width), dtype=values.dtype)
    starts = (np.cumsum(counts) - counts).tolist()
    row = 0
    for short_row, count in zip(short.tolist(), counts[short].tolist(), strict=True):
        if short_row > row:  # full rows, one block
            block = values[starts[row] : starts[short_row]]
            padded[row:short_row] = block.reshape(short_row - row, width)
        padded[short_row, :count] = values[starts[short_row] : starts[short_row] + count]
        padded[short_row, count:] = fill
        row = short_row + 1
    if row < len(counts):
        padded[row:] = values[starts[row] :].reshape(len(counts) - row, width)
    return padded


def fits_padded(lengths: np.ndarray, total: int) -> bool:
    """True when a matrix of one row per query, as wide as the longest, stays within a small
    multiple of the ``total`` values (else the queries are too uneven to pad)."""
    width = int(lengths.max()) if len(lengths) else 0
    return len(lengths) * width <= 4 * total + 4096


def row_sums(matrix: np.ndarray) -> np.ndarray:
    """Each row summed left to right, one term after another.

    numpy's ``sum`` adds in blocks whose layout depends on the row's length, so a query's
    value would depend on how wide the batch around it is padded; a running sum does not (a
    padded 0 adds exactly nothing), and it adds in rank order, as trec_eval does."""
    if matrix.shape[1] == 0:
        return np.zeros(matrix.shape[0])
    sums: np.ndarray = np.cumsum(matrix, axis=1)[:, -1]
    return sums


def row_counts(mask: np.ndarray) -> np.ndarray:
    """How many True each row of a boolean matrix holds (int64): the matrix, as 0s and 1s,
    times a vector of ones, one matrix-vector product. Each count is a sum of 0s and 1s
    below 2**24, exact in float32 in any order of addition; numpy's ``sum(axis=1)`` reduces
    each short row on its own, several times slower (rows of 20: 0.27 against 0.05 ms for
    13,000 rows)."""
    if mask.shape[1] >= 1 << 24:
        wide: np.ndarray = mask.sum(axis=1)
        return wide
    ones = np.ones(mask.shape[1], dtype=np.float32)
    counts: np.ndarray = (mask.astype(np.float32) @ ones).astype(np.int64)
    return counts
