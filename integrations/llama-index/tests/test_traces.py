"""Runs read from production traces of real LlamaIndex pipelines: the OpenInference
instrumentor (openinference-instrumentation-llama-index) writes OpenTelemetry spans to an
in-memory exporter; ``rm.read_traces`` reads them back, as span objects, as OTLP JSON (the
SDK's own encoder, then protobuf's JSON) and as the SDK's span JSON, and must give what the
ragmetrics recorder, watching the same calls, gives."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openinference.instrumentation.llama_index")
pytest.importorskip("opentelemetry.exporter.otlp.proto.common")

from google.protobuf.json_format import MessageToJson
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.events.rerank import ReRankEndEvent, ReRankStartEvent
from llama_index.core.llms import MockLLM
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import NodeWithScore
from openinference.instrumentation import using_metadata
from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import ragmetrics as rm
from llama_index.evaluation.ragmetrics import RetrievalRecorder, question
from tests.test_agents import _planner, _rewrites

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

dispatcher = get_dispatcher(__name__)


class _Rerank(BaseNodePostprocessor):
    """A reranker as LlamaIndex's model rerankers are written (the rerank events around the
    call, which the instrumentor turns into a RERANKER span): reverses, keeps ``top_n``."""

    top_n: int = 2
    fail: bool = False

    def _postprocess_nodes(self, nodes: list[NodeWithScore], query_bundle: Any = None) -> Any:
        dispatcher.event(
            ReRankStartEvent(query=query_bundle, nodes=nodes, top_n=self.top_n, model_name="rev")
        )
        if self.fail:
            raise TimeoutError("the reranking service did not answer")
        kept = list(reversed(nodes))[: self.top_n]
        dispatcher.event(ReRankEndEvent(nodes=kept))
        return kept


@pytest.fixture
def traced() -> Iterator[InMemorySpanExporter]:
    """The instrumentor on for one test; the attribute limit high enough for 40 documents."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1_000))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = LlamaIndexInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield exporter
    finally:
        instrumentor.uninstrument()


def _otlp_json(spans: Any, path: Path) -> Path:
    """The spans as an OTLP export request in JSON, one per line (as exported in batches)."""
    with path.open("w") as out:
        for start in range(0, len(spans), 50):
            request = encode_spans(spans[start : start + 50])
            out.write(json.dumps(json.loads(MessageToJson(request))) + "\n")
    return path


def test_a_traced_query_engine_gives_the_recorders_runs_and_numbers(
    traced: InMemorySpanExporter, vector_index: Any, dataset: rm.RetrievalDataset, tmp_path: Path
) -> None:
    retriever = vector_index.as_retriever(similarity_top_k=5)
    engine = RetrieverQueryEngine.from_args(
        retriever, llm=MockLLM(), node_postprocessors=[_Rerank(top_n=3)]
    )
    asked = dict(list(dataset.queries.items())[:8])
    with RetrievalRecorder(query_ids={t: q for q, t in asked.items()}) as recorder:
        for qid, text in asked.items():
            with using_metadata({"query_id": qid}):
                engine.query(text)
    spans = traced.get_finished_spans()
    traces = rm.read_traces(spans)
    assert traces.summary["traces"] == 8 and traces.summary["reranks"] == 8
    assert traces.summary["retrievals"] == 8  # LlamaIndex's inner _retrieve spans are not
    assert traces.run.to_dict() == recorder.run.to_dict()
    assert traces.run_of("rerank").to_dict() == recorder.run_of("rerank").to_dict()
    assert traces.stage_names()[0] == "VectorIndexRetriever"
    metrics = ["proc@2", "pct_proc@2", "ndcg@3", "recall@5"]
    grades = {1: 1, 2: 5}
    for stage in (None, "rerank"):
        from_traces = traces.evaluate(dataset.qrels, metrics, stage=stage, grade_map=grades)
        recorded = recorder.evaluate(dataset.qrels, metrics, stage=stage, grade_map=grades)
        assert from_traces.per_query == recorded.per_query
        assert set(from_traces.latencies) == set(asked)
    # the same spans written as files: OTLP JSON (base64 ids) and the SDK's span JSON
    assert rm.read_traces(_otlp_json(spans, tmp_path / "otlp.jsonl")).run == traces.run
    sdk = tmp_path / "sdk.jsonl"
    sdk.write_text("".join(json.dumps(json.loads(s.to_json())) + "\n" for s in spans))
    assert rm.read_traces(sdk).run == traces.run


def test_without_metadata_the_root_question_keys_the_retrieval(
    traced: InMemorySpanExporter, vector_index: Any, dataset: rm.RetrievalDataset
) -> None:
    engine = RetrieverQueryEngine.from_args(vector_index.as_retriever(), llm=MockLLM())
    asked = dict(list(dataset.queries.items())[:4])
    for text in asked.values():
        engine.query(text)
    traces = rm.read_traces(traced.get_finished_spans(), query_ids={t: q for q, t in asked.items()})
    assert set(traces.run.query_ids) == set(asked)


def test_a_failing_reranker_is_a_failed_stage(
    traced: InMemorySpanExporter, vector_index: Any, dataset: rm.RetrievalDataset
) -> None:
    retriever = vector_index.as_retriever(similarity_top_k=4)
    engine = RetrieverQueryEngine.from_args(
        retriever, llm=MockLLM(), node_postprocessors=[_Rerank(fail=True)]
    )
    qid, text = next(iter(dataset.queries.items()))
    with using_metadata({"query_id": qid}), pytest.raises(TimeoutError):
        engine.query(text)
    traces = rm.read_traces(traced.get_finished_spans())
    (rerank,) = traces.records_of("rerank")
    assert rerank.error == "TimeoutError: the reranking service did not answer"
    assert traces.run[qid] == tuple(n.node.node_id for n in retriever.retrieve(text))
    result = traces.evaluate(dataset.qrels, ["recall@2"], stage="rerank")
    assert result.retrieval_errors == {qid: rerank.error}


def test_an_agent_is_evaluated_per_user_question_from_its_traces(
    traced: InMemorySpanExporter, vector_index: Any, dataset: rm.RetrievalDataset
) -> None:
    """A FunctionAgent searches twice per question with its own rewrites: keyed by the
    metadata of the call, the traces give what the recorder's question() blocks give."""
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.llms import MockFunctionCallingLLM
    from llama_index.core.tools import FunctionTool

    retriever = vector_index.as_retriever(similarity_top_k=3)

    def search(query: str) -> str:
        """Search the knowledge base."""
        return "\n".join(n.get_content() for n in retriever.retrieve(query))

    agent = FunctionAgent(
        name="searcher",
        description="answers from the knowledge base",
        tools=[FunctionTool.from_defaults(fn=search)],
        llm=MockFunctionCallingLLM(response_generator=_planner),
    )
    asked = dict(list(dataset.queries.items())[:5])

    async def ask(tagged: bool) -> None:
        for qid, text in asked.items():
            if tagged:
                with using_metadata({"query_id": qid}), question(qid):
                    await agent.run(text)
            else:
                await agent.run(text)

    asyncio.run(ask(tagged=False))
    # the agent's root span shows no question: its rewrites would split, and it says so
    with pytest.warns(rm.errors.TraceKeyWarning, match="FunctionAgent.run"):
        untagged = rm.read_traces(traced.get_finished_spans())
    assert set(untagged.run_of(policy="union").query_ids) == {
        r for t in asked.values() for r in _rewrites(t)
    }
    traced.clear()
    with RetrievalRecorder() as recorder:
        asyncio.run(ask(tagged=True))
    traces = rm.read_traces(traced.get_finished_spans())
    assert traces.calls() == recorder.calls() == dict.fromkeys(asked, 2)
    union = traces.run_of(policy="union")
    assert set(union.query_ids) == set(asked)
    for qid in asked:  # the same docs; the order is the order the two searches ended
        assert set(union[qid]) == set(recorder.run_of(policy="union")[qid])


def test_a_span_cut_by_the_sdks_attribute_limit_is_refused(
    vector_index: Any, dataset: rm.RetrievalDataset
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()  # the default limit: 128 attributes a span
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = LlamaIndexInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        vector_index.as_retriever(similarity_top_k=40).retrieve(dataset.queries["q1"])
    finally:
        instrumentor.uninstrument()
    with pytest.raises(rm.InputFormatError, match="OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT"):
        rm.read_traces(exporter.get_finished_spans())
