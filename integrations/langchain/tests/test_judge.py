"""as_judge on a real LangChain chat model (a BaseChatModel whose grade is a function of the
passage it reads), through ragmetrics.goldset."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

from langchain_ragmetrics import as_judge
from ragmetrics import goldset
from ragmetrics.errors import InvalidParameterError
from tests.helpers import passages, two_runs


def _grade_of(text: str) -> int:
    return int(re.search(r"passage (\d+) on", text).group(1)) % 5 + 1  # type: ignore[union-attr]


class GradingChat(BaseChatModel):
    """Answers with the grade of the passage in the first message; with ``chatty`` it first
    answers in words, then with the grade once asked again."""

    model_name: str = "grader-1"
    temperature: float = 0.0
    chatty: bool = False
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "grading-chat"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        self.calls += 1
        first = str(messages[0].content)
        answer = (
            f"I would say {_grade_of(first)}"
            if self.chatty and len(messages) == 1
            else str(_grade_of(first))
        )
        usage = {
            "input_tokens": len(first) // 4,
            "output_tokens": 1,
            "total_tokens": len(first) // 4 + 1,
        }
        return ChatResult(
            generations=[ChatGeneration(message=AIMessage(content=answer, usage_metadata=usage))]
        )


def test_a_chat_model_grades_with_its_own_usage(tmp_path: Path) -> None:
    pairs = goldset.pool(two_runs(), depth=3)
    model = GradingChat()
    judge = as_judge(model)
    assert judge.model_id == "GradingChat:grader-1" and judge.params == {"temperature": 0.0}
    gold = goldset.grade(pairs, passages(), judge, cache=tmp_path / "c.sqlite")
    assert {(q, d): g for q in gold.qrels.query_ids for d, g in gold.qrels[q].items()} == {
        (q, d): int(d[1:]) % 5 + 1 for q, d in pairs
    }
    assert model.calls == len(pairs) == gold.usage.calls
    assert gold.usage.prompt_tokens > 0 and gold.usage.completion_tokens == len(pairs)
    assert gold.usage.estimated_tokens == 0  # the framework reported every call's tokens
    goldset.grade(pairs, passages(), as_judge(model), cache=tmp_path / "c.sqlite")
    assert model.calls == len(pairs)  # all from the cache


def test_a_chatty_model_is_asked_again_in_the_conversation(tmp_path: Path) -> None:
    model = GradingChat(chatty=True)
    gold = goldset.grade([("q1", "d7")], passages(), as_judge(model, model_id="chatty"), cache=None)
    assert gold.qrels["q1"] == {"d7": 3} and model.calls == 2 and gold.usage.reasks == 1


class ToolGradingChat(GradingChat):
    """A chat model that can call tools: with tools bound it answers with a call of the first
    one, whose arguments ``args_of(grade, turn)`` gives; without, in text like GradingChat."""

    model_name: str = "tool-grader-1"
    seen_tools: list[str] = Field(default_factory=list)
    args_of: Any = None

    def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kwargs: Any) -> Any:
        schemas = [convert_to_openai_tool(tool) for tool in tools]
        return self.bind(tools=schemas, tool_choice=tool_choice, **kwargs)

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        tools = kwargs.get("tools")
        if not tools:
            return super()._generate(messages, stop, run_manager, **kwargs)
        self.calls += 1
        name = tools[0]["function"]["name"]
        self.seen_tools.append(f"{name}:{kwargs.get('tool_choice')}")
        grade = _grade_of(str(messages[0].content))
        args = self.args_of(grade, len(messages) // 2) if self.args_of else {"grade": grade}
        message = AIMessage(
            content="" if args is not None else f"It is a {grade}",
            tool_calls=[] if args is None else [{"name": name, "args": args, "id": "call-1"}],
            usage_metadata={"input_tokens": 50, "output_tokens": 5, "total_tokens": 55},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


def test_a_tool_calling_model_grades_through_structured_output(tmp_path: Path) -> None:
    pairs = goldset.pool(two_runs(), depth=3)
    model = ToolGradingChat()
    gold = goldset.grade(pairs, passages(), as_judge(model), cache=tmp_path / "c.sqlite")
    assert {(q, d): g for q in gold.qrels.query_ids for d, g in gold.qrels[q].items()} == {
        (q, d): int(d[1:]) % 5 + 1 for q, d in pairs
    }
    # every call went through with_structured_output's tool, forced
    assert model.seen_tools == ["Grade:any"] * len(pairs) and gold.usage.reasks == 0
    assert gold.usage.prompt_tokens == 50 * len(pairs) and gold.usage.estimated_tokens == 0
    assert gold.usage.completion_tokens == 5 * len(pairs)


def test_tool_calls_that_are_not_one_grade_are_asked_again(tmp_path: Path) -> None:
    def args_of(grade: int, turn: int) -> dict[str, Any] | None:
        # first a grade out of range, then words, then a valid call
        return [{"grade": 7}, {"grade": "four"}, {"grade": grade}][turn]

    model = ToolGradingChat(args_of=args_of)
    gold = goldset.grade([("q1", "d7")], passages(), as_judge(model), cache=None)
    assert gold.qrels["q1"] == {"d7": 3} and model.calls == 3 and gold.usage.reasks == 2

    # as strictly as the core parser: an extra field or a boolean is no grade
    def loose(grade: int, turn: int) -> dict[str, Any] | None:
        return [{"grade": 4, "or": 5}, {"grade": True}, {"grade": grade}][turn]

    model = ToolGradingChat(args_of=loose)
    gold = goldset.grade([("q1", "d7")], passages(), as_judge(model, model_id="l"), cache=None)
    assert gold.qrels["q1"] == {"d7": 3} and model.calls == 3 and gold.usage.reasks == 2

    never = ToolGradingChat(args_of=lambda grade, turn: {"grade": "four"})
    with pytest.warns(goldset.UngradedPairsWarning, match="1 unjudged"):
        gold = goldset.grade([("q1", "d7")], passages(), as_judge(never, model_id="n"), cache=None)
    assert never.calls == 3 and "q1" not in gold.qrels  # never a default grade
    assert gold.unjudged == {("q1", "d7"): '{"grade": "four"}'}  # the raw arguments, kept


def test_a_tool_model_that_answers_in_text_is_read_strictly(tmp_path: Path) -> None:
    # the model ignores the tool and writes a sentence, then the bare grade when asked again
    model = ToolGradingChat(
        seen_tools=[], args_of=lambda grade, turn: None if turn == 0 else {"grade": grade}
    )
    gold = goldset.grade([("q1", "d7")], passages(), as_judge(model), cache=None)
    assert gold.qrels["q1"] == {"d7": 3} and gold.usage.reasks == 1 and model.calls == 2


def test_a_chat_model_given_as_it_is_points_to_as_judge() -> None:
    with pytest.raises(InvalidParameterError, match="from langchain_ragmetrics import as_judge"):
        goldset.grade([("q1", "d7")], passages(), GradingChat(), model_id="m", cache=None)


class FactChat(ToolGradingChat):
    """A tool-calling chat model that answers the nugget questions in words: the facts of a
    passage it is shown, and yes or no for support. Any call with tools bound is recorded."""

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        if kwargs.get("tools"):
            self.seen_tools.append("a tool was bound")
        first = str(messages[0].content)
        if "must contain" in first:
            answer = "vital: passage 3 is on topic 3\nokay: it has filler"
        else:
            fact = first.split("Fact: ")[1].split("\n")[0]
            answer = "yes" if fact.split(" is on")[0] in first.split("Passage:")[1] else "no"
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=answer))])


def test_nuggets_are_asked_in_words_even_of_a_tool_calling_model() -> None:
    """The grade tool is for grades: nugget listing and support questions go to the model
    plainly (``aask_text``), or a tool-calling model would be forced into a grade."""
    data = passages()
    model = FactChat()
    judge = as_judge(model, model_id="fact-chat")
    made = goldset.make_nuggets(
        {"q3": data.queries["q3"]}, judge, references={"q3": "passage 3"}, cache=None
    )
    assert [n.text for n in made.nuggets["q3"].values()] == [
        "passage 3 is on topic 3",
        "it has filler",
    ]
    supported = goldset.support_nuggets(made, {"q3": ["d3", "d7"]}, data.corpus, judge, cache=None)
    assert supported.nuggets["q3"]["n1"].support == ("d3",)
    assert model.seen_tools == []  # never through the grade tool
