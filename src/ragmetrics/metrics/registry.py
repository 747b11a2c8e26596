"""The metric registry: canonical names, aliases, cutoff policy and name parsing.

A metric is registered once with :func:`register`; every name a caller may write (canonical,
trec_eval, ir_measures) resolves here, and nothing outside the kernels knows how a metric is
computed.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

import numpy as np

from ragmetrics.errors import UnknownMetricError

if TYPE_CHECKING:
    from ragmetrics.judge import JudgedRun

Kernel = Callable[["JudgedRun", "int | None"], np.ndarray]


class Cutoff(Enum):
    """Whether a metric takes a cutoff ``@k``."""

    REQUIRED = "required"
    OPTIONAL = "optional"
    NONE = "none"


@dataclass(frozen=True)
class MetricSpec:
    """One registered metric.

    Attributes:
        name: the canonical name (``ndcg``).
        kernel: per-query values over a judged batch; NaN marks NA.
        cutoff: whether ``@k`` is required, optional or refused.
        family: ``"classic"`` (ranked, trec_eval conventions) or ``"set"`` (RAG set metrics).
        summary: one line for ``--help`` and listings.
        perfect_is_one: a perfect ranking scores 1 (used by the invariant tests).
        can_be_na: the metric may be undefined for a query.
    """

    name: str
    kernel: Kernel
    cutoff: Cutoff
    family: str
    summary: str
    perfect_is_one: bool = True
    can_be_na: bool = False


@dataclass(frozen=True)
class Metric:
    """A parsed metric request: the spec, the cutoff and the label the caller wrote."""

    spec: MetricSpec
    cutoff: int | None
    label: str

    @property
    def name(self) -> str:
        """The canonical spelling, e.g. ``ndcg@10``."""
        return self.spec.name if self.cutoff is None else f"{self.spec.name}@{self.cutoff}"

    def compute(self, judged: JudgedRun) -> np.ndarray:
        return self.spec.kernel(judged, self.cutoff)


_REGISTRY: dict[str, MetricSpec] = {}
_ALIASES: dict[str, str] = {}
# trec_eval writes cutoffs as a "_k" suffix on these bases.
_TREC_CUTOFF_BASES = {"p", "recall", "success", "ndcg_cut", "map_cut", "recip_rank"}
_CUTOFF_ONLY_ALIASES = {"ndcg_cut", "map_cut"}


def register(spec: MetricSpec, *aliases: str) -> MetricSpec:
    """Add a metric and its aliases (matched case-insensitively)."""
    for alias in (spec.name, *aliases):
        key = alias.lower()
        if key in _ALIASES and _ALIASES[key] != spec.name:
            raise ValueError(f"The metric alias {alias!r} is already taken by {_ALIASES[key]!r}.")
        _ALIASES[key] = spec.name
    _REGISTRY[spec.name] = spec
    return spec


def registered() -> dict[str, MetricSpec]:
    """Every registered metric by canonical name."""
    return dict(_REGISTRY)


def aliases_of(name: str) -> list[str]:
    """The aliases that resolve to a canonical name."""
    return sorted(alias for alias, target in _ALIASES.items() if target == name and alias != name)


def parse_metric(text: str) -> Metric:
    """Parse ``name``, ``name@k`` or a trec_eval ``name_k`` into a :class:`Metric`.

    Raises:
        UnknownMetricError: the name is not registered (the message lists close matches).
        ValueError: the cutoff is malformed, below 1, missing where required, or refused.
    """
    if not isinstance(text, str):
        raise TypeError(
            f"A metric name must be a string such as 'ndcg@10'; got {type(text).__name__}."
        )
    label = text
    stripped = text.strip()
    base, cutoff_text = stripped, None
    if "@" in stripped:
        base, cutoff_text = stripped.rsplit("@", 1)
        if not re.fullmatch(r"[+-]?\d+", cutoff_text.strip()):
            raise ValueError(
                f"The cutoff of {label!r} must be an integer >= 1, as in 'ndcg@10'. "
                f"Got {cutoff_text!r} instead."
            )
    else:
        match = re.fullmatch(r"(.+?)_(\d+)", stripped)
        if match and match.group(1).lower() in _TREC_CUTOFF_BASES:
            base, cutoff_text = match.group(1), match.group(2)
    key = base.strip().lower()
    if key not in _ALIASES:
        raise UnknownMetricError(_unknown_message(label, base))
    spec = _REGISTRY[_ALIASES[key]]
    cutoff = None if cutoff_text is None else int(cutoff_text)
    if cutoff is not None and cutoff < 1:
        raise ValueError(f"The cutoff of {label!r} must be an integer >= 1. Got {cutoff} instead.")
    if cutoff is None and (spec.cutoff is Cutoff.REQUIRED or key in _CUTOFF_ONLY_ALIASES):
        raise ValueError(f"{label!r} needs a cutoff: write '{base}@10' (or another k >= 1).")
    if cutoff is not None and spec.cutoff is Cutoff.NONE:
        raise ValueError(f"{label!r}: '{spec.name}' takes no cutoff; write '{spec.name}'.")
    return Metric(spec=spec, cutoff=cutoff, label=label)


def parse_metrics(names: str | list[str] | tuple[str, ...]) -> list[Metric]:
    """Parse one name or a sequence of names, dropping exact repeats of a label."""
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, (list, tuple)):
        raise TypeError(
            "metrics must be a metric name or a list of names, such as ['ndcg@10', 'mrr']; "
            f"got {type(names).__name__}."
        )
    if not names:
        raise ValueError("No metric was asked for; pass at least one name, such as 'ndcg@10'.")
    return [parse_metric(name) for name in dict.fromkeys(names)]


def _unknown_message(label: str, base: str) -> str:
    candidates = sorted(set(_ALIASES) | set(_REGISTRY))
    close = difflib.get_close_matches(base.lower(), candidates, n=4, cutoff=0.6)
    suffix = label[len(base) :] if label.startswith(base) else ""
    hint = " Did you mean " + ", ".join(repr(c + suffix) for c in close) + "?" if close else ""
    return (
        f"Unknown metric {label!r}.{hint} Known metrics: {', '.join(sorted(_REGISTRY))} "
        f"(see ragmetrics.list_metrics() for aliases)."
    )
