"""as_judge on a real LangChain chat model (a BaseChatModel whose grade is a function of the
passage it reads), through ragmetrics.goldset."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from langchain_ragmetrics import as_judge
from ragmetrics import goldset
from tests.test_goldset import _dataset, _runs


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
    pairs = goldset.pool(_runs(), depth=3)
    model = GradingChat()
    judge = as_judge(model)
    assert judge.model_id == "GradingChat:grader-1" and judge.params == {"temperature": 0.0}
    gold = goldset.grade(pairs, _dataset(), judge, cache=tmp_path / "c.sqlite")
    assert {(q, d): g for q in gold.qrels.query_ids for d, g in gold.qrels[q].items()} == {
        (q, d): int(d[1:]) % 5 + 1 for q, d in pairs
    }
    assert model.calls == len(pairs) == gold.usage.calls
    assert gold.usage.prompt_tokens > 0 and gold.usage.completion_tokens == len(pairs)
    assert gold.usage.estimated_tokens == 0  # the framework reported every call's tokens
    goldset.grade(pairs, _dataset(), as_judge(model), cache=tmp_path / "c.sqlite")
    assert model.calls == len(pairs)  # all from the cache


def test_a_chatty_model_is_asked_again_in_the_conversation(tmp_path: Path) -> None:
    model = GradingChat(chatty=True)
    gold = goldset.grade([("q1", "d7")], _dataset(), as_judge(model, model_id="chatty"), cache=None)
    assert gold.qrels["q1"] == {"d7": 3} and model.calls == 2 and gold.usage.reasks == 1
