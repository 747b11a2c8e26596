"""Rank fusion: combine several runs over the same queries into one (hybrid retrieval).

:func:`fuse` combines runs with one of ranx's 25 methods (``rrf``, ``sum``, ``mnz``,
``wsum``, ``condorcet``, ``probfuse``...) after one of its score normalizations
(``min-max``, ``zmuv``, ``rank``, ``borda``...); :func:`optimize_fusion` picks a method's
parameters (RRF's ``k``, the weights of a weighted sum) on judged training queries, and
learns what the trained methods need. The values equal ranx's; the methods and their
references are listed in docs/fusion.md.

Example:
    >>> from ragmetrics import Run
    >>> bm25 = Run.from_dict({"q1": {"a": 12.0, "b": 9.5, "c": 3.1}})
    >>> dense = Run.from_dict({"q1": {"b": 0.91, "d": 0.88, "a": 0.35}})
    >>> fuse([bm25, dense], method="rrf")["q1"]
    ('b', 'a', 'd', 'c')
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ragmetrics._util.warn import warn
from ragmetrics.data._qrels import Qrels
from ragmetrics.data._run import Run, restricted
from ragmetrics.engine._settings import as_qrels
from ragmetrics.errors import InputFormatError, InvalidParameterError, QueryMismatchWarning
from ragmetrics.fusion import _train
from ragmetrics.fusion._methods import (
    FUSION_METHODS,
    MAX_TRIALS,
    REQUIRED,
    FusionMethod,
    fusion_method,
    register_fusion_method,
)
from ragmetrics.fusion._norms import (
    NORMALIZATIONS,
    Normalization,
    normalization,
    register_normalization,
)
from ragmetrics.fusion._table import Rows, Table, align, positions
from ragmetrics.metrics import parse_metric

__all__ = [
    "FUSION_METHODS",
    "NORMALIZATIONS",
    "REQUIRED",
    "FusionMethod",
    "Normalization",
    "fuse",
    "optimize_fusion",
    "positions",
    "register_fusion_method",
    "register_normalization",
]

RunsArg = Sequence[Run | Mapping[str, Any]] | Mapping[str, Run | Mapping[str, Any]]


def fuse(
    runs: RunsArg,
    method: str = "rrf",
    norm: str | None = "min-max",
    params: Mapping[str, Any] | None = None,
    *,
    name: str | None = None,
) -> Run:
    """Fuse ``runs`` (two or more, over the same queries) into one scored run.

    Args:
        runs: :class:`Run` objects (or dicts a Run is built from), in a list or a
            ``{name: run}`` mapping. Weights and learned parameters follow this order.
        method: a name from :data:`FUSION_METHODS` (ranx's names; ``combsum``, ``combmnz``
            and the other ``comb*`` spellings are aliases).
        norm: how each run's scores are normalized per query first: ``"min-max"`` (the
            default), ``"min-max-inverted"`` (for distances), ``"max"``, ``"sum"``,
            ``"zmuv"``, ``"rank"``, ``"borda"``, or None for the raw scores.
        params: the method's parameters, e.g. ``{"k": 60}`` for ``rrf``,
            ``{"weights": [0.3, 0.7]}`` for ``wsum``, or what :func:`optimize_fusion`
            returned.
        name: the fused run's name (default: the method and the runs' names).

    Returns:
        A scored :class:`Run` holding every doc any run retrieved for each query.
    """
    named = _named_runs(runs)
    spec, settings = _method_and_params(method, params, len(named))
    table, rows = _prepared(named, spec, norm)
    with np.errstate(over="ignore", invalid="ignore"):  # a non-finite score is refused below
        combined = spec.combine(table, rows, settings)
    fused = _checked_scores(spec, norm, table, combined)
    label = name or f"{spec.name}({', '.join(named)})"
    return _as_run(table, fused, label)


def optimize_fusion(
    qrels: Qrels | Mapping[str, Mapping[str, int]],
    runs: RunsArg,
    norm: str | None = "min-max",
    method: str = "wsum",
    metric: str = "ndcg",
    *,
    return_optimization_report: bool = False,
    relevance_threshold: int = 1,
    show_progress: bool = True,
    max_trials: int = MAX_TRIALS,
    **grid: Any,
) -> dict[str, Any] | tuple[dict[str, Any], dict[str, float]]:
    """Choose ``method``'s parameters on judged training queries; pass the result to
    :func:`fuse` as ``params``.

    Every setting of the method's grid (weights in steps of ``step=0.1`` summing to 1; RRF's
    ``k`` from ``min_k=10`` to ``max_k=100`` by ``step=10``; ``phi``, ``gamma`` and
    ``sigma`` from 0.01 to 1 by 0.01; ProbFuse's segments from 1 to 100; SlideFuse's window
    from 1 to 100) fuses the runs restricted to the judged queries, and ``metric`` (any
    name :func:`ragmetrics.evaluate` takes) scores it; the best wins, the last of equals
    (as in ranx). Trained methods (``probfuse``, ``segfuse``, ``slidefuse``, ``posfuse``,
    ``bayesfuse``, ``mapfuse``) also learn, from the same queries, what they need. Grid
    settings are keywords, named as in ranx: ``step``, ``min_k``, ``max_w``... The grid's
    size is counted before any work: one of more than ``max_trials`` settings (100,000 by
    default; 8 runs' weights in steps of 0.1 are 19,448) is refused with its size, and the
    progress bar shows the count.

    Returns:
        The best parameters, and with ``return_optimization_report=True`` also every
        setting tried (as text) with its score.
    """
    if not isinstance(metric, str):
        raise InvalidParameterError(
            f"metric must be one metric name, such as 'ndcg@10'; got {metric!r}."
        )
    parse_metric(metric)  # an unknown name is refused before any work
    judged = as_qrels(qrels)
    named = _named_runs(runs)
    spec = _method(method)
    if spec.grid is None and not spec.trained:
        raise InvalidParameterError(
            f"Fusion method {spec.name!r} has no parameter to choose or learn; call "
            f"fuse(runs, method={spec.name!r}) directly."
        )
    settings = dict(spec.grid_settings)
    unknown = sorted(set(grid) - set(settings))
    if unknown:
        offered = ", ".join(sorted(settings)) or "none"
        raise InvalidParameterError(
            f"optimize_fusion got unknown grid settings {unknown} for {spec.name!r} (it "
            f"takes: {offered})."
        )
    settings.update(grid)
    if isinstance(max_trials, bool) or not isinstance(max_trials, int) or max_trials < 1:
        raise InvalidParameterError(f"max_trials must be an integer >= 1; got {max_trials!r}.")
    settings["max_trials"] = max_trials
    training = sorted(judged.query_ids)
    restricted = {label: _restricted(run, training) for label, run in named.items()}
    table, rows = _prepared(restricted, spec, norm)
    lists: list[_train.HitLists] = []
    if spec.trained:
        marks = _train.relevant_candidates(table, judged, relevance_threshold)
        lists = [_train.hit_lists(table, r, marks, training) for r in rows]
    learned = _learn(spec, judged, table, rows, lists, relevance_threshold)
    trials = spec.grid(len(rows), settings) if spec.grid is not None else [{}]
    if not trials:
        raise InvalidParameterError(
            f"The grid of {spec.name!r} is empty with settings {settings}; widen it."
        )
    from ragmetrics._util.progress import progress_bar
    from ragmetrics.engine._evaluation import evaluate

    report: dict[str, float] = {}
    best: dict[str, Any] | None = None
    best_score = -math.inf
    desc = f"Optimizing {spec.name} ({len(trials):,} settings)"
    for trial in progress_bar(trials, desc=desc, disable=not show_progress):
        values = dict(spec.params)
        values.update(learned)
        values.update(_trained_for(spec, trial, lists))
        values.update(trial)
        fused = _as_run(table, spec.combine(table, rows, values), spec.name)
        score = evaluate(judged, fused, [metric], relevance_threshold=relevance_threshold)[metric]
        value = 0.0 if score is None else float(score)
        report[_describe(trial)] = value
        if value >= best_score:
            best_score = value
            best = {**learned, **_returned(spec, trial, values)}
    assert best is not None
    return (best, report) if return_optimization_report else best


# --- inputs -------------------------------------------------------------------------------


def _named_runs(runs: RunsArg) -> dict[str, Run]:
    if isinstance(runs, Run | str | bytes) or not isinstance(runs, Mapping | Sequence):
        raise InputFormatError(
            f"Fusion takes two or more runs, in a list or a {{name: run}} dict; got "
            f"{type(runs).__name__}."
        )
    items: Iterable[tuple[str | None, Any]]
    if isinstance(runs, Mapping):
        items = [(str(label), run) for label, run in runs.items()]
    else:
        items = [(None, run) for run in runs]
    named: dict[str, Run] = {}
    for number, (label, run) in enumerate(items, start=1):
        if not isinstance(run, Run):
            if not isinstance(run, Mapping):
                raise InputFormatError(
                    f"Run {number} to fuse is a {type(run).__name__}; give Run objects or "
                    f"{{query_id: {{doc_id: score}}}} dicts."
                )
            run = Run.from_obj(run, name=label)
        key = label or run.name or f"run{number}"
        if key in named:
            key = f"{key}#{number}"
        named[key] = run
    if len(named) < 2:
        raise InputFormatError(f"Fusion needs two or more runs; got {len(named)}.")
    query_sets = {label: set(run.query_ids) for label, run in named.items()}
    every = set().union(*query_sets.values())
    partial = {label: every - ids for label, ids in query_sets.items() if ids != every}
    if partial:
        described = "; ".join(
            f"{label!r} lacks {len(lacking)} ({', '.join(sorted(lacking)[:3])}"
            f"{', ...' if len(lacking) > 3 else ''})"
            for label, lacking in partial.items()
        )
        warn(
            f"The runs to fuse answer different queries: {described}. Each such query is "
            f"fused from the runs that answer it; restrict the runs to the same queries if "
            f"that is not meant.",
            QueryMismatchWarning,
        )
    return named


def _method(method: str) -> FusionMethod:
    spec = fusion_method(method) if isinstance(method, str) else None
    if spec is None:
        raise InvalidParameterError(
            f"Unknown fusion method {method!r}. Known: {', '.join(sorted(FUSION_METHODS))}."
        )
    return spec


def _method_and_params(
    method: str, params: Mapping[str, Any] | None, n_runs: int
) -> tuple[FusionMethod, dict[str, Any]]:
    spec = _method(method)
    if params is not None and not isinstance(params, Mapping):
        raise InvalidParameterError(
            f"params must map parameter names to values, e.g. {{'k': 60}}; got {params!r}."
        )
    given = dict(params or {})
    unknown = sorted(set(given) - set(spec.params))
    if unknown:
        takes = ", ".join(spec.params) or "no parameter"
        raise InvalidParameterError(
            f"Fusion method {spec.name!r} got unknown parameters {unknown}; it takes {takes}."
        )
    values = {**spec.params, **given}
    missing = [key for key, value in values.items() if value is REQUIRED]
    if missing:
        how = (
            "learn it with optimize_fusion(qrels, runs, method=...) (on the command line: "
            "--train QRELS) and pass what it returns"
            if set(missing) & set(spec.trained)
            else "give it in params (--param on the command line), or let optimize_fusion("
            "qrels, runs, method=...) choose it (--train QRELS)"
        )
        raise InvalidParameterError(
            f"Fusion method {spec.name!r} needs {', '.join(missing)}: {how}."
        )
    _check_values(spec, values, n_runs)
    return spec, values


def _check_values(spec: FusionMethod, values: dict[str, Any], n_runs: int) -> None:
    def number(key: str, low: float, high: float = math.inf) -> None:
        value = values[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InvalidParameterError(f"{spec.name}: {key} must be a number; got {value!r}.")
        if not (math.isfinite(value) and low <= value <= high):
            raise InvalidParameterError(
                f"{spec.name}: {key} must be in [{low}, {high}]; got {value!r}."
            )

    if "k" in values:
        number("k", 0)
    if "phi" in values:
        number("phi", 0, 1)
    if "sigma" in values:
        number("sigma", 0, 1)
    if "gamma" in values:
        number("gamma", -math.inf)
    if "w" in values:
        w = values["w"]
        if isinstance(w, bool) or not isinstance(w, (int, np.integer)) or w < 0:
            raise InvalidParameterError(f"{spec.name}: w must be an integer >= 0; got {w!r}.")
    if values.get("weights") is not None:
        weights = list(values["weights"])
        if len(weights) != n_runs:
            raise InvalidParameterError(
                f"{spec.name}: {len(weights)} weights for {n_runs} runs; give one per run, "
                f"in the order of the runs."
            )
        if not all(
            isinstance(w, (int, float)) and not isinstance(w, bool) and math.isfinite(w)
            for w in weights
        ):
            raise InvalidParameterError(
                f"{spec.name}: weights must be finite numbers; got {weights}."
            )


def _prepared(
    named: Mapping[str, Run], spec: FusionMethod, norm: str | None
) -> tuple[Table, list[Rows]]:
    """The runs aligned and normalized."""
    chosen: Normalization | None = None
    if norm is not None:
        chosen = normalization(norm) if isinstance(norm, str) else None
        if chosen is None:
            raise InvalidParameterError(
                f"Unknown normalization {norm!r}. Known: {', '.join(NORMALIZATIONS)}, or None."
            )
    if chosen is not None and chosen.reads_scores and chosen.keeps_order and not spec.uses_scores:
        # a rank-based method reads only the order, which this normalization leaves as it
        # was: it is skipped (its values would go unread)
        chosen = None
    # the scores matter where the method adds them or the normalization reorders by them
    reads_scores = spec.uses_scores if chosen is None else chosen.reads_scores
    scores_needed = spec.uses_scores and reads_scores
    for label, run in named.items():
        if scores_needed and not run.is_scored:
            raise InputFormatError(
                f"Run {label!r} is ranked lists without scores, and {spec.name!r} adds scores. "
                f"Use a rank-based method (rrf, isr, bordafuse...), or norm='rank' or "
                f"norm='borda' to score by rank."
            )
    table = align(list(named.values()))
    if reads_scores:
        for label, run_rows in zip(named, table.runs, strict=True):
            _refuse_infinite(label, run_rows, table, spec.name, norm)
    rows = table.runs
    if chosen is not None:
        rows = [
            chosen.apply(_with_rank_scores(r), table)
            if chosen.reads_scores
            else chosen.apply(r, table)
            for r in rows
        ]
    return table, rows


def _refuse_infinite(label: str, rows: Rows, table: Table, method: str, norm: str | None) -> None:
    """An infinite score has no place in a sum or a normalization (inf - inf is NaN): it
    is refused, naming where it is, rather than fused into a NaN."""
    if rows.values is None:
        return
    found = _first_not_finite(rows.values, rows.cand, table)
    if found is None:
        return
    doc, query, value, count = found
    raise InputFormatError(
        f"Run {label!r} gives doc {doc!r} of query {query!r} the score "
        f"{value!r} ({count} infinite score(s) in all); "
        f"{method!r} with norm={norm!r} computes with the scores, where an infinite one "
        f"has no finite result. Give finite scores, or fuse by rank: norm='rank' or "
        f"norm='borda', or a rank-based method (rrf, isr, bordafuse...)."
    )


def _first_not_finite(
    values: np.ndarray, cand: np.ndarray, table: Table
) -> tuple[str, str, float, int] | None:
    """The doc, query and value of the first score that is not finite, and how many are
    not; None when all are."""
    bad = np.flatnonzero(~np.isfinite(values))
    if not len(bad):
        return None
    first = int(cand[int(bad[0])])
    query = table.query_ids[int(table.cand_query[first])]
    return table.doc_ids(np.array([first]))[0], query, float(values[int(bad[0])]), len(bad)


def _checked_scores(
    spec: FusionMethod, norm: str | None, table: Table, fused: np.ndarray
) -> np.ndarray:
    """The fused scores, when every one is a finite number (so that the run's order is the
    order of its scores); else a refusal naming the first that is not."""
    fused = np.asarray(fused, dtype=np.float64)
    if fused.shape != (table.n_cand,):
        raise InvalidParameterError(
            f"Fusion method {spec.name!r} returned {fused.shape} scores for "
            f"{table.n_cand} candidates; a method returns one score per candidate."
        )
    found = _first_not_finite(fused, np.arange(table.n_cand), table)
    if found is not None:
        doc, query, value, count = found
        raise InputFormatError(
            f"Fusing with {spec.name!r} (norm={norm!r}) gives doc {doc!r} of "
            f"query {query!r} the score {value!r} ({count} such score(s)): "
            f"the runs' scores (or the method's parameters) are too large to combine in "
            f"float64. Normalize the scores (norm='min-max'), scale them down, or check the "
            f"parameters."
        )
    return fused


def _with_rank_scores(rows: Rows) -> Rows:
    """A run of ranked lists scored n, n-1, ..., 1 (what ``Run.to_dict`` gives it)."""
    if rows.values is not None:
        return rows
    return rows.with_values(
        (np.repeat(rows.lengths, rows.lengths) - positions(rows.lengths)).astype(np.float64)
    )


def _restricted(run: Run, query_ids: Sequence[str]) -> Run:
    """The run's rankings of the training queries only (the others play no part)."""
    wanted = set(query_ids)
    if set(run.query_ids) <= wanted:
        return run
    return restricted(run, [q for q in run.query_ids if q in wanted])


def _as_run(table: Table, fused: np.ndarray, name: str) -> Run:
    return Run.from_grouped(
        table.query_ids,
        table.cand_lengths,
        table.docs if table.docs.dtype.kind == "S" else table.doc_ids(),
        fused.astype(np.float64),
        name=name,
        distinct=True,  # one candidate per (query, doc)
    )


# --- training -----------------------------------------------------------------------------


def _learn(
    spec: FusionMethod,
    qrels: Qrels,
    table: Table,
    rows: list[Rows],
    lists: list[_train.HitLists],
    threshold: int,
) -> dict[str, Any]:
    """What a trained method learns once, whatever the grid's setting."""
    if spec.name in ("posfuse", "slidefuse"):
        return {"probs": [_train.position_probs(h) for h in lists]}
    if spec.name == "segfuse":
        return {"probs": [_train.segfuse_probs(h) for h in lists]}
    if spec.name == "bayesfuse":
        return {"log_odds": [_train.log_odds(h) for h in lists]}
    if spec.name == "mapfuse":
        from ragmetrics.engine._evaluation import evaluate

        maps = []
        for r in rows:
            result = evaluate(qrels, _ranked_run(table, r), ["map"], relevance_threshold=threshold)
            maps.append(float(result["map"] or 0.0))
        return {"map_scores": maps}
    return {}


def _ranked_run(table: Table, rows: Rows) -> Run:
    """One run's rows as a run of ranked lists, in their order."""
    docs = table.doc_ids(rows.cand)
    bounds = rows.offsets.tolist()
    return Run.from_lists(
        {q: docs[bounds[i] : bounds[i + 1]] for i, q in enumerate(table.query_ids)}
    )


def _trained_for(
    spec: FusionMethod, trial: dict[str, Any], lists: list[_train.HitLists]
) -> dict[str, Any]:
    """What a trial's setting changes in the learning (ProbFuse's number of segments)."""
    if spec.name != "probfuse":
        return {}
    segments = int(trial["n_segments"])
    return {"probs": [_train.segment_probs(h, segments) for h in lists]}


def _returned(spec: FusionMethod, trial: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """The parameters :func:`fuse` needs to reproduce the best trial."""
    if spec.name == "probfuse":
        return {"probs": values["probs"]}
    return {key: (list(v) if isinstance(v, tuple) else v) for key, v in trial.items()}


def _describe(trial: dict[str, Any]) -> str:
    if not trial:
        return "learned"
    if len(trial) == 1:
        (value,) = trial.values()
        return str(list(value) if isinstance(value, tuple) else value)
    return str(trial)
