"""Extensions from other packages: an entry point of the group ``ragmetrics.plugins`` names
a module (or a function) whose import (or call) registers metrics, keyword parameters, paired
tests, corrections, fusion methods, normalizations or input formats with the registries'
own ``register_*`` functions.

A package declares it in its ``pyproject.toml``::

    [project.entry-points."ragmetrics.plugins"]
    my_metrics = "my_package.ragmetrics_plugin:register"

The plug-ins load once, the first time a registry is listed or asked for a name it does not
hold (so ``import ragmetrics`` and ``ragmetrics trec_eval`` pay nothing for them), and
before the command line builds its options. A plug-in that fails to load is named in a
warning and left out; the library's own components are unaffected.
"""

from __future__ import annotations

import threading

from ragmetrics._util.warn import warn
from ragmetrics.errors import RagMetricsWarning

__all__ = ["GROUP", "load_plugins"]

GROUP = "ragmetrics.plugins"
_state = {"loaded": False}
_lock = threading.RLock()


def load_plugins() -> bool:
    """Load every plug-in of :data:`GROUP` once; True when this call loaded them (a caller
    that missed a name then looks again), False when they were loaded before."""
    with _lock:
        if _state["loaded"]:
            return False
        _state["loaded"] = True
        from importlib.metadata import entry_points

        for point in entry_points(group=GROUP):
            try:
                found = point.load()
                if callable(found):
                    found()
            except Exception as error:  # another package's bug: named, never fatal here
                warn(
                    f"The ragmetrics plug-in {point.name!r} ({point.value}) failed to load: "
                    f"{type(error).__name__}: {error}. Its components are not registered.",
                    RagMetricsWarning,
                )
        return True
