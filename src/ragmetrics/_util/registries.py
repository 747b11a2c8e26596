"""The one rule of every registry (metric parameters, paired tests, input formats): a name
is registered once; registering the same entry again is harmless, another under its name is
refused."""

from __future__ import annotations

from typing import TypeVar

from ragmetrics.errors import InvalidParameterError

__all__ = ["add_entry"]

E = TypeVar("E")


def add_entry(table: dict[str, E], name: str, entry: E, what: str) -> E:
    """Put ``entry`` in ``table`` under ``name`` and return it; ``what`` names the kind in
    the error (``"a paired test"``)."""
    known = table.get(name)
    if known is not None and known != entry:
        raise InvalidParameterError(
            f"{what[0].upper()}{what[1:]} named {name!r} is already registered; register "
            f"yours under another name."
        )
    table[name] = entry
    return entry
