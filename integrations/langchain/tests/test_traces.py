"""Agents, rerankers and production traces on real LangChain objects.

- ``langchain.agents.create_agent`` (LangGraph underneath) with a retriever tool, driven by a
  chat model of ours that calls the tool twice per question with its own rewrites: the
  handler keys each search to the question by the run's metadata.
- ``ContextualCompressionRetriever`` around a document compressor: the base retriever is the
  retrieval, the compression a "rerank" stage, and PROC@k of the rerank stage is counted
  against the retrieval's candidates.
- The same pipelines traced by the OpenInference instrumentor (OpenTelemetry spans in an
  in-memory exporter) and by LangChain's own run collector (LangSmith's run schema), read
  back by ``rm.read_traces``: the runs equal the handler's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest

pytest.importorskip("langchain.agents")
pytest.importorskip("langchain_classic.retrievers")
pytest.importorskip("openinference.instrumentation.langchain")

from langchain.agents import create_agent
from langchain_classic.retrievers import ContextualCompressionRetriever
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.documents import BaseDocumentCompressor, Document
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langchain_core.tracers.context import collect_runs
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import ragmetrics as rm
from langchain_ragmetrics import RetrievalEvalCallbackHandler
from tests.test_agents import _rewrites


class _Planner(BaseChatModel):
    """A chat model that calls the ``search`` tool twice per question, then answers."""

    @property
    def _llm_type(self) -> str:
        return "planner"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if any(isinstance(m, ToolMessage) for m in messages):
            reply = AIMessage(content="answered")
        else:
            asked = [m for m in messages if isinstance(m, HumanMessage)][-1].text
            calls = [
                {"name": "search", "args": {"query": q}, "id": uuid4().hex, "type": "tool_call"}
                for q in _rewrites(asked)
            ]
            reply = AIMessage(content="", tool_calls=calls)
        return ChatResult(generations=[ChatGeneration(message=reply)])


class _Reverse(BaseDocumentCompressor):
    """A document compressor (as a cross-encoder reranker is one): swaps the first two,
    keeps two."""

    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Any = None
    ) -> Sequence[Document]:
        return list(reversed(documents[:2]))


@pytest.fixture
def traced() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1_000))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield exporter
    finally:
        instrumentor.uninstrument()


def _flat(runs: Sequence[Any]) -> Iterator[Any]:
    for run in runs:
        yield run
        yield from _flat(run.child_runs)


def _langsmith_lines(runs: Sequence[Any], path: Path) -> Path:
    """The runs as a LangSmith export: one run a line, children by parent_run_id."""
    with path.open("w") as out:
        for run in _flat(runs):
            fields = json.loads(run.model_dump_json(exclude={"child_runs"}))
            out.write(json.dumps(fields) + "\n")
    return path


def test_create_agent_searches_are_one_run_per_question(
    traced: InMemorySpanExporter, bm25: Any, dataset: rm.RetrievalDataset, tmp_path: Path
) -> None:
    @tool
    def search(query: str) -> str:
        """Search the knowledge base."""
        return "\n".join(d.page_content for d in bm25.invoke(query))

    agent = create_agent(_Planner(), tools=[search])
    asked = dict(list(dataset.queries.items())[:5])
    handler = RetrievalEvalCallbackHandler(dataset, ["recall@10"], id_key="doc_id")
    with collect_runs() as collected:
        for qid, text in asked.items():
            agent.invoke(
                {"messages": [{"role": "user", "content": text}]},
                config={"callbacks": [handler], "metadata": {"query_id": qid}},
            )
    # the same calls, from OpenInference spans and from LangSmith runs
    finished = traced.get_finished_spans()
    spans = rm.read_traces(finished, id_field="metadata:doc_id")
    assert handler.calls() == dict.fromkeys(asked, 2)
    union = handler.run_of(policy="union")
    for qid, text in asked.items():
        searched = [[d.metadata["doc_id"] for d in bm25.invoke(q)] for q in _rewrites(text)]
        assert set(union[qid]) == {d for docs in searched for d in docs}
    runs = rm.read_traces(
        _langsmith_lines(collected.traced_runs, tmp_path / "runs.jsonl"),
        id_field="metadata:doc_id",
    )
    for traces in (spans, runs):
        assert traces.calls() == dict.fromkeys(asked, 2)
        assert traces.run_of(policy="union").to_dict().keys() == union.to_dict().keys()
        for qid in asked:
            assert set(traces.run_of(policy="union")[qid]) == set(union[qid])
    # without the metadata, the question is read from the root span's messages
    unkeyed = rm.read_traces(
        finished,
        id_field="metadata:doc_id",
        query_ids={t: q for q, t in asked.items()},
        query_key="absent",
    )
    assert set(unkeyed.run_of(policy="union").query_ids) == set(asked)


def test_a_compression_retriever_is_a_rerank_stage(
    traced: InMemorySpanExporter, bm25: Any, dataset: rm.RetrievalDataset, tmp_path: Path
) -> None:
    compressed = ContextualCompressionRetriever(base_compressor=_Reverse(), base_retriever=bm25)
    asked = dict(list(dataset.queries.items())[:8])
    handler = RetrievalEvalCallbackHandler(dataset, ["recall@5"], id_key="doc_id")
    with collect_runs() as collected:
        for qid, text in asked.items():
            compressed.invoke(text, config={"callbacks": [handler], "metadata": {"query_id": qid}})
    spans = rm.read_traces(traced.get_finished_spans(), id_field="metadata:doc_id")
    for qid, text in asked.items():
        found = tuple(d.metadata["doc_id"] for d in bm25.invoke(text))
        assert handler.run[qid] == found  # the retrieval, not the compressed list
        assert handler.run_of("rerank")[qid] == tuple(reversed(found[:2]))
        # the final context: what the chain passes on, the compressed list
        assert handler.run_of("context")[qid] == handler.run_of("rerank")[qid]
    grades = {1: 1, 2: 5}
    metrics = ["proc@2", "pct_proc@2", "recall@2"]
    staged = handler.evaluate(metrics, stage="rerank", grade_map=grades)
    by_hand = rm.evaluate(
        dataset.qrels, handler.run_of("rerank"), metrics, grade_map=grades,
        pool=handler.run, missing="skip",
    )  # fmt: skip
    assert staged.per_query == by_hand.per_query
    runs = rm.read_traces(collected.traced_runs, id_field="metadata:doc_id")
    for traces in (spans, runs):
        assert traces.run.to_dict() == handler.run.to_dict()
        assert traces.run_of("rerank").to_dict() == handler.run_of("rerank").to_dict()
        assert traces.run_of("context").to_dict() == handler.run_of("rerank").to_dict()
        from_traces = traces.evaluate(dataset.qrels, metrics, stage="rerank", grade_map=grades)
        assert from_traces.per_query == staged.per_query


def test_langchains_spans_carry_no_document_id_and_say_what_to_pass(
    traced: InMemorySpanExporter, bm25: Any, dataset: rm.RetrievalDataset
) -> None:
    bm25.invoke(dataset.queries["q1"])
    with pytest.raises(rm.InputFormatError, match=r"metadata:<key>.*metadata keys: doc_id"):
        rm.read_traces(traced.get_finished_spans())


def test_a_failing_retriever_in_a_trace_is_failed(
    traced: InMemorySpanExporter, dataset: rm.RetrievalDataset
) -> None:
    from langchain_core.retrievers import BaseRetriever

    class Down(BaseRetriever):
        def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
            raise ConnectionError("index offline")

    with collect_runs() as collected, pytest.raises(ConnectionError):
        Down().invoke("who?", config={"metadata": {"query_id": "q1"}})
    for source in (traced.get_finished_spans(), collected.traced_runs):
        (record,) = rm.read_traces(source).records
        assert record.failed and "index offline" in (record.error or "")
        result = rm.read_traces(source).evaluate(dataset.qrels, ["recall@5"])
        assert list(result.retrieval_errors) == ["q1"]


def test_without_a_reranker_the_final_context_is_the_retrieval(
    bm25: Any, dataset: rm.RetrievalDataset
) -> None:
    handler = RetrievalEvalCallbackHandler(dataset, ["recall@5"], id_key="doc_id")
    asked = dict(list(dataset.queries.items())[:4])
    for qid, text in asked.items():
        bm25.invoke(text, config={"callbacks": [handler], "metadata": {"query_id": qid}})
    assert handler.run_of("context") == handler.run
    empty = RetrievalEvalCallbackHandler(dataset, ["recall@5"], id_key="doc_id")
    with pytest.raises(rm.InputFormatError, match="no final context"):
        empty.run_of("context")
