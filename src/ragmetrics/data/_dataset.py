"""A retrieval evaluation set: queries, a corpus, and the relevant docs of each query."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from ragmetrics.data._qrels import Qrels
from ragmetrics.errors import InputFormatError
from ragmetrics.formats._atomic import write_text
from ragmetrics.formats._convert import loads_strict, read_text
from ragmetrics.formats._io import PathLike

__all__ = [
    "RetrievalDataset",
    "as_dataset",
]


class RetrievalDataset(BaseModel):
    """Queries, corpus and graded relevant docs, with a JSON round-trip.

    ``relevant_docs`` maps a query id to a list of doc ids (grade 1 each) or to a mapping of
    doc id to grade. ``from_json`` also reads the JSON that LlamaIndex's former
    ``EmbeddingQAFinetuneDataset`` wrote (``queries``, ``corpus``, ``relevant_docs``, ``mode``).
    ``query_metadata`` (query id -> fields such as ``{"topic": "finance", "lang": "de"}``)
    is optional; :meth:`segments` turns it into the ``segments=`` of evaluate and compare.
    ``relevant_docs`` is optional too: questions and a corpus without labels are what
    :func:`ragmetrics.goldset.grade` grades, and its ``GoldSet.qrels`` are the labels then.

    Example:
        >>> ds = RetrievalDataset(queries={"q1": "who?"}, corpus={"d1": "text"},
        ...                       relevant_docs={"q1": ["d1"]})
        >>> ds.qrels["q1"]["d1"]
        1
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    queries: dict[str, str]
    corpus: dict[str, str] = {}
    relevant_docs: dict[str, dict[str, int]] = {}
    mode: str = "text"
    query_metadata: dict[str, dict[str, Any]] = {}

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise InputFormatError(f"Not a retrieval dataset: {_first_error(exc)}.") from None

    @field_validator("relevant_docs", mode="before")
    @classmethod
    def _grades(cls, value: Any) -> Any:
        if not isinstance(value, Mapping):
            return value
        normalized: dict[str, Any] = {}
        for query_id, docs in value.items():
            if isinstance(docs, str):
                raise InputFormatError(
                    f"the relevant docs of query '{query_id}' must be a list of ids or a "
                    f'mapping of id to grade; got the string {docs!r} (write ["{docs}"])'
                )
            if isinstance(docs, Sequence):
                normalized[query_id] = dict.fromkeys(docs, 1)
            else:
                normalized[query_id] = docs
        return normalized

    @model_validator(mode="after")
    def _consistent(self) -> RetrievalDataset:
        stray = [q for q in self.query_metadata if q not in self.queries]
        if stray:
            raise InputFormatError(
                f"query_metadata names queries that are not in queries: {stray[:5]}"
            )
        unknown = [q for q in self.relevant_docs if q not in self.queries]
        if unknown:
            raise InputFormatError(
                f"relevant_docs names queries that are not in queries: {unknown[:5]}"
            )
        if self.corpus:
            absent = sorted(
                {d for docs in self.relevant_docs.values() for d in docs if d not in self.corpus}
            )
            if absent:
                raise InputFormatError(
                    f"relevant_docs names docs that are not in the corpus: {absent[:5]}; "
                    f"add them to the corpus or leave the corpus empty"
                )
        return self

    def segments(self, by: str | Any) -> dict[str, Any]:
        """Query id -> segment, from the queries' metadata: ``by`` names a field
        (``"topic"``), or is a function of a query's metadata dict. A query without
        metadata, or without the field, gets None: it is left out of every slice, counted.

        Example:
            >>> ds = RetrievalDataset(queries={"q1": "a?", "q2": "b?"}, relevant_docs={"q1": ["d"]},
            ...                       query_metadata={"q1": {"topic": "legal"}})
            >>> ds.segments("topic")
            {'q1': 'legal', 'q2': None}
        """
        if isinstance(by, str):
            return {q: self.query_metadata.get(q, {}).get(by) for q in self.queries}
        if callable(by):
            return {q: by(self.query_metadata.get(q, {})) for q in self.queries}
        raise InputFormatError(
            f"segments(by) takes a metadata field name or a function of a query's metadata; "
            f"got {type(by).__name__}."
        )

    @property
    def qrels(self) -> Qrels:
        """The relevant docs as :class:`Qrels`."""
        return Qrels.from_dict(self.relevant_docs)

    def __len__(self) -> int:
        return len(self.queries)

    @classmethod
    def from_qrels(
        cls, qrels: Qrels, queries: Mapping[str, str], corpus: Mapping[str, str] | None = None
    ) -> RetrievalDataset:
        """Build from judgments and the query texts (only judged queries are kept)."""
        return cls(
            queries={q: queries[q] for q in qrels.query_ids if q in queries},
            corpus=dict(corpus or {}),
            relevant_docs=qrels.to_dict(),
        )

    @classmethod
    def from_beir(
        cls, folder: PathLike, split: str = "test", *, with_titles: bool = True
    ) -> RetrievalDataset:
        """Read a BEIR dataset folder: ``corpus.jsonl`` (``_id``, ``title``, ``text``),
        ``queries.jsonl`` (``_id``, ``text``) and ``qrels/{split}.tsv`` (a header, then
        ``query-id corpus-id score``). As BEIR's loader does, only the queries judged in the
        split are kept; with ``with_titles`` a passage is its title and text, joined by a
        line break (BEIR's models read both)."""
        from pathlib import Path

        root = Path(folder)
        qrels_path = root / "qrels" / f"{split}.tsv"
        for needed in (root / "corpus.jsonl", root / "queries.jsonl", qrels_path):
            if not needed.is_file():
                splits = sorted(p.stem for p in (root / "qrels").glob("*.tsv"))
                offered = f" (the splits there: {', '.join(splits)})" if splits else ""
                raise InputFormatError(
                    f"{folder} is not a BEIR dataset folder: {needed.name} is missing"
                    f"{offered if needed == qrels_path else ''}. A BEIR folder holds "
                    f"corpus.jsonl, queries.jsonl and qrels/<split>.tsv."
                )
        qrels = Qrels.from_tsv(qrels_path)
        queries = {qid: text for qid, text, _ in _jsonl_records(root / "queries.jsonl", "query")}
        corpus = {}
        for doc_id, text, title in _jsonl_records(root / "corpus.jsonl", "passage"):
            corpus[doc_id] = f"{title}\n{text}" if with_titles and title else text
        unknown = [q for q in qrels.query_ids if q not in queries]
        if unknown:
            raise InputFormatError(
                f"{qrels_path} judges {len(unknown)} queries that queries.jsonl lacks "
                f"({', '.join(map(repr, unknown[:3]))}{', ...' if len(unknown) > 3 else ''})."
            )
        return cls.from_qrels(qrels, queries, corpus)

    def to_json(self, path: PathLike | None = None, *, indent: int | None = None) -> str:
        """Serialize; write to ``path`` when given. Grades are kept."""
        text = json.dumps(self.model_dump(), indent=indent, ensure_ascii=False)
        if path is not None:
            write_text(path, text)
        return text

    @classmethod
    def from_json(cls, path: PathLike) -> RetrievalDataset:
        """Read our JSON or the legacy ``EmbeddingQAFinetuneDataset`` JSON."""
        try:
            payload = loads_strict(read_text(path), path)
        except json.JSONDecodeError as exc:
            raise InputFormatError(
                f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})."
            ) from None
        except RecursionError:
            raise InputFormatError(f"{path}: the JSON is nested too deeply.") from None
        try:
            return cls.model_validate(payload)
        except ValidationError as exc:
            raise InputFormatError(
                f"{path}: not a retrieval dataset: {_first_error(exc)}"
            ) from None


def as_dataset(value: Any) -> RetrievalDataset:
    """``value`` as a :class:`RetrievalDataset`: one already, or anything that has
    ``queries`` and ``relevant_docs`` (and optionally ``corpus`` and ``mode``) as
    attributes or keys, such as LlamaIndex's ``EmbeddingQAFinetuneDataset`` (no import of
    it needed).

    Example:
        >>> class Legacy:  # what an EmbeddingQAFinetuneDataset looks like
        ...     queries = {"q1": "who?"}
        ...     corpus = {"d1": "text"}
        ...     relevant_docs = {"q1": ["d1"]}
        >>> dict(as_dataset(Legacy()).qrels["q1"])
        {'d1': 1}
    """
    if isinstance(value, RetrievalDataset):
        return value
    fields = ("queries", "corpus", "relevant_docs", "mode")
    if isinstance(value, Mapping):
        found = {k: value[k] for k in fields if k in value}
    else:
        found = {k: getattr(value, k) for k in fields if hasattr(value, k)}
    if "queries" not in found or "relevant_docs" not in found:
        raise InputFormatError(
            f"Expected a retrieval dataset: a ragmetrics.RetrievalDataset, or an object with "
            f"queries and relevant_docs (as LlamaIndex's EmbeddingQAFinetuneDataset); got "
            f"{type(value).__name__}. Read a JSON file with RetrievalDataset.from_json(path)."
        )
    return RetrievalDataset(**{k: v for k, v in found.items() if v is not None})


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error.get("loc", ()))
    message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def _jsonl_records(path: Any, what: str) -> Iterator[tuple[str, str, str]]:
    """``(_id, text, title)`` of each line of a BEIR JSONL file, checked."""
    with open(path, encoding="utf-8-sig") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputFormatError(f"{path}, line {number}: not JSON ({exc.msg}).") from None
            if not isinstance(record, dict) or not isinstance(record.get("_id"), str):
                raise InputFormatError(
                    f"{path}, line {number}: a {what} record needs a string '_id' (BEIR's "
                    f'layout: {{"_id": ..., "text": ...}}).'
                )
            text, title = record.get("text", ""), record.get("title", "") or ""
            if not isinstance(text, str) or not isinstance(title, str):
                raise InputFormatError(f"{path}, line {number}: 'text' and 'title' are strings.")
            yield record["_id"], text, title
