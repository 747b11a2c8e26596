"""``evaluate_stream(..., workers=N)``: a plain TREC file or Parquet (a file of many row
groups, a folder) shared by N processes gives the same bits as one process (a gzip file is
read by one process, with a warning, and gives them too), for every
registered metric; bad input is refused as one process refuses it, with the same line."""

from __future__ import annotations

import gzip
import itertools
import random
import warnings
from pathlib import Path

import numpy as np
import pytest

import ragmetrics as rm
from ragmetrics.formats import _stream_io
from ragmetrics.metrics import Cutoff
from ragmetrics.metrics.registry import registered


def _every_metric() -> list[str]:
    names = []
    for spec in sorted(registered().values(), key=lambda s: s.name):
        if not spec.kernel.__module__.startswith("ragmetrics."):
            continue  # registered by another test (the library's own metrics are the subject)
        if spec.family == "set":
            continue  # on their own 1..5 scale: below
        if spec.needs_nuggets:
            continue  # they read nuggets: tests/test_nuggets.py shares them over workers
        names.append(f"{spec.name}@10" if spec.cutoff is Cutoff.REQUIRED else spec.name)
    return names


SET_METRICS = ["ra_nwg@5", "proc@5", "pct_proc@5", "n_recall_4plus@5", "harm@5", "unjudged@5"]


def _write(folder: Path, *, utility: bool = False) -> tuple[rm.Qrels, Path, list[str]]:
    """Qrels, and a run grouped by query with tied scores, queries of very different
    lengths (one far longer than a share), unjudged queries and one judged query absent."""
    rng = random.Random(4)
    grades = [1, 2, 3, 4, 5] if utility else [-1, 0, 1, 2, 3]
    qrels = folder / "qrels.txt"
    judged = [f"q{i:03d}" for i in range(160)]
    with qrels.open("w") as handle:
        for query in judged:
            for doc in rng.sample(range(400), rng.choice([1, 5, 30])):
                handle.write(f"{query} 0 d{doc} {rng.choice(grades)}\n")
    lines = []
    order = judged[:-1] + [f"u{i}" for i in range(5)]  # the last judged query is absent
    rng.shuffle(order)
    for query in order:
        depth = 3000 if query == order[40] else rng.choice([1, 10, 100])
        for rank, doc in enumerate(rng.sample(range(4000), depth), start=1):
            lines.append(f"{query} Q0 d{doc} {rank} {rng.choice([0.25, 0.5, 0.75])} run\n")
    run = folder / "run.txt"
    run.write_text("".join(lines))
    return rm.Qrels.from_trec(qrels), run, lines


def _same(a: rm.EvaluationResult, b: rm.EvaluationResult) -> None:
    assert a.aggregate == b.aggregate
    assert a.counts == b.counts
    assert a.query_ids == b.query_ids and a.unjudged_query_ids == b.unjudged_query_ids
    assert np.array_equal(a.values, b.values, equal_nan=True)


@pytest.mark.parametrize("utility", [False, True], ids=["classic", "set"])
def test_every_share_of_every_input_gives_the_same_bits(tmp_path: Path, utility: bool) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    qrels, run, lines = _write(tmp_path, utility=utility)
    metrics = SET_METRICS if utility else _every_metric()
    one = rm.evaluate_stream(qrels, run, metrics, per_query=True, batch_rows=500, progress=False)
    assert one.counts.missing_from_run == 1 and len(one.unjudged_query_ids) == 5
    with gzip.open(tmp_path / "run.txt.gz", "wt") as handle:
        handle.write("".join(lines))
    rm.Run.from_trec(run).to_parquet(tmp_path / "whole.parquet")
    table = pq.read_table(tmp_path / "whole.parquet")
    pq.write_table(table, tmp_path / "run.parquet", row_group_size=701)  # groups cut queries
    folder = tmp_path / "parts"
    folder.mkdir()
    for part, start in enumerate(range(0, table.num_rows, 4999)):  # files cut queries too
        pq.write_table(table.slice(start, 4999), folder / f"part-{part:02d}.parquet")
    for source in (run, tmp_path / "run.txt.gz", tmp_path / "run.parquet", folder):
        for workers in (2, 3, 5):
            gzipped = str(source).endswith(".gz")  # read by one process, with a warning
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                shared = rm.evaluate_stream(
                    qrels, source, metrics, per_query=True, batch_rows=500, workers=workers,
                    progress=False,
                )  # fmt: skip
            told = [w for w in caught if issubclass(w.category, rm.OneProcessWarning)]
            assert len(told) == gzipped and (not told or "gunzip" in str(told[0].message))
            _same(one, shared)


def test_shares_cut_at_query_boundaries(tmp_path: Path) -> None:
    _, run, _lines = _write(tmp_path)
    data = run.read_bytes()
    for n in (2, 3, 7, 50):
        shares = _stream_io.trec_shares(run, n)
        assert shares[0][0] == 0 and shares[-1][1] == len(data)
        assert all(a[1] == b[0] for a, b in itertools.pairwise(shares))
        for start, _ in shares[1:]:
            before = data[:start].splitlines()[-1].split()[0]
            after = data[start:].split(b" ", 1)[0]
            assert before != after  # a query is never cut in two
    assert len(_stream_io.trec_shares(run, 10_000)) < 10_000  # no empty share


def test_bad_input_is_refused_as_one_worker_refuses_it(tmp_path: Path) -> None:
    qrels, run, lines = _write(tmp_path)
    bad = list(lines)
    where = int(len(bad) * 0.8)  # in the last share
    bad[where] = bad[where].replace(" Q0 ", " Q0 doc\u00a0one ", 1)
    broken = tmp_path / "broken.txt"
    broken.write_text("".join(bad))
    with pytest.raises(rm.RagMetricsError) as single:
        rm.evaluate_stream(qrels, broken, ["map"], progress=False)
    with pytest.raises(rm.RagMetricsError) as shared:
        rm.evaluate_stream(qrels, broken, ["map"], workers=3, progress=False)
    assert str(shared.value) == str(single.value) and f"line {where + 1}" in str(single.value)

    # a query back at the end, in another worker's share: the file is read again, grouped
    ungrouped = tmp_path / "ungrouped.txt"
    judged = next(line.split()[0] for line in lines if line.startswith("q"))
    again = [line.replace(" Q0 ", " Q0 x", 1) for line in lines if line.split()[0] == judged]
    for tail in (lines[:3], again):
        ungrouped.write_text("".join(lines + tail))
        expected = rm.evaluate(qrels, rm.read_run(ungrouped), ["map"])
        with pytest.warns(rm.errors.OneProcessWarning, match="read again by one process"):
            shared = rm.evaluate_stream(
                qrels, ungrouped, ["map"], workers=2, per_query=True, progress=False
            )
        assert shared.per_query == expected.per_query and shared.counts == expected.counts
    with pytest.raises(rm.RagMetricsError, match="workers must be a positive integer"):
        rm.evaluate_stream(qrels, run, ["map"], workers=0)
    with pytest.raises(rm.RagMetricsError, match="workers > 1 reads a TREC or Parquet path"):
        rm.evaluate_stream(qrels, iter([rm.Run.from_lists({"q": ["a"]})]), ["map"], workers=2)


def test_the_command_line_shares_a_streamed_run(tmp_path: Path) -> None:
    import subprocess
    import sys

    qrels, run, _ = _write(tmp_path)
    qrels.to_trec(tmp_path / "qrels.txt")
    command = [sys.executable, "-m", "ragmetrics", "evaluate", str(tmp_path / "qrels.txt"),
               str(run), "-m", "map", "-m", "ndcg@10", "--stream", "--format", "json"]  # fmt: skip
    one = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    two = subprocess.run(
        [*command, "--workers", "2"], capture_output=True, text=True, check=True
    ).stdout
    assert one == two and '"map"' in one
    plain = [c for c in command if c != "--stream"]
    refused = subprocess.run([*plain, "--workers", "2"], capture_output=True, text=True)
    assert refused.returncode == 2 and "add --stream" in refused.stderr


def kept_count(judged, cutoff, *, rel):  # type: ignore[no-untyped-def]
    """A metric of this test module's own: how many docs were retrieved (a worker that was
    spawned, not forked, receives it with the job)."""
    return judged.lengths.astype(float)


def test_a_metric_registered_by_the_caller_reaches_spawned_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragmetrics.engine import _parallel
    from ragmetrics.metrics.registry import REL, MetricSpec, register, registered

    if "kept_count_w" not in registered():
        register(
            MetricSpec("kept_count_w", kept_count, Cutoff.NONE, "classic", "retrieved docs",
                       params=(REL,), perfect_is_one=False, unit_range=False)
        )  # fmt: skip
    qrels, run, _ = _write(tmp_path)
    one = rm.evaluate_stream(qrels, run, ["kept_count_w", "map"], progress=False)
    monkeypatch.setattr(_parallel, "_start_method", lambda: "spawn")
    spawned = rm.evaluate_stream(qrels, run, ["kept_count_w", "map"], workers=2, progress=False)
    assert spawned.aggregate == one.aggregate and one.aggregate["kept_count_w"] > 1

    def unsendable(judged, cutoff, *, rel):  # type: ignore[no-untyped-def]
        return judged.lengths.astype(float)

    register(MetricSpec("local_count_w", unsendable, Cutoff.NONE, "classic", "retrieved",
                        params=(REL,), perfect_is_one=False, unit_range=False))  # fmt: skip
    with pytest.raises(rm.RagMetricsError, match="cannot be sent to a worker process"):
        rm.evaluate_stream(qrels, run, ["local_count_w"], workers=2, progress=False)


def test_a_script_without_a_main_guard_shares_work_twice(tmp_path: Path) -> None:
    """The second evaluation of a script forks its workers, as the first did: the pool of
    the first is let end before (a spawned worker would run the unguarded script again)."""
    import subprocess
    import sys

    _write(tmp_path)  # qrels.txt and run.txt
    script = tmp_path / "script.py"
    script.write_text(
        "import ragmetrics as rm\n"
        "qrels = rm.Qrels.from_trec('qrels.txt')\n"
        "for _ in range(3):\n"
        "    result = rm.evaluate_stream(qrels, 'run.txt', ['map'], workers=2, progress=False)\n"
        "    print(result.aggregate['map'])\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    values = done.stdout.split()
    assert len(values) == 3 and len(set(values)) == 1 and float(values[0]) > 0
