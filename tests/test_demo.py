"""`make demo` runs end to end: data written, four configurations compared, report written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_demo_dependencies_are_installed() -> None:
    # `make test` installs them (integrations' test extras); a skip here would hide a broken demo
    import langchain_text_splitters  # noqa: F401
    import llama_index.retrievers.bm25  # noqa: F401
    import rank_bm25  # noqa: F401


def test_demo_runs(tmp_path: Path) -> None:
    env = {**os.environ, "RAGMETRICS_DEMO_OUTPUT": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo" / "run.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=True,
    )
    out = done.stdout
    for name in (
        "llamaindex/64tok", "llamaindex/256tok", "langchain/250ch", "langchain/1000ch",
        "overlap/whole",
    ):  # fmt: skip
        assert name in out
    assert "is significantly" in out  # a real difference, said in words
    assert "ra_nwg@5" in out and "paired randomization test" in out
    dataset = json.loads((tmp_path / "data" / "dataset.json").read_text())
    assert len(dataset["queries"]) == 33 and len(dataset["corpus"]) == 47
    judged = dataset["relevant_docs"]
    grades = {g for docs in judged.values() for g in docs.values()}
    assert grades == {1, 2, 3, 4, 5}
    # every original graded for every question: "unjudged" only for ambiguous chunks
    assert all(set(docs) == set(dataset["corpus"]) for docs in judged.values())
    assert "Unjudged docs in the top 5" in out and "questions have no answer" in out
    # uneven evidence: how many 5s, 4s and 3s a question has varies, so rarity weights do
    profiles = {tuple(list(docs.values()).count(g) for g in (5, 4, 3)) for docs in judged.values()}
    assert len(profiles) >= 5, profiles
    assert sum(1 for docs in judged.values() if max(docs.values()) < 4) == 3  # no answer
    assert (
        "Date: " in dataset["corpus"]["session-02"]
        and "\nuser: " in dataset["corpus"]["session-02"]
    )
    nuggets = json.loads((tmp_path / "data" / "nuggets.json").read_text())["nuggets"]
    assert len(nuggets) == 30  # one vital fact for each answered question
    assert all(
        set(n["answer"]["support"]) == {d for d, g in judged[q].items() if g >= 4}
        for q, n in nuggets.items()
    )
    assert "nugget_recall@5" in out
    page = (tmp_path / "report.html").read_text()
    assert "nugget_recall@5" in page
    assert "What limits RA-nWG@5" in page and "worst queries" in page
    assert "Settings" in page and "relevance threshold" in page and "confidence interval" in page
    assert "p &lt; 0.05 (before the correction)" in page
    _intervals_agree_with_the_tests(tmp_path)


def _intervals_agree_with_the_tests(folder: Path) -> None:
    """On the demo's own runs, every paired test's interval leaves out 0 exactly when its
    p-value is below alpha, for each of the three tests."""
    import math

    import ragmetrics as rm

    qrels = rm.Qrels.from_trec(folder / "qrels.txt")
    runs = {p.stem: rm.Run.from_trec(p) for p in sorted((folder / "runs").glob("*.txt"))}
    metrics = ["ndcg(gains='1:0')@10", "recall@10", "mrr@10", "ra_nwg@5", "proc@5", "pct_proc@5"]
    for test in ("randomization", "t-test", "bootstrap"):
        comparison = rm.compare(
            qrels, runs, metrics, test=test, relevance_threshold=4, n_permutations=4000
        )
        for t in comparison.tests:
            if math.isnan(t.p_value):
                continue
            excluded = t.ci_low > 0 or t.ci_high < 0
            assert excluded == (t.p_value < 0.05), (test, t.metric, t.a, t.b, t.p_value, t.ci_low)
