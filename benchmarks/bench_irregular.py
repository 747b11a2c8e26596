"""Runs as users bring them, against the same run in the regular layout.

One run of N queries x 100 docs with MS MARCO-size doc ids (up to 8.8 million) and scores
with ties, written in several layouts: regular (each query's rows together, no doc twice),
with one row in 20,000 repeating its query's previous doc, with the rows sorted by doc id
(queries not contiguous, as a join, Spark or DuckDB leaves them), with query ids of 76
bytes (URLs, as RAG datasets key questions by their page; their qrels use the same ids),
with one doc id in 100 accented (a multilingual corpus), with one doc id of 326 bytes (a
URL with its query string: past the 256 bytes ids are packed at) or of 120 bytes (which
every id was padded to), with doc ids holding
spaces (pages keyed by title, Parquet only), without a score column (a rank-only log whose
row order ranks, Parquet only), as TREC text with a header comment and a blank last line,
with CR LF line ends, or with scores as ``%e`` or Python's ``str()`` writes them, and as
pandas writes Parquet (an index column, row groups of 50,000), by Polars
(categorical doc ids, row groups of 20,000), by DuckDB in a shuffled order (a join's
output), and as Spark leaves a DataFrame (a folder of eight snappy part files, rows
hash-partitioned by doc id, a ``_SUCCESS`` marker).

Each layout is read and evaluated on five metrics from every source a user brings: Parquet,
an Arrow stream (a RecordBatchReader over the Parquet file's batches), TREC text, gzipped
TREC text, a dict of dicts (built beforehand in the layout's order; only ``evaluate`` is
timed) and ``evaluate_stream`` over the TREC and the Parquet file. The times are medians of
rounds that alternate the layouts; each is printed as a ratio to the regular layout of its
source (the goal: 1.5x at most). A stream refuses a run whose queries are not grouped (it
reads in one pass): such a cell says "refused".

Then pytrec_eval (``parse_run`` of the TREC file) and ranx (``Run.from_file`` of the TREC
file, ``Run.from_parquet``) on the same files, with the same metrics, warm, and the ratio of
their time to ours.

With ``--fresh``, each cell of each round is timed in a process of its own (one untimed
call, then the median of ``--calls``), as a user's script meets the run; by default every
job runs in this one process, which then holds every layout's files and dicts. At 100,000
queries the one process slowed the regular TREC job to 0.84-1.10 s against 0.55-0.70 s
fresh, and single cells there move by up to 0.5x from run to run: quote ``--fresh``.

    python benchmarks/bench_irregular.py [--queries 5000] [--rounds 3] [--tools ranx,pytrec_eval]
        [--layouts "by doc id,repeats"] [--sources "TREC,TREC gzip"] [--fresh] [--calls 3]
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import ragmetrics as rm

METRICS = ["ndcg@10", "map", "recall@100", "mrr@10", "P@5"]


def _columns(n_queries: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    queries = np.repeat(np.arange(n_queries), 100).astype(str)
    docs = rng.integers(0, 8_841_823, n_queries * 100).astype(str)
    scores = np.round(rng.random(n_queries * 100) * 50, 1)  # ties
    return queries, docs, scores


def _qrels(queries: np.ndarray, docs: np.ndarray, seed: int = 1) -> rm.Qrels:
    rng = np.random.default_rng(seed)
    pick = rng.random(len(docs)) < 0.02
    judged: dict[str, dict[str, int]] = {}
    for q, d in zip(queries[pick].tolist(), docs[pick].tolist(), strict=True):
        judged.setdefault(q, {})[d] = int(rng.integers(1, 3))
    return rm.Qrels.from_dict(judged)


def _urls(queries: np.ndarray) -> np.ndarray:
    """Query ids of 76 bytes, one for each id of ``queries``."""
    site = "https://docs.example.com/guides/retrieval/evaluation/section-"
    return np.char.add(np.char.add(site, np.char.zfill(queries, 6)), "/question")


def _layouts(queries: np.ndarray, docs: np.ndarray, scores: np.ndarray) -> dict[str, tuple]:
    # no doc twice in a query in the regular layout
    key = np.char.add(np.char.add(queries, "\0"), docs)
    _, first = np.unique(key, return_index=True)
    keep = np.zeros(len(docs), dtype=bool)
    keep[first] = True
    q, d, s = queries[keep], docs[keep], scores[keep]
    repeated_d = d.copy()
    every = np.arange(1, len(d), 20_000)
    same_query = q[every] == q[every - 1]
    repeated_d[every[same_query]] = d[every[same_query] - 1]
    by_doc = np.argsort(d, kind="stable")
    accented = d.astype(object)
    accented[::100] = [f"é{doc}" for doc in d[::100].tolist()]  # a multilingual corpus's
    accented = accented.astype(str)
    url = "https://example.com/search?" + "&".join(["q=retrieval"] * 25)  # with its query
    one_long, one_url = d.astype(object), d.astype(object)
    one_long[len(d) // 2] = url
    one_url[len(d) // 2] = url[:120]
    return {
        "regular": (q, d, s),
        "repeats": (q, repeated_d, s),
        "by doc id": (q[by_doc], d[by_doc], s[by_doc]),
        LONG_IDS: (_urls(q), d, s),
        "1% of doc ids accented": (q, accented, s),
        ONE_LONG_ID: (q, one_long, s),
        ONE_URL: (q, one_url, s),
    }


LONG_IDS = "query ids of 76 bytes (URLs)"
ONE_LONG_ID = "one doc id of 326 bytes"
ONE_URL = "one doc id of 120 bytes"
TITLES = "doc ids with spaces (page titles)"


def _titles(docs: np.ndarray) -> np.ndarray:
    """Doc ids as a corpus of pages keys them, by title (``Page 4521 (film)``): spaces
    inside, which a TREC file cannot hold, so this layout is written as Parquet only."""
    return np.char.add(np.char.add("Page ", docs), " (film)")


TEXT_STYLES = {  # the regular run as TREC text written otherwise: (the text before its
    # lines, each line's text, the text after them)
    "a header comment, a blank last line": (
        "# query Q0 doc rank score tag\n",
        lambda q, d, s: f"{q} Q0 {d} 0 {s} r\n",
        "\n",
    ),
    "CR LF line ends": ("", lambda q, d, s: f"{q} Q0 {d} 0 {s} r\r\n", ""),
    "scores as %e writes them": ("", lambda q, d, s: f"{q} Q0 {d} 0 {s * 1e-7:e} r\n", ""),
    "scores as Python's str() writes them": (
        "",
        lambda q, d, s: f"{q} Q0 {d} 0 {s / 49.99!r} r\n",
        "",
    ),
    "small scores as str() writes them": (
        "",
        lambda q, d, s: f"{q} Q0 {d} 0 {s * 3.7e-7!r} r\n",
        "",
    ),
}
NO_SCORES = "no score column (row order ranks)"
PANDAS, POLARS, DUCKDB = "written by pandas", "written by Polars", "written by DuckDB, shuffled"
SPARK = "written like Spark (8 part files)"
BASE = ["regular", "repeats", "by doc id", LONG_IDS, "1% of doc ids accented", ONE_LONG_ID, ONE_URL]
VARIANTS = [*TEXT_STYLES, TITLES, NO_SCORES, PANDAS, POLARS, DUCKDB, SPARK]


def _write(
    folder: Path, layouts: dict[str, tuple], variants: list[str]
) -> dict[str, dict[str, Path]]:
    """Each layout as Parquet, TREC text and gzipped TREC text; and the regular run written
    as the other tools and text styles write it, for each name of ``variants``."""
    paths: dict[str, dict[str, Path]] = {}
    for name, (q, d, s) in layouts.items():
        table = pa.table({"query_id": q, "doc_id": d, "score": s})
        slug = name.replace(" ", "-")
        parquet = folder / f"{slug}.parquet"
        pq.write_table(table, parquet)
        trec = folder / f"{slug}.txt"
        with trec.open("w") as out:
            for qq, dd, ss in zip(q.tolist(), d.tolist(), s.tolist(), strict=True):
                out.write(f"{qq} Q0 {dd} 0 {ss} r\n")
        zipped = folder / f"{slug}.txt.gz"
        with trec.open("rb") as plain, gzip.open(zipped, "wb", compresslevel=1) as packed:
            shutil.copyfileobj(plain, packed)
        paths[name] = {"parquet": parquet, "trec": trec, "gzip": zipped}
    paths.update(
        _text_variants(folder, layouts["regular"], [v for v in variants if v in TEXT_STYLES])
    )
    q, d, s = layouts["regular"]
    if TITLES in variants:
        titled = folder / "titles.parquet"
        pq.write_table(pa.table({"query_id": q, "doc_id": _titles(d), "score": s}), titled)
        paths[TITLES] = {"parquet": titled}
    if NO_SCORES in variants:
        unscored = folder / "no-scores.parquet"  # a rank-only log: the row order ranks
        pq.write_table(pa.table({"query_id": q, "doc_id": d}), unscored)
        paths[NO_SCORES] = {"parquet": unscored}
    if PANDAS in variants:
        import pandas as pd

        frame = pd.DataFrame({"query_id": q, "doc_id": d, "score": s}).astype(
            {"query_id": "string", "doc_id": "string", "score": "Float64"}
        )
        written = folder / "pandas.parquet"
        frame.to_parquet(written, row_group_size=50_000)  # an index column, nullable types
        paths[PANDAS] = {"parquet": written}
    if POLARS in variants:
        import polars as pl

        by_polars = folder / "polars.parquet"
        pl.DataFrame({"query_id": q, "doc_id": d, "score": s}).with_columns(
            pl.col("doc_id").cast(pl.Categorical)  # dictionary-encoded ids, large strings
        ).write_parquet(by_polars, row_group_size=20_000)
        paths[POLARS] = {"parquet": by_polars}
    if DUCKDB in variants:
        import duckdb

        by_duckdb = folder / "duckdb.parquet"
        duckdb.sql(  # a join's output: queries in no particular order
            f"COPY (SELECT query_id, doc_id, score FROM read_parquet('{folder / 'regular.parquet'}') "
            f"ORDER BY hash(doc_id)) TO '{by_duckdb}' (FORMAT PARQUET, ROW_GROUP_SIZE 100000)"
        )
        paths[DUCKDB] = {"parquet": by_duckdb}
    if SPARK in variants:
        paths[SPARK] = {"parquet": _write_spark_like(folder, layouts)}
    return paths


def _text_variants(folder: Path, regular: tuple, styles: list[str]) -> dict[str, dict[str, Path]]:
    """The regular run as TREC text written in each of ``styles`` (see ``TEXT_STYLES``): with
    a header comment and a blank last line, with CR LF line ends (Windows), with its scores
    as ``%e`` writes them (small scores, as a reranker's probabilities), and as Python's
    ``str()`` writes floats (up to 17 digits; small ones in exponent form,
    ``1.7019999999999998e-05``); plain and gzipped."""
    q, d, s = regular
    rows = list(zip(q.tolist(), d.tolist(), s.tolist(), strict=True))
    paths = {}
    for name in styles:
        head, line, tail = TEXT_STYLES[name]
        text = head + "".join(line(qq, dd, ss) for qq, dd, ss in rows) + tail
        number = list(TEXT_STYLES).index(name)
        trec, zipped = folder / f"text-{number}.txt", folder / f"text-{number}.txt.gz"
        trec.write_bytes(text.encode())
        zipped.write_bytes(gzip.compress(text.encode(), compresslevel=1))
        paths[name] = {"trec": trec, "gzip": zipped}
    return paths


def _write_spark_like(folder: Path, layouts: dict[str, tuple]) -> Path:
    """The regular run as Spark leaves a DataFrame: a folder of snappy part files, the rows
    hash-partitioned (by doc id, as after a join on it) so that each query lies in every
    file, and a ``_SUCCESS`` marker beside them (pyspark itself is not needed)."""
    q, d, s = layouts["regular"]
    parts = folder / "spark"
    parts.mkdir()
    table = pa.table({"query_id": q, "doc_id": d, "score": s})
    partition = d.astype(np.int64) % 8
    for k in range(8):
        name = f"part-{k:05d}-5f1c0a9e-c000.snappy.parquet"
        pq.write_table(table.filter(pa.array(partition == k)), parts / name, compression="snappy")
    (parts / "_SUCCESS").touch()
    return parts


SOURCES = {  # column: (the file it reads, how)
    "Parquet": ("parquet", "read"),
    "Arrow stream": ("parquet", "arrow"),
    "TREC": ("trec", "read"),
    "TREC gzip": ("gzip", "read"),
    "dicts": ("trec", "dicts"),
    "stream TREC": ("trec", "stream"),
    "stream Parquet": ("parquet", "stream"),
}


def _dicts(path: Path) -> dict[str, dict[str, float]]:
    """The run as a user's dict of dicts, in the file's order (a repeated doc: its last)."""
    run: dict[str, dict[str, float]] = {}
    with path.open() as lines:
        for line in lines:
            fields = line.split()
            if fields and not fields[0].startswith("#"):  # blank and comment lines skipped
                q, _, d, _, s, _ = fields
                run.setdefault(q, {})[d] = float(s)
    return run


def _job(qrels: rm.Qrels, path: Path, how: str) -> Callable[[], object]:
    if how == "read":
        return lambda: rm.evaluate(qrels, rm.read_run(path), METRICS)
    if how == "arrow":

        def from_stream() -> object:
            if path.is_dir():  # a folder of part files
                import pyarrow.dataset

                batches = pyarrow.dataset.dataset(path, format="parquet").to_batches()
            else:
                batches = pq.ParquetFile(path).iter_batches()
            first = next(batches)
            reader = pa.RecordBatchReader.from_batches(first.schema, [first, *batches])
            return rm.evaluate(qrels, rm.Run.from_arrow(reader), METRICS)

        return from_stream
    if how == "dicts":
        run = _dicts(path)
        return lambda: rm.evaluate(qrels, run, METRICS)
    return lambda: rm.evaluate_stream(qrels, path, METRICS, progress=False)


def _time(job: Callable[[], object]) -> float | None:
    start = time.perf_counter()
    try:
        job()
    except rm.errors.UngroupedInputError:
        return None  # a stream reads in one pass: a run not grouped by query is refused
    return time.perf_counter() - start


def _others(
    tools: list[str], qrels_of: Callable[[str], rm.Qrels], paths: dict, rounds: int
) -> dict[tuple[str, str, str], float | str]:
    """pytrec_eval's and ranx's medians on the TREC (and ranx's on the Parquet) files
    (``qrels_of``: the qrels of each layout)."""
    jobs: dict[tuple[str, str, str], Callable[[], object]] = {}
    judged_of = {name: qrels_of(name).to_dict() for name in paths}
    if "pytrec_eval" in tools:
        import pytrec_eval

        measures = {"ndcg_cut.10", "map", "recall.100", "recip_rank", "P.5"}

        def pytrec(path: Path, judged: dict[str, dict[str, int]]) -> object:
            with path.open() as lines:
                run = pytrec_eval.parse_run(lines)
            return pytrec_eval.RelevanceEvaluator(judged, measures).evaluate(run)

        for name, by_format in paths.items():
            if "trec" in by_format:
                jobs[("pytrec_eval", name, "TREC")] = (
                    lambda p=by_format["trec"], j=judged_of[name]: pytrec(p, j)
                )
    if "ranx" in tools:
        import warnings

        import ranx

        warnings.simplefilter("ignore")  # numba's notes on casts, once per compiled metric
        import pandas

        # ranx wants object-dtype id columns; pandas 3 reads strings as "str"
        with contextlib.suppress(KeyError, pandas.errors.OptionError):
            pandas.set_option("future.infer_string", False)

        names = ["ndcg@10", "map", "recall@100", "mrr@10", "precision@5"]
        # (numba compiles on the first call: not timed)
        ranx.evaluate(ranx.Qrels({"0": {"d": 1}}), ranx.Run({"0": {"d": 1.0}}), names)
        for name, by_format in paths.items():
            ranx_qrels = ranx.Qrels(judged_of[name])
            if "trec" in by_format:
                jobs[("ranx", name, "TREC")] = lambda p=by_format["trec"], q=ranx_qrels: (
                    ranx.evaluate(
                        q, ranx.Run.from_file(str(p), kind="trec"), names, make_comparable=True
                    )
                )
            if name in ("regular", "repeats", "by doc id", TITLES):  # (ranx reads no folder)
                jobs[("ranx", name, "Parquet")] = lambda p=by_format["parquet"], q=ranx_qrels: (
                    ranx.evaluate(
                        q,
                        ranx.Run.from_parquet(str(p), q_id_col="query_id"),
                        names,
                        make_comparable=True,  # the run holds queries the qrels do not
                    )
                )
    times: dict[tuple[str, str, str], list[float]] = {key: [] for key in jobs}
    refused: dict[tuple[str, str, str], str] = {}
    for round_ in range(rounds + 1):  # the first round warms up (numba compiles) untimed
        for key, job in jobs.items():
            if key in refused:
                continue
            start = time.perf_counter()
            try:
                job()
            except AssertionError:  # pytrec_eval's parse_run asserts that no doc repeats
                refused[key] = "refused (a doc twice in a query)"
                continue
            except Exception as error:  # a comment or blank line its reader does not skip
                refused[key] = f"cannot read it ({type(error).__name__})"
                continue
            if round_:
                times[key].append(time.perf_counter() - start)
    return {key: refused.get(key) or statistics.median(v) for key, v in times.items()}


def _qrels_of(queries: np.ndarray, docs: np.ndarray) -> Callable[[str], rm.Qrels]:
    """The qrels of each layout (from the run's columns, :func:`_columns`): the same
    judgments, under the URLs and the titles where the layout's ids are those; each made
    when first asked for (a fresh process needs one of the three)."""
    made: dict[str, rm.Qrels] = {}

    def of(name: str) -> rm.Qrels:
        kind = name if name in (LONG_IDS, TITLES) else "regular"
        if kind not in made:
            ids = _urls(queries) if kind == LONG_IDS else queries
            made[kind] = _qrels(ids, _titles(docs) if kind == TITLES else docs)
        return made[kind]

    return of


def _fresh(folder: Path, n_queries: int, cell: tuple[str, str], calls: int) -> float | None:
    """The median of ``calls`` calls of one cell's job, after an untimed one, in a process of
    its own (this script, run with ``--child``); None where the job is refused."""
    command = [
        sys.executable,
        __file__,
        "--child",
        str(folder),
        "--queries",
        str(n_queries),
        "--calls",
        str(calls),
        "--cell",
        "\t".join(cell),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"the job {cell} failed:\n{done.stderr}")
    answer = done.stdout.split()[-1]
    return None if answer == "refused" else float(answer)


def _child(folder: Path, n_queries: int, cell: str, calls: int) -> None:
    """One cell's job, timed in this process (see :func:`_fresh`)."""
    name, source = cell.split("\t")
    paths = json.loads((folder / "paths.json").read_text())
    kind, how = SOURCES[source]
    queries, docs, _ = _columns(n_queries)
    job = _job(_qrels_of(queries, docs)(name), Path(paths[name][kind]), how)
    if _time(job) is None:
        print("refused")
        return
    print(statistics.median(_time(job) or 0.0 for _ in range(calls)))


def _chosen(text: str, known: list[str], what: str, parser: argparse.ArgumentParser) -> list[str]:
    """The comma-separated names of ``text`` (all of ``known`` when empty), each checked; a
    name that holds a comma itself ("written by DuckDB, shuffled") is read whole."""
    if not text.strip():
        return known
    names: list[str] = []
    unknown: list[str] = []
    current = ""
    for part in text.split(","):
        current = f"{current},{part}" if current else part.strip()
        if current in known:
            names.append(current)
            current = ""
        elif not any(name.startswith(current + ",") for name in known):
            unknown.append(current)
            current = ""
    if current:
        unknown.append(current)
    if unknown:
        parser.error(f"unknown {what} {unknown}; the script has {known}")
    return names or known


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tools", default="pytrec_eval,ranx", help="others to time ('' for none)")
    parser.add_argument(
        "--layouts",
        default="",
        help="only these layouts, beside the regular one (comma-separated; '' for all), "
        "e.g. 'by doc id' for a large run",
    )
    parser.add_argument(
        "--sources", default="", help=f"only these columns (comma-separated of {list(SOURCES)})"
    )
    parser.add_argument(
        "--fresh", action="store_true", help="time each cell of each round in a fresh process"
    )
    parser.add_argument("--calls", type=int, default=3, help="timed calls a fresh process")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--cell", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.queries, args.cell, args.calls)
        return
    names = _chosen(args.layouts, [*BASE, *VARIANTS], "layouts", parser)
    sources = {
        name: SOURCES[name] for name in _chosen(args.sources, list(SOURCES), "sources", parser)
    }
    missing = [
        v
        for v, module in ((POLARS, "polars"), (DUCKDB, "duckdb"))
        if v in names and find_spec(module) is None
    ]
    if missing:
        print(f"(left out, their writer is not installed: {missing})")
    variants = [name for name in VARIANTS if name in names and name not in missing]
    queries, docs, scores = _columns(args.queries)
    qrels_of = _qrels_of(queries, docs)

    with tempfile.TemporaryDirectory() as folder:
        layouts = {
            k: v for k, v in _layouts(queries, docs, scores).items() if k == "regular" or k in names
        }
        paths = _write(Path(folder), layouts, variants)
        (Path(folder) / "paths.json").write_text(
            json.dumps({name: {k: str(p) for k, p in by.items()} for name, by in paths.items()})
        )
        cells = [
            (name, source)
            for name, by_format in paths.items()
            for source, (kind, _) in sources.items()
            if kind in by_format
        ]
        times: dict[tuple[str, str], list[float | None]] = {key: [] for key in cells}
        if args.fresh:
            for _ in range(args.rounds):
                for key in cells:
                    times[key].append(_fresh(Path(folder), args.queries, key, args.calls))
        else:
            jobs = {
                (name, source): _job(
                    qrels_of(name), paths[name][SOURCES[source][0]], SOURCES[source][1]
                )
                for name, source in cells
            }
            for job in jobs.values():  # a first call of each, untimed (imports, thread pools)
                _time(job)
            for _ in range(args.rounds):
                for key, job in jobs.items():
                    times[key].append(_time(job))
        medians = {
            key: None if None in values else statistics.median(v for v in values if v is not None)
            for key, values in times.items()
        }
        tools = [t for t in args.tools.split(",") if t]
        others = _others(tools, qrels_of, paths, args.rounds) if tools else {}
    how_timed = (
        f"each round's cell in a fresh process (median of {args.calls} calls)"
        if args.fresh
        else "every job in this one process"
    )
    print(
        f"{args.queries} queries x 100 docs, {METRICS}, median of {args.rounds} rounds, {how_timed}"
    )
    print("seconds, and the ratio to the regular layout of the same source\n")
    print(f"{'the same run, but':<36}" + "".join(f"{s:>17}" for s in sources))
    for name in paths:
        cells = []
        for source in sources:
            if (name, source) not in medians:
                cells.append("")
                continue
            median, base = medians[(name, source)], medians[("regular", source)]
            if median is None or base is None:
                cells.append("refused")
            else:
                cells.append(f"{median:.3f} {median / base:4.2f}x")
        print(f"{name:<36}" + "".join(f"{c:>17}" for c in cells))
    if others:
        print("\nthe other libraries on the same files: seconds, and their time / ours")
        for (tool, name, source), seconds in others.items():
            ours = medians[(name, source)]
            if isinstance(seconds, str):
                print(f"{tool:<12} {name:<28} {source:<8} {seconds}")
                continue
            ratio = f"{seconds / ours:5.1f}x" if ours else ""
            print(f"{tool:<12} {name:<28} {source:<8} {seconds:7.3f} s {ratio}")


if __name__ == "__main__":
    main()
