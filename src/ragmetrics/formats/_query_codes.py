"""Runs of rows numbered by their query id's bytes, in the order the queries are first seen.

A TREC file is read in blocks, each a list of runs of lines that share a query id. In a file
grouped by query every run brings a new query; in a file sorted by doc id (a join's output)
almost every line is a run of its own and each query comes back once per doc. The readers
number the runs as the blocks arrive (:class:`QueryCodes`), and, only when some query came
back, bring each query's rows together with one stable sort of small integers: no sort of
hashes per block, no Python string per run, and the cost per row stays flat however many
queries the file holds.

While no query has come back, each new piece of runs is checked by one sort of its ids'
64-bit hashes and a search among the hashes met so far (a grouped file needs nothing else).
From the first query that comes back on, ids are looked up in an open table (a slot per
hash's low bits, beside the high 32 bits of the hash it holds; eight slots a query, four
past a million queries; a hash whose slot is taken goes to a sorted overflow list). A hash
never decides alone: every run's bytes are compared with the bytes of the query it was
given, and ids whose hashes meet (in the bits the table keeps) make
:meth:`QueryCodes.add` give up, so the caller reads the rows another way.
"""

from __future__ import annotations

import numpy as np

from ragmetrics._util.arrays import stable_order
from ragmetrics.formats._packed import decode, spread_hashes, word_matrix

__all__ = ["QueryCodes"]

_PIECE = 1 << 16  # runs looked up at a time: a piece's new ids are sorted among themselves
_GROW_AT = 2  # the table is grown when it has fewer slots than this many a query
_LOW = np.uint64(0xFFFFFFFF)  # a slot: the query's number in the low 32 bits
_EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)  # an empty slot (its number reads as -1)
_FIRST_SLOTS = 1 << 12


class QueryCodes:
    """Numbers each run of rows by its query id (0, 1, ... in the order first seen), run
    after run, block after block.

    Example:
        >>> codes = QueryCodes()
        >>> codes.add(np.array([b"q1", b"q2", b"q1"]), np.array([2, 1, 3]))
        True
        >>> queries, counts, order = codes.grouped()
        >>> queries, counts.tolist(), order.tolist()
        (['q1', 'q2'], [5, 1], [0, 1, 3, 4, 5, 2])
    """

    def __init__(self) -> None:
        self._rows = np.zeros((0, 1), dtype=np.uint64)  # each query's id, 8-byte words
        self._hashes = np.zeros(0, dtype=np.uint64)  # each query's hash
        self._n = 0  # the queries numbered so far
        self._slots = np.zeros(0, dtype=np.uint64)  # made once a query comes back
        self._sorted = np.zeros(0, dtype=np.uint64)  # the hashes met, sorted, until then
        self._over_hashes = np.zeros(0, dtype=np.uint64)  # hashes whose slot was taken, sorted
        self._over_codes = np.zeros(0, dtype=np.int32)
        self._codes: list[np.ndarray] = []  # each run's query
        self._lengths: list[np.ndarray] = []  # each run's rows
        self._last = -1  # the last run's query (a block's first run may go on with it)
        self._pending: list[tuple[np.ndarray, np.ndarray]] = []  # runs not numbered yet
        self._pending_runs = 0
        self.came_back = False  # some query's rows lie apart
        self._given_up = False  # two ids shared a hash

    def add(self, heads: np.ndarray, lengths: np.ndarray) -> bool:
        """Add runs of rows: ``heads``, each run's query id (an ``S`` array, zero-padded),
        and ``lengths``, its rows (a run may go on with the last one added). Numbered
        :data:`_PIECE` runs at a time. False when two different ids share a hash (vanishingly
        rare): the caller then reads the rows another way."""
        if len(heads):
            self._pending.append((heads, np.asarray(lengths, dtype=np.int64)))
            self._pending_runs += len(heads)
            if self._pending_runs >= _PIECE:
                return self._numbered_pending()
        return True

    def _numbered_pending(self) -> bool:
        """Number the runs added since the last time; False when two ids share a hash."""
        if self._given_up or not self._pending:
            return not self._given_up
        if len(self._pending) == 1:
            heads, lengths = self._pending[0]
        else:
            heads = np.concatenate([h for h, _ in self._pending])  # the widest width
            lengths = np.concatenate([n for _, n in self._pending])
        self._pending, self._pending_runs = [], 0
        words = word_matrix(heads)
        if words.shape[1] > self._rows.shape[1]:
            self._rows = _widened(self._rows, words.shape[1])
        hashed = spread_hashes(heads)
        codes = None if self.came_back else self._in_order(hashed, words)
        if codes is None:  # some query came back: looked up in the table from now on
            if not self.came_back:
                self.came_back = True
                self._table_made()
            codes = np.empty(len(heads), dtype=np.int32)
            for start in range(0, len(heads), _PIECE):
                piece = slice(start, start + _PIECE)
                codes[piece] = self._numbered(hashed[piece], words[piece])
        known = self._rows[codes]
        width = words.shape[1]
        if not (known[:, :width] == words).all() or known[:, width:].any():
            self._given_up = True  # two ids share a hash: the runs' bytes differ from their query's
            return False
        # a run of the query of the run before it (where blocks meet) goes on with it
        goes_on = np.empty(len(codes), dtype=bool)
        goes_on[0] = codes[0] == self._last
        np.equal(codes[1:], codes[:-1], out=goes_on[1:])
        if goes_on.any():  # rare: its rows are added to the run's before it
            codes, lengths = self._joined(codes, lengths, goes_on)
        if len(codes):
            self._codes.append(codes)
            self._lengths.append(lengths)
            self._last = int(codes[-1])
        return True

    def _in_order(self, hashed: np.ndarray, words: np.ndarray) -> np.ndarray | None:
        """The runs' numbers while no query has come back: each run a new query, numbered
        in order, or the query of the run just before it (where blocks meet); None when
        some query comes back. One sort of the new ids' hashes and a search of them among
        the hashes met so far (kept sorted): a file grouped by query never needs the table."""
        same = np.zeros(len(hashed), dtype=bool)
        np.all(words[1:] == words[:-1], axis=1, out=same[1:])
        if self._last >= 0:
            last, width = self._rows[self._last], words.shape[1]
            same[0] = bool((words[0] == last[:width]).all()) and not last[width:].any()
        new = np.flatnonzero(~same)
        ordered = np.sort(hashed[new])
        if (ordered[1:] == ordered[:-1]).any():
            return None
        at = np.searchsorted(self._sorted, ordered)
        met = self._sorted[np.minimum(at, len(self._sorted) - 1)] if len(self._sorted) else None
        if met is not None and (met == ordered).any():
            return None
        codes = np.cumsum(~same, dtype=np.int32)
        codes += np.int32(self._n - 1)  # (a first run that goes on: the last query's number)
        self._stored(hashed[new], words[new])
        self._sorted = np.insert(self._sorted, at, ordered)
        return codes

    def _joined(
        self, codes: np.ndarray, lengths: np.ndarray, goes_on: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The runs of ``codes`` and ``lengths`` with each run that ``goes_on`` (the query of
        the run before it) made part of that run (the first: of the last run added)."""
        starts = np.flatnonzero(~goes_on)
        joined = np.flatnonzero(goes_on)
        leading = joined[: np.searchsorted(joined, starts[0]) if len(starts) else None]
        if len(leading):
            self._lengths[-1] = self._lengths[-1].copy()
            self._lengths[-1][-1] += lengths[leading].sum()
        kept = lengths[starts]
        inner = joined[len(leading) :]
        np.add.at(kept, np.searchsorted(starts, inner, side="right") - 1, lengths[inner])
        return codes[starts], kept

    def grouped(self) -> tuple[list[str], np.ndarray, np.ndarray | None] | None:
        """``(queries, counts, order)``: the query ids in the order first seen, each one's
        rows, and the order of the rows (as added) that brings each query's rows together,
        each query's in their order (None when they are so already); None when two ids
        share a hash."""
        if not self._numbered_pending():
            return None
        queries = decode(self._rows[: self._n].view(f"S{8 * self._rows.shape[1]}").ravel())
        if not self._codes:
            return queries, np.zeros(0, dtype=np.int64), None
        codes = np.concatenate(self._codes) if len(self._codes) > 1 else self._codes[0]
        lengths = np.concatenate(self._lengths) if len(self._lengths) > 1 else self._lengths[0]
        if not self.came_back:  # each run a query, in order
            return queries, lengths, None
        rows = codes if len(codes) == int(lengths.sum()) else np.repeat(codes, lengths)
        counts = np.bincount(rows, minlength=self._n).astype(np.int64, copy=False)
        return queries, counts, stable_order(rows, self._n)

    def _numbered(self, hashed: np.ndarray, words: np.ndarray) -> np.ndarray:
        """Each hash's query number; new hashes numbered in the order first met."""
        codes = self._looked_up(hashed)
        new = np.flatnonzero(codes < 0)
        if not len(new):
            return codes
        fresh = hashed[new]
        distinct = np.sort(fresh)
        if not (distinct[1:] == distinct[:-1]).any():  # each new id once: in the order met
            codes[new] = np.arange(self._n, self._n + len(new))
            self._append(fresh, words[new])
            return codes
        distinct, first, inverse = np.unique(fresh, return_index=True, return_inverse=True)
        by_first = np.argsort(first)  # the new ids in the order first met
        numbers = np.empty(len(distinct), dtype=np.int32)
        numbers[by_first] = np.arange(self._n, self._n + len(distinct))
        codes[new] = numbers[inverse]
        self._append(distinct[by_first], words[new[first[by_first]]])
        return codes

    def _looked_up(self, hashed: np.ndarray) -> np.ndarray:
        """Each hash's query number, -1 where it has none yet."""
        if not self._n:
            return np.full(len(hashed), -1, dtype=np.int32)
        entries = self._slots[(hashed & np.uint64(len(self._slots) - 1)).astype(np.intp)]
        codes = entries.astype(np.int32)  # the low 32 bits: -1 in an empty slot
        # the slot holds another query (its hash's high bits differ): a miss, unless the hash
        # is in the overflow list (hashes whose slot was taken when they came)
        other = (entries ^ hashed) > _LOW
        other &= codes >= 0
        codes[other] = -1
        if len(self._over_hashes) and other.any():
            where = np.flatnonzero(other)
            at = np.searchsorted(self._over_hashes, hashed[where])
            at[at == len(self._over_hashes)] = 0
            found = self._over_hashes[at] == hashed[where]
            codes[where[found]] = self._over_codes[at[found]]
        return codes

    def _stored(self, hashed: np.ndarray, words: np.ndarray) -> None:
        """Number new queries (their hashes and ids' words) from ``self._n`` on."""
        total = self._n + len(hashed)
        if total > len(self._hashes):
            capacity = max(total, 2 * len(self._hashes), 1024)
            self._hashes = np.resize(self._hashes, capacity)
            rows = np.zeros((capacity, self._rows.shape[1]), dtype=np.uint64)
            rows[: self._n] = self._rows[: self._n]
            self._rows = rows
        self._hashes[self._n : total] = hashed
        self._rows[self._n : total, : words.shape[1]] = words
        self._n = total

    def _append(self, hashed: np.ndarray, words: np.ndarray) -> None:
        """Number new queries and put them in the table."""
        start = self._n
        self._stored(hashed, words)
        if self._n * _GROW_AT > len(self._slots):  # grown: every query placed again
            self._table_made()
        else:
            self._placed(hashed, np.arange(start, self._n, dtype=np.uint64))

    def _table_made(self) -> None:
        """A table of every query numbered so far, with room for as many again."""
        size = max(_FIRST_SLOTS, 1 << (self._n * _slots_per_query(self._n) - 1).bit_length())
        self._slots = np.full(size, _EMPTY, dtype=np.uint64)
        self._over_hashes = np.zeros(0, dtype=np.uint64)
        self._over_codes = np.zeros(0, dtype=np.int32)
        self._sorted = np.zeros(0, dtype=np.uint64)  # (needed no more)
        self._placed(self._hashes[: self._n], np.arange(self._n, dtype=np.uint64))

    def _placed(self, hashed: np.ndarray, codes: np.ndarray) -> None:
        """Put each query in its slot (its hash's high 32 bits beside its number), or in the
        overflow list where the slot is taken."""
        slots = (hashed & np.uint64(len(self._slots) - 1)).astype(np.intp)
        entries = (hashed & ~_LOW) | codes
        placed = self._slots[slots] == _EMPTY
        self._slots[slots[placed]] = entries[placed]  # of two for one slot, one lands
        placed &= self._slots[slots] == entries
        if not placed.all():  # merged into the sorted list
            over, over_codes = hashed[~placed], codes[~placed].astype(np.int32)
            order = np.argsort(over)
            at = np.searchsorted(self._over_hashes, over[order])
            self._over_hashes = np.insert(self._over_hashes, at, over[order])
            self._over_codes = np.insert(self._over_codes, at, over_codes[order])


def _slots_per_query(queries: int) -> int:
    """The table's slots a query when it is made for ``queries``: eight (a slot taken by
    another query for about one query in twelve), four past a million queries (memory)."""
    return 8 if queries <= 1 << 20 else 4


def _widened(rows: np.ndarray, width: int) -> np.ndarray:
    wide = np.zeros((len(rows), width), dtype=np.uint64)
    wide[:, : rows.shape[1]] = rows
    return wide
