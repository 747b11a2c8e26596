"""``ragmetrics trec_eval``: trec_eval 10's command line, flags, output and exit codes, on
our metrics.

A script that calls ``trec_eval [flags] QRELS RUN`` can call ``ragmetrics trec_eval`` with
the same arguments and read the same bytes on standard output, with the same exit code:

- flags as trec_eval reads them (``-q -c -n -J -l N -M N -N N -m MEASURE -D N -R FORMAT
  -Z FILE -v -h``),
  combined (``-qc``, ``-M10``, ``-mmap``), in long form (``--measure=map``, unambiguous
  prefixes too) and after the file names;
- measures and sets as trec_eval names them: ``map``, ``P.5,10``, ``iprec_at_recall..1,.5``,
  ``utility.2,-1,0,0``, ``ndcg.1=3,2=9``, ``official``, ``all_trec``, ``set``, ``qrels_jg``,
  ``all_prefs`` (with ``-R qrels_jg``, ``-R prefs``, ``-R qrels_prefs``); a measure's
  first parameter list
  is the one used, cutoffs are sorted and must be distinct, as in trec_eval;
- lines ``%-22s\\t%s\\t%6.4f`` (counts as integers), every query of the qrels in byte order,
  each line's summary accumulated as trec_eval accumulates it (the per-query doubles added
  one by one in that order, then divided), ``runid`` from the run's last line;
- trec_eval's refusals: a judged query with no results without ``-c`` (exit 4), a doc twice
  in the ranking or the judgments of an evaluated query (exit 4), no query in both files
  (exit 7), a malformed measure or flag (exit 1), a file it cannot read (exit 2).

What differs on purpose is listed in docs/cli.md: a score or grade that is not a number is
refused where trec_eval reads it as 0; gzip files and ``-`` for standard input are read;
``-h`` describes the measures in our words.

Three modules, one job each: ``_trec_args`` reads the arguments, ``_trec_measures`` holds
the measure table; this one reads the files, accumulates each measure as trec_eval does and
prints the lines.

Example:
    >>> [m.label for m in measures(["P.10,5", "map"])]
    ['map', 'P_5', 'P_10']
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple

from ragmetrics.cli._trec_args import Options, options
from ragmetrics.cli._trec_measures import (
    BOGUS_DOC,
    MIN_GEO_MEAN,
    VERSION,
    Measure,
    TrecEvalError,
    c_double,
    help_lines,
    measures,
)
from ragmetrics.errors import (
    InputFormatError,
    InvalidParameterError,
    RagMetricsError,
    UnknownMetricError,
)
from ragmetrics.formats._rules import ascii_int, records

__all__ = [
    "Measure",
    "TrecEvalError",
    "add_parser",
    "command",
    "main",
    "measures",
    "run_trec_eval",
]


def run_trec_eval(argv: Sequence[str]) -> Iterator[str]:
    """The lines ``trec_eval ARGV`` prints, one by one; raises :class:`TrecEvalError` with
    trec_eval's exit code where it would stop."""
    given = options(argv)
    if given.version:
        print(f"trec_eval version {VERSION} (ragmetrics)", file=sys.stderr)
        return
    if given.help:
        yield from help_lines(given.specs or [])
        return
    lines = measures(given.specs or [])
    assert given.files is not None
    yield from _evaluate(given, lines)


class _Inputs(NamedTuple):
    """What trec_eval reads from its two files."""

    qrels: Any
    run: Any
    run_id: str
    groups: dict[str, list[dict[str, int]]] | None  # -R qrels_jg
    prefs: dict[str, list[Any]] | None  # -R prefs / qrels_prefs
    judged_twice: dict[str, str]  # query -> the doc it judges twice
    cut_repeats: set[str] | None  # with -M, the queries whose copies fall within the cut


def _evaluate(options: Options, lines: list[Measure]) -> Iterator[str]:
    """The lines trec_eval prints: the files read, the queries chosen, each measure's
    per-query values accumulated as trec_eval does, then printed."""
    import numpy as np  # here: --help and --version start without it

    inputs = _read_inputs(options)
    _check_judgment_format(lines, inputs)
    query_ids, absent, stop = _queries(options, inputs)
    rankings = _rankings(inputs.run, inputs.qrels, query_ids, options, absent)
    if not query_ids:
        raise TrecEvalError("trec_eval: No queries with both results and relevance info", 7)
    values = _values(options, lines, inputs, rankings, query_ids)
    missing = np.array([q in absent for q in query_ids])
    strings = _relstrings(lines, rankings, inputs.qrels, query_ids, missing)
    zscores = _zscores(options.zscores) if options.zscores is not None else None
    columns = _columns(options, lines, values, query_ids, missing, zscores)
    z = "Z" if zscores is not None else ""
    _empty_rankings_divide_by_zero(lines, columns, rankings, inputs.qrels, query_ids, options.level)
    if options.per_query:
        yield from _per_query_lines(lines, columns, strings, query_ids, z)
    if stop is not None:
        raise stop[1]
    if options.summary:
        yield from _summary_lines(options, lines, columns, inputs, query_ids, z)


def _read_inputs(options: Options) -> _Inputs:
    from ragmetrics.data._run import Run

    assert options.files is not None
    qrels_path, run_path = options.files
    if qrels_path == "-" and run_path == "-":
        raise TrecEvalError("ragmetrics trec_eval: only one of QRELS and RUN can be -.", 1)
    try:
        with _local(qrels_path) as qrels_file, _local(run_path) as run_file:
            groups = _read_groups(qrels_file) if options.rel_format == "qrels_jg" else None
            prefs = _read_preferences(qrels_file, options.rel_format)
            judged_twice: dict[str, str] = {}
            if groups is not None:
                qrels = _union(groups)
            elif prefs is not None:
                qrels = _union({q: [{e[2]: 0 for e in entries}] for q, entries in prefs.items()})
            else:
                qrels, judged_twice = _qrels_and_repeats(qrels_file)
            run = Run.from_trec(run_file)
            cut_repeats = None
            if run.duplicates and options.max_docs is not None:  # only copies in the cut
                cut_repeats = set(_repeated_within(run_file, set(run.duplicates), options.max_docs))
            return _Inputs(qrels, run, _run_id(run_file), groups, prefs, judged_twice, cut_repeats)
    except (RagMetricsError, OSError) as exc:
        raise TrecEvalError(f"ragmetrics trec_eval: {exc}", 2) from exc


def _check_judgment_format(lines: list[Measure], inputs: _Inputs) -> None:
    """A measure of another judgment format stops trec_eval at the first query (exit 4)."""
    grouped, preferences = inputs.groups is not None, inputs.prefs is not None
    for m in lines:
        if m.metric is not None and (m.per_group != grouped or m.preference != preferences):
            raise TrecEvalError(f"trec_eval: Can't calculate measure '{m.label}'", 4)


def _queries(
    options: Options, inputs: _Inputs
) -> tuple[list[str], list[str], tuple[str, TrecEvalError] | None]:
    """The queries scored, those of them the run lacks (-c), and where trec_eval stops
    with which error: it stops at the first query it cannot score, after printing those
    before it."""
    run = inputs.run
    query_ids = sorted(inputs.qrels.query_ids)
    if options.debug_query is not None:
        query_ids = [q for q in query_ids if q == options.debug_query]
    absent = [q for q in query_ids if q not in run]
    stops: list[tuple[str, TrecEvalError]] = []
    if absent and not options.complete:
        stops.append(
            (absent[0], TrecEvalError(f"trec_eval: result qid '{absent[0]}' not found in qrels", 4))
        )
    copies = run.duplicates if inputs.cut_repeats is None else inputs.cut_repeats
    repeated = [q for q in query_ids if q in copies]
    if repeated:
        message = (
            f"trec_eval.form_res_qrels: duplicate docs in the ranking of query '{repeated[0]}'"
        )
        stops.append((repeated[0], TrecEvalError(message, 4)))
    # a doc judged twice stops trec_eval at its query too (after the run's own checks)
    if inputs.groups is None and inputs.prefs is None:
        judged_twice = inputs.judged_twice
        twice = [q for q in query_ids if q in judged_twice and (options.complete or q in run)]
        if twice:
            message = f"trec_eval.form_res_rels: duplicate docs {judged_twice[twice[0]]}"
            stops.append((twice[0], TrecEvalError(message, 4)))
    stop = min(stops, key=lambda found: found[0]) if stops else None  # the first, ties in order
    if stop is not None:
        query_ids = query_ids[: query_ids.index(stop[0])]
        absent = []
        if not query_ids:
            raise stop[1]
    return query_ids, absent, stop


def _values(
    options: Options, lines: list[Measure], inputs: _Inputs, rankings: Any, query_ids: list[str]
) -> dict[str, Any]:
    """Each metric's value per query (in ``query_ids`` order), by the judgment format."""
    from ragmetrics.engine._evaluation import evaluate

    metrics = list(
        dict.fromkeys(
            _with_collection(m, options.n_docs)
            for m in lines
            if m.metric is not None and not m.preference and not m.constant_zero
        )
    )
    if inputs.prefs is not None:
        return _preference_values(inputs.prefs, rankings, query_ids, lines, options.max_docs)
    if not metrics:
        return {}
    if inputs.groups is not None:
        return _group_values(inputs.groups, rankings, query_ids, metrics, options.level)
    result = evaluate(
        inputs.qrels, rankings, metrics, relevance_threshold=options.level, missing="skip"
    )
    position = {q: i for i, q in enumerate(result.query_ids)}
    order = [position[q] for q in query_ids]
    return {metric: result.values[order, index] for index, metric in enumerate(metrics)}


def _columns(
    options: Options,
    lines: list[Measure],
    values: dict[str, Any],
    query_ids: list[str],
    missing: Any,
    zscores: dict[str, dict[str, tuple[float, float]]] | None,
) -> dict[str, Any]:
    """Each line's per-query values as trec_eval accumulates them (logarithms for the
    geometric means), turned into z-scores with -Z."""
    import numpy as np

    columns: dict[str, Any] = {}
    for line in lines:
        if line.metric is None:
            continue
        series = (
            np.zeros(len(query_ids))
            if line.constant_zero
            else values[_with_collection(line, options.n_docs)]
        )
        if line.zero_if_missing:
            series = np.where(missing, 0.0, series)
        if line.summary == "gm":  # C's log, value by value (numpy's may differ in a bit)
            floored = np.maximum(series, MIN_GEO_MEAN).tolist()
            series = np.array([math.log(v) if v == v else v for v in floored])
        if zscores is not None:
            series = _standardized(series, line.label, query_ids, zscores)
        columns[line.label] = series
    return columns


def _per_query_lines(
    lines: list[Measure],
    columns: dict[str, Any],
    strings: dict[str, list[str]],
    query_ids: list[str],
    z: str,
) -> Iterator[str]:
    # each column's values as printed, made column by column (half a million lines for a
    # run of 5,000 queries and all_trec), and each line's name as printed
    printed = [
        line
        for line in lines
        if line.per_query and (line.value == "string" or line.metric is not None)
    ]
    names = [f"{'' if line.value == 'string' else z}{line.label:<22}" for line in printed]
    shown = [
        [f"'{text}'" for text in strings[line.label]]
        if line.value == "string"
        else _shown(line, columns[line.label].tolist(), z)
        for line in printed
    ]
    for row, query_id in enumerate(query_ids):
        for name, column in zip(names, shown, strict=True):
            yield f"{name}\t{query_id}\t{column[row]}"


def _summary_lines(
    options: Options,
    lines: list[Measure],
    columns: dict[str, Any],
    inputs: _Inputs,
    query_ids: list[str],
    z: str,
) -> Iterator[str]:
    for line in lines:
        if line.value == "runid":
            yield f"{'runid':<22}\tall\t{inputs.run_id}"
        elif line.value == "num_q":
            yield _line(line, "all", float(len(query_ids)), z)
        elif line.summary == "judged_relevant" and options.complete:
            yield _line(line, "all", float(inputs.qrels.n_positive), z)
        elif line.metric is not None:
            yield _line(line, "all", _summary(line, columns[line.label]), z)


MISSING_ZSCORE = -1000000.0  # trec_eval's value where -Z has no mean for a query's measure


def _zscores(path: str) -> dict[str, dict[str, tuple[float, float]]]:
    """``-Z``'s file: lines ``query measure mean stddev`` (any blanks between)."""
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TrecEvalError(f"trec_eval.get_zscores: Cannot read zscores file '{path}'", 2) from exc
    table: dict[str, dict[str, tuple[float, float]]] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 4:
            raise TrecEvalError(f"trec_eval.get_zscores: Malformed line {number}", 2)
        query, measure, mean, stddev = fields
        table.setdefault(query, {})[measure] = (c_double(mean), c_double(stddev))
    return table


def _standardized(
    series: Any, label: str, query_ids: list[str], table: dict[str, dict[str, tuple[float, float]]]
) -> Any:
    """Each query's value as (value - mean) / stddev from the -Z table; 0 where the stddev
    is 0 and the value is the mean; trec_eval's missing value where there is no entry."""
    import numpy as np

    out = np.empty(len(series))
    for row, query_id in enumerate(query_ids):
        value = float(series[row])
        entry = table.get(query_id, {}).get(label)
        if entry is None:
            out[row] = MISSING_ZSCORE
        elif entry[1]:
            out[row] = (value - entry[0]) / entry[1]
        else:
            out[row] = 0.0 if value == entry[0] else MISSING_ZSCORE
    return out


def _empty_rankings_divide_by_zero(
    lines: list[Measure],
    columns: dict[str, Any],
    run: Any,
    qrels: Any,
    query_ids: list[str],
    level: int,
) -> None:
    """trec_eval's interpolated precisions on a ranking left empty (by -J): 0 / 0 at every
    recall level that rounds to rank 0, which it prints as -nan."""
    from ragmetrics.metrics._trec import round_half_away

    if not any(line.levels for line in lines):
        return
    length = dict(zip(run.query_ids, run.lengths.tolist(), strict=True))
    empty = [
        (row, sum(1 for g in qrels[q].values() if g >= max(level, 0)))
        for row, q in enumerate(query_ids)
        if not length.get(q, 0)
    ]
    for line in lines:
        if not line.levels or line.metric is None:
            continue
        for row, relevant in empty:
            if any(round_half_away(x * relevant) <= 0 for x in line.levels):
                columns[line.label][row] = -math.nan


def _repeated_within(path: str, queries: set[str], depth: int) -> list[str]:
    """The queries among ``queries`` whose first ``depth`` results (every copy ranked, as
    trec_eval ranks them: score down, then doc id down) hold a doc twice, in query order."""
    from ragmetrics.formats._io import trec_lines

    scored: dict[str, list[tuple[float, str]]] = {q: [] for q in queries}
    with trec_lines(path) as pieces:
        for first, chunk, _ in pieces:
            for _, fields in records(chunk, first):
                if fields[0] in scored:
                    scored[fields[0]].append((float(fields[4]), fields[2]))
    found = []
    for query, results in scored.items():
        top = sorted(results, reverse=True)[:depth]
        if len({doc for _, doc in top}) < len(top):
            found.append(query)
    return sorted(found)


def _read_preferences(path: str, rel_format: str) -> dict[str, list[Any]] | None:
    """``-R prefs`` (``query group subgroup doc level``) or ``-R qrels_prefs`` (a qrels
    file read as preferences); None for the other formats."""
    if rel_format not in ("prefs", "qrels_prefs"):
        return None
    from ragmetrics.cli._trec_prefs import read_prefs
    from ragmetrics.formats._io import trec_lines
    from ragmetrics.metrics._preferences import PrefsError

    def lines() -> Iterator[tuple[int, list[str]]]:
        with trec_lines(path) as pieces:
            for first, chunk, _ in pieces:
                yield from records(chunk, first)

    try:
        return read_prefs(lines(), from_qrels=rel_format == "qrels_prefs")
    except PrefsError as exc:
        raise TrecEvalError(str(exc), exc.code) from exc


def _preference_values(
    prefs: dict[str, list[Any]],
    run: Any,
    query_ids: list[str],
    lines: list[Measure],
    max_docs: int | None,
) -> dict[str, Any]:
    """Each preference measure per query, against rankings ordered as trec_eval orders them
    for preferences (score down, then doc id up) and cut at -M."""
    import numpy as np

    from ragmetrics.metrics._preferences import PrefsError, query_values

    names = [m.metric.partition(":")[2] for m in lines if m.preference and m.metric]
    scored = run.to_dict()
    out = {f"prefs:{name}": np.zeros(len(query_ids)) for name in names}
    for row, query in enumerate(query_ids):
        ranked = sorted(scored.get(query, {}).items(), key=lambda item: (-item[1], item[0]))
        ranking = [doc for doc, _ in ranked][:max_docs]
        try:
            found = query_values(prefs[query], ranking, names)
        except PrefsError as exc:
            raise TrecEvalError(str(exc), exc.code) from exc
        for name, value in found.items():
            out[f"prefs:{name}"][row] = value
    return out


def _read_groups(path: str) -> dict[str, list[dict[str, int]]]:
    """``-R qrels_jg``: lines ``query group doc grade``; each query's judgment groups in
    byte order of their names, each a qrels of its own."""
    from ragmetrics.formats._io import trec_lines

    table: dict[str, dict[str, dict[str, int]]] = {}
    with trec_lines(path) as pieces:
        for first, lines, _ in pieces:
            for number, fields in records(lines, first):
                if len(fields) != 4 or ascii_int(fields[3]) is None:
                    raise TrecEvalError(
                        f"ragmetrics trec_eval: {path}, line {number}: a qrels_jg line is "
                        f"'query group doc grade' with a whole-number grade; got {fields!r}.",
                        2,
                    )
                query, group, doc, grade = fields
                table.setdefault(query, {}).setdefault(group, {})[doc] = int(grade)
    return {q: [groups[g] for g in sorted(groups)] for q, groups in table.items()}


def _qrels_and_repeats(path: str) -> tuple[Any, dict[str, str]]:
    """The qrels of ``path`` and, per query, the first doc it judges twice (trec_eval stops
    at that query with exit 4, whether the grades agree or not). The file's lines are
    counted first: only when they outnumber the judgments is it read again, line by line,
    keeping a doc's first grade."""
    from ragmetrics.data._qrels import Qrels

    try:
        qrels = Qrels.from_trec(path)
        if _count_lines(path) <= qrels.n_judgments:
            return qrels, {}
    except InputFormatError as exc:
        if "judged twice" not in str(exc):
            raise
    from ragmetrics.formats._io import trec_lines

    table: dict[str, dict[str, int]] = {}
    twice: dict[str, str] = {}
    with trec_lines(path) as pieces:
        for first, lines, _ in pieces:
            for _, fields in records(lines, first):
                query, doc, grade = fields[0], fields[2], int(fields[3])
                judged = table.setdefault(query, {})
                if doc in judged:
                    twice.setdefault(query, doc)
                else:
                    judged[doc] = grade
    return Qrels.from_dict(table), twice


def _count_lines(path: str) -> int:
    """Lines in the file (a last line without its newline counted)."""
    from ragmetrics.formats._io import close_bytes, open_bytes

    count, last = 0, b"\n"
    handle = open_bytes(path)
    try:
        while block := handle.read(1 << 22):
            count += block.count(b"\n")
            last = block[-1:]
    finally:
        close_bytes(handle)
    return count + (last != b"\n")


def _union(groups: dict[str, list[dict[str, int]]]) -> Any:
    """One qrels of every group's judgments (a doc's first group decides): which queries
    and docs are judged, for -c, -J and the counts."""
    from ragmetrics.data._qrels import Qrels

    merged: dict[str, dict[str, int]] = {}
    for query, judgments in groups.items():
        own = merged.setdefault(query, {})
        for group in judgments:
            for doc, grade in group.items():
                own.setdefault(doc, grade)
    return Qrels(merged)


def _group_values(
    groups: dict[str, list[dict[str, int]]],
    run: Any,
    query_ids: list[str],
    metrics: list[str],
    level: int,
) -> dict[str, Any]:
    """Each metric per query as ``-R qrels_jg`` measures it: computed against each judgment
    group, added in group order, divided by the number of groups when there are several."""
    import numpy as np

    from ragmetrics.data._qrels import Qrels
    from ragmetrics.data._run import Run
    from ragmetrics.engine._evaluation import evaluate

    scored = run.to_dict()
    owners: list[int] = []
    judgments: dict[str, dict[str, int]] = {}
    rankings: dict[str, dict[str, float]] = {}
    for row, query in enumerate(query_ids):
        for group in groups[query]:
            name = str(len(owners))
            owners.append(row)
            judgments[name] = group
            rankings[name] = scored.get(query, {})
    result = evaluate(
        Qrels(judgments),
        Run.from_dict(rankings),
        metrics,
        relevance_threshold=level,
        missing="skip",
    )
    position = {q: i for i, q in enumerate(result.query_ids)}
    order = [position[str(i)] for i in range(len(owners))]
    out: dict[str, Any] = {}
    counts = np.bincount(owners, minlength=len(query_ids))
    for index, metric in enumerate(metrics):
        totals = np.zeros(len(query_ids))
        for part, row in zip(result.values[order, index].tolist(), owners, strict=True):
            totals[row] += part
        out[metric] = np.where(counts > 1, totals / np.maximum(counts, 1), totals)
    return out


def _with_collection(line: Measure, n_docs: int) -> str:
    """The line's metric, given the collection's size of -N where it takes one."""
    assert line.metric is not None
    if line.collection and n_docs:
        return f"{line.metric[:-1]},n_docs={n_docs})"  # our own label, closed by ")"
    return line.metric


def _rankings(
    run: Any, qrels: Any, query_ids: list[str], options: Options, absent: list[str]
) -> Any:
    """The run as trec_eval scores it: cut at -M, only judged docs with -J, trec_eval's
    one-doc ranking for each judged query the run lacks (-c)."""
    from ragmetrics.data._run import Run, judged_docs_only, with_rankings

    if options.max_docs is not None:
        if options.max_docs < 0:  # trec_eval ends in a segmentation fault
            raise TrecEvalError(f"ragmetrics trec_eval: -M {options.max_docs}: give 0 or more.", 1)
        if options.max_docs == 0:  # every ranking cut to nothing
            return Run.from_dict({q: {} for q in query_ids}, name=run.name)
        run = run.truncate(options.max_docs)
    if absent:  # added to the run as it was read: no query read again as Python objects
        run = with_rankings(run, {query_id: {BOGUS_DOC: 1.0} for query_id in absent})
    # the one-doc ranking of -c is unjudged: -J empties it too
    return judged_docs_only(run, qrels) if options.judged_only else run


def _relstrings(
    lines: list[Measure], run: Any, qrels: Any, query_ids: list[str], missing: Any
) -> dict[str, list[str]]:
    """Each relstring line's string per query (:func:`relevance_strings`); "" for a query
    with no ranking."""
    strings: dict[str, list[str]] = {}
    if not any(line.value == "string" for line in lines):
        return strings  # the default measures have none: their module is not loaded
    from ragmetrics.engine._diagnostics import relevance_strings

    present = [query_id for query_id, absent in zip(query_ids, missing) if not absent]
    for line in lines:
        if line.value == "string":
            shown = relevance_strings(qrels, run, max(line.length, 0), query_ids=present)
            strings[line.label] = [
                "" if absent else shown[query_id] for query_id, absent in zip(query_ids, missing)
            ]
    return strings


def _summary(line: Measure, values: Any) -> float:
    """The ``all`` value as trec_eval makes it: per-query doubles added one by one in query
    order (``cumsum`` adds in order), then divided by the number of queries."""
    import numpy as np

    if not len(values):
        return 0.0
    if line.summary in ("sum", "judged_relevant"):
        return float(np.cumsum(values)[-1])
    if line.summary == "gm":  # ``values`` are logarithms already
        return math.exp(float(np.cumsum(values)[-1]) / len(values))
    return float(np.cumsum(values)[-1]) / len(values)


def _line(measure: Measure, query_id: str, value: float, z: str = "") -> str:
    """One output line; with -Z (``z="Z"``) the name is marked and every value is a
    z-score (``%6.4f``, counts too)."""
    return f"{z}{measure.label:<22}\t{query_id}\t{_shown(measure, [value], z)[0]}"


def _shown(measure: Measure, values: list[float], z: str) -> list[str]:
    """Each value as C's printf shows it: an integer for a count (without -Z), else
    ``%6.4f``; a NaN (a 0 / 0 of trec_eval's too) with its sign."""
    count = measure.value in ("long", "num_q") and not z
    shown = [("" if v != v else str(int(v)) if count else f"{v:6.4f}") for v in values]
    for at in [k for k, v in enumerate(values) if v != v]:
        shown[at] = f"{'-nan' if math.copysign(1.0, values[at]) < 0 else 'nan':>6}"
    return shown


def _run_id(path: str) -> str:
    """The run tag of the last result line (trec_eval keeps the last one it reads). The
    readers have checked the file already: a plain file is read from its end; a gzip
    file or standard input is streamed, never decompressed whole."""
    from ragmetrics.formats._io import GZIP_MAGIC, trec_lines

    try:
        with open(path, "rb") as handle:
            if handle.read(2) != GZIP_MAGIC:
                size = handle.seek(0, os.SEEK_END)
                handle.seek(max(0, size - 65536))
                tail = handle.read().decode("utf-8", errors="replace").split("\n")
                for line in reversed(tail[1:] if size > 65536 else tail):
                    fields = line.split()
                    if len(fields) >= 6 and fields[0][0] != "#":
                        return fields[5]
    except OSError:
        pass  # not seekable (a pipe): read it through

    last = ""
    with trec_lines(path) as pieces:
        for first, lines, _ in pieces:
            for _, fields in records(lines, first):
                if len(fields) >= 6:
                    last = fields[5]
    return last


@contextmanager
def _local(path: str) -> Iterator[str]:
    """``path`` as a path that can be read twice: files as they are (gzip is streamed by the
    readers); standard input (``-``) copied to an unnamed temporary file, which the system
    removes when the process ends, however it ends."""
    if path != "-":
        yield path
        return
    import shutil
    import tempfile

    with tempfile.TemporaryFile(prefix="ragmetrics-") as copy:
        shutil.copyfileobj(sys.stdin.buffer, copy)
        copy.flush()
        named = f"/dev/fd/{copy.fileno()}"
        if os.path.exists(named):
            yield named
            return
        copy.seek(0)  # no /dev/fd here: a named copy, removed when done
        with tempfile.NamedTemporaryFile(prefix="ragmetrics-") as named_copy:
            shutil.copyfileobj(copy, named_copy)
            named_copy.flush()
            yield named_copy.name


def main(argv: Sequence[str]) -> int:
    """``ragmetrics trec_eval ARGV``: prints trec_eval's lines; returns trec_eval's exit code
    (a refusal is one line on standard error)."""
    import warnings

    from ragmetrics.errors import RagMetricsWarning

    try:
        with warnings.catch_warnings():
            # trec_eval prints no advice: its lines and refusals only (docs/cli.md)
            warnings.simplefilter("ignore", RagMetricsWarning)
            _write(run_trec_eval(argv))
    except TrecEvalError as exc:
        sys.stdout.flush()
        print(str(exc), file=sys.stderr)
        return exc.code
    except (InvalidParameterError, UnknownMetricError) as exc:
        sys.stdout.flush()
        print(f"ragmetrics trec_eval: {exc}", file=sys.stderr)
        return 1
    return 0


def _write(lines: Iterator[str], at_once: int = 4096) -> None:
    """Print ``lines``, a few thousand to a write; those made before an error too."""
    pending: list[str] = []
    try:
        for line in lines:
            pending.append(line)
            if len(pending) == at_once:
                sys.stdout.write("\n".join(pending) + "\n")
                pending.clear()
    finally:
        if pending:
            sys.stdout.write("\n".join(pending) + "\n")


def add_parser(commands: Any) -> None:
    """The ``trec_eval`` subcommand in the listing of ``ragmetrics --help``; its arguments
    are read by :func:`main` as trec_eval reads them."""
    commands.add_parser(
        "trec_eval",
        help="trec_eval's flags, output and exit codes, a drop-in for scripts",
        description="Evaluate a TREC run as trec_eval 10 does and print its lines "
        "(ragmetrics trec_eval -h for the flags).",
        add_help=False,
    )


def command(args: Any) -> int:
    """The subcommand's handler when reached through the parser (``ragmetrics trec_eval``
    with no arguments): trec_eval's usage."""
    return main(list(getattr(args, "trec_eval_args", [])))
