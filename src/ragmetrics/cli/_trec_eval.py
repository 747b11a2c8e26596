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

Example:
    >>> [m.label for m in measures(["P.10,5", "map"])]
    ['map', 'P_5', 'P_10']
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple

from ragmetrics._util.trec_names import PREFERENCE_COUNTS, PREFERENCE_MEASURES
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

VERSION = "10.0-rc3"  # the trec_eval release whose output this reproduces
MIN_GEO_MEAN = 0.00001  # trec_eval's floor before a logarithm (gm_map, gm_bpref)
BOGUS_DOC = "ceci_nest_pas_un_docno"  # trec_eval's one-doc ranking for a missing query (-c)


class TrecEvalError(Exception):
    """A refusal of the ``trec_eval`` command: its message and trec_eval's exit code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


# Measure and _Family are named tuples, _Options a plain class: every call of the command
# makes these types, and a frozen dataclass costs 1.2 ms to make against 0.16 ms
class Measure(NamedTuple):
    """One line of trec_eval's output: its name, our metric, and how it prints and sums.

    Attributes:
        label: the name printed (``P_5``).
        metric: our metric label (``precision@5``); None for ``runid``, ``num_q`` and
            ``relstring``, which the command makes itself.
        value: ``"double"`` (``%6.4f``), ``"long"`` (an integer), ``"string"``
            (``relstring``), ``"runid"`` or ``"num_q"``.
        summary: ``"mean"``, ``"sum"`` (counts), ``"gm"`` (geometric mean), ``"none"``, or
            ``"judged_relevant"``: a sum, but with ``-c`` the qrels' judgments graded above
            0, whatever ``-l``, as trec_eval's ``num_rel`` summary counts them.
        per_query: printed for each query with ``-q``.
        zero_if_missing: set to 0 for a query the run lacks (``-c``), as trec_eval does.
        length: ``relstring``'s number of docs.
        collection: the metric takes the collection's size (``-N``) as ``n_docs``.
        per_group: averaged over the judgment groups of ``-R qrels_jg``.
        constant_zero: 0 for every query whatever the data (a recall level above 1: no
            ranking reaches it); ``metric`` is then empty.
        preference: a measure of preference judgments (``-R prefs`` or ``qrels_prefs``),
            computed by the command (``metric`` names it).
        levels: the recall levels of an interpolated precision: on an empty ranking
            trec_eval divides 0 by 0 at each level that rounds to rank 0 (NaN).
    """

    label: str
    metric: str | None
    value: str = "double"
    summary: str = "mean"
    per_query: bool = True
    zero_if_missing: bool = False
    length: int = 0
    collection: bool = False
    levels: tuple[float, ...] = ()
    per_group: bool = False
    preference: bool = False
    constant_zero: bool = False


class _Family(NamedTuple):
    """A trec_eval measure: how its parameters are read and which lines they make.

    ``kind``: ``"none"`` (no parameters), ``"cutoffs"`` (integers, one line each, sorted),
    ``"levels"`` (numbers, one line each, sorted), ``"numbers"`` (one line, named after the
    parameters as written), ``"pairs"`` (``name=value``, one line).
    """

    kind: str
    defaults: tuple[Any, ...]
    make: Callable[[str, Any], Measure]


def _single(metric: str, **traits: Any) -> _Family:
    return _Family("none", (), lambda name, _: Measure(name, metric, **traits))


def _cutoffs(base: str, defaults: tuple[int, ...], **traits: Any) -> _Family:
    def make(name: str, cutoff: Any) -> Measure:
        return Measure(f"{name}_{cutoff}", f"{base}@{cutoff}", **traits)

    return _Family("cutoffs", defaults, make)


def _levels(metric: Callable[[float], str], defaults: tuple[float, ...], **traits: Any) -> _Family:
    def make(name: str, level: Any) -> Measure:
        return Measure(f"{name}_{level:3.2f}", metric(level), **traits)

    return _Family("levels", defaults, make)


def _recall_level(name: str, level: float) -> Measure:
    """An ``iprec_at_recall`` line. trec_eval takes any level: below 0 it reads as 0 (the
    same rank), above 1 no ranking reaches it (0)."""
    label = f"{name}_{level:3.2f}"
    if level > 1.0:
        return Measure(label, "", levels=(level,), constant_zero=True)
    return Measure(label, f"iprec_at_recall(level={max(level, 0.0)!r})", levels=(level,))


def _numbers(
    metric: Callable[[tuple[float, ...]], str],
    defaults: tuple[float, ...],
    interpolated: bool = False,
    **traits: Any,
) -> _Family:
    def make(name: str, given: Any) -> Measure:
        printable, values = given
        label = name if printable is None else f"{name}_{printable}"
        levels = tuple(values) if interpolated else ()
        return Measure(label, metric(values), levels=levels, **traits)

    return _Family("numbers", defaults, make)


def _pairs(metric: Callable[[str, float | None], str], **traits: Any) -> _Family:
    """A family of ``name=value`` parameters: grades' gains, and ``p`` for RBP."""

    def make(name: str, given: Any) -> Measure:
        printable, parts = given
        gains, persistence = [], None
        for part in parts:
            key, _, value = part.partition("=")
            if key == "p":
                persistence = _c_double(value)
            gains.append(f"{key}:{_c_double(value)!r}")
        label = name if printable is None else f"{name}_{printable}"
        return Measure(label, metric(";".join(gains), persistence), **traits)

    return _Family("pairs", (), make)


def _gained(base: str, plain: str | None = None) -> Callable[[str, float | None], str]:
    def metric(gains: str, _: float | None) -> str:
        if not gains and plain is not None:
            return plain
        return f"{base}(gains={gains})" if gains else base

    return metric


def _rbp(base: str, with_gains: bool) -> Callable[[str, float | None], str]:
    def metric(gains: str, persistence: float | None) -> str:
        params = [] if persistence is None else [f"p={persistence!r}"]
        if with_gains and gains:
            params.append(f"gains={gains}")
        return f"{base}({','.join(params)})" if params else base

    return metric


def _utility(values: tuple[float, ...]) -> str:
    weights = (list(values) + [0.0] * 4)[:4]
    names = ("rel_ret", "nonrel_ret", "rel_missed", "nonrel_missed")
    return "utility(" + ",".join(f"{n}={w!r}" for n, w in zip(names, weights, strict=True)) + ")"


def _relstring(name: str, given: Any) -> Measure:
    printable, values = given
    label = name if printable is None else f"{name}_{printable}"
    return Measure(label, None, "string", "none", length=int(values[0]) if values else 0)


def _preference(name: str) -> _Family:
    """A preference measure (``-R prefs``): computed by the command, not a metric."""
    counted = name in PREFERENCE_COUNTS
    return _Family(
        "none",
        (),
        lambda label, _: Measure(
            label,
            f"prefs:{name}",
            "long" if counted else "double",
            "sum" if counted else "mean",
            preference=True,
        ),
    )


_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALL_LEVELS = tuple(i / 10 for i in range(11))

# trec_eval's measures on qrels and a ranked run, in the order it prints them
_FAMILIES: dict[str, _Family] = {
    "runid": _Family("none", (), lambda name, _: Measure(name, None, "runid", "none", False)),
    "num_q": _Family("none", (), lambda name, _: Measure(name, None, "num_q", "none", False)),
    "num_ret": _single("num_ret", value="long", summary="sum", zero_if_missing=True),
    "num_rel": _single("num_rel", value="long", summary="judged_relevant"),
    "num_rel_ret": _single("num_rel_ret", value="long", summary="sum"),
    "map": _single("map"),
    "gm_map": _single("map", summary="gm", per_query=False),
    "Rprec": _single("r_precision"),
    "bpref": _single("bpref"),
    "recip_rank": _single("mrr"),
    "iprec_at_recall": _Family(
        "levels", _RECALL_LEVELS, lambda name, level: _recall_level(name, level)
    ),
    "P": _cutoffs("precision", _CUTOFFS),
    "relstring": _Family("numbers", (10.0,), _relstring),
    "recall": _cutoffs("recall", _CUTOFFS),
    "infAP": _single("infap"),
    "gm_bpref": _single("bpref", summary="gm", per_query=False),
    "Rprec_mult": _levels(
        lambda x: f"r_precision_mult(mult={x!r})", tuple(i / 5 for i in range(1, 11))
    ),
    "utility": _numbers(_utility, (1.0, -1.0, 0.0, 0.0), zero_if_missing=True, collection=True),
    "11pt_avg": _numbers(
        lambda v: "eleven_point_average(levels=" + ";".join(map(repr, v)) + ")",
        _RECALL_LEVELS,
        interpolated=True,
    ),
    "binG": _single("bin_g"),
    "G": _pairs(_gained("g")),
    "dcg": _pairs(_gained("dcg")),
    "ideal_dcg": _pairs(_gained("ideal_dcg")),
    "ndcg": _pairs(_gained("ndcg_gains", plain="ndcg")),
    "ndcg_rel": _pairs(_gained("ndcg_rel")),
    "Rndcg": _pairs(_gained("r_ndcg")),
    "ndcg_cut": _cutoffs("ndcg", _CUTOFFS),
    "map_cut": _cutoffs("map", _CUTOFFS),
    "relative_P": _cutoffs("relative_precision", _CUTOFFS),
    "success": _cutoffs("hit_rate", (1, 5, 10)),
    "set_P": _single("set_precision"),
    "set_relative_P": _single("set_relative_precision"),
    "set_recall": _single("set_recall"),
    "set_map": _single("set_ap"),
    "set_F": _numbers(lambda v: f"set_f(beta={v[0]!r})", (1.0,)),
    "num_nonrel_judged_ret": _single("num_nonrel_judged_ret", value="long", summary="sum"),
    **{name: _preference(name) for name in PREFERENCE_MEASURES},
    "map_avgjg": _single("map", per_group=True),
    "P_avgjg": _cutoffs("precision", _CUTOFFS, per_group=True),
    "Rprec_mult_avgjg": _levels(
        lambda x: f"r_precision_mult(mult={x!r})",
        tuple(i / 5 for i in range(1, 11)),
        per_group=True,
    ),
    "yaap": _single("yaap"),
    "rbp": _pairs(_rbp("rbp", with_gains=True)),
    "rbp_resid": _pairs(_rbp("rbp_resid", with_gains=False), zero_if_missing=True),
    "unj": _cutoffs("unjudged_rate", (5, 10, 20), zero_if_missing=True),
}

_OFFICIAL = "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank"
_OFFICIAL += " iprec_at_recall P"
_SET = "runid num_q num_ret num_rel num_rel_ret utility set_P set_recall set_relative_P"
_SET += " set_map set_F"
_ALL_TREC = _OFFICIAL + " relstring recall unj rbp rbp_resid infAP gm_bpref utility 11pt_avg"
_ALL_TREC += " ndcg relative_P Rprec_mult success map_cut ndcg_cut ndcg_rel Rndcg binG G set_P"
_ALL_TREC += " set_recall set_relative_P set_map set_F num_nonrel_judged_ret"
_SETS: dict[str, tuple[str, ...]] = {
    "official": tuple(_OFFICIAL.split()),
    "set": tuple(_SET.split()),
    "all_trec": tuple(_ALL_TREC.split()),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
    "all_prefs": ("runid", "num_q", *PREFERENCE_MEASURES),
    "prefs": ("runid", "num_q", *PREFERENCE_MEASURES[:6]),
}


def _c_long(text: str) -> int:
    """C's ``atol``: leading blanks, a sign, digits; whatever follows is ignored; 0 when
    there are no digits; past a 64-bit long, the largest (or smallest) long, as glibc's
    ``strtol`` saturates."""
    stripped = text.lstrip(" \t\n\v\f\r")
    sign, digits = 1, ""
    if stripped[:1] in "+-" and stripped:
        sign = -1 if stripped[0] == "-" else 1
        stripped = stripped[1:]
    for char in stripped:
        if not "0" <= char <= "9":
            break
        digits += char
    digits = digits.lstrip("0")
    if len(digits) > 19 or (digits and int(digits) > 2**63 - 1):
        return 2**63 - 1 if sign > 0 else -(2**63)
    return sign * int(digits) if digits else 0


def _c_double(text: str) -> float:
    """C's ``atof`` for decimal numbers: the longest leading part that reads as a number."""
    stripped = text.lstrip(" \t\n\v\f\r")
    for end in range(len(stripped), 0, -1):
        part = stripped[:end]
        if part[-1:].isdigit() or part[-1:] == ".":
            try:
                return float(part)
            except ValueError:
                continue
    return 0.0


def _parameters(name: str, family: _Family, text: str | None) -> list[Any]:
    """A family's parameters from ``-m name.TEXT`` (None: its defaults), read as trec_eval
    reads them."""
    if family.kind == "none":
        return [None]
    if text is None:
        if family.kind in ("numbers", "pairs"):
            return [(None, family.defaults)]
        return list(family.defaults)
    parts = text.split(",")
    if family.kind == "cutoffs":
        cutoffs = sorted(_c_long(p) for p in parts)
        if cutoffs[0] <= 0:
            raise TrecEvalError("trec_eval: Negative cutoff detected", 2)
        if len(set(cutoffs)) != len(cutoffs):
            raise TrecEvalError("trec_eval: duplicate cutoffs detected", 2)
        return cutoffs
    if family.kind == "levels":
        levels = sorted(_c_double(p) for p in parts)
        if len(set(levels)) != len(levels):
            raise TrecEvalError("trec_eval: duplicate cutoffs detected", 2)
        return levels
    if family.kind == "numbers":
        return [(text, tuple(_c_double(p) for p in parts))]
    if not _well_paired(text):
        raise TrecEvalError(f"trec_eval: malformed pair parameters in '{text}'", 2)
    return [(text, tuple(parts))]


def _well_paired(text: str) -> bool:
    """trec_eval's check of ``name=value,...``: no two commas or two equal signs in a row
    (counting the start as a comma), and an equal sign last of the two."""
    last = ","
    for char in text:
        if char in ",=":
            if char == last:
                return False
            last = char
    return last == "="


def measures(specs: Sequence[str]) -> list[Measure]:
    """trec_eval's ``-m`` arguments as output lines, in trec_eval's order.

    Example:
        >>> [m.label for m in measures(["P.5,10", "map"])]
        ['map', 'P_5', 'P_10']
    """
    marked: set[str] = set()
    given: dict[str, str] = {}  # the first parameter list of each measure
    for spec in specs or ["official"]:
        name, dot, text = spec.partition(".")
        if dot:
            if not text:
                raise TrecEvalError(f"trec_eval: illegal measure '{name}'", 1)
            given.setdefault(name, text)
        if name in _SETS:
            marked.update(_SETS[name])
        elif name in _FAMILIES:
            marked.add(name)
        else:
            raise TrecEvalError(f"trec_eval: illegal measure '{spec}'", 1)
    lines: list[Measure] = []
    for name, family in _FAMILIES.items():
        if name in marked:
            params = _parameters(name, family, given.get(name))
            lines.extend(family.make(name, p) for p in params)
    return lines


class _Options:
    """The options of one call, as read from its arguments (each starts at its default)."""

    per_query: bool = False
    complete: bool = False
    summary: bool = True
    judged_only: bool = False
    level: int = 1
    max_docs: int | None = None
    n_docs: int = 0
    debug_query: str | None = None
    specs: list[str] | None = None
    help: bool = False
    version: bool = False
    files: tuple[str, str] | None = None
    zscores: str | None = None
    rel_format: str = "qrels"


_SHORT_WITH_VALUE = set("mlDNMRTZ")
_SHORT_ALONE = set("hvqcnJo")
_LONG = {
    "help": "h",
    "version": "v",
    "query_eval_wanted": "q",
    "measure": "m",
    "complete_rel_info_wanted": "c",
    "level_for_rel": "l",
    "nosummary": "n",
    "Debug_level": "D",
    "Judged_docs_only": "J",
    "Number_docs_in_coll": "N",
    "Max_retrieved_per_topic": "M",
    "Rel_info_format": "R",
    "Results_format": "T",
    "Output_old_results_format": "o",
    "Zscore": "Z",
}
USAGE = (
    "Usage: ragmetrics trec_eval [-h] [-q] [-c] [-n] [-J] [-l N] [-M N] [-N N] "
    "{-m measure[.params]}* QRELS RUN"
)


# the flags that set a switch of the options: flag -> (attribute, value)
_SWITCHES = {
    "h": ("help", True),
    "q": ("per_query", True),
    "c": ("complete", True),
    "n": ("summary", False),
    "J": ("judged_only", True),
}


def _options(argv: Sequence[str]) -> _Options:
    """The arguments as GNU getopt reads trec_eval's: flags anywhere before ``--``, short
    flags combined, values attached or apart, long names or their unambiguous prefixes."""
    pairs, files = _getopt(list(argv))
    options = _Options()
    options.specs = []
    for flag, value in pairs:
        if flag == "v":
            options.version = True
            return options  # trec_eval stops at -v
        if flag in _SWITCHES:
            attribute, setting = _SWITCHES[flag]
            setattr(options, attribute, setting)
        elif flag == "m":
            options.specs.append(value or "")
        elif flag != "o":  # -o: obsolete in trec_eval too
            _valued(options, flag, value or "")
    if not options.help:
        if len(files) != 2:
            raise TrecEvalError(USAGE, 1)
        options.files = (files[0], files[1])
    return options


def _getopt(items: list[str]) -> tuple[list[tuple[str, str | None]], list[str]]:
    """``(flag, value)`` for each option in order (long names as their short flag), and the
    other arguments."""
    pairs: list[tuple[str, str | None]] = []
    files: list[str] = []
    i = 0
    while i < len(items):
        item = items[i]
        i += 1
        if item == "--":
            files.extend(items[i:])
            break
        if item.startswith("--"):
            i = _long_option(item, items, i, pairs)
        elif item.startswith("-") and item != "-":
            i = _short_options(item, items, i, pairs)
        else:
            files.append(item)
    return pairs, files


def _long_option(item: str, items: list[str], i: int, pairs: list[tuple[str, str | None]]) -> int:
    """Reads ``--name[=value]`` (its value may be the next argument, at ``i``) into
    ``pairs``; returns where the next argument is."""
    name, eq, value = item[2:].partition("=")
    matches = [n for n in _LONG if n.startswith(name)]
    exact = [n for n in matches if n == name]
    if exact:
        matches = exact
    if len(matches) != 1:
        raise TrecEvalError(f"{USAGE}\n(unknown or ambiguous option '{item}')", 1)
    flag = _LONG[matches[0]]
    # trec_eval's long -o takes a value its short form does not (and ignores it)
    if flag not in _SHORT_WITH_VALUE and flag != "o":
        if eq:
            raise TrecEvalError(f"{USAGE}\n(option '--{matches[0]}' takes no value)", 1)
        pairs.append((flag, None))
        return i
    if not eq:
        if i >= len(items):
            raise TrecEvalError(f"{USAGE}\n(option '{item}' needs a value)", 1)
        value, i = items[i], i + 1
    pairs.append((flag, value))
    return i


def _short_options(item: str, items: list[str], i: int, pairs: list[tuple[str, str | None]]) -> int:
    """Reads ``-abc`` or ``-mVALUE`` (a flag's value may be the next argument, at ``i``)
    into ``pairs``; returns where the next argument is."""
    for position in range(1, len(item)):
        flag = item[position]
        if flag in _SHORT_ALONE:
            pairs.append((flag, None))
            continue
        if flag not in _SHORT_WITH_VALUE:
            raise TrecEvalError(f"{USAGE}\n(unknown option '-{flag}')", 1)
        value = item[position + 1 :]
        if not value:
            if i >= len(items):
                raise TrecEvalError(f"{USAGE}\n(option '-{flag}' needs a value)", 1)
            value, i = items[i], i + 1
        pairs.append((flag, value))
        break
    return i


def _valued(options: _Options, flag: str, value: str) -> None:
    if flag in "lMN":
        number = _integer(flag, value)
        if flag == "l":
            if number < 0:
                raise TrecEvalError(
                    f"ragmetrics trec_eval: -l {number}: below 0, trec_eval counts every "
                    f"unjudged doc retrieved as relevant, though not in R (P_k reaches 1 while "
                    f"recall cannot); give -l 0 or more.",
                    1,
                )
            options.level = number
        elif flag == "M":
            options.max_docs = number
        else:
            options.n_docs = number
    elif flag == "D":
        level, _, query = value.partition(".")
        _integer(flag, level)
        options.debug_query = query or None
    elif flag == "R":
        if value not in ("qrels", "qrels_jg", "prefs", "qrels_prefs"):
            raise TrecEvalError(f"trec_eval: Illegal rel_format '{value}'", 2)
        options.rel_format = value
    elif flag == "T" and value != "trec_results":
        raise TrecEvalError(f"trec_eval: Illegal retrieval results format '{value}'", 2)
    elif flag == "Z":
        options.zscores = value


def _integer(flag: str, value: str) -> int:
    """A flag's integer; where trec_eval reads ``-l abc`` as 0, we refuse (docs/cli.md)."""
    number = ascii_int(value)
    if number is None:
        raise TrecEvalError(
            f"ragmetrics trec_eval: -{flag} {value!r} is not an integer (trec_eval would read "
            f"it as {_c_long(value)}); give a whole number, e.g. -{flag} 2.",
            1,
        )
    return number


def run_trec_eval(argv: Sequence[str]) -> Iterator[str]:
    """The lines ``trec_eval ARGV`` prints, one by one; raises :class:`TrecEvalError` with
    trec_eval's exit code where it would stop."""
    options = _options(argv)
    if options.version:
        print(f"trec_eval version {VERSION} (ragmetrics)", file=sys.stderr)
        return
    if options.help:
        yield from _help(options.specs or [])
        return
    lines = measures(options.specs or [])
    assert options.files is not None
    yield from _evaluate(options, lines)


class _Inputs(NamedTuple):
    """What trec_eval reads from its two files."""

    qrels: Any
    run: Any
    run_id: str
    groups: dict[str, list[dict[str, int]]] | None  # -R qrels_jg
    prefs: dict[str, list[Any]] | None  # -R prefs / qrels_prefs
    judged_twice: dict[str, str]  # query -> the doc it judges twice
    cut_repeats: set[str] | None  # with -M, the queries whose copies fall within the cut


def _evaluate(options: _Options, lines: list[Measure]) -> Iterator[str]:
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


def _read_inputs(options: _Options) -> _Inputs:
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
    options: _Options, inputs: _Inputs
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
    options: _Options, lines: list[Measure], inputs: _Inputs, rankings: Any, query_ids: list[str]
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
    options: _Options,
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
    floats = {label: column.tolist() for label, column in columns.items()}  # read once
    for row, query_id in enumerate(query_ids):
        for line in lines:
            if not line.per_query:
                continue
            if line.value == "string":
                yield f"{line.label:<22}\t{query_id}\t'{strings[line.label][row]}'"
            elif line.metric is not None:
                yield _line(line, query_id, floats[line.label][row], z)


def _summary_lines(
    options: _Options,
    lines: list[Measure],
    columns: dict[str, Any],
    inputs: _Inputs,
    query_ids: list[str],
    z: str,
) -> Iterator[str]:
    qrels = inputs.qrels
    for line in lines:
        if line.value == "runid":
            yield f"{'runid':<22}\tall\t{inputs.run_id}"
        elif line.value == "num_q":
            yield _line(line, "all", float(len(query_ids)), z)
        elif line.summary == "judged_relevant" and options.complete:
            positive = sum(1 for q in qrels.query_ids for g in qrels[q].values() if g > 0)
            yield _line(line, "all", float(positive), z)
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
        table.setdefault(query, {})[measure] = (_c_double(mean), _c_double(stddev))
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
    run: Any, qrels: Any, query_ids: list[str], options: _Options, absent: list[str]
) -> Any:
    """The run as trec_eval scores it: cut at -M, only judged docs with -J, trec_eval's
    one-doc ranking for each judged query the run lacks (-c)."""
    from ragmetrics.data._run import Run
    from ragmetrics.engine._settings import keep_judged

    if options.max_docs is not None:
        if options.max_docs < 0:  # trec_eval ends in a segmentation fault
            raise TrecEvalError(f"ragmetrics trec_eval: -M {options.max_docs}: give 0 or more.", 1)
        if options.max_docs == 0:  # every ranking cut to nothing
            return Run.from_dict({q: {} for q in query_ids}, name=run.name)
        run = run.truncate(options.max_docs)
    if not options.judged_only and not absent:
        return run
    everything = run.to_dict()
    scored = {q: everything[q] for q in query_ids if q in everything}
    for query_id in absent:
        scored[query_id] = {BOGUS_DOC: 1.0}
    kept = Run.from_dict(scored, name=run.name)
    # the one-doc ranking of -c is unjudged: -J empties it too
    return keep_judged(kept, qrels) if options.judged_only else kept


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
    if value != value:  # NaN (a 0 / 0 of trec_eval's too): C's printf shows its sign
        shown = f"{'-nan' if math.copysign(1.0, value) < 0 else 'nan':>6}"
    elif measure.value in ("long", "num_q") and not z:
        shown = str(int(value))
    else:
        shown = f"{value:6.4f}"
    return f"{z}{measure.label:<22}\t{query_id}\t{shown}"


def _help(specs: list[str]) -> Iterator[str]:
    from ragmetrics.metrics.registry import parse_metric

    yield USAGE
    yield ""
    yield "Evaluates RUN (a TREC run) against QRELS (TREC judgments) and prints trec_eval's"
    yield "lines. Flags: -q every query too; -c average over every judged query (a query"
    yield "without results counts as retrieving nothing); -n no summary; -J only judged docs;"
    yield "-l N lowest relevant grade; -M N at most N docs per query; -N N docs in the"
    yield "collection (utility); -m MEASURE[.PARAMS] a measure, family or set (official,"
    yield "all_trec, set, qrels_jg, all_prefs, prefs); -D N[.QID] only query QID; -R FORMAT"
    yield "the judgments' format (qrels, qrels_jg, prefs, qrels_prefs); -Z FILE z-scores;"
    yield "-v version."
    yield ""
    names = [s.partition(".")[0] for s in specs] or list(_FAMILIES)
    for name in names:
        family = _FAMILIES.get(name)
        if family is None:
            continue
        line = family.make(name, _parameters(name, family, None)[0])
        if name in _SAID:
            summary = _SAID[name]
        elif line.preference:
            summary = "preferences (-R prefs): " + _PREFS_SAID.get(name.split("_", 1)[1], "")
        else:
            assert line.metric is not None
            summary = parse_metric(line.metric).spec.summary
            summary += " (mean over judgment groups)" if line.per_group else ""
        yield f"  {name:<22} {summary}"


# what the command says of the lines that are not a metric's mean
_SAID = {
    "runid": "the run's tag (its last line's)",
    "num_q": "queries evaluated",
    "gm_map": "average precision, geometric mean over queries",
    "relstring": "each ranked doc's grade as a character (- unjudged), per query",
}
_PREFS_SAID = {
    "num_prefs_poss": "preferences the judgments state, summed over groups",
    "num_prefs_ful": "preferences the ranking fulfils, retrieved or implied",
    "num_prefs_ful_ret": "preferences fulfilled among retrieved docs",
    "simp": "preferences fulfilled / stated",
    "pair": "per pair of docs, the share of its preferences fulfilled, averaged",
    "avgjg": "preferences fulfilled / stated within each group, averaged over groups",
    "avgjg_Rnonrel": "as avgjg, with as many non-relevant docs as relevant ones",
    "simp_ret": "as simp, among retrieved docs",
    "pair_ret": "as pair, among retrieved docs",
    "avgjg_ret": "as avgjg, among retrieved docs",
    "avgjg_Rnonrel_ret": "as avgjg_Rnonrel, among retrieved docs",
    "simp_imp": "as simp, counting the implied preferences",
    "pair_imp": "as pair, counting the implied preferences",
    "avgjg_imp": "as avgjg, counting the implied preferences",
}


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
            for line in run_trec_eval(argv):
                sys.stdout.write(line + "\n")
    except TrecEvalError as exc:
        sys.stdout.flush()
        print(str(exc), file=sys.stderr)
        return exc.code
    except (InvalidParameterError, UnknownMetricError) as exc:
        sys.stdout.flush()
        print(f"ragmetrics trec_eval: {exc}", file=sys.stderr)
        return 1
    return 0


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
