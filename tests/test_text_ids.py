"""Chunk texts used as ids: many RAG evaluations key each retrieved context by its text, so
doc ids run to hundreds or thousands of bytes, each of its own length. Such ids are not
padded to the widest (every id would cost the longest one's bytes in memory and in every
hash); they are read as Python strings straight from Arrow, without a detour through
pandas, and give what the same run given as dicts gives: rankings, repeated copies dropped
and counted, metrics."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragmetrics as rm
from ragmetrics.data._store import store_of
from ragmetrics.formats import _columnar
from tests.conftest import best_copies as _expected

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pd = pytest.importorskip("pandas")

METRICS = ["ndcg@10", "map", "recall@20", "mrr", "P@5"]
_WORDS = ["the", "of", "retrieval", "chunk", "answer", "query", "context", "passage", "évaluation"]
_WORDS += ["東京", "passage"]


def _texts(rng: random.Random, n: int, *, nul: bool = False) -> list[str]:
    """``n`` distinct texts of 200 to 2,000 bytes, some beyond ASCII, one holding a newline;
    with ``nul``, one holding a NUL (which no packed id may: kept exactly as a string)."""
    texts = []
    for i in range(n):
        words = " ".join(rng.choice(_WORDS) for _ in range(400))
        texts.append(words[: rng.randint(200, 2000)] + f" #{i}")
    texts[5] = "two lines\n" + texts[5]
    if nul:
        texts[3] = "a NUL\x00 inside " + texts[3]
    return texts


def _rows(seed: int, scattered: bool, nul: bool = False) -> list[tuple[str, str, float]]:
    rng = random.Random(seed)
    corpus = _texts(rng, 400, nul=nul)
    rows = []
    for q in range(80):
        docs = rng.sample(corpus, rng.randint(1, 25))
        rows += [(f"q{q}", d, float(rng.randint(0, 9))) for d in docs]  # ties
        if q % 9 == 0:  # a chunk retrieved twice (two indexes merged): its best copy counts
            rows.append((f"q{q}", docs[0], float(rng.randint(0, 9))))
    if scattered:
        rng.shuffle(rows)
    return rows


def _table(
    rows: list[tuple[str, str, float]], *, large: bool = False, dictionary: bool = False
) -> Any:
    q, d, s = (list(c) for c in zip(*rows, strict=True))
    kind = pa.large_string() if large else pa.string()
    docs = pa.array(d, type=kind)
    if dictionary:
        docs = docs.dictionary_encode()
    return pa.table({"query_id": pa.array(q, type=kind), "doc_id": docs, "score": s})


def _readers(rows: list[tuple[str, str, float]], tmp_path: Path) -> dict[str, Any]:
    table = _table(rows)
    path = tmp_path / "run.parquet"
    pq.write_table(table, path, row_group_size=300)  # several row groups
    frame = pd.DataFrame({c: table.column(c).to_pylist() for c in table.column_names})
    return {
        "parquet": lambda: rm.Run.from_parquet(path),
        "arrow table": lambda: rm.Run.from_arrow(table),
        "large strings": lambda: rm.Run.from_arrow(_table(rows, large=True)),
        "dictionary": lambda: rm.Run.from_arrow(_table(rows, dictionary=True)),
        "arrow stream": lambda: rm.Run.from_arrow(
            pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=97))
        ),
        "pandas, Arrow strings": lambda: rm.Run.from_pandas(
            frame.astype({"query_id": "string[pyarrow]", "doc_id": "string[pyarrow]"})
        ),
        "pandas, objects": lambda: rm.Run.from_pandas(frame.astype({"doc_id": object})),
    }


@pytest.mark.parametrize("nul", [False, True], ids=["texts", "a NUL in one"])
@pytest.mark.parametrize("scattered", [False, True], ids=["grouped", "scattered"])
def test_chunk_texts_as_ids_read_from_every_table_as_the_dicts_give(
    tmp_path: Path, scattered: bool, nul: bool
) -> None:
    rows = _rows(7, scattered, nul)
    expected, copies = _expected(rows)
    qrels = {q: dict.fromkeys(list(docs)[::3], 1) for q, docs in expected.items()}
    want = rm.evaluate(qrels, expected, METRICS).per_query
    for name, read in _readers(rows, tmp_path).items():
        run = read()
        assert run.to_dict() == expected, name
        assert dict(run.duplicates) == copies and sum(copies.values()) > 0, name
        assert store_of(run).ids is None, name  # strings: never padded to the longest text
        assert rm.evaluate(qrels, run, METRICS).per_query == want, name
    if not scattered:  # a stream reads in one pass: its queries must be grouped
        streamed = rm.evaluate_stream(
            qrels, tmp_path / "run.parquet", METRICS, progress=False, per_query=True
        )
        assert streamed.per_query == want


def test_judged_texts_read_from_a_table_as_the_dicts_give(tmp_path: Path) -> None:
    rng = random.Random(3)
    corpus = _texts(rng, 200)
    judged = {f"q{q}": {d: rng.randint(0, 3) for d in rng.sample(corpus, 12)} for q in range(30)}
    rows = [(q, d, g) for q, docs in judged.items() for d, g in docs.items()]
    rng.shuffle(rows)  # a query's judgments apart
    columns = list(zip(*rows, strict=True))
    table = pa.table({"query_id": columns[0], "doc_id": columns[1], "relevance": columns[2]})
    path = tmp_path / "qrels.parquet"
    pq.write_table(table, path, row_group_size=50)
    frame = table.to_pandas().astype({"query_id": "string[pyarrow]", "doc_id": "string[pyarrow]"})
    for read in (
        lambda: rm.Qrels.from_arrow(table),
        lambda: rm.Qrels.from_parquet(path),
        lambda: rm.Qrels.from_pandas(frame),
    ):
        got = read()
        assert got.to_dict() == judged
        assert store_of(got).ids is None
    twice = pa.table({"query_id": ["q", "q"], "doc_id": [corpus[0]] * 2, "relevance": [1, 2]})
    with pytest.raises(rm.InputFormatError, match="judged twice"):
        rm.Qrels.from_arrow(twice)  # two grades for one text: named, not guessed


def test_texts_are_read_from_arrow_without_a_detour_through_pandas(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The detour cost four times the read: 100,000 texts from an Arrow table took 0.89 s
    through pandas, 0.18 s straight."""
    rows = _rows(2, scattered=True)
    expected, _ = _expected(rows)

    def detour(table: Any) -> Any:
        raise AssertionError("texts went through pandas")

    monkeypatch.setattr(_columnar, "decoded", detour)
    assert rm.Run.from_arrow(_table(rows)).to_dict() == expected
    judged = [(q, d, 1) for q, d, _ in rows[::5]]
    columns = list(zip(*judged, strict=True))
    table = pa.table({"query_id": columns[0], "doc_id": columns[1], "relevance": columns[2]})
    assert store_of(rm.Qrels.from_arrow(table)).ids is None
    # a table the careful path must name still gets there (and names the row)
    monkeypatch.undo()
    empty = pa.table({"query_id": ["q", "q"], "doc_id": ["x" * 400, ""], "score": [1.0, 0.5]})
    with pytest.raises(rm.InputFormatError, match="empty id"):
        rm.Run.from_arrow(empty)


def test_a_repeated_doc_rebuilds_its_own_query_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """One chunk retrieved twice used to rebuild every query of the run as a dict; now the
    queries that hold a doc twice are rebuilt alone, each doc once with its best score."""
    rng = random.Random(5)
    rows = []
    for q in range(300):
        docs = [f"doc-{q}-{i}" for i in range(rng.randint(2, 12))]
        rows += [(f"q{q}", d, float(rng.randint(0, 5))) for d in docs]
        if q in (4, 200):
            rows.append((f"q{q}", docs[1], 99.0))  # a better copy, later
            rows.append((f"q{q}", docs[0], -1.0))  # a worse copy, later
    expected, copies = _expected(rows)
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]).astype(object)
    frame["score"] = frame["score"].astype(float)

    def whole_run_as_dicts(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("every query rebuilt for one repeated doc")

    monkeypatch.setattr(rm.Run, "_from_maps", whole_run_as_dicts)
    run = rm.Run.from_pandas(frame)
    assert run.to_dict() == expected
    assert dict(run.duplicates) == copies == {"q4": 2, "q200": 2}
    assert run["q4"][0] == "doc-4-1" and run.scores("q4")[0] == 99.0  # its best copy
    qrels = {"q4": {"doc-4-1": 1}, "q200": {"doc-200-0": 1}, "q7": {"doc-7-0": 1}}
    got = rm.evaluate(qrels, run, ["mrr"]).per_query
    assert got == rm.evaluate(qrels, expected, ["mrr"]).per_query
    assert got["q4"]["mrr"] == 1.0  # its best copy ranks it first


def test_an_object_column_of_str_subclasses_reads_as_plain_strings() -> None:
    """numpy's ``str_`` is a ``str``: such a column used to end in a raw StopIteration."""
    frame = pd.DataFrame(
        {
            "query_id": pd.Series([np.str_("q1"), "q1", 2], dtype=object),
            "doc_id": pd.Series(["a", np.str_("b"), 7], dtype=object),
            "score": [1.0, 0.5, 0.2],
        }
    )
    run = rm.Run.from_pandas(frame)
    assert run.to_dict() == {"q1": {"a": 1.0, "b": 0.5}, "2": {"7": 0.2}}
    assert {type(q) for q in run.query_ids} == {str}
    assert {type(d) for q in run.query_ids for d in run[q]} == {str}
    bad = frame.assign(doc_id=pd.Series(["a", True, "c"], dtype=object))
    with pytest.raises(rm.InputFormatError, match="True of type bool at row 1"):
        rm.Run.from_pandas(bad)
