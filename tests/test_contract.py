"""The contract of docs/contract.md, walked over every registry: every registered metric,
fusion method, normalization, paired test, correction and input format meets it, and so will
the next one registered, without a test of its own (the toys at the end break it on purpose
and are caught)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragmetrics as rm
from ragmetrics.analysis import stats
from ragmetrics.data import _files as format_registry
from ragmetrics.fusion import FUSION_METHODS, NORMALIZATIONS, _methods, _norms
from ragmetrics.metrics import registered, registry
from ragmetrics.output import Renderer, register_renderer, renderers
from tests import contract
from tests.conftest import restore_registries

METRICS = sorted(registered().values(), key=lambda s: s.name)


@pytest.mark.parametrize("spec", METRICS, ids=lambda s: s.name)
def test_every_metric_meets_the_contract(spec: Any) -> None:
    contract.check_metric(spec)


@pytest.mark.parametrize("name", sorted(FUSION_METHODS))
def test_every_fusion_method_meets_the_contract(name: str) -> None:
    contract.check_fusion(FUSION_METHODS[name])


@pytest.mark.parametrize("name", sorted(NORMALIZATIONS))
def test_every_normalization_meets_the_contract(name: str) -> None:
    contract.check_normalization(NORMALIZATIONS[name])


@pytest.mark.parametrize("name", sorted(stats.paired_tests()))
def test_every_paired_test_meets_the_contract(name: str) -> None:
    contract.check_paired_test(stats.paired_tests()[name])


@pytest.mark.parametrize("name", sorted(stats.corrections()))
def test_every_correction_meets_the_contract(name: str) -> None:
    contract.check_correction(stats.corrections()[name])


@pytest.mark.parametrize("name", sorted(format_registry.formats()))
def test_every_input_format_meets_the_contract(name: str, tmp_path: Path) -> None:
    contract.check_format(format_registry.formats()[name], tmp_path)


@pytest.mark.parametrize("name", sorted(renderers()))
def test_every_output_format_meets_the_contract(name: str) -> None:
    contract.check_renderer(renderers()[name])


# --- a new component is covered: toys that break the contract are caught -----------------


@pytest.fixture(autouse=True)
def _registries_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every toy registered here is gone after its test."""
    restore_registries(monkeypatch)


def test_a_metric_above_1_for_a_perfect_ranking_is_caught() -> None:
    def kernel(judged: Any, cutoff: int | None) -> np.ndarray:
        return np.full(judged.n_queries, 1.5)

    toy = registry.register(
        registry.MetricSpec("toy_over_one", kernel, registry.Cutoff.OPTIONAL, "classic", "toy")
    )
    with pytest.raises(AssertionError, match=r"toy_over_one.*above 1"):
        contract.check_metric(toy)


def test_a_metric_that_says_nan_where_it_declared_none_is_caught() -> None:
    def kernel(judged: Any, cutoff: int | None) -> np.ndarray:
        return np.where(np.arange(judged.n_queries) % 2, np.nan, 0.5)

    toy = registry.register(
        registry.MetricSpec("toy_nan", kernel, registry.Cutoff.OPTIONAL, "classic", "toy")
    )
    with pytest.raises(AssertionError, match=r"toy_nan.*NA from a metric declared never NA"):
        contract.check_metric(toy)


def test_a_fusion_method_returning_nan_is_caught() -> None:
    def combine(table: Any, runs: Any, params: Any) -> np.ndarray:
        return np.full(table.n_cand, np.nan)

    toy = _methods.register_fusion_method(
        _methods.FusionMethod("toy_nan", "NaN everywhere", "a test's toy", combine)
    )
    with pytest.raises(AssertionError, match=r"toy_nan"):
        contract.check_fusion(toy, ["min-max"])


def test_a_normalization_returning_nan_is_caught() -> None:
    toy = _norms.register_normalization(
        _norms.Normalization(
            "toy_nan", "NaN", lambda rows, table: rows.with_values(rows.values * np.nan)
        )
    )
    with pytest.raises(AssertionError, match=r"toy_nan"):
        contract.check_normalization(toy)


def test_a_paired_test_returning_p_2_is_caught() -> None:
    toy = stats.register_test(
        stats.PairedTestSpec("toy_two", "p = 2", None, lambda d, alpha, n, seed: (2.0, -1.0, 1.0))
    )
    with pytest.raises(AssertionError, match=r"toy_two.*p = 2"):
        contract.check_paired_test(toy)


def test_a_paired_test_eager_on_one_query_is_held_back() -> None:
    def run(d: np.ndarray, alpha: float, n: int, seed: int) -> tuple[float, float, float]:
        mean = float(d.mean())
        return (1.0, min(mean, 0.0), max(mean, 0.0)) if not d.any() else (0.001, mean, mean)

    toy = stats.register_test(stats.PairedTestSpec("toy_eager", "eager", None, run))
    # held back by construction: no test reports less than the exact sign-flip floor
    contract.check_paired_test(toy)
    p, _, _ = stats.paired_interval(np.array([0.9]), np.array([0.1]), test="toy_eager", alpha=0.05)
    assert p == 1.0


def test_a_correction_that_lowers_p_is_caught() -> None:
    toy = stats.register_correction(
        stats.CorrectionSpec("toy_halve", "halve", "nothing", lambda p: p / 2)
    )
    with pytest.raises((AssertionError, Exception), match=r"toy_halve"):
        contract.check_correction(toy)


def test_an_output_format_spelling_nan_is_caught() -> None:
    def naive(result: Any, **options: Any) -> str:
        return repr(result.values.tolist())  # NA as nan

    toy = register_renderer(Renderer("naive", "values as Python writes them", result=naive))
    with pytest.raises(AssertionError, match=r"format naive.*says 'nan'"):
        contract.check_renderer(toy)


def test_an_input_format_with_raw_errors_is_caught(tmp_path: Path) -> None:
    def read(path: Any, name: Any = None) -> Any:
        return int(Path(path).read_bytes()[:1] or b"x")  # a raw ValueError on garbage

    toy = format_registry.register_format(
        format_registry.InputFormat("toy", (".toy",), None, read, read)
    )
    with pytest.raises(AssertionError, match=r"toy.*raw ValueError"):
        contract.check_format(toy, tmp_path)


# functions that take the library's own objects (results, estimates), made only by it
_INTERNAL_ARGS = {"ppi_of_pairs", "ppi_of_result", "ppi_rows"}


def _public_functions() -> list[tuple[str, Any]]:
    import inspect

    import ragmetrics as rm
    from ragmetrics.analysis import ppi, systems
    from ragmetrics.fusion import fuse, optimize_fusion

    found = [
        (f"rm.{name}", getattr(rm, name))
        for name in rm.__all__
        if inspect.isfunction(getattr(rm, name))
    ]
    for module in (stats, systems, ppi):
        found += [
            (f"{module.__name__}.{name}", getattr(module, name))
            for name in module.__all__
            if inspect.isfunction(getattr(module, name))
            and not name.startswith("register")
            and name not in _INTERNAL_ARGS
        ]
    found += [("fusion.fuse", fuse), ("fusion.optimize_fusion", optimize_fusion)]
    from ragmetrics import goldset, matching
    from ragmetrics.compat import autorag
    from ragmetrics.report._report import write_report

    found += [
        ("Qrels.from_dict", rm.Qrels.from_dict),
        ("Qrels.from_obj", rm.Qrels.from_obj),
        ("Qrels.from_groups", rm.Qrels.from_groups),
        ("Run.from_dict", rm.Run.from_dict),
        ("Run.from_lists", rm.Run.from_lists),
        ("Run.from_obj", rm.Run.from_obj),
        ("RetrievalDataset", rm.RetrievalDataset),
        ("matching.is_chunk_from_original", matching.is_chunk_from_original),
        ("matching.ChunkMatcher", matching.ChunkMatcher),
        ("goldset.pool", goldset.pool),
        ("goldset.utility_qrels", goldset.utility_qrels),
        ("goldset.tracking", goldset.tracking),
        ("goldset.make_nuggets", goldset.make_nuggets),
        ("goldset.support_nuggets", goldset.support_nuggets),
        ("goldset.support_agreement", goldset.support_agreement),
        ("output.write_report", write_report),
    ]
    found += [
        (f"compat.autorag.{name}", getattr(autorag, name))
        for name in autorag.__all__
        if name.startswith("retrieval_")
    ]
    return sorted(dict(found).items())


@pytest.mark.parametrize(
    ("name", "function"), _public_functions(), ids=lambda x: x if isinstance(x, str) else ""
)
def test_every_public_function_meets_the_contract(
    name: str, function: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a writer writes here
    given = contract.benign_inputs()
    if name.endswith(("read_run", "read_qrels")):
        (tmp_path / "run.txt").write_text("q1 Q0 a 1 0.5 r\nq1 Q0 b 2 0.4 r\n")
        (tmp_path / "qrels.txt").write_text("q1 0 a 1\n")
        given["path"] = "run.txt" if name.endswith("read_run") else "qrels.txt"
    if name.endswith("read_traces"):
        span = {
            "traceId": "ab" * 16, "spanId": "cd" * 8, "name": "R.retrieve",
            "attributes": [
                {"key": "openinference.span.kind", "value": {"stringValue": "RETRIEVER"}},
                {"key": "input.value", "value": {"stringValue": "q1"}},
                {"key": "retrieval.documents.0.document.id", "value": {"stringValue": "a"}},
            ],
        }  # fmt: skip
        export = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}
        (tmp_path / "traces.jsonl").write_text(json.dumps(export) + "\n")
        given["source"] = "traces.jsonl"
    if name.endswith("by_segment"):
        given["result"] = rm.evaluate(given["qrels"], given["run"], given["metrics"])
        given["segments"] = {q: "odd" if i % 2 else "even" for i, q in enumerate(given["qrels"])}
    if name.endswith("write_report"):
        given["comparison"] = rm.compare(given["qrels"], given["runs"], ["mrr"], n_permutations=20)
    given.update(_OWN.get(name.rsplit(".", 1)[-1], {}))
    if "ppi" in name:
        given["human_qrels"] = dict(list(given["qrels"].items())[:10])
    contract.check_public_function(name, function, given)


# benign values of parameters whose name means something else in another function
_OWN: dict[str, dict[str, Any]] = {
    "adjust": {"method": "holm"},
    "correction_spec": {"name": "holm"},
    "paired_test": {"name": "t-test"},
    "paired_interval": {"test": "t-test", "alpha": 0.05},
    "diagnose": {"values": None},
    "robustness": {
        "qrels": {f"q{i}": {"a": 5, "b": 4, "c": 1 + i % 3} for i in range(8)},
        "runs": {
            "x": {f"q{i}": ["a", "b"] for i in range(8)},
            "y": {f"q{i}": ["c", "a"] for i in range(8)},
        },
        "metric": "ra_nwg@2",
    },
    "student_t_sf2": {"t": 2.0, "df": 10.0},
    "letter_groups": {
        "systems": ["x", "y"],
        "means": [0.5, 0.4],
        "differ": lambda a, b: True,
    },
    "bootstrap_cis": {"columns": [np.arange(10) / 10, np.arange(5) / 5]},
    "tukey_family": {"matrix": np.random.default_rng(1).random((3, 12)), "alpha": 0.05, "seed": 0},
    "from_dict": {"judgments": {"q0": {"a": 1}}, "results": {"q0": {"a": 0.5}}},
    "from_obj": {"obj": {"q0": {"a": 1}}},
    "from_groups": {"groups": {"q0": [["a", "b"], ["c"]]}},
    "from_lists": {"rankings": {"q0": ["a", "b"]}},
    "RetrievalDataset": {
        "queries": {"q0": "who?"},
        "corpus": {"a": "text"},
        "relevant_docs": {"q0": {"a": 1}},
    },
    "is_chunk_from_original": {"chunk": "user: hello", "original": "Date: x\nhello world"},
    "ChunkMatcher": {"originals": {"a": "hello world", "b": "other"}},
    "pool": {"runs": [{"q0": {"a": 0.5}}, {"q0": {"b": 0.4}}], "depth": 5},
    "write_report": {"path": "report.md", "plots": False},
    "utility_qrels": {
        "questions": {"q0": "who?"},
        "run": {"q0": ["a", "b"]},
        "passages": {"a": "Ada did.", "b": "nobody"},
        "answer": lambda question, passage: passage.split()[0],
        "references": {"q0": "Ada"},
        "model_id": "toy",
        "cache": None,
        "metric": "exact_match",
    },
    "ppi_plan": {
        "llm_all": np.linspace(0.1, 0.9, 40),
        "llm_sample": np.linspace(0.1, 0.9, 40)[:12],
        "human_sample": np.linspace(0.1, 0.9, 40)[:12] + 0.05,
        "width": 0.2,
    },
    "make_nuggets": {
        "questions": {"q0": "who wrote it?"},
        "judge": lambda prompt: "vital: Ada wrote it",
        "references": {"q0": "Ada wrote it."},
        "model_id": "toy",
        "cache": None,
    },
    "support_nuggets": {
        "nuggets": {"q0": {"n1": {"text": "Ada wrote it", "vital": True, "support": []}}},
        "pairs": {"q0": ["a"]},
        "passages": {"a": "Ada wrote it in 1843."},
        "judge": lambda prompt: "yes",
        "model_id": "toy",
        "cache": None,
    },
    "support_agreement": {
        "llm": {("q", "n", "a"): True, ("q", "n", "b"): False},
        "human": {("q", "n", "a"): True, ("q", "n", "b"): True},
    },
    "tracking": {
        "metric": {s: {"q1": v, "q2": v / 2} for s, v in zip("abc", (0.9, 0.5, 0.1), strict=True)},
        "quality": {s: {"q1": v, "q2": v} for s, v in zip("abc", (1.0, 0.6, 0.2), strict=True)},
        "n_boot": 100,
    },
}
for _name in ("retrieval_f1", "retrieval_map", "retrieval_mrr", "retrieval_ndcg",
              "retrieval_precision", "retrieval_recall"):  # fmt: skip
    _OWN[_name] = {"retrieval_gt": [["a", "b"], ["c"]], "pred": ["a", "x", "c"]}
_OWN.update({
    _name: {"gt_contents": [["some text"]], "pred_contents": ["some other text"]}
    for _name in ("retrieval_token_f1", "retrieval_token_precision", "retrieval_token_recall")
})  # fmt: skip
