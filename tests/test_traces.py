"""Runs read from production traces (``rm.read_traces``), on traces written here in each
shape the reader takes: OTLP JSON (hex ids and protobuf's base64 ids), the SDK's span JSON,
LangSmith runs. The integrations' suites read traces that the real OpenInference
instrumentors and LangChain's tracer wrote of real pipelines; these tests hold the reader's
rules (keying, stages, failures, refusals) on inputs small enough to read."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import ragmetrics as rm
from ragmetrics.errors import InputFormatError, InvalidParameterError, TraceKeyWarning

TRACE = "5b8efff798038103d269b633813fc60c"


def _attrs(values: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for key, value in values.items():
        if isinstance(value, bool):
            typed = {"boolValue": value}
        elif isinstance(value, int):
            typed = {"intValue": str(value)}
        elif isinstance(value, float):
            typed = {"doubleValue": value}
        else:
            typed = {"stringValue": value}
        out.append({"key": key, "value": typed})
    return out


def _span(
    span_id: str,
    name: str,
    kind: str,
    attributes: dict[str, Any],
    parent: str | None = None,
    trace: str = TRACE,
    start: int = 1_000_000_000,
    end: int = 1_250_000_000,
    **extra: Any,
) -> dict[str, Any]:
    span = {
        "traceId": trace,
        "spanId": span_id,
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(end),
        "attributes": _attrs({"openinference.span.kind": kind, **attributes}),
        "status": {},
        **extra,
    }
    if parent:
        span["parentSpanId"] = parent
    return span


def _docs(ids: list[str], prefix: str = "retrieval.documents") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, doc in enumerate(ids):
        out[f"{prefix}.{i}.document.id"] = doc
        out[f"{prefix}.{i}.document.score"] = 1.0 - i / 10
        out[f"{prefix}.{i}.document.metadata"] = json.dumps({"doc_key": doc.upper()})
    return out


def _export(*spans: dict[str, Any]) -> dict[str, Any]:
    return {
        "resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": list(spans)}]}]
    }


def _engine_trace(
    trace: str, question: str, retrieved: list[str], reranked: list[str] | None = None, **meta: Any
) -> dict[str, Any]:
    """A query engine's trace: root (the question), its retriever with an inner
    ``_retrieve`` span (no documents, as LlamaIndex's), a reranker when given."""
    metadata = {"metadata": json.dumps(meta)} if meta else {}
    root = trace[:16]
    spans = [
        _span(
            root,
            "RetrieverQueryEngine.query",
            "CHAIN",
            {"input.value": question, **metadata},
            trace=trace,
            end=3_000_000_000,
        ),
        _span(
            "a" + trace[1:16],
            "VectorIndexRetriever.retrieve",
            "RETRIEVER",
            {"input.value": question, **_docs(retrieved), **metadata},
            root,
            trace,
        ),
        _span(
            "b" + trace[1:16],
            "VectorIndexRetriever._retrieve",
            "RETRIEVER",
            {"input.value": json.dumps({"query_bundle": {"query_str": question}})},
            "a" + trace[1:16],
            trace,
        ),
    ]
    if reranked is not None:
        spans.append(
            _span(
                "c" + trace[1:16],
                "ReverseRerank._postprocess_nodes",
                "RERANKER",
                {"reranker.query": question, **_docs(reranked, "reranker.output_documents")},
                root,
                trace,
                start=1_300_000_000,
                end=1_400_000_000,
            )
        )
    return _export(*spans)


def _write_lines(path: Path, items: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(item) + "\n" for item in items))
    return path


def _two_questions(tmp_path: Path) -> Path:
    return _write_lines(
        tmp_path / "traces.jsonl",
        [
            _engine_trace("1" * 32, "who lives in Lyon?", ["d1", "d2", "d3"], ["d3", "d2"]),
            _engine_trace("2" * 32, "who eats rice?", ["d4", "d1"], ["d1"]),
        ],
    )


def test_an_otlp_file_gives_one_retrieval_and_one_rerank_per_question(tmp_path: Path) -> None:
    traces = rm.read_traces(_two_questions(tmp_path), query_ids={"who lives in Lyon?": "q1"})
    assert traces.summary == {
        "traces": 2,
        "spans": 8,
        "retrievals": 2,
        "reranks": 2,
        "failed": 0,
        "other spans": 4,
    }
    # the inner _retrieve span (no documents) is not a retrieval of its own
    assert traces.run.to_dict() == {
        "q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0},
        "who eats rice?": {"d4": 2.0, "d1": 1.0},
    }
    assert traces.run_of("rerank").to_dict()["q1"] == {"d3": 2.0, "d2": 1.0}
    assert traces.stage_names()[:2] == ["VectorIndexRetriever", "VectorIndexRetriever.retrieve"]
    assert traces.latencies() == {"q1": 0.25, "who eats rice?": 0.25}
    record = traces.records_of("VectorIndexRetriever")[0]
    assert record.scores == (1.0, 0.9, 0.8) and record.texts == ()


def test_the_rerank_stage_is_scored_against_the_retrieval_as_its_pool(tmp_path: Path) -> None:
    traces = rm.read_traces(_two_questions(tmp_path), query_ids={"who lives in Lyon?": "q1"})
    qrels = {"q1": {"d1": 5, "d3": 3}}
    retrieved = traces.evaluate(qrels, ["proc@2", "recall@3"])
    reranked = traces.evaluate(qrels, ["proc@2", "recall@3"], stage="rerank")
    # the retriever found both judged docs; the reranker kept one of them
    assert retrieved.per_query["q1"]["recall@3"] == 1.0
    assert reranked.per_query["q1"]["recall@3"] == 0.5
    expected = rm.evaluate(
        qrels, {"q1": ["d3", "d2"]}, ["proc@2"], pool=rm.Run.from_lists({"q1": ["d1", "d2", "d3"]})
    )
    assert reranked.per_query["q1"]["proc@2"] == expected.per_query["q1"]["proc@2"]
    assert reranked.counts.missing_from_run == 0 and retrieved.settings["policy"] == "latest"


def test_metadata_keys_a_retrieval_before_its_question(tmp_path: Path) -> None:
    path = _write_lines(
        tmp_path / "t.jsonl",
        [_engine_trace("3" * 32, "who lives in Lyon?", ["d1"], query_id="q9")],
    )
    assert list(rm.read_traces(path).run) == ["q9"]
    assert list(rm.read_traces(path, query_key="other").run) == ["who lives in Lyon?"]


def test_an_agents_searches_are_keyed_to_the_root_question_and_joined_by_union(
    tmp_path: Path,
) -> None:
    root = _span(
        "r" * 16,
        "Agent.run",
        "AGENT",
        {"input.value": json.dumps({"input": "Q?"})},
        end=9_000_000_000,
    )
    tool1 = _span("t1".ljust(16, "0"), "FunctionTool.acall", "TOOL", {}, "r" * 16)
    tool2 = _span("t2".ljust(16, "0"), "FunctionTool.acall", "TOOL", {}, "r" * 16)
    first = _span(
        "s1".ljust(16, "0"),
        "VectorIndexRetriever.retrieve",
        "RETRIEVER",
        {"input.value": "rewrite one", **_docs(["a", "b"])},
        "t1".ljust(16, "0"),
        end=2_000_000_000,
    )
    second = _span(
        "s2".ljust(16, "0"),
        "VectorIndexRetriever.retrieve",
        "RETRIEVER",
        {"input.value": "rewrite two", **_docs(["c", "a"])},
        "t2".ljust(16, "0"),
        end=3_000_000_000,
    )
    traces = rm.read_traces([_export(root, tool1, tool2, first, second)], query_ids={"Q?": "q1"})
    assert traces.calls() == {"q1": 2}
    assert traces.run_of(policy="union").to_dict() == {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}}
    with pytest.warns(rm.RagMetricsWarning, match="more than once"):
        latest = traces.run_of()
    assert latest.to_dict() == {"q1": {"c": 2.0, "a": 1.0}}
    assert all(r.in_question and r.query in ("rewrite one", "rewrite two") for r in traces.records)


def test_a_root_without_a_readable_question_warns_that_rewrites_split(tmp_path: Path) -> None:
    root = _span(
        "r" * 16,
        "FunctionAgent.run",
        "CHAIN",
        {"input.value": json.dumps({"init_state": {"config": {"input": "no"}}})},
    )
    search = _span(
        "s" * 16,
        "VectorIndexRetriever.retrieve",
        "RETRIEVER",
        {"input.value": "rewrite", **_docs(["a"])},
        "r" * 16,
    )
    with pytest.warns(TraceKeyWarning, match=r"FunctionAgent\.run.*using_metadata"):
        traces = rm.read_traces([_export(root, search)])
    assert list(traces.run) == ["rewrite"]  # a question nested deep is never guessed


def test_a_failed_span_is_recorded_as_failed_never_as_empty(tmp_path: Path) -> None:
    failed = _span(
        "f" * 16,
        "BM25Retriever.retrieve",
        "RETRIEVER",
        {"input.value": "q"},
        status={"code": 2, "message": "boom"},
        events=[
            {
                "name": "exception",
                "attributes": _attrs(
                    {"exception.type": "builtins.TimeoutError", "exception.message": "slow"}
                ),
            }
        ],
    )
    ok = _span(
        "e" * 16,
        "BM25Retriever.retrieve",
        "RETRIEVER",
        {"input.value": "p", **_docs(["x"])},
        trace="7" * 32,
    )
    traces = rm.read_traces([_export(failed), _export(ok)])
    assert traces.summary["failed"] == 1
    assert traces.records_of("BM25Retriever")[0].error == "TimeoutError: slow"
    result = traces.evaluate({"q": {"a": 1}, "p": {"x": 1}}, ["recall@5"])
    assert result.retrieval_errors == {"q": "TimeoutError: slow"}
    assert result.counts.failed_retrievals == 1 and result.per_query["q"]["recall@5"] == 0.0


def test_every_shape_gives_the_same_run(tmp_path: Path) -> None:
    """OTLP JSON with hex ids, one document or one export a line, protobuf's base64 ids,
    the SDK's span JSON, and LangSmith runs (flat and nested) read alike."""
    expected = rm.read_traces(_two_questions(tmp_path)).run.to_dict()
    exports = [json.loads(line) for line in _two_questions(tmp_path).read_text().splitlines()]
    whole = tmp_path / "whole.json"
    whole.write_text(json.dumps(exports))
    assert rm.read_traces(whole).run.to_dict() == expected

    def b64(hex_id: str) -> str:
        return base64.b64encode(bytes.fromhex(hex_id)).decode()

    for export in exports:
        for span in export["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            for key in ("traceId", "spanId", "parentSpanId"):
                if key in span:
                    span[key] = b64(span[key])
    assert rm.read_traces(exports).run.to_dict() == expected

    sdk = []
    for line in _two_questions(tmp_path).read_text().splitlines():
        for span in json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            sdk.append(
                {
                    "name": span["name"],
                    "context": {
                        "trace_id": "0x" + span["traceId"],
                        "span_id": "0x" + span["spanId"],
                    },
                    "parent_id": "0x" + span["parentSpanId"] if "parentSpanId" in span else None,
                    "start_time": "2026-11-28T01:00:00.000000Z",
                    "end_time": "2026-11-28T01:00:00.250000Z",
                    "status": {"status_code": "UNSET"},
                    "attributes": {
                        a["key"]: next(iter(a["value"].values())) for a in span["attributes"]
                    },
                }
            )
    assert rm.read_traces(_write_lines(tmp_path / "sdk.jsonl", sdk)).run.to_dict() == {
        q: {d: float(s) for d, s in docs.items()} for q, docs in expected.items()
    }


def _langsmith(question: str, docs: list[str], run: str, **extra: Any) -> dict[str, Any]:
    child = {
        "id": run + "-r",
        "trace_id": run,
        "parent_run_id": run,
        "run_type": "retriever",
        "name": "VectorStoreRetriever",
        "inputs": {"query": question},
        "outputs": {
            "documents": [
                {"page_content": "t", "metadata": {"doc_id": d}, "id": None, "type": "Document"}
                for d in docs
            ]
        },
        "start_time": "2026-11-28T01:00:00.000000",
        "end_time": "2026-11-28T01:00:00.500000",
        "error": None,
        "extra": {"metadata": {}},
    }
    root = {
        "id": run,
        "trace_id": run,
        "parent_run_id": None,
        "run_type": "chain",
        "name": "RunnableSequence",
        "inputs": {"question": question},
        "outputs": {},
        "error": None,
        "extra": {"metadata": extra},
    }
    return {**root, "child_runs": [child]}


def test_langsmith_runs_read_flat_and_nested(tmp_path: Path) -> None:
    nested = [
        _langsmith("who?", ["d1", "d2"], "r1", query_id="q1"),
        _langsmith("what?", ["d3"], "r2"),
    ]
    flat = []
    for run in nested:
        flat += [{k: v for k, v in run.items() if k != "child_runs"}, *run["child_runs"]]
    path = _write_lines(tmp_path / "runs.jsonl", flat)
    for source in (nested, path):
        traces = rm.read_traces(source, id_field="metadata:doc_id")
        assert traces.run.to_dict() == {"q1": {"d1": 2.0, "d2": 1.0}, "what?": {"d3": 1.0}}
        assert traces.latencies() == {"q1": 0.5, "what?": 0.5}
    with pytest.raises(InputFormatError, match=r"no document\.id.*metadata:<key>.*doc_id"):
        rm.read_traces(nested)


def test_a_span_cut_by_the_attribute_limit_is_refused(tmp_path: Path) -> None:
    cut = _span(
        "c" * 16,
        "VectorIndexRetriever.retrieve",
        "RETRIEVER",
        {"input.value": "q", **_docs(["a", "b"])},
        droppedAttributesCount=3,
    )
    with pytest.raises(InputFormatError, match="OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT"):
        rm.read_traces([_export(cut)])
    attributes = {"input.value": "q", **_docs(["a", "b", "c"])}
    del (
        attributes["retrieval.documents.0.document.id"],
        attributes["retrieval.documents.0.document.score"],
    )
    del attributes["retrieval.documents.0.document.metadata"]
    gap = _span("c" * 16, "VectorIndexRetriever.retrieve", "RETRIEVER", attributes)
    with pytest.raises(InputFormatError, match=r"lacks documents \[0\] of 0\.\.2"):
        rm.read_traces([_export(gap)])


def test_what_cannot_be_read_is_refused_with_where(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(_export(_span("a" * 16, "R", "RETRIEVER", {}))) + "\n{oops\n")
    with pytest.raises(InputFormatError, match=r"bad\.jsonl, line 2: not JSON"):
        rm.read_traces(bad)
    bad.write_text('{"query_id": "q1", "doc_id": "a"}\n')
    with pytest.raises(
        InputFormatError, match=r"bad\.jsonl: neither an OpenTelemetry.*doc_id, query_id"
    ):
        rm.read_traces(bad)
    bad.write_text("")
    with pytest.raises(InputFormatError, match="holds no span"):
        rm.read_traces(bad)
    llm_only = _export(_span("a" * 16, "OpenAI.chat", "LLM", {"input.value": "hi"}))
    with pytest.raises(
        InputFormatError, match=r"no retriever span among 1 spans \(span kinds: LLM 1\)"
    ):
        rm.read_traces([llm_only])
    twice = _engine_trace("4" * 32, "q", ["a"])
    with pytest.raises(InputFormatError, match=r"read before.*one export twice"):
        rm.read_traces([twice, twice])
    no_input = _export(_span("a" * 16, "R.retrieve", "RETRIEVER", _docs(["a"])))
    with pytest.raises(InputFormatError, match=r"carries no input.*query_id"):
        rm.read_traces([no_input])
    with pytest.raises(InputFormatError, match="an iterable of spans"):
        rm.read_traces(42)  # type: ignore[arg-type]
    with pytest.raises(InputFormatError, match="neither an OpenTelemetry span nor a LangSmith"):
        rm.read_traces([object()])
    with pytest.raises(InvalidParameterError, match="id_field"):
        rm.read_traces([twice], id_field="node_id")
    (tmp_path / "latin.jsonl").write_bytes(b"\xff\xfe{}")
    with pytest.raises(InputFormatError, match="not UTF-8"):
        rm.read_traces(tmp_path / "latin.jsonl")


def test_the_command_line_evaluates_a_traces_file(tmp_path: Path) -> None:
    traces = _two_questions(tmp_path)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d3 1\n")
    queries = tmp_path / "queries.json"
    queries.write_text(json.dumps({"who lives in Lyon?": "q1"}))

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "ragmetrics", "evaluate", str(qrels), str(traces), *args],
            capture_output=True,
            text=True,
            check=False,
        )

    done = cli("-m", "recall@3", "--query-ids", str(queries), "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["aggregate"]["recall@3"] == 1.0
    reranked = cli(
        "-m", "recall@3", "--query-ids", str(queries), "--stage", "rerank", "--format", "json"
    )
    assert json.loads(reranked.stdout)["aggregate"]["recall@3"] == 0.5
    nothing = cli("-m", "recall@3", "--stage", "Nope")
    assert nothing.returncode == 2 and "The stages recorded: VectorIndexRetriever" in nothing.stderr
