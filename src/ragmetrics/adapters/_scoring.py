"""Score one ranking at a time, as the adapters' plug-ins, live handlers and LangSmith
evaluators do.

A :class:`QueryScorer` checks its metric names and keywords when it is built, judges each
ranking once for all its metrics, and remembers the last ranking it scored, so the plug-ins
of one evaluator (each asked for one metric of the same ranking) share one judging step.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

from ragmetrics._util.warn import warn
from ragmetrics.data._qrels import Qrels
from ragmetrics.data._run import Run
from ragmetrics.engine._evaluation import depth_needed, evaluate_checked
from ragmetrics.engine._id_warnings import ids_look_alike
from ragmetrics.engine._locate import locate_in_ranking
from ragmetrics.engine._settings import Settings, as_qrels, check_settings, resolve_metrics
from ragmetrics.errors import (
    IdMismatchWarning,
    InvalidParameterError,
    MissingKeyError,
    RagMetricsError,
)
from ragmetrics.metrics._rag import check_query_grades, check_utility_scale
from ragmetrics.metrics.judged import OneRanking
from ragmetrics.metrics.registry import Scale

__all__ = [
    "QueryScorer",
    "Scores",
]

# keywords that describe a whole evaluation, not one ranking
_WHOLE_RUN_ONLY = ("missing", "pool", "progress")

Scores = dict[str, float | None]


class QueryScorer:
    """Scores single rankings on several metrics, with the core's numbers.

    Args:
        metrics: metric names, as :func:`ragmetrics.evaluate` takes them.
        qrels: judgments to look queries up in (``score(ranking, query_id=...)``); their
            grade scale is checked once here, and ERR's ``max_grade`` defaults to the highest
            grade of all of them, as in a whole evaluation.
        id_hint: appended to the warning given when a ranking's ids cannot be judged ids
            (an adapter names its own fix there).
        **options: the per-ranking keywords of :func:`ragmetrics.evaluate`
            (``relevance_threshold``, ``grade_map``, ``alpha``...).

    Raises at construction, before anything is retrieved, for an unknown metric, an unknown
    or invalid keyword, or (with ``qrels``) grades the RAG set metrics cannot read.

    Example:
        >>> scorer = QueryScorer(["hit_rate@2", "mrr"])
        >>> scorer.score(["x", "a"], {"a": 1})
        {'hit_rate@2': 1.0, 'mrr': 0.5}
    """

    def __init__(
        self,
        metrics: str | Sequence[str],
        *,
        qrels: Qrels | Mapping[str, Mapping[str, int]] | None = None,
        id_hint: str = "",
        **options: Any,
    ) -> None:
        refused = [k for k in options if k in _WHOLE_RUN_ONLY]
        if refused:
            raise InvalidParameterError(
                f"{', '.join(map(repr, refused))} describe(s) a whole evaluation, not one "
                f"ranking; pass it to the dataset evaluator or to ragmetrics.evaluate()."
            )
        self.settings = check_settings(**options)
        self.qrels = None if qrels is None else as_qrels(qrels)
        params = dict(self.settings.params)
        if self.qrels is not None and params.get("err_max_grade") is None:
            params["err_max_grade"] = self.qrels.max_grade()  # as the whole evaluation has it
        self.metrics = resolve_metrics(metrics, replace(self.settings, params=params))
        self.labels = tuple(m.label for m in self.metrics)
        self.id_hint = id_hint
        self._depth = depth_needed(self.metrics)
        self._needs_pool = any(m.spec.needs_pool for m in self.metrics)
        self._utility = [m.label for m in self.metrics if m.spec.scale is Scale.UTILITY]
        if self.qrels is not None and self._utility:
            check_utility_scale(self.qrels.grade_values(), self.settings.grade_map, self._utility)
        # every metric has a twin for one ranking, and nothing needs the kernels' input
        self._single = (
            all(m.spec.single is not None for m in self.metrics)
            and not self._needs_pool
            and not self._utility
            and self.settings.grade_map is None
        )
        self._last: tuple[Any, _Judged] | None = None
        self._lock = threading.Lock()
        self._warned = False
        self._ids_alike = False  # the retrieved ids were seen to be of the judged ids' form

    def score(
        self,
        ranking: Sequence[str],
        judgments: Mapping[str, int] | None = None,
        *,
        query_id: str | None = None,
    ) -> Scores:
        """Each metric's value for ``ranking`` (best first), ``None`` where it is NA.

        The judgments are ``judgments`` (doc id -> grade) when given, else the scorer's
        qrels of ``query_id``. With no judged doc at all every metric is NA, as a query
        without judgments is not counted in an evaluation.
        """
        scores = self._scores(ranking, judgments, query_id)
        for value in scores.values():
            if isinstance(value, _Refused):
                raise value.error
        return cast(Scores, dict(scores))

    def value(
        self,
        label: str,
        ranking: Sequence[str],
        judgments: Mapping[str, int] | None = None,
        *,
        query_id: str | None = None,
    ) -> float | None:
        """One metric's value for ``ranking`` (see :meth:`score`): the plug-ins of one
        evaluator each ask for theirs, and the ranking is judged once for all. A metric
        that cannot read these judgments (a RAG set metric given a grade off the utility
        scale) raises for itself only; its neighbours keep their values."""
        value = self._scores(ranking, judgments, query_id)[label]
        if isinstance(value, _Refused):
            raise value.error
        return value

    def _scores(
        self, ranking: Sequence[str], judgments: Mapping[str, int] | None, query_id: str | None
    ) -> _Judged:
        """The scores of the last ranking when it comes again, else new ones (kept)."""
        key: Any
        if judgments is None:
            if self.qrels is None or query_id is None:
                raise InvalidParameterError(
                    "Give the judgments of the ranking, or build the scorer with qrels= and "
                    "pass query_id=."
                )
            if query_id not in self.qrels:
                raise MissingKeyError(f"Query {query_id!r} is not judged in the scorer's qrels.")
            key = (tuple(ranking), query_id)
        else:
            key = (tuple(ranking), tuple(judgments.items()))
        last = self._last
        if last is not None and last[0] == key:
            return last[1]
        scores = self._score(ranking, judgments, query_id)
        self._last = (key, scores)
        return scores

    def _score(
        self, ranking: Sequence[str], judgments: Mapping[str, int] | None, query_id: str | None
    ) -> _Judged:
        name = query_id if query_id is not None else "q"
        ranked = _checked_ranking(ranking, name)
        if judgments is None:
            assert self.qrels is not None
            assert query_id is not None
            if self.qrels.has_groups:  # evidence groups: judge the query within its qrels
                run = Run.from_lists({name: ranked})
                result = evaluate_checked(self.qrels, run, self.metrics, self._one_query)
                return dict(result.per_query.get(query_id, dict.fromkeys(self.labels)))
            judged_docs = dict(self.qrels[query_id])
        refused: RagMetricsError | None = None
        if judgments is not None:
            judged_docs = _checked_judgments(judgments, name)
            if self._utility:
                try:
                    check_query_grades(judged_docs.values(), self.settings.grade_map, self._utility)
                except RagMetricsError as error:  # the set metrics' alone
                    refused = error
        if not judged_docs:
            return dict.fromkeys(self.labels)
        if self._single:  # no set metric: nothing refused
            single = self._score_single(judged_docs, ranked)
            if single is not None:
                return single
        judged = locate_in_ranking(
            judged_docs,
            ranked,
            query_id=name,
            depth=self._depth,
            grade_map=self.settings.grade_map,
            score_precision=self.settings.score_precision,
            with_pool=self._needs_pool,
        )
        if not judged.n_located and ranked:
            self._warn_ids(ranked, list(judged_docs))
        scores: _Judged = {}
        for metric in self.metrics:
            if refused is not None and metric.label in self._utility:
                scores[metric.label] = _Refused(refused)
                continue
            value = float(metric.compute(judged)[0])
            scores[metric.label] = None if value != value else value  # NaN: NA
        return scores

    def _score_single(
        self, judged_docs: Mapping[str, float], ranked: tuple[str, ...]
    ) -> _Judged | None:
        """The metrics' twins for one ranking (``MetricSpec.single``: the kernels' values in
        plain Python); None when one of them does not cover its parameters."""
        one = OneRanking.of(judged_docs, ranked)
        scores: _Judged = {}
        for metric in self.metrics:
            single = metric.spec.single
            assert single is not None
            value = single(one, metric.cutoff, **metric.params)
            if value is None:
                return None
            scores[metric.label] = None if value != value else value  # NaN: NA
        if not one.hits and ranked:
            self._warn_ids(ranked, list(judged_docs))
        return scores

    @property
    def _one_query(self) -> Settings:
        return replace(self.settings, missing="skip")

    def _warn_ids(self, retrieved: Sequence[str], judged: Sequence[str]) -> None:
        """Once per scorer: ids of another form than the judged ones (uuids, chunk ids)."""
        if self._warned or self._ids_alike:
            return
        if ids_look_alike(retrieved, judged):
            self._ids_alike = True  # one retriever, one form of ids: checked once
            return
        with self._lock:
            if self._warned:
                return
            self._warned = True
        shown = ", ".join(map(repr, list(retrieved)[:3]))
        wanted = ", ".join(map(repr, list(judged)[:3]))
        warn(
            f"The retrieved ids ({shown}) are not of the form of the judged ids ({wanted}): "
            f"every metric is 0 by construction. Map the retriever's ids to the judged ones."
            + self.id_hint,
            IdMismatchWarning,
        )


class _Refused:
    """A metric's refusal of one ranking's judgments, kept with the other metrics' values."""

    __slots__ = ("error",)

    def __init__(self, error: RagMetricsError) -> None:
        self.error = error


_Judged = dict[str, "float | _Refused | None"]


def _checked_ranking(ranking: Sequence[str], query_id: str) -> tuple[str, ...]:
    """The ranking as a tuple of str ids, each doc once (later repeats dropped, as a run
    drops them); the errors of :meth:`Run.from_lists` otherwise."""
    if isinstance(ranking, (str, Mapping)) or not isinstance(ranking, Sequence):
        Run.from_lists({query_id: ranking})  # raises the run's own error
    ranked = tuple(ranking)
    if not all(type(doc) is str for doc in ranked):
        Run.from_lists({query_id: ranked})  # raises, naming the id (or accepts str subclasses)
    return ranked if len(set(ranked)) == len(ranked) else tuple(dict.fromkeys(ranked))


def _checked_judgments(judgments: Mapping[str, int], query_id: str) -> dict[str, int]:
    """The judgments as a dict of str ids to int grades; the errors of :class:`Qrels`."""
    if type(judgments) is dict and all(
        type(doc) is str and type(grade) is int for doc, grade in judgments.items()
    ):
        return judgments
    return dict(Qrels.from_dict({query_id: judgments})[query_id])
