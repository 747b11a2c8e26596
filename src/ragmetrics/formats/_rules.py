"""What every reader and writer accepts: the id rule, the line rule and the number rule.

docs/formats.md says the same for users. Each rule is written here once and every path
(in-memory constructors, the vectorized and careful TREC readers, streaming, gzip, Parquet and
Arrow, JSON) asks this module, so that they accept and refuse the same inputs.

- **Ids.** A query or doc id is a non-empty ``str``, kept exactly as given (never trimmed,
  split or normalised). Formats that store strings (Python objects, JSON, pandas, Parquet,
  Arrow) hold any such id. A TREC file separates fields by whitespace, so an id written to or
  read from one is a run of *printable* characters other than the space
  (:meth:`str.isprintable`: no whitespace, control, format or separator character).
- **Lines** of a TREC file end at LF (a CR right before it is part of the line end). Fields
  are separated by ASCII spaces and tabs. Any other whitespace or control character (NBSP,
  U+3000, VT, FF, a lone CR, FS..US, NEL, U+2028, NUL, a byte-order mark past the first byte)
  makes the line an error that names it: other tools split such lines differently.
  A line longer than :data:`MAX_LINE_BYTES` (UTF-8, without its line end) is an error: a file
  without line ends is never read whole into memory.
- **Numbers** in files are ASCII: ``int()`` and ``float()`` would also read ``1_000``,
  Arabic-Indic or full-width digits. Grades fit a signed 64-bit integer.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterable, Iterator

from ragmetrics.errors import InputFormatError

MAX_LINE_BYTES = 1 << 20  # a TREC line of a megabyte is not a TREC line
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

_NAMES = {
    "\t": "TAB",
    "\n": "LINE FEED",
    "\r": "CARRIAGE RETURN",
    "\x00": "NUL",
    "\x0b": "VERTICAL TAB",
    "\x0c": "FORM FEED",
    "\x1c": "FILE SEPARATOR",
    "\x1d": "GROUP SEPARATOR",
    "\x1e": "RECORD SEPARATOR",
    "\x1f": "UNIT SEPARATOR",
    "\x7f": "DELETE",
    "\x85": "NEXT LINE (NEL)",
    "\ufeff": "BYTE ORDER MARK",
}


def describe(char: str) -> str:
    """A character as ``U+00A0 NO-BREAK SPACE``."""
    name = _NAMES.get(char) or unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" {name}" if name else "")


# --- ids -----------------------------------------------------------------------------------


def trec_writable(identifier: str) -> bool:
    """True when ``identifier`` can be a field of a TREC file (see the module docstring)."""
    return bool(identifier) and identifier.isprintable() and " " not in identifier


def unwritable_id_reason(identifier: str) -> str | None:
    """Why ``identifier`` cannot be written to a TREC file, or None when it can."""
    if not identifier:
        return "it is empty"
    for char in identifier:
        if char == " " or not char.isprintable():
            return f"it holds {describe(char)}"
    return None


def check_trec_ids(ids: Iterable[str], what: str, path: object) -> None:
    """Raise unless every id can be written to a TREC file faithfully (checked before a
    byte is written, so a refused file is never half-written)."""
    for identifier in ids:
        if not trec_writable(identifier):
            raise InputFormatError(
                f"Cannot write {what} {identifier!r} to the TREC file {path_name(path)!r}: "
                f"{unwritable_id_reason(identifier)}, and a TREC file separates fields by "
                f"whitespace, so it would read back as other data. Write JSON or Parquet "
                f"instead (to_json, to_parquet), which keep any id."
            )


def warn_format_loss(query_ids: list[str], what: str, path: object) -> None:
    """Warn that a TREC file cannot hold these queries (it has no line for them)."""
    import warnings

    from ragmetrics.errors import FormatLossWarning

    shown = ", ".join(map(repr, query_ids[:5])) + (", ..." if len(query_ids) > 5 else "")
    warnings.warn(
        f"{len(query_ids)} queries have {what} ({shown}); a TREC file has no line for them, so "
        f"{path_name(path)!r} reads back without them (as missing queries). Write JSON or Parquet "
        f"(to_json, to_parquet) to keep them.",
        FormatLossWarning,
        stacklevel=3,
    )


# --- TREC lines ----------------------------------------------------------------------------


def trec_records(
    lines: Iterable[str], path: object, first_line: int = 1
) -> Iterator[tuple[int, list[str]]]:
    """``(line number, fields)`` of each record of a TREC file under the line rule; blank
    lines and comment lines (first field starting with ``#``) are skipped. ``lines`` are the
    file's lines with or without their LF."""
    for number, line in enumerate(lines, start=first_line):
        body = line[:-1] if line.endswith("\n") else line
        if body.endswith("\r"):
            body = body[:-1]
        if len(body) > MAX_LINE_BYTES // 4 and utf8_length(body) > MAX_LINE_BYTES:
            raise line_too_long(path, number)
        text = body.replace("\t", " ")
        if not text.isprintable():
            raise bad_character(path, number, body)
        fields = text.split()
        if fields and fields[0][0] != "#":
            yield number, fields


def text_chunks(handle: object, size: int = 1 << 20) -> Iterator[str]:
    """The text of a handle (opened with ``newline="\\n"``) in pieces of about ``size``
    characters, each ending at a line end (but the last), read with a bound."""
    read, readline = handle.read, handle.readline  # type: ignore[attr-defined]
    while True:
        chunk = read(size)
        if not chunk:
            return
        if not chunk.endswith("\n"):
            chunk += readline(MAX_LINE_BYTES + 2)  # characters: bytes are checked later
        yield chunk


def checked_lines(
    chunks: Iterable[str], path: object, first_line: int = 1
) -> Iterator[tuple[int, list[str], bool]]:
    """Pieces of text that end at line ends, as ``(number of the first line, lines, odd)``
    checked against the line rule: each piece at once (C speed); a piece that breaks it is
    read again line by line by :func:`trec_records`, which names the line. The lines come
    without their line ends (CRLF read as LF); blank and comment lines are left in, for
    the caller to skip as :func:`trec_records` does. ``odd``: the piece holds an underscore
    or a character beyond ASCII, so its numbers must be read as :func:`parse_float` or
    :func:`parse_int` read them (elsewhere ``float()`` and ``int()`` read them the same)."""
    number = first_line
    for chunk in chunks:
        text = chunk.replace("\r\n", "\n")
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()  # the piece ends with a line end
        elif lines[-1].endswith("\r"):
            lines[-1] = lines[-1][:-1]  # the last line of the file, ended by CR alone
        plain = text.replace("\t", " ").replace("\n", " ")
        long_lines = len(text) > MAX_LINE_BYTES // 4 and max(map(len, lines)) > MAX_LINE_BYTES // 4
        if not plain.isprintable() or long_lines:
            pieces = chunk.split("\n")
            if pieces[-1] == "":
                pieces.pop()
            for _ in trec_records(pieces, path, number):  # raises, naming the line
                pass
        yield number, lines, "_" in text or not text.isascii()
        number += len(lines)


def records(lines: list[str], first: int) -> Iterator[tuple[int, list[str]]]:
    """``(line number, fields)`` of the records among checked lines (blank and comment
    lines skipped)."""
    for number, line in enumerate(lines, start=first):
        fields = line.split()
        if fields and fields[0][0] != "#":
            yield number, fields


def bad_character(path: object, number: int, body: str) -> InputFormatError:
    """The error for a line holding a character the line rule refuses."""
    at, char = next(
        (i, c) for i, c in enumerate(body) if c != "\t" and (c == "\r" or not c.isprintable())
    )
    if char == "\ufeff":
        hint = (
            "a byte-order mark inside the file (two files joined with cat?); remove it, e.g. "
            "with sed 's/\\xef\\xbb\\xbf//'"
        )
    elif char in "\r\x0b\x0c\x85\u2028\u2029":
        hint = "a line break other than LF inside a line; convert the file to LF line ends"
    else:
        hint = (
            "fields are separated by ASCII spaces or tabs, and ids hold no whitespace, "
            "control or format character; other tools would split this line differently"
        )
    return InputFormatError(
        f"{path_name(path)}, line {number}, column {at + 1}: {describe(char)} is not allowed in a "
        f"TREC file: {hint}. Line: {body[:200]!r}."
    )


def utf8_length(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def line_too_long(path: object, number: int) -> InputFormatError:
    return InputFormatError(
        f"{path_name(path)}, line {number}: the line is longer than {MAX_LINE_BYTES:,} bytes (a "
        f"file without line ends, or not a TREC file?)."
    )


def path_name(path: object) -> str:
    """A path (or ``-``, or a handle's name) as it is shown in messages."""
    return os.fspath(path) if isinstance(path, (str, os.PathLike)) else str(path)


# --- numbers -------------------------------------------------------------------------------


def parse_float(token: str) -> float:
    """A score field: ``float()`` of an ASCII token without ``_`` (ValueError otherwise)."""
    if not token.isascii() or "_" in token:
        raise ValueError(token)
    return float(token)


def parse_int(token: str) -> int:
    """A grade field: ``int()`` of an ASCII token without ``_`` that fits int64."""
    if not token.isascii() or "_" in token:
        raise ValueError(token)
    value = int(token)
    if not INT64_MIN <= value <= INT64_MAX:
        raise ValueError(token)
    return value


def ascii_int(text: str) -> int | None:
    """``text`` as an int if it is ASCII digits (with an optional sign), else None: for
    cutoffs and parameters in metric names and command-line arguments."""
    stripped = text.strip()
    body = stripped[1:] if stripped[:1] in "+-" else stripped
    if not body or not body.isascii() or not body.isdigit():
        return None
    return int(stripped)


def cli_int(text: str) -> int:
    """An integer argument of the command line: ASCII digits (argparse's ``type=int`` would
    read other scripts' digits)."""
    import argparse

    value = ascii_int(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"expected an integer in ASCII digits, got {text!r}")
    return value


def cli_float(text: str) -> float:
    """A number argument of the command line, in ASCII (see :func:`cli_int`)."""
    import argparse

    try:
        return parse_float(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in ASCII, got {text!r}") from None
