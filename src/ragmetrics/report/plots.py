"""Plots of evaluations and comparisons (needs matplotlib: ``pip install 'ragmetrics[plot]'``).

Every function returns a matplotlib ``Figure`` and shows nothing by itself; save it with
``fig.savefig(path)`` or let a notebook display it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ragmetrics._util.optional import import_matplotlib_pyplot
from ragmetrics.data._qrels import Qrels
from ragmetrics.data._run import Run
from ragmetrics.engine._evaluation import evaluate
from ragmetrics.engine._settings import as_qrels, as_run
from ragmetrics.errors import RagMetricsError
from ragmetrics.output._tables import visible

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ragmetrics.analysis._comparison import Comparison

__all__ = [
    "decompositions",
    "plot_metric_at_k",
    "plot_per_query_distribution",
    "plot_rag_decomposition",
    "plot_win_loss",
]

_DRAWN = 2_000  # points drawn of a sorted curve (a figure is a few hundred pixels wide)
_COLORS = ["#1b6ca8", "#e07b39", "#3a923a", "#c03d3e", "#8c6bb1", "#7f7f7f", "#b8a02b", "#17a2b8"]


def plot_metric_at_k(
    qrels: Qrels | Mapping[str, Mapping[str, int]],
    runs: Mapping[str, Run | Mapping[str, Any]],
    metric: str = "ndcg",
    ks: Sequence[int] = (1, 3, 5, 10, 20),
    **options: Any,
) -> Figure:
    """``metric@k`` against k, one line per run."""
    plt = import_matplotlib_pyplot()
    qrels = as_qrels(qrels)
    names = [f"{metric}@{k}" for k in ks]
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for i, (name, run) in enumerate(runs.items()):
        result = evaluate(qrels, as_run(run), names, **options)
        values = [result.aggregate[n] for n in names]
        ax.plot(
            list(ks),
            [np.nan if v is None else v for v in values],
            marker="o",
            color=_COLORS[i % len(_COLORS)],
            label=_plain(name),
        )
    ax.set_xlabel("k")
    ax.set_ylabel(_plain(f"{metric}@k"))
    ax.set_xticks(list(ks))
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(frameon=False)
    ax.set_title(_plain(f"{metric}@k"))
    fig.tight_layout()
    return cast("Figure", fig)


def plot_per_query_distribution(comparison: Comparison, metric: str) -> Figure:
    """Per-query values of ``metric`` for each run: a box plot with the queries as dots."""
    plt = import_matplotlib_pyplot()
    _require(comparison, metric)
    columns = comparison.per_query(metric)
    fig, ax = plt.subplots(figsize=(1.6 + 1.3 * len(columns), 4.0))
    data = [v[~np.isnan(v)] for v in columns.values()]
    parts = ax.boxplot(data, showmeans=True, widths=0.5)
    rng = np.random.default_rng(0)
    for i, values in enumerate(data, start=1):
        ax.scatter(
            i + rng.uniform(-0.15, 0.15, len(values)),
            values,
            s=8,
            alpha=0.45,
            color=_COLORS[(i - 1) % len(_COLORS)],
        )
    ax.set_xticks(range(1, len(columns) + 1), [_plain(c) for c in columns])
    ax.set_ylabel(_plain(metric))
    ax.set_title(_plain(f"per-query {metric}"))
    ax.grid(axis="y", alpha=0.3)
    # the key: what the box, its line, the triangle and the whiskers stand for
    key = [parts["boxes"][0], parts["medians"][0], parts["means"][0], parts["whiskers"][0]]
    ax.legend(
        key,
        ["middle half of the queries", "median", "mean", "range (up to 1.5 x the box)"],
        frameon=False,
        fontsize=8,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.12),
        ncol=2,
    )
    fig.tight_layout()
    return cast("Figure", fig)


def plot_win_loss(comparison: Comparison, metric: str, baseline: str | None = None) -> Figure:
    """Per-query difference of each run from the baseline, sorted (green: the run is better
    on that query, red: worse, in the metric's direction), paired by query id."""
    plt = import_matplotlib_pyplot()
    _require(comparison, metric)
    base = baseline or comparison.baseline or comparison.runs[0]
    others = [r for r in comparison.runs if r != base]
    sign = 1.0 if comparison.metric(metric).higher_is_better else -1.0
    fig, axes = plt.subplots(len(others), 1, figsize=(7.0, 2.4 * len(others)), squeeze=False)
    base_result = comparison.results[base]
    for ax, name in zip(axes[:, 0], others, strict=True):
        result = comparison.results[name]
        position = dict(zip(result.query_ids, range(len(result.query_ids))))
        shared = [i for i, q in enumerate(base_result.query_ids) if q in position]
        theirs = [position[base_result.query_ids[i]] for i in shared]
        diff = result.column(metric)[theirs] - base_result.column(metric)[shared]
        diff = np.sort(diff[~np.isnan(diff)])[::-1]
        better = sign * diff
        wins, losses = int((better > 1e-12).sum()), int((better < -1e-12).sum())
        # sorted, the queries above 0, at 0 and below 0 are three stretches: one filled
        # step outline each (a bar per query costs seconds at 10,000 queries)
        above, level = int((diff > 1e-12).sum()), int((diff >= -1e-12).sum())
        up, down = ("#3a923a", "#c03d3e") if sign > 0 else ("#c03d3e", "#3a923a")
        for start, stop, color in (
            (0, above, up),
            (above, level, "#bbbbbb"),
            (level, len(diff), down),
        ):
            if stop > start:
                # a sorted stretch keeps its shape drawn at a few thousand of its points
                at = np.unique(np.linspace(start, stop - 1, min(stop - start, _DRAWN)).round())
                at = at.astype(np.int64)
                edges = np.append(at, stop) - 0.5
                ax.stairs(diff[at], edges, fill=True, color=color, baseline=0.0)
        ax.set_xlim(-0.5, max(len(diff), 1) - 0.5)
        ax.set_title(
            _plain(
                f"{name} vs {base}: {wins} wins, {len(diff) - wins - losses} ties, {losses} losses"
            ),
            fontsize=10,
        )
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_ylabel(_plain(f"Δ {metric}"))
        ax.set_xticks([])
    fig.tight_layout()
    return cast("Figure", fig)


def decompositions(comparison: Comparison) -> list[tuple[str, str, str]]:
    """The labels of each RA-nWG@k, PROC@k and %PROC@k compared together (same cutoff and
    weighting), whatever names they were written with."""
    parsed = [comparison.metric(label) for label in comparison.metrics]
    found = []
    for ra in (m for m in parsed if m.spec.name == "ra_nwg"):
        proc = next((m for m in parsed if m.spec.name == "proc" and m.same_settings(ra)), None)
        pct = next((m for m in parsed if m.spec.name == "pct_proc" and m.same_settings(ra)), None)
        if proc is not None and pct is not None:
            found.append((ra.label, proc.label, pct.label))
    return found


def plot_rag_decomposition(comparison: Comparison, metrics: int | Sequence[str]) -> Figure:
    """RA-nWG@k split into PROC@k (what the pool allows) and the share of it that selection
    realized, one group of bars per run.

    The bars are means over queries: mean RA-nWG@k, mean PROC@k, and their ratio, so that
    what is drawn multiplies (PROC x share = RA-nWG). The mean of each query's %PROC@k (in
    the tables) is not that ratio: a mean of ratios is not a ratio of means.

    ``metrics``: the labels of RA-nWG@k, PROC@k and %PROC@k in the comparison, in that
    order, or a cutoff k to find them by.
    """
    plt = import_matplotlib_pyplot()
    if isinstance(metrics, int):
        found = [t for t in decompositions(comparison) if comparison.metric(t[0]).cutoff == metrics]
        if not found:
            raise RagMetricsError(
                f"RA-nWG@{metrics}, PROC@{metrics} and %PROC@{metrics} were not all compared; "
                f"add them to the metrics of compare()."
            )
        names = list(found[0])
    else:
        names = list(metrics)
    for name in names:
        _require(comparison, name)
    k = comparison.metric(names[0]).cutoff
    fig, ax = plt.subplots(figsize=(1.8 + 1.6 * len(comparison.runs), 4.0))
    width = 0.26
    x = np.arange(len(comparison.runs))
    ra = np.array([_mean(comparison, r, names[0]) for r in comparison.runs])
    proc = np.array([_mean(comparison, r, names[1]) for r in comparison.runs])
    share = np.divide(ra, proc, out=np.full(len(ra), np.nan), where=proc > 0)
    bars = {
        "mean RA-nWG": ra,
        "mean PROC (what retrieval allows)": proc,
        "RA-nWG / PROC (share selection realized)": share,
    }
    for j, (label, values) in enumerate(bars.items()):
        drawn = ax.bar(x + (j - 1) * width, values, width, label=label, color=_COLORS[j])
        # the first two are the tables' means, to their four decimals
        ax.bar_label(drawn, fmt="%.4f", fontsize=6.5, padding=1.5, rotation=90)
    ax.set_xticks(x, [_plain(r) for r in comparison.runs])
    ax.set_ylim(0, 1.22)
    ax.set_title(
        f"mean RA-nWG@{k} = mean PROC@{k} x share realized\n"
        f"(the share is a ratio of means; the table's {names[2]} is a mean of ratios)",
        fontsize=9,
    )
    ax.legend(frameon=False, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=3)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return cast("Figure", fig)


def _plain(text: str) -> str:
    """A name as matplotlib should print it: ``$`` would start mathtext (a run named
    ``$\\frac$`` would not draw), and control characters are shown escaped."""
    return visible(text).replace("$", r"\$")


def _mean(comparison: Comparison, run: str, metric: str) -> float:
    value = comparison.means[run][metric]
    return math.nan if value is None else value


def _require(comparison: Comparison, metric: str) -> None:
    if metric not in comparison.metrics:
        raise RagMetricsError(
            f"{metric!r} was not compared; this comparison has {', '.join(comparison.metrics)}. "
            f"Add it to the metrics of compare()."
        )
