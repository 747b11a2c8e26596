"""as_judge on a real LlamaIndex LLM (a CustomLLM whose grade is a function of the passage
it reads), through ragmetrics.goldset."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
from llama_index.core.llms.callbacks import llm_completion_callback

from llama_index.evaluation.ragmetrics import as_judge
from ragmetrics import goldset
from tests.test_goldset import _dataset, _runs


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
    pairs = goldset.pool(_runs(), depth=3)
    llm = GradingLLM()
    judge = as_judge(llm)
    assert judge.model_id == "GradingLLM:grader-llm"
    gold = goldset.grade(pairs, _dataset(), judge, cache=tmp_path / "c.sqlite")
    assert {(q, d): g for q in gold.qrels.query_ids for d, g in gold.qrels[q].items()} == {
        (q, d): int(d[1:]) % 5 + 1 for q, d in pairs
    }
    assert llm.calls == len(pairs)
    assert gold.usage.estimated_tokens > 0  # this LLM reports no tokens: estimated, and said so
    again = goldset.grade(pairs, _dataset(), as_judge(llm), cache=tmp_path / "c.sqlite")
    assert llm.calls == len(pairs) and again.usage.cache_hits == len(pairs)
