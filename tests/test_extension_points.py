"""Each extension point is one place: a toy metric, keyword parameter, paired test and input
format, each registered once, are seen by every entry point that should see them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragmetrics as rm
from ragmetrics.analysis import stats
from ragmetrics.cli import main
from ragmetrics.data import _files as format_registry
from ragmetrics.metrics import registry
from tests.conftest import restore_registries

QRELS = {"q1": {"a": 2, "b": 1}, "q2": {"c": 1}, "q3": {"d": 1, "e": 1}}
RUN = {"q1": {"a": 3.0, "x": 2.0, "b": 1.0}, "q2": {"y": 2.0, "c": 1.0}, "q3": {"d": 1.0}}


@pytest.fixture(autouse=True)
def _restore_registries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every registration of a test is undone after it."""
    restore_registries(monkeypatch)


BONUS = registry.Param(
    "bonus", float, 1.0, "what each relevant doc in the top k is worth", 0.0, keyword="toy_bonus"
)


def _toy_kernel(judged: Any, cutoff: int | None, *, bonus: float) -> np.ndarray:
    """``bonus`` x the relevant docs in the top k."""
    return judged.hits(cutoff, 1) * bonus


def _register_toy_metric() -> None:
    registry.register_param(BONUS)
    registry.register(
        registry.MetricSpec(
            name="toy_hits",
            kernel=_toy_kernel,
            cutoff=registry.Cutoff.OPTIONAL,
            family="classic",
            summary="bonus x relevant docs in the top k (a test's toy)",
            params=(BONUS,),
            perfect_is_one=False,
            unit_range=False,
        )
    )


def test_a_metric_and_its_keyword_parameter_are_seen_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _register_toy_metric()
    # evaluate: by name, with the parameter in the name or as a keyword, checked
    assert rm.evaluate(QRELS, RUN, "toy_hits@2").per_query["q1"]["toy_hits@2"] == 1.0
    assert rm.evaluate(QRELS, RUN, "toy_hits@3", toy_bonus=3.0).aggregate["toy_hits@3"] == 4.0
    assert rm.evaluate(QRELS, RUN, "toy_hits(bonus=6)@3").aggregate["toy_hits(bonus=6)@3"] == 8
    with pytest.raises(rm.InvalidParameterError, match="toy_bonus must be a number >= 0"):
        rm.evaluate(QRELS, RUN, "toy_hits", toy_bonus=-1)
    # the settings say the value in force
    assert rm.evaluate(QRELS, RUN, "toy_hits").settings["toy_bonus"] == 1.0
    # listings, streaming, comparison
    assert "toy_hits" in {m["name"] for m in rm.list_metrics()}
    run_path = tmp_path / "run.trec"
    rm.Run.from_dict(RUN).to_trec(run_path)
    streamed = rm.evaluate_stream(QRELS, run_path, "toy_hits@3", toy_bonus=2.0)
    assert streamed.aggregate == rm.evaluate(QRELS, RUN, "toy_hits@3", toy_bonus=2.0).aggregate
    other = {q: dict(reversed(list(r.items()))) for q, r in RUN.items()}
    cmp = rm.compare(QRELS, {"a": RUN, "b": other}, ["toy_hits@1"], toy_bonus=3.0)
    assert cmp.results["a"].aggregate["toy_hits@1"] == 2.0
    # the command line: the metric by name, the parameter as a flag of its own
    qrels_path = tmp_path / "qrels.json"
    qrels_path.write_text(json.dumps(QRELS))
    code = main(
        ["evaluate", str(qrels_path), str(run_path), "-m", "toy_hits@3", "--toy-bonus", "6",
         "--format", "json"]
    )  # fmt: skip
    assert code == 0
    assert json.loads(capsys.readouterr().out)["aggregate"] == {"toy_hits@3": 8.0}


def _sign_test(
    d: np.ndarray, alpha: float, n_resamples: int, seed: int
) -> tuple[float, float, float]:
    """A toy: p = 1 when as many differences are positive as negative, else 0.01."""
    balanced = int((d > 0).sum()) == int((d < 0).sum())
    return (1.0 if balanced else 0.01), float(d.min()), float(d.max())


def _compare_on_the_command_line(tmp_path: Path, other: dict[str, Any], *flags: str) -> int:
    """``ragmetrics compare`` of RUN against ``other`` on P@1, written as JSON files."""
    qrels_path, a_path, b_path = tmp_path / "q.json", tmp_path / "a.json", tmp_path / "b.json"
    qrels_path.write_text(json.dumps(QRELS))
    a_path.write_text(json.dumps(RUN))
    b_path.write_text(json.dumps(other))
    return main(["compare", str(qrels_path), str(a_path), str(b_path), "-m", "P@1", *flags])


def test_a_paired_test_is_seen_by_compare_its_wording_and_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stats.register_test(stats.PairedTestSpec("sign", "paired sign test", None, _sign_test))
    other = {q: dict(reversed(list(r.items()))) for q, r in RUN.items()}
    cmp = rm.compare(QRELS, {"a": RUN, "b": other}, ["P@1"], test="sign")
    assert {t.p_value for t in cmp.tests} <= {1.0, 0.01}
    assert "paired sign test" in cmp.legend()
    from ragmetrics.report._report import write_report

    html = write_report(cmp, tmp_path / "report.html").read_text(encoding="utf-8")
    assert "paired sign test" in html
    code = _compare_on_the_command_line(tmp_path, other, "--test", "sign")
    assert code == 0 and "paired sign test" in capsys.readouterr().out
    with pytest.raises(rm.InvalidParameterError, match="'sign'"):
        rm.compare(QRELS, {"a": RUN, "b": other}, ["P@1"], test="mcnemar")


def _read_csv_rows(path: Any) -> list[list[str]]:
    return [line.split(",") for line in Path(path).read_text().splitlines() if line]


def _csv_run(path: Any, name: str | None) -> rm.Run:
    return rm.Run.from_dict(
        {q: {d: float(s) for qq, d, s in _read_csv_rows(path) if qq == q}
         for q, _, _ in _read_csv_rows(path)},
        name=name,
    )  # fmt: skip


def _csv_qrels(path: Any) -> rm.Qrels:
    return rm.Qrels.from_dict(
        {q: {d: int(g) for qq, d, g in _read_csv_rows(path) if qq == q}
         for q, _, _ in _read_csv_rows(path)}
    )  # fmt: skip


def _csv_stream(path: Any, batch_rows: int, columns: Any, name: str | None) -> Any:
    rows = _read_csv_rows(path)
    for query_id in dict.fromkeys(q for q, _, _ in rows):  # a batch per query: whole queries
        yield rm.Run.from_dict({query_id: {d: float(s) for q, d, s in rows if q == query_id}})


def test_an_input_format_serves_memory_streaming_and_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    format_registry.register_format(
        format_registry.InputFormat(
            name="csv3",
            suffixes=(".csv3",),
            sniff=None,
            read_qrels=_csv_qrels,
            read_run=_csv_run,
            stream_run=_csv_stream,
        )
    )
    qrels_path, run_path = tmp_path / "qrels.csv3", tmp_path / "run.csv3"
    qrels_path.write_text("".join(f"{q},{d},{g}\n" for q, r in QRELS.items() for d, g in r.items()))
    run_path.write_text("".join(f"{q},{d},{s}\n" for q, r in RUN.items() for d, s in r.items()))
    expected = rm.evaluate(QRELS, RUN, ["ndcg@10", "mrr"]).aggregate
    qrels, run = format_registry.read_qrels(qrels_path), format_registry.read_run(run_path)
    assert rm.evaluate(qrels, run, ["ndcg@10", "mrr"]).aggregate == expected
    assert rm.evaluate_stream(qrels, run_path, ["ndcg@10", "mrr"]).aggregate == expected
    code = main(["evaluate", str(qrels_path), str(run_path), "-m", "ndcg@10,mrr",
                 "--format", "json"])  # fmt: skip
    assert code == 0 and json.loads(capsys.readouterr().out)["aggregate"] == expected
    code = main(["evaluate", str(qrels_path), str(run_path), "-m", "mrr", "--stream",
                 "--format", "json"])  # fmt: skip
    assert code == 0 and json.loads(capsys.readouterr().out)["aggregate"] == {
        "mrr": expected["mrr"]
    }


def test_a_format_without_a_streaming_reader_is_refused_by_the_stream(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(RUN))
    with pytest.raises(rm.InputFormatError, match="json input cannot be streamed"):
        rm.evaluate_stream(QRELS, path, "mrr")


def test_formats_are_recognised_by_suffix_then_content(tmp_path: Path) -> None:
    json_without_suffix = tmp_path / "run"
    json_without_suffix.write_text(json.dumps(RUN))
    assert format_registry.find_format(json_without_suffix).name == "json"
    trec = tmp_path / "run.txt"
    rm.Run.from_dict(RUN).to_trec(trec)
    assert format_registry.find_format(trec).name == "trec"
    with pytest.raises(rm.InputFormatError, match="Unknown input format 'xml'"):
        format_registry.read_run(trec, format="xml")


def test_a_correction_is_seen_by_compare_its_legend_and_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    halve = stats.CorrectionSpec(
        "halve", "Halving", "nothing", lambda p: np.minimum(1.0, p * 1.5)
    )  # named for its history; a correction may never lower a p-value
    assert stats.register_correction(halve) is halve
    assert stats.corrections()["halve"] is halve and stats.correction_spec("halve") is halve
    assert stats.adjust([0.5, 0.25], "halve") == [0.75, 0.375]
    other = {q: dict(reversed(list(r.items()))) for q, r in RUN.items()}
    cmp = rm.compare(QRELS, {"a": RUN, "b": other}, ["P@1", "ndcg"], correction="halve")
    assert "Halving" in cmp.legend()
    code = _compare_on_the_command_line(tmp_path, other, "--correction", "halve")
    assert code == 0 and "Halving" in capsys.readouterr().out
    stats.register_correction(halve)  # the same spec again: nothing to refuse
    with pytest.raises(
        rm.InvalidParameterError,
        match=r"^A correction named 'halve' is already registered; register yours under",
    ):
        stats.register_correction(stats.CorrectionSpec("halve", "Other", "FDR", lambda p: p))


def test_an_output_format_is_seen_by_results_and_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One Renderer: ``result.render(name)`` and ``--format name`` of ``ragmetrics
    evaluate``; a comparison it does not render is refused with the formats that do."""
    from ragmetrics.output import Renderer, register_renderer, renderers

    def pipes(result: Any, **options: Any) -> str:
        headers, rows = result.table_rows(per_query=bool(options.get("per_query")))
        return "\n".join("|".join(map(str, row)) for row in [headers, *rows])

    tsv = register_renderer(Renderer("pipes", "means between pipes", result=pipes))
    assert renderers()["pipes"] is tsv and register_renderer(tsv) is tsv
    result = rm.evaluate(QRELS, RUN, ["P@1", "ndcg"])
    assert result.render("pipes").splitlines()[0] == "metric|mean|queries|NA"
    assert result.render("pipes", per_query=True).splitlines()[0] == "query_id|P@1|ndcg"
    cmp = rm.compare(QRELS, {"a": RUN, "b": RUN}, ["P@1"], n_permutations=10)
    with pytest.raises(rm.InvalidParameterError, match=r"renders no Comparison.*markdown"):
        cmp.render("pipes")
    with pytest.raises(rm.InvalidParameterError, match=r"Unknown output format 'rst'.*pipes"):
        result.render("rst")
    with pytest.raises(rm.InvalidParameterError, match="already registered"):
        register_renderer(Renderer("pipes", "another", result=pipes))
    (tmp_path / "q.json").write_text(json.dumps(QRELS))
    (tmp_path / "r.json").write_text(json.dumps(RUN))
    code = main(["evaluate", str(tmp_path / "q.json"), str(tmp_path / "r.json"), "-m", "P@1",
                 "--format", "pipes"])  # fmt: skip
    assert code == 0 and capsys.readouterr().out.startswith("metric|mean|queries|NA\nP@1|")
