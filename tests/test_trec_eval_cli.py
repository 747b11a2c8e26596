"""``ragmetrics trec_eval``: trec_eval's flags, layout and numbers.

Values are checked against pytrec_eval here, and the whole output against NIST trec_eval 10.0,
line for line: the suite builds it from ``../shared/tools`` once per session (or runs the
binary ``$TREC_EVAL`` names).
"""

from __future__ import annotations

import gzip
import io
import re
import sys
from pathlib import Path

import pytest

import ragmetrics as rm
from ragmetrics.cli._commands import main
from tests.conftest import shared_file

LINE = re.compile(r"^(?P<name>\S+) *\t(?P<query>\S+)\t(?P<value>\S+)$")
DEFAULT_ORDER = [
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", *[f"iprec_at_recall_{i / 10:.2f}" for i in range(11)],
    *[f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)],
]  # fmt: skip


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], str]:
    code = main(["trec_eval", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def _collection() -> tuple[Path, Path]:
    return shared_file("trec_eval", "qrels.test"), shared_file("trec_eval", "results.test")


def test_default_output_is_trec_evals_layout(capsys: pytest.CaptureFixture[str]) -> None:
    qrels, run = _collection()
    code, lines, err = _run(capsys, qrels, run)
    assert code == 0 and not err
    parsed = [LINE.match(line) for line in lines]
    assert all(parsed), lines
    assert [m["name"] for m in parsed if m] == DEFAULT_ORDER
    assert all(len(line.split("\t")[0]) == 22 for line in lines)  # %-22s
    assert lines[0].endswith("\tall\tSTANDARD") and lines[1].endswith("\tall\t3")
    assert re.fullmatch(r"\d+", lines[2].split("\t")[2])  # counts print as integers
    assert re.fullmatch(r"\d\.\d{4}", lines[5].split("\t")[2])  # %6.4f


@pytest.mark.parametrize(("qrels_name", "level"), [("qrels.test", 1), ("qrels.rel_level", 2)])
def test_per_query_values_equal_pytrec_eval(
    capsys: pytest.CaptureFixture[str], qrels_name: str, level: int
) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = shared_file("trec_eval", qrels_name)
    run = shared_file("trec_eval", "results.test")
    code, lines, _ = _run(
        capsys, "-q", f"-l{level}", "-m", "official", "-m", "ndcg_cut.10", qrels, run
    )
    assert code == 0
    judged = rm.Qrels.from_trec(qrels).to_dict()
    reference = pytrec_eval.RelevanceEvaluator(
        judged,
        {
            "num_ret",
            "num_rel",
            "num_rel_ret",
            "map",
            "Rprec",
            "bpref",
            "recip_rank",
            "P",
            "ndcg_cut",
        },
        relevance_level=level,
    ).evaluate(rm.Run.from_trec(run).to_dict())
    compared = 0
    for line in lines:
        match = LINE.match(line)
        assert match, line
        name, query, value = match["name"], match["query"], match["value"]
        if query == "all" or name.startswith("iprec"):  # iprec: trec_eval 9 rounds levels
            continue
        expected = reference[query][name]
        shown = str(int(expected)) if name.startswith("num_") else f"{expected:6.4f}"
        assert value == shown, (query, name)
        compared += 1
    assert compared == len(reference) * (3 + 4 + 9 + 1)


def test_measure_families_and_parameters(capsys: pytest.CaptureFixture[str]) -> None:
    qrels, run = _collection()
    _, lines, _ = _run(capsys, "-m", "P.5,10", "-m", "map", "-miprec_at_recall.0.25", qrels, run)
    assert [line.split()[0] for line in lines] == ["map", "iprec_at_recall_0.25", "P_5", "P_10"]
    _, lines, _ = _run(capsys, "-m", "success", "-m", "recall.7", qrels, run)
    assert [line.split()[0] for line in lines] == [
        "recall_7",
        "success_1",
        "success_5",
        "success_10",
    ]


def test_flags_change_what_is_counted(capsys: pytest.CaptureFixture[str]) -> None:
    qrels = shared_file("trec_eval", "qrels.test")
    trunc = shared_file("trec_eval", "results.trunc")
    # a judged query without results stops trec_eval (exit 4) unless -c scores it
    code, skipped, err = _run(capsys, "-m", "num_q", "-m", "num_ret", qrels, trunc)
    assert (code, skipped) == (4, []) and "result qid '302' not found" in err
    _, complete, _ = _run(capsys, "-c", "-m", "num_q", "-m", "num_ret", qrels, trunc)
    assert complete[0].endswith("\t3")  # -c counts every judged query
    _, capped, _ = _run(capsys, "-c", "-M", "10", "-m", "num_ret", qrels, trunc)
    assert capped[0].endswith("\t20")  # two queries, ten docs each; the third counts 0


def test_gzip_and_stdin(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    qrels, run = _collection()
    _, plain, _ = _run(capsys, qrels, run)
    packed = tmp_path / "run.gz"
    packed.write_bytes(gzip.compress(run.read_bytes()))
    _, from_gzip, _ = _run(capsys, qrels, packed)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(run.read_bytes())))
    _, from_stdin, _ = _run(capsys, qrels, "-")
    assert from_gzip == plain == from_stdin


def test_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    qrels, run = _collection()
    code, _, err = _run(capsys, "-m", "prefs_simp", qrels, run)  # needs -R prefs
    assert (code, err) == (4, "trec_eval: Can't calculate measure 'prefs_simp'\n")
    code, _, err = _run(capsys, "-m", "nosuch", qrels, run)
    assert (code, err) == (1, "trec_eval: illegal measure 'nosuch'\n")
    code, _, err = _run(capsys, "-m", "P.0", qrels, run)  # trec_eval's exit codes and words
    assert (code, err) == (2, "trec_eval: Negative cutoff detected\n")
    code, _, err = _run(capsys, "-m", "P.5,5", qrels, run)
    assert (code, err) == (2, "trec_eval: duplicate cutoffs detected\n")
    code, _, err = _run(capsys, "-l", "two", qrels, run)
    assert code == 1 and "-l 'two' is not an integer" in err


def test_help_describes_every_measure(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trec_eval", "-h"]) == 0
    out = capsys.readouterr().out
    listed = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")}
    for name in ("runid", "map", "P", "ndcg", "infAP", "prefs_pair_imp", "P_avgjg", "unj"):
        assert len(listed[name].split()) > 1, name  # a description, not just the name
    assert main(["trec_eval", "--help", "-m", "set_F"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].split()[0] == "set_F"
    assert main(["trec_eval", "-v"]) == 0
    assert "10.0" in capsys.readouterr().err
