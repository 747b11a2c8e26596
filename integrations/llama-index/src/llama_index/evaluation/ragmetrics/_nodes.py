"""Conversion of LlamaIndex nodes into the ids and texts the core scores."""

from __future__ import annotations

from collections.abc import Sequence

from llama_index.core.schema import BaseNode, MetadataMode, NodeWithScore

from ragmetrics.adapters import RagMetricsError

NodeLike = BaseNode | NodeWithScore


def _node(item: NodeLike) -> BaseNode:
    if isinstance(item, NodeWithScore):
        return item.node
    if isinstance(item, BaseNode):
        return item
    raise RagMetricsError(
        f"Expected LlamaIndex nodes (BaseNode or NodeWithScore); got {type(item).__name__}."
    )


def check_id_field(id_field: str) -> str:
    """``id_field`` if it is one the adapter reads, else an error naming them."""
    if id_field in ("node_id", "ref_doc_id") or (
        isinstance(id_field, str) and id_field.startswith("metadata:") and id_field[9:]
    ):
        return id_field
    raise RagMetricsError(
        f"id_field must be 'node_id', 'ref_doc_id' or 'metadata:<key>'; got {id_field!r}."
    )


def id_hint(id_field: str) -> str:
    """What to try when the ids read by ``id_field`` are none of the judged ones."""
    if id_field == "node_id":
        return (
            ' The nodes were read by id_field="node_id" (each chunk\'s own id): for '
            'document-level judgments pass id_field="ref_doc_id" (or "metadata:<key>"), or '
            "match_texts=True to map chunk texts to the corpus."
        )
    return f" The nodes were read by id_field={id_field!r}; check that it holds the judged ids."


def node_id(item: NodeLike, id_field: str = "node_id") -> str:
    """The id of one node: ``"node_id"``, ``"ref_doc_id"`` (its source document) or
    ``"metadata:<key>"`` (a metadata value)."""
    node = _node(item)
    value: object
    if id_field == "node_id":
        value = node.node_id
    elif id_field == "ref_doc_id":
        value = node.ref_doc_id
    else:  # "metadata:<key>", or an error naming the choices
        value = node.metadata.get(check_id_field(id_field).partition(":")[2])
    if value is None or value == "":
        raise RagMetricsError(
            f"Node {node.node_id!r} has no {id_field!r}; choose another id_field "
            f"(e.g. 'node_id') or set it when building the nodes."
        )
    return str(value)


def node_ids(nodes: Sequence[NodeLike], id_field: str = "node_id") -> list[str]:
    """The ids of ``nodes`` in order (see :func:`node_id`)."""
    return [node_id(n, id_field) for n in nodes]


def node_texts(
    nodes: Sequence[NodeLike], metadata_mode: MetadataMode = MetadataMode.NONE
) -> list[str]:
    """The texts of ``nodes`` in order; ``metadata_mode`` as in ``BaseNode.get_content``."""
    return [_node(n).get_content(metadata_mode=metadata_mode) for n in nodes]
