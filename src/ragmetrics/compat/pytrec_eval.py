"""pytrec_eval's API on ragmetrics: change one import.

    # import pytrec_eval
    from ragmetrics.compat import pytrec_eval

    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut.10", "P_5"})
    per_query = evaluator.evaluate(run)  # {query_id: {"map": ..., "ndcg_cut_10": ..., ...}}

Measures are named as pytrec_eval names them (trec_eval's ``-m`` names, with parameters
after ``.`` or ``_``; the nicknames ``official``, ``set``, ``all_trec``), and values are
pytrec_eval's: scores compared as 32-bit floats (trec_eval 9's ``float``), the queries
scored are those with both judgments and results, ``relevance_level`` and
``judged_docs_only_flag`` are trec_eval's ``-l`` and ``-J``, ``gm_`` measures hold the
logarithm their geometric mean averages, and ``runid`` and ``num_q`` hold 0 and 1 per query.
"""

from __future__ import annotations

import collections
import math
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from ragmetrics.cli._trec_measures import MIN_GEO_MEAN, Measure, TrecEvalError
from ragmetrics.cli._trec_measures import measures as trec_lines
from ragmetrics.errors import InputFormatError, InvalidParameterError

__all__ = [
    "RelevanceEvaluator",
    "parse_qrel",
    "parse_run",
    "supported_measures",
    "supported_nicknames",
]

# the measures and nicknames of trec_eval 9.0.8, which pytrec_eval wraps
_OFFICIAL = {
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
}
_SET = {
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "set_P",
    "set_relative_P",
    "set_recall",
    "set_map",
    "set_F",
    "utility",
}
_ALL_TREC = (
    _OFFICIAL
    | _SET
    | {
        "recall",
        "infAP",
        "gm_bpref",
        "Rprec_mult",
        "11pt_avg",
        "ndcg",
        "ndcg_cut",
        "ndcg_rel",
        "Rndcg",
        "binG",
        "G",
        "map_cut",
        "relative_P",
        "success",
        "num_nonrel_judged_ret",
        "relstring",
    }
)
supported_measures = frozenset(_ALL_TREC)
supported_nicknames = {"official": set(_OFFICIAL), "set": set(_SET), "all_trec": set(_ALL_TREC)}


def parse_run(lines: Iterable[str]) -> dict[str, dict[str, float]]:
    """A TREC run file's lines as ``{query_id: {doc_id: score}}`` (a doc twice is an error)."""
    return _parse(lines, 6, "Run", lambda f: (f[0], f[2], float(f[4])))


def parse_qrel(lines: Iterable[str]) -> dict[str, dict[str, int]]:
    """A TREC qrels file's lines as ``{query_id: {doc_id: grade}}``."""
    return _parse(lines, 4, "Qrels", lambda f: (f[0], f[2], int(f[3])))


def _parse(
    lines: Iterable[str], width: int, what: str, pick: Callable[[list[str]], tuple[str, str, Any]]
) -> dict[str, Any]:
    parsed: dict[str, dict[str, Any]] = collections.defaultdict(dict)
    for number, line in enumerate(lines, start=1):
        fields = line.split()
        if len(fields) != width:
            raise InputFormatError(
                f"{what} line {number}: expected {width} fields, got {len(fields)}."
            )
        query_id, doc_id, value = pick(fields)
        if doc_id in parsed[query_id]:
            raise InputFormatError(f"{what} line {number}: doc {doc_id!r} twice for {query_id!r}.")
        parsed[query_id][doc_id] = value
    return dict(parsed)


# measures trec_eval 9 names without their parameters (trec_eval 10 writes set_F_0.50)
_BARE_IN_TREC9 = ("set_F", "11pt_avg", "relstring")

_PARAMETERS = re.compile(r"[._]([0-9]+(?:\.[0-9]+)?(?:,[0-9]+(?:\.[0-9]+)?)*)$")


def _combined(given: Iterable[str]) -> list[str]:
    """pytrec_eval's reading of measure names: nicknames expanded, ``P_5`` and ``P.5`` both
    ``P`` at 5, the parameters of one measure given several times merged."""
    if isinstance(given, str):
        raise InvalidParameterError(
            f"measures is a set of names, e.g. {{{given!r}}}; got the string {given!r}."
        )
    wanted: dict[str, set[str]] = {}
    for name in given:
        if name in supported_nicknames:
            for member in supported_nicknames[name]:
                wanted.setdefault(member, set())
            continue
        if name in supported_measures:
            wanted.setdefault(name, set())
            continue
        base = next(
            (
                m
                for m in sorted(supported_measures, key=len, reverse=True)
                if name.startswith(m) and _PARAMETERS.fullmatch(name[len(m) :])
            ),
            None,
        )
        if base is None:
            raise InvalidParameterError(
                f"unsupported measure {name!r} (pytrec_eval's measures: "
                f"{', '.join(sorted(supported_measures))}; nicknames: "
                f"{', '.join(supported_nicknames)})."
            )
        match = _PARAMETERS.fullmatch(name[len(base) :])
        assert match is not None
        wanted.setdefault(base, set()).update(match.group(1).split(","))
    specs = []
    for name, parameters in wanted.items():
        numeric = sorted(parameters, key=float)
        specs.append(f"{name}.{','.join(numeric)}" if numeric else name)
    return specs


class RelevanceEvaluator:
    """pytrec_eval's ``RelevanceEvaluator``: judgments and measures once, then
    :meth:`evaluate` for each run."""

    def __init__(
        self,
        query_relevance: Mapping[str, Mapping[str, int]],
        measures: Iterable[str],
        relevance_level: int = 1,
        judged_docs_only_flag: bool = False,
    ) -> None:
        from ragmetrics.data._qrels import Qrels

        try:
            self._lines = trec_lines(_combined(measures))
        except TrecEvalError as exc:
            raise InvalidParameterError(str(exc).replace("trec_eval: ", "")) from exc
        # trec_eval 9 turns a recall level into relevant docs as floor(level x R + 0.9)
        self._metrics = {line.label: _trec9(line) for line in self._lines}
        # each line's name in pytrec_eval's output (trec_eval 9 prints some without "_k")
        self._names = [
            next((bare for bare in _BARE_IN_TREC9 if line.label.startswith(bare + "_")), line.label)
            for line in self._lines
        ]
        if (
            isinstance(relevance_level, bool)
            or not isinstance(relevance_level, int)
            or relevance_level < 1
        ):
            raise InvalidParameterError(
                f"relevance_level must be 1 or more, as in pytrec_eval; got {relevance_level!r} "
                f"(ragmetrics.evaluate takes any relevance_threshold)."
            )
        judged = {q: dict(docs) for q, docs in query_relevance.items() if len(docs) > 0}
        self._qrels = Qrels.from_dict(judged)
        self._level = relevance_level
        self._judged_only = bool(judged_docs_only_flag)

    def evaluate(self, scores: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
        """``{query_id: {measure: value}}`` for every query with judgments and results."""
        from ragmetrics.data._run import Run
        from ragmetrics.engine._evaluation import evaluate

        if not scores:
            return {}
        qrels = self._qrels
        # the run's dicts are read as they are (a plain dict needs no copy)
        kept = {
            q: docs if type(docs) is dict else dict(docs)
            for q, docs in scores.items()
            if q in qrels
        }
        query_ids = list(kept)
        if not query_ids:
            return {}
        metrics = list(dict.fromkeys(filter(None, self._metrics.values())))
        columns: dict[str, list[float]] = {}
        if metrics:
            result = evaluate(
                qrels,
                Run.from_dict(kept),
                metrics,
                relevance_threshold=self._level,
                missing="skip",
                score_precision="float32",
                judged_only=self._judged_only,  # trec_eval's -J: docs graded >= 0 only
            )
            where = dict(zip(result.query_ids, range(len(result.query_ids))))
            rows = np.fromiter(map(where.__getitem__, query_ids), np.int64, len(query_ids))
            for index, metric in enumerate(metrics):
                columns[metric] = result.values[rows, index].astype(np.float64).tolist()
        # each output line's values over the queries, then one dict a query
        lines: list[Iterable[float]] = []
        n = len(query_ids)
        for line in self._lines:
            name = self._metrics[line.label]
            if line.value == "num_q":
                lines.append([1.0] * n)
            elif line.value in ("runid", "string") or name is None:
                lines.append([0.0] * n)
            elif line.summary == "gm":
                lines.append([math.log(max(value, MIN_GEO_MEAN)) for value in columns[name]])
            else:
                lines.append(columns[name])
        if not lines:
            return {query_id: {} for query_id in query_ids}
        return {
            query_id: dict(zip(self._names, values, strict=True))
            for query_id, values in zip(query_ids, zip(*lines, strict=True), strict=True)
        }


def _trec9(line: Measure) -> str | None:
    """The metric of a line, as trec_eval 9 computes it."""
    if line.metric is None or line.constant_zero:
        return None
    if not line.levels:
        return line.metric
    if len(line.levels) == 1 and line.label.startswith("iprec_at_recall"):
        return f"iprec_at_recall(level={max(line.levels[0], 0.0)!r},rounding=trec9)"
    levels = ";".join(map(repr, line.levels))
    return f"eleven_point_average(levels={levels},rounding=trec9)"
