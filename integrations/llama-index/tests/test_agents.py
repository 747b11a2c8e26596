"""Agents with a retriever tool, evaluated per user question: real llama-index-core agents
(FunctionAgent, AgentWorkflow) driven by its own MockFunctionCallingLLM, which calls the
tool twice per question with its own rewrites of the question."""

from __future__ import annotations

import asyncio
from typing import Any
from uuid import uuid4

import pytest
from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.llms import ChatMessage, MessageRole, MockFunctionCallingLLM
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
    return retriever, {"FunctionAgent": agent, "AgentWorkflow": AgentWorkflow(agents=[agent])}


@pytest.mark.parametrize("kind", ["FunctionAgent", "AgentWorkflow"])
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
        # the agent may run its two calls in either order: the union is in the order the
        # retrievals ended, each doc once; "latest" is the one that ended last
        records = [r for r in recorder.records if r.query_id == qid]
        assert sorted(r.query for r in records) == sorted(searched)
        in_order = [d for r in records for d in searched[r.query]]
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
