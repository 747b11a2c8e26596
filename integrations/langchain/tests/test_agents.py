"""An agent loop with a retriever tool, evaluated per user question, on real langchain-core
objects: a runnable that searches twice with its own rewrites of the question, the handler
in its callbacks, the user's question id from ``question()`` or from the run's metadata."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig, RunnableLambda

import ragmetrics as rm
from langchain_ragmetrics import RetrievalEvalCallbackHandler, question


def _rewrites(text: str) -> list[str]:
    words = text.rstrip("?").split()
    return [" ".join(words[: max(2, len(words) // 2)]), " ".join(words[len(words) // 2 :])]


@pytest.fixture
def agent(bm25):  # type: ignore[no-untyped-def]
    def act(text: str, config: RunnableConfig) -> str:
        found = [bm25.invoke(q, config=config) for q in _rewrites(text)]  # two tool calls
        return f"answered from {sum(map(len, found))} passages"

    return RunnableLambda(act)


def test_an_agents_searches_are_one_run_per_user_question(agent, bm25, dataset) -> None:  # type: ignore[no-untyped-def]
    asked = dict(list(dataset.queries.items())[:8])
    plain = RetrievalEvalCallbackHandler(dataset, ["recall@10"], id_key="doc_id")
    for text in asked.values():
        agent.invoke(text, config={"callbacks": [plain]})
    assert not set(plain.run_of(policy="union").query_ids) & set(asked)

    handler = RetrievalEvalCallbackHandler(dataset, ["recall@10"], id_key="doc_id")
    for qid, text in asked.items():
        with question(qid):
            agent.invoke(text, config={"callbacks": [handler]})
    assert handler.calls() == dict.fromkeys(asked, 2)
    union = handler.run_of(policy="union")
    for qid, text in asked.items():
        first, second = ([d.metadata["doc_id"] for d in bm25.invoke(q)] for q in _rewrites(text))
        assert union[qid] == tuple(dict.fromkeys([*first, *second]))  # in order, once each
    with pytest.warns(rm.errors.StageWarning, match=r"policy=\"union\" joins an agent's"):
        latest = handler.run_of()  # the latest search of each question, with a warning
    for qid, text in asked.items():
        assert latest[qid] == tuple(d.metadata["doc_id"] for d in bm25.invoke(_rewrites(text)[1]))
    result = handler.evaluate(policy="union")
    assert result.counts.queries == len(asked) and result.settings["policy"] == "union"
    assert (
        result.aggregate
        == rm.evaluate(dataset.qrels, union, ["recall@10"], missing="skip").aggregate
    )


def test_batched_questions_and_metadata_ids(agent, dataset) -> None:  # type: ignore[no-untyped-def]
    """In ``batch`` (LangChain's threads copy the context) each question keeps its id; an id
    in the run's metadata wins over question()."""
    asked = dict(list(dataset.queries.items())[8:14])
    handler = RetrievalEvalCallbackHandler(dataset, ["recall@10"], id_key="doc_id")
    configs: list[Any] = [{"callbacks": [handler], "metadata": {"query_id": qid}} for qid in asked]
    with question("ignored"):
        agent.batch(list(asked.values()), config=configs)
    assert handler.calls() == dict.fromkeys(asked, 2)
