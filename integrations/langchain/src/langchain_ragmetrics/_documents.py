"""Conversion of LangChain documents into the ids and texts the core scores."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.documents import Document

from ragmetrics.errors import RagMetricsError


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
