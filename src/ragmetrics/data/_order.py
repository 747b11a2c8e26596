"""trec_eval's order, in one place: each query's docs by score descending, ties by doc id
descending (byte order of the ids). Two ways to the same order:

- :func:`rank_by_value` sorts whole queries (``Store.ranked_order``: a run ranked once, for
  its rankings, the report, a written file);
- :func:`rank_of` counts, for the few judged docs an evaluation locates, the docs scored
  higher and those tied with a greater id, without sorting the run (or sorts the rows where
  counting would cost more, by the cost rules below).

Nothing here imports the store: both take it as an argument and call its methods.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ragmetrics._util.arrays import fits_padded, pad_rows, row_counts, spans
from ragmetrics._util.threads import map_threaded
from ragmetrics.data._precision import ScorePrecision, as_float32
from ragmetrics.formats import _packed

if TYPE_CHECKING:
    from ragmetrics.data._store import Store

__all__ = ["BLOCK_CELLS", "rank_by_value", "rank_of"]

BLOCK_CELLS = 1 << 18  # cells of a vectorized block (keys sorted, scores compared)


def rank_of(
    results: Store, rows: np.ndarray, positions: np.ndarray, score_precision: ScorePrecision
) -> np.ndarray:
    """The 0-based rank of the doc at ``positions[i]`` (input order) of row ``rows[i]``.

    Rank = the docs of the row scored higher, plus those scored equal with a greater doc id
    (trec_eval's order). Each located doc is compared with its row's scores as one padded
    row, a block of located docs at a time. With ``score_precision="float32"`` scores are
    compared after rounding to 32-bit floats, so scores equal in float32 tie.
    """
    if results.in_rank_order(score_precision):  # written in rank order, no ties
        same: np.ndarray = positions.copy()
        return same
    scores = results.values
    assert scores is not None
    lengths = results.lengths
    width = int(lengths.max()) if len(lengths) else 0
    if len(rows) * width > _TIES_FACTOR * len(scores) and results.in_rank_order_but_ties(
        score_precision
    ):  # in rank order but for runs of ties: sorting them costs less than comparing
        return _ranks_among_ties(results, rows, positions, score_precision)
    if score_precision == "float32":
        scores = as_float32(scores)
    uniform = bool((lengths == width).all())
    if not uniform and not fits_padded(lengths, len(scores)):
        # very uneven rankings: a padded matrix would dwarf the run; sort it once instead
        return _ranks_by_sorting(results, np.arange(len(lengths)), rows, positions, score_precision)
    # Comparing a located doc with its whole row costs the row's width; sorting the row
    # costs about its length x log2(length). Rows holding many located docs are sorted (one
    # query of a million judged docs: seconds, not hours), the others compared.
    located = np.bincount(rows, minlength=len(lengths))
    heavy = located * width > _SORT_FACTOR * lengths * np.log2(lengths + 2)
    if heavy.any():
        ranks = np.empty(len(rows), dtype=np.int64)
        sorted_rows = heavy[rows]
        ranks[sorted_rows] = _ranks_by_sorting(
            results,
            np.flatnonzero(heavy),
            rows[sorted_rows],
            positions[sorted_rows],
            score_precision,
        )
        light = ~sorted_rows
        if light.any():
            ranks[light] = _ranks_by_comparing(
                results, scores, width, uniform, rows[light], positions[light]
            )
        return ranks
    return _ranks_by_comparing(results, scores, width, uniform, rows, positions)


# a sort step counted as this many comparisons (measured: benchmarks/bench_ranks.py)
_SORT_FACTOR = 8
# a run in rank order but for ties is ranked by sorting its ties (about 7 ns a result) rather
# than by comparing (about 3 ns a cell of located docs x width) past this many cells a result
_TIES_FACTOR = 2


def _ranks_by_sorting(
    results: Store,
    sorted_rows: np.ndarray,
    rows: np.ndarray,
    positions: np.ndarray,
    score_precision: ScorePrecision,
) -> np.ndarray:
    """:func:`rank_of` for docs of the rows ``sorted_rows`` only, by sorting those rows."""
    part = results.take(sorted_rows)
    order = part.ranked_order(score_precision)
    place = np.empty_like(order)
    place[order] = np.arange(len(order))
    row_in_part = np.empty(len(results), dtype=np.int64)
    row_in_part[sorted_rows] = np.arange(len(sorted_rows))
    starts = part.offsets[row_in_part[rows]]
    ranks: np.ndarray = place[starts + positions] - starts
    return ranks


def _ranks_among_ties(
    results: Store, rows: np.ndarray, positions: np.ndarray, score_precision: ScorePrecision
) -> np.ndarray:
    """:func:`rank_of` for a store written in rank order but for runs of ties: each doc's
    rank is its position, but where the doc ids reorder a run of ties (only the docs of
    such runs are ranked again; no permutation of the whole run is made)."""
    values = results.values
    assert values is not None
    if score_precision == "float32":
        values = as_float32(values)
    ranked_at, docs = _tie_moves(values, None, results)
    ranks: np.ndarray = positions.copy()
    if not len(docs):
        return ranks
    moved = np.zeros(len(values), dtype=bool)
    moved[docs] = True
    starts = results.offsets[rows]
    flat = starts + positions
    at = np.flatnonzero(moved[flat])
    if len(at):
        place = np.empty(len(values), dtype=np.int64)  # written (and read) where docs moved
        place[docs] = ranked_at
        ranks[at] = place[flat[at]] - starts[at]
    return ranks


def _ranks_by_comparing(
    results: Store,
    scores: np.ndarray,
    width: int,
    uniform: bool,
    rows: np.ndarray,
    positions: np.ndarray,
) -> np.ndarray:
    """:func:`rank_of` by comparing each located doc's score with its whole row."""
    lengths, offsets = results.lengths, results.offsets
    # NaN padding compares false with every score: it is never above or tied
    padded = (
        scores.reshape(len(lengths), width) if uniform else pad_rows(lengths, scores, fill=np.nan)
    )
    values = scores[offsets[rows] + positions]
    step = max(1, BLOCK_CELLS // max(width, 1))

    def block_ranks(start: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The block's ranks by score, and its tied pairs (located doc, column) that the
        doc ids must order."""
        stop = start + step
        block = padded[rows[start:stop]]
        value = values[start:stop, None]
        ranks = row_counts(block > value)
        equal = block == value
        # every doc equals itself: only rows with more than one equal score hold a tie
        shared = np.flatnonzero(row_counts(equal) > 1)
        if not len(shared):
            return ranks, _NO_PAIRS, _NO_PAIRS
        located, columns = np.nonzero(equal[shared])
        located = shared[located]
        other = columns != positions[start:stop][located]  # a doc does not tie with itself
        return ranks, located[other] + start, columns[other]

    # blocks side by side on threads (numpy lets go of the interpreter)
    blocks = map_threaded(block_ranks, range(0, len(rows), step))
    ranks = np.concatenate([np.zeros(0, dtype=np.int64)] + [part[0] for part in blocks])
    # ties are broken by doc id descending: count the tied docs with a greater id (block by
    # block: the pairs of a block are at most its cells)
    pairs = 0  # tied pairs compared so far: past an eighth of the docs, ids are encoded once
    behind: list[np.ndarray] = []
    for _, hits, columns in blocks:
        if len(hits):
            pairs += len(hits)
            encode = pairs > results.n_docs // 8
            above = results.greater(rows[hits], columns, positions[hits], encode=encode)
            behind.append(hits[above])
    if behind:
        ranks += np.bincount(np.concatenate(behind), minlength=len(ranks))
    return ranks


_NO_PAIRS = np.zeros(0, dtype=np.int64)


def rank_by_value(values: np.ndarray, store: Store, score_precision: ScorePrecision) -> np.ndarray:
    """The permutation that sorts each query of ``store`` by ``values`` descending, ties by
    doc id descending (``values``: the store's, rounded as ``score_precision`` says)."""
    lengths, offsets = store.lengths, store.offsets
    n_queries = len(lengths)
    total = len(values)
    order: np.ndarray | None = None  # the identity
    if store.in_rank_order_but_ties(score_precision):  # in rank order: only ties to break
        ranked_values = values
    else:
        if fits_padded(lengths, total):
            # One padded matrix argsort is an order of magnitude faster than a lexsort.
            padded = pad_rows(lengths, -values.astype(np.float64), fill=np.inf)
            width = padded.shape[1]
            ranked = np.argsort(padded, axis=1, kind="stable") + offsets[:-1, None]
            order = ranked[np.arange(width)[None, :] < lengths[:, None]]
        else:
            query_of = np.repeat(np.arange(n_queries), lengths)
            order = np.asarray(np.lexsort((-values, query_of)))
        ranked_values = values[order]
    ranked_at, docs = _tie_moves(ranked_values, order, store)
    if order is None:
        order = np.arange(total)
    order[ranked_at] = docs
    return order


def _tie_moves(
    ranked_values: np.ndarray, order: np.ndarray | None, store: Store
) -> tuple[np.ndarray, np.ndarray]:
    """How breaking ties by doc id descending changes ``order`` (None: the identity), a
    permutation of ``store`` that ranks each query by value (``ranked_values``: the
    values in that order): ``(ranked_at, docs)``, ranked position ``ranked_at[i]`` takes
    the doc at input position ``docs[i]``; every other position keeps its doc. Only the
    positions of runs of ties are looked at."""
    none = np.zeros(0, dtype=np.int64)
    ties = np.flatnonzero(ranked_values[1:] == ranked_values[:-1])
    if len(ties):  # a pair across two rows is no tie: the second starts its row
        ends = store.offsets[1:]
        ties = ties[ties + 1 < ends[np.searchsorted(ends, ties, side="right")]]
    written = _tie_order(order, ties, store) if len(ties) else "descending"
    if written == "descending":  # no tie, or every one in trec_eval's order already
        return none, none
    starts, lengths = _tie_runs(ties)
    run_of, within, tied = spans(starts, lengths)  # every position of a run of ties
    docs = tied if order is None else order[tied]
    if written == "ascending":  # each run reversed: a position takes its mirror's doc
        mirror = tied + lengths[run_of] - 1 - 2 * within
        broken = mirror if order is None else order[mirror]
    else:  # the same ties, numbered among the tied positions (all but each run's last)
        not_last = np.ones(len(tied), dtype=bool)
        not_last[np.cumsum(lengths) - 1] = False
        broken = _break_ties(docs, np.flatnonzero(not_last), store)
    changed = broken != docs
    return tied[changed], broken[changed]


def _tie_order(order: np.ndarray | None, ties: np.ndarray, store: Store) -> str | None:
    """``"descending"`` when every tied pair (``ties[i]`` ties with ``ties[i] + 1``) has the
    larger doc id first, as trec_eval ranks them: a run written in trec_eval's order needs
    no tie broken; ``"ascending"`` when every pair has the smaller id first (as Anserini
    writes ties), each run of ties then only reversed; None otherwise, or for ids that are
    not bytes. Bytes compare in the strings' order (``_packed.greater``); a doc repeated in a
    tie is neither larger nor smaller, so its ties are broken in full. ``order`` None: the
    identity."""
    ids = store.ids
    if ids is None:
        return None
    if order is None:
        above, below = ids[ties], ids[ties + 1]
    else:
        above, below = ids[order[ties]], ids[order[ties + 1]]
    if bool(_packed.greater(above, below).all()):
        return "descending"
    if bool(_packed.greater(below, above).all()):
        return "ascending"
    return None


def _tie_runs(ties: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each run of tied positions starts (``ties[i]`` ties with ``ties[i] + 1``) and
    how many positions it holds."""
    breaks = np.flatnonzero(np.diff(ties) != 1)
    starts = np.concatenate(([ties[0]], ties[breaks + 1]))
    return starts, np.concatenate((ties[breaks], [ties[-1]])) + 2 - starts


def _break_ties(order: np.ndarray, ties: np.ndarray, store: Store) -> np.ndarray:
    """``order`` with each run of tied positions (``ties[i]`` ties with ``ties[i] + 1``)
    sorted by doc id descending (trec_eval), all runs in one sort."""
    starts, lengths = _tie_runs(ties)
    ids = store.ids
    if ids is None and (store.was_encoded or int(lengths.sum()) > store.n_docs // 8):
        # many tied strings: encoded once as bytes (None if they cannot be packed),
        # which costs less than ranking millions of strings among themselves
        ids = store.encoded()
    out = order.copy()
    if ids is not None:
        # a tie of two docs (most ties, with scores of a few decimals) takes one comparison
        # of bytes: the larger id first
        two = lengths == 2
        pairs = starts[two]
        swap = pairs[_packed.greater(ids[order[pairs + 1]], ids[order[pairs]])]
        out[swap], out[swap + 1] = order[swap + 1], order[swap]
        starts, lengths = starts[~two], lengths[~two]
        if not len(starts):
            return out
    run_of, within, positions = spans(starts, lengths)
    docs = order[positions]
    tied_ids = None if ids is None else _packed.sortable(ids[docs])
    if tied_ids is not None and tied_ids.dtype.kind == "S":  # byte order is string order
        # as integers, in byte order: sorting them is faster than sorting bytes
        words = _packed.sort_words(tied_ids)
        keys = [words[:, k] for k in range(words.shape[1] - 1, -1, -1)]
    else:  # strings (a stand-in's among them): ranked among themselves
        if tied_ids is None:
            flat = store.flat_docs()
            tied = [flat[i] for i in docs.tolist()]
        else:
            tied = list(tied_ids.tolist())
        code = {doc: rank for rank, doc in enumerate(sorted(set(tied)))}
        keys = [np.fromiter(map(code.__getitem__, tied), dtype=np.int64, count=len(tied))]
    width = int(lengths.max())
    if width <= _TIE_WIDTH and len(lengths) * width <= 8 * len(positions):
        # short runs (the usual ties): each sorted in a row of a padded matrix, key by key
        ranked = _sorted_rows(keys, run_of, within, lengths, width)
        first = np.cumsum(lengths) - lengths  # where each run starts in ``docs``
        # the run's within-th position takes its within-th largest id
        out[positions] = docs[first[run_of] + ranked[run_of, lengths[run_of] - 1 - within]]
        return out
    ascending = np.lexsort((*keys, run_of))  # by run, then id ascending
    # the k-th tied position (its run's within[k]-th) takes its run's within[k]-th largest
    k = np.arange(len(positions))
    out[positions] = docs[ascending[k + lengths[run_of] - 1 - 2 * within]]
    return out


# runs of ties up to this long are sorted as rows of a matrix (rows padded to at most 8x the
# tied docs): measured against the one global lexsort on 4M tied docs, rows won at every run
# length from 16 to 10^6, by 1.1-20x, also with every id sharing its first 8 bytes
_TIE_WIDTH = 1 << 20


def _sorted_rows(
    keys: list[np.ndarray],
    run_of: np.ndarray,
    within: np.ndarray,
    lengths: np.ndarray,
    width: int,
) -> np.ndarray:
    """For runs of items (item ``i`` is member ``within[i]`` of run ``run_of[i]``, run ``r``
    has ``lengths[r]`` members), each run's members in ascending order of ``keys`` (least
    significant first, as ``np.lexsort``): row ``r`` lists run ``r``'s member numbers, then
    its padding. Each row is sorted by the most significant key; only where two members of
    a run share it is the row sorted again, stably, key by key. The padding holds each
    key's largest value and starts after the members, so it stays after them."""

    def matrix_of(
        values: np.ndarray, rows: np.ndarray, columns: np.ndarray, n_rows: int
    ) -> np.ndarray:
        """``values`` at ``(rows, columns)`` of a matrix padded with their largest value."""
        matrix = np.full((n_rows, width), np.iinfo(values.dtype).max, dtype=values.dtype)
        matrix[rows, columns] = values
        return matrix

    first = matrix_of(keys[-1], run_of, within, len(lengths))
    ranked: np.ndarray = np.argsort(first, axis=1, kind="stable")
    if len(keys) == 1:
        return ranked
    in_order = np.take_along_axis(first, ranked, axis=1)
    shared = (in_order[:, 1:] == in_order[:, :-1]) & (
        np.arange(1, width)[None, :] < lengths[:, None]
    )
    again = np.flatnonzero(shared.any(axis=1))
    if not len(again):
        return ranked
    # the rows where two members share it (a few, or none), key by key
    slot = np.full(len(lengths), -1)
    slot[again] = np.arange(len(again))
    members = np.flatnonzero(slot[run_of] >= 0)
    rows, columns = slot[run_of[members]], within[members]
    order = np.broadcast_to(np.arange(width), (len(again), width))
    for key in keys:
        matrix = matrix_of(key[members], rows, columns, len(again))
        in_order = np.take_along_axis(matrix, order, axis=1)
        order = np.take_along_axis(order, np.argsort(in_order, axis=1, kind="stable"), axis=1)
    ranked[again] = order
    return ranked
