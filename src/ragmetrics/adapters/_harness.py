"""Dataset evaluation for the adapters: check first, retrieve, then score once.

An adapter builds an :class:`EvaluationPlan` when it is called (so a typo in a metric name
or keyword fails before the first retrieval), runs its framework's retriever over the
dataset, hands each query's outcome to :meth:`EvaluationPlan.evaluate` as ids or texts, and
returns the core's result. What is shared lives here: chunk matching (unmatched chunks
keep their place and are counted), the candidate pool of PROC@k, failed retrievals
(counted, listed, warned about) and the warning that names the adapter's fix when no
retrieved id is judged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ragmetrics._util.warn import warn
from ragmetrics.data._dataset import RetrievalDataset
from ragmetrics.data._run import Run
from ragmetrics.engine._evaluation import evaluate_checked
from ragmetrics.engine._result import EvaluationResult
from ragmetrics.engine._settings import Settings, check_settings, resolve_metrics
from ragmetrics.errors import RagMetricsError, RetrievalFailedWarning
from ragmetrics.matching import DEFAULT_RULES, ChunkMatcher, MatchRules
from ragmetrics.metrics import Metric, Scale
from ragmetrics.metrics._rag import check_utility_scale

__all__ = [
    "EvaluationPlan",
    "Retrieved",
    "Scored",
]


@dataclass
class Retrieved:
    """What one retrieval returned, best first: ids, and texts when chunks are matched."""

    ids: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Scored:
    """A dataset evaluation: the result, the run scored and the candidate pool made."""

    result: EvaluationResult
    run: Run
    pool: Run | None


@dataclass(frozen=True)
class EvaluationPlan:
    """Metric names and :func:`~ragmetrics.evaluate` keywords, checked.

    Build it with :meth:`check` before retrieving anything.
    """

    metrics: list[Metric]
    settings: Settings
    match_texts: bool = False
    match_rules: MatchRules = DEFAULT_RULES

    @classmethod
    def check(
        cls,
        metrics: str | Sequence[str],
        options: Mapping[str, Any],
        *,
        match_texts: bool = False,
        match_rules: MatchRules | None = None,
    ) -> EvaluationPlan:
        """Raise the core's errors for an unknown metric or keyword, or a bad value."""
        settings = check_settings(**options)
        return cls(
            resolve_metrics(metrics, settings), settings, match_texts, match_rules or DEFAULT_RULES
        )

    def check_dataset(self, dataset: RetrievalDataset) -> None:
        """What can be checked from the dataset alone, before the first retrieval is paid
        for: judgments to evaluate against, and the grade scale the set metrics need."""
        qrels = dataset.qrels
        if not any(len(qrels[q]) for q in qrels.query_ids):
            raise RagMetricsError(
                "The dataset has no relevant docs: there is nothing to evaluate against. "
                "Give relevant_docs for its queries."
            )
        utility = [m.label for m in self.metrics if m.spec.scale is Scale.UTILITY]
        if utility:
            check_utility_scale(qrels.grade_values(), self.settings.grade_map, utility)

    def evaluate(
        self,
        dataset: RetrievalDataset,
        final: Mapping[str, Retrieved],
        *,
        candidates: Mapping[str, Retrieved] | None = None,
        errors: Mapping[str, str] | None = None,
        id_hint: str = "",
        name: str | None = None,
        latencies: Mapping[str, float] | None = None,
    ) -> Scored:
        """Score the retrievals of ``dataset``'s queries.

        Args:
            final: per query, what the pipeline kept (a failed query: empty).
            candidates: per query, what the retriever returned before post-processing: the
                candidate pool of PROC@k unless the plan has its own ``pool``.
            errors: per query, ``"ErrorType: message"`` of a retrieval that raised.
            id_hint: how to fix ids that are not the judged ones, for the warning.
            latencies: per query, the seconds its retrieval took.
        """
        errors = dict(errors or {})
        if errors:
            shown = "; ".join(f"{q!r}: {e}" for q, e in list(errors.items())[:3])
            warn(
                f"{len(errors)} of {len(final)} retrievals raised and score as empty "
                f"rankings ({shown}). The errors are in result.retrieval_errors; pass "
                f"raise_errors=True to stop at the first.",
                RetrievalFailedWarning,
            )
        matcher = ChunkMatcher(dataset.corpus, rules=self.match_rules) if self.match_texts else None
        run, unmatched, ambiguous = _to_run(final, matcher, name or "retriever")
        settings = self.settings
        pool = None
        if candidates is not None and settings.pool is None:
            pool, _, _ = _to_run(candidates, matcher, "candidates")
            settings = replace(settings, pool=pool)
        result = evaluate_checked(dataset.qrels, run, self.metrics, settings, id_hint=id_hint)
        counts = replace(
            result.counts,
            unmatched_chunks=unmatched,
            ambiguous_chunks=ambiguous,
            failed_retrievals=len(errors),
        )
        result = result.replace(retrieval_errors=errors, latencies=latencies or {}, counts=counts)
        return Scored(result, run, pool)


def _to_run(
    retrieved: Mapping[str, Retrieved], matcher: ChunkMatcher | None, name: str
) -> tuple[Run, int, int]:
    """The rankings as a run (of documents, when chunks are matched), the unmatched chunks
    and the ambiguous ones."""
    if matcher is None:
        return Run.from_lists({q: r.ids for q, r in retrieved.items()}, name=name), 0, 0
    matched = matcher.match_run({q: r.texts for q, r in retrieved.items()}, name=name)
    return matched.run, matched.n_unmatched, matched.n_ambiguous
