"""Side-by-side speed of ragmetrics, pytrec_eval and ranx on the same six metrics.

Generates a named workload shaped like users' data (``--workloads``; by default the realistic
``msmarco`` and ``rag``; ``deep`` and ``toy`` on request, see ``WORKLOADS``), then times, for each tool in a fresh subprocess, the whole job from Python dicts
(construction included), from TREC files (parsing included) and from Parquet files with
ranx's columns (reading included; pytrec_eval builds its dicts from the same files, ranx reads
them itself). Prints medians, ratios and
the peak memory each job added on top of the generated data.

    python benchmarks/bench_metrics.py                       # msmarco and rag, 100,000 queries
    python benchmarks/bench_metrics.py --workloads deep,toy --sources trec,parquet

ranx compiles with numba on first use; its timings are warm (one small call compiles first),
and the compile time is printed separately.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

OURS = ["precision@10", "recall@100", "ndcg@10", "map@100", "mrr@10", "hit_rate@10"]
PYTREC = {"P_10", "recall_100", "ndcg_cut_10", "map_cut_100", "recip_rank", "success_10"}
DEPTH = 100


WORKLOADS = {
    "msmarco": "ids from 8.8M numeric passage ids (MS MARCO's corpus), 100 deep, 1-4 relevant",
    "rag": "UUID4 chunk ids (LlamaIndex / LangChain node ids), 20 deep, graded 1..5 qrels",
    "deep": "10,000 queries x 1,000 results with tied scores (as TREC runs have), ids from 500k",
    "toy": "ids from a 2,000-doc vocabulary, 100 deep, 1-20 relevant (earlier README figures)",
}
DEPTHS = {"msmarco": 100, "rag": 20, "deep": 1000, "toy": 100}


def generate(n_queries: int, seed: int = 13, workload: str = "toy") -> tuple[dict, dict]:
    """Qrels and a run shaped like a user's data (see ``WORKLOADS``)."""
    if workload == "toy":
        return _toy(n_queries, seed)
    rng = random.Random(seed)
    depth = DEPTHS[workload]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_queries):
        qid = f"q{q}" if workload != "msmarco" else str(rng.randrange(1_000_000, 2_000_000))
        if workload == "msmarco":
            relevant = [str(rng.randrange(8_841_823)) for _ in range(rng.randint(1, 4))]
            judged = dict.fromkeys(relevant, 1)
            pool = [str(rng.randrange(8_841_823)) for _ in range(depth)]
        elif workload == "rag":
            pool = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(depth)]
            outside = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(5)]
            judged = {d: rng.randint(1, 5) for d in rng.sample(pool, 8) + outside}
        else:  # deep
            pool = [f"doc{rng.randrange(500_000)}" for _ in range(depth)]
            judged = {d: rng.randint(0, 3) for d in rng.sample(pool, 40)}
            judged.update({f"doc{rng.randrange(500_000)}": rng.randint(0, 3) for _ in range(20)})
        if workload == "msmarco":  # a relevant passage is retrieved about half the time
            for doc in relevant:
                if rng.random() < 0.5:
                    pool[rng.randrange(depth)] = doc
        if workload == "deep":  # scores on a coarse grid: many ties, broken by doc id
            scores = {d: round(rng.random() * 20) / 20 for d in pool}
        else:
            scores = {d: rng.random() for d in pool}
        qrels[qid] = judged
        run[qid] = scores
    return qrels, run


def _toy(n_queries: int, seed: int) -> tuple[dict, dict]:
    """Graded qrels (1-20 relevant docs, grades 1-3, plus judged non-relevant) and a run."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_queries):
        qid = f"q{q}"
        n_rel = rng.randint(1, 20)
        judged = {f"d{rng.randrange(2000)}": rng.randint(0, 3) for _ in range(n_rel * 2)}
        for doc in list(judged)[:n_rel]:
            judged[doc] = max(judged[doc], 1)
        qrels[qid] = judged
        docs = rng.sample(range(2000), DEPTH)
        run[qid] = {f"d{d}": rng.random() for d in docs}
    return qrels, run


def write_trec(qrels: dict, run: dict, folder: Path, scores: str = "fixed") -> tuple[Path, Path]:
    """The qrels and the run as TREC files; scores ``fixed`` (``%.6f``, as most tools write
    them) or ``repr`` (Python's ``str(score)``: up to 17 digits)."""
    qpath, rpath = folder / "qrels.txt", folder / "run.txt"
    form = "{:.6f}" if scores == "fixed" else "{!r}"
    with open(qpath, "w") as handle:
        for q, docs in qrels.items():
            handle.writelines(f"{q} 0 {d} {g}\n" for d, g in docs.items())
    with open(rpath, "w") as handle:
        for q, docs in run.items():
            ranked = sorted(docs.items(), key=lambda item: -item[1])
            handle.writelines(
                f"{q} Q0 {d} {i} {form.format(s)} bench\n" for i, (d, s) in enumerate(ranked, 1)
            )
    return qpath, rpath


def write_parquet(qrels: dict, run: dict, folder: Path) -> None:
    """The same data as Parquet, with ranx's column names (q_id, doc_id, score)."""
    import pyarrow
    import pyarrow.parquet

    for name, data in (("qrels", qrels), ("run", run)):
        columns: dict[str, list] = {"q_id": [], "doc_id": [], "score": []}
        for q, docs in data.items():
            columns["q_id"] += [q] * len(docs)
            columns["doc_id"] += list(docs)
            columns["score"] += list(docs.values())
        pyarrow.parquet.write_table(pyarrow.table(columns), folder / f"{name}.parquet")


def _dicts_from_parquet(path: Path, kind: type) -> dict:
    """pytrec_eval's input built from a Parquet file: the work a pytrec_eval user does."""
    import pyarrow.parquet

    table = pyarrow.parquet.read_table(path).to_pydict()
    out: dict[str, dict] = {}
    for q, d, s in zip(table["q_id"], table["doc_id"], table["score"]):
        out.setdefault(q, {})[d] = kind(s)
    return out


# --- one job per subprocess ---------------------------------------------------------------


def _memory() -> tuple[int, int]:
    """(current RSS, peak RSS) in bytes, from /proc."""
    fields = {}
    with open("/proc/self/status") as handle:
        for line in handle:
            key, _, value = line.partition(":")
            fields[key] = value
    return int(fields["VmRSS"].split()[0]) * 1024, int(fields["VmHWM"].split()[0]) * 1024


def _reset_peak() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        pass


def _touch_memory(megabytes: int) -> None:
    """Write and free ``megabytes`` of memory: on a virtual machine the first write to memory
    the guest has never used is slow, and a first call would otherwise pay it."""
    if megabytes > 0:
        block = bytearray(megabytes << 20)
        block[::4096] = b"x" * len(range(0, len(block), 4096))
        del block


def job(
    tool: str,
    source: str,
    n_queries: int,
    repeat: int,
    folder: str,
    touch_mb: int = 0,
    workload: str = "toy",
) -> dict:
    # the dicts live only in the jobs that read them: ten million objects in the heap would
    # slow every other job's garbage collector
    qrels_dict, run_dict = generate(n_queries, workload=workload) if source == "dict" else ({}, {})
    _touch_memory(touch_mb)
    qpath, rpath = Path(folder) / "qrels.txt", Path(folder) / "run.txt"
    compile_seconds = None
    if tool == "ragmetrics":
        import ragmetrics as rm

        def once() -> dict:
            if source == "dict":
                qrels, run = rm.Qrels.from_dict(qrels_dict), rm.Run.from_dict(run_dict)
            elif source == "parquet":
                qrels = rm.Qrels.from_parquet(Path(folder) / "qrels.parquet")
                run = rm.Run.from_parquet(Path(folder) / "run.parquet")
            else:
                qrels, run = rm.Qrels.from_trec(qpath), rm.Run.from_trec(rpath)
            return rm.evaluate(qrels, run, OURS).aggregate

    elif tool == "pytrec_eval":
        import pytrec_eval

        def once() -> dict:
            if source == "dict":
                qrels, run = qrels_dict, run_dict
            elif source == "parquet":
                qrels = _dicts_from_parquet(Path(folder) / "qrels.parquet", int)
                run = _dicts_from_parquet(Path(folder) / "run.parquet", float)
            else:
                with open(qpath) as qf, open(rpath) as rf:
                    qrels, run = pytrec_eval.parse_qrel(qf), pytrec_eval.parse_run(rf)
            per_query = pytrec_eval.RelevanceEvaluator(qrels, PYTREC).evaluate(run)
            keys = next(iter(per_query.values())).keys()
            return {k: statistics.fmean(v[k] for v in per_query.values()) for k in keys}

    elif tool == "ranx":
        import ranx

        small_q, small_r = generate(50, seed=1)
        started = time.perf_counter()
        ranx.evaluate(ranx.Qrels(small_q), ranx.Run(small_r), OURS)
        compile_seconds = time.perf_counter() - started

        def once() -> dict:
            if source == "dict":
                qrels, run = ranx.Qrels(qrels_dict), ranx.Run(run_dict)
            elif source == "parquet":
                import pandas

                # ranx wants object-dtype id columns; pandas 3 reads strings as "str"
                with contextlib.suppress(KeyError, pandas.errors.OptionError):
                    pandas.set_option("future.infer_string", False)
                qrels = ranx.Qrels.from_parquet(str(Path(folder) / "qrels.parquet"))
                run = ranx.Run.from_parquet(str(Path(folder) / "run.parquet"))
            else:
                qrels = ranx.Qrels.from_file(str(qpath), kind="trec")
                run = ranx.Run.from_file(str(rpath), kind="trec")
            return dict(ranx.evaluate(qrels, run, OURS))

    else:
        raise SystemExit(f"unknown tool {tool}")

    _reset_peak()
    baseline, _ = _memory()
    times, first, values = [], None, {}
    for i in range(repeat):
        started = time.perf_counter()
        values = once()
        elapsed = time.perf_counter() - started
        times.append(elapsed)
        if i == 0:
            first = elapsed
    _, peak = _memory()
    return {
        "tool": tool,
        "source": source,
        "median": statistics.median(times),
        "first": first,
        "times": times,
        "peak_added_mb": (peak - baseline) / 2**20,
        "compile": compile_seconds,
        "values": {k: float(v) for k, v in values.items()},
    }


# --- driver --------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--queries", type=int, default=None, help="default: 100,000 (10,000 for deep)"
    )
    parser.add_argument(
        "--workloads",
        default="msmarco,rag",
        help="comma-separated, of: "
        + "; ".join(f"{name} ({what})" for name, what in WORKLOADS.items()),
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tools", default="ragmetrics,pytrec_eval,ranx")
    parser.add_argument("--sources", default="dict,trec", help="dict, trec and/or parquet")
    parser.add_argument(
        "--trec-scores",
        choices=["fixed", "repr"],
        default="fixed",
        help="how the TREC run writes scores: %%.6f, or Python's repr (up to 17 digits)",
    )
    parser.add_argument(
        "--touch-mb",
        type=int,
        default=0,
        help="write and free this much memory in each job before timing (a virtual machine's "
        "first write to memory it never used is slow; this takes that out of first calls)",
    )
    parser.add_argument(
        "--job", nargs=3, metavar=("TOOL", "SOURCE", "FOLDER"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.job:
        tool, source, folder = args.job
        queries = args.queries or (10_000 if args.workloads == "deep" else 100_000)
        print(
            json.dumps(
                job(tool, source, queries, args.repeat, folder, args.touch_mb, args.workloads)
            )
        )
        return
    for workload in args.workloads.split(","):
        if workload not in WORKLOADS:
            raise SystemExit(f"unknown workload {workload!r}; choose from {', '.join(WORKLOADS)}")
        queries = args.queries or (10_000 if workload == "deep" else 100_000)
        print(f"\n== workload {workload}: {WORKLOADS[workload]}", file=sys.stderr)
        report(_run_workload(args, workload, queries), queries, workload)


def job_command(
    tool: str,
    source: str,
    folder: str,
    queries: int,
    workload: str,
    repeat: int,
    touch_mb: int = 0,
) -> list[str]:
    """The command that runs one tool's job on one source in a fresh process; it prints the
    job's result as its last line (JSON, see ``job``)."""
    flags = ["--queries", str(queries), "--workloads", workload, "--repeat", str(repeat)]
    flags += ["--touch-mb", str(touch_mb), "--job", tool, source, folder]
    return [sys.executable, __file__, *flags]


def _run_workload(args: argparse.Namespace, workload: str, queries: int) -> list[dict]:
    with tempfile.TemporaryDirectory() as folder:
        qrels, run = generate(queries, workload=workload)
        if {"dict", "trec"} & set(args.sources.split(",")):
            write_trec(qrels, run, Path(folder), args.trec_scores)
        if "parquet" in args.sources.split(","):
            write_parquet(qrels, run, Path(folder))
        del qrels, run
        results = []
        for source in args.sources.split(","):
            for tool in args.tools.split(","):
                command = job_command(
                    tool, source, folder, queries, workload, args.repeat, args.touch_mb
                )
                done = subprocess.run(command, capture_output=True, text=True, env=os.environ)
                if done.returncode != 0:
                    print(f"{tool}/{source} failed:\n{done.stderr[-2000:]}", file=sys.stderr)
                    continue
                results.append(json.loads(done.stdout.strip().splitlines()[-1]))
                r = results[-1]
                print(f"  {tool:<12} {source:<5} median {r['median']:.2f}s", file=sys.stderr)
    return results


def report(results: list[dict], n_queries: int, workload: str = "toy") -> None:
    print(
        f"\nworkload {workload}: {n_queries:,} queries x {DEPTHS[workload]} results "
        f"({WORKLOADS[workload]}); metrics: {', '.join(OURS)}"
    )
    print("times: median of the repeats; ratio = other tool's median / ragmetrics' median\n")
    header = (
        f"{'source':<6} {'tool':<12} {'median s':>9} {'first s':>8} {'ratio':>7} {'peak MB':>8}"
    )
    print(header)
    print("-" * len(header))
    for source in ("dict", "trec", "parquet"):
        ours = next(
            (r for r in results if r["tool"] == "ragmetrics" and r["source"] == source), None
        )
        for r in (r for r in results if r["source"] == source):
            ratio = r["median"] / ours["median"] if ours else float("nan")
            print(
                f"{source:<6} {r['tool']:<12} {r['median']:>9.2f} {r['first']:>8.2f} "
                f"{ratio:>6.1f}x {r['peak_added_mb']:>8.0f}"
            )
    for r in results:
        if r["compile"] is not None and r["source"] == "dict":
            print(f"\nranx numba compile (excluded above): {r['compile']:.1f}s")
    # the values agree where the definitions agree (pytrec_eval has no rank cutoff on RR)
    ours = next((r for r in results if r["tool"] == "ragmetrics"), None)
    theirs = next((r for r in results if r["tool"] == "pytrec_eval"), None)
    if ours and theirs:
        pairs = {
            "precision@10": "P_10",
            "recall@100": "recall_100",
            "ndcg@10": "ndcg_cut_10",
            "map@100": "map_cut_100",
            "hit_rate@10": "success_10",
        }
        worst = max(abs(ours["values"][a] - theirs["values"][b]) for a, b in pairs.items())
        print(f"largest difference from pytrec_eval on the shared metrics: {worst:.2e}")


if __name__ == "__main__":
    main()
