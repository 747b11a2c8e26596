"""The retrieval evaluators that RAG tutorials teach, with their numbers exactly.

Two tutorial suites are reproduced, each function keeping repeated retrieved ids exactly as
the tutorial's code keeps them:

- :class:`RetrievalMetrics` and :meth:`RetrievalEvaluator.evaluate` (keys ``P@k``, ``R@k``,
  ``F1@k``, ``NDCG@k``, ``Hit@k``, ``MAP``, ``MRR``): precision@k, average precision and
  nDCG@k iterate the list, so a repeated relevant id counts again (average precision can
  then exceed 1, as the tutorial's formula gives); recall@k and hit rate@k build sets of the
  first k ids. nDCG@k is normalized by the *retrieved* top k sorted by relevance (binary
  gains), not by every relevant doc. A query with no relevant doc scores 0 and is counted.
- :meth:`RetrievalEvaluator.evaluate_single` / :meth:`~RetrievalEvaluator.evaluate_batch`
  given query dicts ``{"id", "retrieved", "relevant", "relevance_scores"?}``, and
  :class:`RetrievalBenchmark`: precision and recall over the *sets* of retrieved and
  relevant ids; precision@k counts the list, recall@k the set of the first k; nDCG over the
  whole retrieved list, normalized by its own relevances sorted (graded when
  ``relevance_scores`` is given). The benchmark's recall@k counts the list too, and its keys
  are ``p@5`` and ``r@5`` whatever k, as the tutorial wrote them.

Where a tutorial prints numbers its own formulas do not give (an "NDCG (poor) ~0.63" for a
ranking whose formula gives another value), the formulas are followed. On inputs without
repeated ids, every value that the core also defines equals the core's (a test holds them).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from ragmetrics.errors import RagMetricsError

DEFAULT_K_VALUES = (1, 3, 5, 10, 20)


@dataclass
class RetrievalResult:
    """One query's retrieval: ranked ids, the relevant ids, and (optionally) the scores."""

    query_id: str
    retrieved_doc_ids: list[str]
    relevant_doc_ids: set[str]
    retrieval_scores: list[float] = field(default_factory=list)


def _dcg(relevances: Sequence[float]) -> float:
    return sum(rel / math.log2(i + 2) for i, rel in enumerate(relevances))


def _ndcg_of(relevances: Sequence[float]) -> float:
    """DCG of ``relevances`` over the DCG of the same relevances sorted descending."""
    ideal = _dcg(sorted(relevances, reverse=True))
    return _dcg(relevances) / ideal if ideal > 0 else 0.0


class RetrievalMetrics:
    """The per-query formulas of the tutorial's ``RetrievalMetrics`` (static methods)."""

    @staticmethod
    def precision_at_k(result: RetrievalResult, k: int) -> float:
        """Relevant ids among the first k, counted in the list (a repeat counts again) / k."""
        hits = sum(1 for doc in result.retrieved_doc_ids[:k] if doc in result.relevant_doc_ids)
        return hits / k if k > 0 else 0.0

    @staticmethod
    def recall_at_k(result: RetrievalResult, k: int) -> float:
        """Distinct relevant ids among the first k / relevant ids; 0 with none relevant."""
        if not result.relevant_doc_ids:
            return 0.0
        found = set(result.retrieved_doc_ids[:k]) & set(result.relevant_doc_ids)
        return len(found) / len(result.relevant_doc_ids)

    @staticmethod
    def f1_at_k(result: RetrievalResult, k: int) -> float:
        """Harmonic mean of precision@k and recall@k; 0 when both are 0."""
        p = RetrievalMetrics.precision_at_k(result, k)
        r = RetrievalMetrics.recall_at_k(result, k)
        return 2 * p * r / (p + r) if p + r else 0.0

    @staticmethod
    def average_precision(result: RetrievalResult) -> float:
        """Sum of precision at each relevant position of the list / relevant ids."""
        if not result.relevant_doc_ids:
            return 0.0
        found, total = 0, 0.0
        for i, doc in enumerate(result.retrieved_doc_ids):
            if doc in result.relevant_doc_ids:
                found += 1
                total += found / (i + 1)
        return total / len(result.relevant_doc_ids)

    @staticmethod
    def reciprocal_rank(result: RetrievalResult) -> float:
        """1 / position of the first relevant id; 0 if there is none."""
        for i, doc in enumerate(result.retrieved_doc_ids):
            if doc in result.relevant_doc_ids:
                return 1.0 / (i + 1)
        return 0.0

    @staticmethod
    def ndcg_at_k(result: RetrievalResult, k: int) -> float:
        """Binary nDCG of the first k, normalized by those k relevances sorted."""
        relevant = result.relevant_doc_ids
        return _ndcg_of([1.0 if doc in relevant else 0.0 for doc in result.retrieved_doc_ids[:k]])

    @staticmethod
    def hit_rate_at_k(result: RetrievalResult, k: int) -> float:
        """1 if a relevant id is among the first k, else 0."""
        return 1.0 if set(result.retrieved_doc_ids[:k]) & set(result.relevant_doc_ids) else 0.0


@dataclass
class RetrievalEvaluation:
    """One query's evaluation in the query-dict form (``evaluate_single(query_id, ...)``)."""

    query_id: str
    precision: float
    recall: float
    f1: float
    reciprocal_rank: float
    ndcg: float
    precision_at_k: dict[int, float]
    recall_at_k: dict[int, float]
    retrieved_count: int
    relevant_count: int
    relevant_retrieved: int
    first_relevant_position: int | None


class RetrievalEvaluator:
    """Evaluate retrieval results at several cutoffs (the tutorials' API).

    ``evaluate(results)`` takes :class:`RetrievalResult` objects and returns the means of
    ``P@k``, ``R@k``, ``F1@k``, ``NDCG@k``, ``Hit@k``, ``MAP`` and ``MRR``;
    ``evaluate_batch(queries)`` takes query dicts and returns the aggregate of
    :meth:`evaluate_single` (``count``, ``mean_precision``, ..., ``hit_rate``).

    Example:
        >>> ev = RetrievalEvaluator(k_values=[1, 3])
        >>> r = RetrievalResult("q1", ["d1", "d3", "d2"], {"d1", "d2"})
        >>> ev.evaluate([r])["P@3"]
        0.6666666666666666
    """

    def __init__(self, k_values: Sequence[int] | None = DEFAULT_K_VALUES) -> None:
        k_values = DEFAULT_K_VALUES if k_values is None else k_values
        if not k_values or any(
            not isinstance(k, int) or isinstance(k, bool) or k < 1 for k in k_values
        ):
            raise RagMetricsError(f"k_values must hold integers >= 1; got {list(k_values)!r}.")
        self.k_values = list(k_values)
        self.metrics = RetrievalMetrics()
        self.last_evaluation: dict[str, float] | None = None

    # --- RetrievalResult objects ----------------------------------------------------------

    def _row(self, result: RetrievalResult) -> dict[str, float]:
        if not isinstance(result, RetrievalResult):
            raise RagMetricsError(
                f"Expected a RetrievalResult; got {type(result).__name__}. Query dicts "
                f"({{'id', 'retrieved', 'relevant'}}) go to evaluate_batch."
            )
        m = RetrievalMetrics
        row: dict[str, float] = {}
        for k in self.k_values:
            row[f"P@{k}"] = m.precision_at_k(result, k)
            row[f"R@{k}"] = m.recall_at_k(result, k)
            row[f"F1@{k}"] = m.f1_at_k(result, k)
            row[f"NDCG@{k}"] = m.ndcg_at_k(result, k)
            row[f"Hit@{k}"] = m.hit_rate_at_k(result, k)
        row["MAP"] = m.average_precision(result)
        row["MRR"] = m.reciprocal_rank(result)
        return row

    def evaluate(self, results: Iterable[RetrievalResult]) -> dict[str, float]:
        """The mean of every key over the queries (keys ordered as the tutorial's)."""
        rows = [self._row(r) for r in results]
        if not rows:
            raise RagMetricsError("There is no retrieval result to evaluate; pass at least one.")
        keys = [f"{m}@{k}" for k in self.k_values for m in ("P", "R", "F1", "NDCG", "Hit")]
        evaluation = {key: sum(row[key] for row in rows) / len(rows) for key in keys}
        evaluation["MAP"] = sum(row["MAP"] for row in rows) / len(rows)
        evaluation["MRR"] = sum(row["MRR"] for row in rows) / len(rows)
        self.last_evaluation = evaluation
        return evaluation

    # --- query dicts -----------------------------------------------------------------------

    @overload
    def evaluate_single(self, query_id: RetrievalResult) -> dict[str, float]: ...

    @overload
    def evaluate_single(
        self,
        query_id: str,
        retrieved_ids: Sequence[str],
        relevant_ids: Iterable[str],
        relevance_scores: Mapping[str, float] | None = None,
    ) -> RetrievalEvaluation: ...

    def evaluate_single(
        self,
        query_id: str | RetrievalResult,
        retrieved_ids: Sequence[str] | None = None,
        relevant_ids: Iterable[str] | None = None,
        relevance_scores: Mapping[str, float] | None = None,
    ) -> RetrievalEvaluation | dict[str, float]:
        """One query: ``evaluate_single(query_id, retrieved_ids, relevant_ids,
        relevance_scores=None)`` gives a :class:`RetrievalEvaluation`; a
        :class:`RetrievalResult` alone gives its row of ``P@k`` ... ``MRR``."""
        if isinstance(query_id, RetrievalResult):
            return self._row(query_id)
        if retrieved_ids is None or relevant_ids is None:
            raise RagMetricsError(
                "evaluate_single(query_id, retrieved_ids, relevant_ids) needs the retrieved "
                "and the relevant ids."
            )
        relevant = set(relevant_ids)
        retrieved_set = set(retrieved_ids)
        found = retrieved_set & relevant
        precision = len(found) / len(retrieved_set) if retrieved_set else 0.0
        recall = len(found) / len(relevant) if relevant else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
        first = next((i for i, d in enumerate(retrieved_ids, start=1) if d in relevant), None)
        if relevance_scores:
            relevances = [float(relevance_scores.get(d, 0)) for d in retrieved_ids]
        else:
            relevances = [1.0 if d in relevant else 0.0 for d in retrieved_ids]
        at_k = RetrievalResult(str(query_id), list(retrieved_ids), relevant)
        return RetrievalEvaluation(
            query_id=str(query_id),
            precision=precision,
            recall=recall,
            f1=f1,
            reciprocal_rank=0.0 if first is None else 1.0 / first,
            ndcg=_ndcg_of(relevances) if relevances else 0.0,
            precision_at_k={k: RetrievalMetrics.precision_at_k(at_k, k) for k in self.k_values},
            recall_at_k={k: RetrievalMetrics.recall_at_k(at_k, k) for k in self.k_values},
            retrieved_count=len(retrieved_set),
            relevant_count=len(relevant),
            relevant_retrieved=len(found),
            first_relevant_position=first,
        )

    def evaluate_batch(self, queries: Iterable[Any]) -> Any:
        """Query dicts ``{"id", "retrieved", "relevant", "relevance_scores"?}``: the
        aggregate ``count``, ``mean_precision``, ``mean_recall``, ``mean_f1``, ``mrr``,
        ``mean_ndcg``, ``mean_p@k``, ``mean_r@k``, ``success@1`` and ``hit_rate`` (``{}``
        for no query). :class:`RetrievalResult` objects: one row of keys per query."""
        items = list(queries)
        if items and all(isinstance(i, RetrievalResult) for i in items):
            return [self._row(i) for i in items]
        evaluations = []
        for position, query in enumerate(items):
            if not isinstance(query, Mapping):
                raise RagMetricsError(
                    f"Query {position} must be a dict with 'id', 'retrieved' and 'relevant' "
                    f"(or every item a RetrievalResult); got {type(query).__name__}."
                )
            missing = [key for key in ("id", "retrieved", "relevant") if key not in query]
            if missing:
                raise RagMetricsError(
                    f"Query {position} lacks the key(s) {', '.join(map(repr, missing))}."
                )
            evaluations.append(
                self.evaluate_single(
                    query["id"],
                    query["retrieved"],
                    set(query["relevant"]),
                    query.get("relevance_scores"),
                )
            )
        return self._aggregate(evaluations)

    def _aggregate(self, results: list[RetrievalEvaluation]) -> dict[str, float]:
        n = len(results)
        if n == 0:
            return {}
        aggregate: dict[str, float] = {
            "count": n,
            "mean_precision": sum(r.precision for r in results) / n,
            "mean_recall": sum(r.recall for r in results) / n,
            "mean_f1": sum(r.f1 for r in results) / n,
            "mrr": sum(r.reciprocal_rank for r in results) / n,
            "mean_ndcg": sum(r.ndcg for r in results) / n,
        }
        for k in self.k_values:
            aggregate[f"mean_p@{k}"] = sum(r.precision_at_k.get(k, 0) for r in results) / n
            aggregate[f"mean_r@{k}"] = sum(r.recall_at_k.get(k, 0) for r in results) / n
        aggregate["success@1"] = sum(1 for r in results if r.first_relevant_position == 1) / n
        aggregate["hit_rate"] = sum(1 for r in results if r.first_relevant_position is not None) / n
        return aggregate

    def generate_report(self, evaluation: Mapping[str, float] | None = None) -> str:
        """The tutorial's markdown report of an evaluation (default: the last one):
        precision, recall and nDCG keys in sorted order, then MAP and MRR."""
        evaluation = evaluation if evaluation is not None else self.last_evaluation
        if evaluation is None:
            raise RagMetricsError(
                "Nothing to report: call evaluate(results) first or pass its output."
            )
        report = "# Retrieval Evaluation Report\n\n"
        for title, prefix in (("Precision", "P@"), ("Recall", "R@"), ("NDCG", "NDCG@")):
            if title != "Precision":
                report += "\n"
            report += f"## {title}\n"
            for key, value in sorted((k, v) for k, v in evaluation.items() if k.startswith(prefix)):
                report += f"- {key}: {value:.4f}\n"
        report += "\n## Overall\n"
        report += f"- MAP: {evaluation['MAP']:.4f}\n"
        report += f"- MRR: {evaluation['MRR']:.4f}\n"
        return report


@dataclass
class BenchmarkQuery:
    id: str
    text: str
    relevant_docs: set[str]


class RetrievalBenchmark:
    """Run retriever functions over the same queries and compare them (the tutorial's
    exercise solution, numbers and table included)."""

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

        Returns ``{"retriever", "mrr", "p@5", "r@5", "hit_rate", "ndcg"}``: the keys say 5
        whatever ``k`` is, as in the tutorial. Reciprocal rank and hit rate read the whole
        list; precision, recall (both counting the list) and nDCG the first k.
        """
        if not self.queries:
            raise RagMetricsError("No query registered: call add_query(...) first.")
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise RagMetricsError(f"k must be an integer >= 1; got {k!r}.")
        rr = p_k = r_k = ndcg = 0.0
        hits = 0
        for query in self.queries.values():
            retrieved = list(retriever_fn(query.text))
            relevant = query.relevant_docs
            rank = next((i for i, d in enumerate(retrieved, start=1) if d in relevant), None)
            rr += 0.0 if rank is None else 1.0 / rank
            hits_at_k = sum(1 for d in retrieved[:k] if d in relevant)
            p_k += hits_at_k / k
            r_k += hits_at_k / len(relevant) if relevant else 0.0
            hits += 1 if set(retrieved) & relevant else 0
            relevances = [1.0 if d in relevant else 0.0 for d in retrieved[:k]]
            ndcg += _ndcg_of(relevances) if relevances and sum(relevances) else 0.0
        n = len(self.queries)
        summary = {
            "mrr": rr / n,
            "p@5": p_k / n,
            "r@5": r_k / n,
            "hit_rate": hits / n,
            "ndcg": ndcg / n,
        }
        self.results[retriever_name] = summary
        return {"retriever": retriever_name, **summary}

    def compare_retrievers(self) -> str:
        """The tutorial's markdown table of every retriever run so far, best MRR first."""
        if not self.results:
            return "No results to compare."
        ordered = sorted(self.results.items(), key=lambda item: item[1]["mrr"], reverse=True)
        lines = [
            "# Retriever Comparison",
            "",
            "| Retriever | MRR | P@5 | R@5 | Hit Rate | NDCG |",
            "|-----------|-----|-----|-----|----------|------|",
        ]
        for name, r in ordered:
            lines.append(
                f"| {name} | {r['mrr']:.3f} | {r['p@5']:.3f} | "
                f"{r['r@5']:.3f} | {r['hit_rate']:.3f} | {r['ndcg']:.3f} |"
            )
        lines += ["", f"**Winner:** {ordered[0][0]} (highest MRR)"]
        return "\n".join(lines)


__all__ = [
    "BenchmarkQuery",
    "RetrievalBenchmark",
    "RetrievalEvaluation",
    "RetrievalEvaluator",
    "RetrievalMetrics",
    "RetrievalResult",
]
