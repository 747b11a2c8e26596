"""Agents and stages, on real llama-index-core objects: agents with a retriever tool
(FunctionAgent, AgentWorkflow, ReActAgent, driven by a MockFunctionCallingLLM that calls the
tool twice per question with its own rewrites) evaluated per user question; a query engine's
node post-processor recorded as a rerank stage."""

from __future__ import annotations

import asyncio
import json
from typing import Any
from uuid import uuid4

import pytest
from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent, ReActAgent
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.llms import ChatMessage, MessageRole, MockFunctionCallingLLM, MockLLM
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import NodeWithScore
from llama_index.core.tools import FunctionTool

import ragmetrics as rm
from llama_index.evaluation.ragmetrics import RetrievalRecorder, question

# llama-index's workflows read pydantic's deprecated attributes: not this test's concern
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _rewrites(text: str) -> list[str]:
    """What the agent searches with: two rewrites of the question, never the question."""
    words = text.rstrip("?").split()
    return [" ".join(words[: max(2, len(words) // 2)]), " ".join(words[len(words) // 2 :])]


def _planner(messages: list[ChatMessage], **kwargs: Any) -> ChatMessage:
    """An LLM that calls the search tool twice per question, then answers."""
    if any(m.role == MessageRole.TOOL for m in messages):
        return ChatMessage(role=MessageRole.ASSISTANT, content="answered")
    asked = [m for m in messages if m.role == MessageRole.USER][-1].content or ""
    calls = [
        ToolCallBlock(tool_call_id=uuid4().hex, tool_name="search", tool_kwargs={"query": q})
        for q in _rewrites(asked)
    ]
    return ChatMessage(role=MessageRole.ASSISTANT, blocks=calls)


def _react_planner(messages: list[ChatMessage], **kwargs: Any) -> ChatMessage:
    """The same plan in ReAct's text protocol: one action a step, two searches, an answer."""
    observed = [
        m
        for m in messages
        if m.role == MessageRole.USER and (m.content or "").startswith("Observation")
    ]
    asked = [
        m.content or ""
        for m in messages
        if m.role == MessageRole.USER and not (m.content or "").startswith("Observation")
    ][-1]
    if len(observed) < 2:
        searched = json.dumps({"query": _rewrites(asked)[len(observed)]})
        step = f"Thought: I need to search.\nAction: search\nAction Input: {searched}"
    else:
        step = "Thought: I can answer without using any more tools.\nAnswer: answered"
    return ChatMessage(role=MessageRole.ASSISTANT, content=step)


@pytest.fixture
def agents(vector_index):  # type: ignore[no-untyped-def]
    retriever = vector_index.as_retriever(similarity_top_k=3)

    def search(query: str) -> str:
        """Search the knowledge base."""
        return "\n".join(n.get_content() for n in retriever.retrieve(query))

    tool = FunctionTool.from_defaults(fn=search)
    agent = FunctionAgent(
        name="searcher",
        description="answers from the knowledge base",
        tools=[tool],
        llm=MockFunctionCallingLLM(response_generator=_planner),
    )
    react = ReActAgent(tools=[tool], llm=MockFunctionCallingLLM(response_generator=_react_planner))
    built = {"FunctionAgent": agent, "AgentWorkflow": AgentWorkflow(agents=[agent])}
    return retriever, {**built, "ReActAgent": react}


@pytest.mark.parametrize("kind", ["FunctionAgent", "AgentWorkflow", "ReActAgent"])
def test_an_agents_searches_are_one_run_per_user_question(agents, dataset, kind) -> None:  # type: ignore[no-untyped-def]
    retriever, built = agents
    agent = built[kind]
    asked = dict(list(dataset.queries.items())[:8])

    async def ask_all(recorder: RetrievalRecorder, keyed: bool) -> None:
        for qid, text in asked.items():
            if keyed:
                with question(qid):
                    await agent.run(text)
            else:
                await agent.run(text)

    plain = RetrievalRecorder()
    with plain:
        asyncio.run(ask_all(plain, keyed=False))
    # keyed by the agent's own texts: not one user question is found
    assert not set(plain.run_of(policy="union").query_ids) & set(asked)

    recorder = RetrievalRecorder()
    with recorder:
        asyncio.run(ask_all(recorder, keyed=True))
    assert recorder.calls() == dict.fromkeys(asked, 2)  # two tool calls per question, kept
    union = recorder.run_of(policy="union")
    with pytest.warns(rm.errors.StageWarning, match=r"more than once .* policy=\"union\""):
        latest = recorder.run_of()  # each question's last search, with a warning
    assert set(union.query_ids) == set(asked) == set(latest.query_ids)
    for qid, text in asked.items():
        searched = {q: [n.node.node_id for n in retriever.retrieve(q)] for q in _rewrites(text)}
        # the agent may run its two calls at once: the union is in the order the retrievals
        # started, each doc once; "latest" is the one that ended last
        records = [r for r in recorder.records if r.query_id == qid]
        assert sorted(r.query for r in records) == sorted(searched)
        by_start = sorted(records, key=lambda r: r.started or 0.0)
        in_order = [d for r in by_start for d in searched[r.query]]
        assert union[qid] == tuple(dict.fromkeys(in_order))
        assert latest[qid] == tuple(searched[records[-1].query])
    result = recorder.evaluate(dataset.qrels, ["recall@6"], policy="union")
    assert result.counts.queries == len(asked) and result.settings["policy"] == "union"
    direct = rm.evaluate(dataset.qrels, union, ["recall@6"], missing="skip")
    assert result.aggregate == direct.aggregate


def test_an_unknown_policy_is_refused_with_the_policies(agents) -> None:  # type: ignore[no-untyped-def]
    recorder = RetrievalRecorder()
    with pytest.raises(rm.InvalidParameterError, match=r"'latest', 'union'"):
        recorder.run_of(policy="merge")  # type: ignore[arg-type]
    with pytest.raises(rm.InvalidParameterError, match="non-empty string"), question(""):
        pass


class _Reverse(BaseNodePostprocessor):
    """A reranker that reverses the candidates and keeps two."""

    def _postprocess_nodes(self, nodes: list[NodeWithScore], query_bundle: Any = None) -> Any:
        return list(reversed(nodes))[:2]


class _KeepOne(BaseNodePostprocessor):
    """A cut-off after the reranker: keeps the first."""

    def _postprocess_nodes(self, nodes: list[NodeWithScore], query_bundle: Any = None) -> Any:
        return list(nodes)[:1]


class _Broken(BaseNodePostprocessor):
    def _postprocess_nodes(self, nodes: list[NodeWithScore], query_bundle: Any = None) -> Any:
        raise TimeoutError("the reranking service did not answer")


def test_a_query_engines_rerank_is_a_stage_of_its_own(vector_index, dataset) -> None:  # type: ignore[no-untyped-def]
    """Retrieve, then rerank, recorded as two stages of one query: the default run is the
    retrieval, "rerank" the reranked list, and PROC@k of the rerank stage is counted against
    the retrieval's candidates without user code; a failing reranker is recorded as failed."""
    retriever = vector_index.as_retriever(similarity_top_k=4)
    engine = RetrieverQueryEngine.from_args(
        retriever, llm=MockLLM(), node_postprocessors=[_Reverse()]
    )
    asked = dict(list(dataset.queries.items())[:10])
    with RetrievalRecorder(query_ids={t: q for q, t in asked.items()}) as recorder:
        for text in asked.values():
            engine.query(text)
    assert recorder.failures == 0
    for qid, text in asked.items():
        found = tuple(n.node.node_id for n in retriever.retrieve(text))
        assert recorder.run[qid] == found  # the retrieval
        assert recorder.run_of("rerank")[qid] == tuple(reversed(found))[:2]
        assert recorder.run_of("_Reverse") == recorder.run_of("rerank")
        # the final context: what the response synthesizer was given
        assert recorder.run_of("context")[qid] == tuple(reversed(found))[:2]
    grades = {1: 1, 2: 5}  # the people set grades its evidence 2
    metrics = ["pct_proc@2", "proc@2"]
    staged = recorder.evaluate(dataset.qrels, metrics, stage="rerank", grade_map=grades)
    by_hand = rm.evaluate(
        dataset.qrels, recorder.run_of("rerank"), metrics, grade_map=grades,
        pool=recorder.run, missing="skip",
    )  # fmt: skip
    assert staged.aggregate == by_hand.aggregate
    alone = rm.evaluate(
        dataset.qrels, recorder.run_of("rerank"), metrics, grade_map=grades, missing="skip"
    )
    assert staged.aggregate != alone.aggregate  # the pool is the retrieval's 4, not its own 2

    # two post-processors: each is a rerank stage; the context is what the last one kept
    two = RetrieverQueryEngine.from_args(
        retriever, llm=MockLLM(), node_postprocessors=[_Reverse(), _KeepOne()]
    )
    with RetrievalRecorder(query_ids={t: q for q, t in asked.items()}) as chained:
        for text in asked.values():
            two.query(text)
    for qid, text in asked.items():
        found = tuple(n.node.node_id for n in retriever.retrieve(text))
        assert chained.run_of("_Reverse")[qid] == tuple(reversed(found))[:2]
        assert chained.run_of("context")[qid] == chained.run_of("_KeepOne")[qid] == found[-1:]
    context = chained.evaluate(dataset.qrels, metrics, stage="context", grade_map=grades)
    assert context.aggregate == rm.evaluate(
        dataset.qrels, chained.run_of("context"), metrics, grade_map=grades,
        pool=chained.run, missing="skip",
    ).aggregate  # fmt: skip

    broken = RetrieverQueryEngine.from_args(
        retriever, llm=MockLLM(), node_postprocessors=[_Broken()]
    )
    qid, text = next(iter(asked.items()))
    with RetrievalRecorder(query_ids={text: qid}) as failing, pytest.raises(TimeoutError):
        broken.query(text)
    (rerank,) = failing.records_of("rerank")
    assert rerank.failed and "TimeoutError" in (rerank.error or "") and rerank.doc_ids == ()
    assert failing.run[qid] == tuple(n.node.node_id for n in retriever.retrieve(text))
    result = failing.evaluate(dataset.qrels, ["recall@2"], stage="rerank")
    assert result.retrieval_errors == {qid: rerank.error}
