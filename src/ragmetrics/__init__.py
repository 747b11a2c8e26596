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
    OneProcessWarning,
    RagMetricsError,
    RagMetricsWarning,
    UndefinedMetricWarning,
    UngroupedInputError,
    UnknownMetricError,
    WriteError,
)

if TYPE_CHECKING:  # the names below load on first use (see __getattr__)
    from ragmetrics.adapters._traces import TraceRetrievals, read_traces
    from ragmetrics.analysis._comparison import Comparison, PairedTest, compare
    from ragmetrics.analysis._evaluation import evaluate
    from ragmetrics.analysis._segments import by_segment
    from ragmetrics.analysis._sensitivity import RobustnessResult, robustness
    from ragmetrics.data._dataset import RetrievalDataset
    from ragmetrics.data._files import read_qrels, read_run
    from ragmetrics.data._nuggets import Nuggets
    from ragmetrics.data._qrels import Qrels
    from ragmetrics.data._run import Run
    from ragmetrics.engine._diagnostics import Diagnosis, diagnose
    from ragmetrics.engine._result import Counts, EvaluationResult
    from ragmetrics.engine.stream import evaluate_stream
    from ragmetrics.fusion import fuse, optimize_fusion
    from ragmetrics.metrics import list_metrics
    from ragmetrics.report._report import write_report

# Where each other public name lives. `import ragmetrics` loads none of them (the errors
# above are a few classes): a command line that only prints its version, or a script that
# only reads qrels, pays for what it uses (numpy on the first Qrels or Run, the statistics on
# the first compare, pydantic on the first dataset).
_HOMES = {
    "ragmetrics.analysis._comparison": ("Comparison", "PairedTest", "compare"),
    "ragmetrics.data._dataset": ("RetrievalDataset",),
    "ragmetrics.data._files": ("read_qrels", "read_run"),
    "ragmetrics.report._report": ("write_report",),
    "ragmetrics.engine._diagnostics": ("Diagnosis", "diagnose"),
    "ragmetrics.analysis._evaluation": ("evaluate",),
    "ragmetrics.analysis._segments": ("by_segment",),
    "ragmetrics.engine._result": ("Counts", "EvaluationResult"),
    "ragmetrics.metrics": ("list_metrics",),
    "ragmetrics.data._qrels": ("Qrels",),
    "ragmetrics.data._nuggets": ("Nuggets",),
    "ragmetrics.data._run": ("Run",),
    "ragmetrics.analysis._sensitivity": ("RobustnessResult", "robustness"),
    "ragmetrics.engine.stream": ("evaluate_stream",),
    "ragmetrics.fusion": ("fuse", "optimize_fusion"),
    "ragmetrics.adapters._traces": ("TraceRetrievals", "read_traces"),
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
    "Nuggets",
    "OneProcessWarning",
    "PairedTest",
    "Qrels",
    "RagMetricsError",
    "RagMetricsWarning",
    "RetrievalDataset",
    "RobustnessResult",
    "Run",
    "TraceRetrievals",
    "UndefinedMetricWarning",
    "UngroupedInputError",
    "UnknownMetricError",
    "WriteError",
    "__version__",
    "by_segment",
    "compare",
    "diagnose",
    "evaluate",
    "evaluate_stream",
    "fuse",
    "list_metrics",
    "optimize_fusion",
    "read_qrels",
    "read_run",
    "read_traces",
    "robustness",
    "write_report",
]
