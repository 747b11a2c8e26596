"""The result of an evaluation: its :class:`Counts` and the :class:`EvaluationResult`, a
value whose output formats (text, markdown, LaTeX, CSV, HTML, JSON) come from
:mod:`ragmetrics.output`."""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ragmetrics.data._precision import ScorePrecision
from ragmetrics.data._qrels import Qrels
from ragmetrics.data._run import Run
from ragmetrics.errors import MissingKeyError, RagMetricsError
from ragmetrics.formats._atomic import write_text
from ragmetrics.metrics import Metric
from ragmetrics.metrics.registry import ALPHA, CAP3, CAP4, Scale, Tally
from ragmetrics.output._renderers import render

if TYPE_CHECKING:
    import pandas as pd

    from ragmetrics.analysis._ppi_math import PPIEstimate
    from ragmetrics.analysis._segments import SegmentTable
    from ragmetrics.engine._diagnostics import Diagnosis

__all__ = ["Counts", "EvaluationResult", "Inputs"]

_DIAGNOSIS_DEPTH = 10  # the top k a diagnosis reads when no metric names a cutoff


@dataclass(frozen=True)
class Inputs:
    """What a result keeps to diagnose a query later: the inputs as given (the caller holds
    them anyway), not the arrays judged from them."""

    qrels: Qrels
    run: Run
    pool: Run | None
    grade_map: Mapping[int, int] | None
    score_precision: ScorePrecision


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
        segments: each metric per segment of the queries, when ``evaluate`` was given
            ``segments=`` (else None).
        ppi: prediction-powered estimates of each metric, when ``evaluate`` was given
            ``human_qrels=`` (else None).
        latencies: query id -> seconds its retrieval took (given by the adapters, which time
            every retrieval; empty otherwise). :meth:`latency` summarizes them.

    A result is a value: complete when constructed, never changed after. What is known only
    later (the adapters' timings, the analysis ``evaluate`` composes) makes a new result
    through :meth:`replace`.
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
        inputs: Inputs | None = None,
        run_name: str | None = None,
        tallies: Sequence[Tally] | None = None,
        retrieval_errors: Mapping[str, str] | None = None,
        latencies: Mapping[str, float] | None = None,
        segments: SegmentTable | None = None,
        ppi: Sequence[PPIEstimate] | None = None,
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
        self.retrieval_errors: dict[str, str] = dict(retrieval_errors or {})
        self.latencies: dict[str, float] = dict(latencies or {})  # seconds per query
        self.segments: SegmentTable | None = segments
        self.ppi: list[PPIEstimate] | None = None if ppi is None else list(ppi)
        self._inputs = inputs
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

    def replace(
        self,
        *,
        counts: Counts | None = None,
        settings: Mapping[str, Any] | None = None,
        retrieval_errors: Mapping[str, str] | None = None,
        latencies: Mapping[str, float] | None = None,
        segments: SegmentTable | None = None,
        ppi: Sequence[PPIEstimate] | None = None,
    ) -> EvaluationResult:
        """A new result with the same values and the given parts replaced (None keeps a
        part): what the adapters learn while retrieving and what ``evaluate`` adds."""
        new = copy.copy(self)
        if counts is not None:
            new.counts = counts
        if settings is not None:
            new.settings = dict(settings)
        if retrieval_errors is not None:
            new.retrieval_errors = dict(retrieval_errors)
        if latencies is not None:
            new.latencies = dict(latencies)
        if segments is not None:
            new.segments = segments
        if ppi is not None:
            new.ppi = list(ppi)
        return new

    @property
    def evaluated_run(self) -> Run | None:
        """The run this result scored (None for a streamed evaluation, which keeps none)."""
        return None if self._inputs is None else self._inputs.run

    @property
    def evaluated_qrels(self) -> Qrels | None:
        """The qrels this result was scored against (None for a streamed evaluation)."""
        return None if self._inputs is None else self._inputs.qrels

    def latency(self) -> dict[str, float] | None:
        """``{"n", "p50", "p95", "mean"}`` of the retrieval times in seconds (percentiles
        interpolated linearly, numpy's default), or None when nothing was timed."""
        if not self.latencies:
            return None
        seconds = np.fromiter(self.latencies.values(), dtype=np.float64)
        p50, p95 = np.percentile(seconds, [50.0, 95.0])
        return {
            "n": float(len(seconds)),
            "p50": float(p50),
            "p95": float(p95),
            "mean": float(seconds.mean()),
        }

    def diagnose(self, query_id: str, k: int | None = None) -> Diagnosis:
        """What the top-k set of one query holds and misses (see :func:`diagnose`).

        ``k`` defaults to the cutoff of the first set metric evaluated (else of the first
        metric with a cutoff, else 10). The grades are read as utility grades (missed: grade >= 4;
        harmful: grade <= 2) when a RAG set metric on that scale was evaluated, else by the
        relevance threshold, as the classic metrics read them.
        """
        from ragmetrics.engine._diagnostics import diagnose  # here: rarely used

        if self._inputs is None:
            raise RagMetricsError(
                "This result keeps no inputs to diagnose (a streamed evaluation reads them "
                "once); evaluate the query in memory with rm.evaluate to diagnose it."
            )
        cutoff = k if k is not None else self._default_cutoff()
        inputs = self._inputs
        utility = [m for m in self._metric_specs if m.spec.scale is Scale.UTILITY]
        weighting = next(
            (m.params for m in utility if "alpha" in m.params),
            {p.name: p.default for p in (ALPHA, CAP4, CAP3)},
        )
        return diagnose(
            inputs.qrels,
            inputs.run,
            query_id,
            cutoff,
            pool=inputs.pool,
            grade_map=inputs.grade_map,
            rarity_alpha=weighting["alpha"],
            cap4=weighting["cap4"],
            cap3=weighting["cap3"],
            relevance_threshold=self.settings["relevance_threshold"],
            utility=bool(utility),
            score_precision=inputs.score_precision,
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
        if self.latencies:
            payload["latency_seconds"] = self.latency()
        if per_query:
            payload["per_query"] = self.per_query
        return payload

    rendered_as = "result"  # how the output formats know it (ragmetrics.output)

    def render(self, fmt: str = "text", **options: Any) -> str:
        """This result in an output format: ``"text"``, ``"markdown"``, ``"latex"``,
        ``"csv"``, ``"html"``, ``"json"`` or any registered with
        :func:`ragmetrics.output.register_renderer`; ``options`` are the format's
        (``per_query``, ``digits``; ``caption`` and ``label`` for LaTeX; ``indent`` for JSON)."""
        return render(self, fmt, **options)

    def to_json(
        self, path: str | None = None, *, per_query: bool = True, indent: int | None = None
    ) -> str:
        """JSON with ``aggregate``, ``counts`` and (by default) ``per_query``; NA is null."""
        text = self.render("json", per_query=per_query, indent=indent)
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

    def table_rows(self, per_query: bool = False) -> tuple[list[str], list[list[Any]]]:
        """Headers and rows: each metric's mean, queries defined and NA, or with
        ``per_query`` each query's values (None for NA). What every format renders."""
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
        parts = [self.render("markdown", per_query=per_query, digits=digits)]
        if diagnostics:
            sets = [m.label for m in self._metric_specs if m.spec.family == "set"]
            label = sets[0] if sets else self.metrics[0]
            parts.append(f"### The {diagnostics} worst queries by {label}")
            parts += [self.diagnose(q).to_markdown() for q in self.worst(label, diagnostics)]
        return "\n\n".join(parts)

    def to_table(self, *, per_query: bool = False, digits: int = 4) -> str:
        """A plain-text table for terminals."""
        return self.render("text", per_query=per_query, digits=digits)

    def to_latex(
        self,
        *,
        per_query: bool = False,
        digits: int = 4,
        caption: str | None = None,
        label: str | None = None,
    ) -> str:
        """A LaTeX table (booktabs) of the means, or of every query with ``per_query``."""
        return self.render(
            "latex", per_query=per_query, digits=digits, caption=caption, label=label
        )

    def to_csv(self, *, per_query: bool = False) -> str:
        return self.render("csv", per_query=per_query)

    def note(self) -> str:
        """What was counted and what was left out, in a sentence (under every table)."""
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
        return self.render("html")

    def __repr__(self) -> str:
        means = ", ".join(
            f"{m}={'NA' if v is None else format(v, '.4f')}" for m, v in self.aggregate.items()
        )
        return f"EvaluationResult({means}; {self.note()[:-1]})"

    def __str__(self) -> str:
        return self.to_table()


# The keywords of evaluate() that set a metric parameter for every metric that has it.
def _with_none(values: np.ndarray) -> list[list[float | None]]:
    """Rows of ``values`` as lists, with None in place of NaN."""
    rows: list[list[float | None]] = values.tolist()
    for row in rows:
        for i, value in enumerate(row):
            if value != value:
                row[i] = None
    return rows
