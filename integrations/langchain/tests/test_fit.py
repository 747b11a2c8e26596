"""The LangChain adapter as a user keeps it: checks before retrieving, no silent zeros,
stages told apart, config passed on, LangSmith traces read (real langchain-core)."""

from __future__ import annotations

import asyncio
import uuid
import warnings
from datetime import datetime, timezone

import pytest
from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda, RunnableParallel

import ragmetrics as rm
from langchain_ragmetrics import (
    RetrievalEvalCallbackHandler,
    aevaluate_retriever,
    document_ids,
    evaluate_retriever,
    langsmith_evaluator,
)
from ragmetrics.errors import IdFieldWarning, IdMismatchWarning, StageWarning
from tests.helpers import BM25Retriever


class Counting(BaseRetriever):
    calls: int = 0

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        self.calls += 1
        return [Document(page_content="x", metadata={"doc_id": "doc1"})]


def test_every_entry_point_checks_before_retrieving(dataset) -> None:  # type: ignore[no-untyped-def]
    retriever = Counting()
    with pytest.raises(rm.UnknownMetricError, match="ndcg@10"):
        evaluate_retriever(retriever, dataset, ["ndgc@10"], show_progress=False)
    with pytest.raises(rm.InvalidParameterError, match="relevance_treshold"):
        evaluate_retriever(retriever, dataset, ["mrr"], relevance_treshold=2)
    with pytest.raises(rm.InvalidParameterError, match="relevance_treshold"):
        asyncio.run(aevaluate_retriever(retriever, dataset, ["mrr"], relevance_treshold=2))
    with pytest.raises(rm.RagMetricsError, match="Expected a retrieval dataset"):
        asyncio.run(aevaluate_retriever(retriever, {"q": "x"}, ["mrr"]))
    with pytest.raises(rm.InvalidParameterError, match="grade_mapp"):
        RetrievalEvalCallbackHandler(dataset, ["mrr"], grade_mapp={1: 5})
    with pytest.raises(rm.GradeScaleError, match="grade_map"):
        RetrievalEvalCallbackHandler(dataset, ["ra_nwg@5"])  # grades {2}: not utility grades
    with pytest.raises(rm.UnknownMetricError):
        langsmith_evaluator(["ndgc@5"])
    with pytest.raises(rm.InvalidParameterError, match="alpha"):
        langsmith_evaluator(["ra_nwg@5"], rarity_alpha=-1)
    assert retriever.calls == 0


def test_a_misspelt_id_key_warns_with_the_keys_seen(bm25, dataset) -> None:  # type: ignore[no-untyped-def]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = evaluate_retriever(bm25, dataset, ["mrr"], id_key="docid", show_progress=False)
    assert result.aggregate["mrr"] == 0.0
    (field,) = [w for w in caught if w.category is IdFieldWarning]  # once, not per document
    assert "id_key='docid' is not in the metadata" in str(field.message)
    assert "'doc_id'" in str(field.message)  # the keys the documents do have
    (ids,) = [w for w in caught if w.category is IdMismatchWarning]
    assert "metadata['docid']" in str(ids.message)


def test_vector_store_ids_without_id_key_warn_with_the_fix(vector_store, dataset) -> None:  # type: ignore[no-untyped-def]
    retriever = vector_store.as_retriever(search_kwargs={"k": 3})
    with pytest.warns(IdMismatchWarning, match=r"pass id_key="):
        result = evaluate_retriever(retriever, dataset, ["mrr"], show_progress=False)
    assert result.aggregate["mrr"] == 0.0
    evaluator = langsmith_evaluator(["mrr"])  # no id_key: uuids against doc ids
    docs = retriever.invoke(dataset.queries["q1"])
    with pytest.warns(IdMismatchWarning, match=r"pass id_key="):
        evaluator(outputs={"documents": docs}, reference_outputs={"relevant_docs": ["doc1"]})


def test_config_reaches_the_retriever(bm25, dataset) -> None:  # type: ignore[no-untyped-def]
    handler = RetrievalEvalCallbackHandler(dataset, ["mrr"], id_key="doc_id")
    small = rm.RetrievalDataset(
        queries={q: dataset.queries[q] for q in ("q1", "q2", "q3")},
        relevant_docs={q: dataset.relevant_docs[q] for q in ("q1", "q2", "q3")},
    )
    result = evaluate_retriever(
        bm25,
        small,
        ["mrr"],
        id_key="doc_id",
        show_progress=False,
        config={"callbacks": [handler], "tags": ["eval-run"], "run_name": "bm25-eval"},
    )
    records = handler.records
    assert len(records) == 3 and all("eval-run" in r.tags for r in records)
    assert {r.retriever for r in records} == {"bm25-eval"}
    assert handler.evaluate().aggregate == result.aggregate


def test_two_retrievers_in_one_chain_are_two_stages(bm25, dataset) -> None:  # type: ignore[no-untyped-def]
    docs = list(bm25.documents)
    narrow = BM25Retriever(documents=docs[50:], k=2)  # not the judged docs
    chain = RunnableParallel(
        wide=bm25.with_config(run_name="wide"), narrow=narrow.with_config(run_name="narrow")
    ) | RunnableLambda(lambda x: len(x["wide"]) + len(x["narrow"]))
    handler = RetrievalEvalCallbackHandler(dataset, ["recall@5"], id_key="doc_id")
    for text in list(dataset.queries.values())[:5]:
        chain.invoke(text, config={"callbacks": [handler]})
    assert len(handler.records_of("wide")) == len(handler.records_of("narrow")) == 5
    assert all(r.parent_id is not None for r in handler.records)
    with pytest.warns(StageWarning, match=r"narrow, wide"):
        handler.run  # noqa: B018 - the property warns
    wide = handler.evaluate(stage="wide")
    with pytest.warns(IdMismatchWarning):  # the narrow index holds none of the judged docs
        narrow_result = handler.evaluate(stage="narrow")
    assert wide.counts.queries == narrow_result.counts.queries == 5
    assert wide.aggregate["recall@5"] == 1.0 and narrow_result.aggregate["recall@5"] == 0.0


def test_chunk_texts_count_unmatched(dataset) -> None:  # type: ignore[no-untyped-def]
    sentences = [
        Document(page_content=s.strip() + ".")
        for t in list(dataset.corpus.values())[:40]
        for s in t.split(".")
        if s.strip()
    ]
    noise = [Document(page_content=f"Where does nobody{i} live and eat.") for i in range(40)]
    small = rm.RetrievalDataset(
        queries={f"q{i}": dataset.queries[f"q{i}"] for i in range(40)},
        corpus=dataset.corpus,
        relevant_docs={f"q{i}": dataset.relevant_docs[f"q{i}"] for i in range(40)},
    )
    result = evaluate_retriever(
        BM25Retriever(documents=sentences + noise, k=6),
        small,
        ["recall@6"],
        match_texts=True,
        show_progress=False,
    )
    assert result.counts.unmatched_chunks > 0
    assert result.to_dict()["counts"]["unmatched_chunks"] == result.counts.unmatched_chunks


def _trace(docs: list[Document]) -> object:
    from langsmith.schemas import Run

    def run(name: str, run_type: str, outputs: dict, children: list) -> Run:  # type: ignore[type-arg]
        return Run(
            id=uuid.uuid4(),
            name=name,
            run_type=run_type,
            start_time=datetime.now(timezone.utc),
            inputs={},
            outputs=outputs,
            trace_id=uuid.uuid4(),
            child_runs=children,
        )

    retriever = run("bm25", "retriever", {"documents": [d.model_dump() for d in docs]}, [])
    step = run("RunnableParallel", "chain", {"context": "..."}, [retriever])
    return run("rag", "chain", {"answer": "Lyon"}, [step])


def test_langsmith_reads_the_retriever_inside_a_chain(bm25, dataset) -> None:  # type: ignore[no-untyped-def]
    from langsmith.schemas import Example

    docs = bm25.invoke(dataset.queries["q3"])
    example = Example(
        id=uuid.uuid4(), inputs={"query_id": "q3"}, outputs={}, dataset_id=uuid.uuid4()
    )
    evaluator = langsmith_evaluator(["mrr", "ndcg@5"], dataset.qrels, id_key="doc_id")
    scores = evaluator(run=_trace(docs), example=example)["results"]
    expected = rm.evaluate(
        dataset.qrels, {"q3": document_ids(docs, "doc_id")}, ["mrr", "ndcg@5"], missing="skip"
    ).per_query["q3"]
    assert {r["key"]: r["score"] for r in scores} == expected


def test_langsmith_comments_are_readable() -> None:
    evaluator = langsmith_evaluator(["mrr"], {"q1": {"d1": 1}})
    docs = {"documents": [Document(id="d1", page_content="x")]}
    empty = evaluator(outputs=docs, reference_outputs={"relevant_docs": []})["results"][0]
    assert empty["score"] is None
    assert empty["comment"].startswith("the reference outputs list no relevant document")
    unjudged = evaluator(inputs={"query_id": "q9"}, outputs=docs, reference_outputs={})
    assert (
        "query 'q9' (query_id of the inputs) has no judgments"
        in (unjudged["results"][0]["comment"])
    )


def test_two_retrievers_of_one_class_in_one_call_are_warned_or_staged(bm25, dataset) -> None:  # type: ignore[no-untyped-def]
    docs = list(bm25.documents)
    narrow = BM25Retriever(documents=docs[50:], k=2)
    queries = list(dataset.queries.values())[:3]
    # unnamed: one class twice under one parent run; the warning says so
    chain = RunnableParallel(wide=bm25, narrow=narrow) | RunnableLambda(lambda x: len(x))
    handler = RetrievalEvalCallbackHandler(dataset, ["recall@5"], id_key="doc_id")
    for text in queries:
        chain.invoke(text, config={"callbacks": [handler]})
    with pytest.warns(StageWarning, match=r"more than once by retrievers named 'BM25Retriever'"):
        handler.run  # noqa: B018 - the property warns
    # as graph nodes (LangGraph puts the node in the metadata): one stage per node
    graph = RunnableParallel(
        a=bm25.with_config(metadata={"langgraph_node": "retrieve_a"}),
        b=narrow.with_config(metadata={"langgraph_node": "retrieve_b"}),
    ) | RunnableLambda(lambda x: len(x))
    handler = RetrievalEvalCallbackHandler(dataset, ["recall@5"], id_key="doc_id")
    for text in queries:
        graph.invoke(text, config={"callbacks": [handler]})
    assert {r.retriever for r in handler.records} == {
        "BM25Retriever@retrieve_a",
        "BM25Retriever@retrieve_b",
    }
    with pytest.warns(StageWarning, match=r"BM25Retriever@retrieve_a, BM25Retriever@retrieve_b"):
        handler.run  # noqa: B018
    assert handler.evaluate(stage="retrieve_a").aggregate["recall@5"] == 1.0
