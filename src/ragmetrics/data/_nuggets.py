"""Nuggets: the atomic facts a good answer to a question needs, each vital or okay, and the
documents that support each (as TREC RAG judges answers and, here, retrieval).

A retrieval finds a nugget at depth k when one of the nugget's supporting documents is among
its first k results; the nugget metrics (``nugget_recall@k``, ``vital_recall@k``,
``weighted_nugget_recall@k``, ``sufficiency@k``, ``sufficient_k``) count what was found.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ragmetrics.errors import InputFormatError
from ragmetrics.formats._atomic import write_text
from ragmetrics.formats._convert import read_json_or_jsonl
from ragmetrics.formats._io import PathLike

__all__ = ["Nugget", "Nuggets"]

_FORMAT = "ragmetrics.nuggets"


@dataclass(frozen=True)
class Nugget:
    """One fact a good answer needs.

    Attributes:
        text: the fact, in words.
        vital: True for a fact the answer must hold (TREC RAG's "vital"), False for one it
            may hold ("okay").
        support: the ids of the documents that state it, each once, in the order given.
    """

    text: str
    vital: bool
    support: tuple[str, ...]


class Nuggets(Mapping[str, Mapping[str, Nugget]]):
    """Nuggets per query, immutable once built: ``nuggets[qid][nugget_id]`` is a
    :class:`Nugget`.

    Example:
        >>> nuggets = Nuggets.from_dict({"q1": {"n1": {"text": "Paris", "vital": True,
        ...                                            "support": ["d3", "d7"]}}})
        >>> nuggets["q1"]["n1"].support, nuggets.n_nuggets, nuggets.n_vital
        (('d3', 'd7'), 1, 1)
    """

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Mapping[str, Nugget]]) -> None:
        """Prefer :meth:`from_dict`; this one takes checked :class:`Nugget` values."""
        self._data = {q: MappingProxyType(dict(n)) for q, n in data.items()}

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as plain dicts (a worker process of a streamed evaluation gets a copy)."""
        return (Nuggets, ({q: dict(n) for q, n in self._data.items()},))

    # --- reading ------------------------------------------------------------------------

    @classmethod
    def from_dict(cls, nuggets: Mapping[str, Mapping[str, Any]]) -> Nuggets:
        """Build from ``{qid: {nugget_id: {"text": str, "vital": bool, "support": [doc_id,
        ...]}}}``; every field is checked, and an error names the query, the nugget and the
        field."""
        if isinstance(nuggets, Nuggets):
            return nuggets
        if not isinstance(nuggets, Mapping):
            raise InputFormatError(
                f"Nuggets are a mapping of query id to {{nugget_id: {{'text', 'vital', "
                f"'support'}}}}; got {type(nuggets).__name__}."
            )
        data: dict[str, dict[str, Nugget]] = {}
        for query_id, of_query in nuggets.items():
            _check_id(query_id, "A query id of the nuggets")
            if not isinstance(of_query, Mapping):
                raise InputFormatError(
                    f"The nuggets of query {query_id!r} must map nugget id to "
                    f"{{'text', 'vital', 'support'}}; got {type(of_query).__name__}."
                )
            data[query_id] = {
                _check_id(nugget_id, f"A nugget id of query {query_id!r}"): _nugget(
                    fields, f"nugget {nugget_id!r} of query {query_id!r}"
                )
                for nugget_id, fields in of_query.items()
            }
        return cls(data)

    @classmethod
    def from_json(cls, path: PathLike) -> Nuggets:
        """Read the :meth:`to_json` document, a plain ``{qid: {nugget_id: {...}}}`` object,
        or JSONL records ``{"query_id", "nugget_id", "text", "vital", "support"}``."""
        obj = read_json_or_jsonl(path)
        source = os.fspath(path)
        if isinstance(obj, Mapping) and "query_id" in obj and "nugget_id" in obj:
            obj = [obj]  # a JSONL file of one record
        if isinstance(obj, Mapping) and obj.get("format") == _FORMAT:
            if not isinstance(obj.get("nuggets"), Mapping):
                raise InputFormatError(f"{source}: a {_FORMAT} document needs a 'nuggets' object.")
            return cls.from_dict(obj["nuggets"])
        if isinstance(obj, Mapping):
            return cls.from_dict(obj)
        if isinstance(obj, list):
            return cls.from_dict(_records(obj, source))
        raise InputFormatError(f"{source}: nuggets are a JSON object or JSONL records.")

    # --- writing ------------------------------------------------------------------------

    def to_dict(self) -> dict[str, dict[str, dict[str, Any]]]:
        """The plain form :meth:`from_dict` reads."""
        return {
            q: {
                n: {"text": x.text, "vital": x.vital, "support": list(x.support)}
                for n, x in of_query.items()
            }
            for q, of_query in self._data.items()
        }

    def to_json(self, path: PathLike | None = None) -> str:
        """Serialize (written atomically to ``path`` when given)."""
        text = json.dumps(
            {"format": _FORMAT, "version": 1, "nuggets": self.to_dict()}, ensure_ascii=False
        )
        if path is not None:
            write_text(path, text)
        return text

    def to_jsonl(self, path: PathLike | None = None) -> str:
        """One record a nugget: ``{"query_id", "nugget_id", "text", "vital", "support"}``."""
        lines = [
            json.dumps({"query_id": q, "nugget_id": n, **fields}, ensure_ascii=False)
            for q, of_query in self.to_dict().items()
            for n, fields in of_query.items()
        ]
        text = "".join(line + "\n" for line in lines)
        if path is not None:
            write_text(path, text)
        return text

    # --- the mapping --------------------------------------------------------------------

    def __getitem__(self, query_id: str) -> Mapping[str, Nugget]:
        return self._data[query_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    @property
    def query_ids(self) -> tuple[str, ...]:
        return tuple(self._data)

    @property
    def n_nuggets(self) -> int:
        """How many nuggets, over every query."""
        return sum(len(n) for n in self._data.values())

    @property
    def n_vital(self) -> int:
        """How many vital nuggets, over every query."""
        return sum(x.vital for n in self._data.values() for x in n.values())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Nuggets):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Nuggets({len(self)} queries, {self.n_nuggets} nuggets, {self.n_vital} vital)"


def _check_id(value: object, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise InputFormatError(f"{what} must be a non-empty string; got {value!r}.")
    return value


def _nugget(fields: object, where: str) -> Nugget:
    if isinstance(fields, Nugget):
        return fields
    if not isinstance(fields, Mapping):
        raise InputFormatError(
            f"The {where} must be an object with 'text', 'vital' and 'support'; got "
            f"{type(fields).__name__}."
        )
    unknown = sorted(set(map(str, fields)) - {"text", "vital", "support"})
    if unknown:
        raise InputFormatError(
            f"The {where} has unknown field(s) {', '.join(map(repr, unknown))}; a nugget has "
            f"'text', 'vital' and 'support'."
        )
    text = fields.get("text", "")
    if not isinstance(text, str):
        raise InputFormatError(f"The text of the {where} must be a string; got {text!r}.")
    vital = fields.get("vital", False)
    if not isinstance(vital, bool):
        raise InputFormatError(
            f"'vital' of the {where} must be true or false; got {vital!r} (TREC RAG's "
            f"'okay' nuggets are vital: false)."
        )
    support = fields.get("support", ())
    if isinstance(support, str | bytes) or not isinstance(support, Sequence):
        raise InputFormatError(
            f"'support' of the {where} must be a list of doc ids; got {support!r}."
        )
    for doc in support:
        _check_id(doc, f"A supporting doc id of the {where}")
    return Nugget(text, vital, tuple(dict.fromkeys(support)))


def _records(rows: list[Any], source: str) -> dict[str, dict[str, Any]]:
    """JSONL records ``{"query_id", "nugget_id", ...}`` as the nested form."""
    nested: dict[str, dict[str, Any]] = {}
    for number, row in enumerate(rows, 1):
        if not isinstance(row, Mapping) or "query_id" not in row or "nugget_id" not in row:
            raise InputFormatError(
                f"{source}, record {number}: a nugget record has 'query_id', 'nugget_id', "
                f"'text', 'vital' and 'support'; got {row!r:.100}."
            )
        fields = {k: v for k, v in row.items() if k not in ("query_id", "nugget_id")}
        of_query = nested.setdefault(
            _check_id(row["query_id"], f"{source}, record {number}: the query id"), {}
        )
        nugget_id = _check_id(row["nugget_id"], f"{source}, record {number}: the nugget id")
        if nugget_id in of_query:
            raise InputFormatError(
                f"{source}, record {number}: nugget {nugget_id!r} of query "
                f"{row['query_id']!r} appears twice."
            )
        of_query[nugget_id] = fields
    return nested
