"""The ``ragmetrics`` command line.

Exit codes: 0 success; 2 for every user error (an unknown option or metric, a bad value, a
missing, unreadable or malformed file), printed as one line on stderr without a traceback;
141 when the reader of the output went away (``| head``).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from ragmetrics._util.paths import file_stem
from ragmetrics._util.plugins import load_plugins
from ragmetrics._version import __version__
from ragmetrics.cli import _trec_eval as trec_eval
from ragmetrics.data._precision import SCORE_PRECISIONS
from ragmetrics.errors import InputFormatError, RagMetricsError
from ragmetrics.formats._rules import ascii_int, cli_float, cli_int

# argparse, json and pathlib are loaded by the commands that use them: ``trec_eval`` reads
# its own options and writes text, and the three cost it 7 ms of every call
if TYPE_CHECKING:  # loaded by the commands that read files: --version and --help need neither
    import argparse

    from ragmetrics.data._qrels import Qrels
    from ragmetrics.data._run import Run

__all__ = [
    "build_parser",
    "console",
    "grade_map_argument",
    "main",
    "metric_names",
    "named_runs",
    "read_qrels",
    "read_run",
    "read_segments",
]


def _formats(kind: str) -> tuple[str, ...]:
    """The --format choices: "table" (the text format) and every registered output format
    that renders a ``kind`` (result or comparison), plug-ins' included."""
    from ragmetrics.output import renderers

    names = [n for n, r in renderers().items() if n != "text" and getattr(r, kind) is not None]
    return ("table", *names)


_SEGMENTS_HELP = (
    "also print each metric per segment of the queries (and, for compare, each pair's test "
    "within each segment): a JSON object {query_id: segment}, or lines 'query_id segment'"
)


def read_segments(path: str) -> dict[str, str]:
    """A segments file: a JSON object ``{query_id: segment}``, or one ``query_id segment``
    per line (tabs or spaces; ``#`` lines and blank lines skipped)."""
    import json
    from pathlib import Path

    text = Path(path).read_text(encoding="utf-8-sig")
    if text.lstrip().startswith("{"):
        loaded = json.loads(text)
        if not all(isinstance(k, str) and isinstance(v, (str, int)) for k, v in loaded.items()):
            raise InputFormatError(f"{path}: segments JSON maps query ids to segment names.")
        return {k: str(v) for k, v in loaded.items()}
    segments: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split(maxsplit=1)
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) != 2:
            raise InputFormatError(
                f"{path}, line {number}: expected 'query_id segment', got {line[:200]!r}."
            )
        if segments.get(fields[0], fields[1].strip()) != fields[1].strip():
            raise InputFormatError(
                f"{path}, line {number}: query {fields[0]!r} is in two segments, "
                f"{segments[fields[0]]!r} and {fields[1].strip()!r}."
            )
        segments[fields[0]] = fields[1].strip()
    return segments


def read_qrels(path: str) -> Qrels:
    """Read qrels in any registered format (TREC, JSON/JSONL, Parquet; by suffix or content)."""
    from ragmetrics.data._files import read_qrels as read

    return read(path)


def read_run(path: str) -> Run:
    """Read a run in any registered format (TREC, JSON/JSONL, Parquet; by suffix or content)."""
    from ragmetrics.data._files import read_run as read

    return read(path)


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("qrels", metavar="QRELS", help="judgments: TREC qrels file or JSON/JSONL")
    parser.add_argument(
        "-m",
        "--metric",
        dest="metrics",
        action="append",
        required=True,
        metavar="NAME",
        help="a metric such as ndcg@10, P_5, mrr, ra_nwg@5 (repeat, or separate with "
        "commas: -m ndcg@10,P_5; `ragmetrics metrics` lists them)",
    )
    from ragmetrics.metrics.registry import keyword_params

    for param in keyword_params().values():  # one flag per registered metric parameter
        flags = [param.cli_flag] + ([param.short_flag] if param.short_flag else [])
        parser.add_argument(
            *flags,
            dest=f"param_{param.keyword}",
            type=cli_int if param.kind is int else cli_float if param.kind is float else str,
            default=None,
            metavar="N" if param.kind is int else "X" if param.kind is float else "VALUE",
            help=f"{param.meaning} (default {param.default}; every metric whose name "
            f"does not set {param.name})",
        )
    parser.add_argument(
        "--missing",
        choices=("zero", "skip", "error"),
        default="zero",
        help="judged queries with no ranking: score 0 (default), leave out as trec_eval "
        "does, or fail",
    )
    parser.add_argument(
        "--score-precision",
        choices=SCORE_PRECISIONS,
        default="float64",
        help="compare scores as 64-bit doubles (default, as trec_eval 10) or rounded to "
        "32-bit floats (as trec_eval <= 9 and pytrec_eval): scores equal in float32 tie",
    )
    parser.add_argument(
        "--grade-map",
        type=grade_map_argument,
        metavar="G:U,...",
        help="map the qrels' grades onto utility grades 1..5 for the RAG set metrics, "
        "e.g. 0:1,1:3,2:4,3:5 for TREC 0-3 (every grade of the qrels must be mapped)",
    )
    parser.add_argument(
        "--nuggets",
        metavar="FILE",
        help="nuggets (JSON or JSONL: query id, nugget id, text, vital, supporting doc ids) "
        "for nugget_recall@k, vital_recall@k, weighted_nugget_recall@k, sufficiency@k and "
        "sufficient_k",
    )


def _add_testing(parser: argparse.ArgumentParser) -> None:
    """The options of the paired tests, shared by compare and report."""
    from ragmetrics.analysis.stats import corrections, paired_tests

    parser.add_argument(
        "--pool", metavar="RUN", help="candidate run for PROC@k (RAG set metrics), for every run"
    )
    parser.add_argument(
        "--baseline", metavar="NAME", help="test every run against this one (default: all pairs "
        "for compare, the first run for report)"
    )  # fmt: skip
    parser.add_argument(
        "--test",
        choices=tuple(paired_tests()),
        default="randomization",
        help="the paired test (default: randomization, exact enough with 10,000 permutations)",
    )
    parser.add_argument(
        "--alpha", type=cli_float, default=0.05, help="significance level (default 0.05)"
    )
    parser.add_argument(
        "--correction",
        choices=tuple(corrections()),
        default="holm",
        help="correct the p-values of each metric's tests for their number (default holm; "
        "holm-sidak and bonferroni bound the family-wise error, bh and by the false "
        "discovery rate)",
    )
    parser.add_argument(
        "--permutations",
        type=cli_int,
        default=10_000,
        help="permutations of the randomization test, resamples of the bootstrap test",
    )
    parser.add_argument(
        "--seed", type=cli_int, default=0, help="random seed: the same seed gives the same p-values"
    )


def grade_map_argument(text: str) -> dict[int, int]:
    """``0:1,1:3,2:4,3:5`` as ``{0: 1, 1: 3, 2: 4, 3: 5}``."""
    import argparse

    mapping: dict[int, int] = {}
    for item in text.split(","):
        grade, sep, utility = item.partition(":")
        pair = (ascii_int(grade), ascii_int(utility))
        if not sep or pair[0] is None or pair[1] is None:
            raise argparse.ArgumentTypeError(
                f"{item!r} is not GRADE:UTILITY; write e.g. 0:1,1:3,2:4,3:5"
            )
        mapping[pair[0]] = pair[1]
    return mapping


def _options(args: argparse.Namespace) -> dict[str, Any]:
    """The keywords of evaluate() that every command shares."""
    from ragmetrics.metrics.registry import keyword_params

    params = {
        keyword: getattr(args, f"param_{keyword}")
        for keyword in keyword_params()
        if getattr(args, f"param_{keyword}", None) is not None
    }
    nuggets = None
    if getattr(args, "nuggets", None):
        from ragmetrics.data._nuggets import Nuggets

        nuggets = Nuggets.from_json(args.nuggets)
    return {
        **params,
        "missing": args.missing,
        "score_precision": args.score_precision,
        "grade_map": args.grade_map,
        **({"nuggets": nuggets} if nuggets is not None else {}),
    }


def build_parser() -> argparse.ArgumentParser:
    import argparse

    load_plugins()  # their metrics, tests, methods and formats become choices and names

    class Parser(argparse.ArgumentParser):
        """argparse, with a user's error in two lines on stderr (a one-line usage, then
        the error) and exit 2, for every subcommand (subparsers take the parent's class)."""

        def error(self, message: str) -> NoReturn:
            # argparse's usage, its optional parts left out, on one line
            usage = re.sub(r"\s+", " ", self.format_usage()).strip()
            while (shorter := re.sub(r" \[[^\[\]]*\]", "", usage)) != usage:
                usage = shorter
            usage = usage.replace("usage: ", "", 1).replace(" ...", "")
            self.exit(
                2, f"usage: {usage} [options] (-h lists them)\n{self.prog}: error: {message}\n"
            )

    parser = Parser(
        prog="ragmetrics",
        description="Retrieval evaluation for RAG, exact against trec_eval.",
        epilog="Examples:\n  ragmetrics evaluate qrels.txt run.txt -m ndcg@10 -m recall@100\n"
        "  ragmetrics evaluate qrels.json run.json -m ra_nwg@5 --per-query --format json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"ragmetrics {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    evaluate = commands.add_parser(
        "evaluate",
        help="score one run against qrels",
        description="Score one run against qrels and print the means (and per-query values).",
    )
    _add_common(evaluate)
    evaluate.add_argument("run", metavar="RUN", help="results: TREC run file or JSON/JSONL")
    evaluate.add_argument(
        "--pool", metavar="RUN", help="candidate run for PROC@k (RAG set metrics)"
    )
    evaluate.add_argument(
        "--per-query", action="store_true", help="also print every query's values"
    )
    evaluate.add_argument(
        "--format", choices=_formats("result"), default="table", help="output format"
    )
    evaluate.add_argument("--stream", action="store_true", help=_STREAM_HELP)
    evaluate.add_argument(
        "--workers",
        type=cli_int,
        default=1,
        metavar="N",
        help="with --stream: N processes share the run (a TREC file, plain or gzip, cut at "
        "query boundaries; Parquet by row groups); the same numbers as one",
    )
    evaluate.add_argument("--segments", metavar="FILE", help=_SEGMENTS_HELP)
    tracing = evaluate.add_argument_group(
        "traces (a RUN of OpenTelemetry spans under the OpenInference conventions, or of "
        "LangSmith runs: see docs/traces.md)"
    )
    tracing.add_argument(
        "--stage",
        help="score one stage: a retriever's class or span name, a LangGraph node, or "
        "'rerank' (default: the top-level retrievals)",
    )
    tracing.add_argument(
        "--policy",
        help="how a question's several searches become its ranking: 'latest' (default) or "
        "'union' (first seen, each doc once: an agent)",
    )
    tracing.add_argument(
        "--query-key", help="the metadata key holding the query id (default: query_id)"
    )
    tracing.add_argument(
        "--query-ids", metavar="FILE", help="a JSON object: question text -> query id"
    )
    tracing.add_argument(
        "--id-field", help="'id' (default: each document's id) or 'metadata:<key>'"
    )

    comparing = commands.add_parser(
        "compare",
        help="compare several runs with paired significance tests",
        description="Compare runs on the same qrels: means, significance marks, paired tests. "
        "Name a run with NAME=PATH; otherwise its file name is used.",
    )
    _add_common(comparing)
    comparing.add_argument("runs", metavar="RUN", nargs="+", help="two or more runs (TREC or JSON)")
    _add_testing(comparing)
    comparing.add_argument("--tests", action="store_true", help="also print every paired test")
    comparing.add_argument("--segments", metavar="FILE", help=_SEGMENTS_HELP)
    comparing.add_argument("--stream", action="store_true", help=_STREAM_HELP)
    comparing.add_argument(
        "--format", choices=_formats("comparison"), default="table", help="output format"
    )

    reporting = commands.add_parser(
        "report",
        help="write an HTML or markdown report comparing runs",
        description="Compare runs and write a self-contained report: tables, plots, worst queries.",
    )
    _add_common(reporting)
    reporting.add_argument(
        "runs", metavar="RUN", nargs="+", help="one or more runs (NAME=PATH or PATH)"
    )
    reporting.add_argument(
        "-o", "--output", required=True, help="report path ending in .html or .md"
    )
    _add_testing(reporting)
    reporting.add_argument("--title", default="Retrieval evaluation", help="the report's title")
    reporting.add_argument(
        "--worst", type=cli_int, default=5, help="diagnose this many worst queries"
    )
    reporting.add_argument(
        "--labels",
        help="where the grades came from, in words (default: the golden-set sidecar "
        "QRELS.json that GoldSet.save writes, when there is one)",
    )
    reporting.add_argument("--segments", metavar="FILE", help=_SEGMENTS_HELP)
    reporting.add_argument(
        "--human-qrels",
        metavar="FILE",
        help="people's grades for a random sample of the queries, when QRELS are an LLM's "
        "labels: the report adds intervals valid on LLM labels (prediction-powered)",
    )
    reporting.add_argument(
        "--dataset",
        metavar="FILE",
        help="a RetrievalDataset JSON (queries and corpus): the explorer shows the question "
        "and each document's text",
    )

    fusing = commands.add_parser(
        "fuse",
        help="fuse several runs into one (RRF, CombSUM, weighted sums, ...)",
        description="Fuse runs over the same queries into one run (hybrid retrieval). With "
        "--train, the method's parameters are first chosen on judged queries.",
        epilog="Examples:\n  ragmetrics fuse bm25.trec dense.trec -o hybrid.trec\n"
        "  ragmetrics fuse bm25.trec dense.trec --method wsum --weights 0.3,0.7 -o h.trec\n"
        "  ragmetrics fuse bm25.trec dense.trec --method wsum --train qrels.txt "
        "--metric ndcg@10 -o h.trec",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    fusing.add_argument(
        "runs", metavar="RUN", nargs="+", help="two or more runs (NAME=PATH or PATH)"
    )
    fusing.add_argument(
        "-o", "--output", required=True, help="the fused run: .trec/.txt, .json or .parquet"
    )
    fusing.add_argument(
        "--method", default="rrf", help="fusion method (default rrf); see docs/fusion.md"
    )
    fusing.add_argument(
        "--norm",
        default="min-max",
        help="score normalization per query: min-max (default), min-max-inverted, max, sum, "
        "zmuv, rank, borda, or none",
    )
    fusing.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a parameter of the method, e.g. --param k=60 (rrf), --param phi=0.8 (rbc)",
    )
    fusing.add_argument(
        "--weights", help="one weight per run, comma-separated, for weighted methods"
    )
    fusing.add_argument(
        "--train", metavar="QRELS", help="choose the parameters on these judged queries"
    )
    fusing.add_argument(
        "--metric", default="ndcg@10", help="what --train maximizes (default ndcg@10)"
    )
    fusing.add_argument("--depth", type=cli_int, help="keep each query's top DEPTH fused docs")
    fusing.add_argument("--tag", help="the run tag of a TREC output (default: fused)")

    trec_eval.add_parser(commands)

    agreement = commands.add_parser(
        "agreement",
        help="how far LLM labels agree with human labels (goldset.audit)",
        description="Weighted kappa, Krippendorff's alpha, the confusion matrix and grade "
        "prevalence of two labelings on 1..5, on the pairs both grade; with runs, each run's "
        "RA-nWG@k under both and Kendall's tau of the two orders.",
    )
    agreement.add_argument("llm_qrels", metavar="LLM_QRELS", help="the LLM's labels (1..5)")
    agreement.add_argument(
        "human_qrels",
        metavar="HUMAN_QRELS",
        help="human labels: qrels on 1..5, or a filled-in review file (.csv, .jsonl)",
    )
    agreement.add_argument(
        "--run",
        action="append",
        default=[],
        metavar="RUN",
        help="a run to rank under both (repeat)",
    )
    agreement.add_argument("-k", type=cli_int, default=10, help="the cutoff of RA-nWG for the runs")
    agreement.add_argument(
        "--format", choices=("markdown", "json"), default="markdown", help="output format"
    )

    metrics = commands.add_parser("metrics", help="list the metrics and their aliases")
    metrics.add_argument(
        "--format", choices=("table", "json"), default="table", help="output format"
    )
    return parser


def _testing(args: argparse.Namespace) -> dict[str, Any]:
    """The keywords of compare() set by the testing options."""
    return {
        "baseline": args.baseline,
        "test": args.test,
        "alpha": args.alpha,
        "correction": None if args.correction == "none" else args.correction,
        "n_permutations": args.permutations,
        "seed": args.seed,
        "pool": read_run(args.pool) if args.pool else None,
    }


_STREAM_HELP = (
    "read each run in batches of whole queries, in bounded memory (TREC, .gz or Parquet; a "
    "run not grouped by query is grouped through a temporary file; see docs/scale.md)"
)


def _streamable(path: str) -> str:
    """A run path for streaming: a format with a streaming reader (TREC, Parquet), not JSON."""
    from pathlib import Path

    from ragmetrics.data._files import find_format

    spec = find_format(path)
    if spec.stream_run is None:
        raise RagMetricsError(
            f"{path}: --stream reads formats with a streaming reader (TREC, Parquet), not "
            f"{spec.name.upper()}; drop --stream for {spec.name.upper()}."
        )
    if path != "-" and not Path(path).exists():
        raise RagMetricsError(f"No such file: {path!r}.")
    return path


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from ragmetrics.engine._evaluation import evaluate
    from ragmetrics.engine.stream import evaluate_stream

    segments = _segments_first(args)
    qrels = read_qrels(args.qrels)
    pool = read_run(args.pool) if args.pool else None
    if args.workers < 1:
        raise RagMetricsError(f"--workers must be 1 or more; got {args.workers}.")
    if args.workers > 1 and not args.stream:
        raise RagMetricsError("--workers shares a streamed run: add --stream.")
    traces = _traces_of(args)
    if traces is not None:
        result = traces.evaluate(
            qrels,
            args.metrics,
            stage=args.stage,
            policy=args.policy or "latest",
            pool=pool,
            **_options(args),
        )
    elif args.stream:
        result = evaluate_stream(
            qrels,
            _streamable(args.run),
            args.metrics,
            per_query=args.per_query,
            pool=pool,
            workers=args.workers,
            **_options(args),
        )
    else:
        result = evaluate(qrels, read_run(args.run), args.metrics, pool=pool, **_options(args))
    fmt = args.format
    if fmt == "json":
        print(result.to_json(per_query=args.per_query))
    elif fmt == "csv":
        print(result.to_csv(per_query=args.per_query), end="")
    elif fmt == "markdown":
        print(result.to_markdown())
        if args.per_query:
            print()
            print(result.to_markdown(per_query=True).split("\n\n")[0])
    elif fmt == "table":
        print(result.to_table())
        if args.per_query:
            print()
            print(result.to_table(per_query=True).split("\n\n")[0])
    else:  # latex, html or a plug-in's format
        print(result.render(fmt))
    if segments is not None:
        from ragmetrics.analysis._segments import by_segment

        table = by_segment(result, segments)
        print()
        print(table.to_markdown() if fmt == "markdown" else table.to_table())
    return 0


_TRACE_OPTIONS = ("stage", "policy", "query_key", "query_ids", "id_field")


def _traces_of(args: argparse.Namespace) -> Any:
    """The run file read as traces (``TraceRetrievals``) when it holds spans or LangSmith
    runs, else None (and then no trace option may be set)."""
    import json
    from pathlib import Path

    from ragmetrics.adapters._traces import looks_like_traces, read_traces
    from ragmetrics.data._files import find_format

    given = [f"--{o.replace('_', '-')}" for o in _TRACE_OPTIONS if getattr(args, o) is not None]
    path = args.run
    head = b""
    if path != "-" and Path(path).is_file() and find_format(path).name == "json":
        with open(path, "rb") as handle:
            head = handle.read(1 << 16)
    if not looks_like_traces(head):
        if given:
            raise RagMetricsError(
                f"{', '.join(given)} apply to a run read from traces; {path} is not one."
            )
        return None
    if args.stream:
        raise RagMetricsError("--stream reads TREC and Parquet runs; traces are read whole.")
    query_ids = None
    if args.query_ids:
        try:
            query_ids = json.loads(Path(args.query_ids).read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise RagMetricsError(f"--query-ids {args.query_ids}: {error}") from None
        if not isinstance(query_ids, dict):
            raise RagMetricsError(
                f"--query-ids {args.query_ids}: a JSON object (question text -> query id)."
            )
    return read_traces(
        path,
        query_key=args.query_key or "query_id",
        query_ids=query_ids,
        id_field=args.id_field or "id",
    )


def _segments_first(args: argparse.Namespace) -> dict[str, str] | None:
    """The --segments file, read and checked before any evaluation (a bad file stops the
    command before it prints anything)."""
    if not getattr(args, "segments", None):
        return None
    if args.format not in ("table", "markdown"):
        raise InputFormatError(
            f"--segments prints tables: use --format table or markdown (not {args.format})."
        )
    return read_segments(args.segments)


def named_runs(specs: Sequence[str]) -> dict[str, Run]:
    """``NAME=PATH`` or ``PATH`` (named by its file stem) -> runs, in order."""
    return {name: read_run(path) for name, path in _named_paths(specs).items()}


def _named_paths(specs: Sequence[str]) -> dict[str, str]:
    """``NAME=PATH`` or ``PATH`` (named by its file stem) -> paths, in order."""
    from pathlib import Path

    paths: dict[str, str] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        # a file whose own path holds '=' is that file, not NAME=PATH
        if not sep or (Path(spec).exists() and not Path(path).exists()):
            name, path = file_stem(spec), spec  # as a run read from it is named
        if name in paths:
            raise RagMetricsError(f"Two runs are named {name!r}; name them with NAME=PATH.")
        paths[name] = path
    return paths


def _cmd_compare(args: argparse.Namespace) -> int:
    from ragmetrics.analysis._comparison import compare

    segments = _segments_first(args)
    comparison = compare(
        read_qrels(args.qrels),
        (
            {name: _streamable(path) for name, path in _named_paths(args.runs).items()}
            if args.stream
            else named_runs(args.runs)
        ),
        args.metrics,
        **_testing(args),
        **_options(args),
    )
    if args.format == "json":
        print(comparison.to_json())
    elif args.format == "markdown":
        print(comparison.to_markdown())
        if args.tests:
            print("\n" + comparison.tests_markdown())
    elif args.format != "table":  # latex, csv, html or a plug-in's format
        print(comparison.render(args.format))
    else:
        print(comparison.to_table())
        if args.tests:
            print("\n" + comparison.tests_markdown())
    if segments is not None:
        print("\n" + comparison.by_segment(segments).to_markdown())
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ragmetrics.analysis._comparison import compare
    from ragmetrics.report._report import write_report

    output = Path(args.output)
    if not output.parent.is_dir():  # before any work
        raise InputFormatError(
            f"Cannot write {args.output}: the folder {str(output.parent)!r} does not exist."
        )
    qrels = read_qrels(args.qrels)
    runs = named_runs(args.runs)
    if len(runs) == 1:  # a report of one run: compare it with itself to reuse the layout
        only = next(iter(runs.values()))
        runs = {**runs, f"{next(iter(runs))} (copy)": only}
    options = _options(args)
    testing = _testing(args)
    from ragmetrics.analysis.stats import paired_test

    if paired_test(testing["test"]).family is None:  # a test of all runs at once takes none
        testing["baseline"] = testing["baseline"] or next(iter(runs))
    segments = read_segments(args.segments) if args.segments else None
    human = read_qrels(args.human_qrels) if args.human_qrels else None
    dataset = None
    if args.dataset:
        from ragmetrics.data._dataset import RetrievalDataset

        dataset = RetrievalDataset.from_json(args.dataset)
    comparison = compare(
        qrels, runs, args.metrics, segments=segments, human_qrels=human, **testing, **options
    )
    options["pool"] = testing["pool"]
    path = write_report(
        comparison,
        args.output,
        qrels=qrels,
        runs=runs,
        title=args.title,
        worst=args.worst,
        inputs={"qrels": args.qrels, **dict(zip(runs, args.runs, strict=False))},
        labels=args.labels,
        dataset=dataset,
        **options,
    )
    print(f"wrote {path}")
    return 0


def _cmd_fuse(args: argparse.Namespace) -> int:
    import argparse
    import json
    from pathlib import Path

    from ragmetrics.fusion import fuse, optimize_fusion

    if args.depth is not None and args.depth < 1:
        raise InputFormatError(f"--depth must be 1 or more; got {args.depth}.")
    runs = named_runs(args.runs)
    norm = None if args.norm.lower() == "none" else args.norm
    params: dict[str, Any] = {}
    for item in args.param:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise InputFormatError(f"--param {item!r} is not NAME=VALUE; write e.g. --param k=60")
        number = ascii_int(text.strip())
        try:
            value: Any = number if number is not None else cli_float(text.strip())
        except (ValueError, TypeError, argparse.ArgumentTypeError):
            raise InputFormatError(
                f"--param {item!r}: {text.strip()!r} is not a number; write e.g. --param k=60"
            ) from None
        params[key.strip()] = value
    if args.weights:
        params["weights"] = [cli_float(w.strip()) for w in args.weights.split(",")]
    if args.train:
        chosen = optimize_fusion(
            read_qrels(args.train),
            runs,
            norm=norm,
            method=args.method,
            metric=args.metric,
            show_progress=sys.stderr.isatty(),
        )
        assert isinstance(chosen, dict)
        shown = {k: v for k, v in chosen.items() if k not in ("probs", "log_odds")}
        print(f"chosen on {args.train} ({args.metric}): {json.dumps(shown)}", file=sys.stderr)
        params = {**params, **chosen}
    fused = fuse(runs, method=args.method, norm=norm, params=params or None, name=args.tag)
    if args.depth is not None:
        fused = fused.truncate(args.depth)
    output = Path(args.output)
    if output.suffix == ".json":
        fused.to_json(output)
    elif output.suffix == ".parquet":
        fused.to_parquet(output)
    else:
        fused.to_trec(output, tag=args.tag or "fused")
    print(f"wrote {output} ({len(fused)} queries, {fused.n_results} results)", file=sys.stderr)
    return 0


def _cmd_metrics(args: argparse.Namespace) -> int:
    import json

    from ragmetrics.metrics import list_metrics
    from ragmetrics.output._tables import text_table

    listing = list_metrics()
    if args.format == "json":
        print(json.dumps(listing, indent=2))
        return 0
    rows: list[list[Any]] = [
        [
            m["name"],
            m["cutoff"],
            "higher" if m["higher_is_better"] else "lower",
            "1..5" if m["scale"] == "utility grades 1..5" else "any",
            ", ".join(p["name"] for p in m["params"]) or "-",  # type: ignore[attr-defined]
            ", ".join(m["aliases"]) or "-",  # type: ignore[arg-type]
            m["summary"],
        ]
        for m in listing
    ]
    print(
        text_table(
            ["name", "@k", "better", "grades", "parameters", "aliases", "what it measures"], rows
        )
    )
    return 0


def _cmd_agreement(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from ragmetrics.goldset import audit, read_sample

    human_path = args.human_qrels
    human = (
        read_sample(human_path)
        if Path(human_path).suffix.lower() in {".csv", ".jsonl"}
        else read_qrels(human_path)
    )
    runs = named_runs(args.run) if args.run else None
    found = audit(read_qrels(args.llm_qrels), human, runs=runs, k=args.k)
    if args.format == "json":
        print(json.dumps(found.to_dict(), default=str))
    else:
        print(found.to_markdown())
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code: 0, 2 for a user's error (one line on
    stderr, never a traceback), 130 when interrupted (Ctrl-C), 141 when the reader of the
    output went away."""
    try:
        return _run(argv)
    except KeyboardInterrupt:
        print("ragmetrics: interrupted", file=sys.stderr)
        return 130


def console() -> NoReturn:
    """The console script: :func:`main`, then the process ends.

    After ``trec_eval``, whose every file is closed and every line printed when it returns,
    the process ends without the interpreter's teardown (freeing each module and array one
    by one): that is 0.02-0.07 s of a call that scripts make once per run, as they call
    NIST's program. Every other command ends the usual way, running what waits for exit.

    ``trec_eval`` does no linear algebra, so numpy's OpenBLAS is asked to start no threads
    of its own, unless the user set a count: they cost about 0.013 s of each call on a
    2-core machine (alternated runs of ``benchmarks/bench_cli.py``). The allocator keeps
    the memory the command frees (:func:`keep_freed_memory`). Only this process's own entry
    point does either, before numpy loads; :func:`main`, called from a user's program,
    leaves the environment and the allocator alone."""
    stand_in = sys.argv[1:2] == ["trec_eval"]
    if stand_in and not _BLAS_THREADS.intersection(os.environ):
        os.environ["OPENBLAS_NUM_THREADS"] = "1"
    if stand_in:
        keep_freed_memory()
    code = main()
    if stand_in:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BrokenPipeError:  # the reader went away after the last write
            code = 141
        os._exit(code)
    sys.exit(code)


def keep_freed_memory() -> None:
    """Ask glibc's allocator to keep the memory this process frees, for the arrays it makes
    next: by default every array above 128 KB is mapped fresh from the system and given
    back when freed, and the system clears each new page on first touch. The stand-in makes
    and frees the same large temporaries block after block: on a RAG-shaped run (5,000
    queries x 100, ``-m all_trec``) that was 102,664 page faults, 35,002 kept (1.32 -> 1.15 s
    in alternated runs; peak memory 220 -> 229 MB). Nothing where the C library has no
    ``mallopt`` (macOS, musl)."""
    try:
        import ctypes  # numpy loads it anyway

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(_M_MMAP_THRESHOLD, 1 << 28)  # blocks up to 256 MB from the kept heap
    mallopt(_M_TRIM_THRESHOLD, 1 << 30)  # freed memory kept up to 1 GB


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h

_BLAS_THREADS = {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"}


def _run(argv: Sequence[str] | None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    if given == ["--version"]:
        print(f"ragmetrics {__version__}")  # before the parser, whose flags load the metrics
        return 0
    if given[:1] == ["trec_eval"]:  # its arguments are read as trec_eval reads them
        return _guarded(lambda: trec_eval.main(given[1:]))
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as done:  # --help, or a user's error printed in two lines
        return done.code if isinstance(done.code, int) else 2
    if getattr(args, "metrics", None):
        args.metrics = metric_names(args.metrics)
    handlers = {
        "evaluate": _cmd_evaluate,
        "compare": _cmd_compare,
        "report": _cmd_report,
        "metrics": _cmd_metrics,
        "agreement": _cmd_agreement,
        "fuse": _cmd_fuse,
        "trec_eval": trec_eval.command,
    }
    handlers.update(_extra_commands())
    return _guarded(lambda: handlers[args.command](args))


def _guarded(call: Callable[[], int]) -> int:
    """Runs a command: a user's error is one line and exit 2, a closed pipe a quiet 141."""
    try:
        return call()
    except BrokenPipeError:
        # the reader went away (``| head``): stop quietly, as a killed pipeline would
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except OSError as exc:  # a file that cannot be read or written
        where = f": {exc.filename}" if exc.filename else ""
        print(f"ragmetrics: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 2
    except (RagMetricsError, ValueError, TypeError, KeyError) as exc:
        message = str(exc.args[0] if isinstance(exc, KeyError) and exc.args else exc)
        print(f"ragmetrics: error: {_in_cli_words(message)}", file=sys.stderr)
        return 2
    except MemoryError:
        print(
            "ragmetrics: error: out of memory; evaluate large runs with --stream (bounded "
            "memory), or with fewer --workers.",
            file=sys.stderr,
        )
        return 2
    except Exception as exc:  # a bug of ours: one line, the traceback only when asked for
        argparse = sys.modules.get("argparse")  # loaded by any command that parsed flags
        if argparse is not None and isinstance(exc, argparse.ArgumentTypeError):
            print(f"ragmetrics: error: {exc}", file=sys.stderr)  # a flag's value, read late
            return 2
        if os.environ.get("RAGMETRICS_DEBUG"):
            raise
        print(
            f"ragmetrics: internal error: {type(exc).__name__}: {exc}. This is a bug; please "
            f"report it with the command that caused it (RAGMETRICS_DEBUG=1 shows the "
            f"traceback).",
            file=sys.stderr,
        )
        return 1


def _in_cli_words(message: str) -> str:
    """A library message with its keywords as the command line spells them.

    Example:
        >>> _in_cli_words("Map them with grade_map={0: 1, 1: 5}, or give your own map.")
        'Map them with --grade-map 0:1,1:5, or give your own map.'
    """

    def option(match: re.Match[str]) -> str:
        pairs = re.findall(r"(-?\d+)\s*:\s*(-?\d+)", match[1])
        return "--grade-map " + ",".join(f"{g}:{u}" for g, u in pairs)

    return re.sub(r"grade_map=\{([^}]*)\}", option, message)


def metric_names(values: Sequence[str]) -> list[str]:
    """The names of repeated ``-m`` options, each split at commas outside parentheses
    (``-m ndcg@10,P(rel=2)@5``).

    Example:
        >>> metric_names(["ndcg@10,P_5", "RA_nWG(alpha=0.5,cap4=1)@5"])
        ['ndcg@10', 'P_5', 'RA_nWG(alpha=0.5,cap4=1)@5']
    """
    names: list[str] = []
    for value in values:
        depth, start = 0, 0
        for i, char in enumerate(value):
            depth += {"(": 1, ")": -1}.get(char, 0)
            if char == "," and depth == 0:
                names.append(value[start:i].strip())
                start = i + 1
        names.append(value[start:].strip())
    return [name for name in names if name]


def _extra_commands() -> dict[str, Any]:
    return {}


if __name__ == "__main__":
    sys.exit(main())
