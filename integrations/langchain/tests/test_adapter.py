"""The LangChain adapter against real langchain-core objects and real retrievers."""

from __future__ import annotations

import asyncio
import threading

import pytest
from langchain_core.callbacks import BaseCallbackHandler, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda, RunnableParallel, RunnablePassthrough

import langchain_ragmetrics as adapter
import ragmetrics as rm
from langchain_ragmetrics import (
    RetrievalEvalCallbackHandler,
    aevaluate_retriever,
    content_hash,
    document_ids,
    document_texts,
    evaluate_retriever,
    langsmith_evaluator,
)


def test_public_surface() -> None:
    assert adapter.__all__ == sorted(adapter.__all__)
    for name in adapter.__all__:
        assert hasattr(adapter, name)
    assert isinstance(RetrievalEvalCallbackHandler(), BaseCallbackHandler)


def test_document_ids() -> None:
    with_id = Document(id="abc", page_content="x", metadata={"doc_id": "d1"})
    bare = Document(page_content="some text")
    assert document_ids([with_id]) == ["abc"]
    assert document_ids([with_id], id_key="doc_id") == ["d1"]
    assert document_ids([bare], id_key="doc_id") == [content_hash("some text")]
    assert content_hash("some text") == content_hash("some text") != content_hash("other")
    assert document_texts([with_id, bare]) == ["x", "some text"]
    serialized = {"kwargs": {"page_content": "x", "metadata": {"doc_id": "d9"}}}
    assert document_ids([serialized], id_key="doc_id") == ["d9"]
    with pytest.raises(rm.RagMetricsError, match=r"Expected LangChain Documents; got int"):
        document_ids([3])  # type: ignore[list-item]


def _chain(retriever: BaseRetriever):  # type: ignore[no-untyped-def]
    format_docs = RunnableLambda(lambda docs: "\n".join(d.page_content for d in docs))
    return RunnableParallel(
        context=retriever | format_docs, question=RunnablePassthrough()
    ) | RunnableLambda(lambda x: f"Answer using: {x['context'][:40]}")


def test_callback_in_a_chain_scores_like_the_core(vector_store, dataset) -> None:  # type: ignore[no-untyped-def]
    retriever = vector_store.as_retriever(search_kwargs={"k": 5})
    handler = RetrievalEvalCallbackHandler(dataset, ["hit_rate@1", "ndcg@5"], id_key="doc_id")
    chain = _chain(retriever)
    items = list(dataset.queries.items())[:25]
    for qid, text in items[:10]:
        chain.invoke(text, config={"callbacks": [handler], "metadata": {"query_id": qid}})
    for _, text in items[10:]:  # no id given: looked up by query text
        chain.invoke(text, config={"callbacks": [handler]})
    run = handler.run
    assert set(run.query_ids) == {q for q, _ in items}
    core = rm.evaluate(dataset.qrels, run, ["hit_rate@1", "ndcg@5"], missing="skip")
    for qid, _ in items:
        assert run[qid] == tuple(document_ids(retriever.invoke(dict(items)[qid]), "doc_id"))
        assert handler.live[qid] == core.per_query[qid]
    assert handler.evaluate().aggregate == core.aggregate
    assert handler.evaluate().counts.missing_from_run == len(dataset.queries) - 25


def test_hundred_concurrent_retrievals_each_recorded_once(bm25, dataset) -> None:  # type: ignore[no-untyped-def]
    handler = RetrievalEvalCallbackHandler(dataset, ["mrr"], id_key="doc_id")
    texts = list(dataset.queries.values())[:100]
    bm25.batch(texts[:40], config={"callbacks": [handler], "max_concurrency": 16})
    asyncio.run(bm25.abatch(texts[40:70], config={"callbacks": [handler], "max_concurrency": 16}))
    threads = [
        threading.Thread(target=bm25.invoke, args=(t,), kwargs={"config": {"callbacks": [handler]}})
        for t in texts[70:]
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    records = handler.records
    assert len(records) == 100
    assert len({r.span_id for r in records}) == 100
    assert sorted(r.query for r in records) == sorted(texts)
    assert all(len(r.doc_ids) == 5 and r.error is None for r in records)


def test_max_records_bounds_memory(bm25, dataset) -> None:  # type: ignore[no-untyped-def]
    handler = RetrievalEvalCallbackHandler(max_records=10)
    bm25.batch(list(dataset.queries.values())[:30], config={"callbacks": [handler]})
    assert len(handler.records) == 10


def test_the_handler_keeps_texts_only_when_asked(bm25, dataset) -> None:  # type: ignore[no-untyped-def]
    text = next(iter(dataset.queries.values()))
    kept = {}
    for keep in (False, True):
        handler = RetrievalEvalCallbackHandler(keep_texts=keep)
        bm25.invoke(text, config={"callbacks": [handler]})
        (record,) = handler.records
        assert record.doc_ids
        kept[keep] = record.texts
    assert kept[False] == () and len(kept[True]) == len(record.doc_ids) and all(kept[True])


class BrokenRetriever(BaseRetriever):
    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        raise ConnectionError(f"vector store unreachable for {query!r}")


def test_retriever_error_is_recorded_and_the_chain_error_is_unchanged() -> None:
    handler = RetrievalEvalCallbackHandler({"q1": {"d": 1}})
    chain = _chain(BrokenRetriever())
    with pytest.raises(ConnectionError, match=r"vector store unreachable for 'hello'"):
        chain.invoke("hello", config={"callbacks": [handler], "metadata": {"query_id": "q1"}})
    (record,) = handler.errors
    assert (
        record.query_id == "q1"
        and record.error == "ConnectionError: vector store unreachable for 'hello'"
    )
    assert len(handler.run) == 0


def _exploding(handler: RetrievalEvalCallbackHandler) -> RetrievalEvalCallbackHandler:
    def score(*args: object, **kwargs: object) -> None:
        raise RuntimeError("bug inside the handler")

    handler.scorer.score = score  # type: ignore[method-assign]
    return handler


def test_a_handler_error_does_not_break_the_chain(bm25, dataset) -> None:  # type: ignore[no-untyped-def]
    handler = _exploding(RetrievalEvalCallbackHandler(dataset, ["mrr"]))
    query = dataset.queries["q0"]  # a judged query: scored live
    with pytest.warns(rm.errors.HandlerFailureWarning, match=r"live scoring.*bug inside"):
        answer = _chain(bm25).invoke(query, config={"callbacks": [handler]})
    assert answer.startswith("Answer using:")
    _chain(bm25).invoke(query, config={"callbacks": [handler]})  # warned once only
    assert handler.failures == 2 and len(handler.records) == 2
    assert handler.last_error is not None and handler.last_error.query == query
    assert handler.last_error.error == "RuntimeError: bug inside the handler"
    strict = _exploding(RetrievalEvalCallbackHandler(dataset, ["mrr"], raise_error=True))
    with (
        pytest.warns(rm.errors.HandlerFailureWarning),
        pytest.raises(RuntimeError, match="bug inside the handler"),
    ):
        _chain(bm25).invoke(query, config={"callbacks": [strict]})


def test_handler_without_ground_truth() -> None:
    handler = RetrievalEvalCallbackHandler()
    with pytest.raises(rm.RagMetricsError, match=r"This handler has no ground truth"):
        handler.evaluate()
    with pytest.raises(rm.UnknownMetricError):
        RetrievalEvalCallbackHandler(metrics=["ndgc@10"])


def test_evaluate_retriever_on_the_dataset(bm25, dataset) -> None:  # type: ignore[no-untyped-def]
    result = evaluate_retriever(
        bm25, dataset, ["hit_rate@1", "recall@5"], id_key="doc_id", show_progress=False
    )
    manual = rm.Run.from_lists(
        {q: document_ids(bm25.invoke(t), "doc_id") for q, t in dataset.queries.items()}
    )
    assert result.counts.queries == 300
    assert (
        result.aggregate == rm.evaluate(dataset.qrels, manual, ["hit_rate@1", "recall@5"]).aggregate
    )
    assert result.aggregate["recall@5"] > 0.9
    asynced = asyncio.run(
        aevaluate_retriever(bm25, dataset, ["hit_rate@1", "recall@5"], id_key="doc_id")
    )
    assert asynced.aggregate == result.aggregate


def test_evaluate_retriever_records_failures(dataset) -> None:  # type: ignore[no-untyped-def]
    with pytest.warns(rm.errors.RetrievalFailedWarning, match=r"300 of 300 retrievals raised"):
        result = evaluate_retriever(BrokenRetriever(), dataset, ["mrr"], show_progress=False)
    assert result.aggregate["mrr"] == 0.0 and len(result.retrieval_errors) == 300
    assert result.counts.failed_retrievals == 300
    with pytest.raises(ConnectionError):
        evaluate_retriever(
            BrokenRetriever(), dataset, ["mrr"], show_progress=False, raise_errors=True
        )


def test_evaluate_retriever_matches_chunk_texts(dataset) -> None:  # type: ignore[no-untyped-def]
    from tests.helpers import BM25Retriever

    sentences = [
        Document(page_content=s.strip() + ".")
        for t in dataset.corpus.values()
        for s in t.split(".")
        if s.strip()
    ]
    result = evaluate_retriever(
        BM25Retriever(documents=sentences, k=3),
        dataset,
        ["recall@3"],
        match_texts=True,
        show_progress=False,
    )
    assert result.aggregate["recall@3"] > 0.9


def test_langsmith_evaluator_forms(bm25, dataset) -> None:  # type: ignore[no-untyped-def]
    from langsmith.evaluation import run_evaluator
    from langsmith.schemas import Example, Run

    text = dataset.queries["q3"]
    docs = bm25.invoke(text)
    evaluator = langsmith_evaluator(["ndcg@5", "mrr"], id_key="doc_id")
    expected = rm.evaluate(
        {"q": {"doc3": 1}}, {"q": document_ids(docs, "doc_id")}, ["ndcg@5", "mrr"]
    ).per_query["q"]
    direct = evaluator(outputs={"documents": docs}, reference_outputs={"relevant_docs": ["doc3"]})
    assert {r["key"]: r["score"] for r in direct["results"]} == expected
    import uuid
    from datetime import datetime, timezone

    run = Run(
        id=uuid.uuid4(),
        name="retriever",
        run_type="retriever",
        start_time=datetime.now(timezone.utc),
        inputs={"query": text},
        outputs={"documents": [d.model_dump() for d in docs]},
        trace_id=uuid.uuid4(),
    )
    example = Example(
        id=uuid.uuid4(),
        inputs={"query": text, "query_id": "q3"},
        outputs={},
        dataset_id=uuid.uuid4(),
    )
    graded = langsmith_evaluator(["ndcg@5", "mrr"], dataset.qrels, id_key="doc_id")
    results = run_evaluator(graded).evaluate_run(run, example)
    # LangSmith coerces our dicts into its EvaluationResult objects, one per metric key
    scores = {r.key: r.score for r in results["results"]}  # type: ignore[index]
    assert scores == pytest.approx(expected)


def test_langsmith_evaluator_reports_instead_of_raising() -> None:
    evaluator = langsmith_evaluator(["ra_nwg@2", "n_recall_5@2"])
    missing = evaluator(outputs={"answer": "text"}, reference_outputs={"relevant_docs": ["a"]})
    assert (
        missing["results"][0]["score"] is None
        and "no retrieved documents" in missing["results"][0]["comment"]
    )
    na = evaluator(
        outputs={"documents": [Document(id="a", page_content="x")]},
        reference_outputs={"relevant_docs": {"a": 4}},
    )
    assert na["results"] == [
        {"key": "ra_nwg@2", "score": 1.0},
        {"key": "n_recall_5@2", "score": None, "comment": "NA for this query"},
    ]
    # binary ground truth is not on the utility scale: reported, with the map to use
    binary = evaluator(
        outputs={"documents": [Document(id="a", page_content="x")]},
        reference_outputs={"relevant_docs": ["a"]},
    )
    assert binary["results"][0]["score"] is None
    assert "grade_map={1: 5}" in binary["results"][0]["comment"]


class CountingRetriever(BaseRetriever):
    calls: int = 0

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        self.calls += 1
        return [Document(page_content="x", id="doc1")]


def test_the_grade_scale_is_checked_before_the_first_retrieval() -> None:
    retriever = CountingRetriever()
    binary = rm.RetrievalDataset(queries={"q1": "x"}, relevant_docs={"q1": ["doc1"]})
    with pytest.raises(rm.GradeScaleError, match=r"grade_map=\{1: 5\}"):
        evaluate_retriever(retriever, binary, ["ra_nwg@5"], show_progress=False)
    assert retriever.calls == 0
    result = evaluate_retriever(
        retriever, binary, ["ra_nwg@5"], grade_map={1: 5}, show_progress=False
    )
    assert retriever.calls == 1 and result.aggregate == {"ra_nwg@5": 1.0}


class _Slow(BaseRetriever):
    """A real retriever that takes ``delay`` seconds before asking another one."""

    inner: BaseRetriever
    delay: float

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        import time

        time.sleep(self.delay)
        return self.inner.invoke(query)


def test_latency_is_timed_and_shown_beside_quality(bm25, dataset) -> None:  # type: ignore[no-untyped-def]
    """Each retrieval's wall time reaches the result (bulk and callback paths), and compare
    puts p50 and p95 next to the means."""
    small = rm.RetrievalDataset(
        queries=dict(list(dataset.queries.items())[:16]),
        relevant_docs={q: dataset.relevant_docs[q] for q in list(dataset.queries)[:16]},
    )
    slow = _Slow(inner=bm25, delay=0.03)
    fast = evaluate_retriever(bm25, small, ["mrr"], id_key="doc_id", show_progress=False)
    late = evaluate_retriever(slow, small, ["mrr"], id_key="doc_id", show_progress=False)
    assert set(late.latencies) == set(small.queries) == set(fast.latencies)
    assert min(late.latencies.values()) >= 0.03 > max(fast.latencies.values())
    assert late.aggregate == fast.aggregate  # the same documents, only later
    summary = late.latency()
    assert summary is not None and summary["n"] == 16 and 0.03 <= summary["p50"] <= summary["p95"]

    handler = RetrievalEvalCallbackHandler(small, ["mrr"], id_key="doc_id")
    for text in list(small.queries.values())[:4]:
        slow.invoke(text, config={"callbacks": [handler]})
    timed = handler.evaluate().latencies
    assert len(timed) == 4 and min(timed.values()) >= 0.03

    both = rm.compare(small.qrels, {"fast": fast, "slow": late}, ["mrr"], n_permutations=100)
    rows = both.latency_rows()
    assert rows is not None
    headers, lines = rows
    assert headers == ["run", "timed", "p50 ms", "p95 ms", "mean ms"]
    assert lines[1][0] == "slow" and lines[1][2] >= 30.0 > lines[0][2]
    assert "Retrieval latency" in both.to_table()


def test_a_graph_nodes_stage_answers_to_its_class_and_its_node(bm25, dataset) -> None:  # type: ignore[no-untyped-def]
    """LangGraph calls a node's retriever with ``metadata={"langgraph_node": ...}``: the
    stage is recorded as ``Class@node`` and selected by either part; a name that matches
    nothing lists the stages that exist (it gave an empty run, silently)."""
    handler = RetrievalEvalCallbackHandler(dataset, ["mrr"], id_key="doc_id")
    qid, text = next(iter(dataset.queries.items()))
    bm25.invoke(
        text,
        config={
            "callbacks": [handler],
            "metadata": {"query_id": qid, "langgraph_node": "retrieve"},
        },
    )
    kind = type(bm25).__name__
    for stage in (kind, "retrieve", f"{kind}@retrieve"):
        assert handler.run_of(stage).query_ids == (qid,), stage
        assert handler.evaluate(stage=stage).counts.queries == 1
    with pytest.raises(rm.InputFormatError, match=rf"stage 'rerank'.*{kind}@retrieve"):
        handler.run_of("rerank")
