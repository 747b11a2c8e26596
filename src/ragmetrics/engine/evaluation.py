"""``evaluate()``: parse names, judge the run once, call the kernels, aggregate."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import cached_property
from itertools import compress
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np

from ragmetrics._util.gc import without_gc
from ragmetrics._util.table import csv_table, html_table, markdown_table, text_table
from ragmetrics._util.warn import warn
from ragmetrics.data._precision import ScorePrecision, check_score_precision
from ragmetrics.data._store import store_of
from ragmetrics.data.qrels import Qrels
from ragmetrics.data.run import Run
from ragmetrics.engine.locate import JudgedRun, locate_judged
from ragmetrics.errors import (
    IdMismatchWarning,
    InputFormatError,
    InvalidParameterError,
    MissingKeyError,
    MissingQueryError,
    RagMetricsError,
    UndefinedMetricWarning,
)
from ragmetrics.formats._atomic import write_text
from ragmetrics.metrics import Cutoff, Metric, parse_metrics
from ragmetrics.metrics.rag import check_utility_scale
from ragmetrics.metrics.registry import (
    ALPHA,
    CAP3,
    CAP4,
    MAX_GRADE,
    REL,
    Param,
    Scale,
    Tally,
    coerce,
)

if TYPE_CHECKING:
    import pandas as pd

    from ragmetrics.analysis.diagnostics import Diagnosis

MissingPolicy = Literal["zero", "skip", "error"]
_DIAGNOSIS_DEPTH = 10  # the top k a diagnosis reads when no metric names a cutoff
_MISSING_POLICIES = ("zero", "skip", "error")


@dataclass(frozen=True)
class Counts:
    """What was counted, and what was left out and why.

    Attributes:
        queries: queries counted in the aggregate (before NA, per metric see ``valid``).
        judged: queries in the qrels.
        in_run: queries in the run.
        missing_from_run: judged queries with no ranking in the run (scored 0 with
            ``missing="zero"``, left out with ``"skip"``).
        not_judged: queries in the run with no judgments (always left out).
        empty_rankings: counted queries whose ranking is empty (scored as such).
        repeated_ids_dropped: repeated doc ids dropped from the rankings.
        valid: per metric, queries with a defined value.
        na: per metric, queries for which the metric is NA (left out of its mean).
        unmatched_chunks: retrieved chunks that matched no original (chunk matching only);
            each kept its rank as an unjudged doc.
        ambiguous_chunks: retrieved chunks that matched more than one original (chunk
            matching only); placed by the matcher's ``ambiguous`` policy.
        failed_retrievals: queries whose retrieval raised (adapters only); each scored as an
            empty ranking, the errors are in ``EvaluationResult.retrieval_errors``.
    """

    queries: int
    judged: int
    in_run: int
    missing_from_run: int
    not_judged: int
    empty_rankings: int
    repeated_ids_dropped: int
    valid: dict[str, int] = field(default_factory=dict)
    na: dict[str, int] = field(default_factory=dict)
    unmatched_chunks: int = 0
    ambiguous_chunks: int = 0
    failed_retrievals: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class EvaluationResult:
    """Per-query and aggregate values of several metrics over one run.

    Attributes:
        metrics: the metric labels, as the caller wrote them.
        query_ids: the counted queries, one per row of ``values``.
        values: array (queries x metrics); NaN where a metric is NA for a query. Empty
            (no row) for a streamed evaluation that kept no per-query values.
        tallies: label -> the :class:`~ragmetrics.metrics.registry.Tally` the aggregate is
            made from (queries defined, NA, exact sum): results of batches of whole queries
            merge by adding them.
        aggregate: label -> the metric's value over the run: the mean over the queries
            where it is defined (a geometric mean for ``gm_map``, a sum for trec_eval's
            ``num_*`` counts: see ``MetricSpec.aggregate``); ``None`` when it is defined for
            none.
        counts: a :class:`Counts` of what was counted and what was left out.
        missing_query_ids, unjudged_query_ids: the ids behind those counts.
        retrieval_errors: query id -> ``"ErrorType: message"`` for each retrieval that
            raised (set by the adapters; empty otherwise).
    """

    def __init__(
        self,
        *,
        metrics: Sequence[Metric],
        query_ids: tuple[str, ...],
        values: np.ndarray,
        counts: Counts,
        missing_query_ids: tuple[str, ...],
        unjudged_query_ids: tuple[str, ...],
        settings: dict[str, Any],
        judged: JudgedRun | None = None,
        run_name: str | None = None,
        tallies: Sequence[Tally] | None = None,
    ) -> None:
        self._metric_specs = tuple(metrics)
        self.metrics = tuple(m.label for m in metrics)
        self.query_ids = query_ids
        self.values = values
        self.counts = counts
        self.missing_query_ids = missing_query_ids
        self.unjudged_query_ids = unjudged_query_ids
        self.settings = settings
        self.run_name = run_name
        self.retrieval_errors: dict[str, str] = {}
        self._judged = judged
        if tallies is None:
            tallies = [m.spec.aggregate.tally(values[:, i]) for i, m in enumerate(metrics)]
        self.tallies: dict[str, Tally] = dict(zip(self.metrics, tallies, strict=True))
        reduced = [m.spec.aggregate.finish(t) for m, t in zip(metrics, tallies, strict=True)]
        self.aggregate: dict[str, float | None] = {
            label: (None if math.isnan(value) else value)
            for label, value in zip(self.metrics, reduced, strict=True)
        }

    @cached_property
    def per_query(self) -> dict[str, dict[str, float | None]]:
        """query id -> label -> value (``None`` where the metric is NA)."""
        self._require_rows()
        labels = self.metrics
        rows = _with_none(self.values)
        return {
            q: dict(zip(labels, row, strict=True))
            for q, row in zip(self.query_ids, rows, strict=True)
        }

    def column(self, metric: str) -> np.ndarray:
        """The per-query values of one metric (NaN for NA), aligned with ``query_ids``."""
        self._require_rows()
        try:
            return self.values[:, self.metrics.index(metric)]
        except ValueError:
            raise MissingKeyError(
                f"{metric!r} was not evaluated; this result has {', '.join(self.metrics)}."
            ) from None

    def __getitem__(self, metric: str) -> float | None:
        """The aggregate value of one metric."""
        if metric not in self.aggregate:
            raise MissingKeyError(
                f"{metric!r} was not evaluated; this result has {', '.join(self.metrics)}."
            )
        return self.aggregate[metric]

    def worst(self, metric: str | None = None, n: int = 5) -> list[str]:
        """The ``n`` query ids with the worst value of ``metric`` (default: the first one):
        the lowest, or the highest where lower is better; queries where it is NA come last."""
        label = metric or self.metrics[0]
        column = self.column(label)
        if not self.metric(label).higher_is_better:
            column = -column
        order = np.argsort(np.where(np.isnan(column), np.inf, column), kind="stable")
        return [self.query_ids[i] for i in order[:n].tolist()]

    def diagnose(self, query_id: str, k: int | None = None) -> Diagnosis:
        """What the top-k set of one query holds and misses (see :func:`diagnose`).

        ``k`` defaults to the cutoff of the first set metric evaluated (else of the first
        metric with a cutoff, else 10). The grades are read as utility grades (missed: grade >= 4;
        harmful: grade <= 2) when a RAG set metric on that scale was evaluated, else by the
        relevance threshold, as the classic metrics read them.
        """
        from ragmetrics.analysis.diagnostics import diagnose

        if self._judged is None:
            raise RagMetricsError("This result keeps no judged data to diagnose.")
        cutoff = k if k is not None else self._default_cutoff()
        judged = self._judged
        utility = [m for m in self._metric_specs if m.spec.scale is Scale.UTILITY]
        weighting = next(
            (m.params for m in utility if "alpha" in m.params),
            {p.name: p.default for p in (ALPHA, CAP4, CAP3)},
        )
        return diagnose(
            judged.qrels,
            judged.run,
            query_id,
            cutoff,
            pool=judged.pool,
            grade_map=judged.grade_map,
            alpha=weighting["alpha"],
            cap4=weighting["cap4"],
            cap3=weighting["cap3"],
            relevance_threshold=self.settings["relevance_threshold"],
            utility=bool(utility),
            score_precision=judged.score_precision,
            values=self.per_query.get(query_id, {}),
        )

    def metric(self, label: str) -> Metric:
        """The parsed metric evaluated under ``label``."""
        for metric in self._metric_specs:
            if metric.label == label:
                return metric
        raise MissingKeyError(
            f"{label!r} was not evaluated; this result has {', '.join(self.metrics)}."
        )

    def _default_cutoff(self) -> int:
        ranked = sorted(self._metric_specs, key=lambda m: m.spec.family != "set")
        for metric in ranked:
            if metric.cutoff is not None:
                return metric.cutoff
        return _DIAGNOSIS_DEPTH

    # --- renderings ---------------------------------------------------------------------

    def to_dict(self, *, per_query: bool = True) -> dict[str, Any]:
        """``{"aggregate", "counts", "per_query"?}`` as plain Python values."""
        payload: dict[str, Any] = {
            "aggregate": dict(self.aggregate),
            "counts": self.counts.to_dict(),
        }
        if self.missing_query_ids:
            payload["missing_query_ids"] = list(self.missing_query_ids)
        if self.unjudged_query_ids:
            payload["unjudged_query_ids"] = list(self.unjudged_query_ids)
        if self.retrieval_errors:
            payload["retrieval_errors"] = dict(self.retrieval_errors)
        if per_query:
            payload["per_query"] = self.per_query
        return payload

    def to_json(
        self, path: str | None = None, *, per_query: bool = True, indent: int | None = None
    ) -> str:
        """JSON with ``aggregate``, ``counts`` and (by default) ``per_query``; NA is null."""
        text = json.dumps(self.to_dict(per_query=per_query), indent=indent, ensure_ascii=False)
        if path is not None:
            write_text(path, text)
        return text

    def to_pandas(self, *, aggregate: bool = False) -> pd.DataFrame:
        """Per-query DataFrame (index ``query_id``, one column per metric, NaN for NA);
        with ``aggregate=True`` a one-row frame of the means."""
        from ragmetrics._util.optional import import_pandas

        pandas = import_pandas()
        if aggregate:
            return cast(
                "pd.DataFrame", pandas.DataFrame([self.aggregate], index=[self.run_name or "run"])
            )
        self._require_rows()
        frame: pd.DataFrame = pandas.DataFrame(
            self.values, index=list(self.query_ids), columns=list(self.metrics)
        )
        frame.index.name = "query_id"
        return frame

    def _require_rows(self) -> None:
        """Refuse per-query access to a streamed result that kept none."""
        if not self.query_ids and self.counts.queries:
            raise RagMetricsError(
                "This result holds the aggregate and counts only: it was streamed without "
                "per-query values. Pass per_query=True to evaluate_stream to keep them."
            )

    def _rows(self, per_query: bool) -> tuple[list[str], list[list[Any]]]:
        if per_query:
            self._require_rows()
            headers = ["query_id", *self.metrics]
            values = _with_none(self.values)
            return headers, [[q, *row] for q, row in zip(self.query_ids, values, strict=True)]
        headers = ["metric", "mean", "queries", "NA"]
        rows = [
            [m, self.aggregate[m], self.counts.valid[m], self.counts.na[m]] for m in self.metrics
        ]
        return headers, rows

    def to_markdown(self, *, per_query: bool = False, digits: int = 4, diagnostics: int = 0) -> str:
        """A markdown table of the means (or of every query), with a note of what was left
        out; ``diagnostics=n`` appends the diagnosis of the n worst queries (by the first set
        metric, else the first metric)."""
        headers, rows = self._rows(per_query)
        table = markdown_table(headers, rows, digits=digits)
        parts = [table, self._note()]
        if diagnostics:
            sets = [m.label for m in self._metric_specs if m.spec.family == "set"]
            label = sets[0] if sets else self.metrics[0]
            parts.append(f"### The {diagnostics} worst queries by {label}")
            parts += [self.diagnose(q).to_markdown() for q in self.worst(label, diagnostics)]
        return "\n\n".join(parts)

    def to_table(self, *, per_query: bool = False, digits: int = 4) -> str:
        """A plain-text table for terminals."""
        headers, rows = self._rows(per_query)
        note = self._note()
        return text_table(headers, rows, digits=digits) + (f"\n\n{note}" if note else "")

    def to_csv(self, *, per_query: bool = False) -> str:
        headers, rows = self._rows(per_query)
        return csv_table(headers, rows)

    def _note(self) -> str:
        c = self.counts
        parts = [f"{c.queries} queries counted"]
        if c.missing_from_run:
            verb = "scored 0" if self.settings.get("missing") == "zero" else "left out"
            parts.append(f"{c.missing_from_run} judged but missing from the run ({verb})")
        if c.not_judged:
            parts.append(f"{c.not_judged} in the run but not judged (left out)")
        if c.empty_rankings:
            parts.append(f"{c.empty_rankings} with an empty ranking")
        if c.repeated_ids_dropped:
            parts.append(f"{c.repeated_ids_dropped} repeated doc ids dropped")
        if c.unmatched_chunks:
            parts.append(f"{c.unmatched_chunks} retrieved chunks matched no original")
        if c.failed_retrievals:
            parts.append(f"{c.failed_retrievals} retrievals failed (scored as empty rankings)")
        return "; ".join(parts) + "."

    def _repr_html_(self) -> str:
        headers, rows = self._rows(False)
        caption = f"ragmetrics: {self.run_name}" if self.run_name else "ragmetrics evaluation"
        return html_table(headers, rows, caption=caption) + f"<p><small>{self._note()}</small></p>"

    def __repr__(self) -> str:
        means = ", ".join(
            f"{m}={'NA' if v is None else format(v, '.4f')}" for m, v in self.aggregate.items()
        )
        return f"EvaluationResult({means}; {self._note()[:-1]})"

    def __str__(self) -> str:
        return self.to_table()


# The keywords of evaluate() that set a metric parameter for every metric that has it.
PARAM_KEYWORDS: dict[str, Param] = {
    p.keyword: p for p in (REL, MAX_GRADE, ALPHA, CAP4, CAP3) if p.keyword is not None
}
# Every keyword evaluate() takes besides the inputs (compare() passes these through).
EVALUATE_KEYWORDS = (
    *PARAM_KEYWORDS,
    "missing",
    "pool",
    "grade_map",
    "score_precision",
    "progress",
)


@dataclass(frozen=True)
class Settings:
    """The keywords of one evaluation, validated.

    Attributes:
        params: the metric-parameter keywords given (by keyword name; None where not given).
        relevance_threshold: the threshold in force for metrics whose name does not set one.
        missing, grade_map, pool, score_precision, progress: as given to :func:`evaluate`.
    """

    params: dict[str, Any]
    relevance_threshold: int
    missing: MissingPolicy
    grade_map: dict[int, int] | None
    pool: Run | None
    score_precision: ScorePrecision
    progress: bool | None

    def to_dict(self) -> dict[str, Any]:
        """Plain values for ``EvaluationResult.settings``."""
        return {
            "relevance_threshold": self.relevance_threshold,
            "missing": self.missing,
            **{  # the value in force: given, else the declared default
                k: PARAM_KEYWORDS[k].default if v is None else v
                for k, v in self.params.items()
                if k != "relevance_threshold"
            },
            "grade_map": self.grade_map,
            "pool": None if self.pool is None else (self.pool.name or "given"),
            "score_precision": self.score_precision,
        }


def check_settings(**keywords: Any) -> Settings:
    """Validate the keywords of :func:`evaluate` (all of them, whether or not a metric uses
    them); raises :class:`~ragmetrics.errors.InvalidParameterError` naming the valid range."""
    unknown = [k for k in keywords if k not in EVALUATE_KEYWORDS]
    if unknown:
        raise InvalidParameterError(
            f"Unknown keyword(s) {', '.join(map(repr, unknown))}; the keywords of evaluate() "
            f"are {', '.join(EVALUATE_KEYWORDS)}."
        )
    params = {
        name: param.check(keywords.get(name)) if keywords.get(name) is not None else None
        for name, param in PARAM_KEYWORDS.items()
    }
    missing = keywords.get("missing", "zero")
    if missing not in _MISSING_POLICIES:
        raise InvalidParameterError(
            f"missing must be one of 'zero', 'skip' or 'error'; got {missing!r}."
        )
    progress = keywords.get("progress")
    if progress is not None and not isinstance(progress, bool):
        raise InvalidParameterError(
            f"progress must be True, False or None (automatic); got {progress!r}."
        )
    pool = keywords.get("pool")
    threshold = params["relevance_threshold"]
    return Settings(
        params=params,
        relevance_threshold=REL.default if threshold is None else threshold,
        missing=missing,
        grade_map=check_grade_map(keywords.get("grade_map")),
        pool=None if pool is None else as_run(pool, "pool"),
        score_precision=check_score_precision(keywords.get("score_precision", "float64")),
        progress=progress,
    )


def check_grade_map(grade_map: Any) -> dict[int, int] | None:
    """A copy of ``grade_map`` with int keys and utility grades 1..5 as values."""
    if grade_map is None:
        return None
    if not isinstance(grade_map, Mapping) or not grade_map:
        raise InvalidParameterError(
            f"grade_map must be a non-empty mapping of grade to utility grade 1..5, such as "
            f"{{0: 1, 1: 3, 2: 4, 3: 5}}; got {grade_map!r}."
        )
    checked: dict[int, int] = {}
    for key, value in grade_map.items():
        raw = coerce(key, int)
        mapped = coerce(value, int)
        if raw is None or mapped is None or not 1 <= mapped <= 5:
            raise InvalidParameterError(
                f"grade_map must map integer grades to utility grades 1..5; the entry "
                f"{key!r}: {value!r} is not one (e.g. {{0: 1, 1: 3, 2: 4, 3: 5}})."
            )
        checked[raw] = mapped
    return checked


def evaluate(
    qrels: Qrels | Mapping[str, Mapping[str, int]],
    run: Run | Mapping[str, Any],
    metrics: str | Sequence[str],
    *,
    relevance_threshold: int | None = None,
    missing: MissingPolicy = "zero",
    pool: Run | Mapping[str, Any] | None = None,
    err_max_grade: float | None = None,
    alpha: float | None = None,
    cap4: float | None = None,
    cap3: float | None = None,
    grade_map: Mapping[int, int] | None = None,
    score_precision: ScorePrecision = "float64",
    progress: bool | None = None,
) -> EvaluationResult:
    """Evaluate a run against qrels on several metrics at once.

    Args:
        qrels: the judgments (a :class:`Qrels`, or a ``{qid: {doc: grade}}`` dict).
        run: the rankings (a :class:`Run`, or a dict of scores or of ranked lists).
        metrics: names such as ``"ndcg@10"``, ``"P_5"``, ``"P(rel=2)@5"`` or ``"ra_nwg@5"``;
            results are keyed by the name as written.
        relevance_threshold: the lowest grade that counts as relevant (inclusive; default 1)
            for every metric whose name does not set ``rel``.
        missing: what a judged query with no ranking scores: ``"zero"`` (counted, every
            metric 0), ``"skip"`` (left out, as trec_eval) or ``"error"``.
        pool: for PROC@k and %PROC@k, the candidate run the ranking was selected from;
            by default each query's full ranking.
        err_max_grade: fixes ``max_grade`` of ERR (default: the highest grade judged).
        alpha, cap4, cap3: the rarity weighting of the RAG set metrics (defaults 1, 1, 0.25;
            a metric name may set its own, ``ra_nwg(alpha=0.5)@5``).
        grade_map: raw grade -> utility grade 1..5, for the RAG set metrics.
        score_precision: ``"float64"`` compares scores as doubles (trec_eval 10);
            ``"float32"`` rounds them to 32-bit floats first (trec_eval <= 9, pytrec_eval).
        progress: a progress bar while judging; by default shown from 200,000 queries on.

    Returns:
        An :class:`EvaluationResult` with ``aggregate``, ``per_query`` and ``counts``.

    Raises:
        UnknownMetricError: a metric name is not registered.
        InvalidParameterError: a keyword, cutoff or parameter is out of range.
        GradeScaleError: a RAG set metric was asked for on qrels that are not utility
            grades 1..5 (the message proposes a ``grade_map``).
        MissingQueryError: ``missing="error"`` and a judged query has no ranking.
        RagMetricsError: empty qrels or run.

    Warns:
        IdMismatchWarning: the run and the qrels share no query id, or no retrieved doc is
            judged; UndefinedMetricWarning: the qrels judge no document.

    Example:
        >>> qrels = {"q1": {"a": 1, "b": 1}}
        >>> result = evaluate(qrels, {"q1": {"a": 0.9, "x": 0.5}}, ["P@2", "mrr"])
        >>> result.aggregate
        {'P@2': 0.5, 'mrr': 1.0}
    """
    settings = check_settings(
        relevance_threshold=relevance_threshold,
        err_max_grade=err_max_grade,
        alpha=alpha,
        cap4=cap4,
        cap3=cap3,
        missing=missing,
        pool=pool,
        grade_map=grade_map,
        score_precision=score_precision,
        progress=progress,
    )
    return evaluate_checked(qrels, run, resolve_metrics(metrics, settings), settings)


def resolve_metrics(metrics: str | Sequence[str], settings: Settings) -> list[Metric]:
    """Parse metric names and fill each parameter the name leaves out from the keywords of
    ``settings``, else from its declared default."""
    return [m.resolve(settings.params) for m in parse_metrics(_names(metrics))]


@without_gc
def evaluate_checked(
    qrels: Qrels | Mapping[str, Mapping[str, int]],
    run: Run | Mapping[str, Any],
    parsed: list[Metric],
    settings: Settings,
    *,
    id_hint: str = "",
) -> EvaluationResult:
    """:func:`evaluate` with the metrics and keywords already checked (adapters check them
    before retrieving); ``id_hint`` ends the warning given when no retrieved doc is judged
    (an adapter names its own fix: ``id_key=...``, ``id_field="ref_doc_id"``)."""
    qrels, run = _checked_inputs(qrels, run, parsed, settings)
    selected = select_queries(qrels, run, settings.missing)
    progress = _show_progress(settings.progress, len(selected.query_ids))
    judged, values = score_queries(
        qrels, run, selected.query_ids, selected.run_rows, parsed, settings, progress=progress
    )
    _warn_if_ids_do_not_meet(qrels, run, judged, selected, settings, id_hint)
    return EvaluationResult(
        metrics=parsed,
        query_ids=tuple(selected.query_ids),
        values=values,
        counts=count(selected, run, judged, parsed, values),
        missing_query_ids=selected.missing_ids,
        unjudged_query_ids=selected.unjudged_ids,
        settings=settings.to_dict(),
        judged=judged,
        run_name=run.name,
    )


def score_queries(
    qrels: Qrels,
    run: Run,
    query_ids: list[str],
    run_rows: np.ndarray,
    parsed: Sequence[Metric],
    settings: Settings,
    *,
    progress: bool = False,
) -> tuple[JudgedRun, np.ndarray]:
    """The kernel every entry point shares: judge ``query_ids`` (each at its ``run_rows``
    row of ``run``, -1 for none) and compute every metric; values are queries x metrics."""
    judged = locate_judged(
        qrels,
        run,
        query_ids,
        depth=depth_needed(parsed),
        grade_map=settings.grade_map,
        pool=settings.pool,
        score_precision=settings.score_precision,
        progress=progress,
        run_rows=run_rows,
    )
    values = np.empty((len(query_ids), len(parsed)))
    for column, metric in enumerate(parsed):
        values[:, column] = metric.compute(judged)
    return judged, values


def _show_progress(progress: bool | None, n_queries: int) -> bool:
    """A progress bar when asked, or by default from 200,000 queries on."""
    return progress if progress is not None else n_queries >= 200_000


def _checked_inputs(
    qrels: Any, run: Any, metrics: list[Metric], settings: Settings
) -> tuple[Qrels, Run]:
    """The qrels and the run as objects, refused when empty or (for the RAG set metrics)
    not on the utility scale."""
    qrels = as_qrels(qrels)
    run = as_run(run)
    if len(qrels) == 0:
        raise RagMetricsError("The qrels are empty: there is nothing to evaluate against.")
    if len(run) == 0:
        raise RagMetricsError(
            "The run is empty: it has no query. Check that the retriever ran and that the "
            "file or dict is the one you meant."
        )
    utility = [m.label for m in metrics if m.spec.scale is Scale.UTILITY]
    if utility:
        check_utility_scale(qrels.grade_values(), settings.grade_map, utility)
    return qrels, run


@dataclass(frozen=True)
class Selection:
    """Which queries an evaluation counts, and which it leaves out.

    Attributes:
        judged_ids: the qrels' queries with at least one judgment (trec_eval never sees a
            query whose judgments are empty).
        query_ids: the queries counted: ``judged_ids``, less the missing with ``"skip"``.
        run_rows: each counted query's row in the run, -1 when the run lacks it.
        missing_ids: judged queries the run has no ranking for.
        unjudged_ids: queries of the run with no judgment (always left out).
    """

    judged_ids: list[str]
    query_ids: list[str]
    run_rows: np.ndarray
    missing_ids: tuple[str, ...]
    unjudged_ids: tuple[str, ...]


def select_queries(qrels: Qrels, run: Run, missing: MissingPolicy) -> Selection:
    """The queries to count under the ``missing`` policy (see :class:`Selection`)."""
    judgments = store_of(qrels)
    all_ids, n_judged = judgments.query_ids, judgments.lengths
    judged_ids = list(all_ids) if n_judged.all() else list(compress(all_ids, n_judged.tolist()))
    run_rows = store_of(run).rows(judged_ids)
    in_run = run_rows >= 0
    missing_ids = tuple(compress(judged_ids, (~in_run).tolist()))
    ranked_and_judged = np.zeros(len(run), dtype=bool)
    ranked_and_judged[run_rows[in_run]] = True
    unjudged_ids = tuple(compress(run.query_ids, (~ranked_and_judged).tolist()))
    if missing == "error" and missing_ids:
        raise missing_error(missing_ids)
    query_ids = judged_ids
    if missing == "skip" and missing_ids:
        query_ids, run_rows = list(compress(judged_ids, in_run.tolist())), run_rows[in_run]
    return Selection(judged_ids, query_ids, run_rows, missing_ids, unjudged_ids)


def missing_error(missing_ids: Sequence[str]) -> MissingQueryError:
    """The error of ``missing="error"`` when judged queries have no ranking."""
    shown = ", ".join(map(repr, missing_ids[:5])) + (" ..." if len(missing_ids) > 5 else "")
    return MissingQueryError(
        f"{len(missing_ids)} judged queries have no ranking in the run ({shown}). "
        f"Pass missing='zero' to score them 0 or missing='skip' to leave them out."
    )


def count(
    selected: Selection, run: Run, judged: JudgedRun, metrics: list[Metric], values: np.ndarray
) -> Counts:
    """The :class:`Counts` of an evaluation: queries counted, left out, empty or NA."""
    labels = [m.label for m in metrics]
    na = np.isnan(values).sum(axis=0).tolist()
    n_counted = len(selected.query_ids)
    return Counts(
        queries=n_counted,
        judged=len(selected.judged_ids),
        in_run=len(run),
        missing_from_run=len(selected.missing_ids),
        not_judged=len(selected.unjudged_ids),
        empty_rankings=int(np.count_nonzero(judged.in_run & (judged.lengths == 0))),
        repeated_ids_dropped=sum(run.duplicates.values()),
        valid={label: n_counted - n for label, n in zip(labels, na, strict=True)},
        na=dict(zip(labels, na, strict=True)),
    )


def _names(metrics: Any) -> Any:
    """``metrics`` as parse_metrics takes it (a name, or a list of names)."""
    if (
        isinstance(metrics, str)
        or not isinstance(metrics, Iterable)
        or isinstance(metrics, Mapping)
    ):
        return metrics
    return list(metrics)


def _warn_if_ids_do_not_meet(
    qrels: Qrels,
    run: Run,
    judged: JudgedRun,
    selected: Selection,
    settings: Settings,
    id_hint: str = "",
) -> None:
    """One warning when the numbers are zeros (or nothing) by construction (see
    :func:`warn_if_ids_never_meet`)."""
    ranked = np.flatnonzero(judged.lengths)
    example = None
    if len(ranked) and not judged.n_located:  # (a ranking is sorted only when needed)
        query_id = judged.query_ids[int(ranked[0])]
        example = (query_id, run.ranking(query_id)[:50])
    warn_if_ids_never_meet(
        qrels,
        judged_ids=selected.judged_ids,
        run_ids=run.query_ids,
        n_missing=len(selected.missing_ids),
        missing=settings.missing,
        n_located=judged.n_located,
        n_ranked=len(ranked),
        example=example,
        id_hint=id_hint,
    )


def warn_if_ids_never_meet(
    qrels: Qrels,
    *,
    judged_ids: Sequence[str],
    run_ids: Sequence[str],
    n_missing: int,
    missing: MissingPolicy,
    n_located: int,
    n_ranked: int,
    example: tuple[str, Sequence[str]] | None,
    id_hint: str = "",
) -> None:
    """One warning when the numbers are zeros (or nothing) by construction: the qrels judge
    no document, the run and the qrels share no query id, or no retrieved doc is judged.

    ``run_ids``: (some of) the run's query ids; ``n_located``: retrieved docs that are
    judged; ``n_ranked``: counted queries with a ranking; ``example``: one of them and the
    start of its ranking."""
    if not judged_ids:
        message = (
            f"The qrels judge no document: all {len(qrels)} of their queries have empty "
            f"judgments, so no query is counted. Check that the qrels were built from the "
            f"right data (e.g. that relevant ids were collected)."
        )
        warn(message, UndefinedMetricWarning)
        return
    if n_missing == len(judged_ids):
        outcome = (
            "every judged query scores 0 (missing='zero')"
            if missing == "zero"
            else "no query is counted"
        )
        message = (
            f"The run and the qrels share no query id: {outcome}. The run's ids look like "
            f"{sample_ids(run_ids)}, the qrels' like {sample_ids(judged_ids)}; use the same "
            f"ids in both (strings, same spelling)."
        )
        warn(message + id_hint, IdMismatchWarning)
        return
    if n_located or example is None:
        return
    query_id, retrieved = example
    judged_docs = list(qrels[query_id])
    # one query that missed is routine; ids of another form (uuids, paths) are not
    if n_ranked == 1 and ids_look_alike(retrieved, judged_docs):
        return
    message = (
        f"No retrieved doc is judged in any query: every metric is 0. The ids may be in "
        f"different forms: query {query_id!r} retrieved {sample_ids(retrieved)}, its judged "
        f"docs are {sample_ids(judged_docs)}. Map the retriever's ids (uuids, paths, chunk ids) "
        f"to the ids of the qrels."
    )
    warn(message + id_hint, IdMismatchWarning)


def ids_look_alike(some: Sequence[str], others: Sequence[str]) -> bool:
    """True when two lists of ids share a shape: each run of letters and digits read as
    ``a``, punctuation kept (``doc12`` and ``d7`` are ``a``; a uuid is ``a-a-a-a-a``, a path
    ``/a/a.a``). Ids of different shapes (uuids against doc names) cannot be the same ids."""
    return bool(_shapes(some) & _shapes(others))


def _shapes(ids: Sequence[str]) -> set[str]:
    return {_WORD.sub("a", i) for i in list(ids)[:50]}


_WORD = re.compile(r"[^\W_]+")


def sample_ids(ids: Sequence[str], n: int = 3) -> str:
    shown = ", ".join(map(repr, list(ids[:n])))
    return shown + (", ..." if len(ids) > n else "")


def _with_none(values: np.ndarray) -> list[list[float | None]]:
    """Rows of ``values`` as lists, with None in place of NaN."""
    rows: list[list[float | None]] = values.tolist()
    for row in rows:
        for i, value in enumerate(row):
            if value != value:
                row[i] = None
    return rows


def depth_needed(metrics: Sequence[Metric]) -> int | None:
    """How deep each ranking must be judged; None for the whole ranking."""
    depth = 0
    for metric in metrics:
        if metric.cutoff is None or metric.spec.cutoff is Cutoff.NONE:
            return None
        depth = max(depth, metric.cutoff)
    return depth


def as_qrels(value: Any) -> Qrels:
    """Accept a :class:`Qrels` or a ``{qid: {doc: grade}}`` mapping."""
    if isinstance(value, Qrels):
        return value
    if isinstance(value, Mapping):
        return Qrels.from_dict(value)
    raise InputFormatError(
        "qrels must be a Qrels or a dict {query_id: {doc_id: grade}}; "
        f"got {type(value).__name__}. "
        f"Read files with Qrels.from_trec or Qrels.from_json."
    )


def as_run(value: Any, what: str = "run") -> Run:
    """Accept a :class:`Run`, a ``{qid: {doc: score}}`` or a ``{qid: [doc, ...]}`` mapping."""
    if isinstance(value, Run):
        return value
    if isinstance(value, Mapping):
        lists = [v for v in value.values() if isinstance(v, (list, tuple))]
        if lists and len(lists) == len(value):
            return Run.from_lists(value)
        return Run.from_dict(value)
    raise InputFormatError(
        f"{what} must be a Run or a dict of {{query_id: {{doc_id: score}}}} or "
        "{query_id: [doc_id, ...]}; "
        f"got {type(value).__name__}. Read files with Run.from_trec or Run.from_json."
    )
