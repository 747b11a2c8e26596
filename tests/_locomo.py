"""Build originals, chunks and gold from LoCoMo (read in place from ../shared/data)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Turn:
    conversation: str
    session: int
    dia_id: str
    speaker: str
    role: str
    text: str
    date: str


@dataclass(frozen=True)
class Locomo:
    originals: dict[str, str]  # "<sample>:s<n>" -> session text
    turns: list[Turn]
    questions: list[tuple[str, list[str]]]  # (question id, gold original ids)
    speakers: tuple[str, ...]

    def original_id(self, conversation: str, session: int) -> str:
        return f"{conversation}:s{session}"


def load(path: Path, *, as_json: bool = False) -> Locomo:
    """Sessions become originals: a ``Date:`` line, then ``Speaker: text`` lines (or, with
    ``as_json``, the session serialized as JSON with user/assistant roles)."""
    samples = json.loads(path.read_text(encoding="utf-8"))
    originals: dict[str, str] = {}
    turns: list[Turn] = []
    questions: list[tuple[str, list[str]]] = []
    speakers: set[str] = set()
    for sample in samples:
        name = sample["sample_id"]
        conversation = sample["conversation"]
        roles = {conversation["speaker_a"]: "user", conversation["speaker_b"]: "assistant"}
        speakers.update(roles)
        for key, value in conversation.items():
            match = re.fullmatch(r"session_(\d+)", key)
            if not match or not isinstance(value, list):
                continue
            number = int(match.group(1))
            date = conversation.get(f"{key}_date_time", "")
            session_turns = [
                Turn(
                    name,
                    number,
                    t["dia_id"],
                    t["speaker"],
                    roles.get(t["speaker"], "user"),
                    t["text"],
                    date,
                )
                for t in value
            ]
            turns.extend(session_turns)
            if as_json:
                payload = {
                    "date": date,
                    "turns": [{"role": t.role, "content": t.text} for t in session_turns],
                }
                originals[f"{name}:s{number}"] = json.dumps(payload)
            else:
                body = "\n".join(f"{t.speaker}: {t.text}" for t in session_turns)
                originals[f"{name}:s{number}"] = f"Date: {date}\n{body}"
        for position, qa in enumerate(sample["qa"]):
            gold = sorted(
                {
                    f"{name}:s{int(e.split(':')[0][1:])}"
                    for e in qa.get("evidence", [])
                    if re.fullmatch(r"D\d+:\d+", e)
                }
            )
            if gold:
                questions.append((f"{name}:q{position}", gold))
    return Locomo(originals, turns, questions, tuple(sorted(speakers)))


def turn_chunk(turn: Turn, *, style: str) -> str:
    """One turn as a retrieved chunk: ``speaker`` (``Name: text``) or ``role`` (``user: text``),
    each with a leading ``Date:`` line."""
    prefix = f"{turn.speaker}: " if style == "speaker" else f"{turn.role}: "
    return f"Date: {turn.date}\n{prefix}{turn.text}"


def window_chunk(turns: list[Turn]) -> str:
    """Consecutive turns of one session as one chunk, speaker-prefixed, with a date line."""
    body = "\n".join(f"{t.speaker}: {t.text}" for t in turns)
    return f"Date: {turns[0].date}\n{body}"
