"""Exact sums of doubles, so that totals merge by addition whatever the batch boundaries.

Every finite double is an integer multiple of ``2**-1074``; its mantissa times ``2**53`` is an
integer of at most 53 bits. :func:`exact_sum` adds the values of an array as one Python integer
in units of ``2**-UNIT_BITS`` with no rounding at all, so that the total of a run is the same
integer however its queries are split into batches and in whatever order the batches are
added. Only the final division (a mean) rounds, once, to the nearest double.

The work is vectorized: each value is split into its binary exponent and two halves of its
mantissa (26 and 27 bits, each an exact double), the halves are summed per exponent with
``np.bincount`` (exact while each bin stays below ``2**53``, hence the slices of ``2**25``
values), and only the few distinct exponents are combined as Python integers.
"""

from __future__ import annotations

import numpy as np

# A value v is m * 2**e with 0.5 <= |m| < 1 and e >= -1073; as an integer in units of
# 2**-(1074 + 53) it is (m * 2**53) << (e + 1074), never a negative shift.
UNIT_BITS = 1074 + 53
_SLICE = 1 << 25  # values per bincount: 2**25 halves of < 2**27 each stay below 2**53
_HIGH = float(1 << 26)
_FULL = float(1 << 53)
_LOW = float(1 << 27)


def exact_sum(values: np.ndarray) -> int:
    """The exact sum of finite ``values``, in units of ``2**-UNIT_BITS``.

    Example:
        >>> import numpy as np
        >>> to_float(exact_sum(np.array([0.1, 0.2, -0.3])))  # 0.1 + 0.2 - 0.3 is 5.55e-17
        2.7755575615628914e-17
    """
    total = 0
    for start in range(0, len(values), _SLICE):
        total += _slice_sum(np.asarray(values[start : start + _SLICE], dtype=np.float64))
    return total


def _slice_sum(values: np.ndarray) -> int:
    if not len(values):
        return 0
    mantissas, exponents = np.frexp(values)
    shifts = exponents.astype(np.intp)
    shifts += 1074
    high = mantissas * _HIGH
    np.trunc(high, out=high)  # the top 26 bits (with the sign)
    low = mantissas * _FULL
    low -= high * _LOW  # the other 27 bits: both exact doubles, both integers
    size = int(shifts.max()) + 1
    high_sums = np.bincount(shifts, weights=high, minlength=size)
    low_sums = np.bincount(shifts, weights=low, minlength=size)
    total = 0
    for shift in np.flatnonzero((high_sums != 0) | (low_sums != 0)).tolist():
        total += (int(high_sums[shift]) << (shift + 27)) + (int(low_sums[shift]) << shift)
    return total


def to_float(total: int, count: int = 1) -> float:
    """``total / count`` (``total`` from :func:`exact_sum`), rounded once to a double (the
    true division of two Python integers is correctly rounded, as ``Fraction`` would be)."""
    return total / (count << UNIT_BITS)
