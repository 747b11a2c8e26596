"""Retrievals read back from production traces.

Two shapes of trace are read, as the frameworks' own instrumentation writes them:

- **OpenTelemetry spans under the OpenInference conventions** (Arize Phoenix, the
  OpenInference instrumentors of LlamaIndex and LangChain): a span whose
  ``openinference.span.kind`` is ``RETRIEVER`` holds its ranking in
  ``retrieval.documents.<i>.document.{id,score,metadata}``; a ``RERANKER`` span holds
  ``reranker.output_documents.<i>...``. Spans come as OTLP JSON (an export request per line,
  or one document: what a collector's file exporter writes), as the Python SDK's
  ``span.to_json()`` objects (one per line, or a list), or as the SDK's span objects
  themselves (an in-memory exporter's ``get_finished_spans()``).
- **LangSmith runs**: ``run_type == "retriever"`` runs with ``outputs["documents"]``, as
  ``client.list_runs(...)`` returns them or as JSON lines of their fields; nested
  ``child_runs`` are read too.

Each retrieval becomes a :class:`~ragmetrics.adapters.RetrievalRecord` keyed to its
question: a metadata key (``query_id`` by default) on the span or an ancestor, else the
question its trace was started with (the root span's input), else the text it searched
with. What cannot be read exactly (a span whose attributes the SDK's limit cut, documents
without the chosen id, a line of no known shape) is refused with where and why.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ragmetrics._util.warn import warn
from ragmetrics.adapters._records import (
    RERANKING_RETRIEVERS,
    Policy,
    RecordedRetrievals,
    RetrievalLog,
    RetrievalRecord,
)
from ragmetrics.data._qrels import Qrels
from ragmetrics.engine._result import EvaluationResult
from ragmetrics.engine._settings import MissingPolicy
from ragmetrics.errors import InputFormatError, InvalidParameterError, TraceKeyWarning

__all__ = ["TraceRetrievals", "looks_like_traces", "read_traces"]

PathLike = str | os.PathLike[str]

# OpenInference attribute names (openinference-semantic-conventions)
_KIND = "openinference.span.kind"
_INPUT = "input.value"
_METADATA = "metadata"
_RETRIEVED = "retrieval.documents"
_RERANKED = "reranker.output_documents"
_DOC_ATTR = re.compile(
    r"^(retrieval\.documents|reranker\.output_documents)\.(\d+)\.document\.(\w+)$"
)
# keys under which a framework's root span (or LangSmith run) holds the user's question
_QUESTION_KEYS = ("query_str", "question", "query", "input", "user_msg", "query_text")
# an attribute limit the OpenTelemetry SDK applies to every span (128 by default)
_LIMIT_HINT = (
    "The OpenTelemetry SDK keeps at most OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT attributes a span "
    "(128 by default) and drops the oldest, and a retrieved document takes up to four: set "
    "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT above 4 x depth + 16 where the pipeline runs (or pass "
    "SpanLimits(max_span_attributes=...) to its TracerProvider) and trace again."
)


@dataclass
class _Span:
    """One span or run, whatever shape it was read from."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    kind: str  # OpenInference span kind, upper case ("" when none)
    where: str  # where it was read (for messages)
    attributes: Mapping[str, Any] = field(default_factory=dict)
    start: float | None = None  # seconds since the epoch
    end: float | None = None
    error: str | None = None
    dropped: int = 0
    question: str | None = None  # LangSmith: the run's inputs, read as a question
    metadata: Mapping[str, Any] | None = None  # LangSmith: extra.metadata
    documents: list[Mapping[str, Any]] | None = None  # LangSmith: outputs.documents


def looks_like_traces(head: bytes) -> bool:
    """True when a file's first bytes look like OTLP JSON, the SDK's span JSON or LangSmith
    runs (the command line tells a traces file from a JSON run by this)."""
    text = head[:4096].decode("utf-8", "ignore")
    return bool(
        re.search(r'"(resourceSpans|resource_spans)"\s*:', text)
        or (re.search(r'"context"\s*:', text) and re.search(r'"span_id"\s*:', text))
        or (re.search(r'"run_type"\s*:', text) and re.search(r'"trace_id"\s*:', text))
    )


def read_traces(
    source: PathLike | Iterable[Any],
    *,
    query_key: str = "query_id",
    query_ids: Mapping[str, str] | None = None,
    id_field: str = "id",
) -> TraceRetrievals:
    """Read the retrievals of traced pipelines, one record per retriever or reranker span.

    Args:
        source: a file (OTLP JSON, the SDK's span JSON or LangSmith runs, one object per line
            or one document), or spans or runs in memory: OpenTelemetry SDK spans (an
            in-memory exporter's ``get_finished_spans()``), LangSmith ``Run`` objects or
            their dicts.
        query_key: the metadata key that holds the query id, read from the span or its
            nearest ancestor that has it (OpenInference's ``using_metadata``, a LangChain
            run's ``config["metadata"]``).
        query_ids: question text -> query id, for traces without ``query_key``: the
            question is the input of the trace's root span (the user's question, however an
            agent rewrote it), else the retriever's own input.
        id_field: ``"id"`` (each document's id) or ``"metadata:<key>"`` (a key of its
            metadata: LangChain's instrumentor records no document id).

    Returns:
        A :class:`TraceRetrievals`: the records, the run of a stage under a policy, and
        their evaluation.

    Raises:
        InputFormatError: a line or object of no known shape, a span whose attributes were
            cut by the SDK's limit, a document without ``id_field``, a span read twice, or
            no retriever span at all.
    """
    if not isinstance(query_key, str) or not query_key:
        raise InvalidParameterError(f"query_key must be a non-empty string; got {query_key!r}.")
    if query_ids is not None and not isinstance(query_ids, Mapping):
        raise InvalidParameterError(
            f"query_ids maps question text to query id; got {type(query_ids).__name__}."
        )
    _check_id_field(id_field)
    spans = list(_spans_of(source))
    if not spans:
        raise InputFormatError(f"{_name(source)} holds no span or run.")
    reader = _Reader(spans, query_key, dict(query_ids or {}), id_field, _name(source))
    records = reader.records()
    traces = TraceRetrievals(records, reader.summary(records))
    if reader.own_keyed:
        span, root = reader.own_keyed[0]
        searched = _question(span.attributes.get(_INPUT)) or span.question
        warn(
            f"{len(reader.own_keyed)} retrievals were keyed by the text they searched with "
            f"(the first: {span.name!r} searched {searched!r}): "
            f"their traces carry no {query_key!r} metadata and their root span ({root.name!r}) "
            f"shows no question, so an agent's rewrites of one question count as separate "
            f"queries. Tag each question's call with its id (OpenInference's "
            f"using_metadata({{{query_key!r}: ...}}), a LangChain config's metadata).",
            TraceKeyWarning,
        )
    return traces


class TraceRetrievals(RecordedRetrievals):
    """The retrievals read from traces: records, runs per stage and policy, evaluation.

    ``summary`` counts what was read: traces, spans, retrievals, reranks, failed ones, and
    spans of other kinds (LLM calls, embeddings, chains), which hold no ranking.
    """

    _run_name = "traces"

    def __init__(self, records: Sequence[RetrievalRecord], summary: Mapping[str, int]) -> None:
        self._log = RetrievalLog()
        for record in records:
            self._log.add(record)
        self.summary = dict(summary)

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
        """Score the traced run of ``stage`` (default: the top-level retrievals) under
        ``policy``; see :meth:`ragmetrics.adapters.RetrievalLog.evaluate`: a judged query
        never traced is skipped and counted, a failed retrieval is listed and scores as an
        empty ranking, and a rerank stage counts PROC@k against the retrieval's candidates."""
        return self._log.evaluate(
            qrels, metrics, stage=stage, missing=missing, policy=policy, **options
        )

    def __repr__(self) -> str:
        counts = ", ".join(f"{key}={value}" for key, value in self.summary.items())
        return f"TraceRetrievals({counts})"


# --- reading spans of every shape --------------------------------------------------------


def _name(source: object) -> str:
    return os.fspath(source) if isinstance(source, str | os.PathLike) else "the spans given"


def _spans_of(source: PathLike | Iterable[Any]) -> Iterator[_Span]:
    if isinstance(source, str | os.PathLike):
        yield from _spans_of_file(source)
        return
    if isinstance(source, bytes | Mapping) or not isinstance(source, Iterable):
        raise InputFormatError(
            f"read_traces reads a path, or an iterable of spans or runs; got "
            f"{type(source).__name__}."
        )
    for position, item in enumerate(source):
        yield from _spans_of_item(item, f"item {position}")


def _spans_of_file(path: PathLike) -> Iterator[_Span]:
    from ragmetrics.formats._io import close_bytes, open_bytes

    handle = open_bytes(path)
    try:
        data = handle.read()
    finally:
        close_bytes(handle)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputFormatError(
            f"{os.fspath(path)}: not UTF-8 text at byte {error.start}; traces are JSON."
        ) from None
    stripped = text.strip()
    try:  # one JSON document (an OTLP export, a list of spans or runs)
        whole = json.loads(stripped) if stripped[:1] in ("{", "[") else None
    except json.JSONDecodeError:
        whole = None
    if whole is not None:
        if not isinstance(whole, list):
            yield from _spans_of_item(whole, os.fspath(path))
            return
        for position, item in enumerate(whole):
            yield from _spans_of_item(item, f"{os.fspath(path)}, object {position + 1}")
        return
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{os.fspath(path)}, line {number}"
        try:
            item = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputFormatError(f"{where}: not JSON ({error.msg}).") from None
        yield from _spans_of_item(item, where)


def _spans_of_item(item: Any, where: str) -> Iterator[_Span]:
    if not isinstance(item, Mapping):
        item = _as_mapping(item, where)
        if isinstance(item, _Span):
            yield item
            return
    if "resourceSpans" in item or "resource_spans" in item:
        yield from _otlp_spans(item, where)
    elif "context" in item and "attributes" in item:
        yield _sdk_json_span(item, where)
    elif "run_type" in item and "id" in item:
        yield from _langsmith_runs(item, where)
    else:
        keys = ", ".join(sorted(map(str, item))[:8]) or "none"
        raise InputFormatError(
            f"{where}: neither an OpenTelemetry span or export (OTLP JSON's resourceSpans, "
            f"the SDK's context/attributes) nor a LangSmith run (run_type, id); its keys: "
            f"{keys}."
        )


def _as_mapping(item: Any, where: str) -> Any:
    """An SDK span object becomes a :class:`_Span`; a LangSmith run object its dict."""
    context = getattr(item, "context", None)
    if context is not None and hasattr(item, "attributes") and hasattr(context, "span_id"):
        return _sdk_span(item, where)
    for method in ("model_dump", "dict"):
        dump = getattr(item, method, None)
        if callable(dump) and hasattr(item, "run_type"):
            fields = dict(dump())  # a RunTree leaves its child runs out of its dump
            fields["child_runs"] = list(getattr(item, "child_runs", None) or ())
            return fields
    raise InputFormatError(
        f"{where}: a {type(item).__name__} is neither an OpenTelemetry span nor a LangSmith "
        f"run (nor the JSON of one)."
    )


def _required(value: Any, what: str, where: str) -> str:
    if value in (None, "") or not isinstance(value, str | int):
        raise InputFormatError(f"{where}: the span has no {what}.")
    return value if isinstance(value, str) else f"{value:x}"


def _sdk_span(span: Any, where: str) -> _Span:
    """An OpenTelemetry SDK ``ReadableSpan``."""
    context = span.context
    parent = getattr(span, "parent", None)
    status = getattr(span, "status", None)
    code = getattr(getattr(status, "status_code", None), "name", "")
    error = None
    if code == "ERROR":
        error = _exception(
            [(e.name, dict(e.attributes or {})) for e in getattr(span, "events", ())]
        ) or (getattr(status, "description", None) or "the span's status is ERROR")
    attributes = dict(span.attributes or {})
    start, end = getattr(span, "start_time", None), getattr(span, "end_time", None)
    return _Span(
        f"{context.trace_id:032x}",
        f"{context.span_id:016x}",
        None if parent is None else f"{parent.span_id:016x}",
        str(span.name),
        str(attributes.get(_KIND, "")).upper(),
        where,
        attributes,
        None if start is None else start / 1e9,
        None if end is None else end / 1e9,
        error,
        int(getattr(span, "dropped_attributes", 0) or 0),
    )


def _sdk_json_span(item: Mapping[str, Any], where: str) -> _Span:
    """One object of the SDK's ``span.to_json()`` (the console exporter's shape)."""
    context = item.get("context")
    if not isinstance(context, Mapping):
        raise InputFormatError(f"{where}: the span's context is not an object.")
    attributes = item.get("attributes") or {}
    if not isinstance(attributes, Mapping):
        raise InputFormatError(f"{where}: the span's attributes are not an object.")
    status = item.get("status") or {}
    error = None
    if isinstance(status, Mapping) and str(status.get("status_code", "")).upper() == "ERROR":
        events = [
            (e.get("name"), e.get("attributes") or {})
            for e in item.get("events") or ()
            if isinstance(e, Mapping)
        ]
        error = _exception(events) or status.get("description") or "the span's status is ERROR"
    return _Span(
        _hex(_required(context.get("trace_id"), "trace_id", where)),
        _hex(_required(context.get("span_id"), "span_id", where)),
        _hex(item["parent_id"]) if item.get("parent_id") else None,
        str(item.get("name", "")),
        str(attributes.get(_KIND, "")).upper(),
        where,
        dict(attributes),
        _seconds(item.get("start_time"), where),
        _seconds(item.get("end_time"), where),
        error,
    )


def _otlp_spans(item: Mapping[str, Any], where: str) -> Iterator[_Span]:
    """The spans of one OTLP JSON export request (resourceSpans > scopeSpans > spans)."""
    for resource in _list(item.get("resourceSpans", item.get("resource_spans")), where):
        scopes = resource.get("scopeSpans", resource.get("instrumentationLibrarySpans"))
        for scope in _list(scopes, where):
            for span in _list(scope.get("spans"), where):
                yield _otlp_span(span, where)


def _list(value: Any, where: str) -> list[Mapping[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, Mapping) for v in value):
        raise InputFormatError(f"{where}: an OTLP list of objects was expected.")
    return value


def _otlp_span(span: Mapping[str, Any], where: str) -> _Span:
    attributes = _otlp_attributes(span.get("attributes"), where)
    status = span.get("status") or {}
    error = None
    if status.get("code") in (2, "STATUS_CODE_ERROR"):
        events = [
            (e.get("name"), _otlp_attributes(e.get("attributes"), where))
            for e in span.get("events") or ()
            if isinstance(e, Mapping)
        ]
        error = _exception(events) or status.get("message") or "the span's status is ERROR"
    start, end = span.get("startTimeUnixNano"), span.get("endTimeUnixNano")
    return _Span(
        _otlp_id(_required(span.get("traceId"), "traceId", where)),
        _otlp_id(_required(span.get("spanId"), "spanId", where)),
        _otlp_id(str(span["parentSpanId"])) if span.get("parentSpanId") else None,
        str(span.get("name", "")),
        str(attributes.get(_KIND, "")).upper(),
        where,
        attributes,
        None if start in (None, "") else int(start) / 1e9,
        None if end in (None, "") else int(end) / 1e9,
        error,
        int(span.get("droppedAttributesCount") or 0),
    )


def _otlp_id(value: str) -> str:
    """A trace or span id as lower-case hex: OTLP JSON writes hex, protobuf's own JSON
    mapping (``MessageToJson`` of an export request) base64, always padded (``=``)."""
    if value.endswith("="):
        import base64
        import binascii

        try:
            return base64.b64decode(value, validate=True).hex()
        except (binascii.Error, ValueError):
            return value
    return value.lower()


def _otlp_attributes(values: Any, where: str) -> dict[str, Any]:
    """OTLP's ``[{"key": k, "value": {"stringValue": v}}]`` as ``{k: v}``."""
    if values is None:
        return {}
    if not isinstance(values, list):
        raise InputFormatError(f"{where}: OTLP attributes are a list of key/value objects.")
    out: dict[str, Any] = {}
    for entry in values:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("key"), str):
            raise InputFormatError(f"{where}: an OTLP attribute without a key: {entry!r:.80}.")
        out[entry["key"]] = _otlp_value(entry.get("value") or {}, where)
    return out


def _otlp_value(value: Mapping[str, Any], where: str) -> Any:
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        return [_otlp_value(v, where) for v in value["arrayValue"].get("values") or ()]
    if "kvlistValue" in value:
        return _otlp_attributes(value["kvlistValue"].get("values"), where)
    return None


def _langsmith_runs(item: Mapping[str, Any], where: str) -> Iterator[_Span]:
    """A LangSmith run (and the runs nested in its ``child_runs``)."""
    run_id = _required(str(item.get("id") or ""), "id", where)
    trace_id = str(item.get("trace_id") or run_id)
    extra = item.get("extra") or {}
    metadata = extra.get("metadata") if isinstance(extra, Mapping) else None
    outputs = item.get("outputs") or {}
    documents = None
    if str(item.get("run_type")).lower() == "retriever":
        documents = outputs.get("documents") if isinstance(outputs, Mapping) else None
        if documents is None and not item.get("error"):
            raise InputFormatError(
                f"{where}: the retriever run {item.get('name')!r} has no outputs.documents."
            )
    error = item.get("error")
    yield _Span(
        trace_id,
        run_id,
        str(item["parent_run_id"]) if item.get("parent_run_id") else None,
        str(item.get("name", "")),
        "RETRIEVER" if str(item.get("run_type")).lower() == "retriever" else "",
        where,
        start=_seconds(item.get("start_time"), where),
        end=_seconds(item.get("end_time"), where),
        error=None if not error else str(error).strip().splitlines()[-1],
        question=_question(item.get("inputs")),
        metadata=metadata if isinstance(metadata, Mapping) else None,
        documents=[_document_dict(d, where) for d in documents or ()],
    )
    for child in item.get("child_runs") or ():
        child = child if isinstance(child, Mapping) else _as_mapping(child, where)
        yield from _langsmith_runs(child, where)


def _document_dict(document: Any, where: str) -> Mapping[str, Any]:
    if isinstance(document, Mapping):
        return document
    if hasattr(document, "page_content"):  # a LangChain Document object
        return {"id": getattr(document, "id", None), "metadata": document.metadata}
    raise InputFormatError(f"{where}: a retrieved document is neither an object nor a Document.")


def _exception(events: Iterable[tuple[Any, Mapping[str, Any]]]) -> str | None:
    for name, attributes in events:
        if name == "exception":
            kind = attributes.get("exception.type", "Exception")
            return f"{str(kind).rsplit('.', 1)[-1]}: {attributes.get('exception.message', '')}"
    return None


def _hex(value: str) -> str:
    return value[2:].lower() if value.lower().startswith("0x") else value.lower()


def _seconds(value: Any, where: str) -> float | None:
    """An ISO time (a ``Z`` suffix allowed), epoch seconds or a datetime, as epoch seconds."""
    if value in (None, ""):
        return None
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise InputFormatError(f"{where}: {value!r} is not a time.") from None


def _question(value: Any) -> str | None:
    """The question in a span's or run's input: the text itself (or its JSON string), a
    string under a top-level question-like key, LlamaIndex's ``query_bundle.query_str``, or
    the last user turn of a chat's ``messages``; nothing deeper (a guess there could key a
    retrieval to the wrong question)."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("{", "[", '"'):
            try:
                parsed = json.loads(text)
            except json.JSONDecodeError:
                return value
            return parsed if isinstance(parsed, str) else _question_of(parsed)
        return value
    return _question_of(value)


def _question_of(value: Any) -> str | None:
    if not isinstance(value, Mapping):
        return None
    for key in _QUESTION_KEYS:
        if isinstance(value.get(key), str):
            return str(value[key])
    bundle = value.get("query_bundle")
    if isinstance(bundle, Mapping) and isinstance(bundle.get("query_str"), str):
        return str(bundle["query_str"])
    messages = value.get("messages")
    if isinstance(messages, list):
        asked = [
            m.get("content")
            for m in messages
            if isinstance(m, Mapping) and m.get("role", m.get("type")) in ("user", "human")
        ]
        asked = [text for text in asked if isinstance(text, str)]
        if asked:
            return asked[-1]
    return None


# --- retrievals of the spans -------------------------------------------------------------


def _check_id_field(id_field: object) -> None:
    if id_field == "id" or (
        isinstance(id_field, str) and id_field.startswith("metadata:") and id_field[9:]
    ):
        return
    raise InvalidParameterError(f"id_field must be 'id' or 'metadata:<key>'; got {id_field!r}.")


class _Reader:
    """The spans of every trace, linked, and read as retrieval records."""

    def __init__(
        self,
        spans: list[_Span],
        query_key: str,
        query_ids: dict[str, str],
        id_field: str,
        source: str,
    ) -> None:
        self.query_key, self.query_ids, self.id_field = query_key, query_ids, id_field
        self.source = source
        self.spans: dict[tuple[str, str], _Span] = {}
        for span in spans:
            key = (span.trace_id, span.span_id)
            if key in self.spans:
                raise InputFormatError(
                    f"{span.where}: span {span.span_id} of trace {span.trace_id} was read "
                    f"before ({self.spans[key].where}): the input holds one export twice? "
                    f"Each retrieval would count twice."
                )
            self.spans[key] = span
        self.own_keyed: list[tuple[_Span, _Span]] = []  # (retrieval, its trace's root)
        self.kinds: dict[str, int] = {}
        for span in spans:
            self.kinds[span.kind or "other"] = self.kinds.get(span.kind or "other", 0) + 1

    def _parent(self, span: _Span) -> _Span | None:
        if span.parent_id is None:
            return None
        return self.spans.get((span.trace_id, span.parent_id))

    def _ancestors(self, span: _Span) -> Iterator[_Span]:
        seen = 0
        parent = self._parent(span)
        while parent is not None and seen < 10_000:  # a cycle in a corrupt file ends here
            yield parent
            parent = self._parent(parent)
            seen += 1

    def _retrievals(self) -> list[_Span]:
        chosen = []
        for span in self.spans.values():
            if span.kind not in ("RETRIEVER", "RERANKER"):
                continue
            if span.kind == "RETRIEVER" and self._inner(span):
                continue
            chosen.append(span)
        if not chosen:
            kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.kinds.items()))
            raise InputFormatError(
                f"{self.source}: no retriever span among {len(self.spans)} spans (span kinds: "
                f"{kinds}). ragmetrics reads OpenInference spans (openinference.span.kind "
                f"RETRIEVER or RERANKER, as the OpenInference instrumentors of LlamaIndex and "
                f"LangChain write them) and LangSmith runs of run_type 'retriever'."
            )
        return chosen

    def _inner(self, span: _Span) -> bool:
        """True for a retriever span that holds no documents inside a span of the same
        retriever that does (LlamaIndex's ``_retrieve`` inside its ``retrieve``)."""
        if _has_documents(span):
            return False
        parent = self._parent(span)
        return (
            parent is not None
            and parent.kind == "RETRIEVER"
            and _class_name(parent.name) == _class_name(span.name)
        )

    def records(self) -> list[RetrievalRecord]:
        chosen = self._retrievals()
        kept = {(s.trace_id, s.span_id) for s in chosen}
        records = [self._record(span, kept) for span in chosen]
        order = sorted(
            range(len(records)),
            key=lambda i: (chosen[i].end if chosen[i].end is not None else math.inf, i),
        )
        return [records[i] for i in order]

    def _record(self, span: _Span, kept: set[tuple[str, str]]) -> RetrievalRecord:
        if span.dropped:
            raise InputFormatError(
                f"{span.where}: the {span.kind.lower()} span {span.name!r} (trace "
                f"{span.trace_id}) lost {span.dropped} attributes to the SDK's limit, so its "
                f"ranking (and its query id) may be cut. {_LIMIT_HINT}"
            )
        ancestors = list(self._ancestors(span))
        query_id, query, in_question = self._query(span, ancestors)
        name = self._stage_name(span, ancestors)
        kind = "rerank" if span.kind == "RERANKER" else "retrieve"
        outer = next(
            (a for a in ancestors if (a.trace_id, a.span_id) in kept),
            None,
        )
        if kind == "retrieve" and _class_name(span.name) in RERANKING_RETRIEVERS:
            kind = "rerank"  # a LangChain compression retriever: its inner retriever found
        doc_ids: tuple[str, ...] = ()
        scores: tuple[float | None, ...] = ()
        if span.error is None:
            doc_ids, scores = self._documents(span)
        seconds = None
        if span.start is not None and span.end is not None:
            seconds = max(0.0, span.end - span.start)
        return RetrievalRecord(
            query,
            query_id,
            doc_ids,
            (),
            scores,
            name,
            (span.name,) if span.name and span.name != name else (),
            span.span_id,
            None if outer is None else outer.span_id,
            span.error,
            seconds,
            in_question,
            kind,
            span.start,
        )

    def _query(self, span: _Span, ancestors: list[_Span]) -> tuple[str, str, bool]:
        """The query id of a retrieval, the text it searched with, and whether the id came
        from its trace rather than from that text."""
        own = span.question
        if own is None:
            own = _question(span.attributes.get(_INPUT))
        if own is None and span.kind == "RERANKER":
            own = span.attributes.get("reranker.query")
        for node in (span, *ancestors):
            metadata = _metadata(node)
            value = metadata.get(self.query_key) if metadata else None
            if value not in (None, ""):
                return str(value), own or str(value), True
        root = ancestors[-1] if ancestors else None
        asked = None if root is None else self._root_question(root)
        if asked is not None:
            return self.query_ids.get(asked, asked), own or asked, own != asked
        if own is None:
            raise InputFormatError(
                f"{span.where}: the {span.kind.lower()} span {span.name!r} carries no input "
                f"and its trace no question: tag the pipeline's calls with the metadata key "
                f"{self.query_key!r} (OpenInference's using_metadata, a LangChain run's "
                f"config metadata)."
            )
        if root is not None:
            self.own_keyed.append((span, root))
        return self.query_ids.get(own, own), own, False

    def _root_question(self, root: _Span) -> str | None:
        if root.question is not None:
            return root.question
        return _question(root.attributes.get(_INPUT))

    def _stage_name(self, span: _Span, ancestors: list[_Span]) -> str:
        """The retriever's class (``Class.method`` spans), ``Class@node`` in a LangGraph node."""
        name = _class_name(span.name) or span.kind.lower()
        for node in (span, *ancestors):
            metadata = _metadata(node)
            graph_node = metadata.get("langgraph_node") if metadata else None
            if isinstance(graph_node, str) and graph_node:
                return f"{name}@{graph_node}"
        return name

    def _documents(self, span: _Span) -> tuple[tuple[str, ...], tuple[float | None, ...]]:
        if span.documents is not None:  # LangSmith
            return self._langsmith_documents(span)
        prefix = _RERANKED if span.kind == "RERANKER" else _RETRIEVED
        fields: dict[int, dict[str, Any]] = {}
        for key, value in span.attributes.items():
            match = _DOC_ATTR.match(key)
            if match and match.group(1) == prefix:
                fields.setdefault(int(match.group(2)), {})[match.group(3)] = value
        if sorted(fields) != list(range(len(fields))):
            missing = sorted(set(range(max(fields) + 1)) - set(fields))
            raise InputFormatError(
                f"{span.where}: the {span.kind.lower()} span {span.name!r} lacks documents "
                f"{missing[:5]} of 0..{max(fields)}: its attributes were cut. {_LIMIT_HINT}"
            )
        doc_ids = tuple(self._doc_id(fields[i], i, span) for i in range(len(fields)))
        scores = tuple(_score(fields[i].get("score")) for i in range(len(fields)))
        return doc_ids, scores

    def _doc_id(self, fields: Mapping[str, Any], position: int, span: _Span) -> str:
        if self.id_field == "id":
            value = fields.get("id")
            seen = "document.id"
        else:
            metadata = _json_object(fields.get("metadata"))
            value = metadata.get(self.id_field[9:])
            seen = f"metadata key {self.id_field[9:]!r}"
        if value in (None, ""):
            keys = sorted(_json_object(fields.get("metadata")))
            raise InputFormatError(
                f"{span.where}: document {position} of the {span.kind.lower()} span "
                f"{span.name!r} has no {seen} (LangChain's instrumentor records none). Pass "
                f"id_field='metadata:<key>' naming the metadata key that holds your doc ids; "
                f"its metadata keys: {', '.join(keys) or 'none'}."
            )
        return str(value)

    def _langsmith_documents(self, span: _Span) -> tuple[tuple[str, ...], tuple[float | None, ...]]:
        ids = []
        for position, document in enumerate(span.documents or ()):
            metadata = document.get("metadata")
            fields = {"id": document.get("id"), "metadata": metadata}
            ids.append(self._doc_id(fields, position, span))
        return tuple(ids), tuple(None for _ in ids)

    def summary(self, records: Sequence[RetrievalRecord]) -> dict[str, int]:
        return {
            "traces": len({s.trace_id for s in self.spans.values()}),
            "spans": len(self.spans),
            "retrievals": sum(1 for r in records if r.kind == "retrieve"),
            "reranks": sum(1 for r in records if r.kind == "rerank"),
            "failed": sum(1 for r in records if r.failed),
            "other spans": len(self.spans) - len(records),
        }


def _has_documents(span: _Span) -> bool:
    if span.documents:
        return True
    return any(key.startswith((_RETRIEVED, _RERANKED)) for key in span.attributes)


def _class_name(name: str) -> str:
    """``VectorIndexRetriever`` of LlamaIndex's ``VectorIndexRetriever.retrieve``; other
    names as they are."""
    match = re.match(r"^([A-Za-z_]\w*)\.(_?a?[a-z_]\w*)$", name)
    return match.group(1) if match else name


def _metadata(span: _Span) -> Mapping[str, Any]:
    """A span's metadata (a LangSmith run's, or the OpenInference attribute's JSON), read
    once: every retrieval below the span looks it up again."""
    if span.metadata is None:
        span.metadata = _json_object(span.attributes.get(_METADATA))
    return span.metadata


def _json_object(value: Any) -> Mapping[str, Any]:
    if isinstance(value, Mapping):
        return value
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            return {}
        return parsed if isinstance(parsed, Mapping) else {}
    return {}


def _score(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None
