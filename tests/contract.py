"""The contract every registered component meets, as checks a test can run on any entry.

Each ``check_*`` takes one registry entry (a metric spec, a fusion method, a
normalization, a paired test, a correction, an input format) and feeds it the hostile values
of the contract: NaN, +-inf, +-1e308, empty inputs, one query, two queries, repeated docs,
queries on one side only, ids over the Unicode range. Each answer must be an exact value
(checked against a stated invariant) or a :class:`~ragmetrics.RagMetricsError`; never a NaN
or inf unless it is a documented NA, never a raw Python error. A failing check raises
``AssertionError`` naming the entry and the case. ``tests/test_contract.py`` runs every check
over every registry, and shows, with toys that break the contract, that a newly registered
component is covered without a test of its own.
"""

from __future__ import annotations

import json
import math
import random
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragmetrics as rm
from ragmetrics._util import threads
from ragmetrics.analysis import stats
from ragmetrics.data._files import InputFormat
from ragmetrics.engine import _evaluation
from ragmetrics.fusion import FUSION_METHODS, REQUIRED, FusionMethod, Normalization, fuse
from ragmetrics.fusion import optimize_fusion as optimize
from ragmetrics.metrics import Cutoff
from ragmetrics.metrics.registry import MetricSpec

# ids from the whole Unicode range (no lone surrogates: they cannot be written as UTF-8)
UNICODE_IDS = ["q\u00e9", "\u67e5\u8be2", "\U0001f600", "a b", "\u200b", "Q0", "q0", "0", "-1"]
HUGE = 1e308


@contextmanager
def contract(what: str, case: str, *, benign: bool = False) -> Iterator[None]:
    """Run ``case`` of ``what``: a raw (non-RagMetricsError) exception breaks the contract,
    and so does any error at all on a ``benign`` input (which must give a value)."""
    try:
        yield
    except AssertionError as failure:
        raise AssertionError(f"{what}, {case}: {failure}") from failure
    except rm.RagMetricsError as error:
        if benign:
            raise AssertionError(f"{what}, {case}: a benign input refused ({error})") from error
        raise
    except Exception as error:
        raise AssertionError(
            f"{what}, {case}: a raw {type(error).__name__} ({error}) instead of a value or a "
            f"RagMetricsError"
        ) from error


def refused_or(call: Callable[[], Any]) -> Any:
    """The value of ``call()``, or None when it raised a RagMetricsError."""
    try:
        return call()
    except rm.RagMetricsError:
        return None


# --- metrics ------------------------------------------------------------------------------


def metric_names(spec: MetricSpec) -> list[str]:
    if spec.cutoff is Cutoff.NONE:
        return [spec.name]
    names = [f"{spec.name}@{k}" for k in (1, 3, 10)]
    return names + ([spec.name] if spec.cutoff is Cutoff.OPTIONAL else [])


def _judgments(spec: MetricSpec, seed: int, n_queries: int = 12) -> tuple[dict, dict]:
    rng = random.Random(seed)
    grades = [1, 2, 3, 4, 5] if spec.family == "set" else [-1, 0, 1, 2, 3]
    qrels, run = {}, {}
    for q in range(n_queries):
        docs = [f"d{i}" for i in range(rng.randrange(2, 12))]
        judged = rng.sample(docs, rng.randrange(1, len(docs) + 1))
        qrels[f"q{q}"] = {d: rng.choice(grades) for d in judged}
        if spec.family == "set":
            qrels[f"q{q}"][docs[0]] = 5  # some decisive evidence: the utility scale holds
        ranked = rng.sample([*docs, "x1", "x2"], rng.randrange(1, len(docs) + 2))
        run[f"q{q}"] = {d: float(len(ranked) - i) for i, d in enumerate(ranked)}
    return qrels, run


def _extreme(i: int, score: float) -> float:
    """Every third score replaced by +inf, -inf or +-1e308 in turn."""
    return score if i % 3 else (math.inf, -math.inf, HUGE, -HUGE)[(i // 3) % 4]


def _check_result(spec: MetricSpec, result: rm.EvaluationResult, case: str) -> None:
    values = result.values
    finite = values[~np.isnan(values)]
    assert np.isfinite(finite).all(), f"{case}: an infinite value"
    if not spec.can_be_na:
        assert not np.isnan(values).any(), f"{case}: NA from a metric declared never NA"
    if not spec.can_be_negative:
        assert (finite >= 0).all(), f"{case}: a value below 0"
    if spec.unit_range:
        assert (finite <= 1).all(), f"{case}: a value above 1"
    for label, mean in result.aggregate.items():
        tally = result.counts.valid[label]
        assert (mean is None) == (tally == 0), f"{case}: {label}'s mean {mean} over {tally}"
        assert mean is None or math.isfinite(mean), f"{case}: {label}'s mean is {mean}"
        assert tally + result.counts.na[label] == result.counts.queries, f"{case}: counts"


def nuggets_for(spec: MetricSpec, qrels: dict, *, unsupported: bool = True) -> dict[str, Any]:
    """``nuggets=`` for a metric that reads nuggets (else nothing), made from the qrels:
    each doc judged 1 or above a nugget supported by itself and by an unjudged doc, vital
    when graded 2 or above (so the ideal ranking by grade is the best for every nugget
    metric); every third query also needs a fact no doc supports, and the first has
    no nuggets at all (NA)."""
    if not spec.needs_nuggets:
        return {}
    nuggets: dict[str, dict[str, Any]] = {}
    for number, (query_id, judged) in enumerate(qrels.items()):
        if number == 0:
            continue
        relevant = [d for d, g in judged.items() if g >= 1]
        of_query = {
            f"n{i}": {"text": f"fact {i}", "vital": judged[d] >= 2, "support": [d, "x1"]}
            for i, d in enumerate(relevant)
        }
        if unsupported and number % 3 == 0:
            of_query["unsupported"] = {"text": "no doc says it", "vital": True, "support": []}
        nuggets[query_id] = of_query
    return {"nuggets": nuggets}


def _on_threads(count: int, call: Callable[[], Any]) -> Any:
    """``call()`` with ``count`` threads for array work (as on a machine of that many
    cores), the metrics' kernels side by side however few docs they read; the settings
    restored after."""
    before, least = threads.threads(), _evaluation._SIDE_BY_SIDE_HITS
    threads.set_threads(count)
    _evaluation._SIDE_BY_SIDE_HITS = 0
    try:
        return call()
    finally:
        threads.set_threads(before)
        _evaluation._SIDE_BY_SIDE_HITS = least


one_thread = partial(_on_threads, 1)


def check_metric(spec: MetricSpec) -> None:
    """Every hostile input gives values in the declared range, NA only where declared and
    counted, or a RagMetricsError."""
    what = f"metric {spec.name!r}"
    names = metric_names(spec)
    qrels, run = _judgments(spec, 0)
    options = nuggets_for(spec, qrels)
    with contract(what, "random judgments", benign=True):
        _check_result(spec, rm.evaluate(qrels, run, names, **options), "random")
    with contract(what, "kernels side by side on threads"):
        alone = one_thread(lambda: rm.evaluate(qrels, run, names, **options))
        side_by_side = _on_threads(2, lambda: rm.evaluate(qrels, run, names, **options))
        assert np.array_equal(alone.values, side_by_side.values, equal_nan=True), (
            "other values with the kernels on two threads"
        )
    if spec.perfect_is_one and spec.higher_is_better:
        with contract(what, "a perfect ranking"):
            perfect = {q: sorted(j, key=lambda d: (-j[d], d)) for q, j in qrels.items()}
            deep = [n for n in names if "@" not in n or int(n.rsplit("@", 1)[1]) >= 10]
            found = rm.evaluate(qrels, perfect, deep, **options)
            for label, mean in found.aggregate.items():
                assert mean is None or mean <= 1.0, f"{label} = {mean} above 1"
                for query_id, row in found.per_query.items():
                    value = row[label]
                    assert value is None or value <= 1.0, f"{label} of {query_id} = {value}"
    with contract(what, "infinite and huge scores"):
        hostile = {q: {d: _extreme(i, s) for i, (d, s) in enumerate(docs.items())} for q, docs in run.items()}  # fmt: skip
        ranked = {q: list(rm.Run.from_dict({q: d})[q]) for q, d in hostile.items()}
        a = rm.evaluate(qrels, hostile, names, **options)
        b = rm.evaluate(qrels, ranked, names, **options)
        _check_result(spec, a, "infinite scores")
        assert np.array_equal(a.values, b.values, equal_nan=True), "inf ranks as its order"
    with contract(what, "a NaN score"):
        nan_run = {**run, "q0": {**run["q0"], "d0": math.nan}}
        assert refused_or(lambda: rm.evaluate(qrels, nan_run, names, **options)) is None, (
            "NaN accepted"
        )
    for n in (1, 2):
        with contract(what, f"{n} queries"):
            few = {q: qrels[q] for q in list(qrels)[:n]}
            _check_result(
                spec, rm.evaluate(few, run, names, missing="skip", **options), f"{n} queries"
            )
    with contract(what, "repeated docs"):
        lists = {q: [*docs, *list(docs)[:2]] for q, docs in run.items()}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = rm.evaluate(qrels, lists, names, **options)
        _check_result(spec, found, "repeats")
        assert found.counts.repeated_ids_dropped > 0, "repeats not counted"
    with contract(what, "queries on one side only"):
        half = {q: docs for i, (q, docs) in enumerate(run.items()) if i % 2}
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            found = rm.evaluate(qrels, half, names, missing="zero", **options)
        _check_result(spec, found, "one side")
        assert found.counts.missing_from_run == len(qrels) - len(half), "missing not counted"
    with contract(what, "swapped arguments"):
        assert refused_or(lambda: rm.evaluate(rm.Run.from_dict(run), rm.Qrels.from_dict(qrels), names, **options)) is None  # fmt: skip
    with contract(what, "Unicode ids"):
        rename = dict(zip(qrels, UNICODE_IDS + [f"u{i}" for i in range(len(qrels))], strict=False))
        moved_q = {rename[q]: {f"{d}\u00e9\U0001f600": g for d, g in j.items()} for q, j in qrels.items()}  # fmt: skip
        moved_r = {rename[q]: {f"{d}\u00e9\U0001f600": s for d, s in r.items()} for q, r in run.items()}  # fmt: skip
        moved_n = {}
        if options:
            moved_n = {"nuggets": {rename[q]: {n: {**x, "support": [f"{d}\u00e9\U0001f600" for d in x["support"]]} for n, x in of.items()} for q, of in options["nuggets"].items()}}  # fmt: skip
        a = rm.evaluate(moved_q, moved_r, names, **moved_n)
        b = rm.evaluate(qrels, run, names, **options)
        for q in qrels:
            assert a.per_query[rename[q]] == b.per_query[q], f"ids changed a value ({q!r})"
    with contract(what, "empty inputs"):
        assert refused_or(lambda: rm.evaluate({}, run, names, **options)) is None, (
            "empty qrels scored"
        )
        assert refused_or(lambda: rm.evaluate(qrels, {}, names, **options)) is None, (
            "empty run scored"
        )
    for param in spec.params:
        for value in _hostile_values(param):
            label = f"{spec.name}({param.name}={value})"
            with contract(what, f"the parameter {label}"):
                with warnings.catch_warnings():
                    warnings.simplefilter("error", RuntimeWarning)  # numpy's overflow too
                    found = refused_or(partial(rm.evaluate, qrels, run, [label], **options))
                if found is not None:
                    _check_result(spec, found, label)


def _hostile_values(param: Any) -> list[str]:
    """Values of a parameter as a user may write them, hostile ones, in a metric's name."""
    if param.kind is str:
        texts = ["", "x", "nan", "inf", "-inf", "1e308", ";", "0;nan", "1:inf", "1:nan", "2:5"]
        texts += ["-1:5", "1:1e308;2:-1e308", "1e308;0"]
        return [repr(text) for text in [*param.choices, *texts]]
    return ["nan", "inf", "-inf", "1e308", "-1e308", "0", "-1", "1e-320", "2**70", "1.5"]


# --- fusion -------------------------------------------------------------------------------


def _fusion_runs(seed: int) -> tuple[dict, list[dict]]:
    rng = random.Random(seed)
    qrels, runs = {}, [{}, {}, {}]
    for q in range(10):
        docs = [f"d{i}" for i in range(rng.randrange(3, 12))]
        qrels[f"q{q}"] = {d: rng.choice([0, 1, 2]) for d in docs[:4]}
        for run in runs:
            picked = rng.sample(docs, rng.randrange(1, len(docs)))
            run[f"q{q}"] = {d: float(rng.choice([1, 2, 2, 3, 7])) for d in picked}  # ties
    return qrels, runs


def _small_grid(spec: FusionMethod) -> dict[str, Any]:
    """The method's grid cut to a few settings (the contract needs values, not the best)."""
    settings = dict(spec.grid_settings)
    out: dict[str, Any] = {}
    for key, _value in settings.items():
        if key.startswith("max_") and f"min_{key[4:]}" in settings:
            out[key] = settings[f"min_{key[4:]}"]
    if "weights" in spec.params:
        out["step"] = 0.5
    return out


def learned_params(spec: FusionMethod, qrels: dict, runs: list) -> dict[str, Any] | None:
    """Parameters for ``spec``: its defaults, else what optimize_fusion chooses on a small
    grid (the required ones)."""
    if all(v is not REQUIRED for v in spec.params.values()):
        return None
    chosen = optimize(qrels, runs, method=spec.name, show_progress=False, **_small_grid(spec))
    assert isinstance(chosen, dict)
    return chosen


def _check_fused(fused: rm.Run, inputs: list[dict], case: str) -> None:
    scored = fused.to_dict()
    for query_id in fused.query_ids:
        values = scored[query_id]
        assert all(math.isfinite(v) for v in values.values()), f"{case}: a non-finite score"
        order = list(fused[query_id])
        by_score = sorted(values, key=lambda d: values[d], reverse=True)
        assert [values[d] for d in order] == [values[d] for d in by_score], f"{case}: order"
        union = set().union(*(set(run.get(query_id, {})) for run in inputs))
        assert set(order) == union, f"{case}: the fused docs are not the union"


def check_fusion(spec: FusionMethod, norms: list[str | None] | None = None) -> None:
    """Under every normalization: a fused run of finite scores in the order of its scores,
    over the union of the docs; hostile scores fused exactly or refused."""
    what = f"fusion method {spec.name!r}"
    qrels, runs = _fusion_runs(1)
    with contract(what, "learning its parameters", benign=True):
        params = learned_params(spec, qrels, runs)
    for norm in norms if norms is not None else [*rm.fusion.NORMALIZATIONS, None]:
        case = f"norm={norm!r}"
        with contract(what, f"{case}, plain runs", benign=True):
            _check_fused(fuse(runs, method=spec.name, norm=norm, params=params), runs, case)
        with contract(what, f"{case}, scores at the ends of float64"):
            huge = [{q: {d: (HUGE, -HUGE, 0.0)[i % 3] for i, d in enumerate(docs)} for q, docs in run.items()} for run in runs]  # fmt: skip
            fused = refused_or(partial(fuse, huge, method=spec.name, norm=norm, params=params))
            if norm is not None:
                assert fused is not None, "normalized huge scores refused"
            if fused is not None:
                _check_fused(fused, huge, case + " huge")
        with contract(what, f"{case}, infinite scores"):
            infinite = [{q: {d: (math.inf, 1.0, -math.inf)[i % 3] for i, d in enumerate(docs)} for q, docs in run.items()} for run in runs]  # fmt: skip
            fused = refused_or(partial(fuse, infinite, method=spec.name, norm=norm, params=params))
            if fused is not None:
                _check_fused(fused, infinite, case + " inf")
        with contract(what, f"{case}, one query, runs on other queries, Unicode ids"):
            one = [{"\U0001f600": {"\u00e9": 1.0, "b": 0.5}}, {"\u67e5": {"\u00e9": 2.0}}]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fused = refused_or(
                    partial(fuse, one, method=spec.name, norm=norm, params=_two(params))
                )
            if fused is not None:
                _check_fused(fused, one, case + " one query")


def _two(params: dict[str, Any] | None) -> dict[str, Any] | None:
    """Learned or weighted parameters of three runs, cut to two."""
    if params is None:
        return None
    return {k: (list(v)[:2] if isinstance(v, list | tuple) else v) for k, v in params.items()}


def check_normalization(norm: Normalization) -> None:
    """Under a score-based and a rank-based method: finite fused scores in order."""
    for method in ("sum", "rrf"):
        check_fusion(FUSION_METHODS[method], [norm.name])


# --- paired tests and corrections ---------------------------------------------------------


def _vectors() -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(5)
    base = rng.random(20)
    yield "random", rng.random(20), rng.random(20)
    yield "identical", base, base.copy()
    yield "float noise", np.full(20, 0.1) + 0.2, np.full(20, 0.3)
    yield "constant improvement", base + 0.25, base
    yield "one query", base[:1] + 0.5, base[:1]
    yield "two queries", base[:2] + 0.5, base[:2]
    yield "huge values", np.array([HUGE, -HUGE, 1.0, 2.0]), np.array([-HUGE, HUGE, 0.0, 1.0])
    yield "a NaN", np.r_[base[:5], math.nan], base[:6]
    yield "an infinity", np.r_[base[:5], math.inf], base[:6]
    yield "nothing", np.zeros(0), np.zeros(0)


def check_paired_test(spec: stats.PairedTestSpec) -> None:
    """p in [0, 1]; the interval is ordered, holds 0 exactly when p >= alpha, and holds the
    mean difference (tests of the mean); no difference for float noise; no significance from
    fewer queries than an exact sign-flip test could call significant; NaN only where no
    query is left (documented: n = 0)."""
    what = f"paired test {spec.name!r}"
    alpha = 0.05
    for case, a, b in _vectors():
        with contract(what, case):
            found = refused_or(
                lambda a=a, b=b: stats.paired_interval(
                    a, b, test=spec.name, alpha=alpha, n_resamples=500
                )
            )
            if case in ("a NaN", "an infinity"):
                assert found is None, "a non-finite value accepted"
                continue
            if found is None:
                assert case == "huge values", "refused"  # differences beyond float64
                continue
            p, low, high = found
            if len(a) < 2 and math.isnan(p):
                continue  # no test on fewer than two queries: NA, as the table shows it
            assert 0.0 <= p <= 1.0, f"p = {p}"
            assert low <= high, f"interval [{low}, {high}]"
            assert (low <= 0.0 <= high) == (p >= alpha), f"p = {p}, interval [{low}, {high}]"
            if case in ("identical", "float noise"):
                assert p >= alpha, f"p = {p} for no difference"
            if 2.0 ** (1 - len(a)) >= alpha:
                assert p >= alpha, f"p = {p}: significance from {len(a)} queries"


def check_correction(spec: stats.CorrectionSpec) -> None:
    """Adjusted p-values lie in [p, 1]; a test not run (NaN) stays NaN and moves no other."""
    what = f"correction {spec.name!r}"
    rng = np.random.default_rng(9)
    for n in (1, 2, 7, 50):
        with contract(what, f"{n} p-values"):
            p = rng.random(n) ** 3
            adjusted = np.array(stats.adjust(list(p), spec.name))
            assert adjusted.shape == p.shape
            assert ((adjusted >= p - 1e-15) & (adjusted <= 1.0)).all(), f"{adjusted} for {p}"
            with_nan = stats.adjust([*p, math.nan], spec.name)
            assert math.isnan(with_nan[-1]) and with_nan[:-1] == list(adjusted), "NaN moved"
    with contract(what, "p outside [0, 1]"):
        assert refused_or(lambda: stats.adjust([0.5, 1.5], spec.name)) is None, "p = 1.5 taken"


# --- input formats ------------------------------------------------------------------------

HOSTILE_BYTES = [
    b"",
    b"\x00\x01\x02garbage\xff\xfe",
    b"q1 Q0 d1 1 nan tag\n",
    b"q1 0 d1\n",
    b'{"q1": ',
    b"PAR1\x00\x00",
    b"\x1f\x8b\x08\x00broken gzip",
    "q\u00e9 Q0 \U0001f600 1 1e999 t\n".encode(),
    # JSON Lines as Arrow's reader and the careful one part on them: two records on a line,
    # a key that is not UTF-8, a line nested 100,000 deep (it crashed Arrow's parser)
    b'{"query_id": "q", "doc_id": "a", "score": 1, "relevance": 1} '
    b'{"query_id": "q", "doc_id": "b", "score": 2, "relevance": 1}\n',
    b'{"query_id": "q", "doc_id": "a", "sc\xe9re": 1, "score": 1, "relevance": 1}\n',
    b'{"query_id": "q", "doc_id": "a", "score": 1, "relevance": 1, "x": '
    + b"[" * 100_000
    + b"]" * 100_000
    + b"}\n",
]


def check_format(spec: InputFormat, folder: Path) -> None:
    """Hostile bytes under the format's name: read exactly or refused with a RagMetricsError;
    what is read holds only finite values."""
    what = f"input format {spec.name!r}"
    for number, (data, named) in enumerate(
        (data, named) for data in HOSTILE_BYTES for named in spec.suffixes or (".txt",)
    ):  # under each of the format's names: a name may choose a reader (.json, .jsonl)
        path = folder / f"hostile{number}{named}"
        path.write_bytes(data)
        for kind, read in (("qrels", spec.read_qrels), ("run", lambda p: spec.read_run(p, None))):
            with contract(what, f"{kind} from {data[:20]!r}"):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    found = refused_or(lambda read=read, path=path: read(path))
                if found is not None:  # a run's score may be infinite (1e999), a grade not
                    values = found.to_dict()
                    flat = [v for docs in values.values() for v in docs.values()]
                    assert not any(v != v for v in flat), "NaN read"
                    if kind == "qrels":
                        assert all(math.isfinite(v) for v in flat), "an infinite grade read"
    for suffix in spec.suffixes or (".txt",):
        path = folder / f"missing-id{suffix}"
        path.write_bytes(_missing_query_id(suffix))
        for kind, read in (("qrels", spec.read_qrels), ("run", lambda p: spec.read_run(p, None))):
            with contract(what, f"{kind} with a query id left empty ({suffix})"):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    found = refused_or(lambda read=read, path=path: read(path))
                assert found is None or "" not in found.to_dict(), "an empty query id read"


def _missing_query_id(suffix: str) -> bytes:
    """A file of the format (by its suffix) whose second row's query id is empty: a field not
    set upstream. Refused, or read without a query named ''."""
    if suffix == ".parquet":
        import io

        pa = pytest.importorskip("pyarrow")
        import pyarrow.parquet as pq

        table = pa.table(
            {
                "query_id": ["q1", ""],
                "doc_id": ["d1", "d2"],
                "score": [1.0, 2.0],
                "relevance": [1, 1],
            }
        )
        sink = io.BytesIO()
        pq.write_table(table, sink)
        return sink.getvalue()
    if suffix in (".json", ".jsonl"):
        rows = [
            {"query_id": q, "doc_id": d, "score": 1.0, "relevance": 1}
            for q, d in (("q1", "d1"), ("", "d2"))
        ]
        if suffix == ".jsonl":  # a record a line
            return "".join(json.dumps(row) + "\n" for row in rows).encode()
        return json.dumps(rows).encode()
    return b"q1 Q0 d1 1 1.0 t\n\tQ0 d2 2 0.5 t\n" if suffix != ".tsv" else b"q1\td1\t1\n\td2\t1\n"


# --- public functions ---------------------------------------------------------------------

HOSTILE_VALUES: list[Any] = [
    None,
    math.nan,
    math.inf,
    -1,
    0,
    HUGE,
    "",
    [],
    {},
    "x",
    True,
    object(),
    {"q0": None},
    {"q0": {"d0": math.nan}},
    {"q0": {"d0": "x"}},
    {"\U0001f600": {"\u00e9": 1}},
]


def benign_inputs() -> dict[str, Any]:
    """Benign values for the parameters of the public functions, by name."""
    rng = random.Random(4)
    qrels = {f"q{i}": {f"d{j}": rng.choice([0, 1, 2]) for j in range(5)} for i in range(12)}
    run = {q: {f"d{j}": float(rng.random()) for j in range(6)} for q in qrels}
    other = {q: {f"d{j}": float(rng.random()) for j in range(6)} for q in qrels}
    a = np.array([rng.random() for _ in range(12)])
    return {
        "qrels": qrels,
        "llm_qrels": qrels,
        "run": run,
        "runs": {"a": run, "b": other},
        "metrics": ["mrr", "ndcg@5"],
        "metric": "ndcg@5",
        "query_id": "q0",
        "cutoff": 3,
        "source": [rm.Run.from_dict(run)],
        "a": a,
        "b": a[::-1].copy(),
        "values": a,
        "scores": {"x": a, "y": a[::-1].copy()},
        "p_values": [0.01, 0.2, 0.04],
        "delta": 0.1,
        "min_diff": 0.05,
        "sd": 0.2,
        "n": 20,
        "llm_all": a,
        "llm_sample": a[:10],
        "human_sample": a[:10][::-1].copy(),
        "n_permutations": 50,
        "n_bootstrap": 50,
        "n_resamples": 50,
    }


def check_public_function(name: str, function: Callable[..., Any], given: dict[str, Any]) -> None:
    """``function`` called with benign arguments, then with each hostile value in each
    parameter in turn: a value (an evaluation without NaN or inf means) or a
    RagMetricsError, never a raw error; benign arguments give a value."""
    import inspect
    import signal

    parameters = [
        p
        for p in inspect.signature(function).parameters.values()
        if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
        and (p.name in given or p.default is not p.empty)
    ]
    base = {p.name: given[p.name] for p in parameters if p.name in given}

    def call(arguments: dict[str, Any]) -> Any:
        def stop(*_: Any) -> None:
            raise AssertionError("no answer within 20 s")

        previous = signal.signal(signal.SIGALRM, stop)
        signal.alarm(20)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return function(**arguments)
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)

    with contract(name, "benign arguments", benign=True):
        _check_answer(call(dict(base)))
    for parameter in parameters:
        for value in HOSTILE_VALUES:
            with contract(name, f"{parameter.name}={_short(value)}"):
                _check_answer(
                    refused_or(lambda value=value, p=parameter: call({**base, p.name: value}))
                )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 40 else text[:37] + "..."


def _check_answer(answer: Any) -> None:
    if isinstance(answer, rm.EvaluationResult):
        for label, mean in answer.aggregate.items():
            assert mean is None or math.isfinite(mean), f"{label}'s mean is {mean}"
    if isinstance(answer, float):
        assert not math.isinf(answer), f"an infinite answer {answer}"


# --- output formats -----------------------------------------------------------------------


def check_renderer(renderer: Any) -> None:
    """A format renders what it declares (a result, per query too, and a comparison) as
    text, with hostile ids and NA values, never a NaN or an infinity spelled out; a
    result that kept no per-query values is refused, not rendered empty."""
    import re

    hostile = "q\u202e<b>|`*_&\\"  # bidi override, markup of every format, a backslash
    qrels = {hostile: {"a": 5, "b": 4}, "plain": {"c": 1}}  # "plain": the set metrics are NA
    run = {hostile: {"a": 0.5, "b": 0.5}, "plain": {"c": 1e308}}
    metrics = ["ndcg@5", "ra_nwg@5", "pct_proc@5"]
    result = rm.evaluate(qrels, run, metrics)
    assert np.isnan(result.values).any()  # NA values to render
    other = {hostile: {"b": 0.9}, "plain": {"c": 0.1}}
    comparison = rm.compare(qrels, {"x": run, "y": other}, metrics, n_permutations=20)
    cases: list[tuple[str, Any, dict[str, Any]]] = []
    if renderer.result is not None:
        cases += [("a result", result, {}), ("a result per query", result, {"per_query": True})]
    if renderer.comparison is not None:
        cases.append(("a comparison", comparison, {}))
    for case, value, options in cases:
        with contract(f"format {renderer.name}", case, benign=True):
            text = value.render(renderer.name, **options)
            assert isinstance(text, str) and text, "no text"
            spelled = re.search(r"(?<![A-Za-z])(nan|inf|infinity)(?![A-Za-z])", text, re.I)
            assert spelled is None, f"says {spelled.group(0) if spelled else ''!r}"
    if renderer.result is not None and "per_query" in _keywords(renderer.result):
        streamed = rm.evaluate_stream(qrels, [rm.Run.from_dict(run)], ["ndcg@5"])
        with contract(f"format {renderer.name}", "a result without per-query values"):
            refused = refused_or(lambda: streamed.render(renderer.name, per_query=True))
            assert refused is None, "rendered a result that kept no per-query values"


def _keywords(function: Callable[..., Any]) -> set[str]:
    import inspect

    return set(inspect.signature(function).parameters)
