"""The report's per-query explorer: every query x metric x run in one sortable, filterable
table, and a view of one query (each run's top k with grades and text, the evidence each
missed, two runs side by side with what changed).

Everything is in the page: the table is plain HTML (readable with scripts off), the query
views are drawn by a small inline script from one JSON block (doc ids and texts stored once,
rankings as numbers), so 1,000 queries x 5 runs stay within a few megabytes. No network.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping
from itertools import chain, repeat
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmetrics.metrics.registry import Scale

if TYPE_CHECKING:
    from ragmetrics.analysis._comparison import Comparison
    from ragmetrics.data._qrels import Qrels
    from ragmetrics.data._run import Run

__all__ = ["TEXT_BUDGET", "explorer_html"]

TEXT_BUDGET = 1_500_000  # characters of document text the page may carry, at most
_SNIPPET = 240  # characters of each document's text shown


def explorer_html(
    comparison: Comparison,
    *,
    qrels: Qrels | None = None,
    runs: Mapping[str, Run] | None = None,
    corpus: Mapping[str, str] | None = None,
    queries: Mapping[str, str] | None = None,
    k: int = 10,
) -> str:
    """The explorer as an HTML fragment (a ``<section>`` with its data and script).

    ``qrels`` and ``runs`` default to the ones each result of ``comparison`` evaluated (a
    streamed result keeps none: then only the table is shown). ``corpus`` (doc id -> text)
    and ``queries`` (query id -> text) add texts to the views.
    """
    names = list(comparison.runs)
    metrics = list(comparison.metrics)
    first = comparison.results[names[0]]
    query_ids = list(first.query_ids)
    runs = dict(runs) if runs is not None else _evaluated_runs(comparison)
    qrels = qrels if qrels is not None else first.evaluated_qrels
    values = _values(comparison, query_ids)
    data = _data(comparison, query_ids, values, qrels, runs, corpus, queries, k)
    payload = json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    payload = payload.replace("<", "\\u003c")  # nothing in it can end the script element
    return (
        "<section id='rm-explorer'>"
        "<h2>Per-query explorer</h2>"
        f"<p class='text'>Every query's value of each metric for each run ({len(query_ids):,} "
        f"queries, {len(names)} runs, {len(metrics)} metrics). Click a column to sort, type "
        "to filter, click a query to see each run's top "
        f"{k} with grades{' and text' if data['docs_text'] else ''}, the evidence it missed, "
        "and two runs side by side.</p>"
        "<noscript><p class='text'><b>Scripts are off:</b> the table below holds every "
        "value; the query views need scripts.</p></noscript>"
        + _controls(names, metrics)
        + "<div id='rm-view' class='rm-view' hidden></div>"
        + _table(comparison, query_ids, values, queries)
        + f"<script type='application/json' id='rm-data'>{payload}</script>"
        + f"<style>{_STYLE}</style><script>{_SCRIPT}</script>"
        + "</section>"
    )


def _evaluated_runs(comparison: Comparison) -> dict[str, Run]:
    runs = {}
    for name, result in comparison.results.items():
        run = result.evaluated_run
        if run is not None:
            runs[name] = run
    return runs


def _controls(names: list[str], metrics: list[str]) -> str:
    def options(values: list[str], selected: int = 0) -> str:
        return "".join(
            f"<option value='{i}'{' selected' if i == selected else ''}>{html.escape(v)}</option>"
            for i, v in enumerate(values)
        )

    metric_options = "<option value='-1'>every metric</option>" + options(metrics, -1)
    return (
        "<div class='rm-controls'>"
        "<label>filter <input id='rm-filter' type='search' placeholder='query id or text'>"
        "</label> "
        f"<label>metric <select id='rm-metric'>{metric_options}</select></label> "
        f"<label>run A <select id='rm-a'>{options(names, 0)}</select></label> "
        f"<label>run B <select id='rm-b'>{options(names, min(1, len(names) - 1))}</select>"
        "</label> <span id='rm-shown'></span></div>"
    )


def _table(
    comparison: Comparison,
    query_ids: list[str],
    values: dict[str, np.ndarray],
    queries: Mapping[str, str] | None,
) -> str:
    names = list(comparison.runs)
    metrics = list(comparison.metrics)
    head = ["<th data-col='0'>query</th>"]
    column = 1
    if queries:
        head.append(f"<th data-col='{column}'>question</th>")
        column += 1
    for m, metric in enumerate(metrics):
        for name in names:
            head.append(
                f"<th data-col='{column}' data-metric='{m}' class='num'>"
                f"{html.escape(metric)}<br><small>{html.escape(name)}</small></th>"
            )
            column += 1
    # one list of cells per column (metric by metric, each run's), in the rows' order
    columns = []
    for m in range(len(metrics)):
        for name in names:
            columns.append(
                [
                    f"<td class='num' data-metric='{m}'>"
                    f"{'NA' if math.isnan(value) else f'{value:.4f}'}</td>"
                    for value in values[name][:, m].tolist()
                ]
            )
    firsts = [f"<td class='q'>{html.escape(query_id)}</td>" for query_id in query_ids]
    if queries:
        texts = [f"<td class='t'>{html.escape(queries.get(q, ''))}</td>" for q in query_ids]
        firsts = [a + b for a, b in zip(firsts, texts, strict=True)]
    body = [
        f"<tr data-row='{row}'>{first}{''.join(cells)}</tr>"
        for row, (first, *cells) in enumerate(zip(firsts, *columns, strict=True))
    ]
    return (
        "<div class='scroll rm-table'><table id='rm-queries'><thead><tr>"
        + "".join(head)
        + "</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table></div>"
    )


def _values(comparison: Comparison, query_ids: list[str]) -> dict[str, np.ndarray]:
    """Each run's values for ``query_ids`` (rows) x the comparison's metrics (columns), NaN
    where it has none: the table and the views both read them."""
    out = {}
    for name, result in comparison.results.items():
        matrix = np.column_stack([result.column(m) for m in comparison.metrics])
        if list(result.query_ids) != query_ids:
            where = dict(zip(result.query_ids, range(len(result.query_ids))))
            rows = np.fromiter(map(where.get, query_ids, repeat(-1)), np.int64, len(query_ids))
            aligned = np.full((len(query_ids), matrix.shape[1]), np.nan)
            aligned[rows >= 0] = matrix[rows[rows >= 0]]
            matrix = aligned
        out[name] = matrix
    return out


def _data(
    comparison: Comparison,
    query_ids: list[str],
    values: dict[str, np.ndarray],
    qrels: Qrels | None,
    runs: Mapping[str, Run],
    corpus: Mapping[str, str] | None,
    queries: Mapping[str, str] | None,
    k: int,
) -> dict[str, Any]:
    """What the views draw from: doc ids once (``docs``), per query its grades and each
    run's top ``k`` as indexes into ``docs``. Made a column at a time (each run's top ``k``
    read as its first ``k`` docs, never the whole ranking as strings)."""
    names = list(comparison.runs)
    metrics = list(comparison.metrics)
    tops = [_tops(runs.get(name), query_ids, k) for name in names]
    empty: Mapping[str, int] = {}
    grades = [qrels.get(query_id, empty) if qrels is not None else empty for query_id in query_ids]
    # each doc numbered once, in the order first met: the runs' tops, then the grades
    docs = dict.fromkeys(
        chain(
            *(chain.from_iterable(run_tops) for run_tops in tops),
            chain.from_iterable(grades),
        )
    )
    number = dict(zip(docs, range(len(docs))))
    numbered = [[list(map(number.__getitem__, top)) for top in run_tops] for run_tops in tops]
    judged = [[[number[d], g] for d, g in graded.items()] for graded in grades]
    shown = []
    for name in names:
        matrix = values[name]
        rounded = np.round(matrix, 6).astype(object)
        rounded[np.isnan(matrix)] = None
        shown.append(rounded.tolist())
    per_query = [
        {"t": list(t), "g": g, "v": list(v)}
        for t, g, v in zip(zip(*numbered), judged, zip(*shown), strict=True)
    ]
    texts: list[str | None] = []
    used = 0
    if corpus:
        for doc_id in docs:
            text = corpus.get(doc_id)
            if text is None or used > TEXT_BUDGET:
                texts.append(None)
                continue
            snippet = " ".join(text.split())[:_SNIPPET]
            used += len(snippet)
            texts.append(snippet)
    first = comparison.results[comparison.runs[0]]
    utility = any(first.metric(m).spec.scale is Scale.UTILITY for m in comparison.metrics)
    threshold = first.settings.get("relevance_threshold")
    threshold = 1 if threshold is None else threshold  # 0 is a threshold too
    return {
        "metrics": metrics,
        "higher": [first.metric(m).higher_is_better for m in metrics],
        "names": names,
        "runs": names if runs else [],
        "k": k,
        "relevant": 4 if utility else threshold,
        "ids": query_ids,
        "qtext": [queries.get(q, "") for q in query_ids] if queries else [],
        "docs": list(docs),
        "docs_text": texts,
        "texts_cut": bool(corpus) and used > TEXT_BUDGET,
        "q": per_query,
    }


def _tops(run: Run | None, query_ids: list[str], k: int) -> list[tuple[str, ...]]:
    """The first ``k`` docs of ``run``'s ranking of each of ``query_ids`` (none where the
    run has no ranking of it, or there is no run)."""
    if run is None:
        return [()] * len(query_ids)
    rankings = run.truncate(k).rankings()
    where = dict(zip(run.query_ids, range(len(run.query_ids))))
    none: tuple[str, ...] = ()
    return [
        none if (row := where.get(query_id)) is None else rankings[row] for query_id in query_ids
    ]


_STYLE = """
#rm-explorer .rm-controls{margin:.5em 0;display:flex;flex-wrap:wrap;gap:.6em;align-items:center}
#rm-explorer th{cursor:pointer;user-select:none}
#rm-explorer th.sorted-asc::after{content:' \\25B2'}
#rm-explorer th.sorted-desc::after{content:' \\25BC'}
#rm-explorer tbody tr{cursor:pointer}
#rm-explorer tbody tr:hover{background:#eef3fb}
#rm-explorer tr.rm-open{background:#dbe7fa}
#rm-explorer .rm-table{max-height:32em;overflow:auto}
#rm-explorer .rm-view{border:1px solid #ccd;padding:.6em;margin:.6em 0;background:#fafbfe}
#rm-explorer .rm-cols{display:flex;gap:1em;flex-wrap:wrap}
#rm-explorer .rm-col{flex:1 1 20em;min-width:16em}
#rm-explorer ol{padding-left:2em;margin:.3em 0}
#rm-explorer li.rm-new{background:#e3f6e3}
#rm-explorer li.rm-gone{background:#fbe4e4}
#rm-explorer .rm-grade{font-weight:bold;display:inline-block;min-width:4.5em}
#rm-explorer .rm-snip{color:#555;font-size:.85em;display:block}
#rm-explorer td.rm-up{color:#1a7f37;font-weight:bold}
#rm-explorer td.rm-down{color:#c62828;font-weight:bold}
"""

_SCRIPT = r"""
(function () {
  var root = document.getElementById('rm-explorer');
  var data = JSON.parse(document.getElementById('rm-data').textContent);
  var table = document.getElementById('rm-queries');
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var filter = document.getElementById('rm-filter');
  var metric = document.getElementById('rm-metric');
  var pickA = document.getElementById('rm-a');
  var pickB = document.getElementById('rm-b');
  var view = document.getElementById('rm-view');
  var shown = document.getElementById('rm-shown');
  var open = -1;
  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c];
    });
  }
  function refilter() {
    var needle = filter.value.toLowerCase();
    var n = 0;
    rows.forEach(function (row) {
      var i = +row.getAttribute('data-row');
      var hay = (data.ids[i] + ' ' + (data.qtext[i] || '')).toLowerCase();
      var keep = !needle || hay.indexOf(needle) >= 0;
      row.hidden = !keep;
      if (keep) n++;
    });
    shown.textContent = n + ' of ' + rows.length + ' queries';
  }
  function recolumns() {
    var m = metric.value;
    var cells = table.querySelectorAll('[data-metric]');
    for (var i = 0; i < cells.length; i++) {
      cells[i].hidden = m !== '-1' && cells[i].getAttribute('data-metric') !== m;
    }
  }
  function sortBy(th) {
    var col = +th.getAttribute('data-col');
    var down = !th.classList.contains('sorted-desc');
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (c) {
      c.classList.remove('sorted-asc', 'sorted-desc');
    });
    th.classList.add(down ? 'sorted-desc' : 'sorted-asc');
    var numeric = th.classList.contains('num');
    rows.sort(function (x, y) {
      var a = x.cells[col].textContent, b = y.cells[col].textContent;
      if (numeric) {
        a = a === 'NA' ? -Infinity : +a;
        b = b === 'NA' ? -Infinity : +b;
        return down ? b - a : a - b;
      }
      return down ? b.localeCompare(a) : a.localeCompare(b);
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }
  function gradesOf(q) {
    var g = {};
    data.q[q].g.forEach(function (pair) { g[pair[0]] = pair[1]; });
    return g;
  }
  function item(doc, grades, mark) {
    var grade = doc in grades ? 'grade ' + grades[doc] : 'unjudged';
    var text = data.docs_text.length && data.docs_text[doc] ? data.docs_text[doc] : '';
    return '<li class="' + (mark || '') + '"><span class="rm-grade">' + esc(grade) +
      '</span> <code>' + esc(data.docs[doc]) + '</code>' +
      (text ? '<span class="rm-snip">' + esc(text) + '</span>' : '') + '</li>';
  }
  function column(title, q, r, other) {
    var grades = gradesOf(q);
    var top = data.q[q].t[r] || [];
    var theirs = other === null ? null : (data.q[q].t[other] || []);
    var list = top.map(function (doc) {
      var mark = theirs === null ? '' : (theirs.indexOf(doc) < 0 ? 'rm-new' : '');
      return item(doc, grades, mark);
    }).join('');
    var missed = data.q[q].g.filter(function (pair) {
      return pair[1] >= data.relevant && top.indexOf(pair[0]) < 0;
    }).sort(function (a, b) { return b[1] - a[1]; });
    var html = '<div class="rm-col"><h4>' + esc(title) + '</h4>';
    html += top.length ? '<ol>' + list + '</ol>' : '<p>(no ranking)</p>';
    html += '<p><b>missed evidence</b> (grade &ge; ' + data.relevant + ', not in the top ' +
      data.k + '): ' + (missed.length ? '' : 'none') + '</p>';
    if (missed.length) {
      html += '<ul class="rm-missed">' + missed.map(function (pair) {
        return item(pair[0], grades, '');
      }).join('') + '</ul>';
    }
    if (theirs !== null) {
      var gone = theirs.filter(function (doc) { return top.indexOf(doc) < 0; });
      html += '<p><b>left out here, kept by the other run:</b> ' + (gone.length ? '' : 'none') +
        '</p>' + (gone.length ? '<ul>' + gone.map(function (doc) {
          return item(doc, grades, 'rm-gone');
        }).join('') + '</ul>' : '');
    }
    return html + '</div>';
  }
  function fmt(v) { return v === null ? 'NA' : v.toFixed(4); }
  function values(q, a, b) {
    var v = data.q[q].v;
    var html = '<table class="rm-values"><thead><tr><th>metric</th><th>A: ' +
      esc(data.names[a]) + '</th><th>B: ' + esc(data.names[b]) + '</th><th>B - A</th></tr>' +
      '</thead><tbody>';
    data.metrics.forEach(function (name, m) {
      var x = v[a][m], y = v[b][m];
      var diff = x === null || y === null ? null : y - x;
      var better = diff !== null && diff !== 0 && (diff > 0) === data.higher[m];
      var mark = diff === null || diff === 0 ? ''
        : (better ? ' class="rm-up"' : ' class="rm-down"');
      html += '<tr><td>' + esc(name) + '</td><td class="num">' + fmt(x) + '</td><td class="num">' +
        fmt(y) + '</td><td class="num"' + mark + '>' + (diff === null ? 'NA' :
        (diff > 0 ? '+' : '') + diff.toFixed(4)) + '</td></tr>';
    });
    return html + '</tbody></table>';
  }
  function show(q) {
    open = q;
    rows.forEach(function (row) {
      row.classList.toggle('rm-open', +row.getAttribute('data-row') === q);
    });
    var a = +pickA.value, b = +pickB.value;
    var html = '<h3>Query <code>' + esc(data.ids[q]) + '</code></h3>';
    if (data.qtext.length && data.qtext[q]) html += '<p>' + esc(data.qtext[q]) + '</p>';
    html += values(q, a, b);
    if (!data.runs.length) {
      html += '<p>No rankings were kept for this report (streamed runs).</p>';
    } else {
      html += '<div class="rm-cols">' +
        column('A: ' + data.runs[a], q, a, a === b ? null : b) +
        (a === b ? '' : column('B: ' + data.runs[b], q, b, a)) + '</div>';
      html += '<p class="rm-legend">Green: in this run\'s top ' + data.k +
        ' but not in the other\'s. Red: in the other run\'s top ' + data.k + ' only.</p>';
    }
    view.innerHTML = html;
    view.hidden = false;
  }
  filter.addEventListener('input', refilter);
  metric.addEventListener('change', recolumns);
  pickA.addEventListener('change', function () { if (open >= 0) show(open); });
  pickB.addEventListener('change', function () { if (open >= 0) show(open); });
  table.tHead.addEventListener('click', function (e) {
    var th = e.target.closest('th');
    if (th) sortBy(th);
  });
  body.addEventListener('click', function (e) {
    var tr = e.target.closest('tr');
    if (tr) show(+tr.getAttribute('data-row'));
  });
  root.setAttribute('data-ready', '1');
  refilter();
})();
"""
