"""ragmetrics: retrieval evaluation for RAG, exact against trec_eval.

Build :class:`Qrels` and a :class:`Run`, then call :func:`evaluate`; compare several runs
with :func:`compare`. Metric names and their definitions are listed by :func:`list_metrics`.
"""

from ragmetrics._version import __version__
from ragmetrics.compare import Comparison, PairedTest, compare
from ragmetrics.dataset import RetrievalDataset
from ragmetrics.diagnostics import Diagnosis, diagnose
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
from ragmetrics.evaluate import Counts, EvaluationResult, evaluate
from ragmetrics.metrics import list_metrics
from ragmetrics.qrels import Qrels
from ragmetrics.robustness import RobustnessResult, robustness
from ragmetrics.run import Run
from ragmetrics.stream import evaluate_stream

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
