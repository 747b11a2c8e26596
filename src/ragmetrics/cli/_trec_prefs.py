"""Reading trec_eval's preference files (``-R prefs``: ``query group subgroup doc level``;
``-R qrels_prefs``: a qrels file, each value of its second column a group with one
subgroup). The counting and the measures are in ``ragmetrics.metrics._preferences``."""

from __future__ import annotations

from collections.abc import Iterator

from ragmetrics.metrics._preferences import Entry, PrefsError

__all__ = ["read_prefs"]


def read_prefs(
    lines: Iterator[tuple[int, list[str]]], *, from_qrels: bool
) -> dict[str, list[Entry]]:
    """The preference lines of each query (``from_qrels``: qrels lines, one subgroup)."""
    table: dict[str, list[Entry]] = {}
    width = 4 if from_qrels else 5
    for number, fields in lines:
        if len(fields) != width:
            raise PrefsError(
                f"ragmetrics trec_eval: line {number}: a {'qrels' if from_qrels else 'prefs'} "
                f"line has {width} fields; got {len(fields)}.",
                2,
            )
        try:
            level = float(fields[-1])
        except ValueError:
            raise PrefsError(
                f"ragmetrics trec_eval: line {number}: the level {fields[-1]!r} is not a number.",
                2,
            ) from None
        if from_qrels:
            query, group, doc = fields[0], fields[1], fields[2]
            table.setdefault(query, []).append((group, "0", doc, level))
        else:
            query, group, subgroup, doc = fields[:4]
            table.setdefault(query, []).append((group, subgroup, doc, level))
    return table
