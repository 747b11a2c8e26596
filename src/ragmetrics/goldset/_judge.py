"""What grades a passage: any object with ``model_id``, ``params`` and ``ask`` (or ``aask``).

The integrations make one from a LlamaIndex LLM or a LangChain chat model (``as_judge``); a
plain function ``fn(prompt) -> str`` (or an ``async`` one) becomes one with :func:`as_judge`,
given the ``model_id`` the cache is keyed by.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ragmetrics.errors import InvalidParameterError

# a conversation: ("user", text) and ("assistant", text) turns, the first the grading prompt
Conversation = list[tuple[str, str]]


@dataclass(frozen=True)
class Reply:
    """A judge's answer: its text (or the parsed structure), and the tokens it cost when the
    framework reports them (None: not reported; the usage then says tokens are estimated)."""

    text: Any
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class Judge:
    """Base of judges: set ``model_id`` and ``params``, and override ``ask`` or ``aask``.

    Attributes:
        model_id: names the model; part of every cache key.
        params: the settings that change its output (temperature, ...); part of the key.
    """

    model_id: str = ""
    params: Mapping[str, Any] = {}

    def ask(self, conversation: Conversation) -> Reply:
        raise NotImplementedError

    async def aask(self, conversation: Conversation) -> Reply:
        return await asyncio.to_thread(self.ask, conversation)

    async def aask_text(self, conversation: Conversation) -> Reply:
        """A question answered in free text (listing nuggets, yes or no, an answer), not a
        grade: a judge that grades through a tool or a schema overrides this to ask the
        model plainly; by default the same as :meth:`aask`."""
        return await self.aask(conversation)


@dataclass
class FunctionJudge(Judge):
    """A judge made of a function of one prompt (a string) returning the answer text."""

    function: Callable[[str], Any]
    model_id: str = ""
    params: Mapping[str, Any] = field(default_factory=dict)

    def ask(self, conversation: Conversation) -> Reply:
        return _checked(self.function(flatten(conversation)))

    async def aask(self, conversation: Conversation) -> Reply:
        if inspect.iscoroutinefunction(self.function):
            return _checked(await self.function(flatten(conversation)))
        return await asyncio.to_thread(self.ask, conversation)


def _checked(reply: Any) -> Reply:
    """A function judge's answer as a Reply; anything but text (or a Reply, or a structure
    of one grade) is a mistake in the function, named at once rather than re-asked."""
    if isinstance(reply, Reply):
        return reply
    if isinstance(reply, (str, int, dict)) and not isinstance(reply, bool):
        return Reply(reply)
    raise InvalidParameterError(
        f"The judge function returned a {type(reply).__name__}; it must return the answer's "
        f"text (a str) or a goldset.Reply. For a framework's message, return its text (for "
        f"example message.content), or make the judge with the integration's as_judge(model)."
    )


def flatten(conversation: Conversation) -> str:
    """A conversation as one prompt, for a judge that takes text: the first message alone, or
    every turn labelled after a re-ask."""
    if len(conversation) == 1:
        return conversation[0][1]
    return "\n\n".join(f"[{role}]\n{text}" for role, text in conversation)


def as_judge(
    judge: Any, *, model_id: str | None = None, params: Mapping[str, Any] | None = None
) -> Judge:
    """A :class:`Judge` from a judge, or from a function ``fn(prompt) -> str`` with
    ``model_id=`` (required: the cache is keyed by it)."""
    if params is not None and not isinstance(params, Mapping):
        raise InvalidParameterError(
            f"params maps the model's settings to their values; got {type(params).__name__}."
        )
    if isinstance(judge, Judge):
        if model_id is not None or params is not None:
            raise InvalidParameterError(
                "model_id and params are those of the judge already; set them when you make it."
            )
        if not judge.model_id:
            raise InvalidParameterError("The judge has no model_id; the cache is keyed by it.")
        return judge
    hint = _framework_hint(judge)
    if callable(judge) and not hint:
        if not model_id or not isinstance(model_id, str):
            raise InvalidParameterError(
                "A function judge needs model_id='...' (the model and version it calls): the "
                "cache is keyed by it, so a new model never reuses another's grades."
            )
        return FunctionJudge(judge, model_id, dict(params or {}))
    raise InvalidParameterError(
        f"judge must be a Judge (from as_judge(model) of an integration) or a function "
        f"fn(prompt) -> str with model_id=...; got {type(judge).__name__}.{hint}"
    )


def _framework_hint(judge: Any) -> str:
    """How to make a judge of a framework's model given as it is ("" for anything else):
    some are callable, and would otherwise be taken for a function of a prompt."""
    for klass in type(judge).__mro__:
        module = klass.__module__
        if module.startswith("langchain") and klass.__name__ == "BaseLanguageModel":
            return (
                " For a LangChain chat model: from langchain_ragmetrics import as_judge; "
                "grade(..., as_judge(model))."
            )
        if module.startswith("llama_index") and klass.__name__ == "BaseLLM":
            return (
                " For a LlamaIndex LLM: from llama_index.evaluation.ragmetrics import "
                "as_judge; grade(..., as_judge(llm))."
            )
    return ""


# the settings of a model that change what it answers (part of the cache key)
OUTPUT_PARAMS = ("temperature", "top_p", "top_k", "seed", "max_tokens", "reasoning_effort")


def model_identity(
    model: Any, name: str | None, model_id: str | None, params: Mapping[str, Any] | None
) -> tuple[str, dict[str, Any]]:
    """The cache identity of a framework model: ``model_id`` or ``Class:name``, and
    ``params`` or those of :data:`OUTPUT_PARAMS` the model sets (used by the integrations'
    ``as_judge``)."""
    identity = model_id or (f"{type(model).__name__}:{name}" if name else None)
    if not identity:
        raise InvalidParameterError(
            f"{type(model).__name__} has no model name: pass model_id='...' (the cache is keyed "
            f"by it)."
        )
    if params is not None:
        return identity, dict(params)
    settings = {p: getattr(model, p) for p in OUTPUT_PARAMS if getattr(model, p, None) is not None}
    return identity, settings
