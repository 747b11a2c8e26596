"""ragmetrics.mlflow.log against a real MLflow tracking store in a temporary folder."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ragmetrics as rm

mlflow = pytest.importorskip("mlflow")


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    # MLflow 3 keeps its file store in maintenance mode: allowed here, for a local test
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    mlflow.set_tracking_uri((tmp_path / "mlruns").as_uri())
    mlflow.set_experiment("ragmetrics-tests")
    yield mlflow.MlflowClient()
    while mlflow.active_run() is not None:
        mlflow.end_run()
    mlflow.set_tracking_uri(None)


def _inputs() -> tuple[dict[str, dict[str, int]], dict[str, dict[str, list[str]]]]:
    rng = random.Random(3)
    qrels = {f"q{i}": {f"d{j}": rng.randint(1, 5) for j in range(8)} for i in range(20)}
    qrels["none"] = {"d0": 1, "d1": 2}  # no grade 4 or 5: the set metrics are NA here
    runs = {
        name: {q: rng.sample([f"d{j}" for j in range(12)], 10) for q in qrels}
        for name in ("bm25", "hybrid/v2")
    }
    return qrels, runs


def _artifact(client: Any, run_id: str, path: str) -> Any:
    local = client.download_artifacts(run_id, path)
    return json.loads(Path(local).read_text())


def test_a_result_is_logged_in_the_active_run(store: Any) -> None:
    qrels, runs = _inputs()
    result = rm.evaluate(qrels, runs["bm25"], ["ndcg@10", "P(rel=4)@5", "ra_nwg@5"])
    with mlflow.start_run() as active:
        run_id = rm_mlflow().log(result, prefix="eval/")
        assert mlflow.active_run().info.run_id == run_id == active.info.run_id  # still open
    logged = store.get_run(run_id).data
    assert logged.metrics["eval/ndcg_at_10"] == pytest.approx(result.aggregate["ndcg@10"])
    assert logged.metrics["eval/P_rel_4_at_5"] == pytest.approx(result.aggregate["P(rel=4)@5"])
    assert logged.metrics["eval/count/queries"] == 21
    assert logged.params["eval/missing"] == "zero"
    keys = _artifact(store, run_id, "ragmetrics/metric_keys.json")
    assert keys == {"eval/ndcg_at_10": "ndcg@10", "eval/P_rel_4_at_5": "P(rel=4)@5",
                    "eval/ra_nwg_at_5": "ra_nwg@5"}  # fmt: skip
    table = _artifact(store, run_id, "ragmetrics/per_query.json")
    assert len(table["data"]) == 21


def test_a_comparison_logs_runs_tests_and_the_report(store: Any) -> None:
    qrels, runs = _inputs()
    comparison = rm.compare(qrels, runs, ["ndcg@10", "ra_nwg@5"], n_permutations=200)
    run_id = rm_mlflow().log(comparison, run_name="bm25 vs hybrid")
    assert mlflow.active_run() is None  # the run it started is ended
    finished = store.get_run(run_id)
    assert finished.info.run_name == "bm25 vs hybrid" and finished.info.status == "FINISHED"
    metrics = finished.data.metrics
    for name, key in (("bm25", "bm25"), ("hybrid/v2", "hybrid_v2")):
        assert metrics[f"{key}/ndcg_at_10"] == pytest.approx(comparison.means[name]["ndcg@10"])
        assert metrics[f"{key}/ra_nwg_at_5"] == pytest.approx(comparison.means[name]["ra_nwg@5"])
    assert finished.data.params["test"] == "randomization"
    artifacts = {a.path for a in store.list_artifacts(run_id, "ragmetrics")}
    assert {"ragmetrics/report.html", "ragmetrics/tests.json"} <= artifacts
    assert "ragmetrics/per_query/hybrid_v2.json" in {
        a.path for a in store.list_artifacts(run_id, "ragmetrics/per_query")
    }
    assert _artifact(store, run_id, "ragmetrics/run_keys.json") == {
        "bm25": "bm25",
        "hybrid/v2": "hybrid_v2",
    }
    page = Path(store.download_artifacts(run_id, "ragmetrics/report.html")).read_text()
    assert "Per-query explorer" in page
    tests = _artifact(store, run_id, "ragmetrics/tests.json")
    assert len(tests["data"]) == 2  # one test per metric, two runs


def test_na_means_are_listed_not_logged_as_zero(store: Any) -> None:
    # the decisive doc never reaches the pool: PROC is 0, so %PROC is NA for every query
    result = rm.evaluate({"q": {"a": 5}}, {"q": ["b", "c"]}, ["pct_proc@5", "P@1"])
    assert result.aggregate["pct_proc@5"] is None
    run_id = rm_mlflow().log(result)
    metrics = store.get_run(run_id).data.metrics
    assert "pct_proc_at_5" not in metrics and metrics["P_at_1"] == 0.0
    assert _artifact(store, run_id, "ragmetrics/na_metrics.json") == ["pct_proc@5"]


def test_latency_and_refusals(store: Any) -> None:
    qrels, runs = _inputs()
    result = rm.evaluate(qrels, runs["bm25"], ["mrr"])
    result = result.replace(latencies={q: 0.01 * (i + 1) for i, q in enumerate(qrels)})
    run_id = rm_mlflow().log(result)
    metrics = store.get_run(run_id).data.metrics
    assert metrics["latency_seconds/p50"] == pytest.approx(result.latency()["p50"])  # type: ignore[index]
    with pytest.raises(rm.RagMetricsError, match="takes an EvaluationResult or a Comparison"):
        rm_mlflow().log({"ndcg@10": 0.5})  # type: ignore[arg-type]
    assert rm_mlflow().metric_key("ndcg@10") == "ndcg_at_10"


def test_run_names_that_sanitize_alike_or_look_like_paths(store: Any) -> None:
    qrels, runs = _inputs()
    run = runs["bm25"]
    names = ["a+b", "a_b", "检索", "重排", "../x", "/abs", "n" * 5000]
    comparison = rm.compare(qrels, dict.fromkeys(names, run), ["mrr"], n_permutations=50)
    run_id = rm_mlflow().log(comparison, report=False)
    finished = store.get_run(run_id)
    assert finished.info.status == "FINISHED"
    scopes = _artifact(store, run_id, "ragmetrics/run_keys.json")
    assert list(scopes) == names
    assert len(set(scopes.values())) == len(names)  # one table and one count set each
    for name, scope in scopes.items():
        assert "/" not in scope and ".." not in scope and len(scope) <= 60
        assert finished.data.metrics[f"{scope}/mrr"] == pytest.approx(comparison.means[name]["mrr"])
        assert finished.data.metrics[f"{scope}/count/queries"] == 21
    tables = {a.path for a in store.list_artifacts(run_id, "ragmetrics/per_query")}
    assert len(tables) == len(names)


def test_an_mlflow_refusal_is_named_and_a_bad_prefix_refused(store: Any) -> None:
    qrels, runs = _inputs()
    result = rm.evaluate(qrels, runs["bm25"], ["mrr"])
    with pytest.raises(rm.RagMetricsError, match="prefix must be"):
        rm_mlflow().log(result, prefix="../up")
    assert mlflow.active_run() is None
    with mlflow.start_run() as active:
        mlflow.log_param("missing", "something else")  # log() would change it: refused
        with pytest.raises(rm.RagMetricsError, match="MLflow refused part of the log"):
            rm_mlflow().log(result)
        assert mlflow.active_run().info.run_id == active.info.run_id  # the user's, still open


def rm_mlflow() -> Any:
    from ragmetrics import mlflow as module

    return module
