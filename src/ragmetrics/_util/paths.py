"""A file's stem without :mod:`pathlib`, whose import (3.5 ms) is a tenth of what
``ragmetrics trec_eval`` may spend on its own start-up."""

from __future__ import annotations

import os
from types import ModuleType


def file_stem(path: str | os.PathLike[str]) -> str:
    """``pathlib.Path(path).stem``: the last part of the path without its last suffix.

    Example:
        >>> file_stem("runs/bm25.run.txt")
        'bm25.run'
    """
    return stem_of(os.fspath(path), os.path)


def stem_of(text: str, flavour: ModuleType) -> str:
    """The stem of ``text`` as pathlib reads it on the platform of ``flavour`` (``posixpath``
    or ``ntpath``): separators collapsed, ``.`` parts dropped, a name's last dot starting its
    suffix unless the dot is first or last."""
    _, rest = flavour.splitdrive(text)
    if flavour.altsep:
        rest = rest.replace(flavour.altsep, flavour.sep)
    parts = [part for part in rest.split(flavour.sep) if part and part != "."]
    name = parts[-1] if parts else ""
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name
