"""The command line: output formats, equality with the library, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import ragmetrics as rm
from ragmetrics.cli import main
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


def test_malformed_file_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "q.txt").write_text("q1 0 a 1\n")
    (tmp_path / "r.txt").write_text("q1 Q0 a\n")
    code, _, err = _run(
        capsys, "evaluate", str(tmp_path / "q.txt"), str(tmp_path / "r.txt"), "-m", "mrr"
    )
    assert code == 1 and "r.txt, line 1" in err


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
