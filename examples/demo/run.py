"""``make demo``: does chunk size change retrieval for RAG, and where?

1. Writes the demo evaluation set (``ragmetrics.datasets.demo``): 47 originals, 33 questions,
   every original graded 1..5 for every question; the evidence is uneven (one decisive
   passage among many partial ones, many confirmations, the answer said several times, or
   no answer at all).
2. Chunks the originals two ways with LlamaIndex's ``SentenceSplitter`` and LangChain's
   ``RecursiveCharacterTextSplitter`` (small and large chunks), and retrieves the top 20
   chunks per question with BM25 (LlamaIndex's ``BM25Retriever``; ``rank_bm25`` behind a
   LangChain ``BaseRetriever``). No network, no model download.
3. Maps every chunk back to the originals it came from (``ChunkMatcher``), so that all four
   configurations are scored against the same ground truth.
4. Adds a reference without chunking or BM25 (whole originals ranked by shared words),
   compares all five on classic and RAG set metrics with paired randomization tests, says
   in plain words which differences are significant, and writes ``demo-output/report.html``.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from pathlib import Path

import ragmetrics as rm
from ragmetrics.datasets import write_demo
from ragmetrics.matching import ChunkMatcher, MatchRules

OUTPUT = Path(
    os.environ.get("RAGMETRICS_DEMO_OUTPUT", Path(__file__).resolve().parents[2] / "demo-output")
)
DEPTH = 20
NDCG = "ndcg(gains='1:0')@10"  # on the 1..5 scale, "not relevant" (1) earns no gain
METRICS = [
    NDCG,
    "recall@10",
    "mrr@10",
    "ra_nwg@5",
    "proc@5",
    "pct_proc@5",
    "n_recall_4plus@5",
    "harm@5",
    "nugget_recall@5",  # each answered question's answer, stated by its originals graded 4-5
]
# classic metrics count grades 4 and 5 (answering or confirming) as relevant
OPTIONS = {"relevance_threshold": 4}


def llamaindex_chunks(corpus: dict[str, str], chunk_size: int) -> dict[str, list[str]]:
    """Top-DEPTH chunk texts per question: SentenceSplitter + LlamaIndex BM25Retriever."""
    from llama_index.core import Document
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.retrievers.bm25 import BM25Retriever

    splitter = SentenceSplitter(chunk_size=chunk_size, chunk_overlap=0)
    nodes = splitter.get_nodes_from_documents([Document(text=t, id_=d) for d, t in corpus.items()])
    retriever = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=DEPTH)
    return {"nodes": len(nodes), "retriever": retriever}  # type: ignore[return-value]


def langchain_chunks(corpus: dict[str, str], chunk_size: int) -> dict[str, object]:
    """RecursiveCharacterTextSplitter + a rank_bm25 retriever behind LangChain's interface."""
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from langchain_text_splitters import RecursiveCharacterTextSplitter
    from rank_bm25 import BM25Okapi

    splitter = RecursiveCharacterTextSplitter(chunk_size=chunk_size, chunk_overlap=0)
    chunks = splitter.split_documents(
        [Document(page_content=t, metadata={"doc": d}) for d, t in corpus.items()]
    )

    def tokens(text: str) -> list[str]:
        return "".join(c.lower() if c.isalnum() else " " for c in text).split()

    class BM25(BaseRetriever):
        def _get_relevant_documents(
            self, query: str, *, run_manager: CallbackManagerForRetrieverRun
        ) -> list[Document]:
            scores = index.get_scores(tokens(query))
            best = sorted(range(len(chunks)), key=lambda i: (-scores[i], i))[:DEPTH]
            return [chunks[i] for i in best]

    index = BM25Okapi([tokens(c.page_content) for c in chunks])
    return {"nodes": len(chunks), "retriever": BM25()}


def word_overlap(corpus: dict[str, str], queries: dict[str, str]) -> rm.Run:
    """A reference without chunking or BM25: whole originals ranked by the words they share
    with the question (top DEPTH)."""

    def words(text: str) -> set[str]:
        return set("".join(c.lower() if c.isalnum() else " " for c in text).split())

    scores = {
        q: {d: len(words(t) & words(body)) for d, body in corpus.items()}
        for q, t in queries.items()
    }
    return rm.Run.from_dict(scores, name="overlap/whole").truncate(DEPTH)


def retrieve(
    setup: dict[str, object], queries: dict[str, str], framework: str
) -> dict[str, list[str]]:
    retriever = setup["retriever"]
    if framework == "llamaindex":
        return {q: [n.get_content() for n in retriever.retrieve(t)] for q, t in queries.items()}  # type: ignore[attr-defined]
    return {q: [d.page_content for d in retriever.invoke(t)] for q, t in queries.items()}  # type: ignore[attr-defined]


def write_trec_files(qrels: rm.Qrels, runs: dict[str, rm.Run]) -> Path:
    """The qrels and each run as TREC files (``demo-output/qrels.txt``, ``runs/*.txt``), for
    the command lines of the README."""
    folder = OUTPUT / "runs"
    folder.mkdir(parents=True, exist_ok=True)
    qrels.to_trec(OUTPUT / "qrels.txt")
    for name, run in runs.items():
        run.to_trec(folder / f"{name.replace('/', '-')}.txt", tag=name.replace("/", "-"))
    return OUTPUT


def main() -> None:
    started = time.perf_counter()
    path = write_demo(OUTPUT / "data")
    dataset = rm.RetrievalDataset.from_json(path)
    print(
        f"evaluation set: {len(dataset.queries)} questions, {len(dataset.corpus)} originals -> {path}"
    )
    # SentenceSplitter joins sentences with single spaces: compare texts with whitespace folded
    matcher = ChunkMatcher(dataset.corpus, rules=MatchRules(normalize_whitespace=True))
    configs = {
        "llamaindex/64tok": ("llamaindex", 64),
        "llamaindex/256tok": ("llamaindex", 256),
        "langchain/250ch": ("langchain", 250),
        "langchain/1000ch": ("langchain", 1000),
    }
    runs: dict[str, rm.Run] = {}
    print(f"\n{'configuration':<20} {'chunks':>6} {'unmatched':>10} {'ambiguous':>10}")
    for name, (framework, size) in configs.items():
        setup = (
            llamaindex_chunks(dataset.corpus, size)
            if framework == "llamaindex"
            else langchain_chunks(dataset.corpus, size)
        )
        with warnings.catch_warnings():  # the table below says how many, and the note why
            warnings.simplefilter("ignore", rm.AmbiguousChunkWarning)
            matched = matcher.match_run(retrieve(setup, dataset.queries, framework), name=name)
        runs[name] = matched.run
        print(f"{name:<20} {setup['nodes']:>6} {matched.n_unmatched:>10} {matched.n_ambiguous:>10}")
    runs["overlap/whole"] = word_overlap(dataset.corpus, dataset.queries)
    print(f"{'overlap/whole':<20} {len(dataset.corpus):>6} {'-':>10} {'-':>10}")
    print(
        "(ambiguous: retrieved chunks whose text is in more than one original, such as a "
        "generic assistant turn; each keeps its place as an unjudged doc, so no run is "
        "credited for a guess.)"
    )
    files = write_trec_files(dataset.qrels, runs)
    nuggets = rm.Nuggets.from_json(path.parent / "nuggets.json")
    comparison = rm.compare(
        dataset.qrels,
        runs,
        METRICS,
        baseline="llamaindex/256tok",
        correction="holm",
        nuggets=nuggets,
        **OPTIONS,
    )
    print(
        "\nGrades 1..5 (5 decisive, 4 highly relevant, 3 partial, 2 weak, 1 not relevant). "
        "The classic metrics count grades 4 and 5 as relevant (relevance threshold 4); the "
        "RAG set metrics read the grades as they are."
    )
    print("\n" + comparison.to_table())
    print("\n" + comparison.verdict())
    say_what_is_missing(dataset, runs)
    report = rm.write_report(
        comparison,
        OUTPUT / "report.html",
        qrels=dataset.qrels,
        runs=runs,
        title="Chunk size and retrieval for RAG (ragmetrics demo)",
        dataset=dataset,  # questions and originals' texts in the per-query explorer
        nuggets=nuggets,
        **OPTIONS,
    )
    print(f"\nreport: {report}")
    print(f"TREC files for the command line: {files}")
    print(
        f"  try: {command_line()} trec_eval -l 4 demo-output/qrels.txt demo-output/runs/"
        "llamaindex-256tok.txt"
    )
    print(f"done in {time.perf_counter() - started:.1f} s")


def say_what_is_missing(dataset: rm.RetrievalDataset, runs: dict[str, rm.Run]) -> None:
    """Name the questions without an answer (NA for the set metrics) and how much of each
    top 5 nobody graded (only chunks that match more than one original)."""
    unanswered = sorted(q for q, docs in dataset.relevant_docs.items() if max(docs.values()) < 4)
    answered = len(dataset.queries) - len(unanswered)
    print(
        f"\n{len(unanswered)} questions have no answer in the originals ({', '.join(unanswered)}):"
        f" RA-nWG, PROC, n_recall and nugget recall are NA there and average over the other {answered}. The "
        "classic metrics keep them, as trec_eval does: recall and MRR are 0 in every "
        "configuration; nDCG credits the weak passages (grade 2) a configuration finds."
    )
    share = ", ".join(
        f"{name} {rm.evaluate(dataset.qrels, run, ['unjudged@5']).aggregate['unjudged@5']:.1%}"
        for name, run in runs.items()
    )
    print(f"Unjudged docs in the top 5 (ambiguous chunks; every original is graded): {share}.")


def command_line() -> str:
    """How to call the command line from here: the script of the environment running the
    demo (``.venv/bin/ragmetrics`` after ``make demo``), which works without activating it."""
    script = Path(sys.executable).parent / "ragmetrics"
    if not script.exists():
        return "ragmetrics"
    try:
        return str(script.relative_to(Path.cwd()))
    except ValueError:
        return str(script)


if __name__ == "__main__":
    main()
