"""Shared fixtures: the real public data beside the project, read in place."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared_file(*parts: str) -> Path:
    """A file of ../shared/data; skips the test with a clear reason when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not available: {path} (tests read ../shared/data in place)")
    return path


def shared_seed(name: str) -> Path:
    """A seed document of ../shared/seeds (the tools the facades reproduce); skips the test
    with a clear reason when it is absent."""
    path = SHARED_DATA.parent / "seeds" / name
    if not path.exists():
        pytest.skip(f"seed document not available: {path} (tests read ../shared in place)")
    return path


def real_trec_eval_missing() -> str | None:
    """Why NIST's trec_eval cannot run here (None when it can): no ``$TREC_EVAL`` and no
    ``../shared/tools`` to build it from. The modules that compare with the running program
    skip once, with this reason; ``tests/test_trec_eval_committed.py`` checks the same parity
    from its committed outputs everywhere."""
    import os

    if (
        os.environ.get("TREC_EVAL")
        or (SHARED_DATA.parent / "tools" / "build-trec-eval.sh").exists()
    ):
        return None
    return (
        f"NIST trec_eval cannot run here: no $TREC_EVAL and no {SHARED_DATA.parent / 'tools'} to "
        f"build it from (tests/test_trec_eval_committed.py checks its committed outputs)"
    )


@pytest.fixture(scope="session")
def trec_eval_binary(tmp_path_factory: pytest.TempPathFactory) -> str:
    """NIST trec_eval 10.0, built once per session from ``../shared/tools`` (its own
    script; a few seconds), or ``$TREC_EVAL``. Skips, saying why, only when neither is
    there."""
    import os
    import subprocess

    given = os.environ.get("TREC_EVAL")
    if given:
        return given
    script = SHARED_DATA.parent / "tools" / "build-trec-eval.sh"
    if not script.exists():
        pytest.skip(f"no {script} beside the project to build trec_eval from, and no $TREC_EVAL")
    folder = tmp_path_factory.mktemp("trec_eval")
    done = subprocess.run(
        ["bash", str(script), str(folder)], capture_output=True, text=True, timeout=300
    )
    if done.returncode != 0:
        raise RuntimeError(f"building trec_eval failed:\n{done.stderr}")
    return done.stdout.strip().splitlines()[-1]
