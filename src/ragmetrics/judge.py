"""Judge a run once: turn ``Run`` + ``Qrels`` into aligned arrays for every metric kernel.

The judged docs a ranking holds are few next to its length, so they are kept as coordinates:
``hit_rows[i]`` (the query's row), ``hit_ranks[i]`` (0-based rank) and ``hit_grades[i]``,
sorted by row then rank. Kernels that need whole matrices over (query, rank) use the dense
views (``grades``, ``judged``, ``retrieved``, ``relevant``), built on first use: row ``i`` is
query ``query_ids[i]``, column ``j`` is rank ``j + 1``, padded past a ranking's end.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain, repeat
from operator import and_, gt
from typing import Any

import numpy as np

from ragmetrics import _packed
from ragmetrics._precision import ScorePrecision, as_float32
from ragmetrics.qrels import Qrels
from ragmetrics.run import Run


@dataclass(frozen=True, eq=False)
class JudgedRun:
    """A run judged against qrels, to the depth the metrics need.

    Attributes:
        query_ids: the counted queries, one per row.
        hit_rows, hit_ranks, hit_grades: every judged doc within the depth: its query's
            row, its 0-based rank and its grade, sorted by row then rank.
        lengths: how many docs each query ranks within the depth.
        in_run: True for the queries the run has a ranking for (possibly empty).
        depth: the width of the dense views (the longest ranking, cut at the depth).
        judged_counts, judged_grades: how many docs each query has judged, and all their
            grades flat (query by query), for the ideal rankings.
        grade_map: raw grade -> utility grade 1..5, for the RAG set metrics (None: as is).
        pool: the candidate run of PROC@k (None: each query's own ranking).
        score_precision: how scores were compared when ranking (see :func:`judge`).
        n_located: how many retrieved docs are judged, at any depth.
    """

    query_ids: tuple[str, ...]
    hit_rows: np.ndarray
    hit_ranks: np.ndarray
    hit_grades: np.ndarray
    lengths: np.ndarray
    in_run: np.ndarray
    depth: int
    judged_counts: np.ndarray
    judged_grades: np.ndarray
    qrels: Qrels
    run: Run
    grade_map: Mapping[int, int] | None = None
    pool: Run | None = None
    score_precision: ScorePrecision = "float64"
    n_located: int = 0
    cache: dict[Any, Any] = field(default_factory=dict)

    @cached_property
    def max_grade(self) -> float:
        """The highest grade judged in the whole qrels (ERR's default scale)."""
        highest = self.qrels.max_grade()
        return 0.0 if highest is None else float(highest)

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    # --- dense views --------------------------------------------------------------------

    def _dense(self, values: np.ndarray, dtype: type) -> np.ndarray:
        matrix: np.ndarray = np.zeros((self.n_queries, self.depth), dtype=dtype)
        matrix[self.hit_rows, self.hit_ranks] = values
        return matrix

    @cached_property
    def grades(self) -> np.ndarray:
        """The grade of the doc at each rank; 0 where unjudged or in the padding."""
        return self._dense(self.hit_grades, np.float64)

    @cached_property
    def judged(self) -> np.ndarray:
        """True where the doc at that rank has a judgment for its query."""
        return self._dense(np.ones(len(self.hit_rows), dtype=bool), np.bool_)

    @cached_property
    def retrieved(self) -> np.ndarray:
        """True where a doc is ranked (False in the padding)."""
        retrieved: np.ndarray = np.arange(self.depth)[None, :] < self.lengths[:, None]
        return retrieved

    @cached_property
    def gains(self) -> np.ndarray:
        """``max(grade, 0)`` at each rank: the linear nDCG gain (trec_eval)."""
        gains: np.ndarray = np.maximum(self.grades, 0.0)
        return gains

    @cached_property
    def ideal_gains(self) -> np.ndarray:
        """Per query, the judged grades clipped at 0, sorted descending (padded with 0)."""
        return _ideal(self.judged_counts, self.judged_grades)

    # --- sparse views -------------------------------------------------------------------

    @cached_property
    def discounts(self) -> np.ndarray:
        """``1 / log2(rank + 1)`` for ranks 1..max(depth, ideal depth)."""
        longest = int(self.judged_counts.max()) if self.n_queries else 0
        size = max(self.depth, longest, 1)
        return 1.0 / np.log2(np.arange(2, size + 2, dtype=np.float64))

    def relevant_at(self, rel: int) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, ranks)`` of every doc graded ``rel`` or above, by query then rank."""
        key = ("relevant_at", rel)
        if key not in self.cache:
            relevant = self.hit_grades >= rel
            self.cache[key] = (self.hit_rows[relevant], self.hit_ranks[relevant])
        located: tuple[np.ndarray, np.ndarray] = self.cache[key]
        return located

    def hits(self, cutoff: int | None, rel: int) -> np.ndarray:
        """Docs graded ``rel`` or above within the first ``cutoff`` ranks (all when None)."""
        rows, ranks = self.relevant_at(rel)
        if cutoff is not None:
            rows = rows[ranks < cutoff]
        counts: np.ndarray = np.bincount(rows, minlength=self.n_queries)
        return counts

    def n_relevant(self, rel: int) -> np.ndarray:
        """``R``: per query, the judged docs graded ``rel`` or above."""
        key = ("n_relevant", rel)
        if key not in self.cache:
            ends = np.cumsum(self.judged_counts)
            before = np.concatenate(([0], np.cumsum(self.judged_grades >= rel)))
            self.cache[key] = before[ends] - before[ends - self.judged_counts]
        counts: np.ndarray = self.cache[key]
        return counts

    def group_first_ranks(self, rel: int) -> tuple[np.ndarray, np.ndarray]:
        """Per query and evidence group, the 0-based rank where a member first appears.

        Returns ``(first_rank, n_groups)``; ``first_rank`` is ``inf`` for a group with no
        member in the ranking and for the padding past a query's last group. Without
        explicit groups, each doc graded ``rel`` or above is a group.
        """
        key = ("group_first_ranks", rel)
        if key in self.cache:
            cached: tuple[np.ndarray, np.ndarray] = self.cache[key]
            return cached
        groups = [self.qrels.groups(q, relevance_threshold=rel) for q in self.query_ids]
        n_groups = np.fromiter(map(len, groups), dtype=np.int64, count=len(groups))
        width = int(n_groups.max()) if len(groups) else 0
        first = np.full((len(groups), max(width, 1)), np.inf)
        for row, (query_id, query_groups) in enumerate(zip(self.query_ids, groups, strict=True)):
            if query_id not in self.run or not query_groups:
                continue
            ranking = self.run.ranking(query_id, score_precision=self.score_precision)
            rank_of = dict(zip(ranking, range(len(ranking)), strict=True))
            for column, members in enumerate(query_groups):
                ranks = [rank_of[d] for d in members if d in rank_of]
                if ranks:
                    first[row, column] = min(ranks)
        self.cache[key] = (first, n_groups)
        return first, n_groups


def judge(
    qrels: Qrels,
    run: Run,
    query_ids: list[str],
    *,
    depth: int | None,
    grade_map: Mapping[int, int] | None = None,
    pool: Run | None = None,
    score_precision: ScorePrecision = "float64",
    progress: bool = False,
    run_rows: np.ndarray | None = None,
) -> JudgedRun:
    """Judge the first ``depth`` docs (all when None) of ``run`` for each of ``query_ids``.

    A query absent from the run gets an empty ranking. ``run_rows``: each query's row in the
    run or -1, when the caller has them (``rows_in_run``). ``score_precision="float32"``
    ranks on the scores rounded to 32-bit floats (trec_eval <= 9, pytrec_eval).
    """
    counts, grades = qrels.flat_grades(query_ids)
    if run_rows is None:
        run_rows = rows_in_run(run, query_ids)
    rows, ranks, hit_grades, lengths = _locate(
        qrels, counts, grades, run, query_ids, run_rows, progress, score_precision
    )
    n_located = len(rows)
    width = int(lengths.max()) if len(lengths) else 0
    if depth is not None:
        width = min(width, depth)
        keep = ranks < width
        rows, ranks, hit_grades = rows[keep], ranks[keep], hit_grades[keep]
    order = np.argsort(rows * (width + 1) + ranks, kind="stable")
    return JudgedRun(
        query_ids=tuple(query_ids),
        hit_rows=rows[order],
        hit_ranks=ranks[order],
        hit_grades=hit_grades[order],
        lengths=np.minimum(lengths, width),
        in_run=run_rows >= 0,
        depth=width,
        judged_counts=counts,
        judged_grades=grades,
        qrels=qrels,
        run=run,
        grade_map=grade_map,
        pool=pool,
        score_precision=score_precision,
        n_located=n_located,
    )


def rows_in_run(run: Run, query_ids: list[str]) -> np.ndarray:
    """Each query's row in the run, or -1 for a query the run does not rank."""
    if len(query_ids) == len(run) and list(run.query_ids) == query_ids:
        return np.arange(len(query_ids))  # the same queries in the same order
    return np.fromiter(
        map(run._index.get, query_ids, repeat(-1)), dtype=np.int64, count=len(query_ids)
    )


def _locate(
    qrels: Qrels,
    counts: np.ndarray,
    grades: np.ndarray,
    run: Run,
    query_ids: list[str],
    run_rows: np.ndarray,
    progress: bool,
    score_precision: ScorePrecision,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Find every judged doc in the rankings: ``(rows, ranks, grades, ranking lengths)``.

    Only judged docs matter to the metrics, so only they are located: each query's judged
    docs are intersected with its results at C speed (``keys & results``), which finds the
    few that were retrieved without a Python-level lookup per result. For a run from lists a
    doc's position is its rank. A scored run is not sorted: the rank of a judged doc is the
    number of results of its query with a higher score, plus those with an equal score and a
    greater doc id (trec_eval's order), counted in vectorized blocks. A run whose doc ids
    are bytes (read from a plain TREC file) is joined by hashing instead (``_locate_packed``).
    """
    n_queries = len(query_ids)
    lengths = np.where(run_rows >= 0, run.lengths[run_rows], 0)
    packed = run._packed_view()
    if packed is not None:
        located = _locate_packed(
            qrels, counts, grades, run, run_rows, packed, query_ids, score_precision
        )
        if located is not None:
            return (*located, lengths)
    docs, scores = run._judging_view()
    per_query = qrels.judged_maps(query_ids)
    # a query absent from the run (row -1) gets the empty ranking appended at the end
    own_docs = list(map([*docs, ()].__getitem__, run_rows.tolist()))
    keys: Any = map(dict.keys, per_query)
    if progress:
        from ragmetrics.progress import progress_bar

        keys = progress_bar(keys, total=n_queries, desc="judging")
    found = list(map(and_, keys, own_docs))
    n_found = np.fromiter(map(len, found), dtype=np.int64, count=n_queries)
    hit_docs = list(chain.from_iterable(found))
    hit_rows = np.repeat(np.arange(n_queries), n_found)
    positions = np.fromiter(
        map(tuple.index, chain.from_iterable(map(repeat, own_docs, n_found.tolist())), hit_docs),
        dtype=np.int64,
        count=len(hit_docs),
    )
    hit_grades = np.fromiter(
        map(
            dict.__getitem__,
            chain.from_iterable(map(repeat, per_query, n_found.tolist())),
            hit_docs,
        ),
        dtype=np.float64,
        count=len(hit_docs),
    )
    if scores is None:
        ranks = positions
    else:
        rows = run_rows[hit_rows]

        def greater(hits: np.ndarray, columns: np.ndarray) -> np.ndarray:
            ranking = map(docs.__getitem__, rows[hits].tolist())
            tied = map(tuple.__getitem__, ranking, columns.tolist())
            hit = map(hit_docs.__getitem__, hits.tolist())
            return np.fromiter(map(gt, tied, hit), dtype=bool, count=len(hits))

        ranks = _count_ranks(
            run, scores, rows, positions, greater, lambda: hit_docs, score_precision
        )
    return hit_rows, ranks, hit_grades, lengths


_HASH_BITS = np.uint64(0x7FFF_FFFF_FFFF_0000)  # the hash part of a join key
_FROM_QRELS = 1 << 15  # the tag bit of a judged doc (a result's tag is its column)
_TAG_BITS = (1 << 16) - 1
_EMPTY = np.uint64(2**64 - 1)  # padding: sorts last, equal to no key


def _locate_packed(
    qrels: Qrels,
    counts: np.ndarray,
    grades: np.ndarray,
    run: Run,
    run_rows: np.ndarray,
    packed: tuple[np.ndarray, np.ndarray, np.ndarray],
    query_ids: list[str],
    score_precision: ScorePrecision,
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``_locate`` for a run whose doc ids are bytes: ``(rows, ranks, grades)``, or None
    when the string path must answer (a judged id that is not ASCII, a hash collision,
    rankings too long or too uneven for one padded matrix).

    Each query becomes one row of 64-bit keys: a hash of each result's id tagged with its
    column, then a hash of each judged id tagged as judged. Sorting the rows puts a result
    next to the judgment of the same id; every such pair is then checked byte for byte.
    """
    ids, scores, hashed = packed
    judged_ids = qrels.packed_docs(query_ids)
    if judged_ids is None:
        return None
    n_queries = len(query_ids)
    lengths, offsets = run.lengths, run._offsets
    run_width = int(lengths.max()) if len(lengths) else 0
    judged_width = int(counts.max()) if n_queries else 0
    width = run_width + judged_width
    if (
        max(run_width, judged_width) >= _FROM_QRELS
        or n_queries * width > 4 * (len(ids) + len(judged_ids)) + 4096
    ):
        return None
    words = _packed.n_words(ids, judged_ids)
    if words != _packed.n_words(ids):  # a judged id is longer than any result's
        hashed = _packed.hashes(ids, words)
    judged_keys = _packed.hashes(judged_ids, words) & _HASH_BITS
    judged_ends = np.cumsum(counts)
    judged_starts = judged_ends - counts
    present = run_rows >= 0
    result_counts = np.where(present, lengths[run_rows], 0)
    result_starts = np.where(present, offsets[run_rows], 0)
    found_rows: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
    firsts: list[np.ndarray] = [np.zeros(0, dtype=np.uint64)]
    seconds: list[np.ndarray] = [np.zeros(0, dtype=np.uint64)]
    step = max(1, _BLOCK_CELLS // max(width, 2))
    keys = np.empty((min(step, n_queries), max(width, 2)), dtype=np.uint64)
    # a block of rows at a time, in a matrix that stays in the cache
    for start in range(0, n_queries, step):
        stop = min(start + step, n_queries)
        block = keys[: stop - start]
        block.fill(_EMPTY)
        # the results of each query of the block, in its row
        rows, columns, at = _spans(result_starts[start:stop], result_counts[start:stop])
        block[rows, columns] = (hashed[at] & _HASH_BITS) | columns.astype(np.uint64)
        # then its judged docs (contiguous, query by query)
        rows, columns, at = _spans(judged_starts[start:stop], counts[start:stop])
        block[rows, run_width + columns] = judged_keys[at] | (columns + _FROM_QRELS).astype(
            np.uint64
        )
        block.sort(axis=1)
        same = ((block[:, 1:] ^ block[:, :-1]) <= _TAG_BITS) & (block[:, :-1] != _EMPTY)
        if (same[:, 1:] & same[:, :-1]).any():
            return None  # three keys with one hash: a collision
        row, at = np.nonzero(same)
        found_rows.append(row + start)
        firsts.append(block[row, at])
        seconds.append(block[row, at + 1])
    rows = np.concatenate(found_rows)
    first = (np.concatenate(firsts) & np.uint64(_TAG_BITS)).astype(np.int64)
    second = (np.concatenate(seconds) & np.uint64(_TAG_BITS)).astype(np.int64)
    # a result first, its judgment second: anything else is two results or two judgments
    # whose ids collide
    if (first >= _FROM_QRELS).any() or (second < _FROM_QRELS).any():
        return None
    result_at = offsets[run_rows[rows]] + first
    judged_at = judged_starts[rows] + second - _FROM_QRELS
    if not (ids[result_at] == judged_ids[judged_at]).all():
        return None  # a collision
    run_of_hit = run_rows[rows]

    def greater(hits: np.ndarray, columns: np.ndarray) -> np.ndarray:
        at = offsets[run_of_hit[hits]]
        bigger: np.ndarray = ids[at + columns] > ids[at + first[hits]]
        return bigger

    ranks = _count_ranks(
        run,
        scores,
        run_of_hit,
        first,
        greater,
        lambda: _packed.decode(ids[result_at]),
        score_precision,
    )
    return rows, ranks, grades[judged_at]


_BLOCK_CELLS = 1 << 18  # score comparisons per vectorized block when counting ranks


def _spans(starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For spans ``[starts[i], starts[i] + counts[i])`` of a flat array: each element's span,
    its place within the span, and its index in the flat array."""
    rows = np.repeat(np.arange(len(counts)), counts)
    columns = np.arange(len(rows)) - (np.cumsum(counts) - counts)[rows]
    return rows, columns, starts[rows] + columns


def _count_ranks(
    run: Run,
    scores: np.ndarray,
    rows: np.ndarray,
    positions: np.ndarray,
    greater: Callable[[np.ndarray, np.ndarray], np.ndarray],
    hit_docs: Callable[[], list[str]],
    score_precision: ScorePrecision,
) -> np.ndarray:
    """The 0-based rank of each located doc: ``positions[i]`` in run row ``rows[i]``.

    Rank = results of the query scored higher, plus results scored equal with a greater
    doc id. Each located doc is compared with its query's scores as one padded row.
    ``greater(hits, columns)`` tells, for each located doc ``hits[k]`` and a result at
    ``columns[k]`` of its row, whether that result's id is greater; ``hit_docs()`` gives
    the located docs' ids as strings. With ``score_precision="float32"`` scores are compared
    after rounding to 32-bit floats, so scores equal in float32 tie.
    """
    if score_precision == "float32":
        scores = as_float32(scores)
    lengths = run.lengths
    offsets = run._offsets
    width = int(lengths.max()) if len(lengths) else 0
    uniform = bool((lengths == width).all())
    if not uniform and len(lengths) * width > 4 * len(scores) + 4096:
        # very uneven rankings: a padded matrix would dwarf the run; sort it once instead
        ranked = run.rankings(score_precision=score_precision)
        return np.fromiter(
            map(tuple.index, map(ranked.__getitem__, rows.tolist()), hit_docs()),
            dtype=np.int64,
            count=len(rows),
        )
    # NaN padding compares false with every score: it is never above or tied
    padded = (
        scores.reshape(len(lengths), width) if uniform else pad_rows(lengths, scores, fill=np.nan)
    )
    values = scores[offsets[rows] + positions]
    ranks = np.empty(len(rows), dtype=np.int64)
    tied: list[np.ndarray] = []
    step = max(1, _BLOCK_CELLS // max(width, 1))
    for start in range(0, len(rows), step):
        stop = start + step
        block = padded[rows[start:stop]]
        value = values[start:stop, None]
        ranks[start:stop] = (block > value).sum(axis=1)
        located, columns = np.nonzero(block == value)
        other = columns != positions[start:stop][located]  # a doc does not tie with itself
        if other.any():
            tied.append(np.stack((located[other] + start, columns[other])))
    if tied:
        # ties are broken by doc id descending: count the tied docs with a greater id
        pairs = np.concatenate(tied, axis=1)
        above = greater(pairs[0], pairs[1])
        ranks += np.bincount(pairs[0][above], minlength=len(rows))
    return ranks


def _ideal(counts: np.ndarray, grades: np.ndarray) -> np.ndarray:
    """Per query, the judged grades clipped at 0 sorted descending (padded with 0)."""
    ideal: np.ndarray = np.sort(pad_rows(counts, np.maximum(grades, 0.0)), axis=1)[:, ::-1]
    return ideal


def pad_rows(
    counts: np.ndarray, values: np.ndarray, *, min_width: int = 0, fill: float = 0.0
) -> np.ndarray:
    """Values given query by query (the first ``counts[0]`` for row 0, and so on) as a
    matrix with one row per query, padded with ``fill`` (a view of ``values`` when every
    row is full)."""
    n_rows = len(counts)
    width = max(int(counts.max()) if n_rows else 0, min_width)
    if n_rows and width * n_rows == len(values):
        return values.reshape(n_rows, width)
    starts = np.cumsum(counts) - counts
    padded = np.full(n_rows * width, fill, dtype=values.dtype)
    # each row's values are contiguous: shift them to the start of their row
    padded[np.arange(len(values)) + np.repeat(np.arange(n_rows) * width - starts, counts)] = values
    return padded.reshape(n_rows, width)
