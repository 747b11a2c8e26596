"""The grading cache: SQLite, one row per (pair, sample) answered, committed as it arrives.

A row is keyed by everything that changes the answer: the model id, the parameters that
change its output, the prompt version and template hash, the query text, a hash of the
passage text and the sample index. A re-run makes no call for a key it holds; a run killed
midway resumes from the rows already committed. Failures (errors after every retry) are not
stored: the next run tries them again.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from dataclasses import dataclass
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    model_id TEXT NOT NULL,
    params TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    template_hash TEXT NOT NULL,
    query TEXT NOT NULL,
    passage_hash TEXT NOT NULL,
    sample INTEGER NOT NULL,
    grade INTEGER,
    answer TEXT NOT NULL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    created REAL NOT NULL
)
"""


@dataclass(frozen=True)
class Answer:
    """One stored answer: ``grade`` is None when the judge never gave a grade 1..5."""

    grade: int | None
    answer: str
    prompt_tokens: int | None
    completion_tokens: int | None


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cache_key(
    model_id: str,
    params: dict[str, Any],
    prompt_version: str,
    template_hash: str,
    query: str,
    passage: str,
    sample: int,
) -> tuple[str, dict[str, Any]]:
    """The key of one call, and its parts as stored."""
    parts = {
        "model_id": model_id,
        "params": json.dumps(params, sort_keys=True, default=str),
        "prompt_version": prompt_version,
        "template_hash": template_hash,
        "query": query,
        "passage_hash": text_hash(passage),
        "sample": sample,
    }
    return text_hash(json.dumps(parts, sort_keys=True)), parts


class Cache:
    """The SQLite file of answers (``None`` path: nothing is kept)."""

    def __init__(self, path: str | os.PathLike[str] | None) -> None:
        self.path = None if path is None else os.fspath(path)
        self._db: sqlite3.Connection | None = None
        if self.path is not None:
            self._db = sqlite3.connect(self.path, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(_SCHEMA)
            self._db.commit()

    def get(self, key: str) -> Answer | None:
        if self._db is None:
            return None
        row = self._db.execute(
            "SELECT grade, answer, prompt_tokens, completion_tokens FROM answers WHERE key = ?",
            (key,),
        ).fetchone()
        return None if row is None else Answer(*row)

    def keys(self, keys: list[str]) -> set[str]:
        """Which of ``keys`` are stored."""
        if self._db is None or not keys:
            return set()
        found: set[str] = set()
        for start in range(0, len(keys), 500):
            part = keys[start : start + 500]
            marks = ",".join("?" * len(part))
            rows = self._db.execute(f"SELECT key FROM answers WHERE key IN ({marks})", part)
            found.update(row[0] for row in rows)
        return found

    def put(self, key: str, parts: dict[str, Any], answer: Answer) -> None:
        """Store one answer and commit at once (a killed run keeps it)."""
        if self._db is None:
            return
        self._db.execute(
            "INSERT OR REPLACE INTO answers VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                key,
                parts["model_id"],
                parts["params"],
                parts["prompt_version"],
                parts["template_hash"],
                parts["query"],
                parts["passage_hash"],
                parts["sample"],
                answer.grade,
                answer.answer,
                answer.prompt_tokens,
                answer.completion_tokens,
                time.time(),
            ),
        )
        self._db.commit()

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
