"""The parity with NIST trec_eval 10.0, checked from a fresh clone: the real program's output
and exit code over inputs the project makes itself are committed in tests/data/trec_eval/
(tools/trec_eval_parity.py regenerates them where the program is), and ``ragmetrics
trec_eval`` must print the same bytes and exit with the same code for every case."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from pathlib import Path

import pytest

from ragmetrics.cli._commands import main

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "trec_eval"
MANIFEST = json.loads((DATA / "manifest.json").read_text())


def _generator() -> object:
    spec = importlib.util.spec_from_file_location(
        "_trec_eval_parity", ROOT / "tools" / "trec_eval_parity.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_committed_inputs_are_what_the_generator_makes(tmp_path: Path) -> None:
    """A change to the generator without new expected outputs fails here."""
    made = _generator().make_inputs(tmp_path)  # type: ignore[attr-defined]
    names = sorted(p.name for pair in made.values() for p in pair)
    assert names == sorted(MANIFEST["inputs"])
    for name in names:
        fresh = (tmp_path / name).read_bytes()
        assert fresh == (DATA / "inputs" / name).read_bytes(), (
            f"{name}: regenerate the expected outputs"
        )
        assert hashlib.sha256(fresh).hexdigest() == MANIFEST["inputs"][name]


def test_every_flag_set_of_the_generator_has_its_case() -> None:
    generator = _generator()
    wanted = {
        (name, tuple(generator.FLAGS[f])) for name, flags in generator.CASES.items() for f in flags
    }  # type: ignore[attr-defined]
    have = {(case["input"], tuple(case["flags"])) for case in MANIFEST["cases"]}
    assert wanted == have, "regenerate the expected outputs: python tools/trec_eval_parity.py"
    assert MANIFEST["program"].startswith("trec_eval version 10.0")


@pytest.mark.parametrize(
    "case", MANIFEST["cases"], ids=lambda c: c["expected"].removesuffix(".txt")
)
def test_ragmetrics_trec_eval_prints_what_trec_eval_printed(
    case: dict, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(DATA / "inputs")  # the files named as the real program was given them
    expected = (DATA / "expected" / case["expected"]).read_bytes()
    assert hashlib.sha256(expected).hexdigest() == case["sha256"]
    code = main(["trec_eval", *case["flags"], f"{case['input']}.qrels", f"{case['input']}.run"])
    out = capsys.readouterr().out
    assert code == case["exit"]
    assert out.encode() == expected
