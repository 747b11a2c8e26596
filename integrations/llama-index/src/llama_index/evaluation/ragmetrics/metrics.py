"""ragmetrics metrics as LlamaIndex ``BaseRetrievalMetric`` plug-ins.

LlamaIndex keys results by the metric class's ``metric_name``, so each metric name gets a
class of its own: ``ndcg@5`` and ``ndcg@10`` can sit side by side in one
``RetrieverEvaluator``. The math is the core's: the plug-in only translates ids and texts.
"""

from __future__ import annotations

import math
import re
import warnings
from typing import Any, ClassVar

from llama_index.core.bridge.pydantic import Field
from llama_index.core.evaluation.retrieval.metrics_base import (
    BaseRetrievalMetric,
    RetrievalMetricResult,
)

from ragmetrics import evaluate
from ragmetrics.errors import RagMetricsError
from ragmetrics.matching import DEFAULT_RULES, ChunkMatcher, MatchRules
from ragmetrics.metrics import parse_metric

_CLASSES: dict[str, type[RagMetricsMetric]] = {}


class RagMetricsMetric(BaseRetrievalMetric):
    """A ragmetrics metric usable in ``RetrieverEvaluator(metrics=[...])``.

    Build with :meth:`from_name`. ``compute`` scores one query:

    - grades: ``expected_grades`` in kwargs, else ``grades[query]``, else 1 per expected id;
    - an empty retrieval scores 0 (LlamaIndex's own metrics raise);
    - when no expected id was retrieved but ``expected_texts`` and ``retrieved_texts`` are
      given, retrieved texts are mapped onto the expected ones with the chunk matcher;
    - a metric that is NA for the query (e.g. ``ra_nwg`` with nothing of weight) scores NaN,
      with ``metadata["na"] = True``.

    Errors (e.g. a grade outside 1..5 for a set metric) are warned about and score NaN,
    unless ``raise_errors=True``: a metric never breaks the user's evaluation loop.
    """

    metric_name: ClassVar[str] = "ragmetrics"
    name: str = Field(description="the ragmetrics metric, e.g. 'ndcg@10'")
    options: dict[str, Any] = Field(default_factory=dict, description="evaluate() keywords")
    grades: dict[str, dict[str, int]] = Field(
        default_factory=dict, description="query text -> expected id -> grade"
    )
    match_rules: MatchRules = Field(default=DEFAULT_RULES, description="chunk matching rules")
    raise_errors: bool = Field(default=False)

    @classmethod
    def from_name(
        cls,
        name: str,
        *,
        grades: dict[str, dict[str, int]] | None = None,
        match_rules: MatchRules | None = None,
        raise_errors: bool = False,
        **options: Any,
    ) -> RagMetricsMetric:
        """A plug-in for the metric ``name`` (any name ``ragmetrics.evaluate`` accepts).

        ``options`` are ``evaluate()`` keywords such as ``relevance_threshold`` or
        ``grade_map``. An unknown name raises here, at set-up, not inside the loop.
        """
        parse_metric(name)
        metric_class = _CLASSES.get(name)
        if metric_class is None:
            safe = re.sub(r"\W", "_", name)
            metric_class = type(
                f"RagMetrics_{safe}", (cls,), {"metric_name": name, "__module__": __name__}
            )
            _CLASSES[name] = metric_class
        return metric_class(
            name=name,
            options=options,
            grades=grades or {},
            match_rules=match_rules or DEFAULT_RULES,
            raise_errors=raise_errors,
        )

    def compute(
        self,
        query: str | None = None,
        expected_ids: list[str] | None = None,
        retrieved_ids: list[str] | None = None,
        expected_texts: list[str] | None = None,
        retrieved_texts: list[str] | None = None,
        **kwargs: Any,
    ) -> RetrievalMetricResult:
        """Score one query with the core (see the class docstring)."""
        try:
            judged = self._judged(query, expected_ids, kwargs.get("expected_grades"))
            retrieved = list(retrieved_ids or [])
            if expected_texts and retrieved_texts and not set(retrieved) & set(judged):
                retrieved = self._match_texts(expected_ids or [], expected_texts, retrieved_texts)
            if not judged:
                return self._na("no expected ids")
            result = evaluate({"q": judged}, {"q": retrieved}, [self.name], **self.options)
            value = result.per_query["q"][self.name]
        except RagMetricsError as error:
            if self.raise_errors:
                raise
            warnings.warn(f"{self.name}: {error}", stacklevel=2)
            return self._na(str(error))
        if value is None:
            return self._na("undefined for this query")
        return RetrievalMetricResult(score=value, metadata={"metric": self.name, "na": False})

    def _judged(
        self,
        query: str | None,
        expected_ids: list[str] | None,
        expected_grades: dict[str, int] | None,
    ) -> dict[str, int]:
        if expected_grades:
            return dict(expected_grades)
        if query is not None and query in self.grades:
            return dict(self.grades[query])
        return dict.fromkeys(expected_ids or [], 1)

    def _match_texts(
        self, expected_ids: list[str], expected_texts: list[str], retrieved_texts: list[str]
    ) -> list[str]:
        ids = (
            expected_ids
            if len(expected_ids) == len(expected_texts)
            else [str(i) for i in range(len(expected_texts))]
        )
        matcher = ChunkMatcher(dict(zip(ids, expected_texts, strict=True)), rules=self.match_rules)
        ranking: dict[str, None] = {}
        for position, text in enumerate(retrieved_texts):
            found = sorted(matcher.match(text)) or [f"\x00unmatched-{position}"]
            ranking.update(dict.fromkeys(found))
        return list(ranking)

    def _na(self, reason: str) -> RetrievalMetricResult:
        return RetrievalMetricResult(
            score=math.nan, metadata={"metric": self.name, "na": True, "reason": reason}
        )
