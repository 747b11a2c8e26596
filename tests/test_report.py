"""Plots and reports: what a reviewer opens."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

import ragmetrics as rm
from ragmetrics.cli._commands import main
from ragmetrics.report import plots
from ragmetrics.report._report import write_report
from tests.conftest import shared_file

pytest.importorskip("matplotlib")

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def graded() -> tuple[rm.Qrels, dict[str, rm.Run]]:
    """CACM with utility grades: relevant docs get 5 or 4, some retrieved non-relevant 2."""
    qrels = rm.Qrels.from_trec(shared_file("cacm", "qrels.cacm.txt"))
    bm25 = rm.Run.from_trec(shared_file("cacm", "cacm-bm25.run.txt"))
    judged = {}
    for q, docs in qrels.items():
        grades = {d: 5 if i % 3 == 0 else 4 for i, d in enumerate(sorted(docs))}
        if q in bm25:
            grades.update({d: 2 for d in bm25[q][:20] if d not in grades})
        judged[q] = grades
    reranked = rm.Run.from_lists({q: list(r[:10])[::-1] for q, r in bm25.items()})
    return rm.Qrels.from_dict(judged), {"bm25": bm25, "reversed10": reranked}


def test_plots_return_figures(graded) -> None:  # type: ignore[no-untyped-def]
    qrels, runs = graded
    comparison = rm.compare(
        qrels, runs, ["ndcg@10", "ra_nwg@5", "proc@5", "pct_proc@5"], baseline="bm25"
    )
    curve = plots.plot_metric_at_k(qrels, runs, "ndcg", ks=(1, 5, 10))
    (axis,) = curve.axes
    assert [line.get_label() for line in axis.get_lines()] == ["bm25", "reversed10"]
    assert list(axis.get_lines()[0].get_xdata()) == [1, 5, 10]
    assert len(plots.plot_win_loss(comparison, "ndcg@10").axes) == 1
    assert (
        plots.plot_per_query_distribution(comparison, "ra_nwg@5").axes[0].get_ylabel() == "ra_nwg@5"
    )
    bars = plots.plot_rag_decomposition(comparison, 5).axes[0].patches
    assert len(bars) == 6  # three bars per run
    for run in range(2):  # what is drawn multiplies: PROC x share = RA-nWG
        ra, proc, share = (bars[2 * j + run].get_height() for j in range(3))
        assert proc * share == pytest.approx(ra)
        assert ra == pytest.approx(comparison.means[list(runs)[run]]["ra_nwg@5"])
    with pytest.raises(
        rm.RagMetricsError, match=r"'map' was not compared; .* Add it to the metrics of compare\(\)"
    ):
        plots.plot_win_loss(comparison, "map")


def test_html_report_is_self_contained(tmp_path: Path, graded) -> None:  # type: ignore[no-untyped-def]
    qrels, runs = graded
    comparison = rm.compare(
        qrels, runs, ["ndcg@10", "ra_nwg@5", "proc@5", "pct_proc@5"], baseline="bm25"
    )
    path = write_report(comparison, tmp_path / "report.html", qrels=qrels, runs=runs, worst=3)
    page = path.read_text()
    for section in ("Means", "Paired tests", "What was counted", "Plots", "The 3 worst queries"):
        assert section in page
    images = re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", page)
    assert len(images) == 4  # curve, distribution, wins/losses, RA-nWG decomposition
    assert all(base64.b64decode(i).startswith(PNG) for i in images)
    assert "selection gap" in page and "worst queries of bm25 by" in page
    assert "src='http" not in page  # nothing fetched from elsewhere
    assert "`" not in page  # markdown code spans are <code>, never literal backticks
    for part in ("Settings", "relevance threshold", "Metrics", "normalized DCG"):
        assert part in page


def test_markdown_report_writes_its_plots(tmp_path: Path, graded) -> None:  # type: ignore[no-untyped-def]
    qrels, runs = graded
    comparison = rm.compare(qrels, runs, ["ndcg@10"], baseline="bm25")
    path = write_report(comparison, tmp_path / "r.md", qrels=qrels, runs=runs)
    text = path.read_text()
    linked = re.findall(r"!\[[^\]]*\]\((r_files/plot\d\.png)\)", text)
    assert len(linked) == 3
    assert all((tmp_path / link).read_bytes().startswith(PNG) for link in linked)
    with pytest.raises(rm.RagMetricsError, match=r"must end in \.html or \.md"):
        write_report(comparison, tmp_path / "r.pdf")


def test_cli_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels = shared_file("trec_eval", "qrels.rel_level")  # graded 0-4: diagnosed by threshold
    run = shared_file("trec_eval", "results.test")
    out = tmp_path / "report.html"
    assert (
        main(["report", str(qrels), f"std={run}", "-m", "ndcg@10", "-m", "map", "-o", str(out)])
        == 0
    )
    page = out.read_text()
    # classic metrics only: the diagnosis reads grades by the threshold, and calls none harmful
    assert "relevant (grade &gt;= 1) in the pool" in page and "harmful" not in page
    assert "wrote" in capsys.readouterr().out
