"""Write the notebooks from the cells below and execute them, keeping their outputs.

python notebooks/build_notebooks.py          # rebuild and execute all
python notebooks/build_notebooks.py 03       # only the ones whose name starts with 03
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent

SETUP = """import ragmetrics as rm
from ragmetrics import datasets  # evaluation sets this project writes itself"""

NOTEBOOKS: dict[str, list[tuple[str, str]]] = {}

NOTEBOOKS["01_quickstart"] = [
    (
        "md",
        "# 01 · Quickstart\n\nQrels and runs from dicts and files, `evaluate`, the per-query table, and `compare`.",
    ),
    ("code", SETUP),
    (
        "md",
        "## From dicts\n\nJudgments are graded integers; a run is either scored (`from_dict`, ranked by score with trec_eval's tie rule) or ranked lists (`from_lists`).",
    ),
    (
        "code",
        """qrels = rm.Qrels.from_dict({
    "q1": {"d1": 2, "d2": 0, "d3": 1},
    "q2": {"d4": 1, "d5": 1},
    "q3": {"d6": 1},
})
run = rm.Run.from_dict({
    "q1": {"d1": 0.9, "d3": 0.4, "d9": 0.3},
    "q2": {"d5": 0.8, "d7": 0.7, "d4": 0.1},
    "q4": {"d1": 0.5},          # not judged: left out and counted
})
qrels, run""",
    ),
    (
        "code",
        """result = rm.evaluate(qrels, run, ["ndcg@10", "P@2", "recall@10", "mrr", "map"])
result""",
    ),
    (
        "md",
        '`q3` is judged but missing from the run: by default (`missing="zero"`) it scores 0 and is counted; `q4` is in the run but not judged. Nothing is dropped silently:',
    ),
    ("code", """result.counts, result.missing_query_ids, result.unjudged_query_ids"""),
    ("code", """result.to_pandas()"""),
    (
        "code",
        """rm.evaluate(qrels, run, ["ndcg@10", "P@2"], missing="skip").aggregate  # trec_eval's default""",
    ),
    (
        "md",
        "## From files\n\nTREC qrels and run files (JSON and JSONL too). Here we write them from the demo set first.",
    ),
    (
        "code",
        """import tempfile
from pathlib import Path

data = datasets.demo()
folder = Path(tempfile.mkdtemp())
data.qrels.to_trec(folder / "qrels.txt")
print((folder / "qrels.txt").read_text().splitlines()[:3])

# a toy retriever: rank originals by words shared with the question
def overlap(question, text):
    return len(set(question.lower().split()) & set(text.lower().split()))

scores = {q: {d: overlap(t, body) for d, body in data.corpus.items()} for q, t in data.queries.items()}
rm.Run.from_dict(scores, name="overlap").to_trec(folder / "overlap.txt")
from_files = rm.evaluate(rm.Qrels.from_trec(folder / "qrels.txt"), rm.Run.from_trec(folder / "overlap.txt"),
                         ["ndcg(gains='1:0')@10", "recall@10"], relevance_threshold=4)
from_files.aggregate""",
    ),
    (
        "md",
        "## Compare two runs\n\nPaired randomization tests per query, Holm correction, best values in bold.",
    ),
    (
        "code",
        """def longest_words(question, text):
    words = [w for w in question.lower().split() if len(w) > 4]
    return sum(w in text.lower() for w in words)

runs = {
    "overlap": scores,
    "long-words": {q: {d: longest_words(t, body) for d, body in data.corpus.items()} for q, t in data.queries.items()},
}
comparison = rm.compare(data.qrels, runs, ["ndcg(gains='1:0')@10", "recall@10", "mrr"], baseline="overlap",
                        correction="holm", relevance_threshold=4)
comparison""",
    ),
    (
        "code",
        """from IPython.display import Markdown

Markdown(comparison.tests_markdown())  # every paired test, as a table""",
    ),
]

NOTEBOOKS["02_rag_set_metrics"] = [
    (
        "md",
        "# 02 · RAG set metrics: RA-nWG, PROC and %PROC\n\nAn LLM reads the top K as one block of context, so what matters is *which* evidence got in, not its order. RA-nWG@K measures the share of the best achievable evidence (weighted by utility and rarity) that the K slots hold; PROC@K is the ceiling the candidate pool allows (retrieval), %PROC@K how much of it the selection realized (reranking).",
    ),
    ("code", SETUP),
    (
        "md",
        "Grades run from 1 (not relevant) to 5 (decisive). A grade's weight grows when it is rare for the query:",
    ),
    (
        "code",
        """import numpy as np
from ragmetrics.metrics import rarity_weights

# one query with 1 decisive, 2 highly relevant, 3 partial, 1 weak, 1 distractor passage
counts = np.array([[0, 1, 1, 3, 2, 1]])  # index = grade
{grade: round(float(w), 4) for grade, w in enumerate(rarity_weights(counts)[0])}""",
    ),
    (
        "md",
        "The demo set's questions have uneven evidence, as real ones do: one decisive passage among many partial ones, many confirmations of one answer, the answer said several times, or no answer at all. Every original is graded for every question (1 when unrelated), so no doc in a top 5 goes unjudged. How many passages of each grade each question has, and the weights that follow:",
    ),
    (
        "code",
        """data = datasets.demo()
profiles = {}
for q, graded in data.relevant_docs.items():
    counts = np.bincount(list(graded.values()), minlength=6)
    weights = rarity_weights(counts[None, :])[0]
    profiles[q] = {"5s": counts[5], "4s": counts[4], "3s": counts[3], "w4": round(float(weights[4]), 3), "w3": round(float(weights[3]), 3)}
import pandas as pd
pd.DataFrame(profiles).T.drop_duplicates().sort_values(["5s", "4s", "3s"])""",
    ),
    (
        "md",
        '## A first stage and a reranker\n\nThe first stage retrieves 20 originals per question; two "rerankers" keep 5. Passing the first stage as `pool=` lets PROC@5 see what the reranker could have chosen. nDCG takes `gains="1:0"`: on this scale a 1 means "not relevant" and earns nothing.',
    ),
    (
        "code",
        """def overlap(question, text):
    return len(set(question.lower().split()) & set(text.lower().split()))

first_stage = rm.Run.from_dict(
    {q: dict(sorted(((d, overlap(t, body)) for d, body in data.corpus.items()), key=lambda x: -x[1])[:20])
     for q, t in data.queries.items()}, name="first-stage")

def rerank_by_length(q):            # prefers short originals
    return sorted(first_stage[q], key=lambda d: len(data.corpus[d]))[:5]

def rerank_by_rarest_word(q):       # prefers originals holding the question's two rarest words
    words = [w.strip("?'s") for w in data.queries[q].lower().split()]
    rarity = {w: sum(w in b.lower() for b in data.corpus.values()) for w in words}
    rare = sorted((w for w in words if len(w) > 3), key=lambda w: rarity[w])[:2]
    return sorted(first_stage[q], key=lambda d: (-sum(w in data.corpus[d].lower() for w in rare),
                                                 first_stage[q].index(d)))[:5]

runs = {
    "first-stage top 5": rm.Run.from_lists({q: list(first_stage[q][:5]) for q in first_stage}),
    "shortest 5": rm.Run.from_lists({q: rerank_by_length(q) for q in first_stage}),
    "rarest-word 5": rm.Run.from_lists({q: rerank_by_rarest_word(q) for q in first_stage}),
}
NDCG = "ndcg(gains='1:0')@5"
metrics = ["ra_nwg@5", "proc@5", "pct_proc@5", "n_recall_4plus@5", "harm@5", NDCG]
comparison = rm.compare(data.qrels, runs, metrics, baseline="first-stage top 5", pool=first_stage,
                        relevance_threshold=4)
comparison""",
    ),
    (
        "md",
        "PROC@5 is the same for every reranker (same pool); the differences in RA-nWG@5 are all selection, which %PROC@5 isolates. Three questions have no answer (no grade 4 or 5): the set metrics are NA there and the counts say so (`queries` and `NA` in the table of each result).\n\nEach paired test beside its interval: the interval is the test inverted, so it leaves out 0 exactly when p < 0.05. Where a reranker changes a few questions, all the same way, and ties on the rest, the interval ends at exactly 0, written `0 (ties)`:",
    ),
    (
        "code",
        """from IPython.display import Markdown

Markdown(comparison.tests_markdown())""",
    ),
    (
        "md",
        "The decomposition: mean RA-nWG@5 = mean PROC@5 x the share selection realized, each bar labelled with its value (the first two are the table's means; the share is their ratio, not the table's mean %PROC@5, a mean of per-question ratios).",
    ),
    (
        "code",
        """from ragmetrics.report import plots
plots.plot_rag_decomposition(comparison, 5);  # the ; shows the figure once""",
    ),
    (
        "md",
        "## Where nDCG and RA-nWG disagree\n\nnDCG discounts by rank and gives each grade a fixed gain (a 4 earns 4/5 of a 5 wherever it is). RA-nWG reads the top 5 as the set the LLM will read, and weighs a grade by how rare it is for the question. So a list that holds the decisive passage at rank 5 can lose on nDCG to one that leads with a confirmation and misses the answer, and win on RA-nWG. The questions where the two metrics order two rerankers differently:",
    ),
    (
        "code",
        """def disagreements(x, y):
    a, b = comparison.results[x].per_query, comparison.results[y].per_query
    return [q for q in data.queries
            if a[q]["ra_nwg@5"] is not None
            and (b[q][NDCG] - a[q][NDCG]) * (b[q]["ra_nwg@5"] - a[q]["ra_nwg@5"]) < 0]

found = {(x, y): disagreements(x, y) for x, y in [("first-stage top 5", "shortest 5"), ("shortest 5", "rarest-word 5")]}
found""",
    ),
    (
        "code",
        """(x, y), questions = next((pair, qs) for pair, qs in found.items() if qs)
q = questions[0]
graded = data.relevant_docs[q]
weights = rarity_weights(np.bincount(list(graded.values()), minlength=6)[None, :])[0]
print(f"{q}: {data.queries[q]}  weights by grade: { {g: round(float(weights[g]), 3) for g in range(1, 6)} }")
for name in (x, y):
    top = runs[name][q][:5]
    values = comparison.results[name].per_query[q]
    print(f"  {name:<18} grades of the top 5 in order: {[graded[d] for d in top]}   "
          f"nDCG@5 {values[NDCG]:.3f}   RA-nWG@5 {values['ra_nwg@5']:.3f}")""",
    ),
    (
        "md",
        "The grades in order show why: nDCG prefers the list whose good passages come first; RA-nWG prefers the list whose five passages together hold more weighted evidence, wherever in the five it sits.",
    ),
    (
        "md",
        "## Where did a query fail?\n\n`diagnose` separates evidence that was in the pool but not selected (a reranking gap) from evidence that never made the pool (a retrieval gap).",
    ),
    (
        "code",
        """shortest = comparison.results["shortest 5"]
worst = shortest.worst("ra_nwg@5", 1)[0]
shortest.diagnose(worst)""",
    ),
    (
        "md",
        "## Is the ranking of systems robust to the weighting?\n\n`robustness` re-evaluates over a grid of (alpha, cap4, cap3); alpha = 0 turns rarity off. On this data the values move with the weighting; the summary line says whether the order of the rerankers holds at every setting:",
    ),
    (
        "code",
        """grid = rm.robustness(data.qrels, runs, "ra_nwg@5", pools={n: first_stage for n in runs})
grid""",
    ),
    ("code", """grid.to_pandas()  # each run's mean RA-nWG@5 at each weighting"""),
    (
        "md",
        "## Slices\n\nThe demo set's `query_metadata` says where each question's evidence lies (`source`) and how it is spread (`evidence`). `data.segments(field)` gives the `segments=` of `compare` (or `by_segment` afterwards): each reranker per slice with its interval, and each pair tested within each slice. The three questions without an answer are NA for the set metrics, and the table counts them.",
    ),
    (
        "code",
        """sliced = comparison.by_segment(data.segments("evidence"))
Markdown(sliced.to_markdown())""",
    ),
]

NOTEBOOKS["03_llamaindex"] = [
    (
        "md",
        "# 03 · LlamaIndex\n\nOur metrics inside `RetrieverEvaluator`, a whole dataset through `RagMetricsRetrieverEvaluator`, every retrieval of a query engine captured by `RetrievalRecorder` (with its reranker and final context as stages), an agent evaluated per user question, and the same pipeline read back from its OpenTelemetry traces. Everything runs offline: a hashing embedding stands in for a model.",
    ),
    (
        "code",
        SETUP
        + '''

import hashlib
import numpy as np
from llama_index.core import Document, Settings, VectorStoreIndex
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.node_parser import SentenceSplitter

class HashingEmbedding(BaseEmbedding):
    """Words hashed into 256 dimensions: deterministic and local (a stand-in for a real model)."""
    def _vec(self, text):
        v = np.zeros(256)
        for w in text.lower().split():
            v[int(hashlib.md5(w.strip(".,?!:").encode()).hexdigest(), 16) % 256] += 1
        return (v / (np.linalg.norm(v) or 1)).tolist()
    def _get_query_embedding(self, query): return self._vec(query)
    async def _aget_query_embedding(self, query): return self._vec(query)
    def _get_text_embedding(self, text): return self._vec(text)

Settings.embed_model = HashingEmbedding()
Settings.llm = MockLLM()
# chunk ids from the document and the chunk's number (random UUIDs by default): equal scores
# then tie the same way in every run, and so do the numbers below
Settings.node_parser = SentenceSplitter(id_func=lambda i, doc: f"{doc.doc_id}-{i}")
data = datasets.demo()
documents = [Document(text=t, id_=d) for d, t in data.corpus.items()]
index = VectorStoreIndex.from_documents(documents)
len(documents)''',
    ),
    (
        "md",
        "## 1. Plug-ins for `RetrieverEvaluator`\n\nOne class per metric name, so several cutoffs sit side by side; graded relevance comes through the `grades` mapping; an empty retrieval scores 0.",
    ),
    (
        "code",
        """from llama_index.core.evaluation import RetrieverEvaluator
from llama_index.evaluation.ragmetrics import RagMetricsMetric, node_ids

# one scorer for the four plug-ins; dataset= gives them the graded judgments by query text
metrics = RagMetricsMetric.from_names(
    ["hit_rate@1", "hit_rate@5", "ndcg(gains='1:0')@5", "ra_nwg@5"], dataset=data, relevance_threshold=4
)
# nodes are chunks of the documents: score by their source document
retriever = index.as_retriever(similarity_top_k=10)
evaluator = RetrieverEvaluator(metrics=metrics, retriever=retriever)
question = data.queries["chat-dog"]
nodes = retriever.retrieve(question)
ids = node_ids(nodes, "ref_doc_id")
{m.metric_name: round(m.compute(query=question, expected_ids=list(data.relevant_docs["chat-dog"]),
                                retrieved_ids=ids).score, 4) for m in metrics}""",
    ),
    (
        "md",
        "## 2. A whole dataset, concurrently\n\n`RagMetricsRetrieverEvaluator` replaces the dataset runner that `llama-index-core` 0.14.21 removed, and returns a ragmetrics result.",
    ),
    (
        "code",
        """from llama_index.evaluation.ragmetrics import RagMetricsRetrieverEvaluator

evaluator = RagMetricsRetrieverEvaluator(
    index.as_retriever(similarity_top_k=10), ["hit_rate@5", "recall@10", "ndcg(gains='1:0')@10", "ra_nwg@5"],
    id_field="ref_doc_id", workers=4, show_progress=False, relevance_threshold=4)
result = evaluator.evaluate_dataset(data)
result""",
    ),
    ("code", """result.to_pandas().sort_values("ra_nwg@5").head()"""),
    ("md", "## 3. Capture the retrievals of a query engine"),
    (
        "code",
        """from llama_index.evaluation.ragmetrics import RetrievalRecorder

engine = index.as_query_engine(similarity_top_k=5)
with RetrievalRecorder(query_ids={t: q for q, t in data.queries.items()}, id_field="ref_doc_id") as recorder:
    for question in list(data.queries.values())[:10]:
        engine.query(question)
print(len(recorder.records), "retrievals recorded")
# judged queries the engine was never asked are left out and counted, not scored 0
recorder.evaluate(data.qrels, ["hit_rate@5", "ndcg(gains='1:0')@5"], relevance_threshold=4)""",
    ),
    (
        "md",
        "## 4. A reranker and the final context, as stages\n\nA query engine's node post-processors record as `\"rerank\"` stages and what the synthesizer was finally given as the `\"context\"` stage. PROC@k of a later stage is counted against the retrieval's candidates, so a reranker that drops the evidence is told from a retriever that never found it.",
    ),
    (
        "code",
        """from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.events.rerank import ReRankEndEvent, ReRankStartEvent
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.query_engine import RetrieverQueryEngine

dispatcher = get_dispatcher("notebook")

class ShortestFirst(BaseNodePostprocessor):
    \"\"\"A toy reranker: the three shortest chunks first (a cross-encoder would go here). It
    announces its work with LlamaIndex's rerank events, as the model rerankers do.\"\"\"
    def _postprocess_nodes(self, nodes, query_bundle=None):
        dispatcher.event(ReRankStartEvent(query=query_bundle, nodes=nodes, top_n=3, model_name="length"))
        kept = sorted(nodes, key=lambda n: len(n.get_content()))[:3]
        dispatcher.event(ReRankEndEvent(nodes=kept))
        return kept

engine = RetrieverQueryEngine.from_args(index.as_retriever(similarity_top_k=10), node_postprocessors=[ShortestFirst()])
with RetrievalRecorder(query_ids={t: q for q, t in data.queries.items()}, id_field="ref_doc_id") as recorder:
    for question in data.queries.values():
        engine.query(question)
metrics = ["pct_proc@3", "ra_nwg@3"]
by_stage = {stage or "retrieve": recorder.evaluate(data.qrels, metrics, stage=stage).aggregate
            for stage in (None, "rerank", "context")}
by_stage""",
    ),
    (
        "md",
        "## 5. An agent, per user question\n\nAn agent searches with its own rewrites, often more than once. `question(query_id)` keys every retrieval inside it to the user's question; `policy=\"union\"` joins the searches (first seen, each doc once) and `calls()` counts them. A scripted LLM stands in for a model here: it calls the search tool twice per question.",
    ),
    (
        "code",
        """import asyncio, uuid
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.llms import ChatMessage, MessageRole, MockFunctionCallingLLM
from llama_index.core.tools import FunctionTool
from llama_index.evaluation.ragmetrics import question

search_retriever = index.as_retriever(similarity_top_k=5)
def search(query: str) -> str:
    \"\"\"Search the knowledge base.\"\"\"
    return "\\n".join(n.get_content() for n in search_retriever.retrieve(query))

def plan(messages, **kwargs):  # the scripted LLM: two searches, one a turn, then an answer
    done = sum(m.role == MessageRole.TOOL for m in messages)
    if done == 2:
        return ChatMessage(role=MessageRole.ASSISTANT, content="answered")
    words = [m for m in messages if m.role == MessageRole.USER][-1].content.rstrip("?").split()
    halves = [" ".join(words[: len(words) // 2 + 1]), " ".join(words[len(words) // 2:])]
    return ChatMessage(role=MessageRole.ASSISTANT, blocks=[ToolCallBlock(
        tool_call_id=uuid.uuid4().hex, tool_name="search", tool_kwargs={"query": halves[done]})])

agent = FunctionAgent(tools=[FunctionTool.from_defaults(fn=search)], llm=MockFunctionCallingLLM(response_generator=plan))

async def ask_all():
    with RetrievalRecorder(id_field="ref_doc_id") as recorder:
        for query_id, text in data.queries.items():
            with question(query_id):
                await agent.run(text)
    return recorder

agent_recorder = await ask_all()
print("searches per question:", set(agent_recorder.calls().values()))
agent_recorder.evaluate(data.qrels, ["recall@10", "ra_nwg@10"], policy="union")""",
    ),
    (
        "md",
        "## 6. From production traces\n\nA pipeline traced with OpenInference's instrumentor needs no recorder: `rm.read_traces` reads its OpenTelemetry spans back (from an exporter, or from OTLP JSON files a collector wrote). Each question's id travels as span metadata. LlamaIndex records each chunk's own id, so the document id goes into the documents' metadata.",
    ),
    (
        "code",
        """from openinference.instrumentation import using_metadata
from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

# the id rides along in the metadata; kept out of the embedded and prompted text
traced_index = VectorStoreIndex.from_documents(
    [Document(text=t, metadata={"doc_id": d}, excluded_embed_metadata_keys=["doc_id"],
              excluded_llm_metadata_keys=["doc_id"]) for d, t in data.corpus.items()])
exporter = InMemorySpanExporter()  # in production: an OTLP exporter to a collector
provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))  # room for deep rankings
provider.add_span_processor(SimpleSpanProcessor(exporter))
LlamaIndexInstrumentor().instrument(tracer_provider=provider)
traced_engine = RetrieverQueryEngine.from_args(traced_index.as_retriever(similarity_top_k=10),
                                               node_postprocessors=[ShortestFirst()])
for query_id, text in data.queries.items():
    with using_metadata({"query_id": query_id}):
        traced_engine.query(text)
LlamaIndexInstrumentor().uninstrument()

traces = rm.read_traces(exporter.get_finished_spans(), id_field="metadata:doc_id")
print(traces)
from_traces = {stage or "retrieve": traces.evaluate(data.qrels, metrics, stage=stage).aggregate
               for stage in (None, "rerank")}
print("the recorder's numbers:", all(from_traces[s] == by_stage[s] for s in from_traces))
from_traces""",
    ),
]

NOTEBOOKS["04_langchain"] = [
    (
        "md",
        "# 04 · LangChain\n\nA callback that scores every retrieval of a chain, `evaluate_retriever` over a dataset, a LangSmith-style evaluator, a reranker as a stage, a `create_agent` agent per user question, and runs read back from LangSmith traces. Offline: an in-memory vector store with a hashing embedding.",
    ),
    (
        "code",
        SETUP
        + '''

import hashlib
import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import InMemoryVectorStore

class HashingEmbeddings(Embeddings):
    """Words hashed into 256 dimensions: deterministic and local (a stand-in for a real model)."""
    def _vec(self, text):
        v = np.zeros(256)
        for w in text.lower().split():
            v[int(hashlib.md5(w.strip(".,?!:").encode()).hexdigest(), 16) % 256] += 1
        return (v / (np.linalg.norm(v) or 1)).tolist()
    def embed_documents(self, texts): return [self._vec(t) for t in texts]
    def embed_query(self, text): return self._vec(text)

data = datasets.demo()
store = InMemoryVectorStore(embedding=HashingEmbeddings())
store.add_documents([Document(page_content=t, metadata={"doc_id": d}) for d, t in data.corpus.items()])
retriever = store.as_retriever(search_kwargs={"k": 5})''',
    ),
    (
        "md",
        "## 1. A callback inside a chain\n\nThe handler pairs retriever start and end events by run id, keeps live per-query metrics, and never raises into the chain.",
    ),
    (
        "code",
        """from langchain_core.runnables import RunnableLambda, RunnableParallel, RunnablePassthrough
from langchain_ragmetrics import RetrievalEvalCallbackHandler

handler = RetrievalEvalCallbackHandler(data, ["hit_rate@1", "ndcg(gains='1:0')@5", "ra_nwg@5"], id_key="doc_id",
                                       relevance_threshold=4)
format_docs = RunnableLambda(lambda docs: "\\n\\n".join(d.page_content for d in docs))
chain = RunnableParallel(context=retriever | format_docs, question=RunnablePassthrough()) | RunnableLambda(
    lambda x: f"(an LLM would answer here from {len(x['context'])} characters of context)")

answer = chain.invoke(data.queries["handbook-vacation"],
                      config={"callbacks": [handler], "metadata": {"query_id": "handbook-vacation"}})
print(answer)
handler.live["handbook-vacation"]""",
    ),
    (
        "code",
        """chain.batch(list(data.queries.values()), config={"callbacks": [handler], "max_concurrency": 8})
handler.evaluate()""",
    ),
    ("md", "## 2. `evaluate_retriever` over the dataset"),
    (
        "code",
        """from langchain_ragmetrics import evaluate_retriever

result = evaluate_retriever(store.as_retriever(search_kwargs={"k": 10}), data,
                            ["hit_rate@5", "recall@10", "ndcg(gains='1:0')@10", "ra_nwg@5"], id_key="doc_id",
                            show_progress=False, relevance_threshold=4)
result.to_pandas().describe().loc[["mean", "min"]]""",
    ),
    (
        "md",
        "## 3. A LangSmith-style evaluator\n\nOne result per metric key; called here offline with `(outputs, reference_outputs)`. The same function works with `langsmith.evaluation.run_evaluator` on `(run, example)`.",
    ),
    (
        "code",
        """from langchain_ragmetrics import langsmith_evaluator

evaluator = langsmith_evaluator(["ndcg(gains='1:0')@5", "mrr"], id_key="doc_id", relevance_threshold=4)
docs = retriever.invoke(data.queries["chat-city"])
evaluator(outputs={"documents": docs}, reference_outputs={"relevant_docs": data.relevant_docs["chat-city"]})""",
    ),
    (
        "md",
        "## 4. A reranker as a stage\n\nA `ContextualCompressionRetriever` (a cross-encoder or any document compressor around a base retriever) records as two stages: the base retriever is the retrieval, the compression a `\"rerank\"` stage whose PROC@k is counted against the retriever's candidates.",
    ),
    (
        "code",
        """from langchain_classic.retrievers import ContextualCompressionRetriever
from langchain_core.documents import BaseDocumentCompressor

class ShortestFirst(BaseDocumentCompressor):
    \"\"\"A toy reranker: the three shortest documents first (a cross-encoder would go here).\"\"\"
    def compress_documents(self, documents, query, callbacks=None):
        return sorted(documents, key=lambda d: len(d.page_content))[:3]

reranking = ContextualCompressionRetriever(base_compressor=ShortestFirst(),
                                          base_retriever=store.as_retriever(search_kwargs={"k": 10}))
staged = RetrievalEvalCallbackHandler(data, ["pct_proc@3", "ra_nwg@3"], id_key="doc_id")
reranking.batch(list(data.queries.values()), config={"callbacks": [staged]})
{stage or "retrieve": staged.evaluate(stage=stage).aggregate for stage in (None, "rerank")}""",
    ),
    (
        "md",
        "## 5. An agent, per user question\n\n`create_agent` with a retriever tool: the agent searches with its own rewrites, twice per question here (a scripted chat model stands in for a real one). The question's id in the call's metadata reaches every search; `policy=\"union\"` joins them and `calls()` counts them.",
    ),
    (
        "code",
        """import uuid
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

class Scripted(BaseChatModel):
    \"\"\"Two searches (the question's halves), then an answer.\"\"\"
    @property
    def _llm_type(self): return "scripted"
    def bind_tools(self, tools, **kwargs): return self
    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        if any(isinstance(m, ToolMessage) for m in messages):
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content="answered"))])
        words = [m for m in messages if isinstance(m, HumanMessage)][-1].text.rstrip("?").split()
        halves = [" ".join(words[: len(words) // 2 + 1]), " ".join(words[len(words) // 2:])]
        calls = [{"name": "search", "args": {"query": h}, "id": uuid.uuid4().hex, "type": "tool_call"} for h in halves]
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="", tool_calls=calls))])

@tool
def search(query: str) -> str:
    \"\"\"Search the knowledge base.\"\"\"
    return "\\n\\n".join(d.page_content for d in retriever.invoke(query))

agent = create_agent(Scripted(), tools=[search])
agent_handler = RetrievalEvalCallbackHandler(data, ["recall@10", "ra_nwg@10"], id_key="doc_id")
for query_id, text in data.queries.items():
    agent.invoke({"messages": [{"role": "user", "content": text}]},
                 config={"callbacks": [agent_handler], "metadata": {"query_id": query_id}})
print("searches per question:", set(agent_handler.calls().values()))
agent_handler.evaluate(policy="union")""",
    ),
    (
        "md",
        "## 6. From production traces\n\nRuns already traced need no handler: `rm.read_traces` reads the retriever runs back from LangSmith (`Client.list_runs`, a JSON-lines export, or `collect_runs()` as here) or from the OpenTelemetry spans of OpenInference's LangChain instrumentor. LangChain's documents carry their ids in metadata, so the key is named.",
    ),
    (
        "code",
        """from langchain_core.tracers.context import collect_runs

with collect_runs() as collected:
    for query_id, text in data.queries.items():
        reranking.invoke(text, config={"metadata": {"query_id": query_id}})
traces = rm.read_traces(collected.traced_runs, id_field="metadata:doc_id")
print(traces)
{stage or "retrieve": traces.evaluate(data.qrels, ["pct_proc@3", "ra_nwg@3"], stage=stage).aggregate
 for stage in (None, "rerank")}""",
    ),
]

NOTEBOOKS["05_chunk_matching"] = [
    (
        "md",
        "# 05 · Chunks of different sizes, judged against the same originals\n\nGround truth names original documents (a session, a page); retrievers return chunks. Mapping every chunk back to its originals lets chunkings of any size be scored against the same judgments.",
    ),
    (
        "code",
        SETUP
        + """
from ragmetrics.matching import ChunkMatcher, MatchRules, is_chunk_from_original

data = datasets.demo()
print(data.corpus["session-03"][:300])""",
    ),
    (
        "md",
        "## The matching rules\n\nA leading `Date:` line is dropped, a `user:`/`assistant:` prefix is removed, and the rest must occur in the original, raw or JSON-escaped. An empty remainder matches nothing.",
    ),
    (
        "code",
        """original = data.corpus["session-03"]
first_turn = original.split("\\n")[1]
checks = {
    "date + turn": f"Date: whenever\\n{first_turn}",
    "turn without role": first_turn.split(": ", 1)[1],
    "date only": "Date: 1 May 2024",
    "not in it": "user: something nobody said",
}
{name: is_chunk_from_original(chunk, original) for name, chunk in checks.items()}""",
    ),
    ("md", "## Two chunkings, one set of judgments"),
    (
        "code",
        """from langchain_text_splitters import RecursiveCharacterTextSplitter
from rank_bm25 import BM25Okapi

def tokens(text):
    return "".join(c.lower() if c.isalnum() else " " for c in text).split()

def chunk_run(size):
    splitter = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=0)
    chunks = [c for text in data.corpus.values() for c in splitter.split_text(text)]
    bm25 = BM25Okapi([tokens(c) for c in chunks])
    ranked = {}
    for q, question in data.queries.items():
        scores = bm25.get_scores(tokens(question))
        ranked[q] = [chunks[i] for i in sorted(range(len(chunks)), key=lambda i: -scores[i])[:15]]
    return len(chunks), ranked

import warnings

matcher = ChunkMatcher(data.corpus)  # ambiguous="unjudged": a chunk found in several originals credits none
runs = {}
for size in (200, 800):
    n_chunks, chunk_texts = chunk_run(size)
    with warnings.catch_warnings():  # counted and printed below instead
        warnings.simplefilter("ignore", rm.AmbiguousChunkWarning)
        matched = matcher.match_run(chunk_texts, name=f"{size} chars")
    runs[f"{size} chars"] = matched.run
    print(f"{size:>4} chars: {n_chunks} chunks; of the retrieved ones {matched.n_unmatched} matched "
          f"no original and {matched.n_ambiguous} matched several")
runs["200 chars"]["chat-dog"][:5]""",
    ),
    (
        "md",
        "A short chunk such as a generic assistant turn can occur word for word in several sessions. Such a chunk takes one place in the ranking, as an unjudged doc (`ambiguous:<rank>`), so that `@5` still means the first five chunks retrieved and no run is credited for a guess. `ChunkMatcher(..., ambiguous=\"first\")` gives its place to the first of its originals not ranked yet; `\"all\"` ranks every original it matched.",
    ),
    (
        "code",
        """comparison = rm.compare(data.qrels, runs, ["recall@5", "ndcg@10", "ra_nwg@5", "harm@5"],
                        baseline="800 chars", relevance_threshold=4)
comparison""",
    ),
    (
        "md",
        "## Speed\n\n`ChunkMatcher` indexes the words of the originals and only verifies a chunk against the few originals that hold its rarest words, so it gives the pairwise test's answers without the all-pairs scan (`benchmarks/bench_matching.py` measures it on LoCoMo).",
    ),
    (
        "code",
        """import time
_, chunk_texts = chunk_run(200)
all_chunks = [c for texts in chunk_texts.values() for c in texts]
t = time.perf_counter(); fast = [matcher.match(c) for c in all_chunks]; fast_s = time.perf_counter() - t
t = time.perf_counter()
slow = [{d for d, o in data.corpus.items() if is_chunk_from_original(c, o)} for c in all_chunks]
slow_s = time.perf_counter() - t
print(f"{len(all_chunks)} chunks: same answers {fast == slow}; pairwise {slow_s*1e3:.0f} ms, matcher {fast_s*1e3:.0f} ms")""",
    ),
]


NOTEBOOKS["06_golden_sets"] = [
    (
        "md",
        "# 06 · Golden sets from your own LLM\n\nNo qrels? `ragmetrics.goldset` pools what your runs retrieve, asks your model to grade each (question, passage) pair 1..5, keeps every answer in a cache, and audits the labels. Here a deterministic function stands in for the model, so the notebook runs offline; the last cells plug in a real LangChain chat model.",
    ),
    ("code", SETUP + "\nfrom ragmetrics import goldset"),
    (
        "md",
        "## Two runs to label\n\nThe demo's questions and originals, ranked two ways: by shared words, and by shared words among short originals.",
    ),
    (
        "code",
        """data = datasets.demo()

def overlap(question, text):
    return len(set(question.lower().split()) & set(text.lower().split()))

by_words = rm.Run.from_dict(
    {q: {d: overlap(t, body) for d, body in data.corpus.items()} for q, t in data.queries.items()},
    name="words").truncate(10)
by_short = rm.Run.from_dict(
    {q: {d: overlap(t, body) / len(body) ** 0.5 for d, body in data.corpus.items()} for q, t in data.queries.items()},
    name="short").truncate(10)
pairs = goldset.pool([by_words, by_short], depth=5)
pairs""",
    ),
    (
        "md",
        "## The judge\n\nAny function from prompt to answer is a judge, given the `model_id` that keys the cache. This one grades by the share of the question's words that the passage holds: crude, but it answers like a model would, and the same way every time.",
    ),
    (
        "code",
        """import re

def word_judge(prompt):
    question = prompt.split("Question:")[1].split("Passage:")[0]
    passage = prompt.split("Passage:")[1].split("Grades:")[0]
    words = {w for w in re.findall(r"[a-z']+", question.lower()) if len(w) > 3}
    found = sum(w in passage.lower() for w in words) / max(len(words), 1)
    return str(1 + round(4 * found))

print(goldset.estimate(pairs, data, word_judge, model_id="word-judge-1", cache=None))""",
    ),
    (
        "md",
        "## Grade, with a cache\n\nEvery answer is committed to SQLite as it arrives; a second run pays nothing.",
    ),
    (
        "code",
        """import tempfile, os
cache = os.path.join(tempfile.mkdtemp(), "gold.sqlite")
gold = goldset.grade(pairs, data, word_judge, model_id="word-judge-1", cache=cache, progress=False)
again = goldset.grade(pairs, data, word_judge, model_id="word-judge-1", cache=cache, progress=False)
print(gold)
print(again)""",
    ),
    (
        "md",
        "## Audit against the demo's own grades\n\nOn the pairs both labelings grade: weighted kappa, Krippendorff's alpha, the confusion matrix, each labeling's grade prevalence, and how both rank the two runs by RA-nWG@5.",
    ),
    (
        "code",
        """from IPython.display import Markdown
found = goldset.audit(gold, data.qrels, runs={"words": by_words, "short": by_short}, k=5, dataset=data)
Markdown(found.to_markdown())""",
    ),
    (
        "md",
        "This crude judge agrees only weakly with the demo's grades, and it almost never gives a 5 where the demo's grades often do (compare the prevalence rows): its RA-nWG values are not the demo's. It does order the two runs as the demo's grades do, which is what a comparison needs. Audit a sample of your own model's grades (`goldset.export_sample`) before you trust them.",
    ),
    (
        "md",
        "## Evaluate with the frozen labels\n\nRA-nWG's weights depend on each query's judged pool, so grade the union of the runs once and evaluate every run against those same labels.",
    ),
    (
        "code",
        """rm.compare(gold.qrels, {"words": by_words, "short": by_short}, ["ra_nwg@5", "n_recall_4plus@5", "harm@5"], missing="skip")""",
    ),
    (
        "md",
        "## Intervals that stay valid on LLM labels\n\nThe intervals above treat the judge's labels as the truth; this judge is biased, so they are centred on the wrong values. Give `compare` people's grades for a random sample of the questions (`human_qrels=`; in practice the filled-in `export_sample` file, read with `goldset.read_sample`). Here the demo's own grades of 30 random questions stand in for the people. Prediction-powered inference corrects the judge's mean over every question by its error on the sample: the PPI interval holds whatever the judge's bias, where the naive one does not, and it is narrower than the people's sample alone when the judge agrees well.",
    ),
    (
        "code",
        """import random
import pandas as pd
from ragmetrics.analysis.ppi import ppi_rows

sample = random.Random(0).sample(sorted(gold.qrels.query_ids), 30)
people = {q: data.relevant_docs[q] for q in sample}
checked = rm.compare(gold.qrels, {"words": by_words, "short": by_short}, ["ra_nwg@5", "n_recall_4plus@5"],
                     baseline="words", human_qrels=people, missing="skip")
headers, rows = ppi_rows(checked.ppi)
pd.DataFrame(rows, columns=headers)""",
    ),
    (
        "md",
        "The naive intervals sit far from the people's values: the judge is generous. The PPI estimates move to where the people's grades put them. This crude judge agrees poorly, so its PPI intervals are no narrower than the people's sample alone (the correction pays for the judge's errors); with a judge that agrees well they are narrower, which the test suite checks by simulation. `n LLM` and `n people` count the questions where each metric is defined.",
    ),
    (
        "md",
        "Save the labels with their provenance. `ragmetrics report` (or `write_report`) made with the saved file adds this line to its settings, so a reader knows which labels the numbers rest on.",
    ),
    (
        "code",
        """path = os.path.join(tempfile.mkdtemp(), "gold-qrels.txt")
gold.save(path)
print(goldset.labels_of(path))""",
    ),
    (
        "md",
        "## A real model\n\n`as_judge` turns a LangChain chat model (or, from the LlamaIndex integration, an LLM) into a judge. A model that can call tools answers through structured output (one `grade` call), read as strictly as text. With a provider it would be `as_judge(ChatOpenAI(model=..., temperature=0))`; here LangChain's own offline fake model answers from a list, the first answer unusable, so the judge asks again.",
    ),
    (
        "code",
        """from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_ragmetrics import as_judge

model = FakeListChatModel(responses=["It depends.", "4", "2"])
three = goldset.grade(list(pairs)[:2], data, as_judge(model, model_id="fake-list"), cache=None,
                      limits=goldset.Limits(concurrency=1))
print(three, dict(three.qrels.to_dict()), three.usage.reasks)""",
    ),
]


NOTEBOOKS["07_nuggets_and_utility"] = [
    (
        "md",
        "# 07 · Nuggets, sufficiency, utility labels and intervals worth paying for\n\nTREC RAG judges answers by *nuggets*, the facts a good answer needs; eRAG labels a passage by whether the generator answers from it alone; prediction-powered intervals turn a few dozen human labels into a trustworthy interval. This notebook does all three on the demo set, with a deterministic stand-in for the LLM, so it runs offline.",
    ),
    (
        "code",
        SETUP
        + '''
import re
from ragmetrics import goldset

data = datasets.demo()

STOP = {"what", "whic", "does", "did", "the", "for", "her", "his", "and", "how", "many", "who", "when", "wher", "maya"}

def words(text):  # the first four letters of each word: "named" meets "name"
    return {w.removesuffix("'s")[:4] for w in re.findall(r"[a-z']+", text.lower()) if len(w) > 2} - STOP

def overlap(question, text):
    return len(words(question) & words(text))

by_words = rm.Run.from_dict(
    {q: {d: overlap(t, body) for d, body in data.corpus.items()} for q, t in data.queries.items()},
    name="words").truncate(10)
by_short = rm.Run.from_dict(
    {q: {d: overlap(t, body) / len(body) ** 0.5 for d, body in data.corpus.items()} for q, t in data.queries.items()},
    name="short").truncate(10)''',
    ),
    (
        "md",
        "## 1. Nuggets from an LLM\n\n`make_nuggets` asks the model for the facts of a complete answer, from each question's best-graded passages; `support_nuggets` then asks, fact by fact and passage by passage, whether the passage states the fact. The stand-in model lists the sentences of the material that share the most words with the question, and says a passage states a fact when it holds the fact's words.",
    ),
    (
        "code",
        '''def sentences(material):
    """The material's statements: each user turn, each sentence of a page."""
    found = []
    for line in material.splitlines():
        line = re.sub(r"^\\[\\d+\\] ", "", line).strip()
        if line.startswith("user: "):
            found.append(line[6:])
        elif line and not line.startswith(("assistant:", "Date:")):
            found += [p.strip() for p in re.split(r"(?<=\\.) ", line) if len(p) > 20]
    return found

def stand_in(prompt):
    if "must contain" in prompt:  # the listing prompt: the two statements closest to the question
        question = prompt.split("Question:\\n")[1].split("\\n")[0]
        material = prompt.split("reference answers):\\n")[1].split("\\n\\nWrite each fact")[0]
        ranked = sorted(sentences(material), key=lambda l: -overlap(question, l))[:2]
        return "\\n".join(f"{'vital' if i == 0 else 'okay'}: {l}" for i, l in enumerate(ranked))
    fact = prompt.split("Fact: ")[1].split("\\n")[0]
    passage = prompt.split("Passage:\\n")[1]
    return "yes" if fact.lower() in passage.lower() else "no"

made = goldset.make_nuggets(data, stand_in, min_grade=5, model_id="stand-in-1", cache=None)
pairs = goldset.pool([by_words, by_short], depth=10)
nuggets = goldset.support_nuggets(made, pairs, data.corpus, stand_in, questions=data.queries,
                                  model_id="stand-in-1", cache=None, progress=False).nuggets
print(nuggets)
{n: (x.vital, x.text, x.support) for n, x in nuggets["chat-dog"].items()}''',
    ),
    (
        "md",
        "## 2. Nugget recall and sufficiency of two retrievers\n\n`sufficiency@k` is 1 when every vital fact has a supporting passage in the top k: could a reader answer from this context at all? `sufficient_k` is the smallest such k. Questions without nuggets (no answer in the originals) are NA, counted, never 0.",
    ),
    (
        "code",
        '''metrics = ["nugget_recall@5", "vital_recall@5", "weighted_nugget_recall@5", "sufficiency@5", "sufficient_k"]
comparison = rm.compare(data.qrels, {"words": by_words, "short": by_short}, metrics,
                        nuggets=nuggets, n_permutations=2000)
comparison''',
    ),
    (
        "md",
        "## 3. Utility labels (eRAG)\n\nGive each top-5 passage to the generator alone and keep whether its answer matches the reference. The stand-in generator answers with the passage's sentence closest to the question; the references are the decisive turns. Recall over these labels says how often the context holds a passage the generator can answer from.",
    ),
    (
        "code",
        '''def generator(question, passage):
    lines = [l.split(": ", 1)[-1] for l in passage.splitlines()[1:]]
    return max(lines, key=lambda l: overlap(question, l)) if lines else ""

references = {q: [x.text for x in of.values() if x.vital] for q, of in nuggets.items()}
utility = {}
for name, run in {"words": by_words, "short": by_short}.items():
    answered = rm.Run.from_lists({q: list(run[q]) for q in references})  # questions with an answer
    labels = goldset.utility_qrels(data.queries, answered, data.corpus, answer=generator,
                                   references=references, k=5, model_id="generator-1",
                                   cache=None, progress=False)
    utility[name] = rm.evaluate(labels.qrels, answered, ["recall@5", "hit_rate@5"]).aggregate
utility''',
    ),
    (
        "md",
        "## 4. An interval from a few dozen human labels\n\nThe LLM's grades cover every question; people grade a random sample (24 questions here; the demo's own grades stand in for them). The power-tuned (PPI++) interval weights the LLM's labels by how well they track the people's: the word judge tracks them so poorly that it gets no weight, and its interval is the people's own, where its naive interval is far off; a judge that mostly agrees gets some weight and a narrower interval. Never wider than the people's alone. `ppi_plan` then says, from this pilot, how many human-labelled questions an interval 0.25 wide would need.",
    ),
    (
        "code",
        '''import random
import pandas as pd
from ragmetrics.analysis.ppi import ppi_evaluate, ppi_plan

def word_judge(prompt):
    question = prompt.split("Question:")[1].split("Passage:")[0]
    passage = prompt.split("Passage:")[1].split("Grades:")[0]
    found = sum(w in passage.lower() for w in words(question)) / max(len(words(question)), 1)
    return str(1 + round(4 * found))

weak = goldset.grade(pairs, data, word_judge, model_id="word-judge-1", cache=None, progress=False).qrels
rng = random.Random(2)  # a judge that gives the people's grade 4 times in 5, one lower otherwise
good = {q: {d: g if rng.random() < 0.8 else max(1, g - 1) for d, g in data.relevant_docs[q].items()}
        for q in weak.query_ids}
sample = random.Random(1).sample(sorted(weak.query_ids), 24)
people = {q: data.relevant_docs[q] for q in sample}
rows = []
for name, llm in (("word judge", weak), ("good judge", good)):
    (estimate,) = ppi_evaluate(llm, people, by_words, ["ra_nwg@5"], missing="skip")
    rows.append({"judge": name, "weight of its labels": round(estimate.tuning, 3),
                 "PPI++": f"{estimate.estimate:.3f} [{estimate.low:.3f}, {estimate.high:.3f}]",
                 "naive": f"{estimate.naive:.3f} [{estimate.naive_low:.3f}, {estimate.naive_high:.3f}]",
                 "people only": f"{estimate.human_only:.3f} [{estimate.human_low:.3f}, {estimate.human_high:.3f}]"})
pd.DataFrame(rows)''',
    ),
    (
        "code",
        '''on_llm = rm.evaluate(good, by_words, ["ra_nwg@5"]).per_query
on_people = rm.evaluate(people, by_words, ["ra_nwg@5"]).per_query
both = [q for q in sample if on_llm[q]["ra_nwg@5"] is not None and on_people[q]["ra_nwg@5"] is not None]
every = [v["ra_nwg@5"] for v in on_llm.values() if v["ra_nwg@5"] is not None]
plan = ppi_plan(every, [on_llm[q]["ra_nwg@5"] for q in both], [on_people[q]["ra_nwg@5"] for q in both], width=0.25)
plan''',
    ),
]


def build(name: str, cells: list[tuple[str, str]]) -> Path:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    notebook.cells = [
        nbformat.v4.new_markdown_cell(src, id=f"cell-{i:02d}")
        if kind == "md"
        else nbformat.v4.new_code_cell(src, id=f"cell-{i:02d}")
        for i, (kind, src) in enumerate(cells)
    ]  # stable ids: a rebuild changes only what changed
    NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}
    ).execute()
    path = HERE / f"{name}.ipynb"
    nbformat.write(notebook, path)
    return path


if __name__ == "__main__":
    wanted = sys.argv[1:]
    for name, cells in NOTEBOOKS.items():
        if not wanted or any(name.startswith(w) for w in wanted):
            print("built", build(name, cells))
