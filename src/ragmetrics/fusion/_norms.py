"""Score normalizations, applied to each run query by query before fusing.

Each takes the run's rows and the fusion's table and returns new rows; all but ``borda``
keep the rows and change the values. Denominators are floored at 1e-9 (a query whose
scores are all equal normalizes to zeros instead of dividing by zero), and sums and means
add a query's scores one by one from the best, as ranx does, so that values agree with it
to the last bit.

Scores near the ends of float64 (``1e308`` and ``-1e308`` in one query) overflow the
differences and sums these formulas take, where ranx answers NaN. Each such query is worked
out again on its scores scaled by a power of two (exact in binary, and every normalization
here is unchanged by scaling), so every normalized value is finite and in the order of the
scores; the other queries keep the unscaled arithmetic, bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from ragmetrics._util.arrays import offsets_of
from ragmetrics._util.plugins import load_plugins
from ragmetrics._util.registries import Aliased
from ragmetrics.fusion._table import Rows, Table, positions, sequential_sums

__all__ = ["NORMALIZATIONS", "Normalization", "normalization", "register_normalization"]

FLOOR = 1e-9


@dataclass(frozen=True)
class Normalization:
    """A registered normalization: its name, what it does, whether it reads scores
    (``rank`` and ``borda`` read only the order, so they also serve runs of ranked lists),
    and whether it keeps each run's order (``min-max-inverted`` reverses it, so it matters
    to rank-based methods too)."""

    name: str
    summary: str
    apply: Callable[[Rows, Table], Rows]
    reads_scores: bool = True
    keeps_order: bool = True


_REGISTRY: Aliased[Normalization] = Aliased("a normalization")
NORMALIZATIONS = _REGISTRY.entries


def register_normalization(norm: Normalization, *aliases: str) -> Normalization:
    """Add a normalization (under its name and ``aliases``) to :data:`NORMALIZATIONS`."""
    return _REGISTRY.add(norm.name, norm, *aliases)


def normalization(name: str) -> Normalization | None:
    """The normalization called ``name`` (or one of its aliases, or a plug-in's), else None."""
    found = _REGISTRY.get(name)
    if found is None and load_plugins():
        found = _REGISTRY.get(name)
    return found


def _per_row(rows: Rows, per_query: np.ndarray) -> np.ndarray:
    return np.repeat(per_query, rows.lengths)


def _extremes(rows: Rows) -> tuple[np.ndarray, np.ndarray]:
    """Each query's lowest and highest score (0 for a query without rows)."""
    values = _scores(rows)
    lows = np.zeros(len(rows.lengths))
    highs = np.zeros(len(rows.lengths))
    full = rows.lengths > 0
    starts = offsets_of(rows.lengths)[:-1][full] if len(rows.lengths) else rows.lengths
    if len(values):
        lows[full] = np.minimum.reduceat(values, starts)
        highs[full] = np.maximum.reduceat(values, starts)
    return lows, highs


def _scores(rows: Rows) -> np.ndarray:
    assert rows.values is not None
    return rows.values


def _unit_scaled(rows: Rows, values: np.ndarray) -> np.ndarray:
    """``values`` times a power of two per query that brings the query's largest magnitude
    into [0.5, 1): exact in binary (but for scores 2^1000 times smaller than the largest,
    which could not move the normalized values anyway)."""
    if not len(values):
        return values
    full = rows.lengths > 0
    starts = offsets_of(rows.lengths)[:-1][full]
    largest = np.zeros(len(rows.lengths))
    largest[full] = np.maximum.reduceat(np.abs(values), starts)
    _, exponents = np.frexp(largest)
    result: np.ndarray = np.ldexp(values, -_per_row(rows, exponents))
    return result


Kernel = Callable[[Rows], tuple[np.ndarray, np.ndarray]]


def _overflowed(rows: Rows, normalized: np.ndarray, denominators: np.ndarray) -> np.ndarray:
    """The queries whose denominator or a value overflowed (a mask over queries)."""
    bad = ~np.isfinite(normalized)
    found: np.ndarray = (np.bincount(rows.query[bad], minlength=len(rows.lengths)) > 0) | ~(
        np.isfinite(denominators)
    )
    return found


def _guarded(kernel: Kernel, again: Kernel | None = None) -> Callable[[Rows, Table], Rows]:
    """``kernel`` (a scale-free normalization of a run's rows, returning the values and a
    number per query that overflows with them) with the queries it overflows on done again
    on scaled scores, by ``again`` (default: the kernel itself)."""

    def apply(rows: Rows, table: Table) -> Rows:
        with np.errstate(over="ignore", invalid="ignore"):  # found and worked out again below
            values, of_query = kernel(rows)
        broken = _overflowed(rows, values, of_query)
        if broken.any():
            scaled, _ = (again or kernel)(rows.with_values(_unit_scaled(rows, _scores(rows))))
            values = np.where(np.repeat(broken, rows.lengths), scaled, values)
        return rows.with_values(values)

    return apply


def _min_max_values(rows: Rows) -> tuple[np.ndarray, np.ndarray]:
    lows, highs = _extremes(rows)
    denominator = np.maximum(highs - lows, FLOOR)
    values = (_scores(rows) - _per_row(rows, lows)) / _per_row(rows, denominator)
    return values, denominator


_min_max = _guarded(_min_max_values)


def _min_max_inverted_values(rows: Rows) -> tuple[np.ndarray, np.ndarray]:
    lows, highs = _extremes(rows)
    denominator = np.maximum(highs - lows, FLOOR)
    values = (_per_row(rows, highs) - _scores(rows)) / _per_row(rows, denominator)
    return values, denominator


_min_max_inverted_guarded = _guarded(_min_max_inverted_values)


def _min_max_inverted(rows: Rows, table: Table) -> Rows:
    values = _scores(_min_max_inverted_guarded(rows, table))
    # the best doc now scores lowest: rank again (equal values keep their order)
    order = np.lexsort((np.arange(len(values)), -values, rows.query))
    return Rows(rows.cand[order], rows.lengths, values[order])


def _max_values(rows: Rows) -> tuple[np.ndarray, np.ndarray]:
    _, highs = _extremes(rows)
    denominator = np.maximum(highs, FLOOR)
    return _scores(rows) / _per_row(rows, denominator), denominator


# a query whose best score is 0 or below divides by FLOOR, which a score of -1e299 overflows:
# worked out again on its scores scaled by a power of two, as the other normalizations are
_max = _guarded(_max_values)


def _sum_values(rows: Rows) -> tuple[np.ndarray, np.ndarray]:
    lows, _ = _extremes(rows)
    totals = sequential_sums(_scores(rows), rows.lengths)
    denominator = np.maximum(totals - lows * rows.lengths, FLOOR)
    values = (_scores(rows) - _per_row(rows, lows)) / _per_row(rows, denominator)
    return values, denominator


_sum = _guarded(_sum_values)


def _zmuv_values(rows: Rows, *, rescaled: bool = False) -> tuple[np.ndarray, np.ndarray]:
    values = _scores(rows)
    counts = np.maximum(rows.lengths, 1)
    means = sequential_sums(values, rows.lengths) / counts
    centred = values - _per_row(rows, means)
    if rescaled:  # scores in [-1, 1]: their deviations brought near 1 too, so none is floored
        centred = _unit_scaled(rows, centred)
    spread = np.sqrt(sequential_sums(centred * centred, rows.lengths) / counts)
    return centred / _per_row(rows, np.maximum(spread, FLOOR)), means + spread


# the scaled pass brings the deviations near 1 too, so that none is floored
_zmuv = _guarded(_zmuv_values, partial(_zmuv_values, rescaled=True))


def _rank(rows: Rows, table: Table) -> Rows:
    ranks = positions(rows.lengths)
    return rows.with_values(1 - ranks / _per_row(rows, rows.lengths))


def _borda(rows: Rows, table: Table) -> Rows:
    """Every candidate of the query gets a value: ranked docs ``1 - rank / n`` (n the
    query's candidates), the others ``0.5 - (m - 1) / (2 n)`` (m the docs this run ranked),
    after the ranked ones, by doc id descending (as tied docs are ranked)."""
    n = table.cand_lengths
    ranked = np.zeros(table.n_cand, dtype=bool)
    ranked[rows.cand] = True
    rest = np.flatnonzero(~ranked)
    rest_query = table.cand_query[rest]
    # the docs the run missed follow its ranking in doc id order, descending (ties' order)
    id_rank = np.argsort(np.argsort(table.sortable(rest), kind="stable"), kind="stable")
    by_id = np.lexsort((-id_rank, rest_query))
    rest, rest_query = rest[by_id], rest_query[by_id]
    rest_lengths = np.bincount(rest_query, minlength=len(n)).astype(np.int64)
    ranks = positions(rows.lengths)
    ranked_values = 1 - ranks / _per_row(rows, n)
    rest_values = np.repeat(0.5 - (rows.lengths - 1) / (2 * np.maximum(n, 1)), rest_lengths)
    query = np.concatenate([rows.query, rest_query])
    order = np.argsort(query, kind="stable")
    cand = np.concatenate([rows.cand, rest])[order]
    values = np.concatenate([ranked_values, rest_values])[order]
    return Rows(cand, rows.lengths + rest_lengths, values)


register_normalization(
    Normalization("min-max", "(s - min) / (max - min) per query", _min_max), "min_max"
)
register_normalization(
    Normalization(
        "min-max-inverted",
        "(max - s) / (max - min) per query, for runs where lower is better (distances)",
        _min_max_inverted,
        keeps_order=False,
    ),
    "min_max_inverted",
)
register_normalization(Normalization("max", "s / max per query", _max))
register_normalization(Normalization("sum", "(s - min) / (sum - n min) per query", _sum))
register_normalization(
    Normalization("zmuv", "zero mean, unit variance per query: (s - mean) / std", _zmuv)
)
register_normalization(
    Normalization("rank", "1 - rank / n (rank from 0, n docs ranked)", _rank, reads_scores=False)
)
register_normalization(
    Normalization(
        "borda",
        "1 - rank / n over every candidate of the query; docs the run missed share the rest",
        _borda,
        reads_scores=False,
    )
)
