"""The public surface, pinned: every public module declares ``__all__`` and this test holds
each list as it is, so that a name added, moved or removed is a decision seen in review
(and written in the CHANGELOG), never an accident. The adapters import the core only
through ``ragmetrics.adapters``."""

from __future__ import annotations

import ast
import importlib
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = {
    "ragmetrics": ROOT / "src",
    "langchain_ragmetrics": ROOT / "integrations" / "langchain" / "src",
    "llama_index.evaluation.ragmetrics": ROOT / "integrations" / "llama-index" / "src",
}

PUBLIC_API: dict[str, list[str]] = {
    "ragmetrics": [
        "AmbiguousChunkWarning",
        "Comparison",
        "Counts",
        "Diagnosis",
        "EvaluationResult",
        "FormatLossWarning",
        "GradeScaleError",
        "IdMismatchWarning",
        "InputFormatError",
        "InvalidParameterError",
        "MissingDependencyError",
        "MissingQueryError",
        "OneProcessWarning",
        "PairedTest",
        "Qrels",
        "RagMetricsError",
        "RagMetricsWarning",
        "RetrievalDataset",
        "RobustnessResult",
        "Run",
        "UndefinedMetricWarning",
        "UngroupedInputError",
        "UnknownMetricError",
        "WriteError",
        "__version__",
        "compare",
        "diagnose",
        "evaluate",
        "evaluate_stream",
        "fuse",
        "list_metrics",
        "optimize_fusion",
        "read_qrels",
        "read_run",
        "robustness",
        "write_report",
    ],
    "ragmetrics.adapters": [
        "ChunkMatcher",
        "DEFAULT_RULES",
        "EvaluationPlan",
        "EvaluationResult",
        "HandlerFailure",
        "HandlerFailureWarning",
        "IdFieldWarning",
        "InvalidParameterError",
        "Judge",
        "MatchRules",
        "MissingPolicy",
        "Qrels",
        "QueryScorer",
        "RagMetricsError",
        "RagMetricsWarning",
        "Reply",
        "RetrievalDataset",
        "RetrievalLog",
        "RetrievalRecord",
        "Retrieved",
        "Run",
        "as_dataset",
        "model_identity",
        "progress_bar",
        "warn",
    ],
    "ragmetrics.adapters.harness": ["EvaluationPlan", "Retrieved", "Scored"],
    "ragmetrics.adapters.records": ["HandlerFailure", "RetrievalLog", "RetrievalRecord"],
    "ragmetrics.adapters.scoring": ["QueryScorer", "Scores"],
    "ragmetrics.analysis": [],
    "ragmetrics.analysis.comparison": [
        "Comparison",
        "PERMUTATIONS",
        "PairedTest",
        "RESAMPLES",
        "SEED",
        "SIGNIFICANCE",
        "TestName",
        "compare",
        "format_p",
    ],
    "ragmetrics.analysis.diagnostics": ["Diagnosis", "DocNote", "diagnose", "relevance_strings"],
    "ragmetrics.analysis.sensitivity": [
        "DEFAULT_GRID",
        "DEFAULT_WEIGHTING",
        "RobustnessResult",
        "robustness",
    ],
    "ragmetrics.analysis.distributions": [
        "f_sf",
        "incomplete_beta",
        "noncentral_t_cdf",
        "normal_quantile",
        "student_t_sf2",
        "t_quantile",
    ],
    "ragmetrics.analysis.stats": [
        "BOOTSTRAP",
        "CorrectionSpec",
        "PairedTestSpec",
        "RANDOMIZATION",
        "TIE_TOLERANCE",
        "TUKEY_HSD",
        "T_TEST",
        "WILCOXON",
        "adjust",
        "bootstrap_ci",
        "bootstrap_cis",
        "bootstrap_test",
        "correction_spec",
        "corrections",
        "effect_size",
        "paired_differences",
        "paired_interval",
        "paired_test",
        "paired_tests",
        "randomization_test",
        "register_correction",
        "register_test",
        "t_test",
        "wilcoxon_test",
    ],
    "ragmetrics.analysis.ppi": [
        "PPIEstimate",
        "ppi_compare",
        "ppi_evaluate",
        "ppi_mean",
        "ppi_of_pairs",
        "ppi_of_result",
        "ppi_rows",
    ],
    "ragmetrics.analysis.segments": [
        "SegmentRow",
        "SegmentTable",
        "SegmentTest",
        "Segments",
        "by_segment",
        "check_segments",
        "segment_tests",
    ],
    "ragmetrics.analysis.systems": [
        "Anova",
        "EffectSize",
        "Tost",
        "TukeyHSD",
        "anova_two_way",
        "effect_size_interval",
        "paired_t_power",
        "topic_set_size",
        "tost",
        "tukey_hsd",
    ],
    "ragmetrics.cli": ["console", "main"],
    "ragmetrics.cli.commands": [
        "build_parser",
        "console",
        "grade_map_argument",
        "main",
        "metric_names",
        "named_runs",
        "read_qrels",
        "read_run",
        "read_segments",
    ],
    "ragmetrics.cli.trec_eval": [
        "Measure",
        "TrecEvalError",
        "add_parser",
        "command",
        "main",
        "measures",
        "run_trec_eval",
    ],
    "ragmetrics.compat": ["autorag", "ir_measures", "pytrec_eval", "remem", "tutorial"],
    "ragmetrics.compat.ir_measures": [
        "AP",
        "BPref",
        "Bpref",
        "ERR",
        "IPrec",
        "Judged",
        "MAP",
        "MRR",
        "Measure",
        "Metric",
        "NDCG",
        "NumQ",
        "NumRel",
        "NumRelRet",
        "NumRet",
        "P",
        "Precision",
        "Qrel",
        "R",
        "RBP",
        "RPrec",
        "RR",
        "Recall",
        "Rprec",
        "ScoredDoc",
        "SetAP",
        "SetF",
        "SetP",
        "SetR",
        "Success",
        "calc_aggregate",
        "evaluator",
        "infAP",
        "iter_calc",
        "nDCG",
        "parse_measure",
    ],
    "ragmetrics.compat.pytrec_eval": [
        "RelevanceEvaluator",
        "parse_qrel",
        "parse_run",
        "supported_measures",
        "supported_nicknames",
    ],
    "ragmetrics.compat.autorag": [
        "normalize_answer",
        "retrieval_f1",
        "retrieval_map",
        "retrieval_mrr",
        "retrieval_ndcg",
        "retrieval_precision",
        "retrieval_recall",
        "retrieval_token_f1",
        "retrieval_token_precision",
        "retrieval_token_recall",
    ],
    "ragmetrics.compat.remem": ["RetrievalNDCGAny", "RetrievalRecall", "RetrievalRecallAll"],
    "ragmetrics.compat.tutorial": [
        "BenchmarkQuery",
        "RetrievalBenchmark",
        "RetrievalEvaluation",
        "RetrievalEvaluator",
        "RetrievalMetrics",
        "RetrievalResult",
    ],
    "ragmetrics.data": [],
    "ragmetrics.data.dataset": ["RetrievalDataset", "as_dataset"],
    "ragmetrics.data.files": [
        "InputFormat",
        "find_format",
        "formats",
        "read_qrels",
        "read_run",
        "register_format",
    ],
    "ragmetrics.data.qrels": ["Groups", "Qrels"],
    "ragmetrics.data.run": ["Run"],
    "ragmetrics.datasets": ["demo", "hashed_embedding", "people", "write_demo"],
    "ragmetrics.engine": [],
    "ragmetrics.engine.evaluation": [
        "depth_needed",
        "evaluate",
        "evaluate_checked",
        "score_queries",
    ],
    "ragmetrics.engine.id_warnings": [
        "ids_look_alike",
        "ranked_example",
        "sample_ids",
        "warn_if_ids_do_not_meet",
        "warn_if_ids_never_meet",
    ],
    "ragmetrics.engine.locate": [
        "Evidence",
        "JudgedRun",
        "locate_in_lists",
        "locate_in_ranking",
        "locate_judged",
        "rank_of",
    ],
    "ragmetrics.engine.result": ["Counts", "EvaluationResult", "Inputs"],
    "ragmetrics.engine.selection": [
        "Batch",
        "Selection",
        "check_missing",
        "count",
        "judged_rows",
        "select_batch",
        "select_queries",
    ],
    "ragmetrics.engine.settings": [
        "MissingPolicy",
        "Settings",
        "as_qrels",
        "as_run",
        "check_grade_map",
        "check_settings",
        "checked_inputs",
        "checked_qrels",
        "evaluate_keywords",
        "keep_judged",
        "metric_list",
        "metric_names",
        "resolve_metrics",
    ],
    "ragmetrics.engine.stream": [
        "Job",
        "Merger",
        "PartialResult",
        "UngroupedInputError",
        "evaluate_stream",
        "merge",
        "partial",
    ],
    "ragmetrics.errors": [
        "AmbiguousChunkWarning",
        "FormatLossWarning",
        "GradeScaleError",
        "HandlerFailureWarning",
        "IdFieldWarning",
        "IdMismatchWarning",
        "InputFormatError",
        "InvalidParameterError",
        "LabelsChangedWarning",
        "MissingDependencyError",
        "MissingKeyError",
        "MissingQueryError",
        "OneProcessWarning",
        "QueryMismatchWarning",
        "RagMetricsError",
        "RagMetricsWarning",
        "RetrievalFailedWarning",
        "StageWarning",
        "UndefinedMetricWarning",
        "UngradedPairsWarning",
        "UngroupedInputError",
        "UnknownMetricError",
        "UsageError",
        "WriteError",
    ],
    "ragmetrics.formats": [],
    "ragmetrics.fusion": [
        "FUSION_METHODS",
        "FusionMethod",
        "NORMALIZATIONS",
        "Normalization",
        "REQUIRED",
        "fuse",
        "optimize_fusion",
        "register_fusion_method",
        "register_normalization",
    ],
    "ragmetrics.goldset": [
        "Audit",
        "Estimate",
        "FunctionJudge",
        "GoldSet",
        "Judge",
        "LabelsChangedWarning",
        "Limits",
        "PROMPT_VERSION",
        "Pool",
        "Reply",
        "TEMPLATE",
        "UngradedPairsWarning",
        "Usage",
        "agrade",
        "as_judge",
        "audit",
        "estimate",
        "export_sample",
        "grade",
        "labels_of",
        "model_identity",
        "parse_grade",
        "pool",
        "read_sample",
    ],
    "ragmetrics.matching": [
        "AMBIGUOUS_POLICIES",
        "ChunkMatcher",
        "DEFAULT_RULES",
        "MatchRules",
        "MatchedRun",
        "check_policy",
        "is_chunk_from_original",
    ],
    "ragmetrics.metrics": [
        "Cutoff",
        "Metric",
        "MetricSpec",
        "Param",
        "Scale",
        "aliases_of",
        "classic",
        "list_metrics",
        "parse_metric",
        "parse_metrics",
        "rag",
        "register",
        "registered",
        "trec",
    ],
    "ragmetrics.metrics.classic": [
        "average_precision",
        "bpref",
        "err",
        "f1",
        "group_recall",
        "hit_rate",
        "interpolated_precision",
        "ndcg",
        "precision",
        "r_precision",
        "recall",
        "recall_all",
        "reciprocal_rank",
        "relevant_count",
        "relevant_retrieved_count",
        "retrieved_count",
    ],
    "ragmetrics.metrics.trec": [
        "BETA",
        "GAINS",
        "LEVELS",
        "MULTIPLE",
        "PERSISTENCE",
        "PREFERENCE_MEASURES",
        "UTILITY_WEIGHTS",
        "bin_g",
        "dcg",
        "eleven_point_average",
        "g_measure",
        "ideal_dcg",
        "inferred_ap",
        "judged_share",
        "ndcg_gains",
        "ndcg_rel",
        "nonrelevant_judged_retrieved",
        "preference_kernel",
        "r_ndcg",
        "r_precision_multiple",
        "rbp",
        "rbp_residual",
        "relative_precision",
        "round_half_away",
        "set_ap",
        "set_f",
        "set_precision",
        "set_recall",
        "set_relative_precision",
        "unjudged_rate",
        "utility",
        "yaap",
    ],
    "ragmetrics.metrics.rag": [
        "BASE_UTILITY",
        "FALLBACK_WEIGHTS",
        "Utility",
        "check_query_grades",
        "check_utility_scale",
        "harm",
        "n_recall_4plus",
        "n_recall_5",
        "pct_proc",
        "precision_4plus",
        "proc",
        "proposed_grade_map",
        "ra_nwg",
        "rarity_weights",
        "unjudged",
        "utility",
    ],
    "ragmetrics.metrics.registry": [
        "ALPHA",
        "Aggregate",
        "CAP3",
        "CAP4",
        "Cutoff",
        "DCG",
        "GAINS",
        "GEOMETRIC_FLOOR",
        "Kernel",
        "LEVEL",
        "MAX_GRADE",
        "Metric",
        "MetricSpec",
        "Param",
        "REL",
        "ROUNDING",
        "Scale",
        "Tally",
        "UNSUPPORTED",
        "WEIGHTING",
        "aliases_of",
        "coerce",
        "keyword_params",
        "parse_metric",
        "parse_metrics",
        "presets_of",
        "register",
        "register_param",
        "registered",
    ],
    "ragmetrics.output": [],
    "ragmetrics.output.plots": [
        "decompositions",
        "plot_metric_at_k",
        "plot_per_query_distribution",
        "plot_rag_decomposition",
        "plot_win_loss",
    ],
    "ragmetrics.output.explorer": ["TEXT_BUDGET", "explorer_html"],
    "ragmetrics.output.report": ["write_report"],
    "ragmetrics.mlflow": ["log", "metric_key"],
    "ragmetrics.ray": ["evaluate"],
    "ragmetrics.spark": ["evaluate"],
    "langchain_ragmetrics": [
        "ChatModelJudge",
        "RetrievalEvalCallbackHandler",
        "RetrievalRecord",
        "aevaluate_retriever",
        "as_judge",
        "content_hash",
        "document_id",
        "document_ids",
        "document_texts",
        "evaluate_retriever",
        "langsmith_evaluator",
    ],
    "langchain_ragmetrics.callbacks": ["RetrievalEvalCallbackHandler", "RetrievalRecord"],
    "langchain_ragmetrics.evaluation": [
        "aevaluate_retriever",
        "evaluate_retriever",
        "langsmith_evaluator",
    ],
    "langchain_ragmetrics.judge": ["ChatModelJudge", "Grade", "as_judge"],
    "llama_index.evaluation.ragmetrics": [
        "LLMJudge",
        "MetricKeyWarning",
        "RagMetricsMetric",
        "RagMetricsRetrieverEvaluator",
        "RetrievalRecord",
        "RetrievalRecorder",
        "as_judge",
        "node_id",
        "node_ids",
        "node_texts",
        "register_metrics",
    ],
    "llama_index.evaluation.ragmetrics.evaluator": ["RagMetricsRetrieverEvaluator", "run_sync"],
    "llama_index.evaluation.ragmetrics.judge": ["GRADE_TOOL", "Grade", "LLMJudge", "as_judge"],
    "llama_index.evaluation.ragmetrics.metrics": [
        "MetricKeyWarning",
        "RagMetricsMetric",
        "register_metrics",
    ],
    "llama_index.evaluation.ragmetrics.recorder": ["RetrievalRecord", "RetrievalRecorder"],
}


def _public_modules() -> list[str]:
    """Every module of the three distributions with no leading underscore on its path."""
    found = []
    for package, base in SOURCES.items():
        for path in sorted((base / package.replace(".", "/")).rglob("*.py")):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if not any(part.startswith("_") for part in parts):
                found.append(".".join(parts))
    return found


def test_every_public_module_is_pinned() -> None:
    assert sorted(_public_modules()) == sorted(PUBLIC_API)


@pytest.mark.parametrize("name", sorted(PUBLIC_API))
def test_each_public_module_declares_its_pinned_names(name: str) -> None:
    module = importlib.import_module(name)
    declared = getattr(module, "__all__", None)
    assert declared is not None, f"{name} declares no __all__"
    assert sorted(declared) == PUBLIC_API[name], f"{name}: __all__ changed; update the pin"
    missing = [n for n in declared if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names what it lacks: {missing}"


def _core_imports(path: Path) -> list[str]:
    """The ragmetrics modules a source file imports from."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "ragmetrics" or node.module.startswith("ragmetrics."):
                found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == "ragmetrics"]
    return found


@pytest.mark.parametrize("package", ["langchain_ragmetrics", "llama_index.evaluation.ragmetrics"])
def test_the_adapters_import_the_core_only_through_its_adapter_interface(package: str) -> None:
    base = SOURCES[package] / package.replace(".", "/")
    outside = {
        f"{path.relative_to(ROOT)}: {module}"
        for path in base.rglob("*.py")
        for module in _core_imports(path)
        if module != "ragmetrics.adapters"
    }
    assert not outside, sorted(outside)


def test_the_old_import_paths_still_load_the_moved_modules() -> None:
    from ragmetrics import _moved

    for old, new in _moved.MOVED.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            module = importlib.import_module(old)
        assert module is importlib.import_module(new)
        assert any(issubclass(w.category, DeprecationWarning) and new in str(w.message)
                   for w in caught) or old in __import__("sys").modules  # fmt: skip


def test_no_module_shadows_a_function_of_its_package() -> None:
    """``import ragmetrics.x`` binds ``ragmetrics.x``: no public module may share the name
    of a function or class its package exports (``ragmetrics.compare`` was once both)."""
    clashes = []
    for name in PUBLIC_API:
        package, _, leaf = name.rpartition(".")
        if package in PUBLIC_API and leaf in PUBLIC_API[package]:
            exported = getattr(importlib.import_module(package), leaf)
            if exported is not importlib.import_module(name):
                clashes.append(name)
    assert not clashes, clashes
