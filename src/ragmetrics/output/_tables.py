"""Plain-text, markdown, CSV and HTML renderings of small tables."""

from __future__ import annotations

import io
import re
from collections.abc import Sequence

from ragmetrics.errors import RagMetricsError

Cell = str | float | int | None


def format_cell(value: Cell, digits: int = 4) -> str:
    if value is None:
        return "NA"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return "NA" if value != value else f"{value:.{digits}f}"
    return str(value)


def markdown_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[Cell]],
    *,
    digits: int = 4,
    align_right_from: int = 1,
) -> str:
    cells = [[format_cell(c, digits) for c in row] for row in rows]
    lines = ["| " + " | ".join(_escape_md(h) for h in headers) + " |"]
    lines.append(
        "|"
        + "|".join("---:" if i >= align_right_from else "---" for i in range(len(headers)))
        + "|"
    )
    lines += ["| " + " | ".join(_escape_md(c) for c in row) + " |" for row in cells]
    return "\n".join(lines)


def text_table(headers: Sequence[str], rows: Sequence[Sequence[Cell]], *, digits: int = 4) -> str:
    cells = [[visible(format_cell(c, digits)) for c in row] for row in rows]
    headers = [visible(h) for h in headers]
    widths = [len(h) for h in headers]
    for row in cells:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]

    def line(values: Sequence[str]) -> str:
        first = values[0].ljust(widths[0])
        rest = [v.rjust(w) for v, w in zip(values[1:], widths[1:], strict=True)]
        return "  ".join([first, *rest]).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(list(headers)), rule, *(line(r) for r in cells)])


def csv_table(headers: Sequence[str], rows: Sequence[Sequence[Cell]]) -> str:
    import csv  # here: only CSV output needs it

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([_csv_text(h) for h in headers])
    for row in rows:
        writer.writerow(
            ["" if c is None else (repr(c) if isinstance(c, float) else _csv_text(c)) for c in row]
        )
    return buffer.getvalue()


_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def _csv_text(cell: object) -> object:
    """A text cell that a spreadsheet would run as a formula (``=HYPERLINK(...)``,
    ``+cmd|...``, ``@SUM(1)``) starts with a quote, as OWASP advises, unless it is a plain
    number (a query id ``-1`` stays ``-1``)."""
    if not isinstance(cell, str) or not cell.startswith(_FORMULA_STARTS):
        return cell
    try:
        float(cell)
    except ValueError:
        return "'" + cell
    return cell


def html_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[Cell]],
    *,
    digits: int = 4,
    bold: set[tuple[int, int]] | None = None,
    caption: str | None = None,
) -> str:
    import html  # here: the command line never renders HTML

    bold = bold or set()
    parts = ["<table>"]
    if caption:
        parts.append(f"<caption>{html.escape(caption)}</caption>")
    parts.append(
        "<thead><tr>"
        # a long metric name may wrap before its cutoff or its parameters, not inside a word
        + "".join(
            f"<th>{html.escape(h).replace('@', '<wbr>@').replace('(', '<wbr>(')}</th>"
            for h in headers
        )
        + "</tr></thead>"
    )
    parts.append("<tbody>")
    for r, row in enumerate(rows):
        tds = []
        for c, value in enumerate(row):
            text = html.escape(format_cell(value, digits))
            # a number keeps its alignment when bold or marked (0.7030▲, 0.6923 ab)
            numeric = c > 0 and _numeric(value, _MARKS.sub("", text))
            if (r, c) in bold:
                text = f"<b>{text}</b>"
            align = ' style="text-align:right"' if numeric else ""
            tds.append(f"<td{align}>{text}</td>")
        parts.append("<tr>" + "".join(tds) + "</tr>")
    parts.append("</tbody></table>")
    return "".join(parts)


_MARKS = re.compile(r"(\s?[▲▼*]+|\s[a-z]{1,5})$")  # a significance mark, group letters
_NUMBERISH = re.compile(r"[<\[\]()+\-0-9., /*%]+|NA")


def _numeric(value: Cell, text: str) -> bool:
    """A number, or text that reads as one (``0.115``, ``< 0.0001``, ``[-0.1, +0.2]``,
    ``3/1/2``): aligned right; words stay left."""
    return isinstance(value, (int, float)) or bool(_NUMBERISH.fullmatch(text))


def visible(text: str) -> str:
    """``text`` with every character that is not printable (controls, terminal escape
    sequences, line breaks, format characters) written as its Python escape, so that an id
    shows as what it is and cannot move a terminal's cursor or break a table's line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


_MARKDOWN = {c: "\\" + c for c in "\\`[]|"} | {"<": "&lt;", ">": "&gt;", "&": "&amp;"}
_MARKDOWN_ESCAPES = str.maketrans(_MARKDOWN)


def escape_markdown(text: str) -> str:
    """``text`` as literal markdown: no raw HTML (``<``, ``>``, ``&``), no code span, link
    or table cell boundary (backtick, brackets, ``|``), and no line break or control
    character (see :func:`visible`)."""
    return visible(text).translate(_MARKDOWN_ESCAPES)


def _escape_md(text: str) -> str:
    return escape_markdown(text)


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "▲": r"$\blacktriangle$",
    "▼": r"$\blacktriangledown$",
}


def escape_latex(text: str) -> str:
    """``text`` with LaTeX's special characters escaped.

    Example:
        >>> print(escape_latex("ndcg@10_a & 50%"))
        ndcg@10\\_a \\& 50\\%
    """
    return "".join(_LATEX_SPECIAL.get(char, char) for char in visible(text))


def latex_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    bold: set[tuple[int, int]] | None = None,
    marks: dict[tuple[int, int], str] | None = None,
    caption: str | None = None,
    label: str | None = None,
) -> str:
    """A booktabs table (``\\usepackage{booktabs}``): the first column left-aligned, the
    others right-aligned; cells already formatted as text (escaped here); ``bold`` cells
    (row, column) in bold; ``marks`` raw LaTeX appended to a cell (significance marks)."""
    bold = bold or set()
    marks = marks or {}
    lines = [r"\begin{table}[t]", r"\centering"]
    if caption:
        lines.append(rf"\caption{{{escape_latex(caption)}}}")
    if label:
        if re.fullmatch(r"[A-Za-z0-9:._\-]+", label) is None:
            raise RagMetricsError(
                f"A LaTeX label holds letters, digits and ':', '.', '_', '-' only (tab:results); "
                f"got {label!r}."
            )
        lines.append(rf"\label{{{label}}}")
    lines += [
        r"\begin{tabular}{l" + "r" * (len(headers) - 1) + "}",
        r"\toprule",
        " & ".join(escape_latex(h) for h in headers) + r" \\",
        r"\midrule",
    ]
    for r, row in enumerate(rows):
        cells = []
        for c, cell in enumerate(row):
            text = escape_latex(cell)
            if (r, c) in bold:
                text = rf"\textbf{{{text}}}"
            cells.append(text + marks.get((r, c), ""))
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def interval_text(low: float, high: float) -> str:
    """A paired difference's interval, ``[-0.0781, +0.0312]``; an end at exactly 0 reads
    ``0 (ties)``: the queries that differ all differ one way and the rest tie, so no shift
    past 0 survives the test (``Comparison.tests_legend`` says so to the reader)."""

    def end(value: float) -> str:
        return "0 (ties)" if value == 0.0 else f"{value:+.4f}"

    return f"[{end(low)}, {end(high)}]"
