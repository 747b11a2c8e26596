"""ragmetrics metrics as LlamaIndex ``BaseRetrievalMetric`` plug-ins.

LlamaIndex keys results by the metric class's ``metric_name``, so each key gets a class of
its own: ``ndcg@5`` and ``ndcg@10`` sit side by side in one ``RetrieverEvaluator``. The math
is the core's (:class:`ragmetrics.adapters.QueryScorer`); the plug-ins of one
:meth:`RagMetricsMetric.from_names` call share one scorer, so a ranking is judged once for
all of them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.evaluation.retrieval.metrics import METRIC_REGISTRY
from llama_index.core.evaluation.retrieval.metrics_base import (
    BaseRetrievalMetric,
    RetrievalMetricResult,
)

from ragmetrics.adapters import (
    DEFAULT_RULES,
    ChunkMatcher,
    HandlerFailureWarning,
    MatchRules,
    QueryScorer,
    RagMetricsError,
    RagMetricsWarning,
    as_dataset,
    warn,
)

__all__ = [
    "MetricKeyWarning",
    "RagMetricsMetric",
    "register_metrics",
]

_CLASSES: dict[str, type[RagMetricsMetric]] = {}
# LlamaIndex's own metric keys, whatever this version of llama-index-core registers
_BUILT_IN = frozenset(METRIC_REGISTRY)


class MetricKeyWarning(RagMetricsWarning):
    """A plug-in's result key is also the key of a LlamaIndex built-in metric: in one
    ``RetrieverEvaluator`` one value would overwrite the other."""


class RagMetricsMetric(BaseRetrievalMetric):
    """A ragmetrics metric usable in ``RetrieverEvaluator(metrics=[...])``.

    Build with :meth:`from_name` or :meth:`from_names`. ``compute`` scores one query:

    - grades: ``expected_grades`` in kwargs (a direct call), else the grades given at
      build time for the query text (``grades=`` or ``dataset=``), else 1 per expected id.
      ``RetrieverEvaluator.evaluate`` does not pass extra keywords on, so graded judgments
      reach the plug-ins through ``dataset=`` / ``grades=``;
    - chunks: when no retrieved id is an expected id but ``expected_texts`` and
      ``retrieved_texts`` are given, the retrieved chunks are mapped to documents with the
      chunk matcher (over ``corpus=`` / the dataset's corpus when given, else over the
      expected texts), with the same rules as the dataset evaluator's ``match_texts=True``;
    - a metric that is NA for the query scores NaN, with ``metadata["na"] = True``.

    Errors (e.g. a grade outside 1..5 for a set metric) warn once and score NaN, unless
    ``raise_errors=True``: a metric never breaks the user's evaluation loop.
    """

    metric_name: ClassVar[str] = "ragmetrics"
    name: str = Field(description="the ragmetrics metric, e.g. 'ndcg@10'")
    options: dict[str, Any] = Field(default_factory=dict, description="evaluate() keywords")
    grades: dict[str, dict[str, int]] = Field(
        default_factory=dict, description="query text -> expected id -> grade"
    )
    corpus: dict[str, str] = Field(default_factory=dict, description="doc id -> text")
    match_rules: MatchRules = Field(default=DEFAULT_RULES, description="chunk matching rules")
    raise_errors: bool = Field(default=False)
    _scorer: QueryScorer | None = PrivateAttr(default=None)
    _matcher: ChunkMatcher | None = PrivateAttr(default=None)
    _warned: bool = PrivateAttr(default=False)

    @classmethod
    def from_name(
        cls,
        name: str,
        *,
        label: str | None = None,
        grades: Mapping[str, Mapping[str, int]] | None = None,
        dataset: Any = None,
        corpus: Mapping[str, str] | None = None,
        match_rules: MatchRules | None = None,
        raise_errors: bool = False,
        **options: Any,
    ) -> RagMetricsMetric:
        """A plug-in for the metric ``name`` (any name ``ragmetrics.evaluate`` accepts).

        Args:
            label: the result key (default: ``name``); give one when ``name`` is also a
                LlamaIndex built-in key (``mrr``, ``ndcg``, ``ap``...).
            grades: query text -> doc id -> grade, for graded judgments.
            dataset: a ``RetrievalDataset`` (or anything with ``queries`` and
                ``relevant_docs``): its grades by query text, and its corpus.
            corpus: doc id -> text, for mapping chunks to documents.
            **options: ``evaluate()`` keywords such as ``relevance_threshold`` or
                ``grade_map``.

        An unknown name or keyword raises here, at set-up, not inside the loop.
        """
        return cls.from_names(
            [name],
            labels=None if label is None else [label],
            grades=grades,
            dataset=dataset,
            corpus=corpus,
            match_rules=match_rules,
            raise_errors=raise_errors,
            **options,
        )[0]

    @classmethod
    def from_names(
        cls,
        names: Sequence[str],
        *,
        prefix: str = "",
        labels: Sequence[str] | None = None,
        grades: Mapping[str, Mapping[str, int]] | None = None,
        dataset: Any = None,
        corpus: Mapping[str, str] | None = None,
        match_rules: MatchRules | None = None,
        raise_errors: bool = False,
        **options: Any,
    ) -> list[RagMetricsMetric]:
        """Plug-ins for several metrics that share one scorer: each ranking is judged once
        for all of them. Result keys are ``prefix + name`` (or ``labels``)."""
        if isinstance(names, str):
            names = [names]
        names = list(names)
        keys = [prefix + n for n in names] if labels is None else list(labels)
        if len(keys) != len(names):
            raise RagMetricsError(
                f"labels must give one key per name: {len(names)} names, {len(keys)} labels."
            )
        graded, documents = _grades_and_corpus(grades, dataset, corpus)
        # raises for a bad name or keyword; its id warning names the fix that applies here
        scorer = QueryScorer(names, id_hint="" if documents else _NO_CORPUS_HINT, **options)
        plugins = []
        for name, key in zip(names, keys, strict=True):
            if key in _BUILT_IN:
                warn(
                    f"The result key {key!r} is also LlamaIndex's built-in {key!r}: in one "
                    f"RetrieverEvaluator one value overwrites the other. Pass label="
                    f"'rm_{key}' (or prefix='rm_' to from_names) to keep both.",
                    MetricKeyWarning,
                )
            plugin = _class_for(key)(
                name=name,
                options=dict(options),
                grades=graded,
                corpus=documents,
                match_rules=match_rules or DEFAULT_RULES,
                raise_errors=raise_errors,
            )
            plugin._scorer = scorer
            plugins.append(plugin)
        return plugins

    @property
    def scorer(self) -> QueryScorer:
        # read the private slot directly: pydantic's attribute fallback costs more than
        # scoring a short ranking
        private = self.__pydantic_private__ or {}
        scorer: QueryScorer | None = private.get("_scorer")
        if scorer is None:  # built by LlamaIndex's factory: a scorer of its own
            hint = "" if self.corpus else _NO_CORPUS_HINT
            scorer = self._scorer = QueryScorer([self.name], id_hint=hint, **self.options)
        return scorer

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
            if not judged:
                return self._na("no expected ids")
            retrieved = list(retrieved_ids or [])
            # chunk ids against document ids: the texts say which documents they are (from
            # the corpus given with dataset= or corpus=, or from the expected texts)
            fallback = retrieved_texts and (expected_texts or self.corpus)
            if fallback and judged.keys().isdisjoint(retrieved):
                retrieved = self._documents(
                    expected_ids or [], expected_texts or [], retrieved_texts or []
                )
            value = self.scorer.value(self.name, retrieved, judged)
        except RagMetricsError as error:
            if self.raise_errors:
                raise
            self._warn_once(error)
            return self._na(str(error))
        if value is None:
            return self._na("undefined for this query")
        return RetrievalMetricResult(score=value, metadata={"metric": self.name, "na": False})

    def _judged(
        self,
        query: str | None,
        expected_ids: list[str] | None,
        expected_grades: Mapping[str, int] | None,
    ) -> Mapping[str, int]:
        if expected_grades:
            return expected_grades
        if query is not None and query in self.grades:
            return self.grades[query]
        return dict.fromkeys(expected_ids or [], 1)

    def _documents(
        self, expected_ids: list[str], expected_texts: list[str], retrieved_texts: list[str]
    ) -> list[str]:
        """The retrieved chunks as a ranking of documents, as the dataset evaluator's
        ``match_texts=True`` makes it."""
        if self.corpus:
            if self._matcher is None:
                self._matcher = ChunkMatcher(self.corpus, rules=self.match_rules)
            matcher = self._matcher
        else:
            ids = (
                expected_ids
                if len(expected_ids) == len(expected_texts)
                else [str(i) for i in range(len(expected_texts))]
            )
            matcher = ChunkMatcher(
                dict(zip(ids, expected_texts, strict=True)), rules=self.match_rules
            )
        ranking, _ = matcher.rank_documents(retrieved_texts)
        return ranking

    def _warn_once(self, error: RagMetricsError) -> None:
        if not self._warned:
            self._warned = True
            warn(
                f"{self.name}: {error} (scored NaN; further errors of this plug-in are not "
                f"warned about; raise_errors=True raises them).",
                HandlerFailureWarning,
            )

    def _na(self, reason: str) -> RetrievalMetricResult:
        return RetrievalMetricResult(
            score=math.nan, metadata={"metric": self.name, "na": True, "reason": reason}
        )


_NO_CORPUS_HINT = (
    " Chunk ids against document ids? Build the plug-ins with dataset= (or corpus=) holding "
    "the documents' texts: the retrieved chunks are then mapped to their documents by text. "
    "Or evaluate with RagMetricsRetrieverEvaluator(..., id_field='ref_doc_id')."
)


def _class_for(key: str) -> type[RagMetricsMetric]:
    """The plug-in class of one result key (LlamaIndex keys results by class)."""
    metric_class = _CLASSES.get(key)
    if metric_class is None:
        safe = re.sub(r"\W", "_", key)
        metric_class = type(
            f"RagMetrics_{safe}",
            (RagMetricsMetric,),
            {"metric_name": key, "__module__": __name__},
        )
        _CLASSES[key] = metric_class
    return metric_class


def _grades_and_corpus(
    grades: Mapping[str, Mapping[str, int]] | None, dataset: Any, corpus: Mapping[str, str] | None
) -> tuple[dict[str, dict[str, int]], dict[str, str]]:
    """Grades by query text and the corpus, from the arguments and a dataset."""
    graded: dict[str, dict[str, int]] = {}
    documents: dict[str, str] = {}
    if dataset is not None:
        data = as_dataset(dataset)
        graded = {data.queries[q]: dict(g) for q, g in data.relevant_docs.items()}
        documents = dict(data.corpus)
    graded.update({q: dict(g) for q, g in (grades or {}).items()})
    documents.update(corpus or {})
    return graded, documents


def register_metrics(names: Sequence[str], **options: Any) -> list[str]:
    """Make ``names`` known to ``RetrieverEvaluator.from_metric_names``, next to
    LlamaIndex's own (``hit_rate``, ``mrr``...); they share one scorer.

    Example: ``register_metrics(["ndcg@10", "ra_nwg@5"], grade_map={1: 5})`` then
    ``RetrieverEvaluator.from_metric_names(["hit_rate", "ndcg@10", "ra_nwg@5"],
    retriever=retriever)``. A name that is a built-in key raises: register it under
    another key with :meth:`RagMetricsMetric.from_names` and ``prefix=``.
    """
    taken = [n for n in names if n in _BUILT_IN]
    if taken:
        raise RagMetricsError(
            f"{', '.join(map(repr, taken))} is LlamaIndex's own metric key; use "
            f"RagMetricsMetric.from_names({list(taken)!r}, prefix='rm_') to add ours beside it."
        )
    plugins = RagMetricsMetric.from_names(list(names), **options)
    for plugin in plugins:
        METRIC_REGISTRY[type(plugin).metric_name] = _registered(plugin)
    return [type(p).metric_name for p in plugins]


def _registered(template: RagMetricsMetric) -> type[RagMetricsMetric]:
    """A class that LlamaIndex's factory can build with no argument: a copy of
    ``template``, sharing its scorer."""
    base = type(template)
    defaults = template.model_dump()

    def build(self: RagMetricsMetric, **data: Any) -> None:
        base.__init__(self, **{**defaults, **data})
        self._scorer = template._scorer

    return type(base.__name__, (base,), {"__init__": build, "__module__": __name__})
