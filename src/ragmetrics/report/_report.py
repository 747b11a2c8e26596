"""A report a reviewer can read: tables, plots and the worst queries, in one file.

``write_report(comparison, "report.html")`` writes a self-contained HTML page (plots inlined
as PNG); a ``.md`` path writes markdown with the plots in a ``<name>_files/`` folder.
"""

from __future__ import annotations

import base64
import html
import importlib.util
import io
import os
import platform
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmetrics._version import __version__
from ragmetrics.analysis._comparison import Comparison
from ragmetrics.data._dataset import RetrievalDataset
from ragmetrics.engine._settings import as_qrels, as_run
from ragmetrics.errors import RagMetricsError
from ragmetrics.formats._atomic import write_bytes, write_text
from ragmetrics.output._tables import escape_markdown, html_table, markdown_table

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ragmetrics.data._qrels import Qrels
    from ragmetrics.data._run import Run

__all__ = [
    "write_report",
]


def _figures(
    comparison: Comparison,
    qrels: Qrels | None,
    runs: Mapping[str, Run] | None,
    options: dict[str, Any],
) -> list[tuple[str, Figure]]:
    from ragmetrics.report import plots

    figures: list[tuple[str, Figure]] = []
    parsed = {label: comparison.metric(label) for label in comparison.metrics}
    curve = next(
        (
            m
            for name in ("ndcg", "recall", "ra_nwg", "precision", "hit_rate")
            for m in parsed.values()
            if m.spec.name == name
        ),
        None,
    )
    if curve is not None and qrels is not None and runs is not None:
        figures.append(
            (
                "Each run's mean as the cutoff grows: where the curves cross, which run is "
                "better depends on how many passages the prompt takes.",
                plots.plot_metric_at_k(qrels, runs, curve.base_name, **options),
            )
        )
    first = comparison.metrics[0]
    figures.append(
        (
            "The spread behind each mean, one dot per query: a mean moved by a few queries "
            "shows here.",
            plots.plot_per_query_distribution(comparison, first),
        )
    )
    figures.append(
        (
            "Each query's difference from the baseline, sorted: green where the run does "
            "better, red where it does worse.",
            plots.plot_win_loss(comparison, first),
        )
    )
    for labels in plots.decompositions(comparison):
        k = parsed[labels[0]].cutoff
        figures.append(
            (
                f"What limits RA-nWG@{k}: the retriever (PROC, what the pool allows) or the "
                f"selection of the top {k} from it (%PROC).",
                plots.plot_rag_decomposition(comparison, labels),
            )
        )
    return figures


def _png(figure: Figure) -> bytes:
    from ragmetrics._util.optional import import_matplotlib_pyplot

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110)
    import_matplotlib_pyplot().close(figure)
    return buffer.getvalue()


def _worst(comparison: Comparison, n: int) -> tuple[str, str, list[str]]:
    run = comparison.baseline or comparison.runs[0]
    result = comparison.results[run]
    sets = [
        m
        for m in comparison.metrics
        if comparison.metric(m).spec.name in {"ra_nwg", "pct_proc", "proc"}
    ]
    metric = sets[0] if sets else comparison.metrics[0]
    return run, metric, [result.diagnose(q).to_markdown() for q in result.worst(metric, n)]


def _inline_html(text: str) -> str:
    """Escape ``text`` and render its markdown ``**bold**`` and `` `code` ``; what
    :func:`escape_markdown` escaped (backslashes, entities) shows as the literal text."""
    escaped = html.escape(text)
    for entity in ("lt", "gt", "amp"):  # escape_markdown's entities, escaped once more
        escaped = escaped.replace(f"&amp;{entity};", f"&{entity};")
    kept: list[str] = []

    def keep(match: re.Match[str]) -> str:
        kept.append(match.group(1))
        return f"\x00{len(kept) - 1}\x00"

    escaped = re.sub(r"\\([\\`\[\]|*])", keep, escaped)
    escaped = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", escaped)
    escaped = re.sub(r"`(.+?)`", r"<code>\1</code>", escaped)
    return re.sub("\x00(\\d+)\x00", lambda m: kept[int(m.group(1))], escaped)


def _markdown_to_html(text: str) -> str:
    """Paragraphs and ``- `` lists of markdown as HTML."""
    lines, items = [], []
    for line in text.split("\n"):
        if line.startswith("- "):
            items.append(f"<li>{_inline_html(line[2:])}</li>")
        else:
            if items:
                lines.append("<ul>" + "".join(items) + "</ul>")
                items = []
            lines.append(f"<p>{_inline_html(line)}</p>")
    if items:
        lines.append("<ul>" + "".join(items) + "</ul>")
    return "".join(lines)


# The report is one document: a list of blocks, rendered as markdown or as HTML.


@dataclass(frozen=True)
class _Heading:
    text: str  # markdown inline
    level: int = 2


@dataclass(frozen=True)
class _Text:
    text: str  # markdown: paragraphs and lists


@dataclass(frozen=True)
class _Table:
    headers: list[str]
    rows: list[list[Any]]
    numbers_from: int = 1  # the first column aligned right in markdown


@dataclass(frozen=True)
class _Rendered:
    """A block with its own renderings (a comparison knows how to draw itself)."""

    markdown: str
    html: str


@dataclass(frozen=True)
class _Figure:
    caption: str
    png: bytes


_Block = _Heading | _Text | _Table | _Rendered | _Figure


def _document(
    comparison: Comparison,
    title: str,
    figures: list[tuple[str, Figure]],
    worst: int,
    inputs: Mapping[str, str] | None = None,
    labels: str | None = None,
) -> list[_Block]:
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    headers, rows = comparison.test_rows()
    tested = "Paired tests"
    if comparison.baseline is not None:  # column a is the baseline on every row: say it once
        headers, rows = [headers[0], *headers[2:]], [[r[0], *r[2:]] for r in rows]
        tested = f"Paired tests against the baseline, {escape_markdown(comparison.baseline)}"
    blocks: list[_Block] = [
        _Heading(escape_markdown(title), 1),
        _Text(f"ragmetrics {__version__}, {stamp}."),
        _Heading("Means"),
        _Rendered(comparison.to_markdown(), comparison._repr_html_()),
        _Text(comparison.verdict(markdown=True)),
        _Heading("Metrics"),
        _Table(["metric", "what it measures", "better", "over queries"], _glossary(comparison)),
    ]
    if figures:  # the summary, what it means and how it looks, before the tests' detail
        blocks.append(_Heading("Plots"))
        blocks += [_Figure(caption, _png(figure)) for caption, figure in figures]
    blocks += [
        _Heading(tested),
        _Table(headers, rows, numbers_from=2 if comparison.baseline is not None else 3),
        _Text(comparison.tests_legend()),
        _Heading("What was counted"),
        _Table(
            [
                "run",
                "counted",
                "missing from run",
                "not judged",
                "empty rankings",
                "repeated ids dropped",
                "unmatched chunks",
            ],
            [
                [
                    name,
                    r.counts.queries,
                    r.counts.missing_from_run,
                    r.counts.not_judged,
                    r.counts.empty_rankings,
                    r.counts.repeated_ids_dropped,
                    r.counts.unmatched_chunks,
                ]
                for name, r in comparison.results.items()
            ],
        ),
    ]
    latency = comparison.latency_rows()
    if latency is not None:
        blocks += [
            _Heading("Retrieval latency"),
            _Text(
                "Wall time of each query's retrieval as the adapters timed it, per run: the "
                "median (p50), the 95th percentile and the mean, in milliseconds."
            ),
            _Table(*latency, numbers_from=1),
        ]
    if comparison.ppi:
        from ragmetrics.analysis._ppi_math import ppi_rows

        sample = comparison.ppi[0].n_human
        blocks += [
            _Heading("Intervals valid on LLM labels"),
            _Text(
                f"The labels are an LLM's; people graded {sample} of the queries. Prediction-"
                "powered inference (Angelopoulos et al. 2023) corrects the mean over every "
                "query on the LLM's labels by the LLM's error on the people's sample: its "
                "interval holds whatever the LLM's bias. Naive: the LLM's labels taken as the "
                "truth. People only: the people's sample alone."
            ),
            _Table(*ppi_rows(comparison.ppi), numbers_from=2),
        ]
    if comparison.segments is not None:
        table = comparison.segments
        blocks += [
            _Heading("By segment"),
            _Text(
                "Each run's mean per segment of the queries, with its bootstrap interval; "
                "n counts the queries where the metric is defined, NA the others."
            ),
            _Table(*table.summary_rows(), numbers_from=3),
        ]
        if table.tests:
            blocks += [
                _Text(
                    "Each pair tested within each segment with the comparison's test; the "
                    "correction runs over the tests of one segment and metric."
                ),
                _Table(*table.test_rows(), numbers_from=4),
            ]
        if table.note():
            blocks.append(_Text(escape_markdown(table.note())))
    blocks.append(_Heading("Settings"))
    blocks.append(_Table(["setting", "value"], _settings_rows(comparison, inputs, labels)))
    if worst:
        run, metric, diagnoses = _worst(comparison, worst)
        blocks.append(
            _Heading(
                f"The {len(diagnoses)} worst queries of {escape_markdown(run)} by "
                f"{escape_markdown(metric)}"
            )
        )
        blocks += [_Text(d) for d in diagnoses]
    return blocks


def _settings_rows(
    comparison: Comparison, inputs: Mapping[str, str] | None, labels: str | None = None
) -> list[list[Any]]:
    """Everything a reader needs to reproduce the numbers."""
    first = next(iter(comparison.results.values())).settings
    tests = comparison.settings
    rows: list[list[Any]] = [
        ["ragmetrics", __version__],
        ["python, numpy", f"{platform.python_version()}, {np.__version__}"],
    ]
    rows += [[f"input: {name}", path] for name, path in (inputs or {}).items()]
    if labels:
        rows.append(["labels", labels])
    rows += [
        ["relevance threshold", f"grade >= {first['relevance_threshold']} is relevant"],
        ["grade map (set metrics)", first.get("grade_map") or "none: grades read as 1..5"],
        ["candidate pool (PROC@k)", first.get("pool") or "each query's own ranking"],
        ["score precision", first.get("score_precision")],
        ["judged queries missing from a run", tests.get("missing")],
        ["test", tests["test"]],
        ["permutations or resamples", f"{tests['n_permutations']:,}"],
        ["seed", tests["seed"]],
        ["correction", tests["correction"] or "none"],
        ["alpha", tests["alpha"]],
        ["baseline", comparison.baseline or "every pair"],
    ]
    return rows


def _glossary(comparison: Comparison) -> list[list[Any]]:
    """Each metric of the report: what it measures, its direction, how it is pooled."""
    rows = []
    for label in comparison.metrics:
        metric = comparison.metric(label)
        spec = metric.spec
        rows.append(
            [
                label,
                spec.summary,
                "higher" if spec.higher_is_better else "lower",
                spec.aggregate.name.lower(),
            ]
        )
    return rows


def _render_markdown(blocks: list[_Block], folder: Path, written: list[Path]) -> str:
    """The document as markdown; figures as PNG files in ``folder`` (appended to
    ``written``)."""
    parts = []
    for block in blocks:
        if isinstance(block, _Heading):
            parts.append("#" * block.level + " " + block.text.replace("\n", " "))
        elif isinstance(block, _Text):
            parts.append(block.text)
        elif isinstance(block, _Table):
            parts.append(
                markdown_table(block.headers, block.rows, align_right_from=block.numbers_from)
            )
        elif isinstance(block, _Rendered):
            parts.append(block.markdown)
        else:
            folder.mkdir(parents=True, exist_ok=True)
            written.append(folder / f"plot{len(written) + 1}.png")
            write_bytes(written[-1], block.png)
            caption = escape_markdown(block.caption)
            parts.append(f"![{caption}]({folder.name}/{written[-1].name})")
    return "\n\n".join(parts) + "\n"


def _render_html(blocks: list[_Block], title: str, extra: str = "") -> str:
    """The document as one self-contained HTML page (figures inlined; ``extra``, an HTML
    fragment such as the explorer, at the end)."""
    body = []
    for block in blocks:
        if isinstance(block, _Heading):
            body.append(f"<h{block.level}>{_inline_html(block.text)}</h{block.level}>")
        elif isinstance(block, _Text):
            body.append(f"<div class='text'>{_markdown_to_html(block.text)}</div>")
        elif isinstance(block, _Table):
            body.append(f"<div class='scroll'>{html_table(block.headers, block.rows)}</div>")
        elif isinstance(block, _Rendered):
            body.append(f"<div class='scroll'>{block.html}</div>")
        else:
            data = base64.b64encode(block.png).decode("ascii")
            caption = html.escape(block.caption)
            body.append(
                f"<figure><img alt='{caption}' src='data:image/png;base64,{data}'>"
                f"<figcaption>{caption}</figcaption></figure>"
            )
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>"
        + "".join(body)
        + extra
        + "</body></html>"
    )


_MANIFEST = ".ragmetrics-plots"  # the plots a markdown report wrote in its folder


def _forget_old_plots(folder: Path, written: list[Path]) -> None:
    """Remove the plots an earlier report wrote in ``folder`` that this one did not (they
    are listed in its manifest); any other file there, the user's own ``plot1.png``
    included, is left alone."""
    manifest = folder / _MANIFEST
    before = manifest.read_text(encoding="utf-8").split() if manifest.exists() else []
    now = {p.name for p in written}
    for name in before:
        if name not in now and "/" not in name and name.endswith(".png"):
            (folder / name).unlink(missing_ok=True)
    if written:
        write_text(manifest, "\n".join(sorted(now)) + "\n")
    elif manifest.exists():
        manifest.unlink()


def write_report(
    comparison: Comparison,
    path: str | Path,
    *,
    qrels: Qrels | Mapping[str, Mapping[str, int]] | None = None,
    runs: Mapping[str, Run | Mapping[str, Any]] | None = None,
    title: str = "Retrieval evaluation",
    worst: int = 5,
    plots: bool = True,
    inputs: Mapping[str, str] | None = None,
    labels: Any = None,
    dataset: RetrievalDataset | None = None,
    explorer: bool = True,
    explorer_k: int = 10,
    **options: Any,
) -> Path:
    """Write the report of ``comparison`` to ``path`` (``.html`` or ``.md``).

    An HTML report ends with a per-query explorer (``explorer=True``): every query x metric
    x run in a sortable, filterable table, and for a clicked query each run's top
    ``explorer_k`` with grades (and texts from ``dataset``'s corpus and questions), the
    evidence each missed, and two runs side by side. One file, no network; the table reads
    with scripts off.

    ``qrels`` and ``runs`` (the ones compared) add the metric@k curve; ``worst`` queries of the
    baseline (or first run) are diagnosed by its first set metric, else its first metric.
    ``inputs`` (name -> file) are listed in the settings block, with the versions, the
    evaluation's settings and the test's. ``labels`` says where the grades came from: a
    :class:`ragmetrics.goldset.GoldSet`, the path of one saved with ``GoldSet.save``, or a
    sentence; by default the golden-set sidecar beside ``inputs["qrels"]``, when there is one.
    """
    if not isinstance(path, str | os.PathLike):
        raise RagMetricsError(f"The report path must be a path; got {type(path).__name__}.")
    target = Path(path)
    if target.suffix.lower() not in {".html", ".htm", ".md"}:
        raise RagMetricsError(f"The report path must end in .html or .md; got {target.name!r}.")
    if not isinstance(comparison, Comparison):
        raise RagMetricsError(
            f"write_report takes a Comparison (from ragmetrics.compare); got "
            f"{type(comparison).__name__}."
        )
    for name, value in (("explorer_k", explorer_k), ("worst", worst)):
        low = 1 if name == "explorer_k" else 0
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise RagMetricsError(f"{name} must be an integer >= {low}; got {value!r}.")
    qrels = None if qrels is None else as_qrels(qrels)
    if not isinstance(title, str):
        raise RagMetricsError(f"title must be a string; got {type(title).__name__}.")
    if inputs is not None and not (
        isinstance(inputs, Mapping) and all(isinstance(v, str) for v in inputs.values())
    ):
        raise RagMetricsError(f"inputs must map names to file names; got {inputs!r}.")
    for name, flag in (("plots", plots), ("explorer", explorer)):
        if not isinstance(flag, bool):
            raise RagMetricsError(f"{name} must be True or False; got {flag!r}.")
    if dataset is not None and not isinstance(dataset, RetrievalDataset):
        raise RagMetricsError(f"dataset must be a RetrievalDataset; got {type(dataset).__name__}.")
    if runs is not None and not isinstance(runs, Mapping):
        raise RagMetricsError(f"runs must map run names to runs; got {type(runs).__name__}.")
    named = None if runs is None else {str(n): as_run(r) for n, r in runs.items()}
    described = _labels(labels, inputs)
    plots = plots and importlib.util.find_spec("matplotlib") is not None
    figures = _figures(comparison, qrels, named, options) if plots else []
    blocks = _document(comparison, title, figures, worst, inputs, described)
    if not plots:
        blocks.append(_Text('No plots: they need matplotlib (`pip install "ragmetrics[plot]"`).'))
    if target.suffix.lower() == ".md":
        folder = target.with_name(target.stem + "_files")
        written: list[Path] = []
        write_text(target, _render_markdown(blocks, folder, written))
        _forget_old_plots(folder, written)
    else:
        extra = ""
        if explorer:
            from ragmetrics.report._explorer import explorer_html

            extra = explorer_html(
                comparison,
                qrels=qrels,
                runs=named,
                corpus=None if dataset is None else dataset.corpus,
                queries=None if dataset is None else dataset.queries,
                k=explorer_k,
            )
        write_text(target, _render_html(blocks, title, extra))
    return target


def _labels(labels: Any, inputs: Mapping[str, str] | None) -> str | None:
    """The report's line on where the grades came from (see :func:`write_report`)."""
    from ragmetrics import goldset

    if isinstance(labels, goldset.GoldSet):
        return labels.describe()
    if isinstance(labels, os.PathLike) or (isinstance(labels, str) and _is_file(labels)):
        described = goldset.labels_of(labels)
        if described is None:
            raise RagMetricsError(
                f"labels={str(labels)!r} has no golden-set sidecar beside it ("
                f"{Path(labels).name}.json, written by GoldSet.save); pass a sentence saying "
                f"where the labels came from instead."
            )
        return described
    if isinstance(labels, str):
        return labels
    if labels is not None:
        raise RagMetricsError(
            f"labels must be a GoldSet, the path of a saved one, or a sentence; got "
            f"{type(labels).__name__}."
        )
    qrels_path = (inputs or {}).get("qrels")
    return goldset.labels_of(qrels_path) if qrels_path and _is_file(qrels_path) else None


def _is_file(text: str) -> bool:
    """Whether ``text`` names a file (a sentence too long for a path, or holding a NUL, does
    not)."""
    try:
        return Path(text).is_file()
    except (OSError, ValueError):
        return False


_STYLE = " ".join(
    [
        "body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;max-width:1100px;",
        "margin:2em auto;padding:0 1em;color:#222}",
        "table{border-collapse:collapse;margin:0.5em 0 1em}",
        "th,td{border:1px solid #ddd;padding:4px 6px;font-size:13px}th{background:#f4f6f8}",
        "th{overflow-wrap:anywhere;min-width:4em}td{font-variant-numeric:tabular-nums}",
        "caption{font-weight:600;padding:4px}figure{display:inline-block;margin:0 1em 1em 0}",
        "img{max-width:100%;border:1px solid #eee}.meta{color:#777}",
        ".text{font-size:14px}",
        ".scroll{overflow-x:auto;max-width:100%}",
        "code{background:#f4f6f8;padding:0 3px}",
    ]
)
