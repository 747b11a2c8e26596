"""Record every retrieval of any LlamaIndex pipeline into a core ``Run``.

A :class:`RetrievalRecorder` listens to the instrumentation dispatcher: every retriever call
(query engines, chat engines and the sub-retrievers of a fusion retriever included) opens a
span and emits a start and an end event under that span's id. The recorder turns them into
:class:`ragmetrics.adapters.RetrievalRecord` s (retriever class, tags, parent span, error),
kept by a core :class:`ragmetrics.adapters.RetrievalLog`.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]
from llama_index.core.instrumentation.dispatcher import Dispatcher  # type: ignore[attr-defined]
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.retrieval import (
    RetrievalEndEvent,
    RetrievalStartEvent,
)
from llama_index.core.instrumentation.events.span import (  # type: ignore[attr-defined]
    SpanDropEvent,
)
from llama_index.core.instrumentation.span.simple import (  # type: ignore[attr-defined]
    SimpleSpan,
)
from llama_index.core.instrumentation.span_handlers import BaseSpanHandler
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.response_synthesizers.base import BaseSynthesizer
from llama_index.core.schema import QueryBundle

from llama_index.evaluation.ragmetrics._nodes import check_id_field, node_ids, node_texts
from ragmetrics.adapters import (
    EvaluationResult,
    MissingPolicy,
    Policy,
    Qrels,
    RecordedRetrievals,
    RetrievalLog,
    RetrievalRecord,
    StageWarning,
    warn,
)

__all__ = ["RetrievalRecord", "RetrievalRecorder"]


def _query_text(query: Any) -> str:
    return query.query_str if isinstance(query, QueryBundle) else str(query)


def _tags(tags: Mapping[str, Any] | None) -> tuple[str, ...]:
    return tuple(k if v in (None, True) else f"{k}={v}" for k, v in (tags or {}).items())


def _retriever_of(span_id: str) -> str | None:
    """The class in a span id (``"BM25Retriever.retrieve-<uuid>"``)."""
    head = span_id.partition("-")[0]
    return head.rpartition(".")[0] or None


class _SpanWatcher(BaseSpanHandler[SimpleSpan]):
    """Sees the retriever spans the events do not describe: the retriever object, the parent
    span, and the exception of a failed retrieval. Keeps nothing itself."""

    _log: RetrievalLog | None = PrivateAttr(default=None)
    _parents: dict[str, str | None] = PrivateAttr(default_factory=dict)  # open spans only
    # class name -> the ids of its retriever objects, in the order they first retrieved
    _instances: dict[str, list[int]] = PrivateAttr(default_factory=dict)
    _reranks: set[str] = PrivateAttr(default_factory=set)  # open post-processor spans
    _id_field: str = PrivateAttr(default="node_id")

    def span_enter(
        self,
        id_: str,
        bound_args: inspect.BoundArguments,
        instance: Any | None = None,
        parent_id: str | None = None,
        tags: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if self._log is None:
            return
        self._parents[id_] = parent_id
        if isinstance(instance, BaseNodePostprocessor) and "nodes" in bound_args.arguments:
            self._rerank_started(id_, bound_args, instance, parent_id, tags)
            return
        if isinstance(instance, BaseSynthesizer) and id_.partition("-")[0].endswith(
            (".synthesize", ".asynthesize")
        ):
            self._context_given(id_, bound_args, instance, tags)
            return
        if not isinstance(instance, BaseRetriever):
            return
        if bound_args.signature.parameters.get("str_or_query_bundle") is None:
            return  # _retrieve and other spans of the retriever
        try:
            query = _query_text(bound_args.arguments.get("str_or_query_bundle", ""))
            name = getattr(instance, "name", None) or self._stage_name(instance)
            self._log.start(
                id_, query, retriever=name, tags=_tags(tags), parent_id=self._retrieval(parent_id)
            )
        except Exception as error:  # never break the pipeline
            self._log.handler_failed("span start", error)

    def span_exit(
        self,
        id_: str,
        bound_args: inspect.BoundArguments,
        instance: Any | None = None,
        result: Any | None = None,
        **kwargs: Any,
    ) -> None:
        self._parents.pop(id_, None)
        if self._log is None:
            return
        if id_ in self._reranks:
            self._reranks.discard(id_)
            self._nodes_ended(id_, result, "rerank end")
            return
        self._log.discard(id_)  # closed by its end event already; nothing stays open

    def span_drop(
        self,
        id_: str,
        bound_args: inspect.BoundArguments,
        instance: Any | None = None,
        err: BaseException | None = None,
        **kwargs: Any,
    ) -> None:
        self._parents.pop(id_, None)
        self._reranks.discard(id_)
        if self._log is not None and isinstance(instance, (BaseRetriever, BaseNodePostprocessor)):
            self._log.fail(id_, err if err is not None else "the retrieval was dropped")

    def _rerank_started(
        self,
        id_: str,
        bound_args: inspect.BoundArguments,
        instance: BaseNodePostprocessor,
        parent_id: str | None,
        tags: dict[str, Any] | None,
    ) -> None:
        """A node post-processor (a reranker, a cut-off) began: a stage of kind "rerank",
        named by its class, under the query it was given."""
        assert self._log is not None
        try:
            bundle = bound_args.arguments.get("query_bundle")
            query = _query_text(bundle) if bundle is not None else ""
            self._log.start(
                id_,
                query,
                retriever=type(instance).__name__,
                tags=_tags(tags),
                parent_id=self._retrieval(parent_id),
                kind="rerank",
            )
            self._reranks.add(id_)
        except Exception as error:  # never break the pipeline
            self._log.handler_failed("rerank start", error)

    def _context_given(
        self,
        id_: str,
        bound_args: inspect.BoundArguments,
        instance: BaseSynthesizer,
        tags: dict[str, Any] | None,
    ) -> None:
        """A response synthesizer was given its nodes: the final context, a stage of kind
        "context" (what the LLM read, after every post-processor), recorded as it starts."""
        assert self._log is not None
        try:
            query = _query_text(bound_args.arguments.get("query", ""))
            self._log.start(
                id_, query, retriever=type(instance).__name__, tags=_tags(tags), kind="context"
            )
        except Exception as error:  # never break the pipeline
            self._log.handler_failed("context", error)
            return
        self._nodes_ended(id_, bound_args.arguments.get("nodes"), "context")

    def _nodes_ended(self, id_: str, nodes: Any, where: str) -> None:
        """Close the stage ``id_`` with these nodes (their ids and scores); an error here is
        the recorder's own: kept and warned of, the stage forgotten."""
        assert self._log is not None
        try:
            listed = list(nodes or [])
            self._log.end(id_, node_ids(listed, self._id_field), scores=[n.score for n in listed])
        except Exception as error:  # never break the pipeline
            self._log.discard(id_)
            self._log.handler_failed(where, error)

    def _stage_name(self, instance: BaseRetriever) -> str:
        """The retriever's class name; a second object of the same class records as
        ``Class#2`` (a third ``Class#3``...), with a warning, rather than overwriting the
        first one's stage."""
        cls = type(instance).__name__
        seen = self._instances.setdefault(cls, [])
        if id(instance) not in seen:
            seen.append(id(instance))
            if len(seen) == 2:
                warn(
                    f"Two {cls} objects retrieve under one recorder: the second records as "
                    f"stage '{cls}#2' (the first as '{cls}'), so neither overwrites the "
                    f"other; recorder.run_of('{cls}#2') scores it. Tag the retrievers "
                    f"(instrument_tags) to give their stages names of your own.",
                    StageWarning,
                )
        number = seen.index(id(instance)) + 1
        return cls if number == 1 else f"{cls}#{number}"

    def _retrieval(self, parent_id: str | None) -> str | None:
        """The nearest open retrieval span above ``parent_id``, else ``parent_id`` itself."""
        assert self._log is not None
        span, seen = parent_id, 0
        while span is not None and seen < 1000:
            if self._log.is_open(span):
                return span
            span, seen = self._parents.get(span), seen + 1
        return parent_id

    def new_span(self, *args: Any, **kwargs: Any) -> SimpleSpan | None:
        return None

    def prepare_to_exit_span(self, *args: Any, **kwargs: Any) -> SimpleSpan | None:
        return None

    def prepare_to_drop_span(self, *args: Any, **kwargs: Any) -> SimpleSpan | None:
        return None


class RetrievalRecorder(RecordedRetrievals, BaseEventHandler):
    """Records retrievals from LlamaIndex's instrumentation.

    Args:
        query_ids: query text -> query id; unknown texts are keyed by the text itself.
        id_field: node id to record (``"node_id"``, ``"ref_doc_id"``, ``"metadata:<key>"``).
        max_records: keep at most this many records (the oldest are dropped).
        keep_texts: keep each retrieved node's text in its record (off by default: a record
            then holds ids and scores only).

    Attach with ``recorder.attach()`` or ``with recorder:``. ``recorder.records`` keeps
    every retrieval (failed ones with their error); ``recorder.run`` is the latest
    successful top-level retrieval per query, and ``recorder.run_of(stage)`` that of one
    retriever (its class name, or a tag). Handling never raises into the pipeline: the first
    failure warns, and the last ones are kept in ``recorder.last_error``.
    """

    query_ids: dict[str, str] = Field(default_factory=dict)
    id_field: str = "node_id"
    max_records: int | None = None
    keep_texts: bool = False
    _log: RetrievalLog = PrivateAttr()
    _watcher: _SpanWatcher = PrivateAttr()
    _dispatcher: Dispatcher | None = PrivateAttr(default=None)

    def __init__(self, **data: Any) -> None:
        check_id_field(data.get("id_field", "node_id"))  # the core's error, not pydantic's
        super().__init__(**data)

    def model_post_init(self, context: Any) -> None:
        self._log = RetrievalLog(queries=self.query_ids, max_records=self.max_records)
        self._watcher = _SpanWatcher()
        self._watcher._log = self._log
        self._watcher._id_field = self.id_field

    @classmethod
    def class_name(cls) -> str:
        return "RagMetricsRetrievalRecorder"

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        log = self._log
        span = str(event.span_id) if event.span_id is not None else str(event.id_)
        try:
            if isinstance(event, RetrievalStartEvent):
                log.start(
                    span,
                    _query_text(event.str_or_query_bundle),
                    retriever=_retriever_of(span),
                    tags=_tags(event.tags),
                )
            elif isinstance(event, RetrievalEndEvent):
                log.end(
                    span,
                    node_ids(event.nodes, self.id_field),
                    texts=node_texts(event.nodes) if self.keep_texts else (),
                    scores=[n.score for n in event.nodes],
                    query=_query_text(event.str_or_query_bundle),
                )
            elif isinstance(event, SpanDropEvent) and not self._watching:
                log.fail(span, event.err_str)  # the span watcher, when attached, has the type
        except Exception as error:  # never break the user's pipeline
            log.discard(span)
            log.handler_failed(type(event).__name__, error)

    @property
    def _watching(self) -> bool:
        return self._dispatcher is not None

    # --- what was recorded ---------------------------------------------------------------

    def evaluate(
        self,
        qrels: Qrels | Mapping[str, Mapping[str, int]],
        metrics: str | Sequence[str],
        *,
        stage: str | None = None,
        missing: MissingPolicy = "skip",
        policy: Policy = "latest",
        **options: Any,
    ) -> EvaluationResult:
        """Score what was recorded (``policy``: as :meth:`run_of`). Judged queries the pipeline was
        never asked are left out and counted (``missing="skip"``), as the LangChain handler
        does: they say nothing about the retriever. Failed retrievals score as empty
        rankings and are listed in ``result.retrieval_errors``."""
        return self._log.evaluate(
            qrels, metrics, stage=stage, missing=missing, policy=policy, **options
        )

    @property
    def open_spans(self) -> int:
        """Retrievals started and not finished (0 once every call returned or raised)."""
        return self._log.open_spans

    def clear(self) -> None:
        self._log.clear()

    def attach(self, dispatcher: Dispatcher | None = None) -> RetrievalRecorder:
        """Start recording (on the root dispatcher unless one is given)."""
        target = dispatcher or get_dispatcher()
        if self not in target.event_handlers:
            target.add_event_handler(self)
        if self._watcher not in target.span_handlers:
            target.add_span_handler(self._watcher)
        self._dispatcher = target
        return self

    def detach(self) -> None:
        """Stop recording."""
        target = self._dispatcher
        if target is not None:
            if self in target.event_handlers:
                target.event_handlers.remove(self)
            if self._watcher in target.span_handlers:
                target.span_handlers.remove(self._watcher)
        self._dispatcher = None

    def __enter__(self) -> RetrievalRecorder:
        return self.attach()

    def __exit__(self, *exc: object) -> None:
        self.detach()
