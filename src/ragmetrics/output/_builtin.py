"""The built-in formats: text, markdown, LaTeX, CSV, HTML and JSON, for an evaluation's
result and for a comparison. Each reads the value's rows and notes; none computes a number."""

from __future__ import annotations

import html
import math
import re
from typing import Any

from ragmetrics.output._tables import (
    csv_table,
    escape_latex,
    format_cell,
    html_table,
    latex_table,
    markdown_table,
    text_table,
)

__all__ = ["FORMATS"]


# --- an evaluation's result ---------------------------------------------------------------


def result_text(result: Any, *, per_query: bool = False, digits: int = 4) -> str:
    headers, rows = result.table_rows(per_query)
    note = result.note()
    return text_table(headers, rows, digits=digits) + (f"\n\n{note}" if note else "")


def result_markdown(result: Any, *, per_query: bool = False, digits: int = 4) -> str:
    headers, rows = result.table_rows(per_query)
    return "\n\n".join([markdown_table(headers, rows, digits=digits), result.note()])


def result_latex(
    result: Any,
    *,
    per_query: bool = False,
    digits: int = 4,
    caption: str | None = None,
    label: str | None = None,
) -> str:
    headers, rows = result.table_rows(per_query)
    text_rows = [[format_cell(cell, digits) for cell in row] for row in rows]
    return latex_table(headers, text_rows, caption=caption, label=label)


def result_csv(result: Any, *, per_query: bool = False) -> str:
    headers, rows = result.table_rows(per_query)
    return csv_table(headers, rows)


def result_html(result: Any, *, per_query: bool = False) -> str:
    headers, rows = result.table_rows(per_query)
    name = result.run_name
    caption = f"ragmetrics: {name}" if name else "ragmetrics evaluation"
    return html_table(headers, rows, caption=caption) + f"<p><small>{result.note()}</small></p>"


def as_json(value: Any, *, indent: int | None = None, **options: Any) -> str:
    """Valid JSON: a number that is not finite (an NA, or the open end of an interval that
    too few queries leave unbounded) is null, never JSON's missing ``NaN``/``Infinity``."""
    import json  # here: a value that is not written as JSON never loads it

    payload = _finite(value.to_dict(**options))
    return json.dumps(payload, indent=indent, ensure_ascii=False, allow_nan=False)


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


# --- a comparison -------------------------------------------------------------------------


def comparison_text(comparison: Any) -> str:
    headers, rows = comparison.means_rows("")
    text = f"{text_table(headers, rows)}\n\n{comparison.legend(bold=False)}"
    latency = comparison.latency_rows()
    if latency is not None:
        text += "\n\nRetrieval latency:\n" + text_table(*latency)
    return text


def comparison_markdown(comparison: Any) -> str:
    headers, rows = comparison.means_rows("**")
    return f"{markdown_table(headers, rows)}\n\n{comparison.legend()}"


def comparison_latex(
    comparison: Any, *, digits: int = 4, caption: str | None = None, label: str | None = None
) -> str:
    """The best mean of each column in bold, significance marks as superscripts (triangles
    against the baseline, letters otherwise; ``amssymb``), the legend as the caption unless
    one is given."""
    marks = comparison.marks()
    headers = ["run", *comparison.metrics]
    rows, bold, raw = [], set(), {}
    for r, name in enumerate(comparison.runs):
        rows.append(
            [f"{name} (baseline)" if name == comparison.baseline else name]
            + [format_cell(comparison.means[name][m], digits) for m in comparison.metrics]
        )
        for c, metric in enumerate(comparison.metrics, start=1):
            if comparison.best(metric) == name:
                bold.add((r, c))
            mark = marks.get((name, metric), "").strip()
            if mark:
                symbols = mark.replace("▲", r"\blacktriangle").replace("▼", r"\blacktriangledown")
                raw[(r, c)] = (
                    f"$^{{{symbols}}}$"
                    if "\\" in symbols
                    else rf"\textsuperscript{{{escape_latex(mark)}}}"
                )
    legend = caption if caption is not None else comparison.legend(bold=False)
    return latex_table(headers, rows, bold=bold, marks=raw, caption=legend, label=label)


def comparison_csv(comparison: Any) -> str:
    headers, rows = comparison.means_rows("")
    return csv_table(headers, rows)


def comparison_html(comparison: Any) -> str:
    headers, rows = comparison.means_rows("")
    bold = {
        (r, c + 1)
        for r, name in enumerate(comparison.runs)
        for c, m in enumerate(comparison.metrics)
        if comparison.best(m) == name
    }
    # the legend's `names` are markdown code spans: <code> here, never literal backticks
    legend = re.sub(r"`([^`]*)`", r"<code>\1</code>", html.escape(comparison.legend(), quote=False))
    return html_table(headers, rows, bold=bold) + f"<p><small>{legend}</small></p>"


# name, summary, result renderer, comparison renderer
FORMATS = (
    ("text", "a plain-text table for terminals", result_text, comparison_text),
    ("markdown", "a markdown table and its notes", result_markdown, comparison_markdown),
    ("latex", "a booktabs LaTeX table", result_latex, comparison_latex),
    ("csv", "comma-separated values", result_csv, comparison_csv),
    ("html", "an HTML table (the notebook display)", result_html, comparison_html),
    ("json", "the value as JSON", as_json, as_json),
)
