"""Import paths of modules that moved into the package's folders keep working.

``import ragmetrics.stream`` (the path of earlier releases) finds
:mod:`ragmetrics.engine.stream` itself, the same module object, and says where it lives now
with a :class:`DeprecationWarning`. Only modules that had a public name are listed here;
private modules (a leading underscore) move without notice.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from importlib.abc import Loader

# old public path -> where it lives now
MOVED = {
    "ragmetrics.qrels": "ragmetrics.data.qrels",
    "ragmetrics.run": "ragmetrics.data.run",
    "ragmetrics.dataset": "ragmetrics.data.dataset",
    "ragmetrics.judge": "ragmetrics.engine.locate",
    "ragmetrics.evaluation": "ragmetrics.engine.evaluation",
    "ragmetrics.stream": "ragmetrics.engine.stream",
    "ragmetrics.comparison": "ragmetrics.analysis.comparison",
    "ragmetrics.stats": "ragmetrics.analysis.stats",
    "ragmetrics.sensitivity": "ragmetrics.analysis.sensitivity",
    "ragmetrics.diagnostics": "ragmetrics.analysis.diagnostics",
    "ragmetrics.report": "ragmetrics.output.report",
    "ragmetrics.plots": "ragmetrics.output.plots",
    "ragmetrics.trec_eval": "ragmetrics.cli.trec_eval",
    "ragmetrics.harness": "ragmetrics.adapters.harness",
    "ragmetrics.scoring": "ragmetrics.adapters.scoring",
    "ragmetrics.records": "ragmetrics.adapters.records",
    "ragmetrics.progress": "ragmetrics._util.progress",
}


class _Alias:
    """Finds an old path and loads it as the module at its new one: a meta path finder and
    a loader by their methods (the import system asks for no base class; importing
    ``importlib.abc`` would cost every ``import ragmetrics`` 25 ms)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, cast("Loader", self))

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        new = MOVED[spec.name]
        warnings.warn(
            f"{spec.name} moved to {new}; import it from there (the old path will be removed "
            "in a later release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module(new)

    def exec_module(self, module: ModuleType) -> None:
        """The module ran when it was imported at its new path."""


def install() -> None:
    """Put the finder on ``sys.meta_path`` once."""
    if not any(isinstance(finder, _Alias) for finder in sys.meta_path):
        sys.meta_path.append(_Alias())
