"""A report a reviewer can read: tables, plots and the worst queries, in one file.

``write_report(comparison, "report.html")`` writes a self-contained HTML page (plots inlined
as PNG); a ``.md`` path writes markdown with the plots in a ``<name>_files/`` folder.
"""

from __future__ import annotations

import base64
import html
import io
import re
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmetrics._table import html_table
from ragmetrics._version import __version__
from ragmetrics.errors import RagMetricsError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ragmetrics.compare import Comparison
    from ragmetrics.qrels import Qrels
    from ragmetrics.run import Run


def _figures(
    comparison: Comparison,
    qrels: Qrels | None,
    runs: Mapping[str, Run] | None,
    options: dict[str, Any],
) -> list[tuple[str, Figure]]:
    from ragmetrics import plots

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
                f"{curve.base_name}@k",
                plots.plot_metric_at_k(qrels, runs, curve.base_name, **options),
            )
        )
    first = comparison.metrics[0]
    figures.append((f"per-query {first}", plots.plot_per_query_distribution(comparison, first)))
    figures.append((f"wins and losses on {first}", plots.plot_win_loss(comparison, first)))
    for labels in plots.decompositions(comparison):
        k = parsed[labels[0]].cutoff
        figures.append(
            (f"RA-nWG@{k} decomposition", plots.plot_rag_decomposition(comparison, labels))
        )
    return figures


def _png(figure: Figure) -> bytes:
    from ragmetrics._optional import import_matplotlib_pyplot

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


def _markdown_to_html(text: str) -> str:
    escaped = html.escape(text)
    escaped = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", escaped)
    escaped = re.sub(r"`(.+?)`", r"<code>\1</code>", escaped)
    lines, items = [], []
    for line in escaped.split("\n"):
        if line.startswith("- "):
            items.append(f"<li>{line[2:]}</li>")
        else:
            if items:
                lines.append("<ul>" + "".join(items) + "</ul>")
                items = []
            lines.append(f"<p>{line}</p>")
    if items:
        lines.append("<ul>" + "".join(items) + "</ul>")
    return "".join(lines)


def write_report(
    comparison: Comparison,
    path: str | Path,
    *,
    qrels: Qrels | None = None,
    runs: Mapping[str, Run] | None = None,
    title: str = "Retrieval evaluation",
    worst: int = 5,
    plots: bool = True,
    **options: Any,
) -> Path:
    """Write the report of ``comparison`` to ``path`` (``.html`` or ``.md``).

    ``qrels`` and ``runs`` (the ones compared) add the metric@k curve; ``worst`` queries of the
    baseline (or first run) are diagnosed by its first set metric, else its first metric.
    """
    target = Path(path)
    if target.suffix.lower() not in {".html", ".htm", ".md"}:
        raise RagMetricsError(f"The report path must end in .html or .md; got {target.name!r}.")
    figures = _figures(comparison, qrels, runs, options) if plots else []
    run, metric, diagnoses = _worst(comparison, worst) if worst else ("", "", [])
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    counts: list[list[Any]] = [
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
    ]
    count_headers = [
        "run",
        "counted",
        "missing from run",
        "not judged",
        "empty rankings",
        "repeated ids dropped",
        "unmatched chunks",
    ]
    if target.suffix.lower() == ".md":
        folder = target.with_name(target.stem + "_files")
        parts = [
            f"# {title}",
            f"ragmetrics {__version__}, {stamp}.",
            "## Means",
            comparison.to_markdown(),
            "## Paired tests",
            comparison.tests_markdown(),
        ]
        from ragmetrics._table import markdown_table

        parts += ["## What was counted", markdown_table(count_headers, counts)]
        if figures:
            folder.mkdir(parents=True, exist_ok=True)
            parts.append("## Plots")
            for number, (caption, figure) in enumerate(figures, start=1):
                image = folder / f"plot{number}.png"
                image.write_bytes(_png(figure))
                parts.append(f"![{caption}]({folder.name}/{image.name})")
        if diagnoses:
            parts.append(f"## The {len(diagnoses)} worst queries of `{run}` by {metric}")
            parts += diagnoses
        target.write_text("\n\n".join(parts) + "\n", encoding="utf-8")
        return target
    body = [
        f"<h1>{html.escape(title)}</h1>",
        f"<p class='meta'>ragmetrics {__version__}, {stamp}.</p>",
        "<h2>Means</h2>",
        comparison._repr_html_(),
        "<h2>Paired tests</h2>",
        _tests_html(comparison),
        "<h2>What was counted</h2>",
        html_table(count_headers, counts),
    ]
    if figures:
        body.append("<h2>Plots</h2>")
        for caption, figure in figures:
            data = base64.b64encode(_png(figure)).decode("ascii")
            body.append(
                f"<figure><img alt='{html.escape(caption)}' src='data:image/png;base64,{data}'>"
                f"<figcaption>{html.escape(caption)}</figcaption></figure>"
            )
    if diagnoses:
        body.append(
            f"<h2>The {len(diagnoses)} worst queries of <code>{html.escape(run)}</code> "
            f"by {html.escape(metric)}</h2>"
        )
        body += [f"<div class='diagnosis'>{_markdown_to_html(d)}</div>" for d in diagnoses]
    page = (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>"
        + "".join(body)
        + "</body></html>"
    )
    target.write_text(page, encoding="utf-8")
    return target


def _tests_html(comparison: Comparison) -> str:
    headers, rows = comparison.test_rows()
    return html_table(headers, rows) + "<p><small>* significant after correction.</small></p>"


_STYLE = " ".join(
    [
        "body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;max-width:1100px;",
        "margin:2em auto;padding:0 1em;color:#222}",
        "table{border-collapse:collapse;margin:0.5em 0 1em}",
        "th,td{border:1px solid #ddd;padding:4px 8px;font-size:13px}th{background:#f4f6f8}",
        "caption{font-weight:600;padding:4px}figure{display:inline-block;margin:0 1em 1em 0}",
        "img{max-width:100%;border:1px solid #eee}.meta{color:#777}",
        ".diagnosis{border-left:3px solid #1b6ca8;padding:0 1em;margin:1em 0;font-size:14px}",
        "code{background:#f4f6f8;padding:0 3px}",
    ]
)
