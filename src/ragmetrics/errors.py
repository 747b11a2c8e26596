"""Exceptions and warnings raised by ragmetrics.

Every error message says what was wrong, where, and, where there is one, how to fix it.
All errors derive from :class:`RagMetricsError`, itself a :class:`ValueError`, so that
callers who already catch ``ValueError`` keep working. Every warning derives from
:class:`RagMetricsWarning`: the input is legal but probably a mistake, or a number is
defined but meaningless.
"""

from __future__ import annotations

__all__ = [
    "AmbiguousChunkWarning",
    "FormatLossWarning",
    "GradeScaleError",
    "HandlerFailureWarning",
    "IdFieldWarning",
    "IdMismatchWarning",
    "InputFormatError",
    "InvalidParameterError",
    "LabelsChangedWarning",
    "MissingDependencyError",
    "MissingKeyError",
    "MissingQueryError",
    "OneProcessWarning",
    "QueryMismatchWarning",
    "RagMetricsError",
    "RagMetricsWarning",
    "RegroupedStreamWarning",
    "RetrievalFailedWarning",
    "StageWarning",
    "TraceKeyWarning",
    "UndefinedMetricWarning",
    "UngradedPairsWarning",
    "UngroupedInputError",
    "UnknownMetricError",
    "UsageError",
    "WriteError",
]


class RagMetricsError(ValueError):
    """Base class of every error raised by ragmetrics."""


class InputFormatError(RagMetricsError):
    """A file, dict or frame could not be read as qrels, a run or a dataset."""


class UnknownMetricError(RagMetricsError):
    """A metric name is not registered (the message lists the close matches)."""


class InvalidParameterError(RagMetricsError):
    """A keyword, a cutoff or a metric parameter is outside its valid range."""


class GradeScaleError(RagMetricsError):
    """The qrels are not on the grade scale a metric needs (the message proposes a map)."""


class MissingKeyError(RagMetricsError, KeyError):
    """A key that is not there: a metric that was not evaluated, a query that is not judged.
    A :class:`KeyError` too, as mappings raise."""

    def __str__(self) -> str:  # the message, without KeyError's quotes
        return str(self.args[0]) if self.args else ""


class UsageError(RagMetricsError, TypeError):
    """A class or function was called in a way it does not support (a :class:`TypeError` too)."""


class UngroupedInputError(InputFormatError):
    """A streamed run whose rows are not grouped by query (a query comes back later)."""


class MissingDependencyError(RagMetricsError, ImportError):
    """An optional dependency (an extra) is not installed; the message says which to
    install. An :class:`ImportError` too, as a failed import is."""


class WriteError(RagMetricsError):
    """A file could not be written; the previous file, if any, is left as it was."""


class MissingQueryError(RagMetricsError):
    """A judged query has no ranking in the run and ``missing="error"`` was asked for."""


class RagMetricsWarning(UserWarning):
    """Base class of every warning issued by ragmetrics."""


class UndefinedMetricWarning(RagMetricsWarning):
    """A metric is defined but meaningless for some input (for example, no query counted)."""


class IdMismatchWarning(RagMetricsWarning):
    """The ids of the run and the qrels do not meet: the numbers are zeros by construction."""


class QueryMismatchWarning(RagMetricsWarning):
    """Runs combined together (fusion) answer different sets of queries: each query is
    combined from the runs that answer it, which is rarely what was meant."""


class RetrievalFailedWarning(RagMetricsWarning):
    """Some retrievals of a dataset evaluation raised; their queries scored as empty rankings
    (the errors are in ``result.retrieval_errors``)."""


class HandlerFailureWarning(RagMetricsWarning):
    """A recorder, handler or plug-in failed inside the user's pipeline; the pipeline went on
    and the error was kept (``last_error``)."""


class StageWarning(RagMetricsWarning):
    """Several retrievers recorded the same query; a run of all stages keeps the latest."""


class TraceKeyWarning(RagMetricsWarning):
    """Retrievals read from traces were keyed by the text they searched with: their traces
    carry no query-id metadata and no question their root span's input shows, so an
    agent's rewrites of one question count as separate queries."""


class IdFieldWarning(RagMetricsWarning):
    """An id field or key the adapter was told to read is absent from retrieved items."""


class LabelsChangedWarning(RagMetricsWarning):
    """A golden set's qrels file differs from what ``GoldSet.save`` wrote: its sidecar
    describes the grading, not the later edits."""


class UngradedPairsWarning(RagMetricsWarning):
    """Some pairs of a grading have no grade (unjudged, failed, or left by the budget): they
    are absent from the golden set's qrels, so a metric reads them as not judged."""


class FormatLossWarning(RagMetricsWarning):
    """A writer could not keep everything: e.g. a TREC file has no line for a query with an
    empty ranking, which then reads back as missing. The message names what was lost and the
    format that keeps it."""


class AmbiguousChunkWarning(RagMetricsWarning):
    """Many retrieved chunks match more than one original document (chunk matching): where
    they go in the ranking is a policy, named in the message (``ambiguous=``)."""


class RegroupedStreamWarning(RagMetricsWarning):
    """A streamed run whose queries are not grouped, larger than one batch, is grouped
    through a temporary file (the message says where, and in how many parts): it takes
    about the run's size again on disk while it is read."""


class OneProcessWarning(RagMetricsWarning):
    """``workers`` > 1 was asked for an input that only one process can read (standard input,
    read in one pass): it is evaluated by one process, and the message says why."""
