"""The LlamaIndex adapter as a user keeps it: one answer for chunks, checks before
retrieving, no silent zeros, stages and failures in the records (real llama-index-core)."""

from __future__ import annotations

import math
import random
import warnings

import pytest
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.evaluation import RetrieverEvaluator
from llama_index.core.evaluation.retrieval.metrics import MRR
from llama_index.core.llms import MockLLM
from llama_index.core.retrievers import QueryFusionRetriever
from llama_index.core.schema import (
    NodeRelationship,
    NodeWithScore,
    QueryBundle,
    RelatedNodeInfo,
    TextNode,
)
from llama_index.retrievers.bm25 import BM25Retriever

import ragmetrics as rm
from llama_index.evaluation.ragmetrics import (
    MetricKeyWarning,
    RagMetricsMetric,
    RagMetricsRetrieverEvaluator,
    RetrievalRecorder,
    register_metrics,
)
from ragmetrics.errors import HandlerFailureWarning, IdMismatchWarning, StageWarning

NAMES = ["hit_rate@1", "hit_rate@3", "mrr@5", "ndcg@5", "recall@5", "map@5"]


def _chunks(corpus: dict[str, str], extra: dict[str, str] | None = None) -> list[TextNode]:
    """Each document cut into its sentences, each chunk pointing at its document."""
    nodes = []
    for doc_id, text in {**corpus, **(extra or {})}.items():
        for i, sentence in enumerate(s for s in text.split(".") if s.strip()):
            node = TextNode(id_=f"{doc_id}#{i}", text=sentence.strip() + ".")
            node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=doc_id)
            nodes.append(node)
    return nodes


def _small(dataset: rm.RetrievalDataset, n: int = 60) -> rm.RetrievalDataset:
    kept = list(dataset.queries)[:n]
    return rm.RetrievalDataset(
        queries={q: dataset.queries[q] for q in kept},
        corpus=dataset.corpus,
        relevant_docs={q: dataset.relevant_docs[q] for q in kept},
    )


def test_three_chunk_routes_give_one_answer(dataset) -> None:  # type: ignore[no-untyped-def]
    """ref_doc_id, match_texts=True and the plug-ins' text fallback rank the same documents."""
    data = _small(dataset)
    retriever = BM25Retriever.from_defaults(nodes=_chunks(data.corpus), similarity_top_k=6)
    by_ref = RagMetricsRetrieverEvaluator(
        retriever, NAMES, id_field="ref_doc_id", show_progress=False
    ).evaluate_dataset(data)
    by_text = RagMetricsRetrieverEvaluator(
        retriever, NAMES, match_texts=True, show_progress=False
    ).evaluate_dataset(data)
    evaluator = RetrieverEvaluator(
        metrics=RagMetricsMetric.from_names(NAMES, dataset=data), retriever=retriever
    )
    for query_id, text in data.queries.items():
        expected = list(data.relevant_docs[query_id])
        plugged = evaluator.evaluate(
            query=text, expected_ids=expected, expected_texts=[data.corpus[d] for d in expected]
        ).metric_vals_dict
        for name in NAMES:
            assert by_ref.per_query[query_id][name] == pytest.approx(plugged[name])
            assert by_text.per_query[query_id][name] == pytest.approx(plugged[name])
    assert by_ref.aggregate == pytest.approx(by_text.aggregate)
    assert by_ref.counts.repeated_ids_dropped > 0  # second chunks of a document were dropped
    assert by_text.counts.unmatched_chunks == 0


def test_unmatched_chunks_keep_their_place_and_are_counted(dataset) -> None:  # type: ignore[no-untyped-def]
    data = _small(dataset, 30)
    noise = {f"x{i}": f"Where does nobody{i} live. What does nobody{i} eat." for i in range(30)}
    nodes = _chunks(data.corpus, noise)
    retriever = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=8)
    by_text = RagMetricsRetrieverEvaluator(
        retriever, ["mrr@8", "ndcg@8"], match_texts=True, show_progress=False
    ).evaluate_dataset(data)
    by_ref = RagMetricsRetrieverEvaluator(
        retriever, ["mrr@8", "ndcg@8"], id_field="ref_doc_id", show_progress=False
    ).evaluate_dataset(data)
    assert by_text.counts.unmatched_chunks > 0
    assert "retrieved chunks matched no original" in by_text.to_markdown()
    # a noise chunk holds a rank in both routes: the first relevant doc is never moved up
    for query_id in data.queries:
        assert by_text.per_query[query_id]["mrr@8"] <= by_ref.per_query[query_id]["mrr@8"]


class CountingRetriever(BaseRetriever):
    calls: int = 0

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        self.calls += 1
        return [NodeWithScore(node=TextNode(id_="doc1", text="x"), score=1.0)]


def test_every_entry_point_checks_before_retrieving(dataset) -> None:  # type: ignore[no-untyped-def]
    retriever = CountingRetriever()
    with pytest.raises(rm.UnknownMetricError, match="ndcg@10"):
        RagMetricsRetrieverEvaluator(retriever, ["ndgc@10"])
    with pytest.raises(rm.InvalidParameterError, match="relevance_treshold"):
        RagMetricsRetrieverEvaluator(retriever, ["mrr"], relevance_treshold=2)
    with pytest.raises(rm.InvalidParameterError, match="describe"):
        RagMetricsMetric.from_name("mrr@5", missing="skip")
    with pytest.raises(rm.RagMetricsError, match="id_field must be"):
        RagMetricsRetrieverEvaluator(retriever, ["mrr"], id_field="ref_doc")
    with pytest.raises(rm.RagMetricsError, match="id_field must be"):
        RetrievalRecorder(id_field="doc")
    with pytest.raises(rm.GradeScaleError, match=r"grade_map=\{1: 5\}"):
        RagMetricsMetric.from_name("ra_nwg@5", raise_errors=True).compute(
            expected_ids=["doc1"], retrieved_ids=["doc1"]
        )  # ids without grades are binary: refused for the set metrics
    binary = rm.RetrievalDataset(queries={"q1": "x"}, relevant_docs={"q1": ["doc1"]})
    with pytest.raises(rm.GradeScaleError, match=r"grade_map=\{1: 5\}"):  # before retrieving
        RagMetricsRetrieverEvaluator(retriever, ["ra_nwg@5"]).evaluate_dataset(binary)
    assert retriever.calls == 0


def test_an_error_in_evaluate_dataset_is_not_chained_to_the_event_loop(dataset) -> None:  # type: ignore[no-untyped-def]
    binary = rm.RetrievalDataset(queries={"q1": "x"}, relevant_docs={"q1": ["doc1"]})
    with pytest.raises(rm.GradeScaleError) as caught:
        RagMetricsRetrieverEvaluator(CountingRetriever(), ["ra_nwg@5"]).evaluate_dataset(binary)
    assert caught.value.__context__ is None  # no "RuntimeError: no running event loop" above it


def test_node_ids_of_chunks_against_document_judgments_warn_with_the_fix(dataset) -> None:  # type: ignore[no-untyped-def]
    data = _small(dataset, 20)
    retriever = BM25Retriever.from_defaults(nodes=_chunks(data.corpus), similarity_top_k=4)
    with pytest.warns(IdMismatchWarning, match=r'id_field="ref_doc_id"'):
        result = RagMetricsRetrieverEvaluator(
            retriever, ["mrr"], show_progress=False
        ).evaluate_dataset(data)
    assert result.aggregate["mrr"] == 0.0
    plugin = RagMetricsMetric.from_name("mrr@5")
    with pytest.warns(IdMismatchWarning, match="not of the form of the judged ids"):
        plugin.compute(expected_ids=["doc1"], retrieved_ids=["3f2a-77c1-9d0e", "a1b2-c3d4-e5f6"])


def test_plugins_match_the_core_on_random_rankings() -> None:
    rng = random.Random(7)
    names = [*NAMES, "P@3", "ndcg_exp@4", "err@5", "r_precision", "ra_nwg@3", "pct_proc@3"]
    # ERR's max grade is the query's own in a plug-in, the qrels' in an evaluation: fixed
    options = {"grade_map": {0: 1, 1: 3, 2: 4, 3: 5}, "err_max_grade": 3}
    plugins = RagMetricsMetric.from_names(names, **options)
    judgments, rankings = {}, {}
    for i in range(200):
        pool = [f"d{j}" for j in range(15)]
        judgments[f"q{i}"] = {d: rng.randint(0, 3) for d in rng.sample(pool, rng.randint(1, 6))}
        rankings[f"q{i}"] = rng.sample(pool, rng.randint(0, 10))
    core = rm.evaluate(judgments, rankings, names, **options)
    for query_id, ranking in rankings.items():
        for plugin in plugins:
            value = plugin.compute(
                query=query_id,
                expected_ids=list(judgments[query_id]),
                retrieved_ids=ranking,
                expected_grades=judgments[query_id],
            ).score
            expected = core.per_query[query_id][plugin.name]
            if expected is None:
                assert math.isnan(value)
            else:
                assert value == pytest.approx(expected, abs=1e-12), (query_id, plugin.name)


def test_key_collisions_warn_and_labels_avoid_them() -> None:
    with pytest.warns(MetricKeyWarning, match=r"label='rm_mrr'"):
        RagMetricsMetric.from_name("mrr")
    ours = RagMetricsMetric.from_names(["mrr", "ndcg"], prefix="rm_")
    evaluator = RetrieverEvaluator(metrics=[MRR(), *ours], retriever=CountingRetriever())
    values = evaluator.evaluate(query="x", expected_ids=["doc1"]).metric_vals_dict
    assert values == {"mrr": 1.0, "rm_mrr": 1.0, "rm_ndcg": 1.0}


def test_our_names_in_the_evaluator_factory() -> None:
    assert register_metrics(["ndcg@10", "ra_nwg@5"], grade_map={1: 5}) == ["ndcg@10", "ra_nwg@5"]
    evaluator = RetrieverEvaluator.from_metric_names(
        ["hit_rate", "ndcg@10", "ra_nwg@5"], retriever=CountingRetriever()
    )
    values = evaluator.evaluate(query="x", expected_ids=["doc1"]).metric_vals_dict
    assert values == {"hit_rate": 1.0, "ndcg@10": 1.0, "ra_nwg@5": 1.0}
    with pytest.raises(rm.RagMetricsError, match="LlamaIndex's own metric key"):
        register_metrics(["mrr"])


def test_legacy_dataset_objects_and_graded_plugins(dataset) -> None:  # type: ignore[no-untyped-def]
    class EmbeddingQAFinetuneDataset:  # the shape of LlamaIndex's former class
        def __init__(self) -> None:
            self.queries = {"q1": dataset.queries["q1"], "q2": dataset.queries["q2"]}
            self.corpus = dataset.corpus
            self.relevant_docs = {"q1": ["doc1"], "q2": ["doc2"]}
            self.mode = "text"

    retriever = BM25Retriever.from_defaults(nodes=_chunks(dataset.corpus), similarity_top_k=4)
    result = RagMetricsRetrieverEvaluator(
        retriever, ["recall@4"], id_field="ref_doc_id", show_progress=False
    ).evaluate_dataset(EmbeddingQAFinetuneDataset())
    assert result.counts.queries == 2 and result.aggregate["recall@4"] == 1.0
    # graded judgments reach plug-ins inside RetrieverEvaluator through dataset=
    graded = rm.RetrievalDataset(queries={"q": "x"}, relevant_docs={"q": {"doc1": 3, "doc9": 1}})
    evaluator = RetrieverEvaluator(
        metrics=RagMetricsMetric.from_names(["ndcg@2"], dataset=graded),
        retriever=CountingRetriever(),
    )
    value = evaluator.evaluate(query="x", expected_ids=["doc1", "doc9"]).metric_vals_dict
    binary = RagMetricsMetric.from_name("ndcg@2").compute(
        query="x", expected_ids=["doc1", "doc9"], retrieved_ids=["doc1"]
    )
    assert value["ndcg@2"] == pytest.approx(3 / (3 + 1 / math.log2(3)))
    assert binary.score == pytest.approx(1 / (1 + 1 / math.log2(3)))


def test_records_tell_stages_apart_and_keep_failures(dataset) -> None:  # type: ignore[no-untyped-def]
    data = _small(dataset, 10)
    nodes = _chunks(data.corpus)
    bm25 = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=3)
    other = BM25Retriever.from_defaults(nodes=nodes[::-1], similarity_top_k=2)
    fusion = QueryFusionRetriever(
        [bm25, other], llm=MockLLM(), num_queries=1, use_async=False, similarity_top_k=3
    )
    ids = {t: q for q, t in data.queries.items()}
    recorder = RetrievalRecorder(query_ids=ids, id_field="ref_doc_id")
    with recorder, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for text in data.queries.values():
            fusion.retrieve(text)
    told = [str(w.message) for w in caught if issubclass(w.category, StageWarning)]
    assert len(told) == 1 and "Two BM25Retriever objects" in told[0]
    assert "'BM25Retriever#2'" in told[0]
    records = recorder.records
    assert len(records) == 30  # two sub-retrievers and the fusion, per query
    # two objects of one class: two stages, neither overwriting the other
    names = {"BM25Retriever", "BM25Retriever#2", "QueryFusionRetriever"}
    assert {r.retriever for r in records} == names
    nested = [r for r in records if r.retriever.startswith("BM25Retriever")]
    assert len(nested) == 20 and all(r.parent_id is not None for r in nested)
    assert len(recorder.records_of("BM25Retriever")) == 20  # the class: both objects
    assert len(recorder.records_of("BM25Retriever#2")) == 10
    for text, qid in ids.items():  # each object's own ranking, under its own stage
        assert recorder.run_of("BM25Retriever#2")[qid] == tuple(
            dict.fromkeys(n.node.ref_doc_id for n in other.retrieve(text))
        )
    top = recorder.run  # the fusion's rankings: the sub-retrievals are nested in it
    assert top == recorder.run_of("QueryFusionRetriever")
    result = recorder.evaluate(data.qrels, ["recall@3"])
    assert result.counts.queries == 10
    assert set(recorder.run_of("BM25Retriever").query_ids) == set(data.queries)
    assert recorder.open_spans == 0


class Failing(BaseRetriever):
    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        raise TimeoutError(f"store timed out on {query_bundle.query_str!r}")


def test_a_failed_retrieval_is_recorded_with_its_error_and_closed() -> None:
    with RetrievalRecorder(query_ids={"hello": "q1"}) as recorder, pytest.raises(TimeoutError):
        Failing().retrieve("hello")
    (record,) = recorder.records
    assert record.failed and record.query_id == "q1" and record.retriever == "Failing"
    assert record.error == "TimeoutError: store timed out on 'hello'"
    assert recorder.open_spans == 0 and len(recorder.run) == 0
    result = recorder.evaluate({"q1": {"d": 1}, "q2": {"d": 1}}, ["mrr"])
    # q1 failed: counted, scored as an empty ranking; q2 never asked: left out, counted
    assert result.retrieval_errors == {"q1": "TimeoutError: store timed out on 'hello'"}
    assert result.counts.queries == 1 and result.counts.missing_from_run == 1


def test_recorder_failures_warn_once_and_keep_the_error() -> None:
    nodes = [TextNode(id_="n1", text="alpha beta")]
    retriever = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=1)
    with RetrievalRecorder(id_field="metadata:doc") as recorder:
        with pytest.warns(HandlerFailureWarning, match=r"has no 'metadata:doc'"):
            retriever.retrieve("alpha")
        retriever.retrieve("beta")  # no second warning
    assert recorder.failures == 2 and recorder.last_error is not None
    assert "metadata:doc" in recorder.last_error.error
    assert recorder.open_spans == 0


def test_plugins_with_a_dataset_score_an_ordinary_index_by_text(dataset) -> None:  # type: ignore[no-untyped-def]
    """The README's first example: an index built from Documents gives its chunks new ids;
    with dataset= the plug-ins map them to documents by text, as the bulk evaluator does."""
    from llama_index.core import Document, VectorStoreIndex

    from tests.helpers import HashingEmbedding

    documents = [Document(text=text, id_=doc_id) for doc_id, text in dataset.corpus.items()]
    index = VectorStoreIndex.from_documents(documents, embed_model=HashingEmbedding())
    retriever = index.as_retriever(similarity_top_k=5)
    names = ["hit_rate@5", "ndcg@5"]
    evaluator = RetrieverEvaluator(
        metrics=RagMetricsMetric.from_names(names, dataset=dataset), retriever=retriever
    )
    queries = list(dataset.queries.items())[:20]
    values = [
        evaluator.evaluate(query=text, expected_ids=list(dataset.relevant_docs[q])).metric_vals_dict
        for q, text in queries
    ]
    small = rm.RetrievalDataset(
        queries=dict(queries),
        corpus=dataset.corpus,
        relevant_docs={q: dataset.relevant_docs[q] for q, _ in queries},
    )
    bulk = RagMetricsRetrieverEvaluator(
        retriever, names, id_field="ref_doc_id", show_progress=False
    ).evaluate_dataset(small)
    assert bulk.aggregate["hit_rate@5"] > 0.5
    for (query_id, _), got in zip(queries, values, strict=True):
        assert got == pytest.approx(bulk.per_query[query_id])
    # without the texts of the documents, the ids never meet: a warning says what to pass
    bare = RetrieverEvaluator(metrics=RagMetricsMetric.from_names(names), retriever=retriever)
    q, text = queries[0]
    with pytest.warns(rm.IdMismatchWarning, match=r"not of the form.*plug-ins with dataset="):
        bare.evaluate(query=text, expected_ids=list(dataset.relevant_docs[q]))


def test_one_bad_grade_does_not_poison_the_plugins_that_can_read_it() -> None:
    """Plug-ins built together share a scorer: a grade off the utility scale refuses the
    RAG set metric alone; nDCG keeps its value (it was NaN with the set metric's message)."""
    import warnings

    plugins = RagMetricsMetric.from_names(["ra_nwg@5", "ndcg@5"], grades={"q": {"d1": 9}})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rag, ndcg = (
            p.compute(query="q", expected_ids=["d1"], retrieved_ids=["d1", "x"]) for p in plugins
        )
    assert ndcg.score == 1.0 and ndcg.metadata["na"] is False
    assert rag.metadata["na"] is True and "utility grades" in rag.metadata["reason"]
    assert any("ra_nwg@5" in str(w.message) for w in caught)
    assert not any("ndcg@5" in str(w.message) for w in caught)
