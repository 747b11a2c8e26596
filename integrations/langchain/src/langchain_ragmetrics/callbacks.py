"""Score retrievals inside a running chain: a LangChain callback handler."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document

from langchain_ragmetrics._documents import document_ids, document_texts
from ragmetrics import EvaluationResult, Qrels, RetrievalDataset, Run, evaluate
from ragmetrics.evaluate import MissingPolicy, as_qrels
from ragmetrics.metrics import parse_metrics


@dataclass(frozen=True)
class RetrievalRecord:
    """One retrieval seen by the handler (``error`` is set when the retriever failed)."""

    run_id: str
    query: str
    query_id: str
    doc_ids: tuple[str, ...]
    texts: tuple[str, ...]
    error: str | None = None


class RetrievalEvalCallbackHandler(BaseCallbackHandler):
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
            default: the handler never breaks the user's chain).
        max_records: keep at most this many records (the oldest are dropped).
        **options: ``evaluate()`` keywords (``relevance_threshold``, ``grade_map``...).

    Start and end events are paired by ``run_id``, under a lock, so one handler can serve
    concurrent ``batch`` / ``abatch`` / threaded calls.
    """

    run_inline = True  # cheap and thread-safe: no executor hop in async chains

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
        **options: Any,
    ) -> None:
        super().__init__()
        parse_metrics(list(metrics))  # a bad name fails here, at set-up
        text_to_id = dict(queries or {})
        if isinstance(qrels, RetrievalDataset):
            text_to_id = {**{t: q for q, t in qrels.queries.items()}, **text_to_id}
            qrels = qrels.qrels
        self.qrels = as_qrels(qrels) if qrels is not None else None
        self.metrics = list(metrics)
        self.queries = text_to_id
        self.id_key = id_key
        self.query_id_key = query_id_key
        self.raise_error = raise_error
        self.max_records = max_records
        self.options = options
        self._lock = threading.Lock()
        self._pending: dict[UUID, tuple[str, str]] = {}
        self._records: deque[RetrievalRecord] = deque(maxlen=max_records)
        self._live: dict[str, dict[str, float | None]] = {}
        self._failures = 0

    # --- callbacks -----------------------------------------------------------------------

    def on_retriever_start(
        self,
        serialized: dict[str, Any],
        query: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            query_id = (metadata or {}).get(self.query_id_key) or self.queries.get(query, query)
            with self._lock:
                self._pending[run_id] = (query, str(query_id))
        except Exception:
            self._failed()

    def on_retriever_end(
        self,
        documents: Sequence[Document],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            with self._lock:
                query, query_id = self._pending.pop(run_id, ("", str(run_id)))
            record = RetrievalRecord(
                str(run_id),
                query,
                query_id,
                tuple(document_ids(documents, self.id_key)),
                tuple(document_texts(documents)),
            )
            live = self._score(record)
            with self._lock:
                self._records.append(record)
                if live is not None:
                    self._live[query_id] = live
        except Exception:
            self._failed()

    def on_retriever_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            with self._lock:
                query, query_id = self._pending.pop(run_id, ("", str(run_id)))
                self._records.append(
                    RetrievalRecord(
                        str(run_id), query, query_id, (), (), f"{type(error).__name__}: {error}"
                    )
                )
        except Exception:
            self._failed()

    def _failed(self) -> None:
        with self._lock:
            self._failures += 1
        if self.raise_error:
            raise

    def _score(self, record: RetrievalRecord) -> dict[str, float | None] | None:
        if self.qrels is None or not self.qrels.get(record.query_id):
            return None
        one = Qrels.from_dict({record.query_id: self.qrels[record.query_id]})
        result = evaluate(
            one,
            Run.from_lists({record.query_id: list(record.doc_ids)}),
            self.metrics,
            **self.options,
        )
        return result.per_query[record.query_id]

    # --- results -------------------------------------------------------------------------

    @property
    def records(self) -> list[RetrievalRecord]:
        """Every retrieval seen (bounded by ``max_records``), failed ones included."""
        with self._lock:
            return list(self._records)

    @property
    def errors(self) -> list[RetrievalRecord]:
        """The retrievals that raised."""
        return [r for r in self.records if r.error is not None]

    @property
    def live(self) -> dict[str, dict[str, float | None]]:
        """Per judged query, the metrics of its latest retrieval."""
        with self._lock:
            return {q: dict(v) for q, v in self._live.items()}

    @property
    def failures(self) -> int:
        """Errors inside the handler itself (swallowed unless ``raise_error``)."""
        return self._failures

    @property
    def run(self) -> Run:
        """The latest successful retrieval of each query, as a ranked-list run."""
        latest = {r.query_id: list(r.doc_ids) for r in self.records if r.error is None}
        return Run.from_lists(latest, name="callback")

    def evaluate(
        self,
        metrics: Sequence[str] | None = None,
        *,
        missing: MissingPolicy = "skip",
        **options: Any,
    ) -> EvaluationResult:
        """Score the recorded run against the ground truth (queries not seen are left out and
        counted, unless ``missing="zero"``)."""
        if self.qrels is None:
            from ragmetrics.errors import RagMetricsError

            raise RagMetricsError(
                "This handler has no ground truth: pass qrels= (or a RetrievalDataset) to it, "
                "or evaluate handler.run yourself."
            )
        return evaluate(
            self.qrels,
            self.run,
            list(metrics or self.metrics),
            missing=missing,
            **{**self.options, **options},
        )  # type: ignore[arg-type]

    def reset(self) -> None:
        with self._lock:
            self._pending.clear()
            self._records.clear()
            self._live.clear()
