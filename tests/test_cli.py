"""The command line: output formats, equality with the library, exit codes."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

import ragmetrics as rm
from ragmetrics.cli._commands import main
from tests.conftest import shared_file


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse exits for --help, --version and usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_json_output_equals_the_library(capsys: pytest.CaptureFixture[str]) -> None:
    qrels_path = shared_file("trec_eval", "qrels.test")
    run_path = shared_file("trec_eval", "results.test")
    code, out, _ = _run(
        capsys,
        "evaluate",
        str(qrels_path),
        str(run_path),
        "-m",
        "map",
        "-m",
        "P_5",
        "--missing",
        "skip",
        "--per-query",
        "--format",
        "json",
    )
    assert code == 0
    payload = json.loads(out)
    expected = rm.evaluate(
        rm.Qrels.from_trec(qrels_path), rm.Run.from_trec(run_path), ["map", "P_5"], missing="skip"
    )
    assert payload["aggregate"] == expected.aggregate
    assert payload["per_query"] == expected.per_query
    assert payload["counts"]["queries"] == 3


def test_json_inputs_and_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "q.json").write_text(json.dumps({"q1": {"a": 1}, "q2": {"b": 1}}))
    (tmp_path / "r.json").write_text(json.dumps({"q1": ["a"], "q2": ["x", "b"]}))
    code, out, _ = _run(
        capsys,
        "evaluate",
        str(tmp_path / "q.json"),
        str(tmp_path / "r.json"),
        "-m",
        "mrr",
        "--format",
        "csv",
    )
    assert code == 0
    assert out.splitlines()[:2] == ["metric,mean,queries,NA", "mrr,0.75,2,0"]
    code, out, _ = _run(
        capsys,
        "evaluate",
        str(tmp_path / "q.json"),
        str(tmp_path / "r.json"),
        "-m",
        "mrr",
        "--format",
        "markdown",
    )
    assert "| mrr | 0.7500 | 2 | 0 |" in out


def test_bad_usage_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "q.json").write_text(json.dumps({"q1": {"a": 1}}))
    code, _, err = _run(
        capsys, "evaluate", str(tmp_path / "q.json"), str(tmp_path / "q.json"), "-m", "ndgc@10"
    )
    assert code == 2 and "Did you mean 'ndcg@10'" in err
    code, _, err = _run(capsys, "evaluate", "only-one-file", "-m", "mrr")
    assert code == 2 and "required" in err


def test_malformed_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "q.txt").write_text("q1 0 a 1\n")
    (tmp_path / "r.txt").write_text("q1 Q0 a\n")
    code, _, err = _run(
        capsys, "evaluate", str(tmp_path / "q.txt"), str(tmp_path / "r.txt"), "-m", "mrr"
    )
    assert code == 2 and "r.txt, line 1" in err


def test_version_and_help() -> None:
    version = subprocess.run(
        [sys.executable, "-m", "ragmetrics", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert version.stdout.strip() == f"ragmetrics {rm.__version__}"
    helped = subprocess.run(
        [sys.executable, "-m", "ragmetrics", "evaluate", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "--relevance-threshold" in helped.stdout and "--per-query" in helped.stdout


def test_metrics_listing(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "metrics", "--format", "json")
    names = {m["name"] for m in json.loads(out)}
    assert code == 0 and {"ndcg", "map", "recall"} <= names


def test_metrics_separated_by_commas(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("q1 0 a 2\nq1 0 b 1\n")
    run.write_text("q1 Q0 b 1 0.9 t\nq1 Q0 a 2 0.5 t\n")
    code, out, _ = _run(
        capsys,
        "evaluate",
        str(qrels),
        str(run),
        "-m",
        "ndcg@10,P(rel=2)@1",
        "-m",
        "mrr",
        "--format",
        "json",
    )
    assert code == 0
    assert list(json.loads(out)["aggregate"]) == ["ndcg@10", "P(rel=2)@1", "mrr"]


def test_output_piped_into_a_reader_that_stops(tmp_path: Path) -> None:
    # `ragmetrics ... | head -1`: no traceback when the reader goes away
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(20_000)))
    run.write_text("".join(f"q{i} Q0 d{i} 1 1.0 t\n" for i in range(20_000)))
    command = [sys.executable, "-m", "ragmetrics", "evaluate", str(qrels), str(run)]
    shell = " ".join([*command, "-m", "mrr", "--per-query", "|", "head", "-1"])
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", shell], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.count("\n") == 1
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode == 141


def _small_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 1\n")
    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    first.write_text("q1 Q0 a 1 2.0 first\nq1 Q0 b 2 1.0 first\nq2 Q0 c 1 1.0 first\n")
    second.write_text("q1 Q0 b 1 2.0 second\nq1 Q0 a 2 1.0 second\nq2 Q0 x 1 1.0 second\n")
    return qrels, first, second


def test_every_option_has_help() -> None:
    import argparse

    from ragmetrics.cli._commands import build_parser

    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for name, sub in commands.choices.items():
        for action in sub._actions:
            assert action.help, (name, action.dest)


def test_report_checks_its_folder_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["report", "missing-qrels.txt", "missing-run.txt", "-m", "map",
                 "-o", str(tmp_path / "nowhere" / "r.html")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "the folder" in err and "does not exist" in err
    assert err.count("\n") == 1  # one line, no traceback


def test_report_and_compare_share_their_testing_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels, first, second = _small_files(tmp_path)
    common = ["-m", "map,proc@1", "--pool", str(second), "--alpha", "0.1", "--seed", "3",
              "--grade-map", "0:1,1:5"]  # fmt: skip
    assert main(["compare", str(qrels), str(first), str(second), *common, "--format", "json"]) == 0
    compared = json.loads(capsys.readouterr().out)
    assert compared["settings"]["correction"] == "holm" and compared["settings"]["seed"] == 3
    out = tmp_path / "r.html"
    assert main(["report", str(qrels), str(first), str(second), *common, "-o", str(out)]) == 0
    assert out.exists()
    # a report of metrics without a cutoff diagnoses the top 10
    assert main(["report", str(qrels), str(first), "-m", "map", "-o", str(out)]) == 0


def test_compare_with_one_run_says_so_in_cli_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels, first, _ = _small_files(tmp_path)
    assert main(["compare", str(qrels), str(first), "-m", "map"]) == 2
    err = capsys.readouterr().err
    assert "NAME=PATH NAME=PATH" in err and "{" not in err
    assert main(["evaluate", str(qrels), str(first), "-m", "ra_nwg@1"]) == 2
    assert "--grade-map 0:1,1:5" in capsys.readouterr().err  # the option, as typed


def test_stream_prints_what_reading_in_memory_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels, first, second = _small_files(tmp_path)
    for extra in ([], ["--per-query"]):
        argv = ["evaluate", str(qrels), str(first), "-m", "map,P@1", "--format", "json", *extra]
        assert main(argv) == 0
        in_memory = capsys.readouterr().out
        assert main([*argv, "--stream"]) == 0
        assert capsys.readouterr().out == in_memory
    argv = ["compare", str(qrels), str(first), str(second), "-m", "map", "--format", "json"]
    assert main(argv) == 0
    in_memory = json.loads(capsys.readouterr().out)
    assert main([*argv, "--stream"]) == 0
    assert json.loads(capsys.readouterr().out) == in_memory
    as_json = tmp_path / "run.json"
    as_json.write_text('{"q1": {"a": 1.0}}')
    code, _, err = _run(capsys, "evaluate", str(qrels), str(as_json), "-m", "map", "--stream")
    assert code == 2 and "not JSON" in err


def _wait_until_blocked_on_stdin(pid: int) -> None:
    """Waits until the process sleeps in a read of its pipe (Linux tells it in /proc); a fixed
    delay sent the signal during start-up on a loaded machine."""
    import time

    wchan = Path(f"/proc/{pid}/wchan")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if not wchan.exists():  # not Linux: a generous delay instead
            time.sleep(3)
            return
        if "pipe" in wchan.read_text():
            time.sleep(0.1)
            return
        time.sleep(0.05)
    raise AssertionError("the command never started reading its standard input")


def test_ctrl_c_exits_130_with_one_line(tmp_path: Path) -> None:
    import signal

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\n")
    # reading the run from a standard input that never ends: interrupted while it waits
    process = subprocess.Popen(
        [sys.executable, "-m", "ragmetrics", "evaluate", str(qrels), "-", "-m", "map"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # a job started in the background inherits Ctrl-C ignored; a terminal's user has it
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    _wait_until_blocked_on_stdin(process.pid)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130, err
    assert err == "ragmetrics: interrupted\n"


def test_a_missing_extra_is_one_line_and_exit_2(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\n")
    run = tmp_path / "run.parquet"
    run.write_bytes(b"PAR1")
    script = (
        "import sys; sys.modules['pyarrow'] = None\n"  # as if pyarrow were not installed
        "from ragmetrics.cli._commands import main\n"
        f"sys.exit(main(['evaluate', {str(qrels)!r}, {str(run)!r}, '-m', 'map']))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.startswith("ragmetrics: error: Parquet and Arrow need pyarrow")
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    missing = str(tmp_path / "nothing.parquet")
    script = script.replace(repr(str(run)), repr(missing))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (2, f"ragmetrics: error: No such file: {missing!r}.\n")


def test_report_takes_slices_human_grades_and_texts(tmp_path: Path) -> None:
    """``report --segments --human-qrels --dataset``: a "By segment" section, intervals
    valid on LLM labels, and the questions and texts in the explorer."""
    from ragmetrics.datasets import demo

    data = demo()
    data.to_json(tmp_path / "dataset.json")
    data.qrels.to_trec(tmp_path / "qrels.txt")
    people = {q: data.relevant_docs[q] for q in list(data.queries)[:12]}
    rm.Qrels.from_dict(people).to_trec(tmp_path / "people.txt")
    for name, length in (("short", 60), ("long", 400)):
        scores = {
            q: {d: -abs(len(t) - length) for d, t in data.corpus.items()} for q in data.queries
        }
        rm.Run.from_dict(scores).truncate(10).to_trec(tmp_path / f"{name}.txt")
    (tmp_path / "segments.txt").write_text(
        "".join(f"{q} {m['source']}\n" for q, m in data.query_metadata.items())
    )
    out = tmp_path / "report.html"
    code = main(
        ["report", str(tmp_path / "qrels.txt"), f"short={tmp_path / 'short.txt'}",
         f"long={tmp_path / 'long.txt'}", "-m", "ra_nwg@5", "-m", "mrr", "-o", str(out),
         "--segments", str(tmp_path / "segments.txt"), "--human-qrels",
         str(tmp_path / "people.txt"), "--dataset", str(tmp_path / "dataset.json")]
    )  # fmt: skip
    assert code == 0
    page = out.read_text()
    assert "By segment" in page and "handbook" in page
    assert "Intervals valid on LLM labels" in page and "people graded 12 of the queries" in page
    assert (
        "What is the name of Maya&#39;s dog?" in page or "What is the name of Maya's dog?" in page
    )
    assert "Frequently asked questions" in page  # an original's text, in the explorer's data


def test_trec_eval_ends_its_process_with_every_line_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``ragmetrics trec_eval`` ends its process without the interpreter's teardown: what
    it printed (block-buffered into a pipe or a file) must all be there, with its exit code;
    a reader that stops early still gets a quiet 141, and an error its 2."""
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("".join(f"q{i} 0 d{i} {i % 3}\n" for i in range(3_000)))
    run.write_text(
        "".join(f"q{i} Q0 d{j} {j} {1 / (j + 1)} t\n" for i in range(3_000) for j in (i, i + 1))
    )
    files = [str(qrels), str(run)]
    code, expected, _ = _run(capsys, "trec_eval", "-q", *files)
    assert code == 0 and expected.count("\n") > 3_000 * 20
    for command in (
        [sys.executable, "-m", "ragmetrics"],
        [str(Path(sys.executable).parent / "ragmetrics")],
    ):
        done = subprocess.run(
            [*command, "trec_eval", "-q", *files], capture_output=True, text=True, timeout=120
        )
        assert (done.returncode, done.stderr) == (0, "")
        assert done.stdout == expected
        written = tmp_path / "out.txt"
        with open(written, "w") as out:
            code = subprocess.run(
                [*command, "trec_eval", "-q", *files], stdout=out, timeout=120
            ).returncode
        assert code == 0 and written.read_text() == expected
        shell = " ".join([*command, "trec_eval", "-q", *files, "|", "head", "-1"])
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", shell], capture_output=True, text=True, timeout=120
        )
        assert done.stdout.count("\n") == 1 and done.returncode == 141, done.stderr
        assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
        done = subprocess.run(
            [*command, "trec_eval", str(qrels), str(tmp_path / "none.txt")],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2 and done.stdout == "" and "none.txt" in done.stderr


@pytest.mark.parametrize(
    ("command", "environment", "expected"),
    [
        ("trec_eval", {}, "1 False"),
        ("trec_eval", {"OMP_NUM_THREADS": "3"}, "None False"),  # the user's choice stands
        ("trec_eval", {"OPENBLAS_NUM_THREADS": "2"}, "2 False"),
        ("compare", {}, "None False"),  # bootstraps multiply matrices: BLAS keeps its threads
    ],
)
def test_the_console_script_starts_no_blas_threads_for_trec_eval(
    command: str, environment: dict[str, str], expected: str
) -> None:
    """The console script of ``trec_eval`` (which does no linear algebra) asks OpenBLAS for
    one thread, before numpy loads, unless the user set a count; other commands and
    :func:`main` called from a program leave the environment alone."""
    code = (
        "import os, sys\n"
        "import ragmetrics.cli._commands as commands\n"
        "def seen():\n"
        "    print(os.environ.get('OPENBLAS_NUM_THREADS'), 'numpy' in sys.modules)\n"
        "    return 0\n"
        "commands.main = seen\n"
        f"sys.argv = ['ragmetrics', '{command}']\n"
        "commands.console()\n"
    )
    names = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
    env = {k: v for k, v in os.environ.items() if k not in names} | environment
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.strip() == expected


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's allocator only")
def test_the_trec_eval_console_keeps_the_memory_it_frees() -> None:
    """After ``keep_freed_memory`` an array of 64 MB made and freed again reuses the pages of
    the first (no page fault); by default each is mapped fresh and faulted in. The console
    script asks for it before ``trec_eval`` only."""
    code = (
        "import resource, sys\n"
        "import numpy as np\n"
        "import ragmetrics.cli._commands as commands\n"
        "if sys.argv[1] == 'keep':\n"
        "    commands.keep_freed_memory()\n"
        "a = np.ones(64 << 20, np.uint8); del a\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
        "for _ in range(4):\n"
        "    a = np.ones(64 << 20, np.uint8); del a\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)\n"
    )
    faults = {
        how: int(
            subprocess.run(
                [sys.executable, "-c", code, how], capture_output=True, text=True, check=True
            ).stdout
        )
        for how in ("keep", "default")
    }
    assert faults["keep"] * 10 < faults["default"], faults
    asked = (
        "import sys\n"
        "import ragmetrics.cli._commands as commands\n"
        "commands.keep_freed_memory = lambda: print('kept')\n"
        "commands.main = lambda: 0\n"
        "sys.argv = ['ragmetrics', sys.argv[1]]\n"
        "commands.console()\n"
    )
    for command, expected in (("trec_eval", "kept"), ("compare", "")):
        done = subprocess.run(
            [sys.executable, "-c", asked, command], capture_output=True, text=True, check=True
        )
        assert done.stdout.strip() == expected, command


def test_cli_user_errors_found_by_a_hostile_pass(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from ragmetrics.cli._commands import main

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq2 0 c 1\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 0.9 r\nq1 Q0 b 2 0.5 r\nq2 Q0 c 1 0.5 r\n")
    other = tmp_path / "a=b.txt"  # a path holding '=' is a path
    other.write_text(run.read_text())
    segments = tmp_path / "segments.txt"
    segments.write_text("garbage\n")
    cases = [
        (
            ["fuse", "--param", "k=abc", "-o", str(tmp_path / "o.txt"), f"a={run}", f"b={run}"],
            "'abc' is not a number",
        ),
        (
            ["fuse", "--depth", "0", "-o", str(tmp_path / "o.txt"), f"a={run}", f"b={run}"],
            "--depth must be 1 or more",
        ),
        (
            ["evaluate", "-m", "map", "--segments", str(segments), str(qrels), str(run)],
            "expected 'query_id segment'",
        ),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        out, err = capsys.readouterr()
        assert out == "" and message in err and len(err.splitlines()) <= 2, (argv, out, err)
    assert main(["compare", "-m", "map", str(qrels), str(run), str(other)]) == 0
    assert "a=b" in capsys.readouterr().out
