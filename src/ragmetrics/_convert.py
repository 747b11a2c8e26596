"""Validation helpers shared by the constructors of Qrels and Run."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from itertools import chain
from typing import Any

import numpy as np

from ragmetrics.errors import InputFormatError


def require_mapping(value: object, what: str, example: str) -> Mapping[Any, Any]:
    """Raise unless ``value`` is a mapping; ``what`` must be ``example``."""
    if not isinstance(value, Mapping):
        raise InputFormatError(f"{what} must be {example}; got {type(value).__name__}.")
    return value


def check_ids(ids: Iterable[object], what: str, context: str) -> None:
    """Raise unless every id is a non-empty ``str``."""
    if set(map(type, ids)) <= {str}:
        return
    bad = next(i for i in ids if not isinstance(i, str))
    raise InputFormatError(
        f"{what} {context} must be strings; got {bad!r} of type {type(bad).__name__}. "
        f"Convert ids with str() before building."
    )


def float_values(
    values: Iterable[object], count: int, locate: Iterator[tuple[str, str, object]], what: str
) -> np.ndarray:
    """Convert scores to float64, naming the query and document of a bad value."""
    try:
        array = np.fromiter(values, dtype=np.float64, count=count)
    except (TypeError, ValueError):
        for query_id, doc_id, value in locate:
            try:
                float(value)  # type: ignore[arg-type]
            except (TypeError, ValueError):
                raise InputFormatError(
                    f"The {what} of '{doc_id}' for query '{query_id}' must be a number; "
                    f"got {value!r} of type {type(value).__name__}."
                ) from None
        raise
    if np.isnan(array).any():
        for query_id, doc_id, value in locate:
            if value != value:
                raise InputFormatError(
                    f"The {what} of '{doc_id}' for query '{query_id}' is NaN; "
                    f"give every result a real number (or drop it)."
                )
    return array


def int_grade(value: object, query_id: str, doc_id: str) -> int:
    """Accept ints and integral floats as grades; anything else is a clear error."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
    raise InputFormatError(
        f"The grade of '{doc_id}' for query '{query_id}' must be an integer "
        f"(0 or negative for non-relevant); got {value!r} of type {type(value).__name__}."
    )


def iter_items(data: Mapping[str, Mapping[str, object]]) -> Iterator[tuple[str, str, object]]:
    for query_id, docs in data.items():
        for doc_id, value in docs.items():
            yield query_id, doc_id, value


def flat_keys(data: Mapping[str, Mapping[str, object]]) -> list[str]:
    return list(chain.from_iterable(data.values()))


def read_json_or_jsonl(path: str | os.PathLike[str]) -> Any:
    """Load a JSON document, or a JSONL file as a list of records."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise InputFormatError(f"No such file: '{os.fspath(path)}'.") from None
    stripped = text.lstrip()
    if not stripped:
        raise InputFormatError(f"{os.fspath(path)}: the file is empty.")
    as_lines = os.fspath(path).lower().endswith(".jsonl")
    try:
        if as_lines:
            raise json.JSONDecodeError("JSON Lines", text, 0)
        return json.loads(text)
    except json.JSONDecodeError as whole_error:
        records = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                if number == 1 and stripped.startswith(("{", "[")) and "\n" not in stripped:
                    raise InputFormatError(
                        f"{os.fspath(path)}: not valid JSON ({whole_error.msg} at line "
                        f"{whole_error.lineno}, column {whole_error.colno})."
                    ) from None
                raise InputFormatError(
                    f"{os.fspath(path)}, line {number}: not valid JSON or JSONL "
                    f"({exc.msg}, column {exc.colno})."
                ) from None
        return records


def pick_key(record: Mapping[str, Any], names: tuple[str, ...], path: str, line: int) -> Any:
    for name in names:
        if name in record:
            return record[name]
    raise InputFormatError(
        f"{path}, record {line}: expected one of the keys {', '.join(names)}; "
        f"found {', '.join(map(str, record)) or 'none'}."
    )
