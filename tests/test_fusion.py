"""Rank fusion against ranx, the reference: every method under every normalization, the
trained methods' learning, optimize_fusion's choice; ties in the inputs included.

ranx ranks tied docs in the order its sort leaves them; ragmetrics ranks them by doc id
(descending), as trec_eval does. The ranx runs here are built in ragmetrics' order, so both
libraries fuse the same rankings and any difference is in the fusion itself.
"""

from __future__ import annotations

import json
import math
import random
import re
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragmetrics import Qrels, Run
from ragmetrics.data._run import packed_columns
from ragmetrics.errors import InputFormatError, InvalidParameterError, QueryMismatchWarning
from ragmetrics.fusion import FUSION_METHODS, NORMALIZATIONS, REQUIRED, fuse, optimize_fusion
from tests.conftest import standins_out_of_order

ranx = pytest.importorskip("ranx")

SCORE_BASED_NORMS = ["min-max", "min-max-inverted", "max", "sum", "zmuv", "rank", "borda", None]


def _ranx_run(run: Run) -> Any:
    """``run`` as a ranx Run whose rankings are in ragmetrics' order (ties included)."""
    from numba import types
    from numba.typed import Dict

    outer = Dict.empty(
        key_type=types.unicode_type, value_type=types.DictType(types.unicode_type, types.float64)
    )
    for query_id in sorted(run.query_ids):
        inner = Dict.empty(key_type=types.unicode_type, value_type=types.float64)
        scores = run.scores(query_id)
        assert scores is not None
        for doc, score in zip(run[query_id], scores, strict=True):
            inner[doc] = score
        outer[query_id] = inner
    converted = ranx.Run()
    converted.run = outer
    converted.sorted = True
    return converted


def _random_runs(
    seed: int,
    n_runs: int = 3,
    queries: int = 25,
    grid: float | None = 0.25,
    shallowest: int = 1,
    shared: bool = False,
) -> list[Run]:
    """Runs over a shared pool of docs; scores on a coarse grid (ties) unless ``grid`` is None;
    with ``shared`` every run ranks the same docs."""
    rng = random.Random(seed)
    runs = []
    for r in range(n_runs):
        results: dict[str, dict[str, float]] = {}
        for q in range(queries):
            depth = rng.randint(shallowest, 40)
            pool = [f"d{q}-{i}" for i in range(60)]
            docs = pool[: 12 + q % 20] if shared else rng.sample(pool, depth)
            results[f"q{q:02d}"] = {
                doc: (round(rng.uniform(-3, 9) / grid) * grid if grid else rng.uniform(-3, 9))
                for doc in docs
            }
        runs.append(Run.from_dict(results, name=f"r{r}"))
    return runs


def _qrels_for(runs: list[Run], seed: int) -> Qrels:
    rng = random.Random(seed)
    judged: dict[str, dict[str, int]] = {}
    for query_id in runs[0].query_ids:
        docs = sorted({d for run in runs for d in run[query_id]})
        judged[query_id] = {
            d: rng.choice([0, 0, 1, 2]) for d in rng.sample(docs, len(docs) // 2 + 1)
        }
    return Qrels.from_dict(judged)


def _ours(run: Run) -> dict[str, dict[str, float]]:
    return {q: dict(zip(run[q], run.scores(q) or (), strict=True)) for q in run.query_ids}


def _theirs(run: Any) -> dict[str, dict[str, float]]:
    return {q: dict(docs) for q, docs in run.to_dict().items()}


PARAMS: dict[str, dict[str, Any]] = {
    "gmnz": {"gamma": 0.37},
    "logn_isr": {"sigma": 0.2},
    "rrf": {"k": 7},
    "rbc": {"phi": 0.83},
    "wsum": {"weights": [0.2, 0.5, 0.3]},
    "wmnz": {"weights": [0.2, 0.5, 0.3]},
    "mixed": {"weights": [0.2, 0.5, 0.3]},
    "w_bordafuse": {"weights": [0.2, 0.5, 0.3]},
}
RANX_METHODS = [
    "sum", "mnz", "anz", "gmnz", "max", "min", "med", "isr", "log_isr", "logn_isr", "rrf",
    "rbc", "wsum", "wmnz", "mixed", "bordafuse", "w_bordafuse", "condorcet", "w_condorcet",
    "probfuse", "segfuse", "slidefuse", "bayesfuse", "mapfuse", "posfuse",
]  # fmt: skip
UNTRAINED = [
    name
    for name in RANX_METHODS
    if not FUSION_METHODS[name].trained and name not in ("condorcet", "w_condorcet")
]


def test_every_ranx_method_and_normalization_is_registered() -> None:
    assert set(RANX_METHODS) <= set(FUSION_METHODS)
    assert {"min-max", "min-max-inverted", "max", "sum", "zmuv", "rank", "borda"} <= set(
        NORMALIZATIONS
    )


# ranx keeps a borda-normalized run in hash order (a set's), so its rank-based methods read
# arbitrary ranks there; ragmetrics keeps the run's order: those pairs are not compared
@pytest.mark.parametrize(
    ("method", "norm"),
    [
        (method, norm)
        for method in UNTRAINED
        for norm in SCORE_BASED_NORMS
        if not (norm == "borda" and not FUSION_METHODS[method].uses_scores)
    ],
)
def test_each_method_under_each_normalization_equals_ranx(method: str, norm: str | None) -> None:
    # after min-max-inverted both libraries rank again, and ranx's sort leaves ties in an
    # order of its own: that case is checked on scores without ties
    grid = None if norm == "min-max-inverted" else 0.25
    runs = _random_runs(seed=zlib.crc32(f"{method}/{norm}".encode()) % 1000, grid=grid)
    ours = fuse(runs, method=method, norm=norm, params=PARAMS.get(method))
    theirs = ranx.fuse(
        [_ranx_run(r) for r in runs], norm=norm, method=method, params=PARAMS.get(method)
    )
    assert _ours(ours) == _theirs(theirs)


def test_the_literature_names_are_aliases() -> None:
    runs = _random_runs(seed=3)
    assert fuse(runs, method="combsum") == fuse(runs, method="sum")
    assert fuse(runs, method="combmnz") == fuse(runs, method="mnz")


def _transitive(runs: list[Run], query_id: str) -> bool:
    """True when the pairwise majorities of the runs order the query's docs (no cycle)."""
    docs = sorted({d for run in runs for d in run[query_id]})
    rank = [{d: i for i, d in enumerate(run[query_id])} for run in runs]
    far = 10**9
    beats = {
        (x, y)
        for x in docs
        for y in docs
        if x != y
        and sum(r.get(x, far) < r.get(y, far) for r in rank)
        > sum(r.get(y, far) < r.get(x, far) for r in rank)
    }
    wins = {x: sum((x, y) in beats for y in docs) for x in docs}
    order = sorted(docs, key=lambda d: -wins[d])
    decided = all((x, y) in beats for i, x in enumerate(order) for y in order[i + 1 :])
    return decided


@pytest.mark.parametrize("method", ["condorcet", "w_condorcet"])
def test_condorcet_equals_ranx_where_the_majorities_order_the_docs(method: str) -> None:
    rng = random.Random(11)
    base = {f"q{q}": [f"d{q}-{i}" for i in range(rng.randint(2, 9))] for q in range(60)}
    runs = []
    for r in range(3):
        lists = {}
        for q, docs in base.items():
            noisy = sorted(docs, key=lambda d: docs.index(d) + rng.gauss(0, 1.2))
            lists[q] = {d: float(len(noisy) - i) for i, d in enumerate(noisy)}
        runs.append(Run.from_dict(lists, name=f"r{r}"))
    params = {"weights": [1.0, 1.0, 1.0]} if method == "w_condorcet" else None
    ours = _ours(fuse(runs, method=method, params=params))
    theirs = _theirs(ranx.fuse([_ranx_run(r) for r in runs], method=method, params=params))
    decided = [q for q in base if _transitive(runs, q)]
    assert len(decided) > 30
    assert {q: ours[q] for q in decided} == {q: theirs[q] for q in decided}


def test_condorcet_breaks_a_full_tie_by_doc_id_descending() -> None:
    """Two runs in opposite orders: every pair ties in votes, every doc in wins and in
    summed ranks; the doc ids decide, descending, whatever order the runs list them in."""
    one = Run.from_dict({"q": {"m": 3.0, "z": 2.0, "a": 1.0}, "p": {"k": 2.0, "b": 1.0}})
    two = Run.from_dict({"q": {"a": 3.0, "z": 2.0, "m": 1.0}, "p": {"b": 2.0, "k": 1.0}})
    fused = fuse([one, two], method="condorcet", norm=None).to_dict()
    assert fused == {"q": {"z": 3.0, "m": 2.0, "a": 1.0}, "p": {"k": 2.0, "b": 1.0}}


@pytest.mark.parametrize("method", ["condorcet", "w_condorcet"])
def test_condorcet_counted_in_any_blocks_gives_the_same_scores(
    method: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Queries of one candidate count are counted together, a block at a time: blocks of
    one query give the scores of one block of all, queries of uneven counts included."""
    from ragmetrics.fusion import _methods

    rng = random.Random(3)
    runs = []
    for r in range(3):
        lists = {}
        for q in range(40):
            pool = [f"d{i}" for i in range(rng.choice([1, 4, 9, 30]))]
            picked = rng.sample(pool, rng.randrange(1, len(pool) + 1))
            lists[f"q{q}"] = {d: float(rng.choice([1, 2, 2, 3])) for d in picked}  # ties
        runs.append(Run.from_dict(lists, name=f"r{r}"))
    params = {"weights": [0.7, 1.3, 0.25]} if method == "w_condorcet" else None
    whole = fuse(runs, method=method, params=params).to_dict()
    monkeypatch.setattr(_methods, "_CONDORCET_CELLS", 1)
    assert fuse(runs, method=method, params=params).to_dict() == whole


@pytest.mark.parametrize("norm", ["min-max", "rank", None])
@pytest.mark.parametrize(
    "method", ["probfuse", "segfuse", "slidefuse", "posfuse", "bayesfuse", "mapfuse"]
)
def test_trained_methods_learn_and_fuse_as_ranx(method: str, norm: str | None) -> None:
    runs = _random_runs(seed=5, grid=None)
    qrels = _qrels_for(runs, seed=6)
    from ranx import fusion as rf

    ranx_runs = [_ranx_run(r) for r in runs]
    normed = (
        ranx_runs if norm is None else [ranx.normalization.norm_switch(norm)(r) for r in ranx_runs]
    )
    rq = ranx.Qrels(qrels.to_dict())
    grid: dict[str, Any] = {}
    if method == "probfuse":
        grid = {"min_n_segments": 3, "max_n_segments": 3}
        learned: dict[str, Any] = {"probs": rf.probfuse_train(rq, normed, 3)}
    elif method == "slidefuse":
        grid = {"min_w": 2, "max_w": 2}
        learned = {"probs": rf.slidefuse_train(rq, normed), "w": 2}
    elif method == "bayesfuse":
        learned = {"log_odds": rf.bayesfuse_train(rq, normed)}
    elif method == "mapfuse":
        learned = {"map_scores": rf.mapfuse_train(rq, normed)}
    else:
        learned = {"probs": getattr(rf, f"{method}_train")(rq, normed)}
    ours_learned = optimize_fusion(
        qrels, runs, norm=norm, method=method, show_progress=False, **grid
    )
    assert isinstance(ours_learned, dict)
    for key, value in learned.items():
        if key == "map_scores":  # a mean over queries: summed exactly here, pairwise in ranx
            np.testing.assert_allclose(ours_learned[key], value, rtol=1e-14)
        elif key == "w":
            assert ours_learned[key] == value
        else:
            for mine, theirs in zip(ours_learned[key], value, strict=True):
                np.testing.assert_array_equal(mine, theirs)
    fused = _ours(fuse(runs, method=method, norm=norm, params=ours_learned))
    expected = _theirs(ranx.fuse(ranx_runs, norm=norm, method=method, params=learned))
    if method == "mapfuse":
        for q in expected:
            assert fused[q].keys() == expected[q].keys()
            np.testing.assert_allclose(
                [fused[q][d] for d in expected[q]], list(expected[q].values()), rtol=1e-14
            )
    else:
        assert fused == expected


@pytest.mark.parametrize(
    ("method", "grid"),
    [
        ("wsum", {"step": 0.1}),
        ("wmnz", {"step": 0.25}),
        ("mixed", {"step": 0.2}),
        ("gmnz", {"step": 0.05}),
        ("rbc", {"step": 0.05, "max_phi": 0.95}),  # phi = 1 scores every doc 0
        ("logn_isr", {"step": 0.1}),
    ],
)
def test_optimize_fusion_picks_what_ranx_picks(method: str, grid: dict[str, Any]) -> None:
    """Each setting tried gets the same score, and the same one wins. Both libraries score
    a fused run with a metric, and a metric ranks tied docs by its own rule (trec_eval's
    here, a sort's order in ranx): queries whose fused top 11 hold a tie are left out."""
    runs = _random_runs(seed=21, n_runs=3, queries=300, grid=None, shared=True)
    spec = FUSION_METHODS[method]
    assert spec.grid is not None
    trials = spec.grid(len(runs), {**spec.grid_settings, **grid})
    untied = set(runs[0].query_ids)
    for trial in trials:
        fused = fuse(runs, method=method, params=trial)
        untied &= {q for q in fused.query_ids if len(set((fused.scores(q) or ())[:11])) == 11}
    runs = [Run.from_dict({q: _ours(r)[q] for q in sorted(untied)}, name=r.name) for r in runs]
    qrels = _qrels_for(runs, seed=22)
    assert len(runs[0]) >= 10
    ours, report = optimize_fusion(
        qrels,
        runs,
        method=method,
        metric="ndcg@10",
        show_progress=False,
        return_optimization_report=True,
        **grid,
    )
    theirs, their_report = ranx.optimize_fusion(
        ranx.Qrels(qrels.to_dict()),
        [_ranx_run(r) for r in runs],
        method=method,
        metric="ndcg@10",
        show_progress=False,
        return_optimization_report=True,
        **grid,
    )

    def numbers(config: str) -> tuple[float, ...]:
        return tuple(
            float(x)
            for x in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", config.replace("np.float64", ""))
        )

    expected = {
        numbers(c): float(r)
        for c, r in zip(their_report.configs, their_report.results, strict=True)
    }
    mine = {numbers(c): value for c, value in report.items()}
    # ranx keeps a weight vector only when its float sum is exactly 1.0: it loses some
    # (0.1 + 0.2 + 0.7); ragmetrics counts in steps and keeps them all
    # ranx's grids also try a last step past the top (phi = 1.01 from 0.01 to 1 by 0.05)
    beyond = {c for c in expected if c not in mine}
    top = max(max(c) for c in mine)
    assert all(max(c) > top for c in beyond), beyond
    expected = {c: v for c, v in expected.items() if c not in beyond}
    assert set(expected) <= set(mine)
    for config, value in expected.items():
        assert mine[config] == pytest.approx(value, rel=1e-12, abs=1e-12)
    for key, value in theirs.items():
        if key == "probs":
            for learned, best in zip(ours[key], value, strict=True):
                np.testing.assert_array_equal(learned, best)
        elif not isinstance(value, tuple) and value > top:  # ranx's best lies past the top
            winner = max(expected, key=lambda c: (expected[c], list(expected).index(c)))
            assert (ours[key],) == winner
        else:
            assert ours[key] == (list(value) if isinstance(value, tuple) else value)
    assert len(ours) == len(theirs)


def test_rrf_by_hand() -> None:
    bm25 = Run.from_dict({"q1": {"a": 3.0, "b": 2.0, "c": 1.0}})
    dense = Run.from_lists({"q1": ["c", "a"]})
    fused = fuse([bm25, dense], method="rrf", params={"k": 60})
    assert fused.scores("q1") == (1 / 61 + 1 / 62, 1 / 63 + 1 / 61, 1 / 62)
    assert fused["q1"] == ("a", "c", "b")


def test_runs_on_different_queries_warn_and_fuse_what_each_has() -> None:
    one = Run.from_dict({"q1": {"a": 1.0}, "q2": {"b": 1.0}})
    two = Run.from_dict({"q1": {"a": 2.0, "c": 1.0}})
    with pytest.warns(QueryMismatchWarning, match="lacks 1 .q2"):
        fused = fuse([one, two], method="sum", norm=None)
    assert fused.to_dict() == {"q1": {"a": 3.0, "c": 1.0}, "q2": {"b": 1.0}}


def test_mistakes_are_named() -> None:
    runs = _random_runs(seed=1, n_runs=2)
    with pytest.raises(InvalidParameterError, match="Unknown fusion method 'rrr'"):
        fuse(runs, method="rrr")
    with pytest.raises(InvalidParameterError, match="Unknown normalization 'minmax'"):
        fuse(runs, norm="minmax")
    with pytest.raises(InvalidParameterError, match="needs phi"):
        fuse(runs, method="rbc")
    with pytest.raises(InvalidParameterError, match="learn it with optimize_fusion"):
        fuse(runs, method="probfuse")
    with pytest.raises(InvalidParameterError, match="3 weights for 2 runs"):
        fuse(runs, method="wsum", params={"weights": [0.2, 0.3, 0.5]})
    with pytest.raises(InvalidParameterError, match="unknown parameters \\['K'\\]"):
        fuse(runs, method="rrf", params={"K": 3})
    with pytest.raises(InvalidParameterError, match="phi must be in"):
        fuse(runs, method="rbc", params={"phi": 1.5})
    with pytest.raises(InputFormatError, match="two or more runs"):
        fuse(runs[:1])
    lists = Run.from_lists({q: list(runs[1][q]) for q in runs[1].query_ids})
    with pytest.raises(InputFormatError, match="without scores"):
        fuse([lists, runs[0]], method="wsum")
    fuse([lists, runs[0]], method="wsum", norm="rank")  # scores by rank: fine
    with pytest.raises(InvalidParameterError, match="no parameter"):
        optimize_fusion(Qrels.from_dict({"q00": {"a": 1}}), runs, method="sum")


def test_every_registered_method_and_normalization_runs_on_awkward_input() -> None:
    """Empty rankings, one-doc rankings, equal scores, a query one run lacks."""
    one = Run.from_dict({"q1": {"a": 1.0, "b": 1.0}, "q2": {}, "q3": {"x": -2.0}})
    two = Run.from_dict({"q1": {"b": 5.0}, "q2": {"c": 0.0}, "q3": {"x": -2.0, "y": -2.0}})
    qrels = Qrels.from_dict({"q1": {"a": 1}, "q2": {"c": 1}, "q3": {"y": 2}})
    small = {"step": 0.5, "max_n_segments": 3, "max_w": 3}
    for method, spec in FUSION_METHODS.items():
        needs = [key for key, value in spec.params.items() if value is REQUIRED]
        for norm in NORMALIZATIONS:
            params = None
            if needs:
                params = optimize_fusion(
                    qrels,
                    [one, two],
                    norm=norm,
                    method=method,
                    show_progress=False,
                    **{k: v for k, v in small.items() if k in spec.grid_settings},
                )
            fused = fuse([one, two], method=method, norm=norm, params=params)
            assert set(fused.query_ids) == {"q1", "q2", "q3"}
            for q in fused.query_ids:
                scores = fused.scores(q) or ()
                assert all(np.isfinite(scores)), (method, norm, q, scores)


@pytest.mark.parametrize(
    ("method", "grid"),
    [
        ("probfuse", {"min_n_segments": 1, "max_n_segments": 12}),
        ("slidefuse", {"min_w": 1, "max_w": 8}),
    ],
)
def test_optimize_fusion_tries_what_ranx_tries(method: str, grid: dict[str, Any]) -> None:
    """ProbFuse and SlideFuse score whole segments alike, so their fused runs are full of
    ties, which a metric breaks by its own rule (its choice can differ from ranx's there):
    every setting tried is ranx's, and fuses to ranx's run."""
    from ranx import fusion as rf

    runs = _random_runs(seed=31, n_runs=3, queries=40, grid=None, shared=True)
    qrels = _qrels_for(runs, seed=32)
    best, report = optimize_fusion(
        qrels,
        runs,
        method=method,
        norm=None,
        show_progress=False,
        return_optimization_report=True,
        **grid,
    )
    ranx_runs = [_ranx_run(r) for r in runs]
    rq = ranx.Qrels(qrels.to_dict())
    _, their_report = ranx.optimize_fusion(
        rq,
        ranx_runs,
        method=method,
        norm=None,
        show_progress=False,
        return_optimization_report=True,
        **grid,
    )
    assert list(report) == list(their_report.configs)
    for config in report:
        if method == "probfuse":
            learned = {"probs": rf.probfuse_train(rq, ranx_runs, int(config))}
            ours = optimize_fusion(
                qrels,
                runs,
                method=method,
                norm=None,
                show_progress=False,
                min_n_segments=int(config),
                max_n_segments=int(config),
            )
        else:
            learned = {"probs": rf.slidefuse_train(rq, ranx_runs), "w": int(config)}
            ours = {**best, "w": int(config)}
        theirs = ranx.fuse(ranx_runs, norm=None, method=method, params=learned)
        assert _ours(fuse(runs, method=method, norm=None, params=ours)) == _theirs(theirs)
    chosen = max(report, key=lambda c: (report[c], list(report).index(c)))
    if method == "slidefuse":
        assert best["w"] == int(chosen)


def test_the_command_line_fuses_trains_and_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ragmetrics.cli._commands import main

    runs = _random_runs(seed=41, n_runs=2, grid=None)
    qrels = _qrels_for(runs, seed=42)
    paths = []
    for run in runs:
        path = tmp_path / f"{run.name}.trec"
        run.to_trec(path)
        paths.append(str(path))
    qrels_path = tmp_path / "qrels.txt"
    qrels.to_trec(qrels_path)
    out = tmp_path / "rrf.trec"
    assert main(["fuse", *paths, "-o", str(out), "--param", "k=10", "--depth", "5"]) == 0
    expected = fuse(runs, method="rrf", params={"k": 10}).truncate(5)
    assert _ours(Run.from_trec(out)) == _ours(expected)

    out = tmp_path / "wsum.json"
    assert (
        main(["fuse", *paths, "-o", str(out), "--method", "wsum", "--train", str(qrels_path)]) == 0
    )
    chosen = optimize_fusion(qrels, runs, method="wsum", metric="ndcg@10", show_progress=False)
    assert isinstance(chosen, dict)
    assert f'"weights": {json.dumps(chosen["weights"])}' in capsys.readouterr().err
    assert _ours(Run.from_json(out)) == _ours(fuse(runs, method="wsum", params=chosen))

    assert main(["fuse", *paths, "-o", str(out), "--method", "rbc"]) == 2
    assert "needs phi" in capsys.readouterr().err
    assert main(["fuse", *paths, "-o", str(out), "--param", "k"]) == 2
    assert "NAME=VALUE" in capsys.readouterr().err


def test_max_normalization_of_a_query_whose_best_score_is_zero_stays_finite() -> None:
    """norm="max" divides by the query's best score, or by a floor of 1e-9 when that is 0 or
    below; a score of -1.8e299 over the floor overflowed to -inf and the fusion was refused
    (found by tests/test_properties_analysis.py). Such a query is worked out again on its
    scores scaled by a power of two, as the other normalizations' overflows are."""
    runs = [{"q": {"a": 0.0, "b": -1.797693134862316e299}}, {"q": {"a": 1.0}}]
    fused = fuse(runs, method="sum", norm="max")
    assert list(fused["q"]) == ["a", "b"]
    assert all(math.isfinite(v) for v in fused.to_dict()["q"].values())


def _fused_by_hand(runs: list[dict[str, dict[str, float]]], k: int = 60) -> dict[str, dict]:
    """RRF and CombSUM (no normalization) of dict runs, by a plain walk."""
    rrf: dict[str, dict[str, float]] = {}
    summed: dict[str, dict[str, float]] = {}
    for run in runs:
        for query_id, docs in run.items():
            # best first, ties by doc id descending (code points: the bytes' order)
            ranked = sorted(docs, key=lambda d: (docs[d], d), reverse=True)
            for rank, doc in enumerate(ranked, start=1):
                rrf.setdefault(query_id, {}).setdefault(doc, 0.0)
                rrf[query_id][doc] += 1 / (k + rank)
                summed.setdefault(query_id, {}).setdefault(doc, 0.0)
                summed[query_id][doc] += docs[doc]
    return {"rrf": rrf, "sum": summed}


def _awkward_ids(seed: int, n_runs: int) -> list[dict[str, dict[str, float]]]:
    """Runs whose doc ids differ in width (1 to 200 bytes), hold non-ASCII letters and
    share many docs within each query, in every order."""
    rng = random.Random(seed)
    pool = ["a", "é", "ü-9", "9" * 17, "x" * 200, "δοκ-1", "doc-10", "doc-1", "doc-100"]
    pool += [f"u{rng.getrandbits(64):x}" for _ in range(30)]
    runs = []
    for _ in range(n_runs):
        run = {}
        for q in range(12):
            docs = rng.sample(pool, rng.randint(1, len(pool)))
            run[f"q{q}"] = {d: float(rng.randint(0, 5)) for d in docs}  # ties
        runs.append(run)
    return runs


@pytest.mark.parametrize("seed", range(6))
def test_fusion_pairs_docs_on_bytes_as_by_hand(seed: int, tmp_path: Path) -> None:
    """The pairs are found on the ids' bytes (runs from dicts, and runs read from TREC
    files, which keep bytes); the same fusion as a walk over the dicts, whatever the ids'
    widths, and the same as the strings' path (an id that cannot be packed)."""
    dicts = _awkward_ids(seed, n_runs=2 + seed % 2)
    expected = _fused_by_hand(dicts)
    from_dicts = [Run.from_dict(d) for d in dicts]
    written = []
    for r, run in enumerate(from_dicts):
        path = tmp_path / f"run{r}.txt"
        run.to_trec(path)
        written.append(Run.from_trec(path))
    assert all(packed_columns(run) is not None for run in from_dicts + written)
    for runs in (from_dicts, written):
        for method, norm in (("rrf", None), ("sum", None)):
            fused = fuse(runs, method=method, norm=norm)
            got = {q: d for q, d in _ours(fused).items() if d}
            want = {q: d for q, d in expected[method].items() if d}
            assert got.keys() == want.keys()
            for query_id, docs in want.items():
                assert got[query_id] == pytest.approx(docs, rel=1e-15), (method, query_id)
    # a NUL in one id: no run is packed, the strings are compared
    stringy = [dict(d) for d in dicts]
    stringy[0] = {**stringy[0], "q0": {**stringy[0]["q0"], "n\x00ul": 9.0}}
    runs = [Run.from_dict(d) for d in stringy]
    assert packed_columns(runs[0]) is None
    by_strings = fuse(runs, method="rrf", norm=None)
    want_strings = _fused_by_hand(stringy)["rrf"]
    got_strings = _ours(by_strings)
    for query_id, docs in want_strings.items():
        assert got_strings[query_id] == pytest.approx(docs, rel=1e-15), query_id


def test_two_docs_whose_hashes_meet_stay_two_candidates() -> None:
    """Two ids whose hashes agree in the bits the pairs are sorted by (found by search)
    are told apart by their bytes: the fusion numbers the ids themselves."""
    from ragmetrics.formats import _packed

    left, right = "doc-1615829", "doc-3065297"
    ids = np.array([left.encode(), right.encode()])
    keys = _packed.hashes(ids, _packed.n_words(ids)) >> np.uint64(24)
    assert keys[0] == keys[1]  # the premise: the two meet
    # the second query's ids sort around the first's: numbered by id, the rows must still
    # be grouped by query
    one = Run.from_dict({"q": {left: 2.0, "doc-1": 1.0}, "p": {"a": 1.0, "z": 0.5}})
    two = Run.from_dict({"q": {right: 3.0, "doc-1": 2.0}, "p": {"z": 1.0}})
    fused = fuse([one, two], method="sum", norm=None)
    assert fused.to_dict() == {
        "q": {right: 3.0, "doc-1": 3.0, left: 2.0},
        "p": {"z": 1.5, "a": 1.0},
    }


def test_ids_past_the_widest_stand_in_and_fuse_as_their_strings() -> None:
    """An id longer than 256 bytes is packed as a stand-in of 16 bytes, in any run: runs
    of such ids and of short ones are joined as bytes, none padded to the long id's width,
    and fuse to the strings' answer; two long ids that share their first bytes, tied,
    rank as their strings do (descending), whatever their stand-ins' hashes say."""
    from ragmetrics.fusion._table import align

    wide = Run.from_dict({"q": {"x" * 300: 1.0}})
    short = Run.from_dict({"q": {"z": 1.0, "x" * 300: 0.2}})
    narrow = Run.from_dict({"q": {"y" * 200: 2.0, "z": 0.5}})
    assert all(packed_columns(run) is not None for run in (wide, short, narrow))
    assert align([wide, Run.from_dict({"q": {"z": 1.0}})]).docs.dtype.itemsize == 16
    assert align([narrow, Run.from_dict({"q": {"z": 1.0}})]).docs.dtype.kind == "S"
    fused = fuse([wide, short, narrow], method="sum", norm=None)
    assert fused.to_dict() == {"q": {"y" * 200: 2.0, "z": 1.5, "x" * 300: 1.2}}
    twins = ["x" * 300 + tail for tail in "abcdefgh"]  # one prefix, hashes in any order
    tied = fuse([Run.from_dict({"q": dict.fromkeys(twins, 1.0)}), wide], method="sum", norm=None)
    assert list(tied.ranking("q")) == [*sorted(twins, reverse=True), "x" * 300]


@pytest.mark.parametrize("method", ["sum", "rrf", "bordafuse", "condorcet", "mnz", "isr"])
@pytest.mark.parametrize("norm", [None, "borda", "rank"])
def test_ids_past_256_bytes_fuse_as_the_same_ids_short(method: str, norm: str | None) -> None:
    """Each doc id given a prefix of 300 bytes (stand-ins, whose bytes sort in their hashes'
    order) fuses to the same runs as the short ids: the candidates a run missed (borda) and
    Condorcet's ties are ordered by the ids' strings, as the short ids' are."""
    runs = _random_runs(seed=31, n_runs=3, queries=12)
    prefix = "https://example.com/" + "p" * 280 + "/"
    long_runs = [
        Run.from_dict({q: {prefix + d: s for d, s in m.items()} for q, m in run.to_dict().items()})
        for run in runs
    ]
    if norm == "borda" and not FUSION_METHODS[method].uses_scores:
        return
    params = PARAMS.get(method)
    short = fuse(runs, method=method, norm=norm, params=params)
    long = fuse(long_runs, method=method, norm=norm, params=params)
    for q in short.query_ids:
        assert [d.removeprefix(prefix) for d in long.ranking(q)] == list(short.ranking(q)), q
        assert sorted(long.to_dict()[q].values()) == sorted(short.to_dict()[q].values()), q


@pytest.mark.parametrize("method", ["condorcet", "bordafuse"])
def test_a_tie_between_long_ids_is_broken_as_their_strings_are(method: str) -> None:
    """Two runs that rank two long ids in opposite orders tie them; the tie goes by doc id,
    and two ids whose stand-ins sort the other way round from their strings (picked so)
    come out in the strings' order, as the same tie between short ids does."""
    low, high = standins_out_of_order()  # their stand-ins sort the other way round
    runs = [
        Run.from_lists({"q": [low, high, "z"]}),
        Run.from_lists({"q": [high, low, "z"]}),
    ]
    short = [Run.from_lists({"q": ["a", "b", "z"]}), Run.from_lists({"q": ["b", "a", "z"]})]
    names = {"a": low, "b": high, "z": "z"}
    fused = fuse(runs, method=method)
    expected = fuse(short, method=method)
    assert list(fused.ranking("q")) == [names[d] for d in expected.ranking("q")]
