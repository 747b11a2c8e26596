"""Per-query diagnostics of the RAG set metrics, and the robustness grid of their weighting;
and trec_eval's relevance strings.

``diagnose`` answers, for one query: which decisive or highly relevant docs (grade >= 4) were
missed, whether they were in the candidate pool (a selection / reranking gap, what PROC vs
%PROC measures) or absent from it (a retrieval gap), and which top-K docs are harmful or
unjudged. ``robustness`` re-evaluates several runs over a grid of (alpha, cap4, cap3) and
says whether the systems' order changes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ragmetrics.data._precision import ScorePrecision, check_score_precision
from ragmetrics.data._qrels import Qrels
from ragmetrics.data._run import Run
from ragmetrics.data._store import store_of
from ragmetrics.engine._locate import locate_judged
from ragmetrics.engine._settings import as_qrels, as_run, check_grade_map
from ragmetrics.errors import (
    GradeScaleError,
    InvalidParameterError,
    MissingKeyError,
)
from ragmetrics.metrics._rag import check_utility_scale, rarity_weights
from ragmetrics.metrics.registry import ALPHA, CAP3, CAP4, REL
from ragmetrics.output._tables import escape_markdown

__all__ = [
    "Diagnosis",
    "DocNote",
    "diagnose",
    "relevance_strings",
]


@dataclass(frozen=True)
class DocNote:
    """A doc with its utility grade (None when unjudged) and rarity weight."""

    doc_id: str
    grade: int | None
    weight: float


@dataclass(frozen=True)
class Diagnosis:
    """What the top-K of one query holds and misses.

    Attributes:
        selected: the first K distinct docs, in rank order.
        missed_in_pool: docs of grade >= 4 (with ``utility_scale``, else relevant at the
            threshold) in the candidate pool but not selected (a selection gap).
        missed_not_in_pool: such docs not even in the pool (a retrieval gap).
        harmful: selected docs of utility grade 1 or 2 (weak or distracting); empty when
            the grades are not read as utility grades.
        unjudged: selected docs nobody graded.
        values: this query's values of the evaluated metrics.
    """

    query_id: str
    cutoff: int
    selected: tuple[DocNote, ...]
    missed_in_pool: tuple[DocNote, ...]
    missed_not_in_pool: tuple[DocNote, ...]
    harmful: tuple[DocNote, ...]
    unjudged: tuple[DocNote, ...]
    values: dict[str, float | None] = field(default_factory=dict)
    utility_scale: bool = True
    relevance_threshold: int = REL.default

    def to_markdown(self) -> str:
        def names(notes: Sequence[DocNote]) -> str:
            if not notes:
                return "none"
            return ", ".join(
                escape_markdown(n.doc_id) + ("" if n.grade is None else f" (g{n.grade})")
                for n in notes
            )

        shown = ", ".join(
            f"{k} = {'NA' if v is None else format(v, '.3f')}" for k, v in self.values.items()
        )
        wanted = (
            "grade >= 4"
            if self.utility_scale
            else f"relevant (grade >= {self.relevance_threshold})"
        )
        lines = [
            f"**{escape_markdown(self.query_id)}** (K = {self.cutoff})"
            f"{': ' + shown if shown else ''}",
            f"- selected: {names(self.selected)}",
            f"- {wanted} in the pool, not selected (selection gap): {names(self.missed_in_pool)}",
            f"- {wanted} not in the pool (retrieval gap): {names(self.missed_not_in_pool)}",
        ]
        if self.utility_scale:
            lines.append(f"- harmful in the top K: {names(self.harmful)}")
        lines.append(f"- unjudged in the top K: {names(self.unjudged)}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"Diagnosis(query {self.query_id!r} at {self.cutoff}: {len(self.selected)} selected, "
            f"{len(self.missed_in_pool)} missed in the pool, {len(self.missed_not_in_pool)} "
            f"not in the pool, {len(self.harmful)} harmful, {len(self.unjudged)} unjudged)"
        )

    def _repr_markdown_(self) -> str:
        return self.to_markdown()


def relevance_strings(
    qrels: Qrels | Mapping[str, Mapping[str, int]],
    run: Run | Mapping[str, Mapping[str, float]],
    k: int = 10,
    *,
    query_ids: Sequence[str] | None = None,
    score_precision: ScorePrecision = "float64",
) -> dict[str, str]:
    """trec_eval's ``relstring.k``: each query's top ``k`` as one character per doc, its
    grade ``0``-``9`` (``>`` above 9), ``.`` for a negative grade, ``-`` when unjudged.

    ``query_ids``: the queries to show (default: every query the qrels judge); a query the
    run lacks shows ``""``. A string, not a number, so it is no registered metric:
    ``ragmetrics trec_eval -m relstring.k`` prints the same strings.

    Example:
        >>> relevance_strings({"q": {"a": 2, "b": -1, "c": 12}}, {"q": ["a", "x", "b", "c"]})
        {'q': '2-.>'}
    """
    qrels, run = as_qrels(qrels), as_run(run)
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise InvalidParameterError(f"k must be a whole number >= 0; got {k!r}.")
    wanted = list(qrels.query_ids) if query_ids is None else list(query_ids)
    # the top k of every ranking judged at once: one character per doc, '-' where unjudged
    known = [query_id for query_id in wanted if query_id in qrels]
    judged = locate_judged(qrels, run, known, depth=k, score_precision=score_precision)
    chars = np.full((len(known), max(judged.depth, 1)), ord("-"), dtype=np.uint8)
    grades = np.trunc(judged.hit_grades)  # a real-valued grade: its whole part
    digit = (np.clip(grades, 0, 9) + ord("0")).astype(np.uint8)
    shown = np.where(grades < 0, ord("."), np.where(grades > 9, ord(">"), digit))
    chars[judged.hit_rows, judged.hit_ranks] = shown
    lengths = judged.lengths.tolist()
    strings = {
        query_id: chars[row, : lengths[row]].tobytes().decode("ascii") if in_run else ""
        for row, (query_id, in_run) in enumerate(zip(known, judged.in_run.tolist(), strict=True))
    }
    # a query the qrels lack: nothing of its ranking is judged
    results = store_of(run)
    return {
        query_id: strings[query_id]
        if query_id in strings
        else "-" * min(int(results.lengths[row]), k)
        if row >= 0
        else ""
        for query_id, row in zip(wanted, results.rows(wanted).tolist(), strict=True)
    }


def _check_query(qrels: Qrels, query_id: object, cutoff: object, values: object) -> None:
    if not isinstance(query_id, str):
        raise InvalidParameterError(f"query_id must be a query id (a string); got {query_id!r}.")
    if values is not None and not isinstance(values, Mapping):
        raise InvalidParameterError(f"values must map metric names to values; got {values!r}.")
    if query_id not in qrels:
        raise MissingKeyError(f"Query {query_id!r} is not judged; diagnose a query of the qrels.")
    if not isinstance(cutoff, int) or isinstance(cutoff, bool) or cutoff < 1:
        raise InvalidParameterError(f"The cutoff must be an int >= 1. Got {cutoff!r} instead.")


def _reads_utility(qrels: Qrels, grade_map: Mapping[int, int] | None, utility: bool | None) -> bool:
    """Whether the grades are read as utility grades: as asked, else when the qrels are
    plainly on that scale (the set metrics' rule); a scale refused where it was asked for."""
    if utility is None:
        try:
            check_utility_scale(qrels.grade_values(), grade_map, ["diagnose"])
        except GradeScaleError:
            if grade_map is not None:
                raise
            return False
        return True
    if utility:
        check_utility_scale(qrels.grade_values(), grade_map, ["diagnose(utility=True)"])
    return bool(utility)


def diagnose(
    qrels: Qrels | Mapping[str, Mapping[str, int]],
    run: Run | Mapping[str, object],
    query_id: str,
    cutoff: int,
    *,
    pool: Run | Mapping[str, object] | None = None,
    grade_map: Mapping[int, int] | None = None,
    rarity_alpha: float = ALPHA.default,
    cap4: float = CAP4.default,
    cap3: float = CAP3.default,
    relevance_threshold: int = REL.default,
    utility: bool | None = None,
    score_precision: ScorePrecision = "float64",
    values: dict[str, float | None] | None = None,
) -> Diagnosis:
    """Diagnose the top-``cutoff`` set of one query (see :class:`Diagnosis`).

    With ``utility=True`` the grades are read as utility grades 1..5 (after ``grade_map``):
    missed docs are those of grade >= 4 and harmful ones are selected docs of grade 1 or 2,
    the reading of the RAG set metrics. With ``utility=False`` missed docs are those at or
    above ``relevance_threshold`` and nothing is called harmful, the reading of the classic
    metrics. ``None`` reads utility grades when the qrels are plainly on that scale (the
    rule the set metrics apply), else the threshold. ``qrels``, ``run`` and ``pool`` may be
    the dicts :func:`~ragmetrics.evaluate` takes.
    """
    qrels = as_qrels(qrels)
    run = as_run(run)
    pool = as_run(pool, "pool") if pool is not None else None
    grade_map = check_grade_map(grade_map)
    rarity_alpha = ALPHA.check(rarity_alpha)
    cap4, cap3 = CAP4.check(cap4), CAP3.check(cap3)
    relevance_threshold = REL.check(relevance_threshold)
    score_precision = check_score_precision(score_precision)
    _check_query(qrels, query_id, cutoff, values)
    utility = _reads_utility(qrels, grade_map, utility)
    judged = qrels[query_id]
    if utility:
        mapping = grade_map or {}
        grades = {d: int(mapping.get(g, g)) for d, g in judged.items()}
    else:
        grades = dict(judged)
    counts = np.zeros((1, 6), dtype=np.int64)
    if utility:
        for g in grades.values():
            counts[0, g] += 1
    weights = rarity_weights(counts, alpha=rarity_alpha, cap4=cap4, cap3=cap3)[0]
    high_grade = 4 if utility else relevance_threshold

    def note(doc: str) -> DocNote:
        grade = grades.get(doc)
        weight = float(weights[grade]) if utility and grade is not None else 0.0
        return DocNote(doc, grade, weight)

    ranking = run.ranking(query_id, score_precision=score_precision) if query_id in run else ()
    selected = tuple(note(d) for d in ranking[:cutoff])
    chosen = {n.doc_id for n in selected}
    # as in PROC@k, a query the pool does not cover is its own pool
    pool_docs = set(pool[query_id] if pool is not None and query_id in pool else ranking)
    high = sorted(
        (d for d, g in grades.items() if g >= high_grade and d not in chosen),
        key=lambda d: (-grades[d], d),
    )
    return Diagnosis(
        query_id=query_id,
        cutoff=cutoff,
        selected=selected,
        missed_in_pool=tuple(note(d) for d in high if d in pool_docs),
        missed_not_in_pool=tuple(note(d) for d in high if d not in pool_docs),
        harmful=tuple(n for n in selected if utility and n.grade is not None and n.grade <= 2),
        unjudged=tuple(n for n in selected if n.grade is None),
        values=dict(values or {}),
        utility_scale=utility,
        relevance_threshold=relevance_threshold,
    )
