"""The LlamaIndex adapter against real llama-index-core objects and real retrievers."""

from __future__ import annotations

import asyncio
import json
import math
import threading
from pathlib import Path

import pytest
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.evaluation import RetrieverEvaluator
from llama_index.core.evaluation.retrieval.metrics import (
    MRR,
    NDCG,
    AveragePrecision,
    HitRate,
    Precision,
    Recall,
)
from llama_index.core.evaluation.retrieval.metrics_base import BaseRetrievalMetric
from llama_index.core.llms import MockLLM
from llama_index.core.postprocessor import SimilarityPostprocessor
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from llama_index.retrievers.bm25 import BM25Retriever

import llama_index.evaluation.ragmetrics as adapter
import ragmetrics as rm
from llama_index.evaluation.ragmetrics import (
    RagMetricsMetric,
    RagMetricsRetrieverEvaluator,
    RetrievalRecorder,
    node_ids,
    node_texts,
)


def test_public_surface() -> None:
    assert adapter.__all__ == sorted(adapter.__all__)
    for name in adapter.__all__:
        assert hasattr(adapter, name)
    metric = RagMetricsMetric.from_name("ndcg@10")
    assert isinstance(metric, BaseRetrievalMetric)
    assert type(metric).metric_name == "ndcg@10"
    assert type(RagMetricsMetric.from_name("ndcg@10")) is type(metric)  # one class per name


def test_unknown_metric_fails_at_setup() -> None:
    with pytest.raises(rm.UnknownMetricError, match=r"Did you mean 'ndcg@10'"):
        RagMetricsMetric.from_name("ndgc@10")


def test_plugins_in_retriever_evaluator_equal_the_core(vector_index, dataset) -> None:  # type: ignore[no-untyped-def]
    names = ["hit_rate@1", "hit_rate@5", "ndcg@1", "ndcg@5", "mrr@5", "ra_nwg@3"]
    retriever = vector_index.as_retriever(similarity_top_k=5)
    # expected ids carry grade 1; the set metric reads it as a decisive 5
    evaluator = RetrieverEvaluator(
        metrics=RagMetricsMetric.from_names(names, grade_map={1: 5}),
        retriever=retriever,
    )
    queries = list(dataset.queries.items())[:40]
    results = [
        evaluator.evaluate(query=text, expected_ids=list(dataset.relevant_docs[qid]))
        for qid, text in queries
    ]
    run = rm.Run.from_lists(
        {qid: r.retrieved_ids for (qid, _), r in zip(queries, results, strict=True)}
    )
    qrels = {qid: dict.fromkeys(dataset.relevant_docs[qid], 1) for qid, _ in queries}
    core = rm.evaluate(qrels, run, names, grade_map={1: 5})
    for (qid, _), result in zip(queries, results, strict=True):
        assert set(result.metric_vals_dict) == set(names)  # several cutoffs side by side
        for name in names:
            assert result.metric_vals_dict[name] == pytest.approx(core.per_query[qid][name]), (
                qid,
                name,
            )


def test_next_to_llama_index_own_metrics(vector_index, dataset) -> None:  # type: ignore[no-untyped-def]
    """Same numbers where the conventions agree; each difference is a documented convention."""
    retriever = vector_index.as_retriever(similarity_top_k=4)
    theirs = [HitRate(), MRR(), Precision(), Recall(), AveragePrecision(), NDCG()]
    # older llama-index-core releases (0.12.0 among them) normalized NDCG by as many ideal
    # relevant docs as were retrieved (one relevant doc at rank 1 of 2 scored 0.61): compare
    # NDCG only where it normalizes by the expected ids, as trec_eval does
    probe = NDCG().compute(expected_ids=["a"], retrieved_ids=["a", "x"]).score
    if probe != 1.0:
        theirs = theirs[:-1]
    ours = {
        "hit_rate": "hit_rate@4",
        "mrr": "mrr",
        "precision": "precision@4",
        "recall": "recall@4",
        "ap": "map",
        "ndcg": "ndcg",
    }
    compared = 0
    for qid, text in list(dataset.queries.items())[:60]:
        retrieved = node_ids(retriever.retrieve(text))
        assert len(retrieved) == 4
        expected = [*dataset.relevant_docs[qid], "doc-extra-a"]  # two expected ids
        for metric in theirs:
            their_value = metric.compute(
                query=text, expected_ids=expected, retrieved_ids=retrieved
            ).score
            our_value = (
                RagMetricsMetric.from_name(ours[metric.metric_name], label="rm")
                .compute(query=text, expected_ids=expected, retrieved_ids=retrieved)
                .score
            )
            # LlamaIndex's precision divides by the number retrieved, ours by k: equal at k = top_k.
            # LlamaIndex's NDCG normalizes by all expected ids: that is our uncut "ndcg".
            assert our_value == pytest.approx(their_value), (metric.metric_name, qid)
            compared += 1
    assert compared == 60 * len(theirs)
    # the conventions that differ:
    expected, retrieved = ["a", "b", "c"], ["a", "x"]
    assert probe != 1.0 or (
        NDCG().compute(expected_ids=expected, retrieved_ids=retrieved).score
        < RagMetricsMetric.from_name("ndcg@2")
        .compute(expected_ids=expected, retrieved_ids=retrieved)
        .score
    )  # ideal cut at k
    with pytest.raises(ValueError, match="Retrieved ids and expected ids must be provided"):
        HitRate().compute(expected_ids=["a"], retrieved_ids=[])
    assert (
        RagMetricsMetric.from_name("hit_rate@5").compute(expected_ids=["a"], retrieved_ids=[]).score
        == 0.0
    )


def test_graded_relevance_through_kwargs_and_grades() -> None:
    metric = RagMetricsMetric.from_name("ndcg@2")
    graded = metric.compute(
        query="q",
        expected_ids=["a", "b"],
        retrieved_ids=["b", "a"],
        expected_grades={"a": 3, "b": 1},
    ).score
    assert graded == pytest.approx(0.7967, abs=5e-5)  # METRICS.md's checked value
    by_query = RagMetricsMetric.from_name("ndcg@2", grades={"q": {"a": 3, "b": 1}})
    assert by_query.compute(
        query="q", expected_ids=["a", "b"], retrieved_ids=["b", "a"]
    ).score == pytest.approx(graded)


def test_na_and_errors_do_not_raise() -> None:
    na = RagMetricsMetric.from_name("n_recall_5@2").compute(
        query="q", expected_ids=["a"], retrieved_ids=["a"], expected_grades={"a": 4}
    )
    assert math.isnan(na.score) and na.metadata["na"] is True
    metric = RagMetricsMetric.from_name("ra_nwg@2")
    with pytest.warns(
        UserWarning, match=r"ra_nwg@2: The RAG set metrics \(ra_nwg@2\) need utility grades 1\.\.5"
    ):
        bad = metric.compute(
            query="q", expected_ids=["a"], retrieved_ids=["a"], expected_grades={"a": 9}
        )
    assert math.isnan(bad.score)
    strict = RagMetricsMetric.from_name("ra_nwg@2", raise_errors=True)
    with pytest.raises(rm.RagMetricsError):
        strict.compute(query="q", expected_ids=["a"], retrieved_ids=["a"], expected_grades={"a": 9})


def test_expected_texts_are_matched_when_ids_do_not_meet() -> None:
    metric = RagMetricsMetric.from_name("recall@2")
    score = metric.compute(
        expected_ids=["doc-1", "doc-2"],
        expected_texts=[
            "Alice moved to Lyon in 2019. She loves figs.",
            "Bob stayed home all year long.",
        ],
        retrieved_ids=["chunk-9", "chunk-4"],
        retrieved_texts=["unrelated text here", "Alice moved to Lyon in 2019."],
    ).score
    assert score == 0.5


def test_node_conversion() -> None:
    node = TextNode(id_="n1", text="hello", metadata={"page": 3})
    node.relationships = {}
    scored = [NodeWithScore(node=node, score=0.5)]
    assert node_ids(scored) == ["n1"]
    assert node_ids(scored, "metadata:page") == ["3"]
    assert node_texts(scored) == ["hello"]
    with pytest.raises(
        rm.RagMetricsError, match=r"Node 'n1' has no 'ref_doc_id'; choose another id_field"
    ):
        node_ids(scored, "ref_doc_id")
    with pytest.raises(rm.RagMetricsError, match=r"Node 'n1' has no 'metadata:title'"):
        node_ids(scored, "metadata:title")
    with pytest.raises(
        rm.RagMetricsError, match=r"id_field must be 'node_id', 'ref_doc_id' or 'metadata:<key>'"
    ):
        node_ids(scored, "title")


def test_dataset_evaluator_with_bm25_on_hundreds_of_queries(nodes, dataset) -> None:  # type: ignore[no-untyped-def]
    retriever = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=10)
    evaluator = RagMetricsRetrieverEvaluator(
        retriever, ["hit_rate@1", "recall@10", "ndcg@10"], workers=8, show_progress=False
    )
    result = evaluator.evaluate_dataset(dataset)
    assert result.counts.queries == 300 and not evaluator.errors
    # the same numbers as retrieving query by query and evaluating with the core
    manual = rm.Run.from_lists(
        {q: node_ids(retriever.retrieve(t)) for q, t in dataset.queries.items()}
    )
    assert (
        result.aggregate
        == rm.evaluate(dataset.qrels, manual, ["hit_rate@1", "recall@10", "ndcg@10"]).aggregate
    )
    assert result.aggregate["recall@10"] > 0.9  # names are distinctive: BM25 finds them


def test_postprocessors_make_the_pool(vector_index, dataset) -> None:  # type: ignore[no-untyped-def]
    cut = SimilarityPostprocessor(similarity_cutoff=0.55)
    evaluator = RagMetricsRetrieverEvaluator(
        vector_index.as_retriever(similarity_top_k=8),
        ["ra_nwg@3", "proc@3", "pct_proc@3"],
        node_postprocessors=[cut],
        show_progress=False,
        grade_map={2: 5},
    )
    small = rm.RetrievalDataset(
        queries=dict(list(dataset.queries.items())[:50]),
        corpus=dataset.corpus,
        relevant_docs={q: dataset.relevant_docs[q] for q in list(dataset.queries)[:50]},
    )
    result = evaluator.aevaluate_dataset(small)
    result = asyncio.run(result)
    assert evaluator.pool is not None and evaluator.run is not None
    for qid in small.queries:
        assert set(evaluator.run[qid]) <= set(evaluator.pool[qid])
    assert result.aggregate["proc@3"] >= result.aggregate["ra_nwg@3"]


def test_a_crashing_reranker_is_not_booked_as_a_retriever_failure(vector_index, dataset) -> None:  # type: ignore[no-untyped-def]
    """The retriever's candidates stay the pool of PROC@k when a post-processor raises: the
    retrieval scores as what it found, the selection as the failure (PROC@k was 0)."""
    from llama_index.core.postprocessor.types import BaseNodePostprocessor

    class Crashing(BaseNodePostprocessor):
        def _postprocess_nodes(self, nodes, query_bundle=None):  # type: ignore[no-untyped-def]
            raise RuntimeError("reranker service down")

    small = rm.RetrievalDataset(
        queries=dict(list(dataset.queries.items())[:20]),
        corpus=dataset.corpus,
        relevant_docs={q: dataset.relevant_docs[q] for q in list(dataset.queries)[:20]},
    )
    metrics = ["ra_nwg@3", "proc@3", "pct_proc@3"]
    retriever = vector_index.as_retriever(similarity_top_k=8)
    plain = RagMetricsRetrieverEvaluator(
        retriever, metrics, show_progress=False, grade_map={2: 5}
    ).evaluate_dataset(small)
    evaluator = RagMetricsRetrieverEvaluator(
        retriever, metrics, node_postprocessors=[Crashing()], show_progress=False, grade_map={2: 5}
    )
    with pytest.warns(rm.RagMetricsWarning, match="raised"):
        crashed = evaluator.evaluate_dataset(small)
    assert set(evaluator.errors) == set(small.queries)
    assert all(
        "post-processor Crashing failed: RuntimeError" in e for e in evaluator.errors.values()
    )
    assert crashed.aggregate["proc@3"] == plain.aggregate["proc@3"] > 0  # the pool is intact
    assert crashed.aggregate["ra_nwg@3"] == 0.0  # the final list is the failure


def test_legacy_dataset_json_and_text_matching(tmp_path: Path, dataset) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "legacy.json"
    first = list(dataset.queries)[:30]
    path.write_text(
        json.dumps(
            {
                "queries": {q: dataset.queries[q] for q in first},
                "corpus": dataset.corpus,
                "relevant_docs": {q: list(dataset.relevant_docs[q]) for q in first},
                "mode": "text",
            }
        )
    )
    legacy = rm.RetrievalDataset.from_json(path)
    # chunk the corpus into sentences: node ids no longer equal doc ids, texts still map back
    chunks = [
        TextNode(id_=f"{d}#{i}", text=s.strip() + ".")
        for d, t in dataset.corpus.items()
        for i, s in enumerate(t.split("."))
        if s.strip()
    ]
    retriever = BM25Retriever.from_defaults(nodes=chunks, similarity_top_k=4)
    result = RagMetricsRetrieverEvaluator(
        retriever, ["recall@4"], match_texts=True, show_progress=False
    ).evaluate_dataset(legacy)
    assert result.counts.queries == 30 and result.aggregate["recall@4"] > 0.9


class FlakyRetriever(BaseRetriever):
    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if "Alran" in query_bundle.query_str:
            raise RuntimeError("index offline")
        return [NodeWithScore(node=TextNode(id_="doc1", text="x"), score=1.0)]


def test_a_failing_query_is_recorded_not_raised(dataset) -> None:  # type: ignore[no-untyped-def]
    evaluator = RagMetricsRetrieverEvaluator(FlakyRetriever(), ["mrr"], show_progress=False)
    with pytest.warns(rm.errors.RetrievalFailedWarning, match=r"1 of 300 retrievals raised"):
        result = evaluator.evaluate_dataset(dataset)
    assert evaluator.errors == {"q0": "RuntimeError: index offline"}
    assert result.retrieval_errors == evaluator.errors
    assert result.counts.queries == 300 and result.counts.empty_rankings == 1
    assert result.counts.failed_retrievals == 1
    with pytest.raises(RuntimeError, match="index offline"):
        RagMetricsRetrieverEvaluator(
            FlakyRetriever(), ["mrr"], show_progress=False, raise_errors=True
        ).evaluate_dataset(dataset)


def test_evaluator_input_errors(vector_index) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(
        rm.RagMetricsError, match=r"retriever must be a LlamaIndex BaseRetriever; got str"
    ):
        RagMetricsRetrieverEvaluator("bm25", ["mrr"])  # type: ignore[arg-type]
    with pytest.raises(rm.RagMetricsError, match=r"Expected a retrieval dataset.*got dict"):
        RagMetricsRetrieverEvaluator(vector_index.as_retriever(), ["mrr"]).evaluate_dataset({})  # type: ignore[arg-type]


def test_recorder_captures_a_query_engine(vector_index, dataset) -> None:  # type: ignore[no-untyped-def]
    retriever = vector_index.as_retriever(similarity_top_k=3)
    engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())
    first = dict(list(dataset.queries.items())[:20])
    with RetrievalRecorder(query_ids={text: qid for qid, text in first.items()}) as recorder:
        for text in first.values():
            engine.query(text)
    run = recorder.run
    assert set(run.query_ids) == set(first)
    for qid, text in first.items():
        assert run[qid] == tuple(node_ids(retriever.retrieve(text)))
    assert rm.evaluate(dataset.qrels, run, ["hit_rate@3"], missing="skip").counts.queries == 20
    assert recorder.failures == 0


def test_the_recorder_keeps_texts_only_when_asked(vector_index, dataset) -> None:  # type: ignore[no-untyped-def]
    """A record holds ids and scores; each node's text (kilobytes a retrieval) only with
    keep_texts=True."""
    retriever = vector_index.as_retriever(similarity_top_k=3)
    text = next(iter(dataset.queries.values()))
    kept = {}
    for keep in (False, True):
        with RetrievalRecorder(keep_texts=keep) as recorder:
            retriever.retrieve(text)
        (record,) = recorder.records
        assert len(record.doc_ids) == 3 and len(record.scores) == 3
        kept[keep] = record.texts
    assert kept[False] == () and len(kept[True]) == 3 and all(kept[True])


def test_concurrent_capture_loses_nothing(vector_index, dataset) -> None:  # type: ignore[no-untyped-def]
    retriever = vector_index.as_retriever(similarity_top_k=2)
    texts = list(dataset.queries.values())[:60]
    with RetrievalRecorder() as recorder:

        async def many() -> None:
            await asyncio.gather(*(retriever.aretrieve(t) for t in texts[:30]))

        asyncio.run(many())
        threads = [threading.Thread(target=retriever.retrieve, args=(t,)) for t in texts[30:]]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    records = recorder.records
    assert len(records) == 60
    assert sorted(r.query for r in records) == sorted(texts)
    assert all(len(r.doc_ids) == 2 for r in records)


class _Slow(BaseRetriever):
    """A real LlamaIndex retriever that waits ``delay`` seconds, then asks another one."""

    def __init__(self, inner: BaseRetriever, delay: float) -> None:
        super().__init__()
        self.inner, self.delay = inner, delay

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        import time

        time.sleep(self.delay)
        return self.inner.retrieve(query_bundle)


def test_latency_is_timed_by_the_evaluator_and_the_recorder(nodes, dataset) -> None:  # type: ignore[no-untyped-def]
    """Every retrieval's wall time reaches the result; compare shows p50/p95 beside quality."""
    small = rm.RetrievalDataset(
        queries=dict(list(dataset.queries.items())[:12]),
        relevant_docs={q: dataset.relevant_docs[q] for q in list(dataset.queries)[:12]},
    )
    bm25 = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=5)
    slow = _Slow(bm25, 0.03)
    fast = RagMetricsRetrieverEvaluator(bm25, ["mrr"], show_progress=False).evaluate_dataset(small)
    late = RagMetricsRetrieverEvaluator(slow, ["mrr"], show_progress=False).evaluate_dataset(small)
    assert set(late.latencies) == set(small.queries) and min(late.latencies.values()) >= 0.03
    assert late.aggregate == fast.aggregate
    both = rm.compare(small.qrels, {"bm25": fast, "slow": late}, ["mrr"], n_permutations=100)
    rows = both.latency_rows()
    assert rows is not None and rows[1][1][2] >= 30.0 > rows[1][0][2]

    texts = {text: qid for qid, text in list(small.queries.items())[:4]}
    with RetrievalRecorder(query_ids=texts) as recorder:
        for text in texts:
            slow.retrieve(text)
    timed = recorder.evaluate(small.qrels, ["mrr"]).latencies
    assert set(timed) == set(texts.values()) and min(timed.values()) >= 0.03
    assert all(r.seconds is not None and r.seconds >= 0.03 for r in recorder.records_of("_Slow"))
