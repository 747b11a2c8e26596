"""as_judge on a real LlamaIndex LLM (a CustomLLM whose grade is a function of the passage
it reads), through ragmetrics.goldset."""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole
from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.core.llms.llm import ToolSelection
from pydantic import Field

from llama_index.evaluation.ragmetrics import as_judge
from ragmetrics import goldset
from ragmetrics.errors import InvalidParameterError
from tests.helpers import passages, two_runs


class GradingLLM(CustomLLM):
    """Completes with the grade of the passage in the prompt."""

    calls: int = 0

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="grader-llm")

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.calls += 1
        grade = int(re.search(r"passage (\d+) on", prompt).group(1)) % 5 + 1  # type: ignore[union-attr]
        return CompletionResponse(text=str(grade))

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        yield self.complete(prompt)


def test_a_llamaindex_llm_grades(tmp_path: Path) -> None:
    pairs = goldset.pool(two_runs(), depth=3)
    llm = GradingLLM()
    judge = as_judge(llm)
    assert judge.model_id == "GradingLLM:grader-llm"
    gold = goldset.grade(pairs, passages(), judge, cache=tmp_path / "c.sqlite")
    assert {(q, d): g for q in gold.qrels.query_ids for d, g in gold.qrels[q].items()} == {
        (q, d): int(d[1:]) % 5 + 1 for q, d in pairs
    }
    assert llm.calls == len(pairs)
    assert gold.usage.estimated_tokens > 0  # this LLM reports no tokens: estimated, and said so
    again = goldset.grade(pairs, passages(), as_judge(llm), cache=tmp_path / "c.sqlite")
    assert llm.calls == len(pairs) and again.usage.cache_hits == len(pairs)


class ToolGradingLLM(FunctionCallingLLM):
    """A function-calling LLM: sent tools, it calls the first with the arguments
    ``args_of(grade, turn)`` gives (None: it answers in words instead), and reports its usage
    in ``raw`` as an OpenAI-style client does."""

    calls: int = 0
    seen: list[str] = Field(default_factory=list)
    args_of: Any = None

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="tool-grader", is_function_calling_model=True)

    def _prepare_chat_with_tools(
        self,
        tools: Sequence[Any],
        user_msg: Any = None,
        chat_history: list[ChatMessage] | None = None,
        verbose: bool = False,
        allow_parallel_tool_calls: bool = False,
        tool_required: bool = False,
        **kwargs: Any,
    ) -> dict[str, Any]:
        schemas = [tool.metadata.to_openai_tool() for tool in tools]
        return {"messages": chat_history or [], "tools": schemas, "required": tool_required}

    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        self.calls += 1
        tools = kwargs.get("tools") or []
        grade = int(re.search(r"passage (\d+) on", str(messages[0].content)).group(1)) % 5 + 1  # type: ignore[union-attr]
        turn = len(messages) // 2
        args = self.args_of(grade, turn) if self.args_of else {"grade": grade}
        if not tools or args is None:
            message = ChatMessage(role=MessageRole.ASSISTANT, content=f"It is a {grade}")
        else:
            name = tools[0]["function"]["name"]
            self.seen.append(f"{name}:{kwargs.get('required')}")
            call = {"id": "call-1", "function": {"name": name, "arguments": json.dumps(args)}}
            message = ChatMessage(
                role=MessageRole.ASSISTANT, content="", additional_kwargs={"tool_calls": [call]}
            )
        usage = {"prompt_tokens": 40, "completion_tokens": 4}
        return ChatResponse(message=message, raw={"usage": usage})

    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return self.chat(messages, **kwargs)

    def get_tool_calls_from_response(
        self, response: ChatResponse, error_on_no_tool_call: bool = True, **kwargs: Any
    ) -> list[ToolSelection]:
        calls = response.message.additional_kwargs.get("tool_calls", [])
        if not calls and error_on_no_tool_call:
            raise ValueError("no tool call")
        return [
            ToolSelection(
                tool_id=call["id"],
                tool_name=call["function"]["name"],
                tool_kwargs=json.loads(call["function"]["arguments"]),
            )
            for call in calls
        ]

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError

    async def acomplete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError

    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> Any:
        raise NotImplementedError

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError

    async def astream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> Any:
        raise NotImplementedError

    async def astream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError


def test_a_function_calling_llm_grades_through_its_tool(tmp_path: Path) -> None:
    pairs = goldset.pool(two_runs(), depth=3)
    llm = ToolGradingLLM()
    judge = as_judge(llm)
    gold = goldset.grade(pairs, passages(), judge, cache=tmp_path / "c.sqlite")
    assert {(q, d): g for q in gold.qrels.query_ids for d, g in gold.qrels[q].items()} == {
        (q, d): int(d[1:]) % 5 + 1 for q, d in pairs
    }
    # every call named the grade tool, and required it where this llama-index can say so
    required = "tool_required" in inspect.signature(llm.chat_with_tools).parameters
    assert llm.seen == [f"grade:{required}"] * len(pairs) and gold.usage.reasks == 0
    # the usage the LLM reported, not an estimate
    assert gold.usage.prompt_tokens == 40 * len(pairs) and gold.usage.estimated_tokens == 0
    assert gold.usage.completion_tokens == 4 * len(pairs)
    assert judge.ask([("user", "passage 3 on x")]).text == '{"grade": 4}'  # the sync path too


def test_tool_calls_that_are_not_one_grade_are_asked_again(tmp_path: Path) -> None:
    def args_of(grade: int, turn: int) -> dict[str, Any] | None:
        # out of range, then words instead of a call, then a valid call
        return [{"grade": 0}, None, {"grade": float(grade)}][turn]

    llm = ToolGradingLLM(args_of=args_of)
    gold = goldset.grade([("q1", "d7")], passages(), as_judge(llm), cache=None)
    assert gold.qrels["q1"] == {"d7": 3} and llm.calls == 3 and gold.usage.reasks == 2

    never = ToolGradingLLM(args_of=lambda grade, turn: {"grade": 4, "or": 5})
    with pytest.warns(goldset.UngradedPairsWarning, match="1 unjudged"):
        gold = goldset.grade([("q1", "d7")], passages(), as_judge(never, model_id="n"), cache=None)
    assert never.calls == 3 and "q1" not in gold.qrels  # never a default grade
    assert gold.unjudged == {("q1", "d7"): '{"grade": 4, "or": 5}'}  # the raw arguments, kept


def test_an_llm_given_as_it_is_points_to_as_judge() -> None:
    with pytest.raises(InvalidParameterError, match=r"from llama_index\.evaluation\.ragmetrics"):
        goldset.grade([("q1", "d7")], passages(), GradingLLM(), model_id="m", cache=None)


class FactLLM(ToolGradingLLM):
    """A function-calling LLM that answers the nugget questions in words; any call with
    tools is recorded."""

    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        if kwargs.get("tools"):
            self.seen.append("a tool was sent")
        first = str(messages[0].content)
        if "must contain" in first:
            text = "vital: passage 3 is on topic 3\nokay: it has filler"
        else:
            fact = first.split("Fact: ")[1].split("\n")[0]
            text = "yes" if fact.split(" is on")[0] in first.split("Passage:")[1] else "no"
        return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=text))


def test_nuggets_are_asked_in_words_even_of_a_function_calling_llm() -> None:
    data = passages()
    llm = FactLLM()
    judge = as_judge(llm, model_id="fact-llm")
    made = goldset.make_nuggets(
        {"q3": data.queries["q3"]}, judge, references={"q3": "passage 3"}, cache=None
    )
    assert [n.vital for n in made.nuggets["q3"].values()] == [True, False]
    supported = goldset.support_nuggets(made, {"q3": ["d3", "d7"]}, data.corpus, judge, cache=None)
    assert supported.nuggets["q3"]["n1"].support == ("d3",)
    assert llm.seen == []
