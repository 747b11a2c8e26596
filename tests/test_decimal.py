"""Decimals of 16 to 18 digits (Python's repr writes up to 17), with up to 27 decimals (in
exponent form: ``2.0643999999999997e-06``), read by the vectorized TREC reader equal
``float()`` bit for bit: random reprs, random long decimals, decimals a unit away from the
midpoint between two doubles, and exact ties (left to ``float()``)."""

from __future__ import annotations

import platform
import random
import sys
from decimal import Decimal

import numpy as np
import pytest

from ragmetrics.formats import _decimal, _trec_fast
from ragmetrics.formats._decimal import EXACT_MANTISSA, nearest_doubles


def _split(fields: list[str]) -> tuple[np.ndarray, np.ndarray]:
    exact = [Decimal(f).as_tuple() for f in fields]
    digits = [int("".join(map(str, e.digits))) for e in exact]
    decimals = [-int(e.exponent) for e in exact]
    return np.array(digits, dtype=np.int64), np.array(decimals)


def _reprs(rng: random.Random, n: int) -> list[str]:
    fields = []
    while len(fields) < n:
        text = repr(rng.random() * 10 ** rng.randint(-3, 14))
        digits = text.replace(".", "")
        if "e" not in text and len(digits) <= 18 and int(digits) > EXACT_MANTISSA:
            fields.append(text)
    return fields


def _small_reprs(rng: random.Random, n: int) -> list[str]:
    """Small scores as ``repr`` writes them (``2.0643999999999997e-06``): 17 digits and up to
    27 decimals."""
    fields = []
    while len(fields) < n:
        text = repr(rng.random() * 10 ** rng.randint(-10, -5))
        digits, _, power = text.partition("e")
        if power and int(power) >= -11 and int(digits.replace(".", "")) > EXACT_MANTISSA:
            fields.append(text)
    return fields


def _long_decimals(rng: random.Random, n: int) -> list[str]:
    fields = []
    for _ in range(n):
        width = rng.randint(16, 18)
        digits = str(rng.randint(10 ** (width - 1), 10**width - 1))
        point = rng.randint(0, width - 1)
        fields.append(f"{digits[: width - point]}.{digits[width - point :]}")
    return fields


def _near_midpoints(rng: random.Random, n: int) -> list[str]:
    """Decimals one unit of their last digit below, at and above the (rounded) midpoint of
    two neighbouring doubles: where a double rounding goes wrong."""
    fields = []
    while len(fields) < n:
        x = rng.random() * 10 ** rng.randint(0, 6)
        midpoint = (Decimal(x) + Decimal(np.nextafter(x, np.inf))) / 2
        unit = Decimal(10) ** -(17 - len(str(int(x))))
        near = midpoint.quantize(unit)
        fields += [format(near + k * unit, "f") for k in (-1, 0, 1)]
    return fields


def _near_small_midpoints(rng: random.Random, n: int) -> list[str]:
    """As ``_near_midpoints``, for doubles of 1e-11 to 1e-5, in exponent form (17 digits)."""
    fields = []
    while len(fields) < n:
        x = (1 + 9 * rng.random()) * 10.0 ** rng.randint(-11, -6)
        midpoint = (Decimal(x) + Decimal(np.nextafter(x, np.inf))) / 2
        unit = Decimal(10) ** (midpoint.adjusted() - 16)
        near = midpoint.quantize(unit)
        for k in (-1, 0, 1):
            digits, _, power = f"{near + k * unit:e}".partition("e")
            fields.append(f"{digits}e-{-int(power):02d}")
    return fields


@pytest.fixture(params=["extended doubles", "integers alone"])
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways ``nearest_doubles`` settles a candidate: by an extended-precision quotient
    (x86-64, checked by integers only when it lies halfway), and by integers alone (on ARM
    and Windows, where ``longdouble`` is not x86's extended double)."""
    if request.param == "integers alone":
        monkeypatch.setattr(_decimal, "_EXTENDED_TENS", None)
    elif _decimal._EXTENDED_TENS is None:
        pytest.skip("this machine's longdouble is not x86's extended double")
    return str(request.param)


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="x86-64 only")
def test_x86_64_uses_extended_doubles() -> None:
    assert _decimal._EXTENDED_TENS is not None or sys.platform == "win32"


@pytest.mark.parametrize(
    "make", [_reprs, _small_reprs, _long_decimals, _near_midpoints, _near_small_midpoints]
)
def test_nearest_doubles_equal_float(make, way: str) -> None:  # type: ignore[no-untyped-def]
    fields = make(random.Random(7), 60_000)
    digits, decimals = _split(fields)
    assert (digits > EXACT_MANTISSA).mean() > 0.5  # the hard cases, not the exact ones
    values, settled = nearest_doubles(digits, decimals)
    expected = np.array([float(f) for f in fields])
    assert settled.mean() > 0.99
    assert np.array_equal(values[settled], expected[settled])


def test_exact_ties_are_left_to_float(way: str) -> None:
    # 2**53 + 1 lies halfway between two doubles, as does 2**54 + 2 and x.5 at 2**52
    fields = ["9007199254740993", "18014398509481986", "4503599627370497.5", "9007199254740993.0"]
    _, settled = nearest_doubles(*_split(fields))
    assert not settled.any()
    padded, starts, ends = _buffer(fields)
    parsed = _trec_fast._numbers(padded, starts, ends, integer=False)
    assert parsed is not None and parsed.tolist() == [float(f) for f in fields]


def _buffer(fields: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    text = (" ".join(fields) + "\n").encode("ascii")
    padded = np.frombuffer(text + bytes(256), dtype=np.uint8)
    lengths = np.array([len(f) for f in fields])
    starts = np.concatenate(([0], np.cumsum(lengths + 1)[:-1]))
    return padded, starts, starts + lengths


def test_the_reader_parses_repr_scores_without_python_floats(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(3)
    fields = [f if rng.random() < 0.5 else "-" + f for f in _reprs(rng, 20_000)]
    fields += _small_reprs(rng, 20_000)
    rng.shuffle(fields)
    fields += ["0.5", "12", "1e-05", "0.30000000000000004"]
    padded, starts, ends = _buffer(fields)
    converted: list[int] = []
    real_text = _trec_fast._text

    def counting(*args):  # type: ignore[no-untyped-def]
        converted.append(len(args[1]))
        return real_text(*args)

    monkeypatch.setattr(_trec_fast, "_text", counting)
    parsed = _trec_fast._numbers(padded, starts, ends, integer=False)
    expected = [float(f) for f in fields]
    assert parsed is not None and parsed.tolist() == expected
    assert np.signbit(parsed).tolist() == np.signbit(np.array(expected)).tolist()
    assert sum(converted) < 0.01 * len(fields)  # "1e-05" and a rare unsettled one, no more
