"""The one rule of every registry (metric parameters, paired tests, input formats): a name
is registered once; registering the same entry again is harmless, another under its name is
refused."""

from __future__ import annotations

from typing import Generic, TypeVar

from ragmetrics.errors import InvalidParameterError

__all__ = ["Aliased", "add_entry"]

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


class Aliased(Generic[E]):
    """A registry whose entries also answer to other names (``combsum`` for ``sum``):
    ``entries`` holds each under its own name only."""

    def __init__(self, what: str) -> None:
        self.entries: dict[str, E] = {}
        self._aliases: dict[str, str] = {}
        self._what = what

    def add(self, name: str, entry: E, *aliases: str) -> E:
        add_entry(self.entries, name, entry, self._what)
        for alias in aliases:
            self._aliases[alias] = name
        return entry

    def get(self, name: str) -> E | None:
        return self.entries.get(self._aliases.get(name, name))
