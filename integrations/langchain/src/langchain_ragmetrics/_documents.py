"""Conversion of LangChain documents into the ids and texts the core scores."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.documents import Document

from ragmetrics.adapters import IdFieldWarning, RagMetricsError, warn


def _fields(doc: Document | Mapping[str, Any]) -> tuple[str | None, dict[str, Any], str]:
    if isinstance(doc, Document):
        return doc.id, dict(doc.metadata), doc.page_content
    if isinstance(doc, Mapping):  # a serialized document, as in traced run outputs
        kwargs = doc.get("kwargs", doc)
        return (
            kwargs.get("id"),
            dict(kwargs.get("metadata") or {}),
            str(kwargs.get("page_content", "")),
        )
    raise RagMetricsError(f"Expected LangChain Documents; got {type(doc).__name__}.")


def content_hash(text: str) -> str:
    """A stable id for a document without one: ``"sha256:"`` + 16 hex digits of its text."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def document_id(doc: Document | Mapping[str, Any], id_key: str | None = None) -> str:
    """The id of one document.

    ``metadata[id_key]`` when ``id_key`` is given and present (a vector store sets
    ``Document.id`` to its own uuid, so your ids usually live in metadata), else
    ``Document.id``, else :func:`content_hash` of the page content (stable across runs).
    """
    doc_id, metadata, text = _fields(doc)
    if id_key is not None and metadata.get(id_key) not in (None, ""):
        return str(metadata[id_key])
    if doc_id:
        return str(doc_id)
    return content_hash(text)


def document_ids(
    docs: Sequence[Document | Mapping[str, Any]], id_key: str | None = None
) -> list[str]:
    """The ids of ``docs`` in order (see :func:`document_id`)."""
    return [document_id(d, id_key) for d in docs]


def document_texts(docs: Sequence[Document | Mapping[str, Any]]) -> list[str]:
    """The page contents of ``docs`` in order."""
    return [_fields(d)[2] for d in docs]


def id_hint(id_key: str | None) -> str:
    """What to try when the ids read from documents are none of the judged ones."""
    if id_key is None:
        return (
            " The documents were identified by Document.id (a vector store sets its own "
            "uuid there) or a content hash: pass id_key=<the metadata key holding your doc "
            "ids>, or match_texts=True to map texts to the corpus."
        )
    return f" The documents were identified by metadata[{id_key!r}]; check the key."


class DocumentIds:
    """:func:`document_ids` that warns once when ``id_key`` is missing from a document's
    metadata (the id then falls back to ``Document.id`` or a content hash, which the
    judgments rarely use)."""

    def __init__(self, id_key: str | None) -> None:
        if id_key is not None and (not isinstance(id_key, str) or not id_key):
            raise RagMetricsError(f"id_key must be a metadata key (a string); got {id_key!r}.")
        self.id_key = id_key
        self._warned = False
        self._lock = threading.Lock()

    def __call__(self, docs: Sequence[Document | Mapping[str, Any]]) -> list[str]:
        id_key = self.id_key
        if id_key is not None and not self._warned:
            lacking = [_fields(d)[1] for d in docs if _fields(d)[1].get(id_key) in (None, "")]
            if lacking:
                self._warn(id_key, len(lacking), len(docs), lacking[0])
        return document_ids(docs, id_key)

    def _warn(self, id_key: str, n_lacking: int, n_docs: int, metadata: dict[str, Any]) -> None:
        with self._lock:
            if self._warned:
                return
            self._warned = True
        keys = ", ".join(map(repr, sorted(metadata))) or "none"
        warn(
            f"id_key={id_key!r} is not in the metadata of {n_lacking} of {n_docs} retrieved "
            f"documents (their metadata keys: {keys}); those are identified by Document.id "
            f"or a content hash instead. Check the spelling of id_key.",
            IdFieldWarning,
        )
