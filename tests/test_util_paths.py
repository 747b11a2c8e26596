"""A run's default name is its file's stem, read as :mod:`pathlib` reads it (without loading
pathlib, which the ``trec_eval`` stand-in cannot afford)."""

from __future__ import annotations

import ntpath
import posixpath
from pathlib import Path, PurePosixPath, PureWindowsPath

from hypothesis import assume, given, settings
from hypothesis import strategies as st

import ragmetrics as rm
from ragmetrics._util.paths import file_stem, stem_of


@settings(max_examples=3000)
@given(st.text(alphabet="/\\.a:b C", max_size=12))
def test_posix_stems_equal_pathlibs(text: str) -> None:
    assert stem_of(text, posixpath) == PurePosixPath(text).stem


@settings(max_examples=3000)
@given(
    st.sampled_from(["", "C:", "c:\\", "\\\\server\\share\\", "/", "\\"]),
    st.text(alphabet="/\\.ab C", max_size=12),
)
def test_windows_stems_equal_pathlibs(drive: str, rest: str) -> None:
    assume(rest[:1] not in "/\\")
    assert stem_of(drive + rest, ntpath) == PureWindowsPath(drive + rest).stem


def test_a_run_is_named_after_its_file(tmp_path: Path) -> None:
    path = tmp_path / "bm25.v2.run"
    path.write_text("q1 Q0 d1 1 0.5 t\n")
    assert file_stem(path) == "bm25.v2" == file_stem(str(path))
    assert rm.Run.from_trec(path).name == "bm25.v2"
