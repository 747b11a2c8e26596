"""A LangChain chat model as the judge of ``ragmetrics.goldset.grade``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel, ConfigDict, Field

from ragmetrics.adapters import InvalidParameterError, Judge, Reply, model_identity

__all__ = [
    "ChatModelJudge",
    "Grade",
    "as_judge",
]


class Grade(BaseModel):
    """Record the passage's utility grade for the question, from 1 (not relevant) to 5
    (decisive)."""

    model_config = ConfigDict(extra="forbid", strict=True)  # the schema the model is shown

    grade: int = Field(description="the grade, one integer from 1 to 5")


class ChatModelJudge(Judge):
    """Grades with a chat model: structured output (a ``Grade`` tool call, through
    ``with_structured_output``) where the model can call tools, its text otherwise. Either
    answer is read strictly by ragmetrics: a tool call whose arguments are not one grade
    1..5, or a model that answers in words instead of calling the tool, is asked again.
    Tokens come from the message's ``usage_metadata``."""

    def __init__(self, model: BaseChatModel, model_id: str, params: Mapping[str, Any]) -> None:
        self.model = model
        self.model_id = model_id
        self.params = dict(params)
        try:
            self._structured: Any = model.with_structured_output(Grade, include_raw=True)
        except (NotImplementedError, AttributeError, ValueError):
            self._structured = None  # no tool calling: the text is parsed instead

    def ask(self, conversation: list[tuple[str, str]]) -> Reply:
        return self._reply(self._runnable().invoke(_messages(conversation)))

    async def aask(self, conversation: list[tuple[str, str]]) -> Reply:
        return self._reply(await self._runnable().ainvoke(_messages(conversation)))

    async def aask_text(self, conversation: list[tuple[str, str]]) -> Reply:
        """A question answered in words (nuggets, support), asked without the grade tool."""
        output = await self.model.ainvoke(_messages(conversation))
        return _with_usage(_text(output), output)

    def _runnable(self) -> Any:
        return self._structured if self._structured is not None else self.model

    def _reply(self, output: Any) -> Reply:
        if isinstance(output, dict) and "raw" in output:  # structured, with the raw message
            # the tool call's own arguments, read by the core's strict parser: pydantic's
            # parse would take {"grade": 4, "or": 5} for 4 and {"grade": true} for 1
            raw = output["raw"]
            return _with_usage(_unparsed(raw), raw)
        return _with_usage(_text(output), output)


def as_judge(
    model: BaseChatModel,
    *,
    model_id: str | None = None,
    params: Mapping[str, Any] | None = None,
) -> ChatModelJudge:
    """A judge for :func:`ragmetrics.goldset.grade` from a LangChain chat model.

    ``model_id`` defaults to the model's ``model_name`` or ``model`` (with its class);
    ``params`` to the settings among ``temperature``, ``top_p``, ``top_k``, ``seed``,
    ``max_tokens`` and ``reasoning_effort`` that the model has. Both key the cache.
    """
    if not isinstance(model, BaseChatModel):
        raise InvalidParameterError(
            f"as_judge takes a LangChain chat model (a BaseChatModel); got {type(model).__name__}."
        )
    name = getattr(model, "model_name", None) or getattr(model, "model", None)
    identity, settings = model_identity(model, name, model_id, params)
    return ChatModelJudge(model, identity, settings)


def _messages(conversation: list[tuple[str, str]]) -> list[BaseMessage]:
    return [
        AIMessage(content=text) if role == "assistant" else HumanMessage(content=text)
        for role, text in conversation
    ]


def _text(message: Any) -> str:
    content = getattr(message, "content", message)
    if isinstance(content, list):  # content blocks: keep the text ones
        return "".join(
            part.get("text", "") if isinstance(part, dict) else str(part) for part in content
        )
    return str(content)


def _unparsed(message: Any) -> str:
    """What a model answered when its answer was not a valid ``Grade``: the arguments of its
    tool call as JSON (ragmetrics then reads them strictly and records them if it cannot),
    or its text when it called no tool."""
    calls = getattr(message, "tool_calls", None) or []
    if calls:
        return json.dumps(calls[0].get("args", {}), ensure_ascii=False, default=str)
    return _text(message)


def _with_usage(answer: Any, message: Any) -> Reply:
    usage = getattr(message, "usage_metadata", None) or {}
    return Reply(answer, usage.get("input_tokens"), usage.get("output_tokens"))
