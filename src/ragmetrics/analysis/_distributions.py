"""Distribution functions the tests need, in plain Python (no scipy at run time): Student's
t and the F distribution through the regularized incomplete beta function, the normal
quantile, and the noncentral t distribution (for power). Each is checked against scipy in
the tests."""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "f_sf",
    "incomplete_beta",
    "noncentral_t_cdf",
    "normal_quantile",
    "student_t_sf2",
    "t_quantile",
]


def student_t_sf2(t: float, df: float) -> float:
    """Two-sided tail probability ``P(|T| >= t)`` of Student's t with ``df`` degrees of freedom:
    the regularized incomplete beta ``I_{df / (df + t^2)}(df / 2, 1 / 2)``."""
    if t == 0:
        return 1.0
    return incomplete_beta(df / (df + t * t), df / 2.0, 0.5)


def t_quantile(alpha: float, df: float) -> float:
    """``t`` with ``P(|T| >= t) = alpha`` for Student's t with ``df`` degrees of freedom."""
    low, high = 0.0, 1.0
    while student_t_sf2(high, df) > alpha:
        high *= 2.0
    for _ in range(100):
        middle = (low + high) / 2.0
        if student_t_sf2(middle, df) > alpha:
            low = middle
        else:
            high = middle
    return high


def incomplete_beta(x: float, a: float, b: float) -> float:
    """Regularized incomplete beta I_x(a, b) by its continued fraction (modified Lentz)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x > (a + 1.0) / (a + b + 2.0):  # the fraction converges fast on this side only
        return 1.0 - incomplete_beta(1.0 - x, b, a)
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 500):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return math.exp(log_front) * result / a


def f_sf(f: float, d1: float, d2: float) -> float:
    """``P(F >= f)`` for the F distribution with ``d1`` and ``d2`` degrees of freedom."""
    if math.isnan(f):
        return math.nan
    if f <= 0:
        return 1.0
    if math.isinf(f):
        return 0.0
    return incomplete_beta(d2 / (d2 + d1 * f), d2 / 2.0, d1 / 2.0)


def noncentral_t_cdf(x: float, df: float, nc: float) -> float:
    """``P(T' <= x)`` for the noncentral t distribution with ``df`` degrees of freedom and
    noncentrality ``nc``: ``T' = (Z + nc) / sqrt(V / df)``, integrated over the density of
    ``s = sqrt(V / df)`` (a scaled chi distribution) on a fine grid."""
    # s has mean ~1 and sd ~1/sqrt(2 df): integrate over +-12 sd around the mode
    spread = 12.0 / math.sqrt(2.0 * df)
    low, high = max(1e-12, 1.0 - spread), 1.0 + spread
    s = np.linspace(low, high, 20_001)
    k = df / 2.0
    # density of s: V = df s^2 ~ chi2(df); f(s) = f_V(df s^2) * 2 df s
    log_density = (
        (k - 1.0) * np.log(df * s * s)
        - df * s * s / 2.0
        - k * math.log(2.0)
        - math.lgamma(k)
        + np.log(2.0 * df * s)
    )
    density = np.exp(log_density)
    z = x * s - nc
    phi = 0.5 * np.vectorize(math.erfc)(-z / math.sqrt(2.0))
    values = phi * density
    step = float(s[1] - s[0])
    total = float((values[0] + values[-1]) / 2.0 + values[1:-1].sum()) * step
    return min(1.0, max(0.0, total))


def normal_quantile(p: float) -> float:
    """The standard normal quantile, by bisection on ``erfc`` (to machine precision)."""
    low, high = -40.0, 40.0
    for _ in range(200):
        middle = (low + high) / 2.0
        if 0.5 * math.erfc(-middle / math.sqrt(2.0)) < p:
            low = middle
        else:
            high = middle
    return (low + high) / 2.0
