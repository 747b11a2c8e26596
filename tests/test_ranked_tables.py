"""Tables without a score column (rank-only retrieval logs): the row order within each query
is the ranking. Read from DataFrames, Arrow tables, Parquet files and Arrow streams, they must
give the run the row-by-row reader gives (the same docs in the same order, the first copy of
a repeated doc kept and the others counted), kept as bytes where the ids can be packed."""

from __future__ import annotations

import random
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragmetrics as rm
from ragmetrics.data._store import store_of

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

METRICS = ["ndcg@10", "map", "recall@20", "mrr", "P@5"]


def _rows(kind: str, seed: int = 0) -> tuple[list[str], list[str]]:
    """Query and doc id columns of 60 queries x 1-30 rows, laid out as ``kind`` says."""
    rng = random.Random(seed)
    queries: list[str] = []
    docs: list[str] = []
    for q in range(60):
        n = rng.randint(1, 30)
        pool = [f"doc-{rng.randrange(10**6)}" for _ in range(n)]
        if kind == "titles":
            pool = [f"Page {d[4:]} (film)" for d in pool]
        if kind == "texts":  # chunk texts as ids: several widths past 256 bytes
            pool = [f"{d} " + "lorem ipsum " * rng.randint(25, 60) for d in pool]
        if kind in ("repeats", "scattered repeats") and n > 3:
            pool[rng.randrange(1, n)] = pool[0]  # a second copy below the first
            pool[-1] = pool[1]
        queries += [f"q{q}"] * n
        docs += pool
    if kind.startswith("scattered"):  # a join's or a sort's output: queries not contiguous
        order = sorted(range(len(docs)), key=lambda i: (docs[i], i))
        queries, docs = [queries[i] for i in order], [docs[i] for i in order]
    return queries, docs


def _expected(queries: list[str], docs: list[str]) -> tuple[dict[str, tuple[str, ...]], dict]:
    """What a ranked-lists run holds: queries in first-seen order, each doc's first copy."""
    ranked: dict[str, list[str]] = {}
    for q, d in zip(queries, docs, strict=True):
        ranked.setdefault(q, []).append(d)
    dropped = {}
    kept: dict[str, tuple[str, ...]] = {}
    for q, listed in ranked.items():
        kept[q] = tuple(dict.fromkeys(listed))
        if len(kept[q]) < len(listed):
            dropped[q] = len(listed) - len(kept[q])
    return kept, dropped


def _readers(queries: list[str], docs: list[str], tmp_path: Path) -> dict[str, Any]:
    objects = pd.DataFrame(
        {"query_id": pd.Series(queries, dtype=object), "doc_id": pd.Series(docs, dtype=object)}
    )
    table = pa.table({"query_id": queries, "doc_id": docs})
    path = tmp_path / "ranked.parquet"
    pq.write_table(table, path, row_group_size=97)  # several row groups, dictionary pages
    return {
        "DataFrame of objects": lambda: rm.Run.from_pandas(objects, score_col=None),
        "DataFrame of Arrow strings": lambda: rm.Run.from_pandas(
            objects.astype("string[pyarrow]"), score_col=None
        ),
        "Arrow table": lambda: rm.Run.from_arrow(table),
        "Arrow, dictionary-encoded ids": lambda: rm.Run.from_arrow(
            table.set_column(1, "doc_id", table.column("doc_id").dictionary_encode())
        ),
        "Parquet": lambda: rm.Run.from_parquet(path),
        "Arrow stream": lambda: rm.Run.from_arrow(
            pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=50))
        ),
    }


@pytest.mark.parametrize(
    "kind", ["regular", "repeats", "scattered", "scattered repeats", "titles", "texts"]
)
def test_a_table_without_scores_is_the_run_of_its_row_order(kind: str, tmp_path: Path) -> None:
    queries, docs = _rows(kind)
    kept, dropped = _expected(queries, docs)
    if "repeats" in kind:
        assert dropped  # the case holds repeated docs
    reference = rm.Run.from_lists({q: list(d) for q, d in kept.items()})
    qrels = rm.Qrels.from_dict(
        {q: {d[0]: 1, d[len(d) // 2]: 2} for q, d in list(kept.items())[::2]}
    )
    expected = rm.evaluate(qrels, reference, METRICS)
    for name, read in _readers(queries, docs, tmp_path).items():
        run = read()
        assert not run.is_scored, name
        assert run.query_ids == tuple(kept), name
        assert {q: run[q] for q in run.query_ids} == kept, name
        assert run.duplicates == dropped, name
        # packable ids stay bytes: no Python string per row
        assert (store_of(run).ids is not None) == (kind != "texts"), name
        got = rm.evaluate(qrels, run, METRICS)
        assert got.per_query == expected.per_query, name
        assert run.to_dict() == reference.to_dict(), name
    for batch_rows in (10**6, 101):  # the file in one batch, and in many
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rm.errors.RegroupedStreamWarning)
            streamed = rm.evaluate_stream(
                qrels,
                tmp_path / "ranked.parquet",
                METRICS,
                batch_rows=batch_rows,
                per_query=True,
                progress=False,
            )
        assert streamed.per_query == expected.per_query, batch_rows


def test_a_repeated_doc_keeps_its_first_place_not_its_last(tmp_path: Path) -> None:
    queries = ["q1"] * 4 + ["q2"] * 2
    docs = ["a", "b", "a", "c", "x", "x"]
    for name, read in _readers(queries, docs, tmp_path).items():
        run = read()
        assert run["q1"] == ("a", "b", "c") and run["q2"] == ("x",), name
        assert run.duplicates == {"q1": 1, "q2": 1}, name


def test_a_missing_id_without_scores_is_named_as_the_row_reader_names_it() -> None:
    frame = pd.DataFrame({"query_id": ["q1", "q1", None], "doc_id": ["a", "b", "c"]})
    with pytest.raises(rm.InputFormatError, match="query"):
        rm.Run.from_pandas(frame, score_col=None)
    frame = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", ""]})
    with pytest.raises(rm.InputFormatError, match="empty"):
        rm.Run.from_pandas(frame, score_col=None)
    table = pa.table({"query_id": ["q1", "q1"], "doc_id": ["a", None]})
    with pytest.raises(rm.InputFormatError):
        rm.Run.from_arrow(table)


def test_integer_ids_without_scores_are_their_decimal_strings() -> None:
    frame = pd.DataFrame({"query_id": np.repeat([7, 8], 3), "doc_id": [5, 9, 5, 1, 2, 3]})
    run = rm.Run.from_pandas(frame, score_col=None)
    assert run["7"] == ("5", "9") and run["8"] == ("1", "2", "3")
    assert run.duplicates == {"7": 1} and store_of(run).ids is not None


def test_a_run_from_a_table_without_scores_behaves_as_the_same_ranked_lists(
    tmp_path: Path,
) -> None:
    # every use of a run, on the bytes one a table gives and on the strings of from_lists
    queries, docs = _rows("scattered repeats", seed=5)
    kept, _ = _expected(queries, docs)
    table_run = rm.Run.from_arrow(pa.table({"query_id": queries, "doc_id": docs}))
    lists_run = rm.Run.from_lists({q: list(d) for q, d in kept.items()})
    assert store_of(table_run).ids is not None and store_of(lists_run).ids is None
    qrels = rm.Qrels.from_dict(
        {q: {d[0]: 1, d[-1]: 0, "unretrieved": 2} for q, d in list(kept.items())[::3]}
    )
    for run in (table_run, lists_run):
        assert run.scores(queries[0]) is None

    def uses(run: rm.Run) -> list[object]:
        folder = tmp_path / str(id(run))
        folder.mkdir()
        run.to_trec(folder / "run.txt")
        run.to_parquet(folder / "run.parquet")
        return [
            rm.evaluate(qrels, run, METRICS, judged_only=True).per_query,
            rm.evaluate(qrels, run, METRICS, missing="zero").aggregate,
            run.truncate(3).to_lists(),
            run.to_pandas().fillna(-1.0).to_dict("list"),  # scores NaN: no score given
            (folder / "run.txt").read_text(),
            rm.Run.from_parquet(folder / "run.parquet").to_lists(),
            rm.fuse([run, lists_run], method="rrf").to_dict(),
            run.n_results,
            run.lengths.tolist(),
        ]

    assert uses(table_run) == uses(lists_run)
