"""Agreement statistics for graded labels: weighted Cohen's kappa, Krippendorff's alpha
(ordinal), Kendall's tau-b and Spearman's rho, written out here (numpy only)."""

from __future__ import annotations

import numpy as np

GRADES = (1, 2, 3, 4, 5)


def confusion(
    first: np.ndarray, second: np.ndarray, categories: tuple[int, ...] = GRADES
) -> np.ndarray:
    """Counts of (first's grade, second's grade), rows and columns in ``categories`` order."""
    index = {c: i for i, c in enumerate(categories)}
    matrix = np.zeros((len(categories), len(categories)), dtype=np.int64)
    for a, b in zip(first.tolist(), second.tolist(), strict=True):
        matrix[index[a], index[b]] += 1
    return matrix


def weighted_kappa(
    first: np.ndarray, second: np.ndarray, categories: tuple[int, ...] = GRADES
) -> float:
    """Cohen's kappa with quadratic weights over the ordered ``categories``: 1 is perfect
    agreement, 0 what chance gives with these marginals (NaN when the marginals leave
    nothing to agree on, e.g. every label the same)."""
    observed = confusion(first, second, categories).astype(np.float64)
    total = observed.sum()
    if total == 0:
        return float("nan")
    k = len(categories)
    positions = np.arange(k)
    weights = (positions[:, None] - positions[None, :]) ** 2 / max(k - 1, 1) ** 2
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / total
    disagreement = float((weights * expected).sum())
    if disagreement == 0:
        return float("nan")
    return 1.0 - float((weights * observed).sum()) / disagreement


def krippendorff_alpha_ordinal(data: np.ndarray) -> float:
    """Krippendorff's alpha, ordinal, of ``data`` (coders x units; NaN where a coder gave no
    value). Units with fewer than two values are left out; NaN when nothing is left or all
    values are the same."""
    values = np.asarray(data, dtype=np.float64)
    categories = np.unique(values[~np.isnan(values)])
    if len(categories) < 2:
        return float("nan")
    index = {c: i for i, c in enumerate(categories.tolist())}
    k = len(categories)
    coincidence = np.zeros((k, k))
    for unit in values.T:
        given = unit[~np.isnan(unit)]
        m = len(given)
        if m < 2:
            continue
        counts = np.zeros(k)
        for value in given.tolist():
            counts[index[value]] += 1
        pairs = np.outer(counts, counts) - np.diag(counts)  # ordered pairs of different coders
        coincidence += pairs / (m - 1)
    marginals = coincidence.sum(axis=1)
    n = marginals.sum()
    if n <= 1:
        return float("nan")
    cumulative = np.cumsum(marginals)
    # ordinal distance: (sum of n_g for g from c to k) - (n_c + n_k) / 2, squared
    low = np.minimum.outer(np.arange(k), np.arange(k))
    high = np.maximum.outer(np.arange(k), np.arange(k))
    between = cumulative[high] - np.where(low > 0, cumulative[np.maximum(low - 1, 0)], 0.0)
    distance = (between - (marginals[low] + marginals[high]) / 2.0) ** 2
    expected = float((np.outer(marginals, marginals) * distance).sum())
    if expected == 0:
        return float("nan")
    return float(1.0 - (n - 1) * float((coincidence * distance).sum()) / expected)


def kendall_tau_b(first: np.ndarray, second: np.ndarray) -> float:
    """Kendall's tau-b of two score lists (ties counted as tau-b does); NaN below 2 items or
    when one list is constant."""
    x, y = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
    if len(x) < 2:
        return float("nan")
    dx = np.sign(x[:, None] - x[None, :])
    dy = np.sign(y[:, None] - y[None, :])
    upper = np.triu_indices(len(x), 1)
    concordance = float((dx * dy)[upper].sum())
    tied_x = float((dx[upper] != 0).sum())
    tied_y = float((dy[upper] != 0).sum())
    if tied_x == 0 or tied_y == 0:
        return float("nan")
    return concordance / float(np.sqrt(tied_x * tied_y))


def spearman(first: np.ndarray, second: np.ndarray) -> float:
    """Spearman's rho (Pearson's r of average ranks); NaN when one side is constant."""
    a, b = _ranks(np.asarray(first, np.float64)), _ranks(np.asarray(second, np.float64))
    if len(a) < 2 or a.std() == 0 or b.std() == 0:
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])


def _ranks(values: np.ndarray) -> np.ndarray:
    order = np.argsort(values, kind="stable")
    ranks: np.ndarray = np.empty(len(values))
    ranks[order] = np.arange(1, len(values) + 1)
    for value in np.unique(values):  # ties share their average rank
        tied = values == value
        ranks[tied] = ranks[tied].mean()
    return ranks
