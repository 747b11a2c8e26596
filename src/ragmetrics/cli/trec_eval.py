"""``ragmetrics trec_eval``: trec_eval's command line, flags and output, on our metrics.

A script that calls ``trec_eval [-q] [-c] [-l N] [-M N] [-m measure ...] QRELS RUN`` can
call ``ragmetrics trec_eval`` with the same arguments and read the same lines:
``%-22s\\t%s\\t%6.4f`` (counts as integers), the measures in trec_eval's order, per query
(with ``-q``, queries in byte order) and then ``all``. Without ``-m`` the output is trec_eval's
default set: ``runid``, ``num_q``, the counts, ``map``, ``gm_map``, ``Rprec``, ``bpref``,
``recip_rank``, the eleven ``iprec_at_recall`` levels and ``P`` at nine cutoffs.

Measures are named as trec_eval names them: a measure (``map``), a family at its default
parameters (``P``, ``ndcg_cut``, ``iprec_at_recall``), a family with parameters
(``P.5,10``), or a set (``official``). Files may be gzip-compressed, and ``-`` reads stdin.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ragmetrics.errors import InvalidParameterError, UnknownMetricError
from ragmetrics.formats._rules import cli_int, records

__all__ = [
    "Measure",
    "add_parser",
    "command",
    "measures",
    "run_trec_eval",
]

_CUTOFFS = ("5", "10", "15", "20", "30", "100", "200", "500", "1000")
_LEVELS = tuple(f"{i / 10:.2f}" for i in range(11))


@dataclass(frozen=True)
class Measure:
    """One line of trec_eval's output: its name, our metric, and how it prints."""

    label: str
    metric: str | None  # None: runid and num_q, which are not per-query values
    count: bool = False  # printed as an integer (trec_eval's %ld)
    per_query: bool = True


@dataclass(frozen=True)
class _Family:
    """A trec_eval measure: its default parameters and how one parameter makes a line."""

    defaults: tuple[str, ...]
    make: Callable[[str, str], Measure]


def _single(metric: str, *, count: bool = False, per_query: bool = True) -> _Family:
    return _Family((), lambda name, _: Measure(name, metric, count, per_query))


def _cut(base: str) -> Callable[[str, str], Measure]:
    def make(name: str, value: str) -> Measure:
        if not value.isdigit() or int(value) < 1:
            raise InvalidParameterError(
                f"trec_eval measure {name}.{value}: a cutoff must be an integer >= 1."
            )
        return Measure(f"{name}_{int(value)}", f"{base}@{int(value)}")

    return make


def _level(name: str, value: str) -> Measure:
    try:
        level = float(value)
    except ValueError:
        level = -1.0
    if not 0.0 <= level <= 1.0:
        raise InvalidParameterError(
            f"trec_eval measure {name}.{value}: a recall level must be a number in [0, 1]."
        )
    return Measure(f"{name}_{level:.2f}", f"iprec_at_recall(level={level!r})")


# trec_eval's measures in the order it prints them (its measure table)
_FAMILIES: dict[str, _Family] = {
    "runid": _Family((), lambda name, _: Measure(name, None, per_query=False)),
    "num_q": _Family((), lambda name, _: Measure(name, None, count=True, per_query=False)),
    "num_ret": _single("num_ret", count=True),
    "num_rel": _single("num_rel", count=True),
    "num_rel_ret": _single("num_rel_ret", count=True),
    "map": _single("map"),
    "gm_map": _single("gm_map", per_query=False),
    "Rprec": _single("r_precision"),
    "bpref": _single("bpref"),
    "recip_rank": _single("mrr"),
    "iprec_at_recall": _Family(_LEVELS, _level),
    "P": _Family(_CUTOFFS, _cut("precision")),
    "recall": _Family(_CUTOFFS, _cut("recall")),
    "ndcg": _single("ndcg"),
    "ndcg_cut": _Family(_CUTOFFS, _cut("ndcg")),
    "map_cut": _Family(_CUTOFFS, _cut("map")),
    "success": _Family(("1", "5", "10"), _cut("hit_rate")),
}
# trec_eval's default set ("official"), in its order
_SETS = {
    "official": (
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
        "gm_map",
        "Rprec",
        "bpref",
        "recip_rank",
        "iprec_at_recall",
        "P",
    ),
}
# measures of trec_eval's all_trec set that ragmetrics does not compute
_NOT_COMPUTED = (
    "relstring",
    "unj",
    "rbp",
    "rbp_resid",
    "infAP",
    "gm_bpref",
    "utility",
    "11pt_avg",
    "relative_P",
    "Rprec_mult",
    "ndcg_rel",
    "Rndcg",
    "binG",
    "G",
    "set_P",
    "set_recall",
    "set_relative_P",
    "set_map",
    "set_F",
    "num_nonrel_judged_ret",
)


def measures(specs: Sequence[str]) -> list[Measure]:
    """trec_eval's ``-m`` arguments as output lines, in trec_eval's order.

    Example:
        >>> [m.label for m in measures(["P.5,10", "map"])]
        ['map', 'P_5', 'P_10']
    """
    asked: dict[str, list[str]] = {}
    for spec in specs or ["official"]:
        name, _, values = spec.partition(".")
        if name in _SETS:
            for member in _SETS[name]:
                asked.setdefault(member, [])
            continue
        if name == "all_trec":
            raise UnknownMetricError(
                "-m all_trec includes measures ragmetrics does not compute ("
                + ", ".join(_NOT_COMPUTED)
                + "); name the measures you need, e.g. -m official -m ndcg_cut -m recall."
            )
        if name not in _FAMILIES:
            known = ", ".join([*_SETS, *_FAMILIES])
            why = " (ragmetrics does not compute it)" if name in _NOT_COMPUTED else ""
            raise UnknownMetricError(
                f"trec_eval measure {name!r} is not known here{why}; the measures are {known}."
            )
        given = [v for v in values.split(",") if v] if values else []
        if given and not _FAMILIES[name].defaults:
            raise InvalidParameterError(f"trec_eval measure {name!r} takes no parameters.")
        asked.setdefault(name, []).extend(given)
    lines: list[Measure] = []
    for name, family in _FAMILIES.items():
        if name in asked:
            params = asked[name] or list(family.defaults) or [""]
            lines.extend(family.make(name, p) for p in dict.fromkeys(params))
    return lines


def run_trec_eval(
    qrels_path: str,
    run_path: str,
    specs: Sequence[str],
    *,
    per_query: bool = False,
    complete: bool = False,
    level: int = 1,
    max_docs: int | None = None,
) -> Iterator[str]:
    """The lines ``trec_eval`` prints for these arguments (see the module docstring).

    Args:
        per_query: ``-q``, every query's values before the summary.
        complete: ``-c``, average over every judged query (a query without results scores
            0) instead of the queries that have results.
        level: ``-l``, the lowest grade that counts as relevant.
        max_docs: ``-M``, keep at most this many docs per query (after ranking).
    """
    from ragmetrics.data.qrels import Qrels
    from ragmetrics.data.run import Run
    from ragmetrics.engine.evaluation import evaluate

    lines = measures(specs)
    with _local(qrels_path) as qrels_file, _local(run_path) as run_file:
        qrels = Qrels.from_trec(qrels_file)
        run = Run.from_trec(run_file)
        run_id = _run_id(run_file)
    if max_docs is not None:
        if max_docs < 1:
            raise InvalidParameterError(f"-M must be an integer >= 1; got {max_docs}.")
        run = run.truncate(max_docs)
    metrics = list(dict.fromkeys(m.metric for m in lines if m.metric is not None))
    result = evaluate(
        qrels,
        run,
        metrics or ["map"],
        missing="zero" if complete else "skip",
        relevance_threshold=level,
    )
    if per_query:
        for query_id in sorted(result.query_ids):
            values = result.per_query[query_id]
            for line in lines:
                if line.per_query and line.metric is not None:
                    yield _line(line, query_id, values[line.metric])
    for line in lines:
        if line.metric is not None:
            yield _line(line, "all", result.aggregate[line.metric])
        elif line.label == "runid":
            yield f"{'runid':<22}\t{'all'}\t{run_id}"
        else:
            yield f"{'num_q':<22}\tall\t{result.counts.queries}"


def _line(measure: Measure, query_id: str, value: float | None) -> str:
    number = 0.0 if value is None else value
    shown = str(int(number)) if measure.count else f"{number:6.4f}"
    return f"{measure.label:<22}\t{query_id}\t{shown}"


def _run_id(path: str) -> str:
    """The run tag of the first result line (trec_eval's ``runid``), read under the line
    rule: a gzip file is streamed, never decompressed whole."""
    from ragmetrics.formats._io import trec_lines

    with trec_lines(path) as pieces:
        for first, lines, _ in pieces:
            for _, fields in records(lines, first):
                if len(fields) >= 6:
                    return fields[5]
    return ""


@contextmanager
def _local(path: str) -> Iterator[str]:
    """``path`` as a path that can be read twice: files as they are (gzip is streamed by the
    readers); standard input (``-``) copied to an unnamed temporary file, which the system
    removes when the process ends, however it ends."""
    if path != "-":
        yield path
        return
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


def add_parser(commands: Any) -> None:
    """The ``trec_eval`` subcommand, with trec_eval's flags."""
    parser = commands.add_parser(
        "trec_eval",
        help="trec_eval's flags and output, a drop-in for scripts",
        description="Evaluate a TREC run as trec_eval does and print trec_eval's lines. "
        "Without -m, trec_eval's default measures.",
    )
    parser.add_argument("-q", action="store_true", help="print every query's values too")
    parser.add_argument(
        "-c",
        action="store_true",
        help="average over every judged query; a query without results scores 0",
    )
    parser.add_argument(
        "-l", type=cli_int, default=1, metavar="N", help="lowest grade that counts as relevant"
    )
    parser.add_argument("-M", type=cli_int, metavar="N", help="keep at most N docs per query")
    parser.add_argument(
        "-m",
        action="append",
        default=[],
        metavar="MEASURE",
        help="a trec_eval measure or family: map, P, P.5,10, ndcg_cut, iprec_at_recall, "
        "bpref, official (repeat for several)",
    )
    parser.add_argument("qrels", metavar="QRELS", help="TREC qrels file (.gz or - too)")
    parser.add_argument("run", metavar="RUN", help="TREC run file (.gz or - too)")


def command(args: argparse.Namespace) -> int:
    """Run the ``trec_eval`` subcommand."""
    if args.qrels == "-" and args.run == "-":
        raise InvalidParameterError("Only one of QRELS and RUN can be read from stdin (-).")
    for line in run_trec_eval(
        args.qrels,
        args.run,
        args.m,
        per_query=args.q,
        complete=args.c,
        level=args.l,
        max_docs=args.M,
    ):
        print(line)
    return 0
