"""Branches that mutation testing found unguarded by any test that runs without
``../shared``: each test here fails when its branch is removed."""

from __future__ import annotations

import dataclasses
import math
import random
import re
import string
from pathlib import Path

import numpy as np
import pytest

import ragmetrics as rm
from ragmetrics.analysis import stats
from ragmetrics.engine import stream
from ragmetrics.matching import ChunkMatcher, is_chunk_from_original


def test_a_record_split_across_two_lines_is_refused(tmp_path: Path) -> None:
    """As many newlines as records, but one falls inside a record: the fast reader must see
    that the newline is misplaced (else it reads two results) and hand over to the careful
    reader, which names the line."""
    path = tmp_path / "run.txt"
    path.write_bytes(b"q1 Q0 d1\n1 0.5 t q1 Q0 d2 2 0.4 t\n")
    with pytest.raises(rm.InputFormatError, match="line 1"):
        rm.Run.from_trec(path)


def test_a_query_twice_inside_one_partial_is_refused_by_the_merge() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    part = stream.partial(qrels, {"q1": ["a"]}, ["mrr"], per_query=True)
    assert part.values is not None
    twice = dataclasses.replace(
        part,
        rows=np.concatenate([part.rows, part.rows]),
        values=np.concatenate([part.values, part.values]),
        query_ids=part.query_ids * 2,
    )
    with pytest.raises(rm.UngroupedInputError, match="'q1'"):
        stream.merge([twice])


@pytest.mark.parametrize(
    ("p", "low", "high", "inside"),
    [
        (0.01, -0.0, 0.3, False),  # rejected, low on 0 by rounding: stepped above 0
        (0.01, -0.3, 0.0, False),  # rejected, high on 0: stepped below 0
        (0.01, -5e-324, 0.3, False),
        (0.5, 0.1, 0.3, True),  # not rejected, 0 outside by rounding: widened to hold it
        (0.5, -0.3, -0.1, True),
    ],
)
def test_an_interval_holds_zero_exactly_when_the_test_does_not_reject(
    p: float, low: float, high: float, inside: bool
) -> None:
    lo, hi = stats._agreeing(p, 0.05, low, high)
    assert (lo <= 0.0 <= hi) is inside
    assert lo <= hi


def test_the_t_test_and_its_interval_have_n_minus_one_degrees_of_freedom() -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(3)
    for n in (3, 4, 7, 30):
        a, b = rng.random(n), rng.random(n)
        expected = scipy_stats.ttest_rel(a, b).pvalue
        assert stats.t_test(a, b) == pytest.approx(expected, rel=1e-9)
        p, low, high = stats.paired_interval(a, b, test="t-test", alpha=0.05)
        assert p == stats.t_test(a, b)
        d = a - b
        half = scipy_stats.t.ppf(0.975, n - 1) * d.std(ddof=1) / np.sqrt(n)
        assert (low, high) == pytest.approx((d.mean() - half, d.mean() + half), rel=1e-9)


def test_long_query_ids_that_share_their_first_bytes_stay_apart(tmp_path: Path) -> None:
    """Ids longer than 8 bytes that differ only past the 8th: the bytes path must not take
    them for one query."""
    ids = [f"query-000000000000{i:04d}" for i in range(50)]
    rng = random.Random(5)
    qrels = {q: {f"d{rng.randrange(30)}": 1 for _ in range(3)} for q in ids}
    run = {q: {f"d{j}": float(rng.random()) for j in rng.sample(range(30), 10)} for q in ids}
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    rm.Qrels.from_dict(qrels).to_trec(qrels_path)
    rm.Run.from_dict(run).to_trec(run_path)
    from_files = rm.evaluate(rm.Qrels.from_trec(qrels_path), rm.Run.from_trec(run_path), "map")
    assert from_files.per_query == rm.evaluate(qrels, run, "map").per_query
    assert from_files.counts.queries == 50


def test_the_matcher_never_anchors_on_a_word_cut_by_its_window() -> None:
    """A long chunk is looked up by the whole words inside a window around its middle; a
    word the window cuts must not be one of them, or originals holding the chunk are missed."""
    rng = random.Random(11)
    vocabulary = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 12)))
                  for _ in range(400)]  # fmt: skip
    originals = {f"o{i}": " ".join(rng.choices(vocabulary, k=200)) for i in range(20)}
    matcher = ChunkMatcher(originals)
    for _ in range(300):
        source = originals[f"o{rng.randrange(20)}"]
        start = rng.randrange(len(source) - 400)
        chunk = source[start : start + rng.randint(101, 400)]
        expected = {i for i, text in originals.items() if is_chunk_from_original(chunk, text)}
        assert matcher.match(chunk) == expected


@pytest.mark.parametrize("n", [1, 5, 8, 13, 1043])
def test_the_sign_flip_table_equals_flipping_query_by_query(n: int) -> None:
    """The randomization test's table lookups (eight queries a byte, the last byte's padding
    bits left out, the table read a slice at a time) give the sums a query-by-query product
    gives for the same random bits; 1,043 queries span two slices and end mid-byte."""
    d = np.random.default_rng(n).normal(size=n)
    flips = stats._SignFlips(d, 2_500, seed=7)
    rng, groups = np.random.default_rng(7), -(-n // 8)
    drawn = [
        rng.integers(0, 256, size=(min(1_000, 2_500 - done), groups), dtype=np.uint8)
        for done in range(0, 2_500, 1_000)
    ]
    bits = np.unpackbits(np.concatenate(drawn)[..., None], axis=-1, bitorder="little")
    signs = bits.reshape(2_500, groups * 8)[:, :n] * 2.0 - 1.0
    assert np.allclose(flips.sums, signs @ d, rtol=0, atol=1e-9)
    assert np.array_equal(flips.signs, signs.sum(axis=1))
    for delta in (0.0, 0.3, -1.1):
        shifted = np.abs(signs @ (d - delta)) / n
        observed = abs(d.mean() - delta)
        expected = (int((shifted >= observed - 1e-12 * max(1.0, observed)).sum()) + 1) / 2_501
        assert flips.p_value(delta) == expected


def test_grades_past_two_to_the_1023_keep_exponential_gains_finite() -> None:
    """2^g overflows a double past g = 1023: nDCG with exponential gains and ERR scale such
    queries by 2^-top and give the ratio the definition gives."""
    qrels = {"q": {"a": 1500, "b": 1499}}
    result = rm.evaluate(qrels, {"q": ["b", "a"]}, ["ndcg(dcg=exp-log2)", "err"])
    third = 1.0 / np.log2(3.0)
    assert result.aggregate["ndcg(dcg=exp-log2)"] == pytest.approx(
        (0.5 + third) / (1.0 + 0.5 * third), rel=1e-12
    )
    # ERR: b stops with (2^1499 - 1) / 2^1500 = 1/2, then a with probability ~1 at rank 2
    assert result.aggregate["err"] == pytest.approx(0.5 + 0.5 * 1.0 / 2.0, rel=1e-12)


@pytest.mark.parametrize("n", [1, 7, 300, 3000])  # 3,000: resamples drawn in several blocks
def test_bootstrap_intervals_equal_resampling_query_by_query(n: int) -> None:
    """bootstrap_cis (resamples counted once, applied to every column as one product) gives
    the percentile interval of the means that resampling each column itself gives, with the
    same random draws; columns of another length draw their own."""
    rng = np.random.default_rng(n)
    columns = [rng.normal(size=n), rng.random(n), rng.random(n + 3)]
    for level, resamples in ((0.95, 500), (0.8, 1_500)):
        got = stats.bootstrap_cis(columns, n_resamples=resamples, level=level, seed=4)
        for column, (low, high) in zip(columns, got, strict=True):
            size = len(column)
            draw = np.random.default_rng(4)
            rows = max(1, min(resamples, (1 << 21) // size))
            means = []
            for done in range(0, resamples, rows):
                take = min(rows, resamples - done)
                picked = draw.integers(0, size, size=(take, size), dtype=np.uint32)
                means.append(column[picked].mean(axis=1))
            tail = (1 - level) / 2
            expected = np.quantile(np.concatenate(means), [tail, 1 - tail])
            assert np.allclose([low, high], expected, rtol=1e-12, atol=1e-15)
        alone = stats.bootstrap_ci(columns[0], n_resamples=resamples, level=level, seed=4)
        assert np.allclose(alone, got[0], rtol=1e-12)  # the same draws (a product's last bit)


@pytest.mark.parametrize("seed", range(6))
def test_the_bootstrap_interval_is_the_test_inverted(seed: int) -> None:
    """The bootstrap interval holds exactly the mean differences its own test does not
    reject: the test's p-value, computed from the definition on the same resamples, is at
    least alpha at each bound and below alpha just past it."""
    rng = np.random.default_rng(seed)
    d = rng.normal(0.1, 1.0, size=rng.integers(5, 60))
    alpha, resamples = [0.05, 0.1, 0.3][seed % 3], 999
    extremes = stats._bootstrap_extremes(d, resamples, seed)
    draw = np.random.default_rng(seed)
    centred = d - d.mean()
    naive = np.concatenate(
        [
            np.abs(centred[draw.integers(0, len(d), size=(size, len(d)))].mean(axis=1))
            for size in stats._batches(resamples)
        ]
    )
    assert np.array_equal(extremes, naive)

    def p_at(delta: float) -> float:
        return (int((extremes >= abs(d.mean() - delta)).sum()) + 1) / (resamples + 1)

    p, low, high = stats._bootstrap(d, alpha, resamples, seed)
    assert p == p_at(0.0) or abs(p - p_at(0.0)) <= 1 / (resamples + 1)
    step = 1e-9 * max(1.0, abs(high - low))
    assert p_at(low + step) >= alpha and p_at(high - step) >= alpha
    assert p_at(low - step) < alpha and p_at(high + step) < alpha


def test_student_t_tails_equal_scipy_across_degrees_and_tails() -> None:
    """The two-sided tail of Student's t (through the regularized incomplete beta) against
    scipy over small and large degrees of freedom, the centre and the far tails: within
    1e-9, except p near 1 at 5,000 degrees of freedom (t = 1e-6: 4e-8 off, where a p-value
    of 0.9999992 decides nothing)."""
    scipy_stats = pytest.importorskip("scipy.stats")
    for df in (1, 2, 3, 5, 9.5, 30, 200, 5000):
        for t in (0.0, 1e-6, 0.3, 1.0, 2.0, 4.5, 12.0, 60.0):
            expected = 2 * scipy_stats.t.sf(t, df)
            close = 1e-7 if (df, t) == (5000, 1e-6) else 1e-9
            assert stats.student_t_sf2(t, df) == pytest.approx(expected, rel=close, abs=1e-300)


def test_effect_size_is_the_mean_over_the_deviation() -> None:
    a, b = np.array([0.5, 0.75, 0.25, 0.875]), np.array([0.375, 0.5, 0.25, 0.125])
    d = a - b
    assert stats.effect_size(a, b) == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-15)
    assert stats.effect_size(a, a) == 0.0  # no difference at all
    with pytest.warns(rm.UndefinedMetricWarning, match="undefined"):
        # the same non-zero difference everywhere: no standardized effect (was +-inf)
        assert math.isnan(stats.effect_size(a + 1, a))
    with pytest.warns(rm.UndefinedMetricWarning):
        assert math.isnan(stats.effect_size(a - 1, a))
    assert math.isnan(stats.effect_size(a[:1], b[:1]))


@pytest.mark.parametrize("seed", range(6))
def test_the_randomization_interval_is_the_test_inverted(seed: int) -> None:
    """The randomization test's interval: its own p-value is at least alpha at each bound
    and below alpha just past it."""
    rng = np.random.default_rng(seed)
    d = rng.normal(0.2, 1.0, size=rng.integers(6, 70))
    alpha = [0.05, 0.1, 0.3][seed % 3]
    flips = stats._SignFlips(d, 2_000, seed)
    low, high = flips.interval(alpha)
    step = 1e-7 * max(1.0, high - low)
    assert flips.p_value(low + step) >= alpha and flips.p_value(high - step) >= alpha
    assert flips.p_value(low - step) < alpha and flips.p_value(high + step) < alpha
    p, plow, phigh = stats.paired_interval(d, np.zeros(len(d)), test="randomization",
                                           alpha=alpha, n_resamples=2_000, seed=seed)  # fmt: skip
    assert (plow <= 0.0 <= phigh) == (p >= alpha)


@pytest.mark.parametrize("where", [1, 2, 3_001, 250_000])
def test_a_bad_line_is_named_by_its_number_however_far_in(where: int, tmp_path: Path) -> None:
    """A control character, or a line past the length limit, at line ``where`` of a long
    file: every reader names that line, whichever piece of the file it falls in."""
    from ragmetrics.formats._rules import MAX_LINE_BYTES

    good = [f"q{i % 97} Q0 d{i} 1 {1 / (i + 1):.6f} t\n" for i in range(where + 5)]
    for bad in ("q1 Q0 d\x07x 1 0.5 t\n", "q1 Q0 " + "d" * (MAX_LINE_BYTES + 10) + " 1 0.5 t\n"):
        lines = list(good)
        lines[where - 1] = bad
        path = tmp_path / "run.txt"
        path.write_text("".join(lines))
        with pytest.raises(rm.InputFormatError) as raised:
            rm.Run.from_trec(path)
        assert re.search(rf"\bline {where}\b", str(raised.value)), str(raised.value)[:200]
