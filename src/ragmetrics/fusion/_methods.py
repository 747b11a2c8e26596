"""The fusion methods: one registered :class:`FusionMethod` each, named as ranx names them.

A method's ``combine`` turns the runs' rows (normalized) into one fused score per
candidate. Score-based methods (CombSUM and its family, the weighted sums) add up each run's
score of a doc, counting a run that missed it as 0; rank-based ones first give each ranked
doc a score from its rank (``1 / (k + rank)`` for RRF, a learned probability for ProbFuse)
and then add those up. Sums run over the runs in the order given, so values agree with
ranx's to the last bit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragmetrics._util.arrays import offsets_of
from ragmetrics._util.plugins import load_plugins
from ragmetrics._util.registries import Aliased
from ragmetrics.errors import InvalidParameterError
from ragmetrics.fusion import _train
from ragmetrics.fusion._table import Rows, Table, positions

__all__ = [
    "FUSION_METHODS",
    "REQUIRED",
    "FusionMethod",
    "fusion_method",
    "register_fusion_method",
]

REQUIRED = object()  # a parameter without a default

Combine = Callable[[Table, list[Rows], dict[str, Any]], np.ndarray]
Grid = Callable[[int, dict[str, Any]], list[dict[str, Any]]]


@dataclass(frozen=True)
class FusionMethod:
    """A registered fusion method.

    ``params``: its parameters and defaults (:data:`REQUIRED` where none). ``grid``: the
    trials :func:`optimize_fusion` tries (from the number of runs and the caller's grid
    settings, such as ``step``). ``trained``: the parameters learned from judged queries
    (ProbFuse's probabilities); ``uses_scores``: whether it reads scores (else only ranks).
    """

    name: str
    summary: str
    reference: str
    combine: Combine
    params: Mapping[str, Any] = field(default_factory=dict)
    grid: Grid | None = None
    grid_settings: Mapping[str, Any] = field(default_factory=dict)
    trained: tuple[str, ...] = ()
    uses_scores: bool = False


_REGISTRY: Aliased[FusionMethod] = Aliased("a fusion method")
FUSION_METHODS = _REGISTRY.entries


def register_fusion_method(method: FusionMethod, *aliases: str) -> FusionMethod:
    """Add a fusion method (under its name and ``aliases``) to :data:`FUSION_METHODS`."""
    return _REGISTRY.add(method.name, method, *aliases)


def fusion_method(name: str) -> FusionMethod | None:
    """The fusion method called ``name`` (or one of its aliases, or a plug-in's), else None."""
    found = _REGISTRY.get(name)
    if found is None and load_plugins():
        found = _REGISTRY.get(name)
    return found


# --- columns: one value per candidate ----------------------------------------------------


def _column(table: Table, rows: Rows, per_row: np.ndarray, fill: float = 0.0) -> np.ndarray:
    column = np.full(table.n_cand, fill)
    column[rows.cand] = per_row
    return column


def _present(table: Table, rows: Rows) -> np.ndarray:
    mask = np.zeros(table.n_cand, dtype=bool)
    mask[rows.cand] = True
    return mask


def _values(rows: Rows) -> np.ndarray:
    assert rows.values is not None
    return rows.values


def _per_count(counts: np.ndarray, of: Callable[[int], float]) -> np.ndarray:
    """``of(count)`` for each candidate's count of runs, computed once per distinct count
    with Python's math (numpy's vector log may differ from libm's in the last bit)."""
    table = np.array([of(c) if c else 0.0 for c in range(int(counts.max(initial=0)) + 1)])
    result: np.ndarray = table[counts]
    return result


def _sum_and_count(
    table: Table, runs: list[Rows], per_run: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    total = np.zeros(table.n_cand)
    count = np.zeros(table.n_cand, dtype=np.int64)
    for rows, values in zip(runs, per_run, strict=True):
        total += _column(table, rows, values)
        count += _present(table, rows)
    return total, count


def _scores_of(runs: list[Rows]) -> list[np.ndarray]:
    return [_values(rows) for rows in runs]


def _weights(params: dict[str, Any], n: int) -> list[float]:
    weights = params["weights"]
    return [1.0 / n] * n if weights is None else [float(w) for w in weights]


# --- score-based -------------------------------------------------------------------------


def _comb_sum(table: Table, runs: list[Rows], params: dict[str, Any]) -> np.ndarray:
    return _sum_and_count(table, runs, _scores_of(runs))[0]


def _comb_mnz(table: Table, runs: list[Rows], params: dict[str, Any]) -> np.ndarray:
    total, count = _sum_and_count(table, runs, _scores_of(runs))
    result: np.ndarray = total * count
    return result


def _comb_anz(table: Table, runs: list[Rows], params: dict[str, Any]) -> np.ndarray:
    total, count = _sum_and_count(table, runs, _scores_of(runs))
    result: np.ndarray = total / count
    return result


def _comb_gmnz(table: Table, runs: list[Rows], params: dict[str, Any]) -> np.ndarray:
    total, count = _sum_and_count(table, runs, _scores_of(runs))
    gamma = float(params["gamma"])
    result: np.ndarray = total * _per_count(count, lambda c: float(c) ** gamma)
    return result


def _stacked(table: Table, runs: list[Rows]) -> np.ndarray:
    """Runs x candidates, NaN where a run missed the doc."""
    return np.stack([_column(table, rows, _values(rows), np.nan) for rows in runs])


def _comb_max(table: Table, runs: list[Rows], params: dict[str, Any]) -> np.ndarray:
    result: np.ndarray = np.nanmax(_stacked(table, runs), axis=0)
    return result


def _comb_min(table: Table, runs: list[Rows], params: dict[str, Any]) -> np.ndarray:
    result: np.ndarray = np.nanmin(_stacked(table, runs), axis=0)
    return result


def _comb_med(table: Table, runs: list[Rows], params: dict[str, Any]) -> np.ndarray:
    stacked = np.sort(_stacked(table, runs), axis=0)  # NaN last
    count = np.sum(~np.isnan(stacked), axis=0)
    cols = np.arange(stacked.shape[1])
    low = stacked[(count - 1) // 2, cols]
    high = stacked[count // 2, cols]
    result: np.ndarray = np.where(count % 2 == 1, low, (low + high) / 2)
    return result


def _wsum(table: Table, runs: list[Rows], params: dict[str, Any]) -> np.ndarray:
    total = np.zeros(table.n_cand)
    for rows, weight in zip(runs, _weights(params, len(runs)), strict=True):
        total += weight * _column(table, rows, _values(rows))
    return total


def _wmnz(table: Table, runs: list[Rows], params: dict[str, Any]) -> np.ndarray:
    total = np.zeros(table.n_cand)
    weight_total = np.zeros(table.n_cand)
    for rows, weight in zip(runs, _weights(params, len(runs)), strict=True):
        total += _column(table, rows, _values(rows))
        weight_total += np.where(_present(table, rows), weight, 0.0)
    return total * weight_total


def _mixed(table: Table, runs: list[Rows], params: dict[str, Any]) -> np.ndarray:
    weights = _weights(params, len(runs))
    weighted = [_values(rows) * weight for rows, weight in zip(runs, weights, strict=True)]
    total, count = _sum_and_count(table, runs, weighted)
    result: np.ndarray = total * _per_count(count, math.sqrt)
    return result


# --- rank-based --------------------------------------------------------------------------


def _by_rank(
    table: Table, runs: list[Rows], score: Callable[[Rows, np.ndarray, int], np.ndarray]
) -> list[np.ndarray]:
    """Each run's rows scored from their ranks: ``score(rows, ranks, run_index)``."""
    return [score(rows, positions(rows.lengths), i) for i, rows in enumerate(runs)]


def _integer_powers(base: float, exponents: np.ndarray) -> np.ndarray:
    """``base ** e`` by repeated squaring, the way compiled integer powers are taken (ranx's
    RBC): it can differ from ``pow`` in the last bit."""
    result = np.ones(len(exponents))
    left = exponents.copy()
    big = left > 0x10000
    if big.any():
        result[big] = np.power(base, left[big].astype(np.float64))
        left[big] = 0
    factor = float(base)
    while left.any():
        odd = (left & 1).astype(bool)
        result[odd] *= factor
        left >>= 1
        factor *= factor
    return result


def _isr_scores(rows: Rows, ranks: np.ndarray, i: int) -> np.ndarray:
    result: np.ndarray = 1 / (ranks + 1) ** 2
    return result


def _isr(table: Table, runs: list[Rows], params: dict[str, Any]) -> np.ndarray:
    total, count = _sum_and_count(table, runs, _by_rank(table, runs, _isr_scores))
    result: np.ndarray = total * count
    return result


def _log_isr(table: Table, runs: list[Rows], params: dict[str, Any]) -> np.ndarray:
    total, count = _sum_and_count(table, runs, _by_rank(table, runs, _isr_scores))
    result: np.ndarray = total * _per_count(count, math.log)
    return result


def _logn_isr(table: Table, runs: list[Rows], params: dict[str, Any]) -> np.ndarray:
    total, count = _sum_and_count(table, runs, _by_rank(table, runs, _isr_scores))
    sigma = float(params["sigma"])
    result: np.ndarray = total * _per_count(count, lambda c: math.log(c + sigma))
    return result


def _rrf(table: Table, runs: list[Rows], params: dict[str, Any]) -> np.ndarray:
    k = params["k"]
    per_run = _by_rank(table, runs, lambda rows, ranks, i: 1 / (k + ranks + 1))
    return _sum_and_count(table, runs, per_run)[0]


def _rbc(table: Table, runs: list[Rows], params: dict[str, Any]) -> np.ndarray:
    phi = float(params["phi"])
    per_run = _by_rank(table, runs, lambda rows, ranks, i: (1 - phi) * _integer_powers(phi, ranks))
    return _sum_and_count(table, runs, per_run)[0]


def _borda_points(table: Table, runs: list[Rows]) -> list[np.ndarray]:
    """Per run, every candidate's Borda points: ``n - rank`` for a ranked doc (n the query's
    candidates), ``(n - m + 1) / 2`` for the others (m the docs the run ranked)."""
    n = table.cand_lengths
    points = []
    for rows in runs:
        unranked = np.repeat((n - rows.lengths + 1) / 2, n)
        ranked = np.repeat(n, rows.lengths) - positions(rows.lengths)
        unranked[rows.cand] = ranked
        points.append(unranked)
    return points


def _bordafuse(table: Table, runs: list[Rows], params: dict[str, Any]) -> np.ndarray:
    total = np.zeros(table.n_cand)
    for points in _borda_points(table, runs):
        total += points
    return total


def _w_bordafuse(table: Table, runs: list[Rows], params: dict[str, Any]) -> np.ndarray:
    total = np.zeros(table.n_cand)
    weights = _weights(params, len(runs))
    for points, weight in zip(_borda_points(table, runs), weights, strict=True):
        total += weight * points
    return total


def _condorcet_of(table: Table, runs: list[Rows], weights: Sequence[float] | None) -> np.ndarray:
    """Condorcet fusion: doc x goes before doc y when the runs ranking x above y outvote
    those ranking y above x (a doc a run missed ranks below all it ranked). Docs are ordered
    by how many others they beat, ties by their summed ranks, then by doc id, descending;
    the fused score is ``n - place`` (n candidates). Where the majorities form an order
    (no tie, no cycle) this is the order every Condorcet sort finds.

    The queries with the same number of candidates are counted together, a block of them
    at a time (their pairwise votes one array), not one query at a time."""
    n_cand = table.n_cand
    unranked = np.iinfo(np.int64).max // 4
    ranks = np.full((len(runs), n_cand), unranked, dtype=np.int64)
    for r, rows in enumerate(runs):
        ranks[r, rows.cand] = positions(rows.lengths)
    weight = np.ones(len(runs)) if weights is None else np.asarray(weights, dtype=np.float64)
    scores = np.zeros(n_cand)
    lengths = np.asarray(table.cand_lengths, dtype=np.int64)
    starts = offsets_of(lengths)[:-1]
    for n in np.unique(lengths).tolist():
        if not n:
            continue
        same = starts[lengths == n]
        per_block = max(1, _CONDORCET_CELLS // (n * n * len(runs)))
        for first in range(0, len(same), per_block):
            at = same[first : first + per_block, None] + np.arange(n)  # queries x candidates
            scores[at] = _condorcet_places(ranks[:, at], weight, table.sortable(at), n)
    return scores


# pairwise cells (runs x queries x candidates x candidates) counted at once
_CONDORCET_CELLS = 1 << 22


def _condorcet_places(
    block: np.ndarray, weight: np.ndarray, docs: np.ndarray, n: int
) -> np.ndarray:
    """``n - place`` of each candidate of queries of ``n`` candidates each (``block``: each
    run's rank of them, runs x queries x n; ``docs``: their ids, queries x n)."""
    above = block[:, :, :, None] < block[:, :, None, :]  # run r ranks x above y
    votes = np.tensordot(weight, above.astype(np.float64), axes=1)
    beats = (votes > votes.transpose(0, 2, 1)).sum(axis=2)
    summed = np.minimum(block, n).sum(axis=0)
    order_of_ids = np.argsort(np.argsort(docs, axis=1, kind="stable"), axis=1, kind="stable")
    order = np.lexsort((-order_of_ids, summed, -beats), axis=-1)
    places = np.empty(order.shape)
    np.put_along_axis(places, order, n - np.arange(n, dtype=np.float64), axis=1)
    return places


def _condorcet(table: Table, runs: list[Rows], params: dict[str, Any]) -> np.ndarray:
    return _condorcet_of(table, runs, None)


def _w_condorcet(table: Table, runs: list[Rows], params: dict[str, Any]) -> np.ndarray:
    return _condorcet_of(table, runs, _weights(params, len(runs)))


# --- trained ------------------------------------------------------------------------------


# what each learned parameter may hold: probabilities and MAPs lie in [0, 1], log-odds are
# any finite number
_LEARNED_RANGE = {"probs": (0.0, 1.0), "map_scores": (0.0, 1.0), "log_odds": (-math.inf, math.inf)}


def _learned(
    params: dict[str, Any], name: str, n_runs: int, *, scalar: bool = False
) -> list[np.ndarray]:
    """What a trained method learned, one entry per run (an array, or a number), each
    checked to be finite and in its range."""
    learned = list(params[name])
    if len(learned) != n_runs:
        raise InvalidParameterError(
            f"'{name}' holds what was learned for {len(learned)} runs; {n_runs} runs are "
            f"fused. Learn it again with optimize_fusion on these runs, in this order."
        )
    low, high = _LEARNED_RANGE.get(name, (-math.inf, math.inf))
    arrays = []
    for number, x in enumerate(learned, start=1):
        try:
            array = np.asarray(x, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            raise InvalidParameterError(
                f"'{name}' of run {number} is {x!r}, not numbers; pass what optimize_fusion "
                f"returned."
            ) from None
        array = np.atleast_1d(array) if scalar else array
        bad = ~(np.isfinite(array) & (array >= low) & (array <= high))
        if array.ndim != 1 or bad.any():
            shown = float(array[bad][0]) if array.ndim == 1 else x
            where = f" in [{low:g}, {high:g}]" if math.isfinite(low) else ""
            raise InvalidParameterError(
                f"'{name}' of run {number} holds {shown!r}; each value must be a finite "
                f"number{where}, in a flat list. Pass what optimize_fusion returned."
            )
        arrays.append(array)
    return arrays


def _probfuse(table: Table, runs: list[Rows], params: dict[str, Any]) -> np.ndarray:
    probs = _learned(params, "probs", len(runs))

    def score(rows: Rows, ranks: np.ndarray, i: int) -> np.ndarray:
        segments = len(probs[i])
        size = np.repeat(-(-rows.lengths // segments), rows.lengths)
        part = ranks // np.maximum(size, 1)
        result: np.ndarray = probs[i][part] / (part + 1)
        return result

    return _sum_and_count(table, runs, _by_rank(table, runs, score))[0]


def _segfuse(table: Table, runs: list[Rows], params: dict[str, Any]) -> np.ndarray:
    probs = _learned(params, "probs", len(runs))
    bounds = _train.SEGFUSE_BOUNDS

    def score(rows: Rows, ranks: np.ndarray, i: int) -> np.ndarray:
        inside = ranks < bounds[-1]
        part = np.searchsorted(bounds, np.minimum(ranks, bounds[-1] - 1), side="right") - 1
        prob = np.where(inside, probs[i][part], 0.0)
        result: np.ndarray = prob * (_values(rows) + 1)
        return result

    return _sum_and_count(table, runs, _by_rank(table, runs, score))[0]


def _posfuse(table: Table, runs: list[Rows], params: dict[str, Any]) -> np.ndarray:
    probs = _learned(params, "probs", len(runs))

    def score(rows: Rows, ranks: np.ndarray, i: int) -> np.ndarray:
        known = probs[i]
        result: np.ndarray = (
            np.where(ranks < len(known), known[np.minimum(ranks, max(len(known) - 1, 0))], 0.0)
            if len(known)
            else np.zeros(len(ranks))
        )
        return result

    return _sum_and_count(table, runs, _by_rank(table, runs, score))[0]


def _window_means(probs: np.ndarray, w: int, n: int) -> np.ndarray:
    """For each rank p of a ranking of n docs: the mean of the learned probabilities from
    rank p - w to p + w (cut to the ranking and to the ranks learned), added in order."""
    p = np.arange(n)
    low = np.maximum(p - w, 0)
    high = np.minimum(p + w, n - 1)
    width = 2 * w + 1
    index = low[:, None] + np.arange(width)[None, :]
    inside = (index <= high[:, None]) & (index < len(probs))
    padded = np.where(inside, probs[np.minimum(index, max(len(probs) - 1, 0))], 0.0)
    sums = np.cumsum(padded, axis=1)[:, -1] if width else np.zeros(n)
    result: np.ndarray = sums / (high - low + 1)
    return result


def _slidefuse(table: Table, runs: list[Rows], params: dict[str, Any]) -> np.ndarray:
    probs = _learned(params, "probs", len(runs))
    w = int(params["w"])

    def score(rows: Rows, ranks: np.ndarray, i: int) -> np.ndarray:
        out = np.zeros(len(ranks))
        if not len(probs[i]):
            return out
        lengths = np.repeat(rows.lengths, rows.lengths)
        for n in np.unique(lengths).tolist():
            here = lengths == n
            out[here] = _window_means(probs[i], w, n)[ranks[here]]
        return out

    return _sum_and_count(table, runs, _by_rank(table, runs, score))[0]


_MISSING_ODDS = math.log(0.001 / 0.999)


def _bayesfuse(table: Table, runs: list[Rows], params: dict[str, Any]) -> np.ndarray:
    odds = _learned(params, "log_odds", len(runs))
    total = np.zeros(table.n_cand)
    for i, rows in enumerate(runs):
        ranks = positions(rows.lengths)
        known = odds[i]
        here = np.where(ranks < len(known), known[np.minimum(ranks, len(known) - 1)], _MISSING_ODDS)
        total += _column(table, rows, here, _MISSING_ODDS)
    return total


def _mapfuse(table: Table, runs: list[Rows], params: dict[str, Any]) -> np.ndarray:
    maps = [float(m[0]) for m in _learned(params, "map_scores", len(runs), scalar=True)]
    per_run = _by_rank(table, runs, lambda rows, ranks, i: maps[i] / (ranks + 1))
    return _sum_and_count(table, runs, per_run)[0]


# --- grids for optimize_fusion -------------------------------------------------------------


def _decimals(step: float) -> int:
    """How many decimals ``step`` is written with (0.05 -> 2)."""
    text = repr(float(step))
    return len(text.split(".")[1]) if "." in text and "e" not in text else 12


MAX_TRIALS = 100_000  # optimize_fusion's default bound on a grid's settings


def _setting(settings: dict[str, Any], key: str, *, integer: bool = False) -> float:
    """A grid setting, checked: a finite number (an integer where ``integer``)."""
    value = settings[key]
    kinds: tuple[type, ...] = (int, np.integer) if integer else (int, float, np.number)
    valid = not isinstance(value, bool) and isinstance(value, kinds)
    number = float(settings[key]) if valid else math.nan
    if not math.isfinite(number):
        what = "an integer" if integer else "a finite number"
        raise InvalidParameterError(f"The grid setting {key}={value!r} must be {what}.")
    return float(number)


def _positive_step(settings: dict[str, Any], *, integer: bool = False) -> float:
    step = _setting(settings, "step", integer=integer)
    if step <= 0:
        raise InvalidParameterError(f"The grid setting step={settings['step']!r} must be > 0.")
    return step


def _bounded(count: int, settings: dict[str, Any], what: str) -> None:
    """Refuse, before any work, a grid of more settings than ``max_trials``."""
    limit = settings.get("max_trials", MAX_TRIALS)
    if count > limit:
        size = f"{count:,}" if count < 10**12 else f"about {float(count):.1e}"
        raise InvalidParameterError(
            f"The grid holds {size} settings of {what} (more than max_trials={limit:,}); "
            f"each is a fusion and an evaluation. Coarsen it (a larger step, a narrower "
            f"range), or raise max_trials to run it."
        )


def weight_grid(n_runs: int, settings: dict[str, Any]) -> list[dict[str, Any]]:
    """Every vector of ``n_runs`` weights, each a multiple of ``step`` in [0, 1], summing
    to 1 (counted in steps, so no vector is lost to rounding). ``step`` must divide 1."""
    step = _positive_step(settings)
    units = round(1 / step) if step >= 1e-9 else 0
    if units < 1 or abs(units * step - 1) > 1e-9:
        raise InvalidParameterError(
            f"The weights' step={settings['step']!r} must divide 1 (0.5, 0.25, 0.1, 0.05, "
            f"...): weights in steps of it are to sum to 1."
        )
    # vectors of n_runs counts summing to `units`: stars and bars
    _bounded(math.comb(units + n_runs - 1, n_runs - 1), settings, f"{n_runs} weights")
    digits = _decimals(step)
    return [
        {"weights": tuple(round(u * step, digits) for u in combo)}
        for combo in _compositions(units, n_runs)
    ]


def _compositions(total: int, parts: int) -> list[tuple[int, ...]]:
    """Every tuple of ``parts`` counts >= 0 summing to ``total``, in lexicographic order (the
    order of ``itertools.product`` filtered to the sum, without walking the product)."""
    if parts == 1:
        return [(total,)]
    return [
        (first, *rest)
        for first in range(total + 1)
        for rest in _compositions(total - first, parts - 1)
    ]


def _range_grid(name: str, low: str, high: str) -> Grid:
    def grid(n_runs: int, settings: dict[str, Any]) -> list[dict[str, Any]]:
        step = _positive_step(settings)
        bottom, top = _setting(settings, low), _setting(settings, high)
        _bounded(int((top - bottom) / step) + 1 if top >= bottom else 0, settings, name)
        digits = _decimals(step)
        values = [round(float(x), digits) for x in np.arange(bottom, top + step, step)]
        # arange's last step can overshoot the top (0.01 + 20 x 0.05 = 1.01): not tried
        return [{name: v} for v in values if v <= top]

    return grid


def _int_grid(name: str, low: str, high: str, step: str | None = None) -> Grid:
    def grid(n_runs: int, settings: dict[str, Any]) -> list[dict[str, Any]]:
        by = int(_positive_step(settings, integer=True)) if step else 1
        bottom = int(_setting(settings, low, integer=True))
        top = int(_setting(settings, high, integer=True))
        values = range(bottom, top + 1, by)
        _bounded(len(values), settings, name)
        return [{name: v} for v in values]

    return grid


_WEIGHTS = {"weights": None}
_STEP = {"step": 0.1}
_FOX = "Fox and Shaw, Combination of multiple searches, TREC-2 (1993)"

for _name, _summary, _combine in (
    ("sum", "CombSUM: the sum of the run's scores (0 where a run missed the doc)", _comb_sum),
    ("mnz", "CombMNZ: CombSUM times the number of runs that found the doc", _comb_mnz),
    ("anz", "CombANZ: CombSUM divided by the number of runs that found the doc", _comb_anz),
    ("max", "CombMAX: the highest score any run gave the doc", _comb_max),
    ("min", "CombMIN: the lowest score a run that found the doc gave it", _comb_min),
    ("med", "CombMED: the median of the scores of the runs that found the doc", _comb_med),
):
    register_fusion_method(
        FusionMethod(_name, _summary, _FOX, _combine, uses_scores=True),
        f"comb{_name}",
        f"comb_{_name}",
    )

register_fusion_method(
    FusionMethod(
        "gmnz",
        "CombGMNZ: CombSUM times (runs that found the doc) ** gamma",
        "Lee, Analyses of multiple evidence combination, SIGIR 1997",
        _comb_gmnz,
        {"gamma": REQUIRED},
        _range_grid("gamma", "min_gamma", "max_gamma"),
        {"min_gamma": 0.01, "max_gamma": 1.0, "step": 0.01},
        uses_scores=True,
    ),
    "combgmnz",
    "comb_gmnz",
)
_MOUROU = "Mourao et al., Inverse square rank fusion for multimodal search, CBMI 2014"
register_fusion_method(FusionMethod("isr", "ISR: CombMNZ of 1 / rank^2", _MOUROU, _isr))
register_fusion_method(
    FusionMethod(
        "log_isr", "log ISR: sum of 1 / rank^2 times ln(runs that found it)", _MOUROU, _log_isr
    )
)
register_fusion_method(
    FusionMethod(
        "logn_isr",
        "logN ISR: sum of 1 / rank^2 times ln(runs that found it + sigma)",
        _MOUROU,
        _logn_isr,
        {"sigma": 0.01},
        _range_grid("sigma", "min_sigma", "max_sigma"),
        {"min_sigma": 0.01, "max_sigma": 1.0, "step": 0.01},
    )
)
register_fusion_method(
    FusionMethod(
        "rrf",
        "Reciprocal rank fusion: the sum of 1 / (k + rank), rank from 1",
        "Cormack, Clarke and Buettcher, Reciprocal rank fusion outperforms Condorcet and "
        "individual rank learning methods, SIGIR 2009",
        _rrf,
        {"k": 60},
        _int_grid("k", "min_k", "max_k", "step"),
        {"min_k": 10, "max_k": 100, "step": 10},
    )
)
register_fusion_method(
    FusionMethod(
        "rbc",
        "Rank-biased centroid: the sum of (1 - phi) phi^rank, rank from 0",
        "Bailey et al., Retrieval consistency in the presence of query variations, SIGIR 2017",
        _rbc,
        {"phi": REQUIRED},
        _range_grid("phi", "min_phi", "max_phi"),
        {"min_phi": 0.01, "max_phi": 1.0, "step": 0.01},
    )
)
register_fusion_method(
    FusionMethod(
        "wsum",
        "Weighted sum of the runs' scores (weights default to 1 / runs)",
        "Wu, Data fusion in information retrieval, Springer 2012",
        _wsum,
        _WEIGHTS,
        weight_grid,
        _STEP,
        uses_scores=True,
    ),
    "weighted_sum",
)
register_fusion_method(
    FusionMethod(
        "wmnz",
        "Weighted CombMNZ: the sum of the scores times the summed weights of the runs that "
        "found the doc",
        "Wu, Data fusion in information retrieval, Springer 2012",
        _wmnz,
        _WEIGHTS,
        weight_grid,
        _STEP,
        uses_scores=True,
    )
)
register_fusion_method(
    FusionMethod(
        "mixed",
        "Mixed: the sum of weighted scores times sqrt(runs that found the doc)",
        "Wu, Data fusion in information retrieval, Springer 2012",
        _mixed,
        _WEIGHTS,
        weight_grid,
        _STEP,
        uses_scores=True,
    )
)
_ASLAM = "Aslam and Montague, Models for metasearch, SIGIR 2001"
register_fusion_method(
    FusionMethod("bordafuse", "Borda count over the union of docs", _ASLAM, _bordafuse)
)
register_fusion_method(
    FusionMethod(
        "w_bordafuse",
        "Weighted Borda count",
        _ASLAM,
        _w_bordafuse,
        _WEIGHTS,
        weight_grid,
        _STEP,
    )
)
_MONTAGUE = "Montague and Aslam, Condorcet fusion for improved retrieval, CIKM 2002"
register_fusion_method(
    FusionMethod(
        "condorcet", "Condorcet: pairwise majority order of the docs", _MONTAGUE, _condorcet
    )
)
register_fusion_method(
    FusionMethod(
        "w_condorcet",
        "Weighted Condorcet: pairwise majority with weighted votes",
        _MONTAGUE,
        _w_condorcet,
        _WEIGHTS,
        weight_grid,
        _STEP,
    )
)
register_fusion_method(
    FusionMethod(
        "probfuse",
        "ProbFuse: each run's ranking cut into segments; a doc scores the learned chance of "
        "relevance of its segment divided by the segment's number",
        "Lillis et al., ProbFuse: a probabilistic approach to data fusion, SIGIR 2006",
        _probfuse,
        {"probs": REQUIRED},
        _int_grid("n_segments", "min_n_segments", "max_n_segments"),
        {"min_n_segments": 1, "max_n_segments": 100},
        trained=("probs",),
    )
)
register_fusion_method(
    FusionMethod(
        "segfuse",
        "SegFuse: segments of growing size; the learned chance of relevance of the doc's "
        "segment times (normalized score + 1)",
        "Shokouhi, Segmentation of search engine results for effective data-fusion, ECIR 2007",
        _segfuse,
        {"probs": REQUIRED},
        trained=("probs",),
        uses_scores=True,
    )
)
register_fusion_method(
    FusionMethod(
        "slidefuse",
        "SlideFuse: the learned chance of relevance at each rank, averaged over a window of "
        "w ranks either side",
        "Lillis et al., Extending probabilistic data fusion using sliding windows, ECIR 2008",
        _slidefuse,
        {"probs": REQUIRED, "w": REQUIRED},
        _int_grid("w", "min_w", "max_w"),
        {"min_w": 1, "max_w": 100},
        trained=("probs",),
    )
)
register_fusion_method(
    FusionMethod(
        "posfuse",
        "PosFuse: the learned chance of relevance at the doc's rank",
        "Lillis et al., Estimating probabilities for effective data fusion, SIGIR 2010",
        _posfuse,
        {"probs": REQUIRED},
        trained=("probs",),
    )
)
register_fusion_method(
    FusionMethod(
        "bayesfuse",
        "BayesFuse: the sum of the learned log-odds of relevance at the doc's rank in each run",
        "Aslam and Montague, Models for metasearch, SIGIR 2001",
        _bayesfuse,
        {"log_odds": REQUIRED},
        trained=("log_odds",),
    )
)
register_fusion_method(
    FusionMethod(
        "mapfuse",
        "MAPFuse: the sum of each run's learned MAP divided by the doc's rank",
        "Lillis et al., Estimating probabilities for effective data fusion, SIGIR 2010",
        _mapfuse,
        {"map_scores": REQUIRED},
        trained=("map_scores",),
    )
)
