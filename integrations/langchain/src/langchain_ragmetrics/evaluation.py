"""Evaluate a LangChain retriever over a dataset, and score runs LangSmith-style."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.documents import Document
from langchain_core.runnables import Runnable

from langchain_ragmetrics._documents import document_ids, document_texts
from ragmetrics import EvaluationResult, Qrels, RetrievalDataset, Run, evaluate
from ragmetrics.errors import RagMetricsError
from ragmetrics.evaluate import as_qrels
from ragmetrics.matching import DEFAULT_RULES, ChunkMatcher, MatchRules
from ragmetrics.metrics import parse_metrics
from ragmetrics.progress import progress_bar


def _check_documents(value: Any, query_id: str) -> list[Document]:
    if not isinstance(value, list) or not all(isinstance(d, Document) for d in value):
        raise RagMetricsError(
            f"The retriever returned {type(value).__name__} for query {query_id!r}; "
            f"expected a list of Documents."
        )
    return value


def _collect(
    items: Sequence[tuple[str, str]],
    outputs: Sequence[Any],
    found: dict[str, list[Document]],
    errors: dict[str, str],
) -> None:
    """Record each query's documents, or its error (then an empty ranking)."""
    for (query_id, _), output in zip(items, outputs, strict=True):
        if isinstance(output, Exception):
            errors[query_id] = f"{type(output).__name__}: {output}"
            found[query_id] = []
        else:
            found[query_id] = _check_documents(output, query_id)


def _to_run(
    found: dict[str, list[Document]], id_key: str | None, matcher: ChunkMatcher | None
) -> Run:
    if matcher is not None:
        return matcher.match_run({q: document_texts(d) for q, d in found.items()}).run
    return Run.from_lists({q: document_ids(d, id_key) for q, d in found.items()}, name="retriever")


def _finish(
    dataset: RetrievalDataset,
    found: dict[str, list[Document]],
    errors: dict[str, str],
    metrics: Sequence[str],
    id_key: str | None,
    match_texts: bool,
    match_rules: MatchRules | None,
    options: dict[str, Any],
) -> EvaluationResult:
    if errors:
        warnings.warn(
            f"{len(errors)} queries failed to retrieve and score as empty rankings: "
            f"{dict(list(errors.items())[:3])}",
            stacklevel=3,
        )
    matcher = (
        ChunkMatcher(dataset.corpus, rules=match_rules or DEFAULT_RULES) if match_texts else None
    )
    result = evaluate(dataset.qrels, _to_run(found, id_key, matcher), list(metrics), **options)
    result.settings["retrieval_errors"] = errors
    return result


def evaluate_retriever(
    retriever: Runnable[str, list[Document]],
    dataset: RetrievalDataset,
    metrics: Sequence[str],
    *,
    max_concurrency: int = 8,
    id_key: str | None = None,
    match_texts: bool = False,
    match_rules: MatchRules | None = None,
    show_progress: bool = True,
    raise_errors: bool = False,
    **options: Any,
) -> EvaluationResult:
    """Run ``retriever`` (any ``BaseRetriever`` or Runnable returning Documents) over every
    query of ``dataset`` and score it with the core.

    Queries run through ``retriever.batch`` with ``max_concurrency``; a query whose retrieval
    raises is recorded in ``result.settings["retrieval_errors"]`` and scores as an empty
    ranking (``raise_errors=True`` re-raises). ``match_texts`` maps document texts onto
    ``dataset.corpus`` with the chunk matcher instead of using ids.
    """
    parse_metrics(list(metrics))
    if not isinstance(dataset, RetrievalDataset):
        raise RagMetricsError(
            f"dataset must be a ragmetrics.RetrievalDataset; got {type(dataset).__name__}."
        )
    if not isinstance(max_concurrency, int) or max_concurrency < 1:
        raise RagMetricsError(
            f"max_concurrency must be an int >= 1. Got {max_concurrency!r} instead."
        )
    items = list(dataset.queries.items())
    found: dict[str, list[Document]] = {}
    errors: dict[str, str] = {}
    step = max_concurrency * 4
    with progress_bar(total=len(items), desc="retrieving", disable=not show_progress) as bar:
        for start in range(0, len(items), step):
            chunk = items[start : start + step]
            outputs = retriever.batch(
                [text for _, text in chunk],
                config={"max_concurrency": max_concurrency},
                return_exceptions=not raise_errors,
            )
            _collect(chunk, outputs, found, errors)
            bar.update(len(chunk))
    return _finish(dataset, found, errors, metrics, id_key, match_texts, match_rules, options)


async def aevaluate_retriever(
    retriever: Runnable[str, list[Document]],
    dataset: RetrievalDataset,
    metrics: Sequence[str],
    *,
    max_concurrency: int = 8,
    id_key: str | None = None,
    match_texts: bool = False,
    match_rules: MatchRules | None = None,
    raise_errors: bool = False,
    **options: Any,
) -> EvaluationResult:
    """The async twin of :func:`evaluate_retriever` (``retriever.abatch``)."""
    parse_metrics(list(metrics))
    items = list(dataset.queries.items())
    outputs = await retriever.abatch(
        [t for _, t in items],
        config={"max_concurrency": max_concurrency},
        return_exceptions=not raise_errors,
    )
    found: dict[str, list[Document]] = {}
    errors: dict[str, str] = {}
    _collect(items, outputs, found, errors)
    return _finish(dataset, found, errors, metrics, id_key, match_texts, match_rules, options)


_DOC_KEYS = ("documents", "context", "output", "docs")
_REFERENCE_KEYS = ("relevant_docs", "expected_ids", "relevant_ids", "reference")


def langsmith_evaluator(
    metrics: Sequence[str],
    qrels: Qrels | Mapping[str, Mapping[str, int]] | None = None,
    *,
    id_key: str | None = None,
    query_id_key: str = "query_id",
    **options: Any,
) -> Any:
    """A LangSmith-style function evaluator returning one result per metric.

    The returned function accepts the ``(run, example)`` form (for
    ``langsmith.evaluation.run_evaluator``) and the ``(inputs, outputs, reference_outputs)``
    form of ``langsmith.evaluate``. Retrieved documents are read from the outputs under
    ``documents``, ``context``, ``output`` or ``docs``; the ground truth from the reference
    outputs (``relevant_docs``: a list of ids or ``{id: grade}``), else from ``qrels`` by
    ``inputs[query_id_key]``. It returns ``{"results": [{"key", "score"}, ...]}``; a score
    that is NA, or an evaluation that cannot run, is reported with ``score=None`` and a
    comment instead of raising.
    """
    names = list(metrics)
    parse_metrics(names)
    judged = as_qrels(qrels) if qrels is not None else None

    def evaluate_retrieval(
        run: Any = None,
        example: Any = None,
        inputs: Mapping[str, Any] | None = None,
        outputs: Mapping[str, Any] | None = None,
        reference_outputs: Mapping[str, Any] | None = None,
    ) -> dict[str, list[dict[str, Any]]]:
        outputs = outputs if outputs is not None else (getattr(run, "outputs", None) or {})
        inputs = inputs if inputs is not None else (getattr(example, "inputs", None) or {})
        if reference_outputs is None:
            reference_outputs = getattr(example, "outputs", None) or {}
        try:
            documents = next((outputs[k] for k in _DOC_KEYS if k in outputs), None)
            if documents is None:
                raise RagMetricsError(
                    f"no retrieved documents in the outputs (looked for {', '.join(_DOC_KEYS)})"
                )
            retrieved = document_ids(documents, id_key)
            truth = _reference(reference_outputs, inputs, judged, query_id_key)
            per_query = evaluate({"q": truth}, {"q": retrieved}, names, **options).per_query["q"]
        except Exception as error:  # an evaluator reports, it does not raise into the experiment
            return {"results": [{"key": n, "score": None, "comment": str(error)} for n in names]}
        return {
            "results": [
                {"key": n, "score": v}
                if v is not None
                else {"key": n, "score": None, "comment": "NA for this query"}
                for n, v in per_query.items()
            ]
        }

    return evaluate_retrieval


def _reference(
    reference: Mapping[str, Any], inputs: Mapping[str, Any], qrels: Qrels | None, query_id_key: str
) -> dict[str, int]:
    for key in _REFERENCE_KEYS:
        if key in reference:
            value = reference[key]
            return dict(value) if isinstance(value, Mapping) else dict.fromkeys(value, 1)
    query_id = inputs.get(query_id_key)
    if qrels is not None and query_id in qrels:
        return dict(qrels[str(query_id)])
    raise RagMetricsError(
        "no ground truth: give reference outputs with one of "
        f"{', '.join(_REFERENCE_KEYS)}, or qrels and inputs[{query_id_key!r}]"
    )
