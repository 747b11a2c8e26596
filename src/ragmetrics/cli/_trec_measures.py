"""trec_eval's measures: what each ``-m`` name and parameter list gives as output lines
(:func:`measures`), in trec_eval's order, and the errors and C readings they share with the
rest of ``ragmetrics trec_eval``."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

from ragmetrics._util.trec_names import PREFERENCE_COUNTS, PREFERENCE_MEASURES

__all__ = [
    "BOGUS_DOC",
    "MIN_GEO_MEAN",
    "USAGE",
    "VERSION",
    "Measure",
    "TrecEvalError",
    "c_double",
    "c_long",
    "help_lines",
    "measures",
]

USAGE = (
    "Usage: ragmetrics trec_eval [-h] [-q] [-c] [-n] [-J] [-l N] [-M N] [-N N] "
    "{-m measure[.params]}* QRELS RUN"
)
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
                persistence = c_double(value)
            gains.append(f"{key}:{c_double(value)!r}")
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
        lambda v: "eleven_point_average(levels='" + ";".join(map(repr, v)) + "')",
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


def c_long(text: str) -> int:
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


def c_double(text: str) -> float:
    """C's ``atof``: the longest leading part that reads as a number (decimal, hexadecimal
    as ``0x1p3``, or ``inf``, ``infinity`` and ``nan`` in any case)."""
    stripped = text.lstrip(" \t\n\v\f\r")
    special = _C_SPECIAL.match(stripped)
    if special:
        return float(special.group(0))
    hexadecimal = _C_HEX.match(stripped)
    if hexadecimal:
        return float.fromhex(hexadecimal.group(0))
    for end in range(len(stripped), 0, -1):
        part = stripped[:end]
        if part[-1:].isdigit() or part[-1:] == ".":
            try:
                return float(part)
            except ValueError:
                continue
    return 0.0


_C_SPECIAL = re.compile(r"[+-]?(?:infinity|inf|nan)", re.IGNORECASE)
_C_HEX = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?")


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
        cutoffs = sorted(c_long(p) for p in parts)
        if cutoffs[0] <= 0:
            raise TrecEvalError("trec_eval: Negative cutoff detected", 2)
        if len(set(cutoffs)) != len(cutoffs):
            raise TrecEvalError("trec_eval: duplicate cutoffs detected", 2)
        return cutoffs
    if family.kind == "levels":
        levels = sorted(c_double(p) for p in parts)
        if not all(map(math.isfinite, levels)):  # C's cast of them is undefined
            raise TrecEvalError(f"ragmetrics trec_eval: -m {name}.{text}: give finite numbers.", 1)
        if len(set(levels)) != len(levels):
            raise TrecEvalError("trec_eval: duplicate cutoffs detected", 2)
        return levels
    if family.kind == "numbers":
        return [(text, tuple(c_double(p) for p in parts))]
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


def help_lines(specs: list[str]) -> Iterator[str]:
    """What ``ragmetrics trec_eval -h`` prints: the usage, the flags, and each measure (of
    ``specs``, else all) in a line."""
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
