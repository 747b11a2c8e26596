"""Every file the library or the command line writes is written atomically.

The bytes go to a temporary file in the target's folder, which is flushed to disk and then
renamed over the target: a write that fails (a full disk, an id that cannot be encoded, an
interrupt) leaves the previous file as it was, never a truncated one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import IO, Any

from ragmetrics.errors import WriteError
from ragmetrics.formats._rules import describe


def _new_file_mode() -> int:
    """The mode ``open(path, "w")`` gives a new file: 0o666 less the process's umask."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


@contextmanager
def replacing(path: str | os.PathLike[str]) -> Iterator[str]:
    """A temporary path beside ``path``; renamed over ``path`` when the block ends without an
    error, removed otherwise. Errors become a :class:`WriteError` naming ``path``."""
    import tempfile  # here (as pathlib): a command that writes nothing never loads them
    from pathlib import Path

    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    _remove_orphans(folder, target.name)
    try:
        handle, temporary = tempfile.mkstemp(
            prefix=f".{target.name}.{os.getpid()}.", suffix=".part", dir=folder
        )
    except OSError as error:
        raise _write_error(target, error) from None
    os.close(handle)
    try:
        yield temporary
        try:
            mode = target.stat().st_mode & 0o7777
        except OSError:
            mode = _new_file_mode()
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException as error:
        with suppress(OSError):
            os.unlink(temporary)
        if isinstance(error, OSError):
            raise _write_error(target, error) from None
        if isinstance(error, UnicodeEncodeError):
            char = str(error.object[error.start : error.start + 1])
            raise WriteError(
                f"Cannot write {os.fspath(target)!r}: it would hold {describe(char)}, which "
                f"UTF-8 cannot encode (a lone surrogate, usually from bytes decoded with "
                f"errors='surrogateescape'); fix that id or text where it was made."
            ) from None
        raise


def _remove_orphans(folder: Any, name: str) -> None:
    """Remove the temporary files of earlier writes of ``name`` whose process is gone (a
    write killed midway, by SIGKILL or a power cut, had no chance to remove its own). The
    writing process's id is in each temporary name; a live one's file is left alone."""
    for part in folder.glob(f".{name}.*.part"):
        pid = part.name[len(name) + 2 :].split(".", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            with suppress(OSError):
                part.unlink()
        except OSError:  # alive, another user's: not ours to remove
            continue


@contextmanager
def open_atomic(
    path: str | os.PathLike[str], mode: str = "w", *, newline: str | None = None
) -> Iterator[IO[Any]]:
    """``open(path, mode)`` for writing, atomically (see the module docstring); text is
    UTF-8."""
    with replacing(path) as temporary:
        encoding = None if "b" in mode else "utf-8"
        with open(temporary, mode, encoding=encoding, newline=newline) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())


def write_text(path: str | os.PathLike[str], text: str, *, newline: str | None = None) -> None:
    """Write ``text`` as UTF-8, atomically."""
    with open_atomic(path, "w", newline=newline) as handle:
        handle.write(text)


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data``, atomically."""
    with open_atomic(path, "wb") as handle:
        handle.write(data)


def write_with(path: str | os.PathLike[str], write: Callable[[str], None]) -> None:
    """Let ``write`` write the file at a temporary path, then put it in place atomically
    (for writers that take a path, such as pyarrow's)."""
    with replacing(path) as temporary:
        write(temporary)


def _write_error(target: str | os.PathLike[str], error: OSError) -> WriteError:
    reason = error.strerror or str(error)
    return WriteError(
        f"Cannot write {os.fspath(target)!r}: {reason}. Nothing was changed: the previous "
        f"file, if there was one, is as it was."
    )
