"""Judge a run once: turn ``Run`` + ``Qrels`` into aligned arrays for every metric kernel.

The judged docs a ranking holds are few next to its length, so they are kept as coordinates:
``hit_rows[i]`` (the query's row), ``hit_ranks[i]`` (0-based rank) and ``hit_grades[i]``,
sorted by row then rank. Kernels that need whole matrices over (query, rank) use the dense
views (``grades``, ``judged``, ``retrieved``, ``relevant``), built on first use: row ``i`` is
query ``query_ids[i]``, column ``j`` is rank ``j + 1``, padded past a ranking's end.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ragmetrics.data._order import rank_of
from ragmetrics.data._precision import ScorePrecision, as_float32
from ragmetrics.data._qrels import Qrels
from ragmetrics.data._run import Run
from ragmetrics.data._store import Store, store_of
from ragmetrics.metrics.judged import Evidence, JudgedRun

__all__ = [
    "locate_in_lists",
    "locate_in_ranking",
    "locate_judged",
]


def locate_judged(
    qrels: Qrels,
    run: Run,
    query_ids: list[str],
    *,
    depth: int | None,
    grade_map: Mapping[int, int] | None = None,
    pool: Run | None = None,
    with_pool: bool = False,
    score_precision: ScorePrecision = "float64",
    progress: bool = False,
    run_rows: np.ndarray | None = None,
) -> JudgedRun:
    """Judge the first ``depth`` docs (all when None) of ``run`` for each of ``query_ids``:
    everything the kernels read, computed here once (they never go back to the inputs).

    Only judged docs matter to the metrics, so only they are located in the rankings
    (:meth:`Store.find`). A query absent from the run gets an empty ranking. ``run_rows``:
    each query's row in the run or -1, when the caller has them. ``score_precision=
    "float32"`` ranks on the scores rounded to 32-bit floats (trec_eval <= 9, pytrec_eval).
    ``with_pool``: also judge PROC@k's candidate pool in full (``pool``, or the run itself
    where ``pool`` is None or lacks the query).
    """
    if with_pool and pool is None and depth is not None and not qrels.has_groups:
        # the pool is the run judged in full: judged once, and cut to the depth for the rest
        whole = locate_judged(
            qrels,
            run,
            query_ids,
            depth=None,
            grade_map=grade_map,
            score_precision=score_precision,
            progress=progress,
            run_rows=run_rows,
        )
        return replace(_cut_to(whole, depth), pool=whole)
    judged = store_of(qrels).subset(query_ids)
    results = store_of(run)
    if run_rows is None:
        run_rows = results.rows(query_ids)
    rows, positions, hit_grades = results.find(judged, run_rows, progress=progress)
    n_located = len(rows)
    ranks = positions
    if results.scored:  # the results are in input order: count each doc's rank
        ranks = rank_of(results, run_rows[rows], positions, score_precision)
    lengths = np.where(run_rows >= 0, results.lengths[run_rows], 0)
    width = int(lengths.max()) if len(lengths) else 0
    if depth is not None:
        width = min(width, depth)
        keep = ranks < width
        rows, ranks, positions, hit_grades = (
            rows[keep],
            ranks[keep],
            positions[keep],
            hit_grades[keep],
        )
    order = np.argsort(rows * (width + 1) + ranks, kind="stable")
    rows, ranks, positions = rows[order], ranks[order], positions[order]
    tied = None
    if results.scored:
        tied = _tied_hits(results, run_rows[rows], positions, score_precision)
    grades = judged.values
    assert grades is not None
    highest = qrels.max_grade()
    evidence = None
    if qrels.has_groups:
        evidence = _locate_evidence(qrels, query_ids, results, run_rows, rows, positions)
    pooled, pool_is_self = None, False
    if with_pool:
        pool_is_self = pool is None and depth is None
        if not pool_is_self:
            pooled = _locate_pool(qrels, run, pool, query_ids, grade_map, score_precision)
    return JudgedRun(
        query_ids=tuple(query_ids),
        hit_rows=rows,
        hit_ranks=ranks,
        hit_grades=hit_grades[order],
        lengths=np.minimum(lengths, width),
        in_run=run_rows >= 0,
        depth=width,
        judged_counts=judged.lengths,
        judged_grades=grades.astype(np.float64),
        max_grade=0.0 if highest is None else float(highest),
        grade_map=grade_map,
        score_precision=score_precision,
        n_located=n_located,
        evidence=evidence,
        pool=pooled,
        pool_is_self=pool_is_self,
        hit_tied=tied,
    )


def _cut_to(whole: JudgedRun, depth: int) -> JudgedRun:
    """``whole`` (judged to every depth, without evidence groups) judged to ``depth``: the
    judged run :func:`locate_judged` gives for that depth. Hits are sorted by row then rank,
    so each row keeps a prefix of its hits, and each kept hit the hit before it."""
    width = min(whole.depth, depth)
    keep = whole.hit_ranks < width
    tied = whole.hit_tied
    return replace(
        whole,
        hit_rows=whole.hit_rows[keep],
        hit_ranks=whole.hit_ranks[keep],
        hit_grades=whole.hit_grades[keep],
        lengths=np.minimum(whole.lengths, width),
        depth=width,
        hit_tied=None if tied is None else tied[keep],
        cache={},
    )


def _tied_hits(
    results: Store, rows: np.ndarray, positions: np.ndarray, score_precision: ScorePrecision
) -> np.ndarray:
    """For hits in rank order (``rows``: their rows in ``results``), True where a hit's score
    equals the score of the hit before it in the same row."""
    scores = results.values
    assert scores is not None
    hit_scores = scores[results.offsets[rows] + positions]
    if score_precision == "float32":
        hit_scores = as_float32(hit_scores)
    tied = np.zeros(len(rows), dtype=bool)
    tied[1:] = (rows[1:] == rows[:-1]) & (hit_scores[1:] == hit_scores[:-1])
    return tied


def _locate_evidence(
    qrels: Qrels,
    query_ids: list[str],
    results: Store,
    run_rows: np.ndarray,
    hit_rows: np.ndarray,
    hit_positions: np.ndarray,
) -> Evidence:
    """Which located docs belong to which given evidence group: only the hits of queries
    with groups are read back as ids, so the cost follows the evidence, not the run."""
    given_groups = [qrels.given_groups(q) for q in query_ids]
    given = np.array([g is not None for g in given_groups], dtype=bool)
    n_given = np.array([len(g) if g is not None else 0 for g in given_groups], dtype=np.int64)
    members = np.flatnonzero(given[hit_rows])
    docs = results.docs_at(run_rows[hit_rows[members]], hit_positions[members])
    columns_of: dict[int, dict[str, list[int]]] = {}
    member_hits: list[int] = []
    member_columns: list[int] = []
    for hit, row, doc in zip(members.tolist(), hit_rows[members].tolist(), docs, strict=True):
        if row not in columns_of:
            columns: dict[str, list[int]] = {}
            for column, group in enumerate(given_groups[row] or ()):
                for member in group:
                    columns.setdefault(member, []).append(column)
            columns_of[row] = columns
        for column in columns_of[row].get(doc, ()):
            member_hits.append(hit)
            member_columns.append(column)
    return Evidence(
        given=given,
        n_given=n_given,
        member_hits=np.array(member_hits, dtype=np.int64),
        member_columns=np.array(member_columns, dtype=np.int64),
    )


def _locate_pool(
    qrels: Qrels,
    run: Run,
    pool: Run | None,
    query_ids: list[str],
    grade_map: Mapping[int, int] | None,
    score_precision: ScorePrecision,
) -> JudgedRun:
    """The candidate pool of PROC@k judged in full: ``pool`` where it has the query, else
    the query's own whole ranking."""
    source = run if pool is None else pool
    absent = [] if source is run else [q for q in query_ids if q not in source and q in run]
    if absent:
        merged = {q: list(source.ranking(q, score_precision=score_precision)) for q in source}
        merged.update({q: list(run.ranking(q, score_precision=score_precision)) for q in absent})
        source = Run.from_lists(merged)
    return locate_judged(
        qrels,
        source,
        query_ids,
        depth=None,
        grade_map=grade_map,
        score_precision=score_precision,
    )


def locate_in_ranking(
    judgments: dict[str, int],
    ranking: tuple[str, ...],
    *,
    query_id: str = "q",
    depth: int | None,
    grade_map: Mapping[int, int] | None = None,
    score_precision: ScorePrecision = "float64",
    with_pool: bool = False,
) -> JudgedRun:
    """:func:`locate_judged` for one ranked list, its judgments and ids already checked
    (str ids, int grades, each doc once in the ranking, no evidence groups). For one short
    ranking the batch machinery costs more than the work, so the judged docs are found with
    a dict lookup per retrieved doc (single-query scoring in the adapters). The result is
    the one :func:`locate_judged` gives.

    Example:
        >>> one = locate_in_ranking({"a": 2}, ("x", "a"), depth=None)
        >>> one.hit_ranks.tolist(), one.hit_grades.tolist(), one.depth
        ([1], [2.0], 2)
    """
    width = len(ranking) if depth is None else min(len(ranking), depth)
    grade_of = judgments.get
    located = [(rank, grade_of(doc)) for rank, doc in enumerate(ranking) if doc in judgments]
    within = [hit for hit in located if hit[0] < width]
    pool_is_self = with_pool and depth is None
    pooled = None
    if with_pool and not pool_is_self:
        pooled = locate_in_ranking(
            judgments,
            ranking,
            query_id=query_id,
            depth=None,
            grade_map=grade_map,
            score_precision=score_precision,
        )
    return JudgedRun(
        query_ids=(query_id,),
        hit_rows=np.zeros(len(within), dtype=np.int64),
        hit_ranks=np.array([rank for rank, _ in within], dtype=np.int64),
        hit_grades=np.array([grade for _, grade in within], dtype=np.float64),
        lengths=np.array([width], dtype=np.int64),
        in_run=np.ones(1, dtype=bool),
        depth=width,
        judged_counts=np.array([len(judgments)], dtype=np.int64),
        judged_grades=np.fromiter(judgments.values(), dtype=np.float64, count=len(judgments)),
        max_grade=float(max(judgments.values(), default=0)),
        grade_map=grade_map,
        score_precision=score_precision,
        n_located=len(located),
        pool=pooled,
        pool_is_self=pool_is_self,
    )


def locate_in_lists(
    judgments: Mapping[str, Mapping[str, int]],
    rankings: Mapping[str, Sequence[str]],
    **options: Any,
) -> JudgedRun:
    """Judge ranked lists against ``{query: {doc: grade}}`` in full, every query of the
    judgments counted, the candidate pool included (for examples and quick checks;
    ``options`` go to :func:`locate_judged`).

    Example:
        >>> judged = locate_in_lists({"q": {"a": 2, "b": 0}}, {"q": ["x", "a"]})
        >>> judged.hit_ranks.tolist(), judged.hit_grades.tolist(), judged.depth
        ([1], [2.0], 2)
    """
    qrels = Qrels.from_dict(judgments)
    options.setdefault("with_pool", True)
    return locate_judged(qrels, Run.from_lists(rankings), list(qrels), depth=None, **options)
