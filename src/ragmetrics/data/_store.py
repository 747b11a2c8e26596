"""The columnar store that holds a run or qrels, and the join that finds judged docs in a run.

A store is four columns: the query ids, how many docs each query has (``lengths``, with
``offsets`` where each starts), the doc ids, and one value per doc (a score or a grade; none
for a run given as ranked lists). Doc ids come in one of three forms, whichever the input
made cheapest, and every other form is derived on first use and kept:

* ``tuples``: one tuple of strings per query (runs from Python objects);
* ``maps``: one ``{doc: value}`` dict per query (qrels from Python objects);
* ``ids``: fixed-width bytes, flat (read from plain TREC files: ten million Python strings
  cost more to make than the whole evaluation).

``Run`` and ``Qrels`` each hold one store (``store_of``); the judge reads it only through
the methods here. :meth:`Store.find` locates judged docs in the rankings: by a hashed join
when both sides are bytes (:meth:`Store._hash_join`), else by set intersection of strings.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, KeysView, Sequence
from itertools import chain, islice, repeat
from operator import and_, attrgetter
from typing import Any

import numpy as np

from ragmetrics._util.arrays import (
    first_of_runs,
    fits_padded,
    lengths_of,
    offsets_of,
    pad_rows,
    spans,
    split,
)
from ragmetrics._util.threads import map_threaded
from ragmetrics.data._order import BLOCK_CELLS, rank_by_value
from ragmetrics.data._precision import ScorePrecision, as_float32
from ragmetrics.formats import _packed


class Stored:
    """Base of the classes that hold a :class:`Store` (read it with :func:`store_of`): the
    mapping protocol over its queries, once for ``Qrels`` and ``Run`` (each adds its own
    ``__getitem__``)."""

    __slots__ = ("_store",)
    _store: Store

    def __iter__(self) -> Iterator[str]:
        return iter(self._store.query_ids)

    def __len__(self) -> int:
        return len(self._store)

    def __contains__(self, query_id: object) -> bool:
        return query_id in self._store.index

    @property
    def query_ids(self) -> tuple[str, ...]:
        """The queries, in the order they were given."""
        return self._store.query_ids


def store_of(holder: Stored) -> Store:
    """The store of a ``Run`` or ``Qrels``."""
    return holder._store


_LONG_IDS = "long ids"  # a pickled store's ids behind its stand-ins (not a slot)


class Store:
    """Query ids, lengths, doc ids and values of a run or qrels (see the module docstring).

    Immutable once built; the derived forms are caches.

    Example:
        >>> store = Store.from_maps(["q1", "q2"], [{"a": 2, "b": 0}, {"c": 1}])
        >>> store.lengths.tolist(), store.values.tolist(), store.tuples()
        ([2, 1], [2, 0, 1], [('a', 'b'), ('c',)])
    """

    __slots__ = (
        "_dictionary",
        "_encoded",
        "_hashes",
        "_ids",
        "_in_order",
        "_index",
        "_maps",
        "_real",
        "_short",
        "_subset",
        "_tuples",
        "_values",
        "lengths",
        "offsets",
        "query_ids",
        "scored",
    )

    def __init__(
        self,
        query_ids: Sequence[str],
        lengths: np.ndarray,
        *,
        ids: np.ndarray | None = None,
        tuples: list[tuple[str, ...]] | None = None,
        maps: list[dict[str, Any]] | None = None,
        values: np.ndarray | None = None,
        scored: bool = True,
    ) -> None:
        """One of ``ids``, ``tuples`` or ``maps`` holds the doc ids (each doc once per
        query); ``values`` the values flat (derived from ``maps`` when not given);
        ``scored=False`` for docs without values (a run from ranked lists)."""
        self.query_ids = tuple(query_ids)
        self.lengths = np.asarray(lengths, dtype=np.int64)
        self.lengths.flags.writeable = False
        self.offsets = offsets_of(self.lengths)
        self.offsets.flags.writeable = False
        self.scored = scored
        for array in (ids, values):
            if array is not None:
                array.flags.writeable = False
        self._ids, self._tuples, self._maps, self._values = ids, tuples, maps, values
        self._index: dict[str, int] | None = None
        self._hashes: dict[int, np.ndarray] = {}
        self._short: dict[int, np.ndarray] = {}
        self._in_order: dict[tuple[str, bool], bool] = {}
        self._encoded: list[np.ndarray | None] = []
        self._subset: tuple[list[str], Store] | None = None
        self._dictionary: tuple[np.ndarray, np.ndarray] | None = None
        self._real = False

    def __getstate__(self) -> dict[str, Any]:
        """The slots, and the ids behind any stand-ins among the bytes ids (ids longer than
        ``_packed.WIDEST``): a process that receives the store (a worker) keeps them."""
        state = {name: getattr(self, name) for name in self.__slots__ if hasattr(self, name)}
        arrays = [self._ids, *self._encoded, self._dictionary and self._dictionary[0]]
        received: dict[bytes, str] = {}
        for array in arrays:
            if isinstance(array, np.ndarray):
                received.update(_packed.long_ids(array))
        if received:
            state[_LONG_IDS] = received
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        _packed.keep(state.pop(_LONG_IDS, {}))
        for name, value in state.items():
            object.__setattr__(self, name, value)

    @classmethod
    def from_tuples(
        cls,
        query_ids: Sequence[str],
        tuples: list[tuple[str, ...]],
        values: np.ndarray | None,
        lengths: np.ndarray | None = None,
    ) -> Store:
        """Docs as one tuple per query; ``values`` None for ranked lists."""
        counts = lengths_of(tuples) if lengths is None else lengths
        return cls(query_ids, counts, tuples=tuples, values=values, scored=values is not None)

    @classmethod
    def from_maps(
        cls,
        query_ids: Sequence[str],
        maps: list[dict[str, Any]],
        *,
        real: bool = False,
        values: np.ndarray | None = None,
    ) -> Store:
        """Docs and values as one dict per query; ``real``: some values are not integers
        (real-valued grades), so the values are kept as float64. ``values``: the maps'
        values flat, when the caller has read them already."""
        store = cls(query_ids, lengths_of(maps), maps=maps, values=values)
        store._real = real
        return store

    @classmethod
    def from_bytes(
        cls,
        query_ids: Sequence[str],
        lengths: np.ndarray,
        ids: np.ndarray,
        values: np.ndarray,
        *,
        dictionary: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> Store:
        """Docs as fixed-width ASCII bytes, flat (see ``_packed``). ``dictionary``: the same
        ids as ``(distinct, code per row)`` (``ids == distinct[codes]``), when the input had
        them so: each distinct id is then hashed once."""
        store = cls(query_ids, lengths, ids=ids, values=values)
        store._dictionary = dictionary
        return store

    def kept(self, keep: np.ndarray) -> Store:
        """This store with only the docs where ``keep`` (one flag a doc, flat, in input
        order) is True, each row's in their order."""
        row_of = np.repeat(np.arange(len(self)), self.lengths)
        lengths = np.bincount(row_of[keep], minlength=len(self)).astype(np.int64)
        values = None if self.values is None else self.values[keep]
        if self._ids is not None:
            return Store(
                self.query_ids, lengths, ids=self._ids[keep], values=values, scored=self.scored
            )
        flat = [doc for doc, kept in zip(chain.from_iterable(self.tuples()), keep.tolist()) if kept]
        return Store.from_tuples(self.query_ids, split(flat, lengths), values, lengths)

    def prefixes(self, depth: int) -> Store:
        """This store with each row's first ``depth`` docs only (of a store in rank order:
        its best). Rows of strings are sliced, not walked doc by doc."""
        _, place, _ = spans(self.offsets[:-1], self.lengths)
        if self._tuples is None or self._ids is not None:
            return self.kept(place < depth)
        values = None if self.values is None else self.values[place < depth]
        tuples = [row[:depth] for row in self._tuples]
        lengths = np.minimum(self.lengths, depth)
        return Store(self.query_ids, lengths, tuples=tuples, values=values, scored=self.scored)

    def top(self, depth: int, score_precision: ScorePrecision) -> Store:
        """Each row's best ``depth`` docs, in rank order: the rank order is found as arrays
        and only the docs kept are gathered (a store of strings is not put in order whole,
        which builds every row again)."""
        values = self.values
        if values is None or not self.n_docs:
            return self.prefixes(depth)
        order = self.ranked_order(score_precision)
        _, place, _ = spans(self.offsets[:-1], self.lengths)
        picked = order[place < depth]  # input positions of the docs kept, in rank order
        lengths = np.minimum(self.lengths, depth)
        if self._ids is not None:
            return Store(self.query_ids, lengths, ids=self._ids[picked], values=values[picked])
        rows = np.repeat(np.arange(len(self)), lengths)
        docs = self.docs_at(rows, picked - self.offsets[rows])
        return Store.from_tuples(self.query_ids, split(docs, lengths), values[picked], lengths)

    def with_rows(
        self, query_ids: Sequence[str], docs: list[tuple[str, ...]], values: np.ndarray | None
    ) -> Store:
        """This store and, after its rows, a row for each of ``query_ids`` (none of them
        held here) holding ``docs`` (and ``values``, flat; None for a store without). The
        docs held here are shared, not copied; ids as bytes stay bytes when the new ones
        can be too."""
        names = [*self.query_ids, *query_ids]
        added_lengths = lengths_of(docs)
        lengths = np.concatenate((self.lengths, added_lengths))
        flat_values = None
        if self.values is not None:
            assert values is not None
            flat_values = np.concatenate((self.values, np.asarray(values, dtype=np.float64)))
        added = None if self._ids is None else _packed.encode(docs, int(added_lengths.sum()))
        if self._ids is not None and added is not None:
            ids = np.concatenate((self._ids, added))  # the widest ids' width
            return Store(names, lengths, ids=ids, values=flat_values, scored=self.scored)
        tuples = self.tuples() + docs
        return Store(names, lengths, tuples=tuples, values=flat_values, scored=self.scored)

    # --- columns ------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.query_ids)

    @property
    def n_docs(self) -> int:
        return int(self.offsets[-1])

    @property
    def index(self) -> dict[str, int]:
        """Each query id's row."""
        if self._index is None:
            self._index = dict(zip(self.query_ids, range(len(self.query_ids))))
        return self._index

    def rows(self, query_ids: Sequence[str]) -> np.ndarray:
        """Each query's row, or -1 for a query the store does not hold."""
        if len(query_ids) == len(self.query_ids) and tuple(query_ids) == self.query_ids:
            return np.arange(len(query_ids))
        return np.fromiter(
            map(self.index.get, query_ids, repeat(-1)), dtype=np.int64, count=len(query_ids)
        )

    @property
    def values(self) -> np.ndarray | None:
        """The values flat, query by query (None when the docs have none)."""
        if self._values is None and self.scored:
            assert self._maps is not None
            values = np.fromiter(
                chain.from_iterable(map(dict.values, self._maps)),
                np.float64 if self._real else np.int64,
                self.n_docs,
            )
            values.flags.writeable = False
            self._values = values
        return self._values

    @property
    def ids(self) -> np.ndarray | None:
        """The doc ids as bytes, flat, when the store was built from bytes; else None."""
        return self._ids

    def tuples(self) -> list[tuple[str, ...]]:
        """The doc ids as one tuple of strings per query."""
        if self._tuples is None:
            if self._maps is not None:
                self._tuples = list(map(tuple, self._maps))
            else:
                assert self._ids is not None
                self._tuples = split(_packed.decode(self._ids), self.lengths)
        return self._tuples

    def docs_at(self, rows: np.ndarray, positions: np.ndarray) -> list[str]:
        """The doc ids at ``positions[i]`` (input order) of row ``rows[i]``, decoding only
        those (a few located docs of a large run)."""
        if self._tuples is None and self._ids is not None:
            return _packed.decode(self._ids[self.offsets[rows] + positions])
        tuples = self.tuples()
        return [tuples[row][position] for row, position in zip(rows.tolist(), positions.tolist())]

    def empty_query_ids(self) -> list[str]:
        """The queries with no row (an empty ranking, or no judgment)."""
        return [self.query_ids[i] for i in np.flatnonzero(self.lengths == 0).tolist()]

    def flat_docs(self) -> list[str]:
        """Every doc id as a string, flat."""
        return list(chain.from_iterable(self.tuples()))

    def maps(self) -> list[dict[str, Any]]:
        """One ``{doc: value}`` dict per query (read-only by convention)."""
        if self._maps is None:
            values = self.values
            assert values is not None
            flat_values = iter(values.tolist())
            lengths = self.lengths.tolist()
            self._maps = list(
                map(dict, map(zip, self.tuples(), map(islice, repeat(flat_values), lengths)))
            )
        return self._maps

    @property
    def was_encoded(self) -> bool:
        """True once :meth:`encoded` has run (its answer is kept)."""
        return bool(self._encoded)

    def encoded(self) -> np.ndarray | None:
        """The doc ids as UTF-8 bytes (flat), or None when one holds a NUL (no store built
        from bytes holds one) or padding them to the widest would take too much memory
        (too many ids past ``_packed.WIDEST``, see ``_packed.few_long``): the join then
        compares strings."""
        if self._ids is not None:
            return self._ids
        if not self._encoded:
            maps = self._maps if self._tuples is None else None
            encoded = _packed.encode(self.tuples() if maps is None else maps, self.n_docs)
            if encoded is not None:
                encoded.flags.writeable = False
            self._encoded.append(encoded)
        return self._encoded[0]

    def _word_hashes(self, words: int) -> np.ndarray:
        """``_packed.hashes`` of the bytes ids, read as ``words`` 8-byte words."""
        hashed = self._hashes.get(words)
        if hashed is None and self._dictionary is not None:
            distinct, codes = self._dictionary
            hashed = self._hashes[words] = _packed.hashes(distinct, words)[codes]
        if hashed is None:
            ids = self.encoded()
            assert ids is not None
            hashed = self._hashes[words] = _packed.hashes(ids, words)
        return hashed

    def _short_word_keys(self, words: int) -> np.ndarray:
        """The top 16 bits of each id's hash (:meth:`hashes`), made odd, one row per query
        padded with 0 (never a key): a quarter of the bytes to compare when a judged doc is
        looked for among its query's results. Kept, as the hashes are."""
        padded = self._short.get(words)
        if padded is None:
            short = _short_keys(self._word_hashes(words))
            padded = self._short[words] = pad_rows(self.lengths, short, fill=0)
        return padded

    def subset(self, query_ids: list[str]) -> Store:
        """The store of ``query_ids`` (each held here), in that order; the last answer is
        kept, as every evaluation against the same qrels asks the same."""
        if tuple(query_ids) == self.query_ids:
            return self
        if self._subset is not None and self._subset[0] == query_ids:
            return self._subset[1]
        made = self.take(self.rows(query_ids))
        self._subset = (list(query_ids), made)
        return made

    def take(self, rows: np.ndarray) -> Store:
        """The store of the queries at ``rows`` (each a row of this store), in that order."""
        if len(rows) == len(self) and bool((rows == np.arange(len(rows))).all()):
            return self
        query_ids = [self.query_ids[row] for row in rows.tolist()]
        lengths = self.lengths[rows]
        _, _, at = spans(self.offsets[rows], lengths)
        values = None if self.values is None else self.values[at]
        if self._ids is not None:
            return Store(query_ids, lengths, ids=self._ids[at], values=values, scored=self.scored)
        picked = rows.tolist()
        if self._maps is not None:
            maps = list(map(self._maps.__getitem__, picked))
            return Store(query_ids, lengths, maps=maps, values=values, scored=self.scored)
        tuples = list(map(self.tuples().__getitem__, picked))
        return Store(query_ids, lengths, tuples=tuples, values=values, scored=self.scored)

    def has_repeats(self) -> bool:
        """True when some query holds a doc twice (only asked of bytes; other forms are
        built from dicts, or deduplicated by their constructors)."""
        return bool(len(self.repeated_rows()))

    def repeated_rows(self) -> np.ndarray:
        """The rows (queries) that hold some doc twice, ascending (bytes ids only; none for
        the other forms). Equal ids are found through their hashes, each pair checked byte
        for byte: a row at a time in a padded matrix sorted in place, or, for queries too
        uneven to pad, by one sort of (row, hash) over the whole run."""
        ids = self._ids
        none = np.zeros(0, dtype=np.int64)
        if ids is None or not len(ids):
            return none
        counts = self.lengths
        hashed = self._word_hashes(_packed.n_words(ids))
        if not fits_padded(counts, len(ids)):
            row_of = np.repeat(np.arange(len(counts)), counts)
            order = np.lexsort((hashed, row_of))
            a, b = order[:-1], order[1:]
            same = (row_of[a] == row_of[b]) & (hashed[a] == hashed[b])
            a, b = a[same], b[same]
            return np.unique(row_of[a[_packed.equal(ids[a], ids[b])]])
        padding = int(_EMPTY)  # sorts after every key, the top one included
        top = np.uint64(padding - 1)
        keys = np.minimum(hashed, top)  # ours to sort in place
        width = int(counts.max())
        step = max(1, BLOCK_CELLS // max(width, 1))
        offsets = self.offsets

        def block_pairs(start: int) -> tuple[np.ndarray, np.ndarray]:
            """The (row, sorted column) of each two equal keys side by side in a block of
            rows (sorted in place, a block at a time: the matrix stays in the cache)."""
            stop = min(start + step, len(counts))
            values = keys[offsets[start] : offsets[stop]]
            rows = pad_rows(counts[start:stop], values, min_width=width, fill=padding)
            rows.sort(axis=1)
            row, column = np.nonzero(rows[:, 1:] == rows[:, :-1])
            real = column + 1 < counts[start + row]  # both members are docs, not padding
            return start + row[real], column[real]

        pairs = map_threaded(block_pairs, range(0, len(counts), step))
        row = np.concatenate([found for found, _ in pairs])
        if not len(row):  # the usual case: no two keys of a row alike
            return none
        column = np.concatenate([at for _, at in pairs])
        # equal hashes are equal ids, unless two ids collide: compare the bytes of the pairs
        # (each such row's keys again, as they were before the sort, so that the stable
        # argsort lists them in the sorted order)
        _, _, at = spans(offsets[row], counts[row])
        unsorted = pad_rows(counts[row], np.minimum(hashed[at], top), min_width=width, fill=padding)
        order = np.argsort(unsorted, axis=1, kind="stable")
        n = np.arange(len(row))
        first = offsets[row] + order[n, column]
        second = offsets[row] + order[n, column + 1]
        return np.unique(row[_packed.equal(ids[first], ids[second])])

    def without_repeats(self, rows: np.ndarray) -> tuple[Store, dict[str, int]]:
        """This store with each doc once in ``rows`` (those :meth:`repeated_rows` names): a
        repeated doc keeps its highest value (its best-ranked copy; the first of equal
        copies); the other rows are untouched. Returns the store and, per query, how many
        copies were dropped. Only the repeated rows are read as Python objects."""
        ids, values = self._ids, self.values
        assert ids is not None  # bytes ids always come with values
        assert values is not None
        offsets = self.offsets
        keep = np.ones(len(ids), dtype=bool)
        counts = self.lengths.copy()
        dropped: dict[str, int] = {}
        for row in rows.tolist():
            start, stop = int(offsets[row]), int(offsets[row + 1])
            best: dict[bytes, int] = {}
            row_values = values[start:stop].tolist()
            for position, doc in enumerate(ids[start:stop].tolist()):
                held = best.get(doc)
                if held is None or row_values[position] > row_values[held]:
                    best[doc] = position
            kept = np.zeros(stop - start, dtype=bool)
            kept[list(best.values())] = True
            keep[start:stop] = kept
            counts[row] = len(best)
            dropped[self.query_ids[row]] = stop - start - len(best)
        dictionary = self._dictionary
        if dictionary is not None:
            dictionary = (dictionary[0], dictionary[1][keep])
        store = Store.from_bytes(
            self.query_ids, counts, ids[keep], values[keep], dictionary=dictionary
        )
        return store, dropped

    def without_values(self) -> Store:
        """This store of bytes as the docs of ranked lists: the same ids, no values, each
        row's order its ranking; what it has hashed is kept."""
        store = Store(self.query_ids, self.lengths, ids=self._ids, scored=False)
        store._dictionary, store._hashes = self._dictionary, self._hashes
        return store

    # --- order --------------------------------------------------------------------------

    def greater(
        self, rows: np.ndarray, columns: np.ndarray, others: np.ndarray, *, encode: bool = False
    ) -> np.ndarray:
        """Whether the id at ``columns[i]`` of row ``rows[i]`` sorts after the id at
        ``others[i]`` of the same row. ``encode``: string ids are encoded as bytes once
        (kept), for a caller with many pairs to compare (deep runs with ties)."""
        ids = self._ids
        if ids is None and encode:
            ids = self.encoded()
        if ids is not None:  # UTF-8 bytes: byte order is string order
            at = self.offsets[rows]
            return _packed.greater(ids[at + columns], ids[at + others])
        ranking = list(map(self.tuples().__getitem__, rows.tolist()))
        left = map(tuple.__getitem__, ranking, columns.tolist())
        right = map(tuple.__getitem__, ranking, others.tolist())
        return np.fromiter(map(str.__gt__, left, right), dtype=bool, count=len(rows))

    def in_rank_order(self, score_precision: ScorePrecision) -> bool:
        """True when every query's values strictly fall down its row (a run written in rank
        order, without ties): each doc's rank is then its position. Checked once, kept."""
        return self._falls(score_precision, strictly=True)

    def in_rank_order_but_ties(self, score_precision: ScorePrecision) -> bool:
        """True when every query's values never rise down its row (a run written in rank
        order, perhaps with ties): ranking it only sorts each run of tied docs by id."""
        return self._falls(score_precision, strictly=False)

    def _falls(self, score_precision: ScorePrecision, *, strictly: bool) -> bool:
        """Whether every row's values fall (``strictly``) or never rise; kept."""
        key = (score_precision, strictly)
        known = self._in_order.get(key)
        if known is None and not strictly and self._in_order.get((score_precision, True)):
            known = True  # strictly falling rows never rise
        if known is None:
            values = self.values
            assert values is not None
            if score_precision == "float32":
                values = as_float32(values)
            falls = values[1:] < values[:-1] if strictly else values[1:] <= values[:-1]
            # a row's last doc and the next row's first are not compared (rows may be empty)
            bounds = self.offsets[1:-1]
            falls[bounds[(bounds > 0) & (bounds < len(values))] - 1] = True
            known = bool(falls.all())
        self._in_order[key] = known
        return known

    def ranked_order(self, score_precision: ScorePrecision) -> np.ndarray:
        """The permutation that sorts each query by value descending, ties by doc id
        descending (trec_eval's order), within its own span."""
        values = self.values
        assert values is not None
        compared = as_float32(values) if score_precision == "float32" else values
        return rank_by_value(compared, self, score_precision)

    def ranked(self, score_precision: ScorePrecision) -> Store:
        """A store of the same docs in ranked order (itself when it has no values)."""
        values = self.values
        if not self.scored or values is None or not self.n_docs:
            return self
        order = self.ranked_order(score_precision)
        if np.array_equal(order, np.arange(len(order))):
            return self
        if self._ids is not None:
            return Store.from_bytes(self.query_ids, self.lengths, self._ids[order], values[order])
        flat = self.flat_docs()
        tuples = split(list(map(flat.__getitem__, order.tolist())), self.lengths)
        return Store.from_tuples(self.query_ids, tuples, values[order], self.lengths)

    # --- finding judged docs ------------------------------------------------------------

    def find(
        self, judged: Store, run_rows: np.ndarray, *, progress: bool = False
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Locate the docs of ``judged`` (one row per query) in this store (the run).

        ``run_rows[i]``: the row here of judged query ``i``, or -1. Returns ``(rows,
        positions, values)`` of every judged doc found: its judged row, its position in
        the run row (input order) and its judged value (float64), in no promised order.
        """
        # ids as bytes hashed: 64 ms against 178 ms for the strings' path, reading a 500,000-line
        # run and its qrels and evaluating 5 metrics (benchmarks/bench_paths.py)
        located = self._hash_join(judged, run_rows)
        if located is None:
            return self._set_join(judged, run_rows, progress)
        rows, positions, at = located
        judged_values = judged.values
        assert judged_values is not None
        return rows, positions, judged_values[at].astype(np.float64)

    def _set_join(
        self, judged: Store, run_rows: np.ndarray, progress: bool
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`find` by strings: each query's judged docs are intersected with its
        results at C speed (``keys & results``), so only the few found are looked up."""
        n_queries = len(judged)
        per_query = judged.maps()
        # a query absent from the run (row -1) gets the empty ranking appended at the end
        own = list(map([*self.tuples(), ()].__getitem__, run_rows.tolist()))
        if _mostly_hits(per_query, own):
            return _scan_join(per_query, own, progress)
        keys: Iterable[Any] = map(dict.keys, per_query)
        if progress:
            from ragmetrics._util.progress import progress_bar

            keys = progress_bar(keys, total=n_queries, desc="judging")
        # each query's hits placed right after they are found, while its results' strings
        # are in the cache: a run whose strings lie apart in memory (dicts built from a file
        # sorted by doc id) pays a cache miss an id for each pass over them
        found, placed = zip(*map(_found_and_placed, keys, own)) if n_queries else ((), ())
        n_found = np.fromiter(map(len, found), dtype=np.int64, count=n_queries)
        hit_docs = list(chain.from_iterable(found))
        counts = n_found.tolist()
        positions = np.fromiter(chain.from_iterable(placed), dtype=np.int64, count=len(hit_docs))
        values = np.fromiter(
            map(dict.__getitem__, chain.from_iterable(map(repeat, per_query, counts)), hit_docs),
            dtype=np.float64,
            count=len(hit_docs),
        )
        return np.repeat(np.arange(n_queries), n_found), positions, values

    def _hash_join(
        self, judged: Store, run_rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """:meth:`find` by hashes, for a store of bytes: ``(rows, positions, judged
        index)``, the last an index into ``judged``'s flat columns. None when the string
        path must answer: a judged id that is not ASCII, a hash collision, rankings too
        long or too uneven for one padded matrix.

        Each query becomes one row of 64-bit keys: the hash of each result's id tagged
        with its column, then the hash of each judged id tagged as judged. Sorting the rows
        puts a result next to the judgment of the same id; every such pair is then checked
        byte for byte.
        """
        ids = self._ids
        if ids is None:
            return None
        judged_ids = judged.encoded()
        if judged_ids is None:
            return None
        n_queries = len(judged)
        counts = judged.lengths
        run_width = int(self.lengths.max()) if len(self) else 0
        judged_width = int(counts.max()) if n_queries else 0
        width = run_width + judged_width
        if (
            max(run_width, judged_width) >= _FROM_QRELS
            or n_queries * width > 4 * (len(ids) + len(judged_ids)) + 4096
        ):
            return None
        # both sides hashed at the width of the longest id of either (equal ids, equal hashes)
        words = _packed.n_words(ids, judged_ids)
        # few judged docs per query: each is compared with its query's results (judged x
        # width comparisons) rather than every row sorted (width x log2(width) steps each)
        n_located = len(judged_ids)
        if n_located * run_width < _SORT_STEPS * n_queries * width * np.log2(width + 2):
            return self._compare_join(judged, run_rows, words, judged_ids)
        hashed = self._word_hashes(words)
        judged_keys = judged._word_hashes(words) & _HASH_BITS
        judged_starts = judged.offsets[:-1]
        present = run_rows >= 0
        result_counts = np.where(present, self.lengths[run_rows], 0)
        result_starts = np.where(present, self.offsets[run_rows], 0)
        found_rows: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
        firsts: list[np.ndarray] = [np.zeros(0, dtype=np.uint64)]
        seconds: list[np.ndarray] = [np.zeros(0, dtype=np.uint64)]
        step = max(1, BLOCK_CELLS // max(width, 2))
        keys = np.empty((min(step, n_queries), max(width, 2)), dtype=np.uint64)
        # a block of rows at a time, in a matrix that stays in the cache
        for start in range(0, n_queries, step):
            stop = min(start + step, n_queries)
            block = keys[: stop - start]
            block.fill(_EMPTY)
            # the results of each query of the block, in its row
            rows, columns, at = spans(result_starts[start:stop], result_counts[start:stop])
            block[rows, columns] = (hashed[at] & _HASH_BITS) | columns.astype(np.uint64)
            # then its judged docs (contiguous, query by query)
            rows, columns, at = spans(judged_starts[start:stop], counts[start:stop])
            tags = (columns + _FROM_QRELS).astype(np.uint64)
            block[rows, run_width + columns] = judged_keys[at] | tags
            block.sort(axis=1)
            same = ((block[:, 1:] ^ block[:, :-1]) <= _TAG_BITS) & (block[:, :-1] != _EMPTY)
            row, at = np.nonzero(same)
            found_rows.append(row + start)
            firsts.append(block[row, at])
            seconds.append(block[row, at + 1])
        rows = np.concatenate(found_rows)
        first = (np.concatenate(firsts) & np.uint64(_TAG_BITS)).astype(np.int64)
        second = (np.concatenate(seconds) & np.uint64(_TAG_BITS)).astype(np.int64)
        # a result first, its judgment second: anything else is two results or two judgments
        # whose ids collide (keys of one hash sort results first, so three or more keys of
        # one hash always hold such a pair)
        if (first >= _FROM_QRELS).any() or (second < _FROM_QRELS).any():
            return None
        judged_at = judged_starts[rows] + second - _FROM_QRELS
        return self._same_bytes(judged_ids, run_rows, rows, first, judged_at)

    def _compare_join(
        self,
        judged: Store,
        run_rows: np.ndarray,
        words: int,
        judged_ids: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """:meth:`_hash_join` by comparing each judged doc's short key (:meth:`_short_word_keys`)
        with every result of its query, a block at a time. A key names a doc's first
        equal column; each is checked byte for byte. A judged doc whose first equal key is
        another id's (one pair in 32,768) is looked for again by its full hash, and any
        full-hash match that is not equal (a collision) hands over to the string path."""
        padded = self._short_word_keys(words)
        judged_hashes = judged._word_hashes(words)
        short = _short_keys(judged_hashes)
        owner = np.repeat(np.arange(len(judged)), judged.lengths)  # each judged doc's row
        in_run = np.repeat(run_rows, judged.lengths)  # and its row in the run
        everywhere = bool((run_rows >= 0).all())  # every judged query has a ranking
        located = None if everywhere else np.flatnonzero(in_run >= 0)
        n_located = len(owner) if located is None else len(located)
        ids = self._ids
        assert ids is not None
        width = max(padded.shape[1], 1)
        step = max(1, 4 * BLOCK_CELLS // width)  # 2-byte keys

        def block_join(start: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            """The block's judged docs found ``(judged index, column)``, and those whose
            first equal key was another id's (judged index)."""
            stop = min(start + step, n_located)
            block = slice(start, stop) if located is None else located[start:stop]
            rows = in_run[block]
            equal = padded[rows] == short[block][:, None]
            # each judged doc's first equal key (the first of its row in the flat order)
            at = np.flatnonzero(equal)
            hit = at // width
            firsts = first_of_runs(hit)
            if len(firsts) < len(hit):
                hit, at = hit[firsts], at[firsts]
            column = at - hit * width
            found = hit + start if located is None else located[start:stop][hit]
            # checked byte for byte here, while the block's rows are in the cache
            same = _packed.equal(ids[self.offsets[rows[hit]] + column], judged_ids[found])
            if same.all():
                return found, column, _NONE
            return found[same], column[same], found[~same]

        # blocks side by side on threads (numpy lets go of the interpreter)
        parts = [(_NONE, _NONE, _NONE), *map_threaded(block_join, range(0, n_located, step))]
        found, columns, missed = zip(*parts, strict=True)
        misses = np.concatenate(missed)
        if len(misses):
            # the few whose first equal short key was another id's: every column of their
            # rows, by full hashes; a doc found there takes that column, the others go
            rows, column, at = spans(self.offsets[in_run[misses]], self.lengths[in_run[misses]])
            wanted = judged_hashes[misses[rows]] & _HASH_BITS
            hit = np.flatnonzero((self._word_hashes(words)[at] & _HASH_BITS) == wanted)
            back = misses[rows[hit]]  # one column each: a run holds each doc once
            if self._same_bytes(judged_ids, run_rows, owner[back], column[hit], back) is None:
                return None
            found, columns = (*found, back), (*columns, column[hit])
        judged_at = np.concatenate(found)
        return owner[judged_at], np.concatenate(columns), judged_at

    def _same_bytes(
        self,
        judged_ids: np.ndarray,
        run_rows: np.ndarray,
        rows: np.ndarray,
        first: np.ndarray,
        judged_at: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The join's answer ``(rows, first, judged_at)`` if every pair it matched by hash
        holds the same bytes, else None (two ids of one hash: the string path decides)."""
        ids = self._ids
        assert ids is not None
        if not _packed.equal(
            ids[self.offsets[run_rows[rows]] + first], judged_ids[judged_at]
        ).all():
            return None
        return rows, first, judged_at


_NONE = np.zeros(0, dtype=np.int64)
_SORT_STEPS = 2  # a step of a row sort counted as this many comparisons (measured)


def _short_keys(hashes: np.ndarray) -> np.ndarray:
    """The top 16 bits of each 64-bit hash (little-endian: the fourth 16-bit word), made
    odd so that 0 can pad a row without ever equalling a key."""
    short: np.ndarray = hashes.view(np.uint16)[3::4] | np.uint16(1)
    return short


def _mostly_hits(per_query: list[dict[str, Any]], own: list[tuple[str, ...]]) -> bool:
    """True when judged docs are more than a tenth of the results, as counted on about 1,000
    queries spread over the run: looking each result up in its query's judgments then costs
    less than intersecting each query's judged docs with its results. (Measured on the
    msmarco, rag and toy workloads: a lookup costs about 0.1 us a result and 0.1 us a hit, an
    intersection 0.05 us a result and 0.65 us a hit.) Either way the answer is the same."""
    step = max(1, len(own) // 1000)
    sample, judged = own[::step], per_query[::step]
    results = sum(map(len, sample))
    if _SCAN_HITS * sum(map(len, judged)) <= results:
        return False  # too few judged docs to be hits, told without reading a result's id
    hits = sum(map(len, map(and_, map(dict.keys, judged), sample)))
    return _SCAN_HITS * hits > results


_SCAN_HITS = 10


def _scan_join(
    per_query: list[dict[str, Any]], own: list[tuple[str, ...]], progress: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:meth:`Store.find` by strings, each result looked up in its query's judgments at C
    speed: ``(rows, positions, values)`` in rank-input order within each row.

    One ``dict.get`` a result gives its judged value, or NaN where it is not judged (a
    judged value is never NaN: grades are checked finite when the qrels are built), so the
    values and where they are come out of one pass over the results."""
    n_queries = len(per_query)
    lengths = np.fromiter(map(len, own), dtype=np.int64, count=n_queries)
    lookups: Iterable[Iterable[float]] = map(
        map, map(attrgetter("get"), per_query), own, repeat(repeat(math.nan))
    )
    if progress:
        from ragmetrics._util.progress import progress_bar

        lookups = progress_bar(lookups, total=n_queries, desc="judging")
    queries = iter(lookups)
    looked_up = np.fromiter(chain.from_iterable(queries), np.float64, int(lengths.sum()))
    for _ in queries:  # fromiter stops at its count: a bar learns here that the queries ended
        pass
    at = np.flatnonzero(~np.isnan(looked_up))
    rows = np.repeat(np.arange(n_queries), lengths)[at]
    positions = at - (np.cumsum(lengths) - lengths)[rows]
    return rows, positions, looked_up[at]


def _found_and_placed(
    judged: KeysView[str], ranking: tuple[str, ...]
) -> tuple[set[str], list[int]]:
    """The docs of ``ranking`` that are judged, and where each sits in it (in the set's
    order): searched for when they are few, else read from a position map (a linear search
    for each of a long ranking's many judged docs would cost the square of its length)."""
    found = judged & ranking
    if len(found) <= 8:
        return found, list(map(ranking.index, found))
    where = dict(zip(ranking, range(len(ranking))))
    return found, list(map(where.__getitem__, found))


_HASH_BITS = np.uint64(0x7FFF_FFFF_FFFF_0000)  # the hash part of a join key
_FROM_QRELS = 1 << 15  # the tag bit of a judged doc (a result's tag is its column)
_TAG_BITS = (1 << 16) - 1
_EMPTY = np.uint64(2**64 - 1)  # padding: sorts last, equal to no key
