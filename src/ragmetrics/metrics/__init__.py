"""Metric kernels and the registry that names them.

Importing this package registers every built-in metric.
"""

from ragmetrics.metrics import classic, rag
from ragmetrics.metrics.registry import (
    Cutoff,
    Metric,
    MetricSpec,
    aliases_of,
    parse_metric,
    parse_metrics,
    register,
    registered,
)

__all__ = [
    "Cutoff",
    "Metric",
    "MetricSpec",
    "aliases_of",
    "classic",
    "parse_metric",
    "parse_metrics",
    "rag",
    "register",
    "registered",
]


def list_metrics() -> list[dict[str, object]]:
    """Every registered metric: canonical name, aliases, cutoff policy, family and summary."""
    return [
        {
            "name": spec.name,
            "aliases": aliases_of(spec.name),
            "cutoff": spec.cutoff.value,
            "family": spec.family,
            "summary": spec.summary,
        }
        for spec in registered().values()
    ]


__all__ += ["list_metrics"]
