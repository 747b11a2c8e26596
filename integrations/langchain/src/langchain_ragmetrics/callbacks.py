"""Record and score retrievals inside a running chain: a LangChain callback handler.

The handler translates LangChain's retriever callbacks into a core
:class:`ragmetrics.adapters.RetrievalLog`: start, end and error events are paired by
``run_id``, each record carries the retriever's name, its tags and its parent run, and live
scores come from one :class:`ragmetrics.adapters.QueryScorer`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document

from langchain_ragmetrics._documents import DocumentIds, document_texts, id_hint
from ragmetrics.adapters import (
    RERANKING_RETRIEVERS,
    EvaluationResult,
    MissingPolicy,
    Policy,
    Qrels,
    QueryScorer,
    RagMetricsError,
    RecordedRetrievals,
    RetrievalDataset,
    RetrievalLog,
    RetrievalRecord,
)

__all__ = ["RetrievalEvalCallbackHandler", "RetrievalRecord"]


class RetrievalEvalCallbackHandler(RecordedRetrievals, BaseCallbackHandler):
    """Record every retrieval of a chain into a ragmetrics ``Run``, and score it live.

    Args:
        qrels: ground truth: a ``Qrels``, a ``{qid: {doc: grade}}`` dict or a
            ``RetrievalDataset`` (whose query texts then identify queries).
        metrics: the metrics kept live per query and used by :meth:`evaluate`.
        queries: query text -> query id, for queries that carry no id in their metadata.
        id_key: document metadata key holding the doc id (see ``document_id``).
        query_id_key: the metadata key that carries a query id
            (``config={"metadata": {"query_id": "q7"}}``).
        raise_error: let an error inside the handler propagate into the chain (off by
            default: the handler never breaks the user's chain; its first error warns and
            the last ones are kept in ``last_error``).
        max_records: keep at most this many records (the oldest are dropped).
        keep_texts: keep each retrieved document's text in its record (off by default: a
            record then holds ids and scores only, a few hundred bytes).
        **options: per-ranking ``evaluate()`` keywords (``relevance_threshold``,
            ``grade_map``...), checked here.

    Start and end events are paired by ``run_id``, under a lock, so one handler can serve
    concurrent ``batch`` / ``abatch`` / threaded calls.
    """

    run_inline = True  # cheap and thread-safe: no executor hop in async chains
    _run_name = "callback"

    def __init__(
        self,
        qrels: Qrels | Mapping[str, Mapping[str, int]] | RetrievalDataset | None = None,
        metrics: Sequence[str] = ("hit_rate@5", "mrr@10", "ndcg@10"),
        *,
        queries: Mapping[str, str] | None = None,
        id_key: str | None = None,
        query_id_key: str = "query_id",
        raise_error: bool = False,
        max_records: int | None = None,
        keep_texts: bool = False,
        **options: Any,
    ) -> None:
        super().__init__()
        text_to_id = dict(queries or {})
        if isinstance(qrels, RetrievalDataset):
            text_to_id = {**{t: q for q, t in qrels.queries.items()}, **text_to_id}
            qrels = qrels.qrels
        # names, keywords and (with qrels) the grade scale are checked here
        self.scorer = QueryScorer(list(metrics), qrels=qrels, id_hint=id_hint(id_key), **options)
        self.qrels = self.scorer.qrels
        self.metrics = list(metrics)
        self.queries = text_to_id
        self.id_key = id_key
        self.query_id_key = query_id_key
        self.raise_error = raise_error
        self.options = options
        self.keep_texts = bool(keep_texts)
        self._ids = DocumentIds(id_key)
        self._log = RetrievalLog(
            queries=text_to_id,
            max_records=max_records,
            scorer=self.scorer if self.qrels is not None else None,
            raise_errors=raise_error,
        )

    # --- callbacks -----------------------------------------------------------------------

    def on_retriever_start(
        self,
        serialized: dict[str, Any] | None,
        query: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            name = kwargs.get("name") or (serialized or {}).get("name")
            kind = "rerank" if name in RERANKING_RETRIEVERS else "retrieve"
            node = (metadata or {}).get("langgraph_node")
            stage_tags = [*(tags or ())]
            if node is not None and name is not None and str(name) != str(node):
                # a retriever in a LangGraph graph: one stage per node, even when two nodes
                # hold retrievers of one class (stage="node" or "Name@node" picks one)
                name = f"{name}@{node}"
                stage_tags.append(str(node))
            self._log.start(
                str(run_id),
                query,
                query_id=(metadata or {}).get(self.query_id_key),
                retriever=None if name is None else str(name),
                tags=stage_tags,
                parent_id=None if parent_run_id is None else str(parent_run_id),
                kind=kind,
            )
        except Exception as error:
            self._failed("retriever start", error, query)

    def on_retriever_end(
        self,
        documents: Sequence[Document],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            texts = document_texts(documents) if self.keep_texts else ()
            self._log.end(str(run_id), self._ids(documents), texts=texts)
        except Exception as error:
            self._log.discard(str(run_id))
            self._failed("retriever end", error)

    def on_retriever_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            self._log.fail(str(run_id), error)
        except Exception as failure:
            self._failed("retriever error", failure)

    def _failed(self, where: str, error: Exception, query: str | None = None) -> None:
        self._log.handler_failed(where, error, query)
        if self.raise_error:
            raise error

    # --- results -------------------------------------------------------------------------

    @property
    def errors(self) -> list[RetrievalRecord]:
        """The retrievals that raised."""
        return [r for r in self.records if r.failed]

    @property
    def live(self) -> dict[str, dict[str, float | None]]:
        """Per judged query, the metrics of its latest retrieval."""
        return self._log.live

    def evaluate(
        self,
        metrics: Sequence[str] | None = None,
        *,
        stage: str | None = None,
        missing: MissingPolicy = "skip",
        policy: Policy = "latest",
        **options: Any,
    ) -> EvaluationResult:
        """Score the recorded run (``policy``: as :meth:`run_of`) against the ground truth. Judged
        queries the chain never saw are left out and counted (``missing="skip"``): they say
        nothing about the retriever. Failed retrievals score as empty rankings, listed in
        ``result.retrieval_errors``."""
        if self.qrels is None:
            raise RagMetricsError(
                "This handler has no ground truth: pass qrels= (or a RetrievalDataset) to it, "
                "or evaluate handler.run yourself."
            )
        return self._log.evaluate(
            self.qrels,
            list(metrics or self.metrics),
            stage=stage,
            missing=missing,
            policy=policy,
            **{**self.options, **options},
        )

    def reset(self) -> None:
        self._log.clear()
