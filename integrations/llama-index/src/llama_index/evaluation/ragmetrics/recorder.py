"""Record every retrieval of any LlamaIndex pipeline into a core ``Run``.

Attach a :class:`RetrievalRecorder` to the instrumentation dispatcher; every retriever call
(query engines and chat engines included) emits a start and an end event sharing a span id,
which the recorder pairs.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]
from llama_index.core.instrumentation.dispatcher import Dispatcher  # type: ignore[attr-defined]
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.retrieval import (
    RetrievalEndEvent,
    RetrievalStartEvent,
)
from llama_index.core.schema import QueryBundle

from llama_index.evaluation.ragmetrics._nodes import node_ids, node_texts
from ragmetrics import Run


@dataclass(frozen=True)
class RetrievalRecord:
    """One retrieval: the query, its key in the run, and what came back."""

    query: str
    query_id: str
    node_ids: tuple[str, ...]
    texts: tuple[str, ...]
    scores: tuple[float | None, ...]
    span_id: str | None


def _query_text(query: Any) -> str:
    return query.query_str if isinstance(query, QueryBundle) else str(query)


class RetrievalRecorder(BaseEventHandler):
    """An instrumentation event handler that records retrievals.

    Args:
        query_ids: query text -> query id; unknown texts are keyed by the text itself.
        id_field: node id to record (``"node_id"``, ``"ref_doc_id"``, ``"metadata:<key>"``).
        max_records: keep at most this many records (the oldest are dropped).

    ``recorder.run`` is a :class:`ragmetrics.Run` of the latest retrieval per query;
    ``recorder.records`` keeps every retrieval. Handling never raises into the pipeline:
    a failure is counted in ``recorder.failures``.
    """

    query_ids: dict[str, str] = Field(default_factory=dict)
    id_field: str = "node_id"
    max_records: int | None = None
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _open: dict[str, str] = PrivateAttr(default_factory=dict)
    _records: list[RetrievalRecord] = PrivateAttr(default_factory=list)
    _failures: int = PrivateAttr(default=0)
    _dispatcher: Dispatcher | None = PrivateAttr(default=None)

    @classmethod
    def class_name(cls) -> str:
        return "RagMetricsRetrievalRecorder"

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        try:
            if isinstance(event, RetrievalStartEvent):
                with self._lock:
                    self._open[str(event.span_id)] = _query_text(event.str_or_query_bundle)
            elif isinstance(event, RetrievalEndEvent):
                self._record(event)
        except Exception:  # never break the user's pipeline
            with self._lock:
                self._failures += 1

    def _record(self, event: RetrievalEndEvent) -> None:
        span = str(event.span_id) if event.span_id is not None else None
        with self._lock:
            started = self._open.pop(span, None) if span else None
        query = started or _query_text(event.str_or_query_bundle)
        record = RetrievalRecord(
            query=query,
            query_id=self.query_ids.get(query, query),
            node_ids=tuple(node_ids(event.nodes, self.id_field)),
            texts=tuple(node_texts(event.nodes)),
            scores=tuple(n.score for n in event.nodes),
            span_id=span,
        )
        with self._lock:
            self._records.append(record)
            if self.max_records is not None and len(self._records) > self.max_records:
                del self._records[: len(self._records) - self.max_records]

    @property
    def records(self) -> list[RetrievalRecord]:
        with self._lock:
            return list(self._records)

    @property
    def failures(self) -> int:
        return self._failures

    @property
    def run(self) -> Run:
        """The latest retrieval of each query, as a ranked-list run."""
        latest = {r.query_id: list(r.node_ids) for r in self.records}
        return Run.from_lists(latest, name="recorded")

    def clear(self) -> None:
        with self._lock:
            self._records.clear()
            self._open.clear()

    def attach(self, dispatcher: Dispatcher | None = None) -> RetrievalRecorder:
        """Start recording (on the root dispatcher unless one is given)."""
        target = dispatcher or get_dispatcher()
        if self not in target.event_handlers:
            target.add_event_handler(self)
        self._dispatcher = target
        return self

    def detach(self) -> None:
        """Stop recording."""
        if self._dispatcher is not None and self in self._dispatcher.event_handlers:
            self._dispatcher.event_handlers.remove(self)
        self._dispatcher = None

    def __enter__(self) -> RetrievalRecorder:
        return self.attach()

    def __exit__(self, *exc: object) -> None:
        self.detach()
