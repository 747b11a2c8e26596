"""Property-based tests (hypothesis, the suite's derandomized profile) of fusion, the paired
statistics, the intervals and the segments, as tests/test_properties.py covers the readers:
whatever the scores, ids or values, an exact answer holding the contract's invariants or a
RagMetricsError."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ragmetrics as rm
from ragmetrics.analysis import stats, systems
from ragmetrics.analysis.ppi import ppi_mean
from ragmetrics.fusion import NORMALIZATIONS, fuse

PROFILE = settings(settings.get_profile("ragmetrics"), max_examples=60)  # see conftest.py

IDS = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=4)
SCORES = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.sampled_from([0.0, 1.0, 1.0, 2.5, 1e308, -1e308, 5e-324]),
)


def runs_of(draw: st.DrawFn) -> list[dict[str, dict[str, float]]]:
    queries = draw(st.lists(IDS, min_size=1, max_size=3, unique=True))
    docs = draw(st.lists(IDS, min_size=1, max_size=6, unique=True))
    runs = []
    for _ in range(draw(st.integers(2, 3))):
        run = {}
        for q in queries:
            picked = draw(
                st.lists(st.sampled_from(docs), min_size=1, max_size=len(docs), unique=True)
            )
            run[q] = {d: draw(SCORES) for d in picked}
        runs.append(run)
    return runs


@settings(PROFILE)
@given(data=st.data())
def test_fusion_gives_finite_scores_in_order_over_the_union(data: st.DataObject) -> None:
    runs = runs_of(data.draw)
    method = data.draw(
        st.sampled_from(
            [
                "sum",
                "mnz",
                "anz",
                "max",
                "min",
                "med",
                "rrf",
                "isr",
                "bordafuse",
                "condorcet",
                "wsum",
            ]
        )
    )
    norm = data.draw(st.sampled_from([*NORMALIZATIONS, None]))
    try:
        fused = fuse(runs, method=method, norm=norm)
    except rm.RagMetricsError:
        assert norm is None, "a normalized fusion of finite scores refused"
        return
    scored = fused.to_dict()
    for query_id in fused.query_ids:
        values = scored[query_id]
        assert all(math.isfinite(v) for v in values.values())
        ranked = [values[d] for d in fused[query_id]]
        assert ranked == sorted(ranked, reverse=True)
        assert set(values) == set().union(*(set(r.get(query_id, {})) for r in runs))


@settings(PROFILE)
@given(
    a=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=12),
    shift=st.one_of(st.just(0.0), st.floats(-1.0, 1.0)),
    noise=st.booleans(),
    test=st.sampled_from(sorted(stats.paired_tests())),
)
def test_paired_tests_answer_in_range_and_agree_with_their_intervals(
    a: list[float], shift: float, noise: bool, test: str
) -> None:
    x = np.array(a)
    y = x + shift + (1e-14 * np.abs(x) if noise else 0.0)
    p, low, high = stats.paired_interval(y, x, test=test, alpha=0.05, n_resamples=200)
    if math.isnan(p):
        assert len(x) < 2
        return
    assert 0.0 <= p <= 1.0
    assert low <= high
    assert (low <= 0.0 <= high) == (p >= 0.05)
    assert p >= min(1.0, 2.0 ** (1 - len(x)))  # never below the exact sign-flip floor
    if shift == 0.0:
        assert p >= 0.05  # float noise is no difference


@settings(PROFILE)
@given(
    p=st.lists(st.one_of(st.floats(0.0, 1.0), st.just(math.nan)), min_size=1, max_size=20),
    method=st.sampled_from(sorted(stats.corrections())),
)
def test_corrections_never_lower_p_and_skip_tests_not_run(p: list[float], method: str) -> None:
    adjusted = stats.adjust(p, method)
    ran = [v for v in p if not math.isnan(v)]
    alone = stats.adjust(ran, method) if ran else []
    assert [v for v in adjusted if not math.isnan(v)] == alone
    for raw, new in zip(p, adjusted, strict=True):
        assert math.isnan(raw) == math.isnan(new)
        if not math.isnan(raw):
            assert raw - 1e-15 <= new <= 1.0


@settings(PROFILE)
@given(
    a=st.lists(st.floats(0.0, 1.0), min_size=3, max_size=15),
    shift=st.floats(-0.5, 0.5),
)
def test_effect_size_intervals_hold_their_estimate_or_say_undefined(
    a: list[float], shift: float
) -> None:
    x = np.array(a)
    rng = np.random.default_rng(len(a))
    y = x + shift + rng.normal(0, 0.05, len(x))
    found = systems.effect_size_interval(x, y, n_resamples=300)
    if math.isnan(found.d_z):
        assert math.isnan(found.low) and math.isnan(found.high)
        return
    assert found.low <= found.d_z <= found.high or math.isinf(found.low) or math.isinf(found.high)


@settings(PROFILE)
@given(
    llm=st.lists(st.floats(0.0, 1.0), min_size=10, max_size=40),
    error=st.floats(-0.3, 0.3),
)
def test_ppi_intervals_hold_their_estimate(llm: list[float], error: float) -> None:
    values = np.array(llm)
    people = np.clip(values[:10] + error, 0.0, 1.0)
    estimate, low, high = ppi_mean(values, values[:10], people)
    assert low <= estimate <= high
    assert all(math.isfinite(v) for v in (estimate, low, high))


@settings(PROFILE)
@given(
    labels=st.lists(
        st.one_of(
            st.integers(-3, 3), st.booleans(), st.text(max_size=3), st.none(), st.just(math.nan)
        ),
        min_size=4,
        max_size=4,
    )
)
def test_segments_are_distinct_labels_or_refused(labels: list[object]) -> None:
    qrels = {f"q{i}": {"a": 1} for i in range(4)}
    run = {f"q{i}": ["a"] if i % 2 else ["x", "a"] for i in range(4)}
    segments = {f"q{i}": label for i, label in enumerate(labels)}
    assigned = {q: v for q, v in segments.items() if v is not None and v == v}  # NaN: none
    by_text: dict[str, set[tuple[str, object]]] = {}
    for label in assigned.values():
        by_text.setdefault(str(label), set()).add((type(label).__name__, label))
    if any(len(kinds) > 1 for kinds in by_text.values()):  # they would merge: refused
        with pytest.raises(rm.InputFormatError, match="both read"):
            rm.evaluate(qrels, run, ["mrr"], segments=segments)
        return
    found = rm.evaluate(qrels, run, ["mrr"], segments=segments)
    assert found.segments is not None
    assert {r.segment for r in found.segments.rows} == set(by_text)
    assert len(found.segments.unassigned) == 4 - len(assigned)
