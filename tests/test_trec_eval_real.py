"""``ragmetrics trec_eval`` against the real NIST trec_eval 10.0, byte for byte on standard
output and exit code for exit code.

The program is built once per session from ``../shared/tools`` (or taken from
``$TREC_EVAL``). Inputs: trec_eval's own test folder, read in place, and generated files
that hold what real runs hold and what breaks readers: ties, 17-digit and scientific
scores, negative grades, queries on one side only, a doc twice, runs deeper than 1,000.
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from ragmetrics.cli._commands import main
from tests.conftest import SHARED_DATA, real_trec_eval_missing, shared_file

if real_trec_eval_missing():  # one skip for the module, saying why
    pytest.skip(str(real_trec_eval_missing()), allow_module_level=True)

TEST_FOLDER = SHARED_DATA.parent / "tools" / "trec_eval" / "test"

# every measure of trec_eval that reads qrels and a ranked run
COMPUTED = ["all_trec", "dcg", "ideal_dcg"]  # yaap: in "gains" (before rbp it changes rbp)
MEASURES = [arg for name in COMPUTED for arg in ("-m", name)]
PARAMETERS = [
    "-miprec_at_recall..10,.20,.25,.75,.50", "-mP.5,7,3", "-mrecall.20,2000",
    "-mRprec_mult.5.0,0.2,0.35", "-mutility.2,-1,0,0", "-m11pt_avg..25,.5,.75",
    "-mndcg_cut.10,20,23.4", "-msuccess.2,5,20", "-m11pt_avg.0.5", "-m11pt_avg.1",
]  # fmt: skip
FLAG_SETS = {
    "default": [],
    "q": ["-q"],
    "qc": ["-qc"],
    "c-M100": ["-q", "-c", "-M100"],
    "l2": ["-q", "-l2"],
    "l0": ["-q", "-l", "0"],
    "J": ["-q", "-J"],
    "cJ": ["-q", "-c", "-J"],
    "cl2": ["-q", "-c", "-l2"],
    "N": ["-q", "--Number_docs_in_coll=1000", "-mutility.2,-1,0,1"],
    "n": ["-q", "-n"],
    "relstring20": ["-q", "-mrelstring.20"],
    "params": ["-q", *PARAMETERS],
    "M5": ["-q", "-M", "5"],
    "long": ["--query_eval_wanted", "--measure", "map", "--meas=P.5", "--Output_old=x", "-o"],
    "gains": [
        "-q",
        "-mndcg.1=3,2=9,4=4.5",
        "-mG.1=2",
        "-mndcg_rel.0=1,1=2",
        "-mRndcg.2=5",
        "-myaap",
    ],
    "rbp": ["-q", "-mrbp.1=2,p=0.8", "-mrbp_resid.p=0.5", "-mrbp.0=2,1=3", "-mrbp.1=5"],
    "hex": ["-q", "-m11pt_avg.0x1p-1,0X.Cp0", "-mrbp.p=0x1.8p-1", "-mutility.0x2,-1,0,0"],
}
# trec_eval's own quick test (its Makefile), for the qrels format
QUICKTEST = [
    ["qrels.test", "results.test"],
    ["qrels.test.with-comments", "results.test"],
    ["qrels.comment.test", "results.comment.test"],
    ["-m", "all_trec", "qrels.test", "results.test"],
    ["-m", "all_trec", "-q", "qrels.test", "results.test"],
    ["-m", "all_trec", "-q", "-c", "qrels.test", "results.trunc"],
    ["-m", "all_trec", "-q", "-c", "-M100", "qrels.test", "results.trunc"],
    ["-m", "all_trec", "-mrelstring.20", "-q", "-l2", "qrels.rel_level", "results.test"],
    ["-q", "-miprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3", "-m", "recall.20,2000",
     "-m", "Rprec_mult.5.0,0.2,0.35", "-mutility.2,-1,0,0", "-m", "11pt_avg..25,.5,.75",
     "-mndcg.1=3,2=9,4=4.5", "-mndcg_cut.10,20,23.4", "-msuccess.2,5,20", "qrels.test",
     "results.test"],
    ["-q", "-m", "all_trec", "-Z", "zscores_file", "qrels.test", "results.test"],
    ["-q", "-c", "-m", "official", "-Z", "zscores_file", "qrels.test", "results.trunc"],
    ["-m", "qrels_jg", "-q", "-R", "qrels_jg", "qrels.123", "results.test"],
    ["-m", "qrels_jg", "-q", "-R", "qrels_jg", "qrels.comments.123", "results.test"],
    ["-m", "qrels_jg", "-q", "-c", "-R", "qrels_jg", "qrels.123", "results.trunc"],
    ["-mP_avgjg.3,7", "-mRprec_mult_avgjg.0.5", "-l2", "-Rqrels_jg", "qrels.123", "results.test"],
    ["-m", "map", "-R", "qrels_jg", "qrels.123", "results.test"],
    ["-m", "map", "-m", "map_avgjg", "qrels.test", "results.test"],
    ["-m", "all_prefs", "-q", "-R", "prefs", "prefs.test", "prefs.results.test"],
    ["-m", "all_prefs", "-q", "-R", "prefs", "prefs.comment.test", "prefs.results.test"],
    ["-m", "all_prefs", "-q", "-R", "qrels_prefs", "qrels.test", "results.test"],
    ["-R", "qrels_prefs", "-m", "all_prefs", "-q", "-c", "qrels.test", "results.trunc"],
    ["-R", "qrels_prefs", "-m", "all_prefs", "-q", "-M20", "qrels.rel_level", "results.test"],
    ["-R", "qrels_prefs", "-m", "all_prefs", "-q", "qrels.123", "results.test"],
    ["-R", "prefs", "-m", "prefs", "-q", "-M5", "prefs.test", "prefs.results.test"],
    ["-R", "prefs", "-m", "map", "prefs.test", "prefs.results.test"],
    ["-m", "prefs_simp", "qrels.test", "results.test"],
]  # fmt: skip


@pytest.fixture(scope="module")
def test_folder() -> Path:
    if not TEST_FOLDER.exists():
        pytest.skip(f"trec_eval's test folder not available: {TEST_FOLDER}")
    return TEST_FOLDER


def _run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, list[str], str]:
    code = main(["trec_eval", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def _compare(binary: str, args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    expected = subprocess.run([binary, *args], capture_output=True, text=True)
    code = main(["trec_eval", *args])
    out, err = capsys.readouterr()
    assert (code, out) == (expected.returncode, expected.stdout), (args, err)


@pytest.mark.parametrize(
    ("qrels", "run"),
    [
        ("qrels.test", "results.test"),
        ("qrels.test.with-comments", "results.test"),
        ("qrels.comment.test", "results.comment.test"),
        ("qrels.rel_level", "results.test"),
        ("qrels.test", "results.trunc"),
    ],
)
@pytest.mark.parametrize("flags", list(FLAG_SETS), ids=str)
def test_trec_evals_own_test_files(
    qrels: str,
    run: str,
    flags: str,
    test_folder: Path,
    trec_eval_binary: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    measures = [] if flags in ("default", "long", "gains", "rbp") else MEASURES
    args = [*FLAG_SETS[flags], *measures, str(test_folder / qrels), str(test_folder / run)]
    _compare(trec_eval_binary, args, capsys)


@pytest.mark.parametrize("args", QUICKTEST, ids=" ".join)
def test_trec_evals_quick_test(
    args: list[str], test_folder: Path, trec_eval_binary: str, capsys: pytest.CaptureFixture[str]
) -> None:
    located = [str(test_folder / a) if (test_folder / a).is_file() else a for a in args]
    _compare(trec_eval_binary, located, capsys)


def _hostile(folder: Path, seed: int, **shape: object) -> tuple[str, str]:
    """A qrels and a run shaped like real ones, with what breaks readers."""
    rng = random.Random(seed)
    depth, n_queries = int(shape.get("depth", 60)), int(shape.get("queries", 12))  # type: ignore[call-overload]
    qrels, run = [], []
    for q in range(n_queries):
        query = f"q{q:03d}" if q % 3 else str(q)  # ids of different lengths: byte order
        prefixes = ["D", "Dé", "東京", "Ω", "D\u0301"] if shape.get("unicode") else ["D"]
        if shape.get("long"):  # past 256 bytes, sharing their first 300 (stand-ins)
            prefixes = ["D", "https://example.com/" + "p" * 280 + "/", "é" * 140]
        if shape.get("unicode") and q % 4 == 1:
            query = f"é{q}"
        docs = list(
            dict.fromkeys(
                f"{rng.choice(prefixes)}{rng.randrange(300):04d}" for _ in range(depth * 2)
            )
        )
        grades = [0, 0, 1, 1, 2, 3] + ([-1] if shape.get("negative") else [])
        for doc in rng.sample(docs, min(len(docs), rng.randrange(1, 30))):
            qrels.append(f"{query} 0 {doc} {rng.choice(grades)}")
        if shape.get("missing") and q == 5:
            continue
        for rank, doc in enumerate(docs[:depth]):
            score = rng.choice([1.0, 0.5, 0.25]) if rng.random() < 0.3 else rng.random()
            text = f"{score:e}" if shape.get("scientific") else f"{score:.17g}"
            run.append(f"{query} Q0 {doc} {rank + 1} {text} run{seed}")
        if shape.get("duplicate") and q == 2:
            run.append(f"{query} Q0 {docs[0]} 99 0.1 run{seed}")
    rng.shuffle(run)
    run.append(f"zz Q0 X1 1 1.0 other{seed}")  # a query the qrels lack; its tag is the last
    qrels_path, run_path = folder / f"qrels{seed}", folder / f"run{seed}"
    qrels_path.write_text("\n".join(qrels) + "\n", encoding="utf-8")
    run_path.write_text("\n".join(run) + "\n", encoding="utf-8")
    return str(qrels_path), str(run_path)


SHAPES = {
    "ties": {},
    "negative grades": {"negative": True},
    "scientific scores": {"scientific": True},
    "deeper than 1000": {"depth": 1500, "queries": 3},
    "a doc twice": {"duplicate": True},
    "a judged query without results": {"missing": True},
    "ids beyond ASCII, tied": {"unicode": True},
    "ids past 256 bytes, tied": {"long": True, "duplicate": True},
}


def test_summaries_add_in_query_order(
    tmp_path: Path, trec_eval_binary: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """First relevant docs at ranks 3, 4, 8 and 6: the reciprocal ranks added one by one
    give 0.21874999..., printed 0.2187; their exact mean 0.21875 would print 0.2188."""
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("".join(f"q{i} 0 rel 1\n" for i in range(4)))
    lines = []
    for i, rank in enumerate((3, 4, 8, 6)):
        docs = [f"x{j}" for j in range(rank - 1)] + ["rel"]
        lines += [f"q{i} Q0 {d} {r} {10 - r} t\n" for r, d in enumerate(docs)]
    run.write_text("".join(lines))
    _compare(trec_eval_binary, ["-m", "recip_rank", str(qrels), str(run)], capsys)
    assert (
        "recip_rank            \tall\t0.2187\n"
        in subprocess.run(
            [trec_eval_binary, "-m", "recip_rank", str(qrels), str(run)],
            capture_output=True,
            text=True,
        ).stdout
    )


@pytest.mark.parametrize("dropped", ["first", "middle", "last"])
def test_z_scores_missing_from_the_file(
    dropped: str,
    tmp_path: Path,
    test_folder: Path,
    trec_eval_binary: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A query or a measure that the z-score file lacks: before, among and after its
    entries (trec_eval's binary search starts one past the last; see docs/cli.md)."""
    lines = (test_folder / "zscores_file").read_text().splitlines()
    queries = sorted({line.split()[0] for line in lines})
    gone = {"first": queries[0], "middle": queries[len(queries) // 2], "last": queries[-1]}
    kept = [line for line in lines if line.split()[0] != gone[dropped]]
    kept = [line for line in kept if line.split()[1] not in ("P_5", "Rprec") or "2" in line]
    zscores, complete = tmp_path / "zscores", tmp_path / "complete"
    zscores.write_text("\n".join(kept) + "\n")
    files = [str(test_folder / "qrels.test"), str(test_folder / "results.test")]
    for extra in ([], ["-c"]):
        args = ["-q", *extra, "-m", "official", "-Z"]
        if dropped != "last":
            _compare(trec_eval_binary, [*args, str(zscores), *files], capsys)
            continue
        # past the last entry trec_eval reads outside its array and crashes; we print the
        # query's values as missing, and every other query's as trec_eval does
        crashed = subprocess.run([trec_eval_binary, *args, str(zscores), *files])
        assert crashed.returncode != 0
        complete.write_text(
            "\n".join(line for line in lines if line in kept or line.split()[0] == gone["last"])
            + "\n"
        )
        expected = subprocess.run(
            [trec_eval_binary, *args, str(complete), *files], capture_output=True, text=True
        ).stdout.splitlines()
        capsys.readouterr()
        assert main(["trec_eval", *args, str(zscores), *files]) == 0
        printed = capsys.readouterr().out.splitlines()
        of_query = [line for line in printed if line.split("\t")[1] == gone["last"]]
        assert of_query and all(line.endswith("\t-1000000.0000") for line in of_query)
        others = [line for line in printed if line.split("\t")[1] not in (gone["last"], "all")]
        assert others == [
            line for line in expected if line.split("\t")[1] not in (gone["last"], "all")
        ]


@pytest.mark.parametrize("shape", list(SHAPES), ids=str)
@pytest.mark.parametrize("flags", ["q", "qc", "l2", "l0", "J", "cJ", "n", "M5"], ids=str)
def test_generated_inputs(
    shape: str,
    flags: str,
    tmp_path: Path,
    trec_eval_binary: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    qrels, run = _hostile(tmp_path, list(SHAPES).index(shape), **SHAPES[shape])
    _compare(trec_eval_binary, [*FLAG_SETS[flags], *MEASURES, qrels, run], capsys)


def _run_over(qrels: Path, folder: Path, seed: int) -> Path:
    """A run over a real qrels: for each query its judged docs and as many unjudged ones,
    scores on a coarse grid (ties), some queries of the qrels left out."""
    rng = random.Random(seed)
    judged: dict[str, list[str]] = {}
    for line in qrels.read_text().splitlines():
        fields = line.split()
        if len(fields) == 4:
            judged.setdefault(fields[0], []).append(fields[2])
    lines = []
    for query, docs in judged.items():
        if rng.random() < 0.1:
            continue
        pool = docs + [f"unjudged-{query}-{i}" for i in range(len(docs))]
        for doc in rng.sample(pool, min(len(pool), 150)):
            lines.append(f"{query} Q0 {doc} 0 {rng.randrange(40) / 8:.3f} synthetic\n")
    path = folder / f"run-{qrels.stem}"
    path.write_text("".join(lines))
    return path


@pytest.mark.parametrize(
    "name",
    ["cacm", "qrels.dl19-passage.txt", "qrels.dl20-passage.txt", "qrels.rag24.test.txt"],
)
@pytest.mark.parametrize("flags", ["q", "qc", "l2", "J"], ids=str)
def test_the_shared_data(
    name: str,
    flags: str,
    tmp_path: Path,
    trec_eval_binary: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Real judgments (CACM with its BM25 run; TREC DL 2019, 2020 and RAG 2024 passage
    qrels with runs made over them), every measure of all_trec."""
    if name == "cacm":
        qrels, run = shared_file("cacm", "qrels.cacm.txt"), shared_file("cacm", "cacm-bm25.run.txt")
    else:
        qrels = shared_file("trec-qrels", name)
        run = _run_over(qrels, tmp_path, seed=len(name))
    _compare(trec_eval_binary, [*FLAG_SETS[flags], *MEASURES, str(qrels), str(run)], capsys)


@pytest.mark.parametrize("seed", range(4))
def test_preference_metrics_equal_trec_evals_qrels_prefs(
    seed: int, tmp_path: Path, trec_eval_binary: str
) -> None:
    """The registered prefs_* metrics read graded judgments as trec_eval -R qrels_prefs
    does: equal per query, also where scores tie (trec_eval's preference code orders tied
    docs by id up, every other measure by id down). Grades 0 outnumber the others: with
    fewer docs in the lowest class than relevant ones, trec_eval's prefs_avgjg_Rnonrel
    reads past that class (docs/cli.md)."""
    import ragmetrics as rm
    from ragmetrics.metrics._trec import PREFERENCE_MEASURES

    rng = random.Random(seed)
    qrels_lines, run_lines = [], []
    for q in range(15):
        docs = [f"D{i:03d}" for i in rng.sample(range(200), 60)]
        for doc in rng.sample(docs, 25):
            qrels_lines.append(f"q{q} 0 {doc} {rng.choice([0, 0, 0, 0, 1, 2, 3])}\n")
        for rank, doc in enumerate(docs[:40]):
            score = 1000 - rank + rng.random() / 2 if seed % 2 else rng.randint(0, 4)  # ties
            run_lines.append(f"q{q} Q0 {doc} {rank} {score:.6f} t\n")
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("".join(qrels_lines))
    run.write_text("".join(run_lines))
    done = subprocess.run(
        [trec_eval_binary, "-q", "-R", "qrels_prefs", "-m", "all_prefs", str(qrels), str(run)],
        capture_output=True,
        text=True,
        check=True,
    )
    expected = {
        (fields[1], fields[0]): fields[2]
        for fields in (line.split() for line in done.stdout.splitlines())
        if fields[1] != "all"
    }
    names = [n.lower() for n in PREFERENCE_MEASURES]
    result = rm.evaluate(rm.Qrels.from_trec(qrels), rm.Run.from_trec(run), names)
    for query, values in result.per_query.items():
        for trec_name, name in zip(PREFERENCE_MEASURES, names, strict=True):
            value = values[name]
            shown = str(int(value)) if trec_name.startswith("prefs_num") else f"{value:.4f}"
            assert shown == expected[(query, trec_name)], (query, trec_name)


ARGUMENTS = [
    [], ["-q"], ["-x", "Q", "R"], ["-m"], ["-mP.5,3", "Q", "R"], ["--meas"], ["--m=map", "Q", "R"],
    ["Q", "R", "extra"], ["--", "Q", "R"], ["-qn", "Q", "R"], ["--nosum", "Q", "R"], ["-v"],
    ["--version"], ["-mnosuch", "Q", "R"], ["-m", "P.", "Q", "R"], ["-M0", "Q", "R"],
    ["-D", "0", "Q", "R"], ["-D0.301", "-q", "Q", "R"], ["-D", "0.999", "Q", "R"],
    ["-T", "foo", "Q", "R"], ["-R", "foo", "Q", "R"], ["-m", "official", "-m", "set", "Q", "R"],
    ["-mndcg.a=3,2=9", "Q", "R"], ["-mndcg.2", "Q", "R"], ["-mndcg.=3", "Q", "R"],
    ["-mndcg.1=2=3", "Q", "R"], ["-mrelstring.0", "-q", "Q", "R"], ["-mrelstring.-5", "-q", "Q", "R"],
    ["-miprec_at_recall.1.5,-0.5", "Q", "R"], ["-msuccess.1,5,10,1000000", "Q", "R"],
    ["-mP.0", "Q", "R"], ["-mP.-1,5", "Q", "R"], ["-mP.abc", "Q", "R"], ["-mRprec_mult.0", "Q", "R"],
    ["--Output_old_results_format", "-m", "map", "Q", "R"],
]  # fmt: skip


@pytest.mark.parametrize("args", ARGUMENTS, ids=" ".join)
def test_arguments_as_trec_eval_reads_them(
    args: list[str], test_folder: Path, trec_eval_binary: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Odd, wrong and borderline arguments: the same stdout and exit code."""
    files = {"Q": str(test_folder / "qrels.test"), "R": str(test_folder / "results.test")}
    _compare(trec_eval_binary, [files.get(a, a) for a in args], capsys)


def test_where_trec_eval_reads_garbage_we_refuse(
    test_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """-M below 0 crashes trec_eval; -l below 0 counts unjudged docs as relevant outside R;
    a flag's non-number is read as 0; a measure's parameter that reads as NaN or infinity
    (C's atof reads "nan" and "inf") makes trec_eval print NaN, or a number from an
    undefined cast; a gain for a grade below 0 goes to every unjudged doc. Each is one line
    and exit 1 here (docs/cli.md)."""
    files = [str(test_folder / "qrels.test"), str(test_folder / "results.test")]
    hostile = [["-m", m] for m in ("rbp.p=nan", "utility.inf,0,0,0", "11pt_avg.nan", "G.1=nan")]
    hostile += [["-m", "ndcg.-1=5"], ["-m", "rbp.p=2"], ["-m", "iprec_at_recall.-Infinity,1"]]
    for flags in (["-M", "-3"], ["-l", "-1"], ["-l", "two"], *hostile):
        assert main(["trec_eval", *flags, *files]) == 1
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1, flags


@pytest.mark.parametrize(
    "flags",
    [[], ["-q"], ["-q", "-l2"], ["-q", "-M100"], ["-q", "-c"], ["-m", "all_trec_ours"]],
    ids=lambda f: " ".join(f) or "default",
)
def test_line_for_line_with_trec_eval(
    flags: list[str], capsys: pytest.CaptureFixture[str], trec_eval_binary: str
) -> None:
    binary = trec_eval_binary
    if flags == ["-m", "all_trec_ours"]:
        flags = ["-q", "-m", "official", "-m", "recall", "-m", "ndcg", "-m", "ndcg_cut",
                 "-m", "map_cut", "-m", "success"]  # fmt: skip
    qrels = shared_file("trec_eval", "qrels.rel_level")
    run = shared_file("trec_eval", "results.test")
    expected = subprocess.run(
        [binary, *flags, str(qrels), str(run)], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    _, lines, _ = _run(capsys, *flags, qrels, run)
    assert lines == expected


@pytest.mark.parametrize(
    "qrels_lines",
    [
        ["q1 0 a 1", "q1 0 a 1", "q1 0 b 0", "q2 0 c 1"],  # the same grade twice
        ["q1 0 a 1", "q1 0 a 2", "q2 0 c 1"],  # two grades
        ["q1 0 a 1", "q2 0 c 1", "q2 0 c 1"],  # a later query: the first is printed
        ["q1 0 a 1", "q2 0 c 1", "q3 0 z 1", "q3 0 z 1"],  # a query the run lacks
    ],
)
@pytest.mark.parametrize("flags", [[], ["-q"], ["-q", "-c"]], ids=lambda f: " ".join(f) or "-")
def test_a_doc_judged_twice_stops_as_trec_eval_stops(
    qrels_lines: list[str],
    flags: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    trec_eval_binary: str,
) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("\n".join(qrels_lines) + "\n")
    run = tmp_path / "run.txt"
    run.write_text(
        "q1 Q0 a 1 0.9 r\nq1 Q0 b 2 0.5 r\nq1 Q0 x 3 0.3 r\nq2 Q0 a 1 0.7 r\nq2 Q0 c 2 0.5 r\n"
    )
    expected = subprocess.run(
        [trec_eval_binary, *flags, str(qrels), str(run)], capture_output=True, text=True
    )
    code, lines, _ = _run(capsys, *flags, qrels, run)
    assert (code, lines) == (expected.returncode, expected.stdout.splitlines())
    assert code == 4
