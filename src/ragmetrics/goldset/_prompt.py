"""The grading prompt (versioned) and the strict reader of the judge's answer."""

from __future__ import annotations

import hashlib
import json
import re

PROMPT_VERSION = "utility-1"

TEMPLATE = """You judge how useful one passage is for answering a question.
A reader will answer the question using a few retrieved passages; rate this passage alone.

Question:
{query}

Passage:
{passage}

Grades:
5 - decisive: the passage on its own settles the answer.
4 - highly relevant: it holds a key part of the answer.
3 - partial: it helps, but leaves much of the answer out.
2 - weak: on the topic, but adds little to the answer.
1 - not relevant, a distractor, or misleading for this question.

Reply with the grade alone: one digit from 1 to 5."""

REASK = """Your reply was {answer}. That is not a grade. Reply with one digit from 1 to 5 and
nothing else."""

TEMPLATE_HASH = hashlib.sha256((TEMPLATE + "\0" + REASK).encode()).hexdigest()[:16]

# the whole reply, once trimmed: a digit, optionally "Grade: 4", "4.", "**4**" or {"grade": 4}
_PLAIN = re.compile(r"^(?:grade\s*[:=]?\s*)?[\"'*`(\[]*([1-5])[\"'*`)\].]*$", re.IGNORECASE)


def prompt(query: str, passage: str) -> str:
    """The first message for one (query, passage) pair."""
    return TEMPLATE.format(query=query.strip(), passage=passage.strip())


def reask(answer: str) -> str:
    """The corrective message after an answer that is not a grade."""
    shown = json.dumps(answer[:200], ensure_ascii=False)
    return REASK.format(answer=shown)


def parse_grade(answer: object) -> int | None:
    """The grade 1..5 of an answer, or None: the reply must be the grade and nothing more
    (``4``, ``4.``, ``Grade: 4``, ``**4**``, ``{"grade": 4}``; in a structure, ``4.0`` is the
    integer it equals). Never a guess: ``4 or 5``, ``6``, ``four``, ``4.5``, ``{"grade": 4,
    "or": 5}`` or an empty reply are None."""
    if isinstance(answer, bool):
        return None
    if isinstance(answer, float) and answer.is_integer():
        answer = int(answer)
    if isinstance(answer, int):
        return answer if 1 <= answer <= 5 else None
    if isinstance(answer, dict):
        return parse_grade(answer.get("grade")) if set(answer) == {"grade"} else None
    if not isinstance(answer, str):
        return None
    text = answer.strip()
    if text.startswith("{"):
        try:
            return parse_grade(json.loads(text))
        except ValueError:
            return None
    match = _PLAIN.match(text)
    return int(match.group(1)) if match else None
