"""Files into the data model: every input format declared once (the readers of qrels and
runs, how a path is recognised by suffix then by its first bytes, and, for runs, a streaming
reader).

:func:`read_qrels`, :func:`read_run`, :func:`~ragmetrics.evaluate_stream` and the command
line find a path's format here, so a format registered with :func:`register_format` is read
by all of them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragmetrics._util.plugins import load_plugins
from ragmetrics._util.registries import add_entry
from ragmetrics.errors import InputFormatError

if TYPE_CHECKING:
    from ragmetrics.data._qrels import Qrels
    from ragmetrics.data._run import Run

__all__ = [
    "InputFormat",
    "find_format",
    "formats",
    "read_qrels",
    "read_run",
    "register_format",
]

PathLike = str | os.PathLike[str]
_HEAD = 1 << 16  # bytes a sniffer sees


@dataclass(frozen=True)
class InputFormat:
    """A file format of qrels and runs.

    Attributes:
        name: a short name (``"trec"``, ``"json"``, ``"parquet"``).
        suffixes: file name endings that name the format (``".parquet"``), lower case.
        sniff: given the first 64 kB of a file whose suffix names no format, True when the
            file is in this format (``None``: recognised by suffix only).
        read_qrels: ``path -> Qrels``.
        read_run: ``(path, name) -> Run``.
        stream_run: ``(path, batch_rows, columns, name) -> Runs`` of whole queries, in
            bounded memory; ``None`` when the format cannot be streamed.
        stream_chunks: ``(path, batch_rows, columns) -> Chunks``: the rows in file order,
            whatever their grouping (``formats._stream_io.Chunk``); a streamed run whose
            queries are scattered is grouped from them (``data._batches.regrouped``).
            ``None``: such a run is refused.
        directories: a folder of such files is read as one input (Parquet datasets).
    """

    name: str
    suffixes: tuple[str, ...]
    sniff: Callable[[bytes], bool] | None
    read_qrels: Callable[[PathLike], Qrels]
    read_run: Callable[[PathLike, str | None], Run]
    stream_run: Callable[[PathLike, int, Any, str | None], Iterator[Run]] | None = None
    directories: bool = False
    stream_chunks: Callable[[PathLike, int, Any], Iterator[Any]] | None = None


_FORMATS: dict[str, InputFormat] = {}
_FALLBACK = "trec"  # what a file that no suffix or sniffer claims is read as


def register_format(spec: InputFormat) -> InputFormat:
    """Make ``spec`` a format every reader of a path recognises; returns it."""
    return add_entry(_FORMATS, spec.name, spec, "an input format")


def formats() -> dict[str, InputFormat]:
    """name -> :class:`InputFormat` of every registered format (plug-ins' too)."""
    _builtin()
    load_plugins()
    return dict(_FORMATS)


def find_format(path: PathLike, format: str | None = None) -> InputFormat:
    """The format of ``path``: ``format`` when given, else the one whose suffix ends the
    name, else the one whose sniffer claims its first bytes, else TREC."""
    _builtin()
    if format is not None:
        spec = _FORMATS.get(format) if isinstance(format, str) else None
        if spec is None and isinstance(format, str) and load_plugins():
            spec = _FORMATS.get(format)
        if spec is None:
            raise InputFormatError(
                f"Unknown input format {format!r}; the formats are {', '.join(_FORMATS)}."
            )
        return spec
    text = os.fspath(path)
    lower = text.lower()
    if text != "-" and os.path.isdir(text):
        for spec in _FORMATS.values():
            if spec.directories:
                return spec
    for spec in _FORMATS.values():
        if lower.endswith(spec.suffixes):
            return spec
    head = _head(text)
    for spec in _FORMATS.values():
        if spec.sniff is not None and head and spec.sniff(head):
            return spec
    return _FORMATS[_FALLBACK]


def read_qrels(path: PathLike, *, format: str | None = None) -> Qrels:
    """Read qrels in any registered format (TREC, JSON/JSONL, Parquet, ...): ``format`` when
    given, else recognised by the path's suffix, then by its first bytes, else TREC."""
    return find_format(_checked_path(path), format).read_qrels(path)


def read_run(path: PathLike, *, format: str | None = None, name: str | None = None) -> Run:
    """Read a run in any registered format (TREC, JSON/JSONL, Parquet, ...): ``format`` when
    given, else recognised by the path's suffix, then by its first bytes, else TREC."""
    if name is not None and not isinstance(name, str):
        raise InputFormatError(f"A run's name is a string; got {type(name).__name__}.")
    return find_format(_checked_path(path), format).read_run(path, name)


def _checked_path(path: object) -> PathLike:
    if not isinstance(path, str | os.PathLike) or path == "":
        raise InputFormatError(f"A path is a string or a path object; got {path!r}.")
    return path


def _head(path: str) -> bytes:
    """The first bytes of a file (b"" for standard input or a file that cannot be read:
    the reader chosen then says what is wrong)."""
    if path == "-":
        return b""
    try:
        with open(path, "rb") as handle:
            return handle.read(_HEAD)
    except OSError:
        return b""


def _builtin() -> None:
    """Register TREC, JSON and Parquet on first use (their readers load numpy)."""
    if _FALLBACK in _FORMATS:
        return
    from ragmetrics.data._batches import batches, input_size
    from ragmetrics.data._qrels import Qrels
    from ragmetrics.data._run import Run
    from ragmetrics.formats import _stream_io

    def streamed(
        chunks: Callable[[PathLike, int, Any], Iterator[Any]],
    ) -> Callable[[PathLike, int, Any, str | None], Iterator[Run]]:
        """A format's ``stream_run``: its ``stream_chunks`` cut into batches of whole queries."""
        return lambda path, rows, columns, name: batches(
            chunks(path, rows, columns), rows, os.fspath(path), name, input_bytes=input_size(path)
        )

    def trec_chunks(path: PathLike, rows: int, columns: Any) -> Iterator[Any]:
        return _stream_io.trec_chunks(path, regroup=True)

    def parquet_chunks(path: PathLike, rows: int, columns: Any) -> Iterator[Any]:
        return _stream_io.parquet_chunks(path, columns, rows)

    register_format(
        InputFormat(
            name="trec",
            suffixes=(),
            sniff=None,
            read_qrels=Qrels.from_trec,
            read_run=lambda path, name: Run.from_trec(path, name=name),
            stream_run=streamed(trec_chunks),
            stream_chunks=trec_chunks,
        )
    )
    register_format(
        InputFormat(
            name="tsv",
            suffixes=(".tsv",),
            sniff=_three_columns,
            read_qrels=Qrels.from_tsv,
            read_run=_no_tsv_run,
        )
    )
    register_format(
        InputFormat(
            name="json",
            suffixes=(".json", ".jsonl"),
            sniff=_looks_like_json,
            read_qrels=Qrels.from_json,
            read_run=lambda path, name: Run.from_json(path, name=name),
        )
    )
    register_format(
        InputFormat(
            name="parquet",
            suffixes=(".parquet",),
            sniff=lambda head: head[:4] == b"PAR1",
            read_qrels=Qrels.from_parquet,
            read_run=lambda path, name: Run.from_parquet(path, name=name),
            stream_run=streamed(parquet_chunks),
            directories=True,
            stream_chunks=parquet_chunks,
        )
    )


def _looks_like_json(head: bytes) -> bool:
    """True when a file starts as JSON does (``{`` or ``[``), unless its first line is a TREC
    line: a run's query id may begin with a bracket (``[ Q0 doc 1 0.5 tag``)."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text[:1] not in (b"{", b"["):
        return False
    fields = text.split(b"\n", 1)[0].split()
    trec_run = len(fields) == 6 and fields[1] in (b"Q0", b"q0", b"0")
    trec_qrels = len(fields) == 4 and fields[1] == b"0" and fields[3].lstrip(b"-").isdigit()
    return not (trec_run or trec_qrels)


def _three_columns(head: bytes) -> bool:
    """True when the first record of a file has three fields (3-column qrels, BEIR's TSV)."""
    if head[:2] == b"\x1f\x8b":  # gzip: a compressed TREC file
        return False
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if len(head) < _HEAD or exc.start < len(head) - 4:
            return False  # not text
        text = head[: exc.start].decode("utf-8")  # a character cut at the end of the head
    lines = text.lstrip("\ufeff").splitlines()
    if len(head) == _HEAD:
        lines = lines[:-1]  # maybe cut short
    for line in lines:
        fields = line.split()
        if fields and fields[0][0] != "#":
            return len(fields) == 3
    return False


def _no_tsv_run(path: PathLike, name: str | None) -> Run:
    """Three columns are not a run: the TREC reader names the line and the layout."""
    from ragmetrics.data._run import Run

    return Run.from_trec(path, name=name)
