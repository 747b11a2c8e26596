"""Evaluate a LangChain retriever over a dataset, and score runs LangSmith-style."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.runnables import Runnable, RunnableConfig

from langchain_ragmetrics._documents import DocumentIds, document_texts, id_hint
from ragmetrics.adapters import (
    EvaluationPlan,
    EvaluationResult,
    MatchRules,
    Qrels,
    QueryScorer,
    RagMetricsError,
    Retrieved,
    as_dataset,
    progress_bar,
)

__all__ = [
    "aevaluate_retriever",
    "evaluate_retriever",
    "langsmith_evaluator",
]


class _DatasetRun:
    """What :func:`evaluate_retriever` and its async twin share: the checks made before
    the first retrieval, the batches, and the scoring of what came back."""

    def __init__(
        self,
        dataset: Any,
        metrics: Sequence[str],
        *,
        max_concurrency: int,
        id_key: str | None,
        match_texts: bool,
        match_rules: MatchRules | None,
        raise_errors: bool,
        config: RunnableConfig | None,
        options: dict[str, Any],
    ) -> None:
        self.plan = EvaluationPlan.check(
            metrics, options, match_texts=match_texts, match_rules=match_rules
        )
        self.dataset = as_dataset(dataset)
        self.plan.check_dataset(self.dataset)  # the grade scale, before any retrieval
        if not isinstance(max_concurrency, int) or max_concurrency < 1:
            raise RagMetricsError(
                f"max_concurrency must be an int >= 1. Got {max_concurrency!r} instead."
            )
        if config is not None and not isinstance(config, Mapping):
            raise RagMetricsError(
                f"config must be a RunnableConfig dict (callbacks, tags, run_name...); got "
                f"{type(config).__name__}."
            )
        self.config: RunnableConfig = {**(config or {}), "max_concurrency": max_concurrency}  # type: ignore[typeddict-item]
        self.step = max_concurrency * 4
        self.ids = DocumentIds(id_key)
        self.id_key = id_key
        self.match_texts = match_texts
        self.raise_errors = raise_errors
        self.found: dict[str, Retrieved] = {}
        self.errors: dict[str, str] = {}
        self.latencies: dict[str, float] = {}

    def configs(self, batch: list[tuple[str, str]]) -> list[RunnableConfig]:
        """One config per query: the caller's, with a timer of that query's retrieval."""
        configs = []
        for query_id, _ in batch:
            timer = _Timer(query_id, self.latencies)
            given = self.config.get("callbacks")
            if given is None:
                callbacks: Any = [timer]
            elif isinstance(given, list):
                callbacks = [*given, timer]
            else:  # a callback manager: a copy with the timer added
                callbacks = given.copy()
                callbacks.add_handler(timer, inherit=False)
            configs.append({**self.config, "callbacks": callbacks})
        return configs  # type: ignore[return-value]

    def batches(self) -> Iterator[list[tuple[str, str]]]:
        items = list(self.dataset.queries.items())
        for start in range(0, len(items), self.step):
            yield items[start : start + self.step]

    def collect(self, batch: list[tuple[str, str]], outputs: Sequence[Any]) -> None:
        """Each query's documents, or its error (then an empty ranking)."""
        for (query_id, _), output in zip(batch, outputs, strict=True):
            if isinstance(output, Exception):
                self.errors[query_id] = f"{type(output).__name__}: {output}"
                self.found[query_id] = Retrieved()
                continue
            if not isinstance(output, list) or not all(isinstance(d, Document) for d in output):
                raise RagMetricsError(
                    f"The retriever returned {type(output).__name__} for query {query_id!r}; "
                    f"expected a list of Documents."
                )
            if self.match_texts:
                self.found[query_id] = Retrieved(texts=document_texts(output))
            else:
                self.found[query_id] = Retrieved(ids=self.ids(output))

    def result(self) -> EvaluationResult:
        hint = "" if self.match_texts else id_hint(self.id_key)
        return self.plan.evaluate(
            self.dataset, self.found, errors=self.errors, id_hint=hint, latencies=self.latencies
        ).result


class _Timer(BaseCallbackHandler):
    """Times the first retrieval of one query (its start to its end or error)."""

    def __init__(self, query_id: str, into: dict[str, float]) -> None:
        self.query_id = query_id
        self.into = into
        self.run_id: UUID | None = None
        self.started = 0.0

    def on_retriever_start(self, serialized: Any, query: str, *, run_id: UUID, **_: Any) -> None:
        if self.run_id is None:
            self.run_id, self.started = run_id, time.perf_counter()

    def on_retriever_end(self, documents: Any, *, run_id: UUID, **_: Any) -> None:
        if run_id == self.run_id:
            self.into[self.query_id] = time.perf_counter() - self.started

    def on_retriever_error(self, error: BaseException, *, run_id: UUID, **_: Any) -> None:
        self.on_retriever_end(None, run_id=run_id)


def evaluate_retriever(
    retriever: Runnable[str, list[Document]],
    dataset: Any,
    metrics: Sequence[str],
    *,
    max_concurrency: int = 8,
    id_key: str | None = None,
    match_texts: bool = False,
    match_rules: MatchRules | None = None,
    show_progress: bool = True,
    raise_errors: bool = False,
    config: RunnableConfig | None = None,
    **options: Any,
) -> EvaluationResult:
    """Run ``retriever`` (any ``BaseRetriever`` or Runnable returning Documents) over every
    query of ``dataset`` and score it with the core.

    Metric names and keywords are checked before the first retrieval. Queries run through
    ``retriever.batch`` with ``max_concurrency`` and ``config`` (callbacks, tags,
    ``run_name``...); a query whose retrieval raises scores as an empty ranking and is
    listed in ``result.retrieval_errors`` (``raise_errors=True`` re-raises).
    ``match_texts`` maps document texts onto ``dataset.corpus`` with the chunk matcher
    instead of using ids: the ranking is then of documents, each at the place of its first
    chunk, and a chunk that matches none keeps its place (``counts.unmatched_chunks``).
    ``dataset``: a ``RetrievalDataset`` or anything with ``queries`` and ``relevant_docs``.
    """
    job = _DatasetRun(
        dataset,
        metrics,
        max_concurrency=max_concurrency,
        id_key=id_key,
        match_texts=match_texts,
        match_rules=match_rules,
        raise_errors=raise_errors,
        config=config,
        options=options,
    )
    total = len(job.dataset.queries)
    with progress_bar(total=total, desc="retrieving", disable=not show_progress) as bar:
        for batch in job.batches():
            outputs = retriever.batch(
                [text for _, text in batch],
                config=job.configs(batch),
                return_exceptions=not raise_errors,
            )
            job.collect(batch, outputs)
            bar.update(len(batch))
    return job.result()


async def aevaluate_retriever(
    retriever: Runnable[str, list[Document]],
    dataset: Any,
    metrics: Sequence[str],
    *,
    max_concurrency: int = 8,
    id_key: str | None = None,
    match_texts: bool = False,
    match_rules: MatchRules | None = None,
    show_progress: bool = True,
    raise_errors: bool = False,
    config: RunnableConfig | None = None,
    **options: Any,
) -> EvaluationResult:
    """The async twin of :func:`evaluate_retriever` (``retriever.abatch``), with the same
    checks and results."""
    job = _DatasetRun(
        dataset,
        metrics,
        max_concurrency=max_concurrency,
        id_key=id_key,
        match_texts=match_texts,
        match_rules=match_rules,
        raise_errors=raise_errors,
        config=config,
        options=options,
    )
    total = len(job.dataset.queries)
    with progress_bar(total=total, desc="retrieving", disable=not show_progress) as bar:
        for batch in job.batches():
            outputs = await retriever.abatch(
                [text for _, text in batch],
                config=job.configs(batch),
                return_exceptions=not raise_errors,
            )
            job.collect(batch, outputs)
            bar.update(len(batch))
    return job.result()


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
    ``documents``, ``context``, ``output`` or ``docs``, else from the retriever runs inside
    the traced run (a chain that returns only an answer). The ground truth comes from the
    reference outputs (``relevant_docs``: a list of ids or ``{id: grade}``), else from
    ``qrels`` by ``inputs[query_id_key]``. It returns ``{"results": [{"key", "score"},
    ...]}``; a score that is NA, or an evaluation that cannot run, is reported with
    ``score=None`` and a comment that says why, instead of raising. Metric names and
    keywords are checked here.
    """
    scorer = QueryScorer(list(metrics), qrels=qrels, id_hint=id_hint(id_key), **options)
    names = list(scorer.labels)
    read_ids = DocumentIds(id_key)

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
            documents = _documents(outputs, run)
            truth, query_id = _reference(reference_outputs, inputs, scorer.qrels, query_id_key)
            if truth is None:
                scores = scorer.score(read_ids(documents), query_id=query_id)
            else:
                scores = scorer.score(read_ids(documents), truth)
        except Exception as error:  # an evaluator reports, it does not raise into the experiment
            return {"results": [{"key": n, "score": None, "comment": str(error)} for n in names]}
        return {
            "results": [
                {"key": n, "score": v}
                if v is not None
                else {"key": n, "score": None, "comment": "NA for this query"}
                for n, v in scores.items()
            ]
        }

    return evaluate_retrieval


def _documents(outputs: Mapping[str, Any], run: Any) -> list[Any]:
    """The retrieved documents: in the outputs, else in the retriever runs of the trace."""
    for key in _DOC_KEYS:
        if key in outputs and isinstance(outputs[key], list):
            return list(outputs[key])
    found = _retriever_documents(run) if run is not None else None
    if found is not None:
        return found
    raise RagMetricsError(
        f"no retrieved documents: the outputs have none under {', '.join(_DOC_KEYS)}, and "
        f"the run has no retriever child run. Return the documents from the chain, or "
        f"evaluate the run with its child runs loaded."
    )


def _retriever_documents(run: Any) -> list[Any] | None:
    """The documents of the last retriever run inside ``run`` (depth first), if any."""
    found: list[Any] | None = None
    for child in getattr(run, "child_runs", None) or []:
        if getattr(child, "run_type", None) == "retriever":
            documents = (getattr(child, "outputs", None) or {}).get("documents")
            if isinstance(documents, list):
                found = documents
                continue
        deeper = _retriever_documents(child)
        if deeper is not None:
            found = deeper
    return found


def _reference(
    reference: Mapping[str, Any], inputs: Mapping[str, Any], qrels: Qrels | None, query_id_key: str
) -> tuple[dict[str, int] | None, str | None]:
    """The judgments of the reference outputs, or (None, query id) to look up in qrels."""
    for key in _REFERENCE_KEYS:
        if key in reference:
            value = reference[key]
            truth = dict(value) if isinstance(value, Mapping) else dict.fromkeys(value or [], 1)
            if not truth:
                raise RagMetricsError(
                    f"the reference outputs list no relevant document ({key} is empty): "
                    f"every metric is NA for this example"
                )
            return truth, None
    query_id = inputs.get(query_id_key)
    if qrels is not None and query_id is not None:
        if str(query_id) not in qrels or not qrels[str(query_id)]:
            raise RagMetricsError(
                f"query {str(query_id)!r} ({query_id_key} of the inputs) has no judgments in "
                f"the qrels: every metric is NA for this example"
            )
        return None, str(query_id)
    raise RagMetricsError(
        "no ground truth: give reference outputs with one of "
        f"{', '.join(_REFERENCE_KEYS)}, or qrels and inputs[{query_id_key!r}]"
    )
