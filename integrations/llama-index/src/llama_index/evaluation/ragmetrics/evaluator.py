"""Evaluate a LlamaIndex retriever over a whole :class:`ragmetrics.RetrievalDataset`.

``llama-index-core`` 0.14.21 dropped ``RetrieverEvaluator.aevaluate_dataset`` and
``EmbeddingQAFinetuneDataset``; this evaluator takes their place and returns a core result,
so ``to_pandas()``, ``to_markdown()``, ``compare()``, RA-nWG and ``pool=`` all apply.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import warnings
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle

from llama_index.evaluation.ragmetrics._nodes import node_ids, node_texts
from ragmetrics import EvaluationResult, RetrievalDataset, Run, evaluate
from ragmetrics.errors import RagMetricsError
from ragmetrics.matching import DEFAULT_RULES, ChunkMatcher, MatchRules
from ragmetrics.progress import progress_bar

T = TypeVar("T")


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from sync code, also inside a running loop (notebooks),
    letting its own exceptions through unchanged."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


class RagMetricsRetrieverEvaluator:
    """Run a retriever over every query of a dataset, concurrently, and score it.

    Args:
        retriever: any LlamaIndex ``BaseRetriever``.
        metrics: ragmetrics metric names, e.g. ``["hit_rate@5", "ndcg@10", "ra_nwg@5"]``.
        id_field: how a node maps to a dataset doc id: ``"node_id"``, ``"ref_doc_id"`` or
            ``"metadata:<key>"``.
        node_postprocessors: applied after retrieval (a reranker, a cut-off); the ranking
            before them becomes the candidate pool of PROC@k.
        match_texts: map node texts onto ``dataset.corpus`` with the chunk matcher instead of
            using ids (for chunked corpora whose ground truth names whole documents).
        workers: how many retrievals run at once.
        show_progress: a progress bar over the queries.
        raise_errors: re-raise a retriever's exception instead of recording it.
        **options: further ``evaluate()`` keywords (``relevance_threshold``, ``grade_map``...).
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
        self.retriever = retriever
        self.metrics = list(metrics)
        self.id_field = id_field
        self.node_postprocessors = list(node_postprocessors)
        self.match_texts = match_texts
        self.match_rules = match_rules
        self.metadata_mode = metadata_mode
        self.workers = workers
        self.show_progress = show_progress
        self.raise_errors = raise_errors
        self.options = options
        self.run: Run | None = None
        self.pool: Run | None = None
        self.errors: dict[str, str] = {}

    def evaluate_dataset(self, dataset: RetrievalDataset) -> EvaluationResult:
        """Retrieve for every query and evaluate (blocking; safe inside a notebook)."""
        return run_sync(self.aevaluate_dataset(dataset))

    async def aevaluate_dataset(self, dataset: RetrievalDataset) -> EvaluationResult:
        """Retrieve for every query (``workers`` at a time) and evaluate."""
        if not isinstance(dataset, RetrievalDataset):
            raise RagMetricsError(
                f"dataset must be a ragmetrics.RetrievalDataset; got {type(dataset).__name__}. "
                f"Load legacy JSON with RetrievalDataset.from_json(path)."
            )
        limit = asyncio.Semaphore(self.workers)
        bar = progress_bar(
            total=len(dataset.queries), desc="retrieving", disable=not self.show_progress
        )
        self.errors = {}

        async def one(
            query_id: str, text: str
        ) -> tuple[str, list[NodeWithScore], list[NodeWithScore]]:
            async with limit:
                try:
                    bundle = QueryBundle(query_str=text)
                    candidates = await self.retriever.aretrieve(bundle)
                    final = list(candidates)
                    for processor in self.node_postprocessors:
                        final = processor.postprocess_nodes(final, query_bundle=bundle)
                except Exception as error:  # a failing query is recorded, not fatal
                    if self.raise_errors:
                        raise
                    self.errors[query_id] = f"{type(error).__name__}: {error}"
                    candidates, final = [], []
                bar.update(1)
                return query_id, candidates, final

        try:
            done = await asyncio.gather(*(one(q, t) for q, t in dataset.queries.items()))
        finally:
            bar.close()
        if self.errors:
            warnings.warn(
                f"{len(self.errors)} queries failed to retrieve and score as empty rankings; "
                f"see the evaluator's .errors.",
                stacklevel=2,
            )
        matcher = None
        if self.match_texts:
            matcher = ChunkMatcher(dataset.corpus, rules=self.match_rules or DEFAULT_RULES)
        final_run = self._to_run({q: f for q, _, f in done}, matcher, "final")
        self.run = final_run
        options = dict(self.options)
        if self.node_postprocessors and "pool" not in options:
            self.pool = self._to_run({q: c for q, c, _ in done}, matcher, "candidates")
            options["pool"] = self.pool
        return evaluate(dataset.qrels, final_run, self.metrics, **options)

    def _to_run(
        self, nodes: dict[str, list[NodeWithScore]], matcher: ChunkMatcher | None, name: str
    ) -> Run:
        if matcher is not None:
            texts = {q: node_texts(n, self.metadata_mode) for q, n in nodes.items()}
            return matcher.match_run(texts, name=name).run
        return Run.from_lists({q: node_ids(n, self.id_field) for q, n in nodes.items()}, name=name)
