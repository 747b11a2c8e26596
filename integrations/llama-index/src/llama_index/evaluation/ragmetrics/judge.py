"""A LlamaIndex LLM as the judge of ``ragmetrics.goldset.grade``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole
from llama_index.core.llms import LLM
from pydantic import BaseModel, Field

from ragmetrics.errors import InvalidParameterError
from ragmetrics.goldset import Judge, Reply, model_identity


class _Grade(BaseModel):
    """The structured answer: one utility grade."""

    grade: int = Field(description="the grade, one integer from 1 to 5")


class LLMJudge(Judge):
    """Grades with a LlamaIndex LLM through its chat interface: structured output (JSON of
    one grade) when the LLM is a function-calling model, its text otherwise; either is parsed
    strictly by ragmetrics. Tokens from the response's usage where the LLM reports them
    (``additional_kwargs`` or ``raw.usage``)."""

    def __init__(self, llm: LLM, model_id: str, params: Mapping[str, Any]) -> None:
        self.llm = llm
        self.model_id = model_id
        self.params = dict(params)
        self._chat: Any = llm
        if getattr(llm.metadata, "is_function_calling_model", False):
            try:
                self._chat = llm.as_structured_llm(_Grade)
            except (AttributeError, NotImplementedError, ValueError):
                self._chat = llm

    def ask(self, conversation: list[tuple[str, str]]) -> Reply:
        return _reply(self._chat.chat(_messages(conversation)))

    async def aask(self, conversation: list[tuple[str, str]]) -> Reply:
        return _reply(await self._chat.achat(_messages(conversation)))


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


def _reply(response: ChatResponse) -> Reply:
    extra = response.additional_kwargs or {}
    prompt_tokens = extra.get("prompt_tokens")
    completion_tokens = extra.get("completion_tokens")
    usage = getattr(response.raw, "usage", None) if response.raw is not None else None
    if prompt_tokens is None and usage is not None:
        prompt_tokens = getattr(usage, "prompt_tokens", None)
        completion_tokens = getattr(usage, "completion_tokens", None)
    return Reply(response.message.content or "", prompt_tokens, completion_tokens)
