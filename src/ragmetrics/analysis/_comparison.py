"""``compare()``: several runs on the same qrels, with paired significance tests."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmetrics._util.progress import progress_bar
from ragmetrics._util.warn import warn
from ragmetrics.analysis._ppi_math import PPIEstimate, ppi_of_pairs, ppi_of_result
from ragmetrics.analysis._segments import check_segments
from ragmetrics.analysis._ties import MAX_DRAWS
from ragmetrics.analysis.stats import (
    PairedTestSpec,
    adjust,
    bootstrap_cis,
    correction_spec,
    paired_differences,
    paired_interval,
    paired_test,
    standardized_effect,
)
from ragmetrics.analysis.systems import letter_groups
from ragmetrics.data._qrels import Qrels
from ragmetrics.data._run import Run
from ragmetrics.engine._evaluation import evaluate
from ragmetrics.engine._result import EvaluationResult
from ragmetrics.engine._settings import MissingPolicy, as_qrels, as_run, check_settings
from ragmetrics.errors import InvalidParameterError, MissingKeyError, QueryMismatchWarning
from ragmetrics.formats._atomic import write_text
from ragmetrics.metrics import Metric, Param
from ragmetrics.output._renderers import render
from ragmetrics.output._tables import (
    escape_markdown,
    format_cell,
    interval_text,
    markdown_table,
    visible,
)

if TYPE_CHECKING:
    import pandas as pd

    from ragmetrics.analysis._segments import SegmentTable

__all__ = [
    "PERMUTATIONS",
    "RESAMPLES",
    "SEED",
    "SIGNIFICANCE",
    "Comparison",
    "PairedTest",
    "TestName",
    "compare",
    "format_p",
]

TestName = str  # the name of a registered paired test (analysis.stats.paired_tests)

# compare()'s own keywords, checked as metric parameters are
SIGNIFICANCE = Param(
    "alpha", float, 0.05, "the significance level", 0, 1, low_open=True, high_open=True
)
PERMUTATIONS = Param(
    "n_permutations", int, 10_000, "permutations or resamples of a test", 1, MAX_DRAWS
)
RESAMPLES = Param("n_bootstrap", int, 10_000, "resamples of a run's mean interval", 1, MAX_DRAWS)
SEED = Param("seed", int, 0, "the random seed", 0)
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True)
class PairedTest:
    """One paired comparison of run ``b`` against run ``a`` on one metric.

    Attributes:
        diff: mean of ``b - a`` over the queries where both are defined (``n`` of them).
        p_value, p_adjusted: the test's two-sided p-value, and after the correction.
        significant: ``p_adjusted < alpha``.
        effect_size: paired Cohen's d of ``b - a``, signed so that a positive value means
            ``b`` is better (for a lower-is-better metric such as harm@k, ``b`` below ``a``).
        ci_low, ci_high: bootstrap confidence interval of ``diff``.
        wins, ties, losses: queries where ``b`` is better than, equal to, worse than ``a``.
        higher_is_better: the metric's direction, which the three above follow.
    """

    metric: str
    a: str
    b: str
    mean_a: float
    mean_b: float
    diff: float
    p_value: float
    p_adjusted: float
    significant: bool
    effect_size: float
    ci_low: float
    ci_high: float
    wins: int
    ties: int
    losses: int
    n: int
    higher_is_better: bool = True

    @property
    def improved(self) -> bool:
        """True when ``b``'s mean is better than ``a``'s in the metric's direction."""
        return self.diff > 0 if self.higher_is_better else self.diff < 0


class Comparison:
    """Means, confidence intervals and paired tests of several runs.

    Attributes:
        runs: the run names, in the order given.
        metrics: the metric labels.
        results: run name -> :class:`EvaluationResult`.
        means: run name -> metric -> mean (None when NA for every query).
        intervals: run name -> metric -> bootstrap CI of the mean.
        tests: every :class:`PairedTest` (baseline vs each run, or all pairs).
        baseline: the baseline run, or None for all pairs.
        segments: each run per segment and each pair tested within each segment, when
            ``compare`` was given ``segments=`` (else None).
        ppi: prediction-powered estimates of each run's mean and each pair's difference,
            when ``compare`` was given ``human_qrels=`` (else None).
    """

    def __init__(
        self,
        *,
        results: dict[str, EvaluationResult],
        metrics: list[str],
        tests: list[PairedTest],
        intervals: dict[str, dict[str, tuple[float, float]]],
        baseline: str | None,
        settings: dict[str, Any],
        segments: SegmentTable | None = None,
        ppi: Sequence[PPIEstimate] | None = None,
    ) -> None:
        self.results = results
        self.runs = tuple(results)
        self.metrics = tuple(metrics)
        self.tests = tests
        self.intervals = intervals
        self.baseline = baseline
        self.settings = settings
        self.means = {name: dict(r.aggregate) for name, r in results.items()}
        self.segments = segments
        self.ppi = None if ppi is None else list(ppi)

    def test(self, metric: str, a: str, b: str) -> PairedTest:
        """The test of ``b`` against ``a`` on ``metric``."""
        for test in self.tests:
            if test.metric == metric and {test.a, test.b} == {a, b}:
                return test
        raise MissingKeyError(f"No test of {b!r} against {a!r} on {metric!r} in this comparison.")

    def metric(self, label: str) -> Metric:
        """The parsed metric compared under ``label`` (its spec holds the direction)."""
        return self.results[self.runs[0]].metric(label)

    def best(self, metric: str) -> str | None:
        """The run with the best mean on ``metric``: the highest, or the lowest for a metric
        where lower is better (``harm@k``, ``unjudged@k``)."""
        values = {r: v for r, v in ((r, self.means[r][metric]) for r in self.runs) if v is not None}
        if not values:
            return None
        pick = max if self.metric(metric).higher_is_better else min
        return pick(values, key=values.__getitem__)

    def by_segment(self, segments: Any) -> SegmentTable:
        """Each run per segment of the queries, and each pair tested within each segment
        with this comparison's test and correction: see :mod:`ragmetrics.analysis._segments`."""
        from ragmetrics.analysis._segments import segment_tests

        return segment_tests(self, segments)

    def per_query(self, metric: str) -> dict[str, np.ndarray]:
        """run name -> per-query values of ``metric`` on the shared queries (NaN for NA)."""
        return {name: r.column(metric) for name, r in self.results.items()}

    # --- renderings -----------------------------------------------------------------------

    def groups(self, metric: str) -> dict[str, str]:
        """Run -> letters on ``metric``: runs sharing a letter do not differ significantly
        (the compact letter display of the tests; ``a`` is the best run's group)."""
        significant = {(t.a, t.b) for t in self.tests if t.metric == metric and t.significant}
        means = [self.means[r][metric] for r in self.runs]
        return letter_groups(
            self.runs,
            [math.nan if m is None else m for m in means],
            lambda a, b: (a, b) in significant or (b, a) in significant,
            higher_is_better=self.metric(metric).higher_is_better,
        )

    def marks(self) -> dict[tuple[str, str], str]:
        marks: dict[tuple[str, str], str] = {}
        if paired_test(self.settings["test"]).family is not None:
            for metric in self.metrics:
                for run, letters in self.groups(metric).items():
                    marks[(run, metric)] = " " + letters
            return marks
        for t in self.tests:
            if not t.significant:
                continue
            if self.baseline is not None:
                symbol = "▲" if t.improved else "▼"
                marks[(t.b, t.metric)] = marks.get((t.b, t.metric), "") + symbol
            else:
                winner, loser = (t.b, t.a) if t.improved else (t.a, t.b)
                letter = _LETTERS[self.runs.index(loser) % 26]
                marks[(winner, t.metric)] = marks.get((winner, t.metric), "") + letter
        return marks

    def legend(self, *, bold: bool = True) -> str:
        spec = paired_test(self.settings["test"])
        correction = correction_spec(self.settings["correction"]).title
        where = f"{spec.title}, alpha = {self.settings['alpha']}, {correction} correction"
        if spec.family is not None:
            where = f"{spec.title} over all runs, alpha = {self.settings['alpha']}"
        lower = ", ".join(m for m in self.metrics if not self.metric(m).higher_is_better)
        if lower:
            where += f"; better is lower for {lower}"
        # bold: the legend of the markdown table, whose names are escaped as markdown
        name = escape_markdown if bold else visible
        if spec.family is not None:
            text = f"Runs sharing a letter do not differ significantly ({where})."
            return text + (" Bold: best in the column." if bold else "")
        if self.baseline is not None:
            text = (
                f"▲ / ▼: significantly better / worse than the baseline {name(self.baseline)} "
                f"({where})."
            )
            return text + (" Bold: best in the column." if bold else "")
        letters = ", ".join(f"{_LETTERS[i % 26]} = {name(r)}" for i, r in enumerate(self.runs))
        text = (
            f"A letter marks a run that is significantly better than that run ({letters}; {where})."
        )
        return text + (" Bold: best in the column." if bold else "")

    def verdict(self, *, markdown: bool = False) -> str:
        """The significant differences in plain words, or that there are none (run names
        escaped as markdown with ``markdown``, else with their control characters shown).

        Example: ``"hybrid is significantly better than bm25 on ndcg@10 (+0.042, p adj.
        0.003)."`` or ``"No run differs significantly from bm25 on any metric ..."``.
        """
        name = escape_markdown if markdown else visible
        found = []
        for t in self.tests:
            if not t.significant:
                continue
            better = t.diff > 0 if self.metric(t.metric).higher_is_better else t.diff < 0
            found.append(
                f"{name(t.b)} is significantly {'better' if better else 'worse'} than "
                f"{name(t.a)} on {name(t.metric)} ({t.diff:+.4f}, p adj. "
                f"{format_p(t.p_adjusted)})"
            )
        if found:
            return "; ".join(found) + "."
        against = f"from {name(self.baseline)}" if self.baseline is not None else "from another"
        queries = min((t.n for t in self.tests), default=0)
        return (
            f"No run differs significantly {against} on any metric "
            f"({self.settings['test']} test, "
            f"{correction_spec(self.settings['correction']).title} correction, "
            f"alpha {self.settings['alpha']}, {queries} queries): the differences seen here "
            f"could be chance."
        )

    def means_rows(self, bold: str = "") -> tuple[list[str], list[list[str]]]:
        """Headers and one row per run of its means as text, the best of each column
        between ``bold`` marks, each followed by its significance marks."""
        marks = self.marks()
        headers = ["run", *self.metrics]
        rows = []
        for name in self.runs:
            label = f"{name} (baseline)" if name == self.baseline else name
            row = [label]
            for metric in self.metrics:
                cell = format_cell(self.means[name][metric])
                if self.best(metric) == name and bold:
                    cell = f"{bold}{cell}{bold}"
                row.append(cell + marks.get((name, metric), ""))
            rows.append(row)
        return headers, rows

    rendered_as = "comparison"  # how the output formats know it (ragmetrics.output)

    def render(self, fmt: str = "text", **options: Any) -> str:
        """This comparison in an output format (``"text"``, ``"markdown"``, ``"latex"``,
        ``"csv"``, ``"html"``, ``"json"`` or a registered one: see
        :meth:`EvaluationResult.render`)."""
        return render(self, fmt, **options)

    def to_markdown(self) -> str:
        """The means table (best per column in bold, significance marks) and its legend."""
        return self.render("markdown")

    def to_latex(
        self, *, digits: int = 4, caption: str | None = None, label: str | None = None
    ) -> str:
        """The means table as LaTeX (``booktabs``; the marks need ``amssymb``): the best
        mean of each column in bold, significance marks as superscripts (triangles against
        the baseline, letters otherwise), the legend as the caption unless one is given."""
        return self.render("latex", digits=digits, caption=caption, label=label)

    def to_table(self) -> str:
        return self.render("text")

    def latency_rows(self) -> tuple[list[str], list[list[Any]]] | None:
        """Headers and one row per run of its retrieval times (p50, p95, mean, in ms, and how
        many were timed), beside quality; None when no run was timed (the adapters time
        every retrieval)."""
        summaries = {name: r.latency() for name, r in self.results.items()}
        if all(s is None for s in summaries.values()):
            return None
        rows: list[list[Any]] = []
        for name, summary in summaries.items():
            if summary is None:
                rows.append([name, 0, None, None, None])
            else:
                rows.append(
                    [
                        name,
                        int(summary["n"]),
                        round(1000 * summary["p50"], 1),
                        round(1000 * summary["p95"], 1),
                        round(1000 * summary["mean"], 1),
                    ]
                )
        return ["run", "timed", "p50 ms", "p95 ms", "mean ms"], rows

    def test_rows(self) -> tuple[list[str], list[list[Any]]]:
        """Headers and one row per paired test (``*`` marks a significant adjusted p)."""
        headers = [
            "metric",
            "a",
            "b",
            "n",
            "mean a",
            "mean b",
            "diff",
            f"{100 * (1 - self.settings['alpha']):g}% CI",
            "p",
            "p adj.",
            "effect d",
            "W/T/L",
        ]
        rows = [
            [
                t.metric,
                t.a,
                t.b,
                t.n,
                t.mean_a,
                t.mean_b,
                t.diff,
                interval_text(t.ci_low, t.ci_high),
                format_p(t.p_value),
                format_p(t.p_adjusted) + (" *" if t.significant else ""),
                t.effect_size,
                f"{t.wins}/{t.ties}/{t.losses}",
            ]
            for t in self.tests
        ]
        return headers, rows

    def tests_markdown(self) -> str:
        """Every paired test as a markdown table (``*``: significant after correction),
        followed by :meth:`tests_legend`."""
        headers, rows = self.test_rows()
        return f"{markdown_table(headers, rows, align_right_from=3)}\n\n{self.tests_legend()}"

    def tests_legend(self) -> str:
        """What the p-values, marks and intervals of the paired tests are, in words (markdown:
        ``*`` is escaped)."""
        settings = self.settings
        spec = paired_test(settings["test"])
        draws = (
            ""
            if spec.draws is None
            else f", {settings['n_permutations']:,} {spec.draws}, seed {settings['seed']}"
        )
        correction = settings["correction"] or "no"
        level = f"{100 * (1 - settings['alpha']):g}%"
        alpha = settings["alpha"]
        baseline = ", a being the baseline" if self.baseline is not None else ""
        return (
            f"p: the two-sided p-value of the {spec.title} on the per-query differences "
            f"(b - a{baseline}){draws}. p adj.: {correction} correction over the tests of each "
            f"metric; \\* marks p adj. < {alpha}. CI: the {level} confidence interval of the "
            f"mean difference made by inverting the same test, so it leaves out 0 exactly when "
            f"p < {alpha} (before the correction). An end written `0 (ties)` is exactly 0: "
            f"every query that differs differs the same way and the others tie, so the "
            f"interval reaches 0 and holds it, as p >= {alpha} says. effect d: the mean "
            f"difference over its standard deviation, positive when b is better. W/T/L: "
            f"queries where b is better, tied, worse."
        )

    def to_pandas(self) -> pd.DataFrame:
        """Means: one row per run, one column per metric."""
        from ragmetrics._util.optional import import_pandas

        frame: pd.DataFrame = import_pandas().DataFrame(self.means).T.loc[list(self.runs)]
        frame.index.name = "run"
        return frame

    def tests_to_pandas(self) -> pd.DataFrame:
        from ragmetrics._util.optional import import_pandas

        frame: pd.DataFrame = import_pandas().DataFrame([asdict(t) for t in self.tests])
        return frame

    def to_dict(self) -> dict[str, Any]:
        return {
            "runs": list(self.runs),
            "metrics": list(self.metrics),
            "baseline": self.baseline,
            "settings": self.settings,
            "means": self.means,
            "intervals": {
                r: {m: list(ci) for m, ci in v.items()} for r, v in self.intervals.items()
            },
            "tests": [_jsonable(asdict(t)) for t in self.tests],
            "counts": {name: r.counts.to_dict() for name, r in self.results.items()},
        }

    def to_json(self, path: str | None = None, *, indent: int | None = None) -> str:
        text = self.render("json", indent=indent)
        if path is not None:
            write_text(path, text)
        return text

    def _repr_html_(self) -> str:
        return self.render("html")

    def __repr__(self) -> str:
        shape = f"{len(self.runs)} runs x {len(self.metrics)} metrics"
        return f"Comparison({shape}, {len(self.tests)} tests)"

    def __str__(self) -> str:
        return self.to_table()


def _jsonable(row: dict[str, Any]) -> dict[str, Any]:
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}


def format_p(p: float) -> str:
    """A p-value as reports print it: three significant digits, ``< 0.0001`` below that.

    Example:
        >>> [format_p(p) for p in (1.0, 0.345, 0.0007999, 0.00009999, float("nan"))]
        ['1.00', '0.345', '0.000800', '< 0.0001', 'NA']
    """
    if math.isnan(p):
        return "NA"
    if p < 0.0001:
        return "< 0.0001"
    return f"{p:#.3g}"


def compare(
    qrels: Qrels | Mapping[str, Mapping[str, int]],
    runs: Mapping[str, Run | Mapping[str, Any] | str | os.PathLike[str]],
    metrics: str | Sequence[str],
    *,
    baseline: str | None = None,
    test: TestName = "randomization",
    alpha: float = SIGNIFICANCE.default,
    correction: str | None = "holm",
    n_permutations: int = PERMUTATIONS.default,
    n_bootstrap: int = RESAMPLES.default,
    seed: int = SEED.default,
    missing: MissingPolicy = "zero",
    progress: bool | None = None,
    segments: Any = None,
    human_qrels: Qrels | Mapping[str, Mapping[str, int]] | None = None,
    **options: Any,
) -> Comparison:
    """Evaluate several runs and test their differences per query, paired.

    Args:
        qrels: the judgments.
        runs: name -> run (a :class:`Run` or a dict), or the path of a TREC or Parquet run,
            which is streamed (:func:`~ragmetrics.evaluate_stream`): runs larger than memory
            compare too; only their per-query values are kept. An adapter's
            :class:`EvaluationResult` gives its run and its retrieval times (the table and
            the report then show p50 and p95 latency beside quality).
        metrics: metric names, as in :func:`evaluate`.
        baseline: test every run against this one; None tests all pairs.
        test: ``"randomization"`` (default), ``"t-test"``, ``"bootstrap"``,
            ``"wilcoxon"``, ``"tukey-hsd"`` (all runs at once; the table then shows groups
            of runs that do not differ, as letters) or any test registered with
            :func:`~ragmetrics.analysis.stats.register_test`. docs/statistics.md says which
            to use when.
        alpha: the significance level.
        correction: ``"holm"`` (default), ``"holm-sidak"``, ``"bonferroni"`` (family-wise
            error), ``"bh"``, ``"by"`` (false discovery rate), any registered correction,
            or None (``"none"``), over the tests of each metric: the runs compared on one
            metric are one family (a metric is a question of its own, so the metrics do not
            dilute each other's tests). Tukey HSD needs none.
        n_permutations: permutations (randomization) or resamples (bootstrap test).
        n_bootstrap: resamples of the confidence intervals.
        seed: the random seed; the same inputs and seed give the same p-values.
        segments: slices of the queries (query id -> segment, a pandas Series, or a
            function of the query id): ``comparison.segments`` then holds each run per
            segment and each pair tested within each segment, and the report shows them.
        human_qrels: when ``qrels`` are an LLM's labels, people's grades for a random
            sample of the queries: ``comparison.ppi`` then holds prediction-powered
            estimates (at ``1 - alpha``) of each run's mean and of each pair's difference,
            valid whatever the LLM's bias, and the report shows them beside the naive ones.
        missing, **options: as in :func:`evaluate`.

    Queries are paired by id; a query where a metric is NA for either run is left out of that
    pair's test (``n`` says how many remain).
    """
    _check_runs(runs, baseline)
    spec = paired_test(test)  # refused here, before any evaluation, when not registered
    alpha = SIGNIFICANCE.check(alpha)
    n_permutations = PERMUTATIONS.check(n_permutations)
    n_bootstrap = RESAMPLES.check(n_bootstrap)
    seed = SEED.check(seed)
    correction = None if correction == "none" else correction
    correction_spec(correction)  # validates the name
    if spec.family is not None:
        if baseline is not None:
            raise InvalidParameterError(
                f"The {spec.title} compares every run with every other; leave baseline "
                f"unset, or choose a paired test (randomization, t-test, wilcoxon...)."
            )
        correction = None  # its p-values hold for the whole family already
    check_settings(missing=missing, progress=progress, **options)  # before any evaluation
    if segments is not None:
        check_segments(segments)
    if human_qrels is not None:
        human_qrels = as_qrels(human_qrels)  # refused here, before any evaluation
    qrels = as_qrels(qrels)
    results = {
        name: _evaluated(qrels, name, run, metrics, missing=missing, **options)
        for name, run in runs.items()
    }
    labels = list(next(iter(results.values())).metrics)
    names = list(results)
    pairs = _pairs(names, baseline)
    show = progress if progress is not None else len(pairs) * len(labels) * n_permutations > 5e6
    if spec.family is not None:
        raw = [
            test_
            for metric in labels
            for test_ in _family(metric, pairs, results, spec, n_permutations, alpha, seed)
        ]
    else:
        cells = [(m, p) for m in labels for p in pairs]
        raw = [
            _paired(metric, a, b, results, test, n_permutations, alpha, seed)
            for metric, (a, b) in progress_bar(cells, desc="testing", disable=not show)
        ]
    parts: dict[str, Any] = {
        "results": results,
        "metrics": labels,
        "tests": _corrected(raw, labels, correction, alpha),
        "intervals": _intervals(results, labels, n_bootstrap, seed),
        "baseline": baseline,
        "settings": {
            "test": test,
            "alpha": alpha,
            "correction": correction,
            "seed": seed,
            "n_permutations": n_permutations,
            "missing": missing,
        },
    }
    if segments is not None:
        parts["segments"] = Comparison(**parts).by_segment(segments)
    if human_qrels is not None:
        human = {
            name: _evaluated(human_qrels, name, run, metrics, missing=missing, **options)
            for name, run in runs.items()
        }
        parts["ppi"] = [
            estimate
            for name in names
            for estimate in ppi_of_result(results[name], human[name], alpha=alpha)
        ] + ppi_of_pairs(results, human, pairs, alpha=alpha)
    return Comparison(**parts)


def _check_runs(runs: object, baseline: object) -> None:
    if not isinstance(runs, Mapping) or len(runs) < 2:
        given = f"got {len(runs)}" if isinstance(runs, Mapping) else f"got {type(runs).__name__}"
        raise InvalidParameterError(
            f"compare needs two or more runs to compare ({given}): give them as a mapping "
            f"of name to run, or on the command line as NAME=PATH NAME=PATH. To score one "
            f"run, use evaluate()."
        )
    if baseline is not None and (not isinstance(baseline, str) or baseline not in runs):
        raise InvalidParameterError(
            f"The baseline {baseline!r} is not one of the runs: {', '.join(map(str, runs))}."
        )


def _pairs(names: list[str], baseline: str | None) -> list[tuple[str, str]]:
    """The pairs tested: the baseline against each other run, or every pair."""
    if baseline is not None:
        return [(baseline, other) for other in names if other != baseline]
    return [(names[i], names[j]) for i in range(len(names)) for j in range(i + 1, len(names))]


def _intervals(
    results: dict[str, EvaluationResult], labels: list[str], n_bootstrap: int, seed: int
) -> dict[str, dict[str, tuple[float, float]]]:
    """Each run's bootstrap interval of each metric's mean, over the queries where the
    metric is defined (one seeded resampling for all of them)."""
    names = list(results)
    cells = [(name, metric) for metric in labels for name in names]
    columns = []
    for name, metric in cells:
        column = _aligned(results[name], metric, results[names[0]].query_ids)
        columns.append(column[~np.isnan(column)])
    intervals: dict[str, dict[str, tuple[float, float]]] = {name: {} for name in names}
    bounds = bootstrap_cis(columns, n_resamples=n_bootstrap, seed=seed)
    for (name, metric), interval in zip(cells, bounds, strict=True):
        intervals[name][metric] = interval
    return intervals


def _corrected(
    raw: list[PairedTest], labels: list[str], correction: str | None, alpha: float
) -> list[PairedTest]:
    """The tests with their p-values corrected within each metric (one family per metric)
    and significance decided on the corrected value."""
    adjusted = [math.nan] * len(raw)
    for metric in labels:
        family = [i for i, t in enumerate(raw) if t.metric == metric]
        for i, p in zip(family, adjust([raw[i].p_value for i in family], correction), strict=True):
            adjusted[i] = p
    return [
        PairedTest(**{**asdict(t), "p_adjusted": p, "significant": bool(p < alpha)})
        for t, p in zip(raw, adjusted, strict=True)
    ]


def _evaluated(
    qrels: Qrels, name: str, run: Any, metrics: str | Sequence[str], **keywords: Any
) -> EvaluationResult:
    """A run in memory is evaluated; a path (TREC or Parquet) is streamed, keeping the
    per-query values the tests need."""
    if isinstance(run, (str, os.PathLike)):
        from ragmetrics.engine.stream import evaluate_stream

        return evaluate_stream(qrels, run, metrics, per_query=True, **keywords)
    if isinstance(run, EvaluationResult):  # an adapter's result: its run, and its timings
        ranked = run.evaluated_run
        if ranked is None:
            raise InvalidParameterError(
                "A streamed result keeps no run to compare; give the run itself (its path "
                "or a Run)."
            )
        # the queries its pipeline was never asked keep the adapter's policy (left out and
        # counted), not zeros: an unasked question says nothing about the retriever
        asked = keywords.get("missing", "zero")
        own = run.settings.get("missing", asked)
        result = evaluate(qrels, ranked, metrics, **{**keywords, "missing": own})
        if result.missing_query_ids and own != asked:
            unseen = result.missing_query_ids
            shown = ", ".join(map(repr, unseen[:3])) + (", ..." if len(unseen) > 3 else "")
            warn(
                f"Run {name!r} (an adapter's result) never saw {len(unseen)} of the judged "
                f"queries ({shown}): "
                f"they are left out of its means and tests (missing={own!r}, its adapter's "
                f"policy), not scored 0. Evaluate the pipeline on every query to compare "
                f"on all of them.",
                QueryMismatchWarning,
            )
        return result.replace(latencies=run.latencies, retrieval_errors=run.retrieval_errors)
    return evaluate(qrels, as_run(run), metrics, **keywords)


def _aligned(result: EvaluationResult, metric: str, query_ids: tuple[str, ...]) -> np.ndarray:
    """``result``'s values of ``metric`` in the order of ``query_ids`` (NaN where absent)."""
    column = result.column(metric)
    if result.query_ids == query_ids:  # the usual case: the same queries, in one order
        return np.array(column, dtype=np.float64)
    position = {q: i for i, q in enumerate(result.query_ids)}
    return np.array([column[position[q]] if q in position else np.nan for q in query_ids])


def _paired(
    metric: str,
    a: str,
    b: str,
    results: dict[str, EvaluationResult],
    test: str,
    n_permutations: int,
    alpha: float,
    seed: int,
) -> PairedTest:
    higher_is_better = results[a].metric(metric).higher_is_better
    sign = 1.0 if higher_is_better else -1.0  # better is positive in W/T/L and d
    theirs = set(results[b].query_ids)  # once: in the loop it made compare quadratic
    shared = tuple(q for q in results[a].query_ids if q in theirs)
    x = _aligned(results[a], metric, shared)
    y = _aligned(results[b], metric, shared)
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    # the interval inverts the same test, so it leaves out 0 exactly when p < alpha
    p, low, high = paired_interval(
        y, x, test=test, alpha=alpha, n_resamples=n_permutations, seed=seed
    )
    d = paired_differences(y, x)
    return PairedTest(
        metric=metric,
        a=a,
        b=b,
        mean_a=float(x.mean()) if len(x) else math.nan,
        mean_b=float(y.mean()) if len(y) else math.nan,
        diff=float(d.mean()) if len(d) else math.nan,
        p_value=p,
        p_adjusted=p,
        significant=False,
        effect_size=sign * standardized_effect(d),
        ci_low=low,
        ci_high=high,
        wins=int((sign * d > 0).sum()),
        ties=int((d == 0).sum()),
        losses=int((sign * d < 0).sum()),
        n=len(d),
        higher_is_better=higher_is_better,
    )


def _family(
    metric: str,
    pairs: list[tuple[str, str]],
    results: dict[str, EvaluationResult],
    spec: PairedTestSpec,
    n_permutations: int,
    alpha: float,
    seed: int,
) -> list[PairedTest]:
    """Every pair's test from one test of all runs at once, on the queries where every run
    has a value of ``metric``; a pair's interval is its difference plus or minus the test's
    critical distance."""
    assert spec.family is not None
    names = list(results)
    first = results[names[0]]
    shared = (
        tuple(q for q in first.query_ids if all(q in r.query_ids for r in results.values()))
        if any(r.query_ids != first.query_ids for r in results.values())
        else first.query_ids
    )
    matrix = np.stack([_aligned(results[n], metric, shared) for n in names])
    matrix = matrix[:, ~np.isnan(matrix).any(axis=0)]
    higher_is_better = first.metric(metric).higher_is_better
    sign = 1.0 if higher_is_better else -1.0
    if matrix.shape[1] >= 2:
        p_values, half = spec.family(matrix, alpha, n_permutations, seed)
    else:
        p_values, half = np.full((len(names), len(names)), math.nan), math.nan
    tests = []
    for a, b in pairs:
        i, j = names.index(a), names.index(b)
        x, y = matrix[i], matrix[j]
        d = paired_differences(y, x)
        diff = float((y - x).mean()) if len(d) else math.nan
        tests.append(
            PairedTest(
                metric=metric,
                a=a,
                b=b,
                mean_a=float(x.mean()) if len(x) else math.nan,
                mean_b=float(y.mean()) if len(y) else math.nan,
                diff=diff,
                p_value=float(p_values[i, j]),
                p_adjusted=float(p_values[i, j]),
                significant=False,
                effect_size=sign * standardized_effect(d),
                ci_low=diff - half,
                ci_high=diff + half,
                wins=int((sign * d > 0).sum()),
                ties=int((d == 0).sum()),
                losses=int((sign * d < 0).sum()),
                n=len(d),
                higher_is_better=higher_is_better,
            )
        )
    return tests
