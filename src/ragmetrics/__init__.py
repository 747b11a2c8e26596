"""ragmetrics: retrieval evaluation for RAG, exact against trec_eval.

Build :class:`Qrels` and a :class:`Run`, then call :func:`evaluate`; compare several runs
with :func:`compare`. Metric names and their definitions are listed by :func:`list_metrics`.
"""

from typing import TYPE_CHECKING, Any

from ragmetrics._version import __version__
from ragmetrics.errors import (
    AmbiguousChunkWarning,
    FormatLossWarning,
    GradeScaleError,
    IdMismatchWarning,
    InputFormatError,
    InvalidParameterError,
    MissingDependencyError,
    MissingQueryError,
    RagMetricsError,
    RagMetricsWarning,
    UndefinedMetricWarning,
    UngroupedInputError,
    UnknownMetricError,
    WriteError,
)

if TYPE_CHECKING:  # the names below load on first use (see __getattr__)
    from ragmetrics.comparison import Comparison, PairedTest, compare
    from ragmetrics.dataset import RetrievalDataset
    from ragmetrics.diagnostics import Diagnosis, diagnose
    from ragmetrics.evaluation import Counts, EvaluationResult, evaluate
    from ragmetrics.metrics import list_metrics
    from ragmetrics.qrels import Qrels
    from ragmetrics.run import Run
    from ragmetrics.sensitivity import RobustnessResult, robustness
    from ragmetrics.stream import evaluate_stream

# Where each other public name lives. `import ragmetrics` loads none of them (the errors
# above are a few classes): a command line that only prints its version, or a script that
# only reads qrels, pays for what it uses (numpy on the first Qrels or Run, the statistics on
# the first compare, pydantic on the first dataset).
_HOMES = {
    "ragmetrics.comparison": ("Comparison", "PairedTest", "compare"),
    "ragmetrics.dataset": ("RetrievalDataset",),
    "ragmetrics.diagnostics": ("Diagnosis", "diagnose"),
    "ragmetrics.evaluation": ("Counts", "EvaluationResult", "evaluate"),
    "ragmetrics.metrics": ("list_metrics",),
    "ragmetrics.qrels": ("Qrels",),
    "ragmetrics.run": ("Run",),
    "ragmetrics.sensitivity": ("RobustnessResult", "robustness"),
    "ragmetrics.stream": ("evaluate_stream",),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> Any:
    """Load a public name from its module on first use, then keep it here."""
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'ragmetrics' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "AmbiguousChunkWarning",
    "Comparison",
    "Counts",
    "Diagnosis",
    "EvaluationResult",
    "FormatLossWarning",
    "GradeScaleError",
    "IdMismatchWarning",
    "InputFormatError",
    "InvalidParameterError",
    "MissingDependencyError",
    "MissingQueryError",
    "PairedTest",
    "Qrels",
    "RagMetricsError",
    "RagMetricsWarning",
    "RetrievalDataset",
    "RobustnessResult",
    "Run",
    "UndefinedMetricWarning",
    "UngroupedInputError",
    "UnknownMetricError",
    "WriteError",
    "__version__",
    "compare",
    "diagnose",
    "evaluate",
    "evaluate_stream",
    "list_metrics",
    "robustness",
]
