"""The same invariants over every registered metric: a metric is tested once registered.

Set metrics (family "set") read utility grades 1..5, so their cases are drawn on that scale;
the "unjudged equals grade 0" rule is a classic-family rule (for set metrics an unjudged doc
is, by definition, outside the labeled pool U, see METRICS.md).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

import ragmetrics as rm
from ragmetrics.engine import stream
from ragmetrics.metrics import Cutoff, parse_metric, registered
from ragmetrics.metrics.registry import aliases_of, presets_of
from tests.contract import nuggets_for

SPECS = sorted(registered().values(), key=lambda s: s.name)
CUTOFFS = (1, 3, 10)


def _names(spec) -> list[str]:  # type: ignore[no-untyped-def]
    """The spec's names at several cutoffs, its preset aliases (``ndcg_exp``) included."""
    names = []
    for base in [spec.name, *presets_of(spec.name)]:
        if spec.cutoff is Cutoff.NONE:
            names.append(base)
            continue
        names += [f"{base}@{k}" for k in CUTOFFS]
        names += [base] if spec.cutoff is Cutoff.OPTIONAL else []
    return names


def _evaluate(spec, qrels, run, names, **options):  # type: ignore[no-untyped-def]
    """rm.evaluate, with nuggets made from the qrels for a metric that reads them (every
    relevant doc a nugget: a ranking that holds them all finds them all)."""
    return rm.evaluate(qrels, run, names, **options, **nuggets_for(spec, qrels, unsupported=False))


def _case(seed: int, family: str) -> tuple[dict, dict]:
    rng = random.Random(seed)
    grades = [1, 2, 3, 4, 5] if family == "set" else [-1, 0, 1, 2, 3]
    qrels, run = {}, {}
    for q in range(40):
        docs = [f"d{i}" for i in range(rng.randrange(1, 25))]
        qrels[f"q{q}"] = {
            d: rng.choice(grades) for d in rng.sample(docs, rng.randrange(1, len(docs) + 1))
        }
        ranking = rng.sample(docs + [f"x{i}" for i in range(5)], rng.randrange(0, len(docs) + 5))
        run[f"q{q}"] = ranking
    return qrels, run


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_values_lie_in_unit_interval(spec) -> None:  # type: ignore[no-untyped-def]
    for seed in range(3):
        qrels, run = _case(seed, spec.family)
        result = _evaluate(spec, qrels, run, _names(spec))
        finite = result.values[~np.isnan(result.values)]
        if not spec.can_be_negative:
            assert (finite >= 0).all()
        if spec.unit_range:
            assert (finite <= 1).all()  # exactly: no rounding above the maximum
        if not spec.can_be_na:
            assert not np.isnan(result.values).any(), "NA from a metric declared never NA"


@pytest.mark.parametrize("spec", [s for s in SPECS if s.perfect_is_one], ids=lambda s: s.name)
def test_perfect_ranking_scores_one(spec) -> None:  # type: ignore[no-untyped-def]
    """(precision, f1, err, precision_4plus, harm and unjudged are not 1 on a perfect ranking
    by design: k > R, graded stopping, or lower is better; they declare perfect_is_one=False.)"""
    # every query has R = 3 relevant docs, so a perfect ranking is defined at k >= 3
    rng = random.Random(7)
    grades = [3, 4, 5] if spec.family == "set" else [1, 2, 3]
    qrels = {f"q{q}": {f"d{i}": rng.choice(grades) for i in range(3)} for q in range(30)}
    ideal = {q: sorted(j, key=lambda d: (-j[d], d)) for q, j in qrels.items()}
    names = [n for n in _names(spec) if (parse_metric(n).cutoff or 3) >= 3]
    result = _evaluate(spec, qrels, ideal, names)
    for label, value in result.aggregate.items():
        assert value == 1.0, label  # exactly: no rounding leaves a perfect ranking below or above
    for query_id, values in result.per_query.items():
        assert set(values.values()) <= {1.0, None}, query_id  # None: NA for that query


@pytest.mark.parametrize(
    "spec", [s for s in SPECS if s.cutoff is not Cutoff.NONE], ids=lambda s: s.name
)
def test_nothing_below_rank_k_changes_metric_at_k(spec) -> None:  # type: ignore[no-untyped-def]
    qrels, run = _case(3, spec.family)
    rng = random.Random(5)
    for name in [n for n in _names(spec) if parse_metric(n).cutoff is not None]:
        k = parse_metric(name).cutoff
        if spec.family == "set":
            # the pool of PROC@k is the whole ranking, so tail changes are meant to count there;
            # fix the pool to isolate the top k
            options = {"pool": rm.Run.from_lists(run)}
        else:
            options = {}
        shuffled = {q: r[:k] + rng.sample(r[k:], len(r[k:])) for q, r in run.items()}
        cut = {q: r[:k] for q, r in run.items()}
        base = _evaluate(spec, qrels, run, [name], **options).values
        assert np.array_equal(
            base, _evaluate(spec, qrels, shuffled, [name], **options).values, equal_nan=True
        )
        assert np.array_equal(
            base, _evaluate(spec, qrels, cut, [name], **options).values, equal_nan=True
        )


@pytest.mark.parametrize(
    "spec",
    [s for s in SPECS if s.family == "classic" and not (s.judged_only or s.counts_judged)],
    ids=lambda s: s.name,
)
def test_unjudged_doc_counts_as_grade_zero(spec) -> None:  # type: ignore[no-untyped-def]
    qrels, run = _case(11, "classic")
    explicit = {q: {**j, **{d: 0 for d in run[q] if d not in j}} for q, j in qrels.items()}
    names = _names(spec)
    assert np.array_equal(
        rm.evaluate(qrels, run, names).values,
        rm.evaluate(explicit, run, names).values,
        equal_nan=True,
    )


@pytest.mark.parametrize("spec", [s for s in SPECS if s.judged_only], ids=lambda s: s.name)
def test_unjudged_docs_are_skipped_where_only_judged_docs_count(spec) -> None:  # type: ignore[no-untyped-def]
    qrels, run = _case(11, "classic")
    rng = random.Random(2)
    padded = {}
    for q, ranking in run.items():  # unjudged docs slipped in anywhere
        extended = list(ranking)
        for i in range(5):
            extended.insert(rng.randrange(len(extended) + 1), f"unjudged{i}")
        padded[q] = extended
    names = _names(spec)
    assert np.array_equal(
        rm.evaluate(qrels, run, names).values,
        rm.evaluate(qrels, padded, names).values,
        equal_nan=True,
    )


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_names_round_trip(spec) -> None:  # type: ignore[no-untyped-def]
    for name in _names(spec):
        metric = parse_metric(name)
        assert metric.spec is spec
        assert parse_metric(metric.name).name == metric.name
        assert metric.label == name
        assert parse_metric(name.upper()).name == metric.name
    suffix = "" if spec.cutoff is Cutoff.NONE else "@5"
    for alias in aliases_of(spec.name):
        assert parse_metric(alias + suffix).spec is spec
        assert parse_metric(alias.upper() + suffix).spec is spec


def test_results_are_keyed_by_the_name_written() -> None:
    result = rm.evaluate({"q": {"a": 1}}, {"q": ["a"]}, ["nDCG@10", "ndcg_cut_10", "P@1", "P_1"])
    assert list(result.aggregate) == ["nDCG@10", "ndcg_cut_10", "P@1", "P_1"]
    assert len(set(result.aggregate.values())) == 1


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_a_perfect_ranking_is_never_worse_than_a_random_one(spec) -> None:  # type: ignore[no-untyped-def]
    """The declared direction holds: the ideal ranking's mean is the best one can get."""
    rng = random.Random(17)
    # no grade 3: a rare 3 may outweigh common 4s, and then grade order is not weight order
    grades = [1, 2, 4, 5] if spec.family == "set" else [0, 1, 2, 3]
    qrels = {f"q{q}": {f"d{i}": rng.choice(grades) for i in range(8)} for q in range(30)}
    ideal = {q: sorted(j, key=lambda d: (-j[d], d)) for q, j in qrels.items()}
    names = [n for n in _names(spec) if parse_metric(n).spec is spec]
    best = _evaluate(spec, qrels, ideal, names).aggregate
    for seed in range(5):
        shuffled = {q: random.Random(seed).sample(r, len(r)) for q, r in ideal.items()}
        other = _evaluate(spec, qrels, shuffled, names).aggregate
        for name in names:
            if best[name] is None or other[name] is None:
                continue
            if spec.higher_is_better:
                assert best[name] >= other[name] - 1e-12, name
            else:
                assert best[name] <= other[name] + 1e-12, name


def _uneven_case(seed: int, family: str) -> tuple[dict, dict]:
    """Queries of very different depths and pool sizes, so that each is padded differently
    inside its batch than alone; grades that make exponential gains and sums of many terms."""
    rng = random.Random(seed)
    grades = [1, 2, 3, 4, 5] if family == "set" else [-1, 0, 1, 2, 3, 4]
    qrels, run = {}, {}
    for q in range(25):
        size = rng.choice([1, 3, 12, 60, 150])
        docs = [f"d{i}" for i in range(size)]
        qrels[f"q{q}"] = {
            d: rng.choice(grades) for d in rng.sample(docs, rng.randrange(1, size + 1))
        }
        run[f"q{q}"] = rng.sample(docs + [f"x{i}" for i in range(20)], rng.randrange(1, size + 20))
    return qrels, run


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_a_query_scores_the_same_bits_whatever_its_batch(spec) -> None:  # type: ignore[no-untyped-def]
    """Alone, inside the whole run, streamed in batches of any size, merged from any split:
    every query's value is the same double (NaN where NA)."""
    names = _names(spec)
    if spec.cutoff is not Cutoff.NONE:
        names += [f"{spec.name}@100"]
    for seed in range(2):
        qrels, run = _uneven_case(seed, spec.family)
        nuggets = nuggets_for(spec, qrels, unsupported=False)
        whole = rm.evaluate(qrels, run, names, **nuggets).per_query
        for query_id, ranking in run.items():
            alone = rm.evaluate(
                qrels, {query_id: ranking}, names, missing="skip", **nuggets
            ).per_query
            assert alone[query_id] == whole[query_id], query_id
        batches = [rm.Run.from_lists(dict(list(run.items())[i : i + 7])) for i in range(0, 25, 7)]
        streamed = rm.evaluate_stream(
            qrels, batches, names, per_query=True, progress=False, **nuggets
        )
        assert streamed.per_query == whole
        rng = random.Random(seed)
        ids = list(run)
        rng.shuffle(ids)
        parts = [
            stream.partial(
                qrels, {q: run[q] for q in ids[i : i + 4]}, names, per_query=True, **nuggets
            )
            for i in range(0, 25, 4)
        ]
        merged = stream.merge(parts).result(qrels)
        assert merged.per_query == whole
        assert merged.aggregate == whole_aggregate(qrels, run, names, **nuggets)


def whole_aggregate(qrels: dict, run: dict, names: list[str], **options: object) -> dict:  # type: ignore[type-arg]
    return rm.evaluate(qrels, run, names, **options).aggregate
