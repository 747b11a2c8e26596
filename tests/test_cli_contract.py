"""The command line's side of the contract, over every subcommand and every flag: a user's
error is at most two lines on stderr (a one-line usage and the error, or the error alone)
and exit 2; never a traceback, never "internal error", never a number from a bad value.

``ragmetrics trec_eval`` is left out on purpose: it answers as NIST's program does (exit 1
for a usage error), which tests/test_trec_eval_cli.py holds line for line.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from ragmetrics.cli._commands import build_parser, main

BAD_VALUES = ["not-a-value-\u00e9", "-1", "", "nan", "1e999", "0"]


def _subcommands() -> dict:  # type: ignore[type-arg]
    parser = build_parser()
    (commands,) = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    return dict(commands.choices)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("cli")
    rng = random.Random(2)
    qrels = folder / "qrels.txt"
    utility = folder / "utility.txt"
    lines, useful = [], []
    for q in range(8):
        for d in range(5):
            lines.append(f"q{q} 0 d{d} {rng.choice([0, 1, 2])}")
            useful.append(f"q{q} 0 d{d} {rng.choice([1, 3, 4, 5])}")
    qrels.write_text("\n".join(lines) + "\n")
    utility.write_text("\n".join(useful) + "\n")
    runs = []
    for name in ("bm25", "dense"):
        path = folder / f"{name}.txt"
        path.write_text(
            "".join(
                f"q{q} Q0 d{d} {r + 1} {10 - r} {name}\n"
                for q in range(8)
                for r, d in enumerate(rng.sample(range(7), 6))
            )
        )
        runs.append(str(path))
    return {
        "qrels": str(qrels),
        "utility": str(utility),
        "run": runs[0],
        "other": runs[1],
        "out": str(folder / "out"),
    }


@pytest.fixture(autouse=True)
def _in_a_temporary_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bad value of -o is a file name: written there, never in the repository."""
    monkeypatch.chdir(tmp_path)


def _base(command: str, f: dict[str, str]) -> list[str]:
    """A call of ``command`` that succeeds."""
    return {
        "evaluate": ["evaluate", "-m", "map", f["qrels"], f["run"]],
        "compare": ["compare", "-m", "map", "--permutations", "50", f["qrels"], f["run"], f["other"]],
        "report": ["report", "-m", "map", "--permutations", "50", "-o", f["out"] + ".md", f["qrels"], f["run"], f["other"]],
        "fuse": ["fuse", "-o", f["out"] + ".txt", f["run"], f["other"]],
        "agreement": ["agreement", f["utility"], f["utility"]],
        "metrics": ["metrics"],
    }[command]  # fmt: skip


COMMANDS = sorted(c for c in _subcommands() if c != "trec_eval")


def _answer(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _assert_user_error_or_value(code: int, err: str, argv: list[str]) -> None:
    assert code in (0, 2), (argv, code, err)
    assert "internal error" not in err and "Traceback" not in err, (argv, err)
    if code == 2:
        assert 1 <= len(err.splitlines()) <= 2, (argv, err)


def test_every_subcommand_is_covered() -> None:
    assert set(COMMANDS) == {"evaluate", "compare", "report", "fuse", "agreement", "metrics"}


@pytest.mark.parametrize("command", COMMANDS)
def test_the_base_call_of_each_subcommand_succeeds(
    command: str, files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _base(command, files)
    code, _, err = _answer(argv, capsys)
    assert code == 0, (argv, err)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_flag_of_every_subcommand_answers_a_bad_value_in_two_lines(
    command: str, files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    parser = _subcommands()[command]
    base = _base(command, files)
    flags = [a for a in parser._actions if a.option_strings and a.dest != "help"]
    assert flags
    for action in flags:
        flag = action.option_strings[-1]
        if action.nargs == 0:  # a switch: a value given to it is an error of the call
            argv = [*base, f"{flag}=x"] if flag.startswith("--") else [*base, flag]
            code, _, err = _answer(argv, capsys)
            _assert_user_error_or_value(code, err, argv)
            continue
        argv = [*base, flag]  # the value missing
        code, _, err = _answer(argv, capsys)
        assert code == 2, (argv, err)
        _assert_user_error_or_value(code, err, argv)
        for value in BAD_VALUES:
            argv = [*base, f"{flag}={value}"] if flag.startswith("--") else [*base, flag, value]
            code, _, err = _answer(argv, capsys)
            _assert_user_error_or_value(code, err, argv)


@pytest.mark.parametrize("command", COMMANDS)
def test_missing_or_unreadable_inputs_are_two_lines(
    command: str, files: dict[str, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    base = _base(command, files)
    folder = tmp_path / "a-folder"
    folder.mkdir()
    for given in (files["run"], files["qrels"], files["utility"]):
        if given not in base:
            continue
        for replacement in (str(tmp_path / "absent.txt"), str(folder)):
            argv = [replacement if a == given else a for a in base]
            code, _, err = _answer(argv, capsys)
            assert code == 2, (argv, err)
            _assert_user_error_or_value(code, err, argv)
    code, _, err = _answer([*base, "--no-such-flag"], capsys)
    assert code == 2 and len(err.splitlines()) == 2 and err.startswith("usage: "), err
