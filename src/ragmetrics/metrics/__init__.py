"""Metric kernels and the registry that names them.

Importing this package registers every built-in metric.
"""

from ragmetrics.metrics import _classic, _nuggets, _trec  # noqa: F401 - importing registers them
from ragmetrics.metrics._rag import rarity_weights
from ragmetrics.metrics.registry import (
    Cutoff,
    Metric,
    MetricSpec,
    Param,
    Scale,
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
    "Param",
    "Scale",
    "aliases_of",
    "parse_metric",
    "parse_metrics",
    "rarity_weights",
    "register",
    "registered",
]


def list_metrics() -> list[dict[str, object]]:
    """Every registered metric and what it means: canonical name, aliases (trec_eval,
    ir_measures, preset ones such as ``ndcg_exp``), cutoff policy, family, direction, the
    grade scale it reads, its parameters (name, type, default, valid values, meaning) and a
    summary."""
    return [
        {
            "name": spec.name,
            "aliases": aliases_of(spec.name),
            "cutoff": spec.cutoff.value,
            "family": spec.family,
            "higher_is_better": spec.higher_is_better,
            "scale": spec.scale.value,
            "real_grades": spec.real_grades,
            "params": [
                {
                    "name": p.name,
                    "type": p.kind.__name__,
                    "default": p.default,
                    "valid": p.valid_values(),
                    "meaning": p.meaning,
                    "keyword": p.keyword,
                }
                for p in spec.params
            ],
            "summary": spec.summary,
        }
        for spec in registered().values()
    ]


__all__ += ["list_metrics"]
