"""Decimals of up to 18 digits and 27 decimals to the nearest double, vectorized, exactly
as ``float()``.

A decimal ``m / 10**d`` whose digits ``m`` fit in 53 bits is one correctly rounded division
of two exact doubles. Python's ``repr`` of a float writes up to 17 digits, though, and
``m`` then has up to 57 bits: dividing ``float(m)`` rounds twice, and the result can be one
unit in the last place off. This module takes that quotient as a candidate and settles it
with integer arithmetic: the candidate ``x`` is right when the decimal lies strictly between
the two midpoints ``x - ulp/2`` and ``x + ulp/2``. Each comparison is an exact comparison of
two integers below 2**128, held as pairs of 64-bit words. A candidate that is off moves one
unit towards the decimal and is checked again (past 22 decimals the power of ten is itself
rounded, so the candidate may start two units off). What stays unsettled (an exact tie between
two doubles, a power of two, a value outside the normal range) is left to ``float()``.

Where numpy's ``longdouble`` is x86's extended double (a 64-bit significand: Linux and
macOS on x86-64), most candidates need no such check. ``m`` and ``10**d`` (``5**d < 2**63``)
are exact there, so ``m / 10**d`` in extended precision is correctly rounded to 64 bits;
rounding that to 53 bits gives the nearest double unless the 64-bit quotient lies exactly
halfway between two doubles (the 11 bits rounding drops are ``10000000000``): the decimal
itself may then lie on either side, and only those (about one in 2,000) go through the
integer check. On other machines (``longdouble`` is a double on Windows and Apple's ARM,
a 128-bit float on Linux's ARM), every candidate does.
"""

from __future__ import annotations

import numpy as np

MAX_DIGITS = 18  # 10**18 - 1 < 2**63: the digits are an exact int64
# 5**27 < 2**63 is one word; repr writes 17 digits, so 27 decimals reach 1e-11 (``1.2e-11``
# is 12345678901234567 / 10**27)
MAX_DECIMALS = 27
EXACT_MANTISSA = 1 << 53  # digits up to this are an exact double
_FIVES = np.array([5**k for k in range(MAX_DECIMALS + 1)], dtype=np.uint64)
TENS = np.array([10.0**k for k in range(MAX_DECIMALS + 1)])  # exact doubles up to 10**22
_LOW32 = np.uint64(0xFFFFFFFF)
_ONE = np.uint64(1)


def _extended_tens() -> np.ndarray | None:
    """The powers of ten as extended doubles when ``longdouble`` is x86's 80-bit format
    (64-bit significand first, little-endian, in 16 bytes) and holds them exactly; else
    None."""
    if np.finfo(np.longdouble).nmant != 63 or np.dtype(np.longdouble).itemsize != 16:
        return None
    tens = np.array([np.longdouble(10) ** k for k in range(MAX_DECIMALS + 1)])
    one = np.array([1.0], dtype=np.longdouble).view(np.uint64)
    if any(int(ten) != 10**k for k, ten in enumerate(tens)) or one[0] != np.uint64(1 << 63):
        return None
    return tens


_EXTENDED_TENS = _extended_tens()
# one extended division settles most candidates: cheaper than splitting the mantissas that
# fit in 53 bits from the others (elsewhere every candidate is checked with integers)
CHEAP_NEAREST = _EXTENDED_TENS is not None
_DROPPED = np.uint64(0x7FF)  # the 11 bits of a 64-bit significand a double has no room for
_HALFWAY = np.uint64(0x400)


def nearest_doubles(digits: np.ndarray, decimals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The double nearest to ``digits / 10**decimals`` for each pair (non-negative int64
    digits below 10**18, decimals 0..27), and a mask of those settled; the others must be
    converted by ``float()``."""
    tens = _EXTENDED_TENS
    if tens is None:
        return _checked(digits, decimals, digits.astype(np.float64) / TENS[decimals])
    quotient = digits.astype(np.longdouble) / tens[decimals]
    x = quotient.astype(np.float64)
    significands = quotient.view(np.uint64)[::2]
    halfway = np.flatnonzero((significands & _DROPPED) == _HALFWAY)
    settled = np.ones(len(x), dtype=bool)
    if len(halfway):
        x[halfway], settled[halfway] = _checked(digits[halfway], decimals[halfway], x[halfway])
    return x, settled


def _checked(
    digits: np.ndarray, decimals: np.ndarray, x: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`nearest_doubles` from the candidates ``x`` (a unit or two off at most), each
    checked and moved by integer arithmetic."""
    m = digits.astype(np.uint64)
    d = decimals.astype(np.int64)
    settled = np.zeros(len(m), dtype=bool)
    # the candidates checked in this round: all, then only those that moved
    at = np.arange(len(m))
    for _ in range(3):  # the candidate is at most a unit or two off
        below, above, usable = _sides(m[at], d[at], x[at])
        settled[at] = usable & below & above
        low = usable & ~below  # the decimal is under the lower midpoint: one unit down
        high = usable & ~above
        moved = low | high
        if not moved.any():
            break
        here = x[at]
        x[at] = np.where(
            low, np.nextafter(here, 0.0), np.where(high, np.nextafter(here, np.inf), here)
        )
        at = at[moved]
    return x, settled


def _sides(m: np.ndarray, d: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, ...]:
    """Whether ``m / 10**d`` is strictly above ``x``'s lower midpoint and strictly below its
    upper one, and whether the test applies (x a normal double, not a power of two).

    With ``x = big_x * 2**(e - 53)`` the midpoints are ``(2 * big_x -+ 1) * 2**(e - 54)``;
    times ``10**d = 5**d * 2**d``, the decimal lies strictly between them exactly when
    ``|m - 2 * big_x * 5**d * 2**shift| < 5**d * 2**shift`` (``shift = d + e - 54``; the
    side with a negative power of two is multiplied by its inverse instead): one 128-bit
    product, one difference and one comparison for both sides."""
    fraction, exponent = np.frexp(x)
    big_x = (fraction * 2.0**53).astype(np.uint64)  # x = big_x * 2**(exponent - 53)
    usable = (big_x > np.uint64(1 << 52)) & (exponent > -1000) & (exponent < 1000)
    shift = d + exponent.astype(np.int64) - 54
    up = np.maximum(shift, 0).astype(np.uint64)  # shifts the products of 5**d
    down = np.maximum(-shift, 0).astype(np.uint64)  # shifts m
    fives = _FIVES[d]
    r_hi, r_lo = _multiply(big_x << _ONE, fives)
    f_hi, f_lo = np.zeros_like(fives), fives
    if up.any():  # only for decimals of large numbers: 0.5 and below need none
        r_hi, r_lo = _shift_left(r_hi, r_lo, up)
        f_hi, f_lo = _shift_left(f_hi, f_lo, up)
    m_hi, m_lo = _shift_left(np.zeros_like(m), m, down)
    # the difference m - r, two's complement over 128 bits (both sides are below 2**127)
    lo = m_lo - r_lo
    hi = m_hi - r_hi - (m_lo < r_lo).astype(np.uint64)
    negative = hi >= np.uint64(1 << 63)
    # its magnitude: the words negated where it is negative (a carry when the low word is 0)
    lo = np.where(negative, ~lo + _ONE, lo)
    hi = np.where(negative, ~hi + (lo == 0).astype(np.uint64), hi)
    far = (hi > f_hi) | ((hi == f_hi) & (lo >= f_lo))  # at or past a midpoint
    return ~(far & negative), ~(far & ~negative), usable


def _multiply(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 128-bit products ``a * b`` (a below 2**55, b below 2**63) as (high, low) words:
    ``a1 * b0 < 2**55`` and ``a0 * b1 < 2**63``, so their sum does not overflow."""
    a1, a0 = a >> np.uint64(32), a & _LOW32
    b1, b0 = b >> np.uint64(32), b & _LOW32
    low = a0 * b0
    cross = a1 * b0 + a0 * b1  # below 2**55 + 2**43: no overflow
    result_low = low + (cross << np.uint64(32))
    carry = (result_low < low).astype(np.uint64)
    return a1 * b1 + (cross >> np.uint64(32)) + carry, result_low


def _shift_left(high: np.ndarray, low: np.ndarray, by: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(high, low) shifted left by ``by`` bits (0..127; numpy's shifts by 64 or more give 0,
    and the caller keeps the result below 2**128)."""
    sixty_four = np.uint64(64)
    small = by < sixty_four
    new_high = np.where(
        small,
        (high << by) | (low >> (sixty_four - by)),  # by 0: low >> 64 is 0
        low << (by - sixty_four * (~small)),
    )
    return new_high, np.where(small, low << by, np.uint64(0))
