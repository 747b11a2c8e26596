"""Evaluate a LlamaIndex retriever over a whole :class:`ragmetrics.RetrievalDataset`.

``llama-index-core`` 0.14.21 dropped ``RetrieverEvaluator.aevaluate_dataset`` and
``EmbeddingQAFinetuneDataset``; this evaluator takes their place and returns a core result,
so ``to_pandas()``, ``to_markdown()``, ``compare()``, RA-nWG and ``pool=`` all apply.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle

from llama_index.evaluation.ragmetrics._nodes import check_id_field, id_hint, node_ids, node_texts
from ragmetrics.adapters import (
    EvaluationPlan,
    EvaluationResult,
    MatchRules,
    RagMetricsError,
    Retrieved,
    Run,
    as_dataset,
    progress_bar,
)

__all__ = [
    "RagMetricsRetrieverEvaluator",
    "run_sync",
]

T = TypeVar("T")


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from sync code, also inside a running loop (notebooks),
    letting its own exceptions through unchanged."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        running = False
    else:
        running = True
    if not running:  # outside the except: its errors must not be chained to "no running loop"
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


class RagMetricsRetrieverEvaluator:
    """Run a retriever over every query of a dataset, concurrently, and score it.

    Args:
        retriever: any LlamaIndex ``BaseRetriever``.
        metrics: ragmetrics metric names, e.g. ``["hit_rate@5", "ndcg@10", "ra_nwg@5"]``.
        id_field: how a node maps to a dataset doc id: ``"node_id"``, ``"ref_doc_id"`` or
            ``"metadata:<key>"``. With ``"ref_doc_id"`` the ranking is of documents: each
            takes the place of its first chunk and its later chunks are dropped.
        node_postprocessors: applied after retrieval (a reranker, a cut-off); the ranking
            before them becomes the candidate pool of PROC@k (unless ``pool=`` is given).
        match_texts: map node texts onto ``dataset.corpus`` with the chunk matcher instead
            of using ids; the ranking is of documents as with ``"ref_doc_id"``, and a chunk
            that matches no document keeps its place (``counts.unmatched_chunks``).
        workers: how many retrievals run at once.
        show_progress: a progress bar over the queries.
        raise_errors: re-raise a retriever's exception instead of recording it.
        **options: further ``evaluate()`` keywords (``relevance_threshold``, ``grade_map``,
            ``pool``...).

    Metric names and keywords are checked here, before anything is retrieved.
    """

    def __init__(
        self,
        retriever: BaseRetriever,
        metrics: Sequence[str],
        *,
        id_field: str = "node_id",
        node_postprocessors: Sequence[BaseNodePostprocessor] = (),
        match_texts: bool = False,
        match_rules: MatchRules | None = None,
        metadata_mode: MetadataMode = MetadataMode.NONE,
        workers: int = 4,
        show_progress: bool = True,
        raise_errors: bool = False,
        **options: Any,
    ) -> None:
        if not isinstance(retriever, BaseRetriever):
            raise RagMetricsError(
                f"retriever must be a LlamaIndex BaseRetriever; got {type(retriever).__name__}. "
                f"Use index.as_retriever() to get one."
            )
        if not isinstance(workers, int) or workers < 1:
            raise RagMetricsError(f"workers must be an int >= 1. Got {workers!r} instead.")
        self.plan = EvaluationPlan.check(
            metrics, options, match_texts=match_texts, match_rules=match_rules
        )
        self.retriever = retriever
        self.metrics = list(metrics)
        self.id_field = check_id_field(id_field)
        self.node_postprocessors = list(node_postprocessors)
        self.match_texts = match_texts
        self.metadata_mode = metadata_mode
        self.workers = workers
        self.show_progress = show_progress
        self.raise_errors = raise_errors
        self.options = options
        self.run: Run | None = None
        self.pool: Run | None = None
        self.errors: dict[str, str] = {}

    def evaluate_dataset(self, dataset: Any) -> EvaluationResult:
        """Retrieve for every query and evaluate (blocking; safe inside a notebook)."""
        return run_sync(self.aevaluate_dataset(dataset))

    async def aevaluate_dataset(self, dataset: Any) -> EvaluationResult:
        """Retrieve for every query (``workers`` at a time) and evaluate.

        ``dataset``: a ``ragmetrics.RetrievalDataset``, or anything with ``queries`` and
        ``relevant_docs`` (LlamaIndex's ``EmbeddingQAFinetuneDataset`` included).
        """
        data = as_dataset(dataset)
        self.plan.check_dataset(data)  # the grade scale, before paying for any retrieval
        limit = asyncio.Semaphore(self.workers)
        bar = progress_bar(
            total=len(data.queries), desc="retrieving", disable=not self.show_progress
        )
        errors: dict[str, str] = {}
        latencies: dict[str, float] = {}

        async def one(query_id: str, text: str) -> tuple[str, Retrieved, Retrieved]:
            async with limit:
                started = time.perf_counter()
                bundle = QueryBundle(query_str=text)
                try:
                    candidates = await self.retriever.aretrieve(bundle)
                except Exception as error:  # a failing query is recorded, not fatal
                    if self.raise_errors:
                        raise
                    errors[query_id] = f"{type(error).__name__}: {error}"
                    candidates = []
                final = list(candidates)
                for processor in self.node_postprocessors if query_id not in errors else ():
                    try:
                        final = processor.postprocess_nodes(final, query_bundle=bundle)
                    except Exception as error:
                        # the reranker failed, not the retriever: its candidates stay the
                        # pool of PROC@k, and the final list is the failure
                        if self.raise_errors:
                            raise
                        errors[query_id] = (
                            f"post-processor {type(processor).__name__} failed: "
                            f"{type(error).__name__}: {error}"
                        )
                        final = []
                        break
                # retrieval and post-processing, as the pipeline would pay for them
                latencies[query_id] = time.perf_counter() - started
                bar.update(1)
                # outside the try: an id_field the nodes lack stops the evaluation at once
                return query_id, self._retrieved(candidates), self._retrieved(final)

        try:
            done = await asyncio.gather(*(one(q, t) for q, t in data.queries.items()))
        finally:
            bar.close()
        self.errors = errors
        final = {q: f for q, _, f in done}
        candidates = {q: c for q, c, _ in done} if self.node_postprocessors else None
        scored = self.plan.evaluate(
            data,
            final,
            candidates=candidates,
            errors=errors,
            id_hint="" if self.match_texts else id_hint(self.id_field),
            name="final",
            latencies=latencies,
        )
        self.run, self.pool = scored.run, scored.pool
        return scored.result

    def _retrieved(self, nodes: Sequence[NodeWithScore]) -> Retrieved:
        if self.match_texts:
            return Retrieved(texts=node_texts(nodes, self.metadata_mode))
        return Retrieved(ids=node_ids(nodes, self.id_field))
