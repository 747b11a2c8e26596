"""ir_measures' API on ragmetrics: change one import.

    # import ir_measures
    # from ir_measures import nDCG, P, AP, RR, Judged
    from ragmetrics.compat import ir_measures
    from ragmetrics.compat.ir_measures import nDCG, P, AP, RR, Judged

    ir_measures.calc_aggregate([nDCG@10, P(rel=2)@5, AP, RR@10, Judged@10], qrels, run)
    for metric in ir_measures.iter_calc([nDCG@10], qrels, run):
        print(metric.query_id, metric.measure, metric.value)

A measure means here what it means in ir_measures, whose providers define it: the
trec_eval measures (``AP``, ``nDCG``, ``P``, ``R``, ``RR``, ``Rprec``, ``Bpref``, ``infAP``,
``IPrec``, ``Success``, the ``Set*`` and ``Num*`` counts) as pytrec_eval computes them
(trec_eval 9, 32-bit scores), ``RR@k`` as MS MARCO's script, ``Judged@k`` as its own
Python, ``ERR@k`` and ``nDCG(dcg='exp-log2')@k`` as gdeval (grades up to 4, ``ERR``'s
maximum grade fixed at 4). A query is scored when it has judgments and results.
``RBP(p=, rel=)`` is trec_eval 10's rank-biased precision (ir_measures computes it with
cwl_eval or trectools). Differences from ir_measures: gdeval's values are printed to 5
decimals and read back by ir_measures, here they are exact; gdeval needs numeric query ids,
here any id serves.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from ragmetrics.errors import InputFormatError, InvalidParameterError, UnknownMetricError
from ragmetrics.formats._rules import INT64_MAX, INT64_MIN

__all__ = [
    "AP",
    "ERR",
    "MAP",
    "MRR",
    "NDCG",
    "RBP",
    "RR",
    "BPref",
    "Bpref",
    "IPrec",
    "Judged",
    "Measure",
    "Metric",
    "NumQ",
    "NumRel",
    "NumRelRet",
    "NumRet",
    "P",
    "Precision",
    "Qrel",
    "R",
    "RPrec",
    "Recall",
    "Rprec",
    "ScoredDoc",
    "SetAP",
    "SetF",
    "SetP",
    "SetR",
    "Success",
    "calc_aggregate",
    "evaluator",
    "infAP",
    "iter_calc",
    "nDCG",
    "parse_measure",
]

_UNSET = object()


class Qrel(NamedTuple):
    query_id: str
    doc_id: str
    relevance: int
    iteration: str = "0"


class ScoredDoc(NamedTuple):
    query_id: str
    doc_id: str
    score: float


class Metric(NamedTuple):
    query_id: str
    measure: Measure
    value: float


# name -> (parameter defaults; whether the cutoff is required, allowed or refused)
_SPECS: dict[str, tuple[dict[str, Any], str]] = {
    "AP": ({"rel": 1, "judged_only": False}, "optional"),
    "nDCG": ({"dcg": "log2", "gains": None, "judged_only": False}, "optional"),
    "P": ({"rel": 1, "judged_only": False}, "required"),
    "R": ({"rel": 1, "judged_only": False}, "required"),
    "RR": ({"rel": 1, "judged_only": False}, "optional"),
    "Rprec": ({"rel": 1, "judged_only": False}, "none"),
    "Bpref": ({"rel": 1}, "none"),
    "infAP": ({"rel": 1}, "none"),
    "IPrec": ({"recall": None, "rel": 1, "judged_only": False}, "none"),
    "Success": ({"rel": 1, "judged_only": False}, "required"),
    "NumQ": ({}, "none"),
    "NumRel": ({"rel": 1}, "none"),
    "NumRet": ({"rel": None}, "none"),
    "SetP": ({"rel": 1, "relative": False, "judged_only": False}, "none"),
    "SetR": ({"rel": 1}, "none"),
    "SetF": ({"rel": 1, "beta": 1.0, "judged_only": False}, "none"),
    "SetAP": ({"rel": 1, "judged_only": False}, "none"),
    "Judged": ({}, "required"),
    "ERR": ({}, "required"),
    "RBP": ({"p": 0.8, "rel": None}, "optional"),
}
_ALIASES = {
    "MAP": "AP",
    "NDCG": "nDCG",
    "MRR": "RR",
    "BPref": "Bpref",
    "RPrec": "Rprec",
    "Precision": "P",
    "Recall": "R",
    "NumRelRet": "NumRet",
}


@dataclass(frozen=True)
class Measure:
    """A measure and its parameters, written as ir_measures writes it (``P(rel=2)@5``):
    ``measure @ cutoff`` and ``measure(name=value)`` make new measures."""

    NAME: str
    params: tuple[tuple[str, Any], ...] = ()

    def __matmul__(self, cutoff: float) -> Measure:
        if self.NAME == "IPrec":  # IPrec@0.5: the recall level
            return self(recall=float(cutoff))
        return self(cutoff=cutoff)

    def __call__(self, **params: Any) -> Measure:
        merged = dict(self.params)
        merged.update(params)
        return _measure(self.NAME, merged)

    def param(self, name: str) -> Any:
        """The value of a parameter (its default when not given)."""
        given = dict(self.params)
        if name in given:
            return given[name]
        if name == "cutoff":
            return None
        return _SPECS[self.NAME][0][name]

    def __str__(self) -> str:
        given = dict(self.params)
        cutoff = given.pop("cutoff", None)
        if self.NAME == "IPrec" and "recall" in given:  # ir_measures writes IPrec@0.5
            cutoff = given.pop("recall")
        # in the order given, as ir_measures prints them
        inner = ",".join(f"{k}={_literal(v)}" for k, v in given.items())
        text = self.NAME + (f"({inner})" if inner else "")
        return text + (f"@{_literal(cutoff)}" if cutoff is not None else "")

    __repr__ = __str__

    def __hash__(self) -> int:
        return hash(str(self))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Measure) and str(self) == str(other)


def _literal(value: Any) -> str:
    if isinstance(value, Mapping):  # as ir_measures writes gains: a grade kept is not shown
        return "{" + ",".join(f"{k}:{v}" for k, v in value.items() if k != v) + "}"
    return repr(value)


def _number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)


# each parameter's valid values, as ir_measures documents them, and their words
_PARAM_RULES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "rel": (lambda v: _number(v) and float(v).is_integer(), "a whole number"),
    "p": (lambda v: _number(v) and 0 < v < 1, "a number in (0, 1)"),
    "beta": (lambda v: _number(v) and v > 0, "a number > 0"),
    "recall": (lambda v: _number(v) and 0 <= v <= 1, "a number in [0, 1]"),
    "cutoff": (
        lambda v: not isinstance(v, bool) and isinstance(v, int) and v >= 1,
        "an integer >= 1",
    ),
    "judged_only": (lambda v: isinstance(v, bool), "True or False"),
    "relative": (lambda v: isinstance(v, bool), "True or False"),
    "dcg": (lambda v: v in ("log2", "exp-log2"), "'log2' or 'exp-log2'"),
    "gains": (
        lambda v: (
            isinstance(v, Mapping)
            and all(_number(k) and float(k).is_integer() and _number(g) for k, g in v.items())
        ),
        "a mapping of whole grades to numbers",
    ),
}


def _check_param(measure: str, key: str, value: Any, default: Any) -> None:
    """Refuse a value outside the parameter's rule (:data:`_PARAM_RULES`); ``None`` stands
    for a parameter whose default is ``None``."""
    if value is None and default is None and key != "cutoff":
        return
    rule = _PARAM_RULES.get(key)
    if rule is not None and not rule[0](value):
        raise InvalidParameterError(f"{measure}'s {key} must be {rule[1]}; got {value!r}.")


def _measure(name: str, params: Mapping[str, Any]) -> Measure:
    canonical = _ALIASES.get(name, name)
    spec = _SPECS.get(canonical)
    if spec is None:
        raise UnknownMetricError(
            f"Measure {name!r} is not offered by the ir_measures port (it offers "
            f"{', '.join(sorted(set(_SPECS) | set(_ALIASES)))})."
        )
    defaults, cutoff_rule = spec
    kept: dict[str, Any] = {}
    for key, value in params.items():
        if key == "cutoff":
            if cutoff_rule == "none":
                raise InvalidParameterError(f"{canonical} takes no cutoff.")
            _check_param(canonical, key, value, None)
            kept[key] = value
            continue
        if key not in defaults:
            raise InvalidParameterError(
                f"{canonical} has no parameter {key!r} (it takes: "
                f"{', '.join(defaults) or 'none'}{', cutoff' if cutoff_rule != 'none' else ''})."
            )
        _check_param(canonical, key, value, defaults[key])
        if value != defaults[key]:
            kept[key] = dict(value) if isinstance(value, Mapping) else value
    if name == "NumRelRet" and "rel" not in kept:
        kept["rel"] = 1
    return Measure(canonical, tuple(kept.items()))  # in the order given, as ir_measures keeps it


AP = Measure("AP")
MAP = AP
nDCG = Measure("nDCG")  # noqa: N816 (ir_measures' name)
NDCG = nDCG
P = Measure("P")
Precision = P
R = Measure("R")
Recall = R
RR = Measure("RR")
MRR = RR
Rprec = Measure("Rprec")
RPrec = Rprec
Bpref = Measure("Bpref")
BPref = Bpref
infAP = Measure("infAP")  # noqa: N816 (ir_measures' name)
IPrec = Measure("IPrec")
Success = Measure("Success")
NumQ = Measure("NumQ")
NumRel = Measure("NumRel")
NumRet = Measure("NumRet")
NumRelRet = Measure("NumRet", (("rel", 1),))
SetP = Measure("SetP")
SetR = Measure("SetR")
SetF = Measure("SetF")
SetAP = Measure("SetAP")
Judged = Measure("Judged")
ERR = Measure("ERR")
RBP = Measure("RBP")

_SYNTAX = re.compile(r"^\s*([A-Za-z_]+)\s*(?:\((.*)\))?\s*(?:@\s*([0-9.]+))?\s*$")


def parse_measure(text: str) -> Measure:
    """``"nDCG@10"``, ``"P(rel=2)@5"``, ``"IPrec@0.5"``, ``"nDCG(gains={0:0,1:1,2:3})@10"``."""
    match = _SYNTAX.match(text)
    if match is None:
        raise UnknownMetricError(f"Cannot read the measure {text!r} (write e.g. 'P(rel=2)@5').")
    name, inner, cutoff = match.groups()
    params: dict[str, Any] = {}
    twice: list[str] = []
    if inner:
        try:
            call = ast.parse(f"f({inner})", mode="eval").body
            assert isinstance(call, ast.Call)
            assert not call.args
            for keyword in call.keywords:
                assert keyword.arg is not None
                if keyword.arg in params:
                    twice.append(keyword.arg)
                params[keyword.arg] = ast.literal_eval(keyword.value)
        except (SyntaxError, ValueError, AssertionError, TypeError, MemoryError, RecursionError):
            raise UnknownMetricError(
                f"Cannot read the parameters of {text!r}: write name=value, e.g. P(rel=2)@5."
            ) from None
    if twice:
        raise UnknownMetricError(f"{text!r} gives {twice[0]!r} twice; give each parameter once.")
    measure = _measure(name, params)
    if cutoff is not None:
        if _ALIASES.get(name, name) == "IPrec":  # IPrec@0.5: the recall level
            return measure(recall=float(cutoff))
        if not cutoff.isdigit():
            raise UnknownMetricError(f"The cutoff of {text!r} must be an integer.")
        return measure @ int(cutoff)
    return measure


# --- inputs --------------------------------------------------------------------------------


def _nested(
    given: Any, value: str, convert: Callable[[Any, str, str], Any], what: str
) -> dict[str, Any]:
    """``{query_id: {doc_id: convert(value)}}`` from a dict of dicts, a DataFrame with the
    columns ``query_id``, ``doc_id`` and ``value``, or rows (ir_measures' namedtuples)."""
    if isinstance(given, Mapping):
        if _plain(given, _PLAIN_VALUES[value]):
            return dict(given)  # nothing to convert: the inner dicts are read as they are
        return {
            str(q): {str(d): convert(v, str(q), str(d)) for d, v in docs.items()}
            for q, docs in given.items()
        }
    if hasattr(given, "itertuples"):
        columns = ["query_id", "doc_id", value]
        if not set(columns) <= set(given.columns):
            raise InputFormatError(
                f"A {what} DataFrame needs the columns {', '.join(columns)}; got "
                f"{list(given.columns)}."
            )
        given = given[columns].itertuples(index=False)
    out: dict[str, dict[str, Any]] = {}
    for row in given:
        out.setdefault(str(row[0]), {})[str(row[1])] = convert(row[2], str(row[0]), str(row[1]))
    return out


# the value types each input keeps as given (a run's float scores, the qrels' int grades)
_PLAIN_VALUES = {"score": float, "relevance": int}


def _plain(given: Mapping[Any, Any], kind: type) -> bool:
    """True when ``given`` is string ids mapped to plain dicts of string ids and values of
    exactly ``kind`` (grades within int64): what the conversion would give back unchanged."""
    if set(map(type, given)) - {str} or set(map(type, given.values())) - {dict}:
        return False
    for docs in given.values():
        if set(map(type, docs)) - {str} or set(map(type, docs.values())) - {kind}:
            return False
        if (
            kind is int
            and docs
            and not INT64_MIN <= min(docs.values()) <= max(docs.values()) <= INT64_MAX
        ):
            return False
    return True


def _qrels(qrels: Any) -> dict[str, dict[str, int]]:
    from ragmetrics.formats._convert import int_grade

    return _nested(qrels, "relevance", int_grade, "qrels")


def _run(run: Any) -> dict[str, dict[str, float]]:
    return _nested(run, "score", lambda v, q, d: float(v), "run")


# --- computing -----------------------------------------------------------------------------


def _trec_spec(measure: Measure) -> tuple[str, str]:
    """The pytrec_eval measure and the name of its value, for a trec_eval-backed measure."""
    name, cutoff = measure.NAME, measure.param("cutoff")
    if name == "AP":
        return ("map", "map") if cutoff is None else (f"map_cut.{cutoff}", f"map_cut_{cutoff}")
    if name == "nDCG":
        return ("ndcg", "ndcg") if cutoff is None else (f"ndcg_cut.{cutoff}", f"ndcg_cut_{cutoff}")
    if name == "P":
        return f"P.{cutoff}", f"P_{cutoff}"
    if name == "R":
        return f"recall.{cutoff}", f"recall_{cutoff}"
    if name == "Success":
        return f"success.{cutoff}", f"success_{cutoff}"
    if name == "IPrec":
        level = float(measure.param("recall"))
        return f"iprec_at_recall.{level}", f"iprec_at_recall_{level:.2f}"
    if name == "NumRet":
        return (
            ("num_ret", "num_ret")
            if measure.param("rel") is None
            else ("num_rel_ret", "num_rel_ret")
        )
    if name == "SetP":
        label = "set_relative_P" if measure.param("relative") else "set_P"
        return label, label
    if name == "SetF":
        beta = float(measure.param("beta"))
        return (f"set_F.{beta}", "set_F") if beta != 1.0 else ("set_F", "set_F")
    simple = {
        "RR": "recip_rank",
        "Rprec": "Rprec",
        "Bpref": "bpref",
        "infAP": "infAP",
        "NumQ": "num_q",
        "NumRel": "num_rel",
        "SetR": "set_recall",
        "SetAP": "set_map",
    }
    return simple[name], simple[name]


def _route(measure: Measure) -> str:
    """Which implementation ir_measures would use for ``measure``."""
    name = measure.NAME
    if name == "Judged":
        return "judged"
    if name == "ERR" or (name == "nDCG" and measure.param("dcg") == "exp-log2"):
        if measure.param("cutoff") is None:
            raise InvalidParameterError(f"{measure} needs a cutoff (gdeval scores at a depth).")
        return "gdeval"
    if name == "RR" and measure.param("cutoff") is not None:
        return "msmarco"
    if name == "RBP":
        return "rbp"
    if name == "nDCG" and measure.param("dcg") != "log2":
        raise InvalidParameterError(f"{measure}: dcg must be 'log2' or 'exp-log2'.")
    _, rule = _SPECS[name]
    if rule == "required" and measure.param("cutoff") is None:
        raise InvalidParameterError(f"{name} needs a cutoff, e.g. {name}@10.")
    if name == "IPrec" and measure.param("recall") is None:
        raise InvalidParameterError("IPrec needs a recall level, e.g. IPrec@0.5.")
    return "trec"


class _Evaluator:
    """Measures and judgments fixed; :meth:`iter_calc` and :meth:`calc_aggregate` per run."""

    def __init__(self, measures: Iterable[Measure | str], qrels: Any) -> None:
        self.measures = [parse_measure(m) if isinstance(m, str) else m for m in measures]
        for measure in self.measures:
            if not isinstance(measure, Measure):
                raise InvalidParameterError(
                    f"Measures are ir_measures objects (nDCG@10) or names ('nDCG@10'); got "
                    f"{measure!r}."
                )
        self.routes = {m: _route(m) for m in self.measures}
        given = _qrels(qrels)
        self.qrels = {q: docs for q, docs in given.items() if docs}
        # a judged query the run does not answer scores 0, as in ir_measures; a query given
        # with no judgment counts too for the measures ir_measures hands to pytrec_eval or
        # its own code, which keep the qrels as given
        self.all_query_ids = list(given)

    def iter_calc(self, run: Any) -> Iterator[Metric]:
        scores = _run(run)
        queries = [q for q in scores if q in self.qrels]
        trec = self._trec([m for m in self.measures if self.routes[m] == "trec"], scores)
        for measure in self.measures:
            route = self.routes[measure]
            if route == "trec":
                values = trec[measure]
            elif route == "judged":
                values = self._judged(measure, scores, queries)
            elif route == "msmarco":
                values = self._msmarco(measure, scores, queries)
            else:
                values = self._core(measure, scores, queries, route)
            for query_id in queries:
                if query_id in values:
                    yield Metric(query_id, measure, values[query_id])
            expected = self.qrels if route in ("gdeval", "msmarco") else self.all_query_ids
            for query_id in sorted(set(expected) - set(values)):
                yield Metric(query_id, measure, 0.0)

    def calc_aggregate(self, run: Any) -> dict[Measure, float]:
        totals: dict[Measure, list[float]] = {m: [] for m in self.measures}
        for metric in self.iter_calc(run):
            totals[metric.measure].append(metric.value)
        out: dict[Measure, float] = {}
        for measure, values in totals.items():
            if measure.NAME.startswith("Num"):
                out[measure] = float(sum(values))
            else:
                out[measure] = math.fsum(values) / len(values) if values else math.nan
        return out

    def _trec(
        self, measures: list[Measure], scores: dict[str, dict[str, float]]
    ) -> dict[Measure, dict[str, float]]:
        """Each trec_eval-backed measure's value per query: the measures that share the
        qrels' reading (gains, relevance level, judged docs only) and no output name are
        evaluated together, the run read once for all of them."""
        from ragmetrics.compat.pytrec_eval import RelevanceEvaluator

        # (how the qrels are read, output name -> pytrec_eval measure, (measure, name) pairs)
        groups: list[tuple[tuple[Any, int, bool], dict[str, str], list[tuple[Measure, str]]]]
        groups = []
        for measure in measures:
            spec, label = _trec_spec(measure)
            gains = measure.param("gains") if measure.NAME == "nDCG" else None
            rel = measure.param("rel") if "rel" in _SPECS[measure.NAME][0] else 1
            level = 1 if rel is None else int(rel)
            judged_only = bool(dict(measure.params).get("judged_only", False))
            key = (None if gains is None else tuple(gains.items()), level, judged_only)
            group = next((g for g in groups if g[0] == key and g[1].get(label, spec) == spec), None)
            if group is None:
                group = (key, {}, [])
                groups.append(group)
            group[1][label] = spec
            group[2].append((measure, label))
        out: dict[Measure, dict[str, float]] = {}
        for (gains_key, level, judged_only), specs, members in groups:
            qrels = self.qrels
            if gains_key is not None:  # ir_measures maps the grades to the gains first
                gains = dict(gains_key)
                qrels = {
                    q: {d: gains.get(g, g) for d, g in docs.items()} for q, docs in qrels.items()
                }
            evaluator = RelevanceEvaluator(qrels, set(specs.values()), level, judged_only)
            rows = evaluator.evaluate(scores)
            for measure, label in members:
                out[measure] = {q: row[label] for q, row in rows.items()}
        return out

    def _judged(
        self, measure: Measure, scores: dict[str, dict[str, float]], queries: list[str]
    ) -> dict[str, float]:
        cutoff = int(measure.param("cutoff"))
        out = {}
        for query_id in queries:
            ranked = sorted(scores[query_id].items(), key=lambda item: (-item[1], item[0]))
            top = ranked[:cutoff]
            if not top:
                continue
            judged = sum(doc in self.qrels[query_id] for doc, _ in top)
            out[query_id] = judged / min(cutoff, len(top))
        return out

    def _msmarco(
        self, measure: Measure, scores: dict[str, dict[str, float]], queries: list[str]
    ) -> dict[str, float]:
        cutoff = int(measure.param("cutoff"))
        rel = int(measure.param("rel"))
        out = {}
        for query_id in queries:
            ranked = sorted(scores[query_id].items(), key=lambda item: (-item[1], item[0]))
            relevant = {d for d, g in self.qrels[query_id].items() if g >= rel}
            out[query_id] = next(
                (1.0 / (i + 1) for i, (d, _) in enumerate(ranked[:cutoff]) if d in relevant), 0.0
            )
        return out

    def _core(
        self, measure: Measure, scores: dict[str, dict[str, float]], queries: list[str], route: str
    ) -> dict[str, float]:
        from ragmetrics.engine._evaluation import evaluate

        cutoff = measure.param("cutoff")
        keywords: dict[str, Any] = {"missing": "skip"}
        if route == "gdeval":
            worst = max((g for docs in self.qrels.values() for g in docs.values()), default=0)
            if worst > 4:
                raise InvalidParameterError(
                    f"{measure}: gdeval takes grades up to 4; the qrels hold {worst}."
                )
            if measure.NAME == "ERR":
                label, keywords["err_max_grade"] = f"err@{cutoff}", 4
            else:
                label = f"ndcg(dcg=exp-log2)@{cutoff}"
        else:  # rbp
            p = float(measure.param("p"))
            rel = measure.param("rel")
            label = f"rbp(p={p!r})" + (f"@{cutoff}" if cutoff is not None else "")
            keywords["relevance_threshold"] = 1 if rel is None else int(rel)
        wanted = {q: scores[q] for q in queries}
        judged = {q: self.qrels[q] for q in queries}
        if not wanted:
            return {}
        result = evaluate(judged, wanted, [label], **keywords)
        column = result.column(label)
        return {q: float(column[i]) for i, q in enumerate(result.query_ids) if q in wanted}


def evaluator(measures: Iterable[Measure | str], qrels: Any) -> _Evaluator:
    """An evaluator for ``measures`` on ``qrels``: call ``iter_calc(run)`` or
    ``calc_aggregate(run)`` on it for each run."""
    return _Evaluator(measures, qrels)


def iter_calc(measures: Iterable[Measure | str], qrels: Any, run: Any) -> Iterator[Metric]:
    """``Metric(query_id, measure, value)`` for each measure and each query with judgments
    and results."""
    return evaluator(measures, qrels).iter_calc(run)


def calc_aggregate(measures: Iterable[Measure | str], qrels: Any, run: Any) -> dict[Measure, float]:
    """Each measure's value over the queries (the mean; the sum for the ``Num`` counts)."""
    return evaluator(measures, qrels).calc_aggregate(run)
