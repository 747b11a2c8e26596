"""The retrieval evaluators that RAG tutorials teach, computed by the core.

``RetrievalEvaluator(k_values)`` scores :class:`RetrievalResult` objects with the keys
``P@k``, ``R@k``, ``F1@k``, ``NDCG@k``, ``Hit@k``, ``MAP`` and ``MRR``;
``RetrievalBenchmark`` runs retriever functions over registered queries and compares them.

The tutorials' formulas are kept, including two that differ from trec_eval's:

- ``NDCG@k`` is normalized by the *retrieved* top k sorted by relevance (binary gains), not
  by all relevant docs: a top k holding one relevant doc at rank 1 scores 1.
- A query with no relevant doc scores 0 on every metric and is counted in the means.

Where the tutorials print numbers their formulas do not give (e.g. an "NDCG (poor) ~0.63"
for a ranking whose formula gives another value), the formulas are followed. Repeated ids in
a retrieved list are dropped first (the core's rule).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ragmetrics._table import markdown_table
from ragmetrics.errors import RagMetricsError
from ragmetrics.evaluate import evaluate
from ragmetrics.qrels import Qrels
from ragmetrics.run import Run


@dataclass
class RetrievalResult:
    """One query's retrieval: ranked ids, the relevant ids, and (optionally) the scores."""

    query_id: str
    retrieved_doc_ids: list[str]
    relevant_doc_ids: set[str]
    retrieval_scores: list[float] = field(default_factory=list)


def _ndcg_within_retrieved(retrieved: Sequence[str], relevant: set[str], k: int) -> float:
    """The tutorials' NDCG@k: ideal = the retrieved top-k relevances sorted descending."""
    gains = np.array([1.0 if d in relevant else 0.0 for d in retrieved[:k]])
    if not gains.any():
        return 0.0
    discounts = 1.0 / np.log2(np.arange(2, len(gains) + 2))
    return float(gains @ discounts / (np.sort(gains)[::-1] @ discounts))


def _scores(results: Sequence[RetrievalResult], k_values: Sequence[int]) -> list[dict[str, float]]:
    """Per-query values for every key, computed by the core where the definitions agree."""
    if not results:
        raise RagMetricsError("There is no retrieval result to evaluate; pass at least one.")
    ids = [f"{i}\x1f{r.query_id}" for i, r in enumerate(results)]  # unique even if ids repeat
    judged = {i: dict.fromkeys(r.relevant_doc_ids, 1) for i, r in zip(ids, results, strict=True)}
    depth = max(1, max(len(r.retrieved_doc_ids) for r in results))
    names = [f"{m}@{k}" for k in k_values for m in ("precision", "recall", "f1", "hit_rate")]
    names += ["map", "mrr"]
    core_rows: dict[str, dict[str, float | None]] = {}
    if any(judged.values()):
        run = Run.from_lists(
            {i: list(r.retrieved_doc_ids) for i, r in zip(ids, results, strict=True)}
        )
        core_rows = evaluate(Qrels.from_dict(judged), run, [*names, f"hit_rate@{depth}"]).per_query
    rows = []
    for query_id, result in zip(ids, results, strict=True):
        core = core_rows.get(query_id, {})  # no relevant doc: every metric 0
        row: dict[str, float] = {}
        for k in k_values:
            row[f"P@{k}"] = float(core.get(f"precision@{k}") or 0.0)
            row[f"R@{k}"] = float(core.get(f"recall@{k}") or 0.0)
            row[f"F1@{k}"] = float(core.get(f"f1@{k}") or 0.0)
            row[f"NDCG@{k}"] = _ndcg_within_retrieved(
                result.retrieved_doc_ids, result.relevant_doc_ids, k
            )
            row[f"Hit@{k}"] = float(core.get(f"hit_rate@{k}") or 0.0)
        row["MAP"] = float(core.get("map") or 0.0)
        row["MRR"] = float(core.get("mrr") or 0.0)
        row["Hit"] = float(core.get(f"hit_rate@{depth}") or 0.0)
        rows.append(row)
    return rows


class RetrievalEvaluator:
    """Evaluate retrieval results at several cutoffs (the tutorials' API).

    Example:
        >>> ev = RetrievalEvaluator(k_values=[1, 3])
        >>> r = RetrievalResult("q1", ["d1", "d3", "d2"], {"d1", "d2"})
        >>> ev.evaluate([r])["P@3"]
        0.6666666666666666
    """

    def __init__(self, k_values: Sequence[int] = (1, 3, 5, 10, 20)) -> None:
        if not k_values or any(not isinstance(k, int) or k < 1 for k in k_values):
            raise RagMetricsError(f"k_values must hold integers >= 1; got {list(k_values)!r}.")
        self.k_values = list(k_values)
        self.last_evaluation: dict[str, float] | None = None

    def evaluate_single(self, result: RetrievalResult) -> dict[str, float]:
        """Every key for one query."""
        row = _scores([result], self.k_values)[0]
        row.pop("Hit")
        return row

    def evaluate_batch(self, results: Iterable[RetrievalResult]) -> list[dict[str, float]]:
        """Every key for each query, in order."""
        rows = _scores(list(results), self.k_values)
        for row in rows:
            row.pop("Hit")
        return rows

    def evaluate(self, results: Iterable[RetrievalResult]) -> dict[str, float]:
        """The mean of every key over the queries."""
        rows = self.evaluate_batch(results)
        evaluation = {key: float(np.mean([row[key] for row in rows])) for key in rows[0]}
        self.last_evaluation = evaluation
        return evaluation

    def generate_report(self, evaluation: dict[str, float] | None = None) -> str:
        """A markdown report of an evaluation (default: the last one)."""
        evaluation = evaluation or self.last_evaluation
        if evaluation is None:
            raise RagMetricsError(
                "Nothing to report: call evaluate(results) first or pass its output."
            )
        lines = ["# Retrieval Evaluation Report", ""]
        for title, prefix in (
            ("Precision", "P@"),
            ("Recall", "R@"),
            ("F1", "F1@"),
            ("NDCG", "NDCG@"),
            ("Hit rate", "Hit@"),
        ):
            keys = [key for key in evaluation if key.startswith(prefix)]
            if keys:
                lines.append(f"## {title}")
                lines += [f"- {key}: {evaluation[key]:.4f}" for key in keys]
                lines.append("")
        lines.append("## Overall")
        lines += [f"- {key}: {evaluation[key]:.4f}" for key in ("MAP", "MRR") if key in evaluation]
        return "\n".join(lines) + "\n"


@dataclass
class BenchmarkQuery:
    id: str
    text: str
    relevant_docs: set[str]


class RetrievalBenchmark:
    """Run retriever functions over the same queries and compare them (the tutorials' API)."""

    def __init__(self) -> None:
        self.queries: dict[str, BenchmarkQuery] = {}
        self.results: dict[str, dict[str, float]] = {}

    def add_query(self, query_id: str, query_text: str, relevant_docs: Iterable[str]) -> None:
        """Register a query and its relevant doc ids."""
        if isinstance(relevant_docs, str):
            raise RagMetricsError(
                f"relevant_docs must be a list of ids; wrap it: [{relevant_docs!r}]."
            )
        self.queries[query_id] = BenchmarkQuery(query_id, query_text, set(relevant_docs))

    def run_evaluation(
        self, retriever_name: str, retriever_fn: Callable[[str], Sequence[str]], k: int = 5
    ) -> dict[str, float | str]:
        """Call ``retriever_fn(query_text)`` for every query and score it.

        Returns ``{"retriever", "mrr", "p@k", "r@k", "hit_rate", "ndcg"}`` (the keys carry the
        k given; the tutorial always wrote ``p@5``). ``hit_rate`` looks at the whole list,
        ``ndcg`` at the first k.
        """
        if not self.queries:
            raise RagMetricsError("No query registered: call add_query(...) first.")
        results = [
            RetrievalResult(q.id, list(retriever_fn(q.text)), q.relevant_docs)
            for q in self.queries.values()
        ]
        rows = _scores(results, [k])
        summary = {
            "mrr": float(np.mean([r["MRR"] for r in rows])),
            f"p@{k}": float(np.mean([r[f"P@{k}"] for r in rows])),
            f"r@{k}": float(np.mean([r[f"R@{k}"] for r in rows])),
            "hit_rate": float(np.mean([r["Hit"] for r in rows])),
            "ndcg": float(np.mean([r[f"NDCG@{k}"] for r in rows])),
        }
        self.results[retriever_name] = summary
        return {"retriever": retriever_name, **summary}

    def compare_retrievers(self) -> str:
        """A markdown table of every retriever run so far, best MRR first."""
        if not self.results:
            return "No results to compare."
        ordered = sorted(self.results.items(), key=lambda item: -item[1]["mrr"])
        keys = list(ordered[0][1])
        titles = {"mrr": "MRR", "hit_rate": "Hit Rate", "ndcg": "NDCG"}
        headers = ["Retriever", *(titles.get(key, key.upper()) for key in keys)]
        rows: list[list[str | float]] = [
            [name, *(values[key] for key in keys)] for name, values in ordered
        ]
        return "# Retriever Comparison\n\n" + markdown_table(headers, rows, digits=3)


__all__ = ["BenchmarkQuery", "RetrievalBenchmark", "RetrievalEvaluator", "RetrievalResult"]
