"""The interface the framework adapters build on.

The LlamaIndex and LangChain distributions import the core from here and from nowhere else
(a test holds them to it), so what they rely on is declared in one list, ``__all__``:

- :class:`EvaluationPlan` (:mod:`.harness`): metric names and keywords checked before the
  first retrieval, then a dataset's retrievals scored, failures counted;
- :class:`QueryScorer` (:mod:`.scoring`): one ranking at a time, for plug-ins and live scoring;
- :class:`RetrievalLog` (:mod:`.records`): start / end / fail of retrievals paired under a
  lock, for callbacks and instrumentation;
- the data model, the result, chunk matching, golden-set judges and the errors and warnings
  they raise.
"""

from ragmetrics._util.progress import progress_bar
from ragmetrics._util.warn import warn
from ragmetrics.adapters._harness import EvaluationPlan, Retrieved
from ragmetrics.adapters._records import (
    POLICIES,
    RERANKING_RETRIEVERS,
    HandlerFailure,
    Policy,
    RecordedRetrievals,
    RetrievalLog,
    RetrievalRecord,
    current_question,
    question,
)
from ragmetrics.adapters._scoring import QueryScorer
from ragmetrics.adapters._traces import TraceRetrievals, looks_like_traces, read_traces
from ragmetrics.data._dataset import RetrievalDataset, as_dataset
from ragmetrics.data._qrels import Qrels
from ragmetrics.data._run import Run
from ragmetrics.engine._result import EvaluationResult
from ragmetrics.engine._settings import MissingPolicy
from ragmetrics.errors import (
    HandlerFailureWarning,
    IdFieldWarning,
    InvalidParameterError,
    RagMetricsError,
    RagMetricsWarning,
    StageWarning,
    TraceKeyWarning,
)
from ragmetrics.goldset import Judge, Reply, model_identity
from ragmetrics.matching import DEFAULT_RULES, ChunkMatcher, MatchRules

__all__ = [
    "DEFAULT_RULES",
    "POLICIES",
    "RERANKING_RETRIEVERS",
    "ChunkMatcher",
    "EvaluationPlan",
    "EvaluationResult",
    "HandlerFailure",
    "HandlerFailureWarning",
    "IdFieldWarning",
    "InvalidParameterError",
    "Judge",
    "MatchRules",
    "MissingPolicy",
    "Policy",
    "Qrels",
    "QueryScorer",
    "RagMetricsError",
    "RagMetricsWarning",
    "RecordedRetrievals",
    "Reply",
    "RetrievalDataset",
    "RetrievalLog",
    "RetrievalRecord",
    "Retrieved",
    "Run",
    "StageWarning",
    "TraceKeyWarning",
    "TraceRetrievals",
    "as_dataset",
    "current_question",
    "looks_like_traces",
    "model_identity",
    "progress_bar",
    "question",
    "read_traces",
    "warn",
]
