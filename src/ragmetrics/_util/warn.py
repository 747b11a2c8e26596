"""Warnings that point at the user's line, however deep inside ragmetrics they are raised."""

from __future__ import annotations

import warnings

# the packages whose frames a warning skips: the core and its two adapter distributions
_OURS = ("ragmetrics", "langchain_ragmetrics", "llama_index.evaluation.ragmetrics")


def warn(message: str, category: type[Warning]) -> None:
    """``warnings.warn`` attributed to the first caller outside ragmetrics and its adapters."""
    import inspect  # here: a warning is rare, and the import costs every process otherwise

    # stacklevel 1 is this function's frame, 2 its caller, and so on outward
    here = inspect.currentframe()
    level, frame = 2, here.f_back if here is not None else None
    while frame is not None and str(frame.f_globals.get("__name__", "")).startswith(_OURS):
        level, frame = level + 1, frame.f_back
    warnings.warn(message, category, stacklevel=level)
