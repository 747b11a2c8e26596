"""Robustness of a ranking of runs to the rarity weighting of the RAG set metrics."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmetrics.data._qrels import Qrels
from ragmetrics.data._run import Run
from ragmetrics.engine._evaluation import evaluate
from ragmetrics.engine._result import EvaluationResult
from ragmetrics.engine._settings import as_qrels, as_run
from ragmetrics.errors import InvalidParameterError, RagMetricsError
from ragmetrics.metrics import parse_metric
from ragmetrics.metrics.registry import ALPHA, CAP3, CAP4, WEIGHTING
from ragmetrics.output._tables import markdown_table

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "DEFAULT_GRID",
    "DEFAULT_WEIGHTING",
    "RobustnessResult",
    "robustness",
]


def _order_text(runs: tuple[str, ...], means: list[float]) -> str:
    """Runs best first, ``=`` between ties: ``hybrid > bm25 = dense``."""
    ranked = sorted(zip(means, runs, strict=True), key=lambda pair: -np.nan_to_num(pair[0], nan=-1))
    text = ranked[0][1]
    for (previous, _), (value, name) in itertools.pairwise(ranked):
        text += (" = " if value == previous else " > ") + name
    return text


DEFAULT_WEIGHTING = (float(ALPHA.default), float(CAP4.default), float(CAP3.default))
DEFAULT_GRID: tuple[tuple[float, float, float], ...] = tuple(
    itertools.product((0.0, 0.5, 1.0, 2.0), (0.5, 1.0), (0.1, 0.25, 0.5))
)


@dataclass(frozen=True)
class RobustnessResult:
    """Means of one metric for several runs over a grid of weighting settings.

    Attributes:
        metric: the metric evaluated (e.g. ``ra_nwg@10``).
        settings: the (alpha, cap4, cap3) rows.
        runs: the run names (columns).
        means: array (settings x runs).
        orders: per setting, the run names best first.
        reference: the order at the declared defaults (alpha 1, cap4 1, cap3 0.25).
    """

    metric: str
    settings: tuple[tuple[float, float, float], ...]
    runs: tuple[str, ...]
    means: np.ndarray
    orders: tuple[tuple[str, ...], ...]
    reference: tuple[str, ...]

    def _flips(self, row: int) -> bool:
        """True when some pair of runs is strictly ordered one way here and the other way
        at the defaults (ties never count as a change)."""
        here = self.means[row]
        there = self.means[self.settings.index(DEFAULT_WEIGHTING)]
        return bool(
            (
                np.sign(here[:, None] - here[None, :]) * np.sign(there[:, None] - there[None, :])
                < 0
            ).any()
        )

    @property
    def stable(self) -> bool:
        """True when no setting reverses the order of two runs relative to the defaults."""
        return not self.changed

    @property
    def changed(self) -> tuple[tuple[float, float, float], ...]:
        """The settings that reverse the order of some pair of runs."""
        return tuple(s for i, s in enumerate(self.settings) if self._flips(i))

    def to_markdown(self) -> str:
        headers = ["alpha", "cap4", "cap3", *self.runs, "order"]
        rows: list[list[Any]] = []
        for row, (setting, means) in enumerate(
            zip(self.settings, self.means.tolist(), strict=True)
        ):
            flag = " (changed)" if self._flips(row) else ""
            rows.append([*map(str, setting), *means, _order_text(self.runs, means) + flag])
        verdict = (
            "The order of the runs is the same in every setting."
            if self.stable
            else f"The order changes in {len(self.changed)} of {len(self.settings)} settings."
        )
        return f"{markdown_table(headers, rows, align_right_from=3)}\n\n{verdict}"

    def _repr_markdown_(self) -> str:
        return f"**{self.metric}** over {len(self.settings)} weightings\n\n{self.to_markdown()}"

    def __repr__(self) -> str:
        verdict = "stable" if self.stable else f"changes in {len(self.changed)} settings"
        return (
            f"RobustnessResult({self.metric}, {len(self.runs)} runs x {len(self.settings)} "
            f"weightings: order {verdict}; reference order {' > '.join(self.reference)})"
        )

    def to_pandas(self) -> pd.DataFrame:
        from ragmetrics._util.optional import import_pandas

        pandas = import_pandas()
        index = pandas.MultiIndex.from_tuples(self.settings, names=["alpha", "cap4", "cap3"])
        frame: pd.DataFrame = pandas.DataFrame(self.means, index=index, columns=list(self.runs))
        return frame


def robustness(
    qrels: Qrels | Mapping[str, Mapping[str, int]],
    runs: Mapping[str, Run | Mapping[str, Any]],
    metric: str = "ra_nwg@10",
    *,
    grid: Sequence[tuple[float, float, float]] | None = None,
    pools: Mapping[str, Run] | None = None,
    grade_map: Mapping[int, int] | None = None,
    missing: str = "zero",
) -> RobustnessResult:
    """Evaluate ``metric`` for each run over a grid of (alpha, cap4, cap3) settings.

    The default grid crosses alpha in {0, 0.5, 1, 2}, cap4 in {0.5, 1} and cap3 in
    {0.1, 0.25, 0.5}. ``pools`` gives each run's candidate pool (for PROC).
    """
    if pools is not None and not isinstance(pools, Mapping):
        raise InvalidParameterError(f"pools must map run names to runs; got {pools!r}.")
    if not isinstance(runs, Mapping) or not runs:
        raise RagMetricsError("robustness needs at least one run, e.g. {'bm25': run}.")
    parsed = parse_metric(metric)
    varied = {p.name for p in WEIGHTING}
    if not varied & {p.name for p in parsed.spec.params}:
        raise InvalidParameterError(
            f"robustness varies the rarity weighting (alpha, cap4, cap3); {metric!r} does not "
            f"use it. Pass ra_nwg@k, proc@k or pct_proc@k."
        )
    if varied & set(parsed.params):
        raise InvalidParameterError(
            f"robustness varies alpha, cap4 and cap3 itself; write {metric!r} without them "
            f"(e.g. '{parsed.spec.name}@{parsed.cutoff}')."
        )
    qrels = as_qrels(qrels)
    named = {name: as_run(run) for name, run in runs.items()}
    try:
        settings = tuple(tuple(map(float, s)) for s in (grid or DEFAULT_GRID))
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"grid must be a list of (alpha, cap4, cap3) triples of numbers; got {grid!r}."
        ) from None
    if any(len(s) != 3 for s in settings):
        raise InvalidParameterError(
            f"grid must be a list of (alpha, cap4, cap3) triples of numbers; got {grid!r}."
        )
    defaults = DEFAULT_WEIGHTING
    if defaults not in settings:
        settings = (defaults, *settings)
    # every setting one metric label, so that each run is evaluated once: its judged docs
    # found once for all the settings, each weighted its own way
    labels = [
        parsed.resolve(
            {p.keyword: v for p, v in zip(WEIGHTING, setting, strict=True) if p.keyword}
        ).name
        for setting in settings
    ]
    means = np.zeros((len(settings), len(named)))
    for column, (name, run) in enumerate(named.items()):
        result: EvaluationResult = evaluate(
            qrels,
            run,
            list(dict.fromkeys(labels)),
            grade_map=grade_map,
            pool=(pools or {}).get(name),
            missing=missing,  # type: ignore[arg-type]
        )
        for row, label in enumerate(labels):
            value = result.aggregate[label]
            means[row, column] = np.nan if value is None else value
    names = tuple(named)
    sign = 1.0 if parsed.higher_is_better else -1.0
    orders = tuple(
        tuple(names[i] for i in np.argsort(-np.nan_to_num(sign * row, nan=-np.inf), kind="stable"))
        for row in means
    )
    reference = orders[settings.index(defaults)]
    return RobustnessResult(metric, settings, names, means, orders, reference)  # type: ignore[arg-type]
