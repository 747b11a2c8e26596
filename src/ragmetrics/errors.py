"""Exceptions and warnings raised by ragmetrics.

Every error message says what was wrong and, where there is one, how to fix it.
All errors derive from :class:`RagMetricsError`, itself a :class:`ValueError`, so that
callers who already catch ``ValueError`` keep working.
"""

from __future__ import annotations


class RagMetricsError(ValueError):
    """Base class of every error raised by ragmetrics."""


class InputFormatError(RagMetricsError):
    """A file, dict or frame could not be read as qrels, a run or a dataset."""


class UnknownMetricError(RagMetricsError):
    """A metric name is not registered (the message lists the close matches)."""


class MissingQueryError(RagMetricsError):
    """A judged query has no ranking in the run and ``missing="error"`` was asked for."""


class UndefinedMetricWarning(UserWarning):
    """A metric is defined but meaningless for some input (for example, no query counted)."""
