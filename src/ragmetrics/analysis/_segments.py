"""Slices: metrics per segment of the queries (finance vs legal, per language, per source).

A segmentation maps each query id to its segment: a mapping, or a function of the query id
(``None`` leaves a query out). :func:`by_segment` gives each segment's mean of each metric
with a bootstrap interval and the counts behind it; :func:`segment_tests` tests each pair of
a comparison within each segment, with the comparison's own test, level and correction (one
family per segment and metric). Queries without a segment are counted, never dropped
silently.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmetrics.analysis.stats import adjust, bootstrap_cis, paired_interval
from ragmetrics.errors import InputFormatError, InvalidParameterError
from ragmetrics.output._tables import format_cell, interval_text, markdown_table, text_table

if TYPE_CHECKING:
    import pandas as pd

    from ragmetrics.analysis._comparison import Comparison
    from ragmetrics.engine._result import EvaluationResult

__all__ = [
    "SegmentRow",
    "SegmentTable",
    "SegmentTest",
    "Segments",
    "by_segment",
    "check_segments",
    "segment_tests",
]

Segments = Mapping[str, Any] | Callable[[str], Any]


@dataclass(frozen=True)
class SegmentRow:
    """One metric on one segment: ``n`` queries where it is defined, ``na`` where it is
    not, their mean, and its bootstrap interval."""

    segment: str
    metric: str
    n: int
    na: int
    mean: float | None
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class SegmentTest:
    """Run ``b`` against run ``a`` on one metric within one segment."""

    segment: str
    metric: str
    a: str
    b: str
    n: int
    diff: float
    ci_low: float
    ci_high: float
    p_value: float
    p_adjusted: float
    significant: bool


class SegmentTable:
    """Per-segment rows (and tests, from a comparison), with renderings.

    Attributes:
        rows: one :class:`SegmentRow` per segment and metric (per run: ``runs[name]``).
        tests: the :class:`SegmentTest` of each pair (empty for one result).
        unassigned: the queries that have no segment (left out of every row).
    """

    def __init__(
        self,
        rows: dict[str, list[SegmentRow]],
        tests: list[SegmentTest],
        unassigned: tuple[str, ...],
    ) -> None:
        self.runs = rows
        self.rows = [row for rows_of_run in rows.values() for row in rows_of_run]
        self.tests = tests
        self.unassigned = unassigned

    def _table(self) -> tuple[list[str], list[list[Any]]]:
        several = len(self.runs) > 1
        headers = [*(["run"] if several else []), "segment", "metric", "n", "NA", "mean", "CI"]
        rows = [
            [
                *([run] if several else []),
                r.segment,
                r.metric,
                r.n,
                r.na,
                r.mean,
                f"[{format_cell(r.ci_low)}, {format_cell(r.ci_high)}]",
            ]
            for run, rows_of_run in self.runs.items()
            for r in rows_of_run
        ]
        return headers, rows

    def _note(self) -> str:
        if not self.unassigned:
            return ""
        shown = ", ".join(map(repr, self.unassigned[:5])) + (
            ", ..." if len(self.unassigned) > 5 else ""
        )
        return f"{len(self.unassigned)} queries have no segment and are in no row ({shown})."

    def summary_rows(self) -> tuple[list[str], list[list[Any]]]:
        """Headers and one row per (run,) segment and metric: n, NA, mean and interval."""
        return self._table()

    def test_rows(self) -> tuple[list[str], list[list[Any]]]:
        """Headers and one row per test of a pair within a segment (``*``: significant
        after the correction)."""
        headers = ["segment", "metric", "a", "b", "n", "diff", "CI", "p adj."]
        rows = [
            [
                t.segment,
                t.metric,
                t.a,
                t.b,
                t.n,
                t.diff,
                interval_text(t.ci_low, t.ci_high),
                format_cell(t.p_adjusted) + (" *" if t.significant else ""),
            ]
            for t in self.tests
        ]
        return headers, rows

    def note(self) -> str:
        """How many queries have no segment (empty when every query has one)."""
        return self._note()

    def to_markdown(self) -> str:
        headers, rows = self._table()
        parts = [markdown_table(headers, rows)]
        if self.tests:
            parts.append(markdown_table(*self.test_rows()))
        if self._note():
            parts.append(self._note())
        return "\n\n".join(parts)

    def to_table(self) -> str:
        headers, rows = self._table()
        note = self._note()
        return text_table(headers, rows) + (f"\n\n{note}" if note else "")

    def to_pandas(self) -> pd.DataFrame:
        """One row per (run,) segment and metric."""
        from ragmetrics._util.optional import import_pandas

        records = [
            {"run": run, **asdict(r)} for run, rows_of_run in self.runs.items() for r in rows_of_run
        ]
        frame: pd.DataFrame = import_pandas().DataFrame(records)
        return frame

    def __repr__(self) -> str:
        segments = len({r.segment for r in self.rows})
        return f"SegmentTable({segments} segments, {len(self.rows)} rows, {len(self.tests)} tests)"

    def __str__(self) -> str:
        return self.to_table()


def check_segments(segments: Any) -> Callable[[str], Any]:
    """The function that gives a query id's segment; a clear error for anything else (a
    pandas Series whose index repeats a query id gives no one segment per query)."""
    index = getattr(segments, "index", None)
    if index is not None and hasattr(index, "is_unique") and not index.is_unique:
        repeated = index[index.duplicated()].unique().tolist()
        raise InputFormatError(
            f"The segments' index repeats query ids ({', '.join(map(repr, repeated[:3]))}"
            f"{', ...' if len(repeated) > 3 else ''}): each query belongs to one segment. Drop "
            f"the repeats (series[~series.index.duplicated()])."
        )
    if isinstance(segments, Mapping) or (hasattr(segments, "get") and not callable(segments)):
        return segments.get  # type: ignore[no-any-return]  # a dict, or a Series by query id
    if callable(segments):
        return segments  # type: ignore[no-any-return]
    raise InputFormatError(
        f"segments must map query ids to segments (a dict or a pandas Series indexed by "
        f"query id) or be a function of the query id; got {type(segments).__name__}."
    )


def _assign(query_ids: Sequence[str], segments: Segments) -> dict[str, str | None]:
    """Each query's segment, named by its label as text. Labels are strings, integers or
    booleans (numpy's included); two that print alike (``1`` and ``"1"``, ``True`` and
    ``"True"``) are refused rather than merged into one segment."""
    pick = check_segments(segments)
    assigned: dict[str, str | None] = {}
    named: dict[str, Any] = {}  # a segment's name -> the label it was made from
    for query_id in query_ids:
        segment = pick(query_id)
        if isinstance(segment, np.generic):
            segment = segment.item()
        if _is_na(segment):
            assigned[query_id] = None
            continue
        if not isinstance(segment, (str, int, float)):
            raise InputFormatError(
                f"The segment of query {query_id!r} is a {type(segment).__name__} "
                f"({_short(segment)}); a segment is a label: a string, an integer or a "
                f"boolean."
            )
        name = str(segment)
        known = named.setdefault(name, segment)
        if type(known) is not type(segment) or known != segment:
            raise InputFormatError(
                f"The segment labels {known!r} and {segment!r} (query {query_id!r}) both "
                f"read {name!r}: they would merge into one segment. Give the segments "
                f"labels of one type."
            )
        assigned[query_id] = name
    return assigned


def _short(value: Any) -> str:
    text = repr(value).replace("\n", " ")
    return text if len(text) <= 60 else text[:57] + "..."


def _is_na(segment: Any) -> bool:
    """None, NaN and pandas' NA/NaT: no segment (the query is counted as unassigned)."""
    if segment is None:
        return True
    if isinstance(segment, float):
        return math.isnan(segment)
    return type(segment).__name__ in ("NAType", "NaTType")


def by_segment(
    result: EvaluationResult,
    segments: Segments,
    *,
    level: float = 0.95,
    n_bootstrap: int = 1_000,
    seed: int = 0,
) -> SegmentTable:
    """Each segment's value of each metric of ``result`` (its mean over the segment's
    queries where the metric is defined), with a percentile bootstrap interval at ``level``.

    Example:
        >>> import ragmetrics as rm
        >>> qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
        >>> result = rm.evaluate(qrels, {"q1": ["a"], "q2": ["x"]}, "mrr")
        >>> table = rm.by_segment(result, {"q1": "finance", "q2": "legal"}, n_bootstrap=10)
        >>> [(row.segment, row.mean) for row in table.rows]
        [('finance', 1.0), ('legal', 0.0)]
    """
    from ragmetrics.engine._result import EvaluationResult

    if not isinstance(result, EvaluationResult):
        raise InvalidParameterError(
            f"by_segment(result, segments) takes the EvaluationResult of rm.evaluate as "
            f"result, not {type(result).__name__}; for several runs, "
            f"rm.compare(..., segments=...) or comparison.by_segment(segments)."
        )
    assigned = _assign(result.query_ids, segments)
    rows = _rows(result, assigned, level, n_bootstrap, seed)
    unassigned = tuple(q for q, s in assigned.items() if s is None)
    return SegmentTable({result.run_name or "run": rows}, [], unassigned)


def _rows(
    result: EvaluationResult,
    assigned: Mapping[str, str | None],
    level: float,
    n_bootstrap: int,
    seed: int,
) -> list[SegmentRow]:
    names = sorted({s for s in assigned.values() if s is not None})
    labels = np.array([assigned.get(q) for q in result.query_ids], dtype=object)
    out: list[SegmentRow] = []
    cells: list[tuple[str, str, np.ndarray, int]] = []
    for segment in names:
        inside = labels == segment
        for metric in result.metrics:
            column = result.column(metric)[inside]
            defined = column[~np.isnan(column)]
            cells.append((segment, metric, defined, int(np.isnan(column).sum())))
    intervals = bootstrap_cis(
        [c[2] for c in cells], n_resamples=n_bootstrap, level=level, seed=seed
    )
    for (segment, metric, defined, na), (low, high) in zip(cells, intervals, strict=True):
        mean = float(defined.mean()) if len(defined) else None
        out.append(SegmentRow(segment, metric, len(defined), na, mean, low, high))
    return out


def segment_tests(comparison: Comparison, segments: Segments) -> SegmentTable:
    """Each run's rows per segment and each pair's test within each segment, with the
    comparison's test, level, permutations, seed and correction (one family per segment
    and metric)."""
    settings = comparison.settings
    first = comparison.results[comparison.runs[0]]
    assigned = _assign(first.query_ids, segments)
    rows = {
        name: _rows(
            result,
            _assign(result.query_ids, segments),
            1 - settings["alpha"],
            1_000,
            settings["seed"],
        )
        for name, result in comparison.results.items()
    }
    pairs = sorted(
        {(t.a, t.b) for t in comparison.tests},
        key=lambda p: (comparison.runs.index(p[0]), comparison.runs.index(p[1])),
    )
    tests: list[SegmentTest] = []
    names = sorted({s for s in assigned.values() if s is not None})
    for segment in names:
        queries = [q for q, s in assigned.items() if s == segment]
        for metric in comparison.metrics:
            raw = []
            for a, b in pairs:
                x = _values(comparison.results[a], metric, queries)
                y = _values(comparison.results[b], metric, queries)
                keep = ~(np.isnan(x) | np.isnan(y))
                x, y = x[keep], y[keep]
                if len(x):
                    p, low, high = paired_interval(
                        y, x, test=_paired_test(settings["test"]), alpha=settings["alpha"],
                        n_resamples=settings["n_permutations"], seed=settings["seed"],
                    )  # fmt: skip
                else:
                    p, low, high = math.nan, math.nan, math.nan
                diff = float((y - x).mean()) if len(x) else math.nan
                raw.append((a, b, len(x), diff, low, high, p))
            defined = [i for i, r in enumerate(raw) if not math.isnan(r[6])]
            adjusted = [math.nan] * len(raw)
            for i, value in zip(
                defined, adjust([raw[i][6] for i in defined], settings["correction"]), strict=True
            ):
                adjusted[i] = value
            for (a, b, n, diff, low, high, p), p_adj in zip(raw, adjusted, strict=True):
                tests.append(
                    SegmentTest(
                        segment,
                        metric,
                        a,
                        b,
                        n,
                        diff,
                        low,
                        high,
                        p,
                        p_adj,
                        bool(p_adj < settings["alpha"]),
                    )
                )
    unassigned = tuple(q for q, s in assigned.items() if s is None)
    return SegmentTable(rows, tests, unassigned)


def _paired_test(name: str) -> str:
    """A test of all runs at once (Tukey HSD) is replaced, within a segment, by the
    randomization test it reduces to for two runs."""
    from ragmetrics.analysis.stats import paired_test

    return "randomization" if paired_test(name).family is not None else name


def _values(result: EvaluationResult, metric: str, queries: Sequence[str]) -> np.ndarray:
    column = result.column(metric)
    where = {q: i for i, q in enumerate(result.query_ids)}
    return np.array([column[where[q]] if q in where else np.nan for q in queries])
