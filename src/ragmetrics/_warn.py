"""Warnings that point at the user's line, however deep inside ragmetrics they are raised."""

from __future__ import annotations

import inspect
import warnings

# the packages whose frames a warning skips: the core and its two adapter distributions
_OURS = ("ragmetrics", "langchain_ragmetrics", "llama_index.evaluation.ragmetrics")


def warn(message: str, category: type[Warning]) -> None:
    """``warnings.warn`` attributed to the first caller outside ragmetrics and its adapters."""
    frame = inspect.currentframe()
    level, frame = 1, frame.f_back if frame is not None else None
    while frame is not None and str(frame.f_globals.get("__name__", "")).startswith(_OURS):
        level, frame = level + 1, frame.f_back  # type: ignore[assignment]
    warnings.warn(message, category, stacklevel=level)
