"""The grading cache: SQLite, one row per (pair, sample) answered, committed as it arrives.

A row is keyed by everything that changes the answer: the model id, the parameters that
change its output, the prompt version and template hash, the query text, a hash of the
passage text and the sample index. A re-run makes no call for a key it holds; a run killed
midway resumes from the rows already committed. Failures (errors after every retry) are not
stored: the next run tries them again.

The file says what it is (table ``meta``: format and version), and is refused when it is
something else, from a newer version, or damaged; every row read is checked again (a grade
edited to 9 is refused, never used). Processes grading into one file at once *claim* a key
before they pay for it (table ``claims``): a key another live process has claimed is waited
for, not asked twice; a claim left by a process that died is taken over.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sqlite3
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ragmetrics.errors import InputFormatError

FORMAT = "ragmetrics.goldset.cache"
VERSION = 1
STALE_CLAIM_SECONDS = 600.0  # a claim this old is taken over, whoever made it

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
_META = "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)"
_CLAIMS = """
CREATE TABLE IF NOT EXISTS claims (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    since REAL NOT NULL
)
"""
_COLUMNS = [
    *("key", "model_id", "params", "prompt_version", "template_hash", "query", "passage_hash"),
    *("sample", "grade", "answer", "prompt_tokens", "completion_tokens", "created"),
]


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
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        if self.path is not None:
            with self._errors():
                self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30.0)
                self._open()

    def _open(self) -> None:
        """Check the file and make its tables, in one write transaction: a second process
        opening the same new file waits, then finds it whole (never the tables without
        their ``meta`` rows)."""
        assert self._db is not None
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._check_and_create()
        except BaseException:
            self._db.rollback()
            raise
        self._db.commit()
        self._write_ahead()

    def _write_ahead(self, wait: float = 30.0) -> None:
        """Switch the file to write-ahead logging (readers go on while one writes). The
        switch needs the file to itself, and sqlite answers "database is locked" at once,
        without waiting, when another process opening it holds it that moment: try again
        for up to ``wait`` seconds, as every other statement waits."""
        assert self._db is not None
        deadline = time.monotonic() + wait
        pause = 0.005
        while True:
            try:
                self._db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() >= deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, 0.2)

    def _check_and_create(self) -> None:
        assert self._db is not None
        tables = {
            row[0] for row in self._db.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
        if tables - {"answers", "meta", "claims"}:
            raise self._refused(f"it holds other tables ({', '.join(sorted(tables))})")
        if "answers" in tables:
            columns = [row[1] for row in self._db.execute("PRAGMA table_info(answers)")]
            if columns != _COLUMNS:
                raise self._refused("its table 'answers' has other columns")
        if "meta" in tables:
            meta = dict(self._db.execute("SELECT name, value FROM meta").fetchall())
            if meta.get("format") != FORMAT:
                raise self._refused(f"its format is {meta.get('format')!r}")
            if meta.get("version") != str(VERSION):
                raise self._refused(
                    f"it is version {meta.get('version')} of the cache; this ragmetrics reads "
                    f"version {VERSION} (upgrade ragmetrics)"
                )
        self._db.execute(_SCHEMA)
        self._db.execute(_META)
        self._db.execute(_CLAIMS)
        self._db.execute(
            "INSERT OR IGNORE INTO meta VALUES ('format', ?), ('version', ?)", (FORMAT, VERSION)
        )

    def _refused(self, why: str) -> InputFormatError:
        return InputFormatError(
            f"{self.path}: not a golden-set cache this version can use: {why}. Give another "
            f"path with cache=, or move this file away to start afresh (its answers are then "
            f"asked, and paid for, again)."
        )

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """sqlite's errors on a damaged or foreign file, as one error naming it."""
        try:
            yield
        except sqlite3.Error as error:
            raise InputFormatError(
                f"{self.path}: the golden-set cache cannot be used ({error}): the file is "
                f"damaged, locked by a program that does not let go, or not a cache. Move it "
                f"away to start afresh (its answers are then asked, and paid for, again)."
            ) from None

    def get(self, key: str) -> Answer | None:
        if self._db is None:
            return None
        with self._errors():
            row = self._db.execute(
                "SELECT grade, answer, prompt_tokens, completion_tokens FROM answers WHERE key = ?",
                (key,),
            ).fetchone()
        return None if row is None else self._checked(key, row)

    def _checked(self, key: str, row: tuple[Any, ...]) -> Answer:
        """A stored row as an answer, every field checked as when it was written."""
        grade, answer, prompt_tokens, completion_tokens = row
        valid = (
            (grade is None or (type(grade) is int and 1 <= grade <= 5))
            and isinstance(answer, str)
            and all(t is None or (type(t) is int and t >= 0) for t in row[2:])
        )
        if not valid:
            raise self._refused(
                f"the stored answer {key[:12]}... holds grade={grade!r}, "
                f"prompt_tokens={prompt_tokens!r}, completion_tokens={completion_tokens!r} "
                f"(a grade must be 1..5 or empty, tokens whole numbers): it was edited or "
                f"damaged"
            )
        return Answer(grade, answer, prompt_tokens, completion_tokens)

    def keys(self, keys: list[str]) -> set[str]:
        """Which of ``keys`` are stored."""
        if self._db is None or not keys:
            return set()
        found: set[str] = set()
        with self._errors():
            for start in range(0, len(keys), 500):
                part = keys[start : start + 500]
                marks = ",".join("?" * len(part))
                rows = self._db.execute(f"SELECT key FROM answers WHERE key IN ({marks})", part)
                found.update(row[0] for row in rows)
        return found

    def put(self, key: str, parts: dict[str, Any], answer: Answer) -> None:
        """Store one answer and commit at once (a killed run keeps it); its claim ends."""
        if self._db is None:
            return
        with self._errors():
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
            self._db.execute("DELETE FROM claims WHERE key = ? AND owner = ?", (key, self.owner))
            self._db.commit()

    def claim(self, key: str) -> bool:
        """Claim ``key`` before paying for it: True when this process may ask, False when
        another live process holds the claim (wait for its answer with :meth:`get`). A claim
        whose owner died, or older than :data:`STALE_CLAIM_SECONDS`, is taken over."""
        if self._db is None:
            return True
        now = time.time()
        with self._errors():
            taken = self._db.execute(
                "INSERT OR IGNORE INTO claims VALUES (?, ?, ?)", (key, self.owner, now)
            ).rowcount
            if not taken:
                row = self._db.execute(
                    "SELECT owner, since FROM claims WHERE key = ?", (key,)
                ).fetchone()
                if row is not None and (row[0] == self.owner or not _alive(row[0], row[1], now)):
                    self._db.execute(
                        "UPDATE claims SET owner = ?, since = ? WHERE key = ? AND owner = ?",
                        (self.owner, now, key, row[0]),
                    )
                    taken = True
            self._db.commit()
        return bool(taken)

    def release(self, key: str) -> None:
        """End this process's claim of ``key`` without an answer (the call failed)."""
        if self._db is None:
            return
        with self._errors():
            self._db.execute("DELETE FROM claims WHERE key = ? AND owner = ?", (key, self.owner))
            self._db.commit()

    def close(self) -> None:
        if self._db is not None:
            with self._errors():
                self._db.execute("DELETE FROM claims WHERE owner = ?", (self.owner,))
                self._db.commit()
            self._db.close()
            self._db = None


def _alive(owner: str, since: float, now: float) -> bool:
    """Whether the process that made a claim may still answer it."""
    if now - since > STALE_CLAIM_SECONDS:
        return False
    host, _, rest = owner.partition(":")
    if host != socket.gethostname():
        return True  # another machine: only the age tells
    try:
        os.kill(int(rest.partition(":")[0]), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError):
        return True
    return True
