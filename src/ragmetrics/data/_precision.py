"""How scores are compared when a run is ranked (``score_precision=``).

trec_eval 10 compares scores as 64-bit doubles. trec_eval up to 9.0.8 and every pytrec_eval
build store them as 32-bit floats, so two scores that differ only past float32 precision tie
there and fall to the doc id order. ``"float32"`` reproduces them; ``"float64"`` (the
default) reproduces trec_eval 10.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from ragmetrics.errors import InvalidParameterError

if TYPE_CHECKING:
    import numpy as np

ScorePrecision = Literal["float64", "float32"]
SCORE_PRECISIONS: tuple[ScorePrecision, ...] = ("float64", "float32")


def check_score_precision(value: object) -> ScorePrecision:
    """``value`` if it names a score precision; raises otherwise."""
    if not isinstance(value, str) or value not in SCORE_PRECISIONS:
        raise InvalidParameterError(
            f"score_precision must be 'float64' (trec_eval 10) or 'float32' (trec_eval <= 9, "
            f"pytrec_eval). Got {value!r} instead."
        )
    return value  # type: ignore[return-value]


def as_float32(scores: np.ndarray) -> np.ndarray:
    """Scores rounded to the nearest 32-bit float (as float64, for comparing)."""
    import numpy as np

    with np.errstate(over="ignore"):  # beyond float32's range is +-inf, as in trec_eval 9
        rounded: np.ndarray = scores.astype(np.float32).astype(np.float64)
    return rounded
