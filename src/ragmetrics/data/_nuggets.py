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
from itertools import chain, count, repeat
from types import MappingProxyType
from typing import Any, NamedTuple

import numpy as np

from ragmetrics._util.arrays import offsets_of
from ragmetrics._util.gc import without_gc
from ragmetrics.data._store import Store
from ragmetrics.errors import InputFormatError
from ragmetrics.formats._atomic import write_text
from ragmetrics.formats._convert import plain_ids, read_json_or_jsonl
from ragmetrics.formats._io import PathLike

__all__ = ["Nugget", "Nuggets", "Support"]

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

    __slots__ = ("_data", "_n_vital", "_support")

    def __init__(self, data: Mapping[str, Mapping[str, Nugget]]) -> None:
        """Prefer :meth:`from_dict`; this one takes checked :class:`Nugget` values."""
        self._own({q: dict(n) for q, n in data.items()})

    def _own(self, data: dict[str, dict[str, Nugget]]) -> None:
        """Take ``data`` as these nuggets (not copied: no one else holds its dicts)."""
        self._data = {q: MappingProxyType(n) for q, n in data.items()}
        self._support: Support | None = None
        self._n_vital: int | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as plain dicts (a worker process of a streamed evaluation gets a copy)."""
        return (Nuggets, ({q: dict(n) for q, n in self._data.items()},))

    # --- reading ------------------------------------------------------------------------

    @classmethod
    @without_gc
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
            made: dict[str, Nugget] = {}
            for nugget_id, fields in of_query.items():
                nugget = _plain_nugget(nugget_id, fields)
                if nugget is None:  # anything less plain: checked field by field, named
                    _check_id(nugget_id, f"A nugget id of query {query_id!r}")
                    nugget = _nugget(fields, f"nugget {nugget_id!r} of query {query_id!r}")
                made[nugget_id] = nugget
            data[query_id] = made
        built = cls.__new__(cls)
        built._own(data)  # the dicts just made
        return built

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

    def support(self, query_ids: Sequence[str] | None = None) -> Support:
        """The nuggets as flat columns (:class:`Support`), to be located in runs; made on
        first use and kept (the nuggets never change, and every evaluation asks).
        ``query_ids``: only those queries' nuggets are needed (a query scored alone): laid
        out for them, not kept, unless every query's are kept already."""
        if self._support is None and query_ids is not None:
            data = self._data
            return _support({q: data[q] for q in dict.fromkeys(query_ids) if q in data})
        if self._support is None:
            self._support = _support(self._data)
        return self._support

    @property
    def n_nuggets(self) -> int:
        """How many nuggets, over every query."""
        return sum(map(len, self._data.values()))

    @property
    def n_vital(self) -> int:
        """How many vital nuggets, over every query (counted once: every evaluation's
        settings name it)."""
        if self._n_vital is None:
            every = (x.vital for of_query in self._data.values() for x in of_query.values())
            self._n_vital = sum(every)
        return self._n_vital

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Nuggets):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Nuggets({len(self)} queries, {self.n_nuggets} nuggets, {self.n_vital} vital)"


class Support(NamedTuple):
    """The nuggets of every query that has one, as flat columns, to be located in runs.

    ``docs``: one row per such query (in the nuggets' order) holding every doc that
    supports one of its nuggets, each once, valued by its index among all rows' docs
    (flat). ``counts`` and ``vital``: each row's number of nuggets, and each nugget's flag
    (flat, row after row). Every (doc, nugget) pair, grouped by doc: the pairs of flat doc
    ``d`` are ``pair_nuggets[starts[d]:starts[d] + sizes[d]]``, each the nugget's index in
    its query, in the order the nuggets were given."""

    docs: Store
    counts: np.ndarray
    vital: np.ndarray
    pair_nuggets: np.ndarray
    starts: np.ndarray
    sizes: np.ndarray


def _support(data: Mapping[str, Mapping[str, Nugget]]) -> Support:
    query_ids = [query_id for query_id, of_query in data.items() if of_query]
    docs: list[tuple[str, ...]] = []
    pair_docs: list[int] = []
    pair_nuggets: list[int] = []
    vital: list[bool] = []
    n_docs = 0
    for query_id in query_ids:
        nuggets = data[query_id].values()
        supports = [nugget.support for nugget in nuggets]
        named = tuple(dict.fromkeys(chain.from_iterable(supports)))  # each doc once
        index = dict(zip(named, count(n_docs)))  # its flat index
        n_docs += len(named)
        docs.append(named)
        pair_docs.extend(map(index.__getitem__, chain.from_iterable(supports)))
        each = map(repeat, range(len(supports)), map(len, supports))
        pair_nuggets.extend(chain.from_iterable(each))
        vital.extend(nugget.vital for nugget in nuggets)
    store = Store.from_tuples(query_ids, docs, np.arange(n_docs, dtype=np.float64))
    flat_docs = np.array(pair_docs, dtype=np.int64)
    order = np.argsort(flat_docs, kind="stable")
    sizes = np.bincount(flat_docs, minlength=n_docs)
    return Support(
        store,
        np.array([len(data[query_id]) for query_id in query_ids], dtype=np.int64),
        np.array(vital, dtype=bool),
        np.array(pair_nuggets, dtype=np.int64)[order],
        offsets_of(sizes)[:-1],
        sizes,
    )


def _check_id(value: object, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise InputFormatError(f"{what} must be a non-empty string; got {value!r}.")
    return value


_FIELDS = frozenset({"text", "vital", "support"})


def _plain_nugget(nugget_id: object, fields: object) -> Nugget | None:
    """The nugget of a plain record (a non-empty string id; a dict of known fields, a str
    text, a bool flag, a list or tuple of non-empty string ids), checked in full at a
    fraction of :func:`_nugget`'s cost; None for anything else, which :func:`_nugget` then
    checks field by field (and names what is wrong)."""
    if type(nugget_id) is not str or not nugget_id or type(fields) is not dict:
        return None
    if not fields.keys() <= _FIELDS:
        return None
    text, vital = fields.get("text", ""), fields.get("vital", False)
    support = fields.get("support", ())
    if type(text) is not str or type(vital) is not bool or type(support) not in (list, tuple):
        return None
    support = tuple(support)
    if not plain_ids(support):
        return None  # an empty id, or one that is not a str
    return Nugget(text, vital, tuple(dict.fromkeys(support)))


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
