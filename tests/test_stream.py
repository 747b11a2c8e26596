"""Streaming evaluation and exact merging: the numbers of evaluate(), whatever the batches."""

from __future__ import annotations

import gzip
import random
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragmetrics as rm
from ragmetrics import Qrels, Run, evaluate, evaluate_stream
from ragmetrics.engine.stream import merge, partial
from ragmetrics.errors import (
    IdMismatchWarning,
    InputFormatError,
    InvalidParameterError,
    MissingQueryError,
    RagMetricsError,
    RegroupedStreamWarning,
    UngroupedInputError,
)
from ragmetrics.metrics.registry import Cutoff, registered

GRADE_MAP = {0: 1, 1: 3, 2: 4, 3: 5}


def _every_metric(*, nuggets: bool = False) -> list[str]:
    """One name per registered metric (at @10 where it takes a cutoff); those that read
    nuggets only with ``nuggets=True`` (they need ``nuggets=``: see :func:`_nuggets`)."""
    names = []
    for spec in registered().values():
        if not spec.kernel.__module__.startswith("ragmetrics.") or spec.needs_nuggets != nuggets:
            continue  # another test's metric, or the other kind
        names.append(spec.name if spec.cutoff is Cutoff.NONE else f"{spec.name}@10")
    return sorted(names)


METRICS = _every_metric()
NUGGET_METRICS = _every_metric(nuggets=True)


def _nuggets(qrels: Qrels) -> dict[str, dict[str, dict[str, object]]]:
    """Nuggets of every other judged query: one for each doc graded 2 or more (vital at
    3), supported by that doc and by an unjudged one."""
    return {
        query_id: {
            f"n{doc}": {"text": doc, "vital": grade == 3, "support": [doc, "never-retrieved"]}
            for doc, grade in judged.items()
            if grade >= 2
        }
        for number, (query_id, judged) in enumerate(qrels.items())
        if number % 2
    }


def _data(seed: int, n_queries: int = 240) -> tuple[dict[str, dict[str, int]], Run]:
    """Qrels graded 0..3 and a run with ties, repeated docs, an empty ranking, queries the
    qrels do not judge and judged queries the run lacks."""
    rng = random.Random(seed)
    qrels = {
        f"q{i}": {f"d{j}": rng.randint(0, 3) for j in rng.sample(range(60), rng.randint(1, 9))}
        for i in range(n_queries)
    }
    rows = []
    for i in range(0, n_queries + 20):
        if i % 11 == 5:
            continue  # judged, missing from the run
        n = 0 if i == 3 else rng.randint(1, 30)
        for _ in range(n):
            rows.append((f"q{i}", f"d{rng.randrange(60)}", round(rng.random(), 2)))
    results: dict[str, dict[str, float]] = {}
    for q, d, s in rows:
        results.setdefault(q, {})
        results[q][d] = max(s, results[q].get(d, s))
    results["q3"] = {}
    return qrels, Run.from_dict(results, name="r")


def _same(a: rm.EvaluationResult, b: rm.EvaluationResult, per_query: bool = True) -> None:
    assert a.aggregate == b.aggregate  # bit for bit, not approximately
    assert a.tallies == b.tallies
    assert a.counts == b.counts
    assert a.missing_query_ids == b.missing_query_ids
    assert a.unjudged_query_ids == b.unjudged_query_ids
    if per_query:
        assert a.query_ids == b.query_ids
        assert np.array_equal(a.values, b.values, equal_nan=True)


@pytest.mark.parametrize("missing", ["zero", "skip"])
def test_a_streamed_trec_file_equals_evaluate_on_every_metric(tmp_path: Path, missing: str) -> None:
    qrels, run = _data(1)
    path = tmp_path / "run.txt"
    with pytest.warns(rm.FormatLossWarning, match="empty ranking"):  # read back as missing
        run.to_trec(path)
    options = {"grade_map": GRADE_MAP, "missing": missing, "nuggets": _nuggets(qrels)}
    metrics = METRICS + NUGGET_METRICS
    expected = evaluate(qrels, Run.from_trec(path), metrics, **options)
    for batch_rows in (1, 50, 10**6):
        streamed = evaluate_stream(
            qrels, path, metrics, per_query=True, batch_rows=batch_rows, progress=False, **options
        )
        _same(expected, streamed)
    assert expected.counts.missing_from_run and expected.counts.not_judged
    assert expected.counts.repeated_ids_dropped == 0  # a file can have them: see below


def test_results_are_identical_split_1_7_and_64_ways() -> None:
    qrels, run = _data(2, n_queries=400)
    ids = list(run.query_ids)
    for ways in (1, 7, 64):
        parts = [ids[i::ways] for i in range(ways)]  # interleaved: every batch spans the run
        batches = [_subset(run, part) for part in parts]
        # the whole run in the order the batches give it (the order unjudged ids are listed in)
        whole = evaluate(
            qrels, _subset(run, [q for part in parts for q in part]), METRICS, grade_map=GRADE_MAP
        )
        assert whole.counts.empty_rankings == 1
        streamed = evaluate_stream(
            qrels, iter(batches), METRICS, per_query=True, grade_map=GRADE_MAP, progress=False
        )
        _same(whole, streamed)
        partials = [
            partial(qrels, b, METRICS, per_query=True, grade_map=GRADE_MAP) for b in batches
        ]
        shuffled = partials[:]
        random.Random(ways).shuffle(shuffled)  # merging is exact in any order
        merged = merge(shuffled).result(qrels)
        assert merged.tallies == whole.tallies and merged.aggregate == whole.aggregate
        assert np.array_equal(merged.values, whole.values, equal_nan=True)
        _same(whole, merge(partials).result(qrels))


def _subset(run: Run, query_ids: list[str]) -> Run:
    return Run.from_dict(
        {q: dict(zip(run[q], run.scores(q) or (), strict=True)) for q in query_ids}
    )


def test_exact_sums_do_not_depend_on_order() -> None:
    from ragmetrics._util.exact import exact_sum, to_float

    values = np.random.default_rng(0).random(10_000) * 10.0 ** np.arange(-5, 5).repeat(1000)
    forward, backward = exact_sum(values), exact_sum(values[::-1])
    assert forward == backward == sum(exact_sum(values[i::13]) for i in range(13))
    assert to_float(forward) == __import__("math").fsum(values.tolist())
    # a plain running sum differs with the order: this is what exactness buys
    assert float(np.cumsum(values)[-1]) != float(np.cumsum(values[::-1])[-1])


def test_parquet_file_folder_and_arrow_batches_cut_mid_query(tmp_path: Path) -> None:
    pyarrow = pytest.importorskip("pyarrow")
    import pyarrow.parquet as parquet

    qrels, run = _data(3)
    run.to_parquet(tmp_path / "run.parquet")
    expected = evaluate(
        qrels, Run.from_parquet(tmp_path / "run.parquet"), METRICS, grade_map=GRADE_MAP
    )
    table = parquet.read_table(tmp_path / "run.parquet")
    folder = tmp_path / "parts"
    folder.mkdir()
    half = table.num_rows // 2 + 3  # cuts a query between two files
    parquet.write_table(table.slice(0, half), folder / "part-0.parquet")
    parquet.write_table(table.slice(half), folder / "part-1.parquet")
    batches = table.to_batches(max_chunksize=7)  # record batches that cut queries
    assert len(batches) > 10
    sources = [(tmp_path / "run.parquet", 64), (folder, 64), (str(folder), 64), (iter(batches), 30)]
    for source, batch_rows in sources:
        streamed = evaluate_stream(
            qrels,
            source,
            METRICS,
            per_query=True,
            batch_rows=batch_rows,
            grade_map=GRADE_MAP,
            progress=False,
        )
        _same(expected, streamed)
    ranx = table.rename_columns(["q_id", "doc_id", "score"])
    ranx = ranx.replace_schema_metadata(table.schema.metadata)  # renaming drops it
    assert isinstance(ranx, pyarrow.Table)
    _same(
        expected,
        evaluate_stream(
            qrels, [ranx], METRICS, per_query=True, grade_map=GRADE_MAP, progress=False
        ),
    )


def test_gzip_comments_and_unicode_ids_take_the_careful_path(tmp_path: Path) -> None:
    qrels = {"q1": {"dé": 1, "b": 0}, "q2": {"c": 2}}
    lines = "# a comment\nq1 Q0 dé 1 0.9 t\n\nq1 Q0 b 2 0.5 t\nq2 Q0 c 1 0.7 t\nq2 Q0 c 2 0.1 t\n"
    plain = tmp_path / "run.txt"
    plain.write_text(lines, encoding="utf-8")
    zipped = tmp_path / "run.txt.gz"
    with gzip.open(zipped, "wt", encoding="utf-8") as handle:
        handle.write(lines)
    expected = evaluate(qrels, Run.from_trec(plain), ["ndcg@10", "P@1"])
    assert expected.counts.repeated_ids_dropped == 1
    for source in (plain, zipped):
        _same(
            expected,
            evaluate_stream(qrels, source, ["ndcg@10", "P@1"], per_query=True, progress=False),
        )


def test_a_bad_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 a 1 0.9 t\n# note\nq1 Q0 b 2 high t\n")
    with pytest.raises(
        InputFormatError, match=r"run.txt, line 3: field 5 must be a number, got 'high'"
    ):
        evaluate_stream({"q1": {"a": 1}}, path, "P@1", progress=False)
    path.write_text("q1 Q0 a 1 0.9 t\nq1 Q0 b 2\n")
    with pytest.raises(InputFormatError, match=r"line 2: expected at least 6"):
        evaluate_stream({"q1": {"a": 1}}, path, "P@1", progress=False)
    path.write_bytes(b"q1 Q0 a 1 0.9 t\nq1 Q0 \xff 2 0.5 t\n")
    with pytest.raises(InputFormatError, match=r"line 2: byte 0xff"):
        evaluate_stream({"q1": {"a": 1}}, path, "P@1", progress=False)


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("last_newline", [True, False])
def test_a_bad_line_after_many_plain_blocks_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int, last_newline: bool
) -> None:
    """Lines are counted through blocks the fast reader parsed (from their results, not by
    counting newlines again): the error names the line of the whole file."""
    from ragmetrics.formats import _trec_fast

    monkeypatch.setattr(_trec_fast, "_BLOCK_BYTES", 64)  # many blocks, all but one plain
    lines = [f"q{q:03d} Q0 d{d} {d + 1} {1 - d / 10} t\n" for q in range(40) for d in range(5)]
    bad = 173
    lines[bad - 1] = lines[bad - 1].replace(" t\n", "\n")  # five fields: not a TREC line
    path = tmp_path / "run.txt"
    text = "".join(lines)
    path.write_text(text if last_newline else text[:-1])
    qrels = {f"q{q:03d}": {"d0": 1} for q in range(40)}
    with pytest.raises(InputFormatError, match=rf"run.txt, line {bad}: expected at least 6"):
        evaluate_stream(qrels, path, "P@1", workers=workers, progress=False)


@pytest.mark.parametrize("batch_rows", [1, 2, 100])
def test_a_query_that_comes_back_is_grouped(tmp_path: Path, batch_rows: int) -> None:
    """A file whose queries are scattered is grouped: in memory when it fits one batch,
    else through temporary files (``RegroupedStreamWarning`` says where); the numbers are
    evaluate()'s, judged or not."""
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 a 1 0.9 t\nq2 Q0 a 1 0.9 t\nx Q0 a 1 0.9 t\nq1 Q0 b 2 0.5 t\n")
    path.write_text(path.read_text() + "x Q0 b 2 0.4 t\nq2 Q0 c 3 0.1 t\n")
    qrels = {"q1": {"b": 1}, "q2": {"c": 1}}
    expected = evaluate(qrels, Run.from_trec(path), ["P@1", "mrr"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        streamed = evaluate_stream(
            qrels, path, ["P@1", "mrr"], batch_rows=batch_rows, per_query=True, progress=False
        )
    assert streamed.per_query == expected.per_query and streamed.counts == expected.counts
    assert streamed.aggregate == expected.aggregate == {"P@1": 0.0, "mrr": 0.5}
    spilled = [w for w in caught if issubclass(w.category, RegroupedStreamWarning)]
    assert len(spilled) == (batch_rows < 6)
    if spilled:
        assert "not grouped" in str(spilled[0].message) and "TMPDIR" in str(spilled[0].message)


def test_a_query_that_comes_back_after_a_batch_was_scored_is_grouped_on_a_second_reading(
    tmp_path: Path,
) -> None:
    """Past the first batch, the stream has scored the query's first rows: the file is read
    again, grouped; input read in one pass (an iterable of Arrow batches) is refused."""
    lines = [
        f"q{q:05d} Q0 d{d} {d} {10 - d / 7:.4f} tag\n" for q in range(8_000) for d in range(12)
    ]
    path = tmp_path / "run.txt"
    path.write_text("".join(lines) + "q00003 Q0 late 1 0.0 tag\n")  # 3.4 MB: two blocks
    qrels = {"q00003": {"late": 1, "d2": 1}, "q00004": {"d0": 1}}
    expected = evaluate(qrels, Run.from_trec(path), ["map", "recall@20"])
    with pytest.warns(RegroupedStreamWarning, match="temporary file"):
        streamed = evaluate_stream(
            qrels, path, ["map", "recall@20"], batch_rows=50_000, per_query=True, progress=False
        )
    assert streamed.per_query == expected.per_query
    assert streamed.aggregate == expected.aggregate and streamed.counts == expected.counts


def test_an_unjudged_query_that_comes_back_is_named_in_a_one_pass_stream() -> None:
    pa = pytest.importorskip("pyarrow")
    first = pa.record_batch({"query_id": ["x", "q1"], "doc_id": ["a", "a"], "score": [0.9, 0.9]})
    again = pa.record_batch({"query_id": ["x"], "doc_id": ["b"], "score": [0.5]})
    with pytest.raises(UngroupedInputError, match="query 'x'"):
        evaluate_stream({"q1": {"a": 1}}, iter([first, again]), "P@1", batch_rows=1, progress=False)


def test_overlapping_batches_are_refused() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    one = Run.from_dict({"q1": {"a": 1.0}, "q2": {"b": 1.0}})
    two = Run.from_dict({"q2": {"x": 1.0}})
    with pytest.raises(UngroupedInputError, match="query 'q2'"):
        evaluate_stream(qrels, [one, two], "P@1", progress=False)
    with pytest.raises(UngroupedInputError, match="query 'q2'"):
        merge(
            [partial(qrels, one, "P@1", per_query=True), partial(qrels, two, "P@1", per_query=True)]
        )
    with pytest.raises(InvalidParameterError, match="same metrics"):
        merge([partial(qrels, one, "P@1"), partial(qrels, two, "P@2")])


def test_without_per_query_values_the_result_says_so(tmp_path: Path) -> None:
    qrels, run = _data(4)
    path = tmp_path / "run.txt"
    with pytest.warns(rm.FormatLossWarning, match="empty ranking"):  # read back as missing
        run.to_trec(path)
    expected = evaluate(qrels, Run.from_trec(path), ["ndcg@10", "map"])
    streamed = evaluate_stream(qrels, path, ["ndcg@10", "map"], progress=False)
    _same(expected, streamed, per_query=False)
    assert streamed.values.shape == (0, 2) and streamed.query_ids == ()
    for read in (
        lambda: streamed.per_query,
        lambda: streamed.worst("map"),
        lambda: streamed.to_pandas(),
    ):
        with pytest.raises(RagMetricsError, match="per_query=True"):
            read()
    assert "240 queries counted" in streamed.to_markdown()


def test_missing_and_warnings_as_evaluate(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 a 1 0.9 t\n")
    with pytest.raises(MissingQueryError, match="'q2'"):
        evaluate_stream(
            {"q1": {"a": 1}, "q2": {"b": 1}}, path, "P@1", missing="error", progress=False
        )
    with pytest.warns(IdMismatchWarning, match="share no query id") as caught:
        evaluate_stream({"other": {"a": 1}}, path, "P@1", progress=False)
    assert "the qrels' like 'other';" in str(caught[0].message)
    judged = {f"x{i}": {"a": 1} for i in range(5)} | {"empty": {}}
    with pytest.warns(IdMismatchWarning, match="share no query id") as caught:
        evaluate_stream(judged, path, "P@1", progress=False)
    assert "the qrels' like 'x0', 'x1', 'x2', ...;" in str(caught[0].message)
    with pytest.warns(IdMismatchWarning, match="No retrieved doc is judged"):
        evaluate_stream({"q1": {"3f2a-77b1": 1}}, path, "P@1", progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        evaluate_stream({"q1": {"a": 1}}, path, "P@1", progress=False)


def test_inputs_are_checked_before_reading(tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match="batch_rows"):
        evaluate_stream({"q1": {"a": 1}}, tmp_path / "none.txt", "P@1", batch_rows=0)
    with pytest.raises(InvalidParameterError, match="cutoff"):
        evaluate_stream({"q1": {"a": 1}}, tmp_path / "none.txt", "P@ten")
    with pytest.raises(InputFormatError, match="No such file"):
        evaluate_stream({"q1": {"a": 1}}, tmp_path / "none.txt", "P@1", progress=False)
    with pytest.raises(InputFormatError, match="use evaluate"):
        evaluate_stream({"q1": {"a": 1}}, {"q1": {"a": 1.0}}, "P@1")
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(RagMetricsError, match="the run is empty"):
        evaluate_stream({"q1": {"a": 1}}, empty, "P@1", progress=False)
    with pytest.raises(rm.GradeScaleError):
        evaluate_stream({"q1": {"a": 0}}, empty, "ra_nwg@5", progress=False)


def test_compare_streams_runs_given_as_paths(tmp_path: Path) -> None:
    qrels, run = _data(5)
    _, other = _data(6)
    with pytest.warns(rm.FormatLossWarning, match="empty ranking"):
        run.to_trec(tmp_path / "a.txt")
    other.to_parquet(tmp_path / "b.parquet")
    in_memory = rm.compare(qrels, {"a": run, "b": other}, ["ndcg@10", "map"], n_permutations=500)
    streamed = rm.compare(
        qrels,
        {"a": tmp_path / "a.txt", "b": str(tmp_path / "b.parquet")},
        ["ndcg@10", "map"],
        n_permutations=500,
    )
    assert [t.p_value for t in in_memory.tests] == [t.p_value for t in streamed.tests]
    assert in_memory.results["b"].aggregate == streamed.results["b"].aggregate


def test_qrels_stay_as_given() -> None:
    qrels = Qrels.from_dict({"q1": {"a": 1}, "q2": {}})
    run = Run.from_dict({"q1": {"a": 1.0}, "q2": {"a": 1.0}})
    expected = evaluate(qrels, run, "P@1")
    _same(expected, evaluate_stream(qrels, [run], "P@1", per_query=True, progress=False))


@pytest.mark.parametrize(
    ("file_name", "expected"),
    [
        ("bm25.txt", "bm25"),
        ("bm25.trec.gz", "bm25"),
        ("dense.run", "dense"),
        ("v1.2-hybrid.trec", "v1.2-hybrid"),
        ("plain", "plain"),
        ("hybrid.parquet", "hybrid"),
        ("shards/", "shards"),  # a folder of Parquet files, written with its slash
    ],
)
def test_a_streamed_run_is_named_after_its_file(
    file_name: str, expected: str, tmp_path: Path
) -> None:
    judgments, run = _data(3, n_queries=12)
    path = tmp_path / file_name.rstrip("/")
    if file_name.endswith(("parquet", "/")):
        pytest.importorskip("pyarrow")
        if file_name.endswith("/"):
            path.mkdir()
            run.to_parquet(path / "part-0.parquet")
        else:
            run.to_parquet(path)
    else:
        text = "".join(
            f"{q} Q0 {d} {i} {s!r} t\n"
            for q in run
            for i, (d, s) in enumerate(zip(run[q], run.scores(q) or ()))
        )
        path.write_bytes(
            gzip.compress(text.encode()) if file_name.endswith(".gz") else text.encode()
        )
    source = f"{tmp_path}/{file_name}" if file_name.endswith("/") else path
    assert evaluate_stream(judgments, source, ["map"]).run_name == expected
    assert evaluate_stream(judgments, source, ["map"], name="mine").run_name == "mine"


def test_merging_nothing_is_refused_in_words() -> None:
    with pytest.raises(rm.RagMetricsError) as caught:
        merge([])
    assert str(caught.value) == "There is nothing to merge: no partial result was given."


def test_a_batch_without_a_judged_query_merges_as_no_rows() -> None:
    # a batch whose queries the qrels do not judge adds no row; merged alone or with others,
    # the values stay one column per metric
    judgments, run = _data(4, n_queries=20)
    stray = Run.from_dict({"not-judged": {"d1": 1.0}})
    alone = merge([partial(judgments, stray, ["map", "P@5"], per_query=True)])
    assert alone.rows.shape == (0,) and alone.values is not None
    assert alone.values.shape == (0, 2)
    whole = merge(
        [
            partial(judgments, stray, ["map", "P@5"], per_query=True),
            partial(judgments, run, ["map", "P@5"], per_query=True),
        ]
    )
    expected = evaluate(judgments, run, ["map", "P@5"])
    assert whole.result(judgments).per_query == expected.per_query


def test_batch_rows_and_workers_are_refused_in_words() -> None:
    judgments, run = _data(5, n_queries=4)
    for bad in (0, -3, True, 2.5, "10"):
        with pytest.raises(InvalidParameterError) as caught:
            evaluate_stream(judgments, [run], ["map"], batch_rows=bad)  # type: ignore[arg-type]
        assert str(caught.value) == f"batch_rows must be a positive integer; got {bad!r}."
        with pytest.raises(InvalidParameterError) as caught:
            evaluate_stream(judgments, [run], ["map"], workers=bad)  # type: ignore[arg-type]
        assert str(caught.value) == f"workers must be a positive integer; got {bad!r}."
    one = evaluate_stream(judgments, [run], ["map"], workers=1, batch_rows=1, per_query=True)
    assert one.per_query == evaluate(judgments, run, ["map"]).per_query


def test_a_streamed_parquet_run_with_its_own_column_names(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    import pyarrow
    import pyarrow.parquet

    judgments, run = _data(6, n_queries=30)
    rows = [(q, d, s) for q in run for d, s in zip(run[q], run.scores(q) or ())]
    table = pyarrow.table(
        {
            "qid": [r[0] for r in rows],
            "docno": [r[1] for r in rows],
            "sim": [r[2] for r in rows],
            "score": [0.0] * len(rows),  # a decoy: the named column wins
        }
    )
    path = tmp_path / "custom.parquet"
    pyarrow.parquet.write_table(table, path)
    streamed = evaluate_stream(
        judgments, path, ["map", "ndcg@5"], per_query=True,
        query_col="qid", doc_col="docno", score_col="sim",
    )  # fmt: skip
    assert streamed.per_query == evaluate(judgments, run, ["map", "ndcg@5"]).per_query


def _job(judgments: Any, metrics: list[str], *, per_query: bool = True, **keywords: Any) -> Any:
    """What evaluate_stream sends each worker, made here (column names: the defaults)."""
    from ragmetrics.engine.stream import Job
    from ragmetrics.formats._stream_io import Columns

    return Job.of(
        judgments, metrics, keywords, per_query=per_query, batch_rows=100, columns=Columns(),
        name=None,
    )  # fmt: skip


def test_a_job_scores_its_share_in_this_process_as_a_worker_would() -> None:
    """What each worker of ``evaluate_stream(workers=N)`` runs, run here: a job made in the
    caller scores batches of whole queries; its partial results merged equal evaluate(),
    and a share without a batch gives nothing to merge."""
    judgments, run = _data(6, n_queries=60)
    job = _job(judgments, ["map", "ndcg@5", "recall@10"], grade_map=None, missing="zero")
    ids = list(run.query_ids)
    halves = [_subset(run, ids[: len(ids) // 2]), _subset(run, ids[len(ids) // 2 :])]
    first, second = job.score(halves[:1], "share 1"), job.score(halves[1:], "share 2")
    assert first is not None and second is not None
    both = job.score(iter(halves), "one share")
    assert both is not None
    expected = evaluate(judgments, run, ["map", "ndcg@5", "recall@10"], missing="zero")
    _same(expected, (first + second).result(judgments, name="r"))
    _same(expected, both.result(judgments))
    assert job.score(iter([]), "an empty share") is None


def test_merged_counts_add_up_over_batches() -> None:
    # every additive count of the partial results is summed, batch after batch
    judgments = {f"q{i}": {"a": 1, "b": 0} for i in range(6)}
    batches = [
        Run.from_lists({"q0": ["a", "a", "x"], "q1": ["b"], "extra": ["a"]}),
        Run.from_lists({"q2": ["x", "x", "x"], "q3": []}),
        Run.from_lists({"q4": ["b", "a", "b"]}),
    ]
    parts = [partial(judgments, b, "P@2", per_query=True) for b in batches]
    merged = merge(parts)
    for field in ("in_run", "empty_rankings", "repeated_ids_dropped", "n_located", "n_ranked"):
        assert getattr(merged, field) == sum(getattr(p, field) for p in parts), field
    assert (merged.repeated_ids_dropped, merged.n_located, merged.n_ranked) == (4, 4, 4)
    assert merged.unjudged == ("extra",) and merged.rows.tolist() == [0, 1, 2, 3, 4]
    assert (parts[0] + parts[1] + parts[2]).n_located == 4
    result = merged.result(judgments, name="batches")
    assert result.run_name == "batches" and result.counts.repeated_ids_dropped == 4


def test_partial_keeps_per_query_values_only_when_asked() -> None:
    judgments = {"q1": {"a": 1}}
    run = Run.from_lists({"q1": ["a"]})
    assert partial(judgments, run, "P@1").values is None
    kept = partial(judgments, run, "P@1", per_query=True)
    assert kept.values is not None and kept.values.tolist() == [[1.0]]


def test_merging_unlike_partials_says_what_differs() -> None:
    judgments = {"q1": {"a": 1}, "q2": {"b": 1}}
    one, two = Run.from_lists({"q1": ["a"]}), Run.from_lists({"q2": ["b"]})
    with pytest.raises(InvalidParameterError) as caught:
        merge([partial(judgments, one, ["P@1", "map"]), partial(judgments, two, "mrr")])
    assert str(caught.value) == (
        "Partial results merge only when made with the same metrics and keywords; got "
        "['P@1', 'map'] and ['mrr']."
    )


@pytest.mark.parametrize("kept", [True, False])
def test_a_query_twice_within_one_partial_is_named(kept: bool) -> None:
    """A partial result made by hand (or by a buggy engine) holding one qrels row twice: the
    merge names the query (by its id when the values were kept, else by its row)."""
    import dataclasses

    judgments = {"q0": {"a": 1}, "q1": {"a": 1}, "q2": {"a": 1}}
    run = Run.from_lists({"q0": ["a"], "q1": ["a"], "q2": ["a"]})
    made = partial(judgments, run, "P@1", per_query=kept)
    doubled = dataclasses.replace(
        made,
        rows=np.array([2, 0, 1, 0]),
        values=None if made.values is None else np.ones((4, 1)),
        query_ids=("q2", "q0", "q1", "q0") if kept else (),
    )
    name = "query 'q0'" if kept else "query 'at row 0 of the qrels'"
    with pytest.raises(UngroupedInputError, match=name):
        merge([doubled])


def test_a_stream_of_runs_names_the_batch_that_is_not_one() -> None:
    judgments = {"q1": {"a": 1}}
    batches = [Run.from_lists({"q1": ["a"]}), Run.from_lists({"q2": ["a"]}), {"q3": ["a"]}]
    with pytest.raises(InputFormatError) as caught:
        evaluate_stream(judgments, iter(batches), "P@1", progress=False)
    assert str(caught.value) == (
        "Batch 3 of the stream is a dict; the first was a Run, so every batch must be one."
    )


def test_a_stream_warns_of_ids_that_never_meet_in_evaluate_s_words(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d2 1 0.9 t\n")
    for missing, outcome in (("zero", "every judged query scores 0"), ("skip", "no query is")):
        with pytest.warns(IdMismatchWarning, match="share no query id") as caught:
            evaluate_stream({"other": {"d1": 1}}, path, "P@1", missing=missing, progress=False)
        assert outcome in str(caught[0].message)
    # one query whose docs of the same shape all missed: routine, no warning (as evaluate)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        streamed = evaluate_stream({"q1": {"d1": 1}}, path, "P@1", progress=False)
    assert streamed.aggregate == {"P@1": 0.0}


def test_arrow_batches_that_regroup_a_query_are_named_as_the_stream() -> None:
    """A query back in a later batch of a one-pass stream: refused once a batch holding it
    was scored (the stream cannot be read again); grouped when it came back first."""
    pa = pytest.importorskip("pyarrow")
    first = pa.record_batch({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "score": [1.0, 0.5]})
    again = pa.record_batch({"query_id": ["q1"], "doc_id": ["c"], "score": [0.3]})
    judgments = {"q1": {"a": 1}, "q2": {"b": 1}}
    with pytest.raises(UngroupedInputError) as caught:
        evaluate_stream(judgments, iter([first, again]), "P@1", progress=False, batch_rows=1)
    assert str(caught.value).startswith(
        "the stream: the run is not grouped by query: query 'q1' comes back after other queries."
    )
    grouped = evaluate_stream(
        judgments, iter([first, again]), "P@1", progress=False, batch_rows=1000
    )
    assert grouped.aggregate == {"P@1": 1.0}


@pytest.mark.parametrize("batches", [[], [Run.from_dict({})]], ids=["no batch", "no query"])
def test_an_empty_stream_is_refused_in_words(batches: list[Run]) -> None:
    with pytest.raises(RagMetricsError) as caught:
        evaluate_stream({"q1": {"a": 1}}, iter(batches), "P@1", progress=False)
    assert str(caught.value).startswith("the stream: the run is empty: it has no query.")


def test_a_merged_partial_keeps_query_ids_only_beside_values() -> None:
    judgments = {f"q{i}": {"a": 1} for i in range(4)}
    one, two = Run.from_lists({"q0": ["a"], "q1": ["b"]}), Run.from_lists({"q2": ["a"]})
    kept = merge(
        [
            partial(judgments, one, "P@1", per_query=True),
            partial(judgments, two, "P@1", per_query=True),
        ]
    )
    assert kept.query_ids == ("q0", "q1", "q2") and kept.values is not None
    dropped = merge(
        [partial(judgments, one, "P@1", per_query=True), partial(judgments, two, "P@1")]
    )
    assert dropped.query_ids == () and dropped.values is None


def test_a_worker_s_share_that_repeats_a_query_is_named_with_the_share() -> None:
    judgments = {"q1": {"a": 1}, "q2": {"b": 1}}
    job = _job(judgments, ["P@1"], per_query=False)
    batch = Run.from_lists({"q2": ["b"]})
    with pytest.raises(UngroupedInputError) as caught:
        job.score([batch, batch], "run.txt (share 2)")
    assert str(caught.value).startswith("run.txt (share 2): ") and "query 'q2'" in str(caught.value)


def _retrieved(judged, cutoff, *, rel):  # type: ignore[no-untyped-def]
    """A metric of this module's own: how many docs each query retrieved."""
    return judged.lengths.astype(float)


def test_a_job_carries_the_caller_s_metrics_to_a_worker_that_lacks_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A spawned worker starts with the library's metrics only: the job carries the ones
    the caller registered (with their aliases), never the library's own, and registers
    them there before reading the names."""
    from ragmetrics.metrics import registry

    for table in ("_REGISTRY", "_ALIASES"):
        monkeypatch.setattr(registry, table, dict(getattr(registry, table)))
    spec = registry.MetricSpec(
        "retrieved_s", _retrieved, Cutoff.NONE, "classic", "retrieved docs",
        params=(registry.REL,), perfect_is_one=False, unit_range=False,
    )  # fmt: skip
    registry.register(spec, "n_retrieved_s")
    judgments, run = _data(2, n_queries=30)
    names = ["map", "n_retrieved_s", "ndcg@5"]
    job = _job(judgments, names)
    assert job.custom == ((spec, ("n_retrieved_s",)),)
    for key in ("retrieved_s", "n_retrieved_s"):  # now as in a process that never saw it
        registry._ALIASES.pop(key)
    registry._REGISTRY.pop("retrieved_s")
    assert [m.spec.name for m in job.resolved()] == ["map", "retrieved_s", "ndcg"]
    assert registry.aliases_of("retrieved_s") == ["n_retrieved_s"]
    scored = job.score([run], "a share")
    assert scored is not None
    _same(evaluate(judgments, run, names), scored.result(judgments))


def test_merging_partials_names_the_merged_batches_in_its_message() -> None:
    judgments = {"q1": {"a": 1}}
    one = partial(judgments, Run.from_lists({"q1": ["a"]}), "P@1")
    with pytest.raises(UngroupedInputError) as caught:
        merge([one, one])
    assert str(caught.value).startswith("the merged batches: ")


def test_the_stream_s_progress_bar_counts_queries_and_leaves_no_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    judgments, run = _data(3, n_queries=12)
    evaluate_stream(judgments, [run], "P@1", progress=True)
    bar = capsys.readouterr().err
    assert bar.startswith("\revaluating: 0 queries [") and " queries/s]" in bar
    assert bar.endswith("\r")  # erased when done (leave=False), not left as a line
    evaluate_stream(judgments, [run], "P@1", progress=False)
    assert capsys.readouterr().err == ""


def test_what_evaluate_stream_cannot_read_is_refused_in_words(tmp_path: Path) -> None:
    import re

    judgments = {"q1": {"a": 1}}
    for source in (Run.from_lists({"q1": ["a"]}), {"q1": {"a": 1.0}}):
        with pytest.raises(InputFormatError) as caught:
            evaluate_stream(judgments, source, "P@1", progress=False)
        assert str(caught.value) == (
            "evaluate_stream reads a path or an iterable of batches; for a Run or a dict in "
            "memory, use evaluate()."
        )
    with pytest.raises(InputFormatError) as caught:
        evaluate_stream(judgments, 42, "P@1", progress=False)
    assert str(caught.value) == (
        "source must be a TREC or Parquet path, or an iterable of Run batches or Arrow record "
        "batches; got int."
    )
    path = tmp_path / "run.json"
    Run.from_lists({"q1": ["a"]}).to_json(path)
    with pytest.raises(InputFormatError) as caught:
        evaluate_stream(judgments, path, "P@1", progress=False)
    assert re.search(r"streaming reader can: [a-z]+(, [a-z]+)+\); ", str(caught.value))
    pa = pytest.importorskip("pyarrow")
    empty = pa.table(
        {name: pa.array([], kind) for name, kind in
         (("query_id", pa.string()), ("doc_id", pa.string()), ("score", pa.float64()))}
    )  # fmt: skip
    with pytest.raises(RagMetricsError) as caught:
        evaluate_stream(judgments, empty, "P@1", progress=False)
    assert str(caught.value).startswith("the Arrow stream: the run is empty")


@pytest.mark.parametrize("batch_rows", [2, 1000])
def test_scattered_rows_read_as_strings_or_unscored_are_grouped_too(
    tmp_path: Path, batch_rows: int
) -> None:
    """The careful reader's rows (a TREC file with an id beyond ASCII: ids as strings) and a ranking
    without scores (rows in rank order) are grouped like packed ids, in memory and through
    the temporary files."""
    rows = [("q1", "a", 0.9), ("q2", "b", 0.8), ("q1", "c", 0.7), ("q3", "ä", 0.5)]
    rows += [("q2", "a", 0.4), ("q1", "d", 0.3), ("q3", "b", 0.2)]  # ä: the careful reader
    path = tmp_path / "run.txt"
    path.write_text("".join(f"{q}\tQ0\t{d}\t0\t{s}\tt\n" for q, d, s in rows))
    qrels = {"q1": {"c": 1, "d": 2}, "q2": {"a": 1}, "q3": {"b": 1}}
    names = ["map", "ndcg@3", "mrr"]
    expected = evaluate(qrels, Run.from_trec(path), names)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RegroupedStreamWarning)
        streamed = evaluate_stream(
            qrels, path, names, batch_rows=batch_rows, per_query=True, progress=False
        )
    assert streamed.per_query == expected.per_query and streamed.aggregate == expected.aggregate
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    unscored = tmp_path / "ranked.parquet"  # no score column: the row order is the ranking
    table = pa.table({"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows]})
    pq.write_table(table, unscored, row_group_size=1)
    ranked: dict[str, list[str]] = {}
    for q, d, _ in rows:
        ranked.setdefault(q, []).append(d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RegroupedStreamWarning)
        streamed = evaluate_stream(
            qrels, unscored, names, batch_rows=batch_rows, per_query=True, progress=False
        )
    assert streamed.per_query == evaluate(qrels, ranked, names).per_query
