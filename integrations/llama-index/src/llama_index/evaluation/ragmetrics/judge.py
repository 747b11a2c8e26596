"""A LlamaIndex LLM as the judge of ``ragmetrics.goldset.grade``."""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole
from llama_index.core.llms import LLM
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.core.tools import FunctionTool
from pydantic import BaseModel, Field

from ragmetrics.adapters import InvalidParameterError, Judge, Reply, model_identity

__all__ = [
    "GRADE_TOOL",
    "Grade",
    "LLMJudge",
    "as_judge",
]


class Grade(BaseModel):
    """Record the passage's utility grade for the question, from 1 (not relevant) to 5
    (decisive)."""

    grade: int = Field(description="the grade, one integer from 1 to 5")


def _record(grade: int) -> int:
    return grade


# the one tool a function-calling LLM is asked to call; only its schema is sent
GRADE_TOOL = FunctionTool.from_defaults(
    fn=_record, name="grade", description=Grade.__doc__, fn_schema=Grade
)


class LLMJudge(Judge):
    """Grades with a LlamaIndex LLM through its chat interface.

    A function-calling LLM (a ``FunctionCallingLLM`` whose metadata says
    ``is_function_calling_model``) is asked to call one ``grade`` tool, and the tool call's
    arguments are the answer; an LLM that cannot call tools answers in text. Either is read
    strictly by ragmetrics: arguments that are not one grade 1..5, or a reply in words with
    no tool call, are asked again. Tokens come from the response's usage where the LLM
    reports it (``additional_kwargs``, or ``usage`` of ``raw``: ``prompt_tokens`` /
    ``completion_tokens`` or ``input_tokens`` / ``output_tokens``).
    """

    def __init__(self, llm: LLM, model_id: str, params: Mapping[str, Any]) -> None:
        self.llm = llm
        self.model_id = model_id
        self.params = dict(params)
        # the LLM asked to call the grade tool, when it can; None: it answers in text
        self.caller: FunctionCallingLLM | None = (
            llm
            if isinstance(llm, FunctionCallingLLM)
            and getattr(llm.metadata, "is_function_calling_model", False)
            else None
        )
        # llama-index-core 0.12.x has no tool_required; there the LLM's own default applies
        self._required: dict[str, Any] = (
            {"tool_required": True}
            if self.caller is not None
            and "tool_required" in inspect.signature(self.caller.chat_with_tools).parameters
            else {}
        )

    def ask(self, conversation: list[tuple[str, str]]) -> Reply:
        messages = _messages(conversation)
        if self.caller is None:
            return _reply(self.llm.chat(messages), self._answer)
        response = self.caller.chat_with_tools(
            [GRADE_TOOL], chat_history=messages, **self._required
        )
        return _reply(response, self._answer)

    async def aask(self, conversation: list[tuple[str, str]]) -> Reply:
        messages = _messages(conversation)
        if self.caller is None:
            return _reply(await self.llm.achat(messages), self._answer)
        response = await self.caller.achat_with_tools(
            [GRADE_TOOL], chat_history=messages, **self._required
        )
        return _reply(response, self._answer)

    async def aask_text(self, conversation: list[tuple[str, str]]) -> Reply:
        """A question answered in words (nuggets, support), asked without the grade tool."""
        return _reply(await self.llm.achat(_messages(conversation)), _text)

    def _answer(self, response: ChatResponse) -> str:
        """The arguments of the first tool call, as JSON (read strictly by ragmetrics), or
        the text when the LLM called no tool."""
        calls = (
            self.caller.get_tool_calls_from_response(response, error_on_no_tool_call=False)
            if self.caller is not None
            else []
        )
        if not calls:
            return _text(response)
        return json.dumps(calls[0].tool_kwargs, ensure_ascii=False, default=str)


def as_judge(
    llm: LLM, *, model_id: str | None = None, params: Mapping[str, Any] | None = None
) -> LLMJudge:
    """A judge for :func:`ragmetrics.goldset.grade` from a LlamaIndex LLM.

    ``model_id`` defaults to ``llm.metadata.model_name`` (with the LLM's class); ``params``
    to the settings among ``temperature``, ``top_p``, ``top_k``, ``seed``, ``max_tokens`` and
    ``reasoning_effort`` that the LLM has. Both key the cache.
    """
    if not isinstance(llm, LLM):
        raise InvalidParameterError(f"as_judge takes a LlamaIndex LLM; got {type(llm).__name__}.")
    identity, settings = model_identity(
        llm, getattr(llm.metadata, "model_name", None), model_id, params
    )
    return LLMJudge(llm, identity, settings)


def _messages(conversation: list[tuple[str, str]]) -> list[ChatMessage]:
    return [
        ChatMessage(
            role=MessageRole.ASSISTANT if role == "assistant" else MessageRole.USER, content=text
        )
        for role, text in conversation
    ]


def _text(response: ChatResponse) -> str:
    return response.message.content or ""


def _reply(response: ChatResponse, answer: Any) -> Reply:
    extra = response.additional_kwargs or {}
    prompt_tokens = extra.get("prompt_tokens")
    completion_tokens = extra.get("completion_tokens")
    usage = getattr(response.raw, "usage", None) if response.raw is not None else None
    if isinstance(response.raw, Mapping):
        usage = response.raw.get("usage", usage)
    if prompt_tokens is None and usage is not None:
        prompt_tokens = _field(usage, "prompt_tokens", "input_tokens")
        completion_tokens = _field(usage, "completion_tokens", "output_tokens")
    return Reply(answer(response), prompt_tokens, completion_tokens)


def _field(usage: Any, *names: str) -> Any:
    """The first of ``names`` the usage has (OpenAI-style or Anthropic-style fields)."""
    for name in names:
        value = usage.get(name) if isinstance(usage, Mapping) else getattr(usage, name, None)
        if value is not None:
            return value
    return None
