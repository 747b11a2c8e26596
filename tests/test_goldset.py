"""Golden sets: pooling, grading with deterministic judges, the cache, limits, and the audit."""

from __future__ import annotations

import asyncio
import csv
import hashlib
import json
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import ragmetrics as rm
from ragmetrics import goldset
from ragmetrics.errors import InputFormatError, InvalidParameterError, MissingKeyError
from ragmetrics.goldset._agreement import krippendorff_alpha_ordinal, weighted_kappa

N_QUERIES = 12


def _dataset() -> rm.RetrievalDataset:
    queries = {f"q{i}": f"question number {i} about topic {i % 4}" for i in range(N_QUERIES)}
    corpus = {f"d{j}": f"passage {j} on topic {j % 4}" + " filler" * (j % 7) for j in range(40)}
    return rm.RetrievalDataset(queries=queries, corpus=corpus, relevant_docs={"q0": ["d0"]})


def _runs() -> list[rm.Run]:
    rng = np.random.default_rng(3)
    first = {f"q{i}": [f"d{j}" for j in rng.permutation(40)[:8]] for i in range(N_QUERIES)}
    second = {q: [*reversed(docs[:5]), "d39"] for q, docs in first.items()}
    return [rm.Run.from_lists(first, name="bm25"), rm.Run.from_lists(second, name="dense")]


def _truth(prompt: str) -> int:
    """The grade a deterministic judge gives: a function of the texts in the prompt, so no
    ordering of concurrent calls can change it."""
    return int(hashlib.sha256(prompt.split("Grades:")[0].encode()).hexdigest(), 16) % 5 + 1


class Counter:
    """A function judge that counts its calls (from any thread)."""

    def __init__(self, answer=None) -> None:  # type: ignore[no-untyped-def]
        self.calls = 0
        self.lock = threading.Lock()
        self.answer = answer or (lambda prompt, call: str(_truth(prompt)))

    def __call__(self, prompt: str) -> str:
        with self.lock:
            self.calls += 1
            call = self.calls
        return self.answer(prompt, call)


def test_pool_fuses_the_runs_and_skips_judged_pairs() -> None:
    bm25, dense = _runs()
    pairs = goldset.pool([bm25, dense], depth=6)
    expected = {(q, d) for run in (bm25, dense) for q in run.query_ids for d in run[q][:6]}
    assert set(pairs) == expected and len(pairs) == len(expected)
    assert pairs.runs == ("bm25", "dense") and pairs.depth == 6
    # a doc both runs rank first outranks any doc only one run has
    fused = dict(zip(pairs.pairs, pairs.fused, strict=True))
    assert list(pairs.fused) == sorted(pairs.fused, reverse=True)
    both = [(q, d) for q, d in pairs if d in bm25[q][:6] and d in dense[q][:6]]
    only = [(q, d) for q, d in pairs if (d in bm25[q][:6]) != (d in dense[q][:6])]
    assert both and only and min(fused[p] for p in both) > max(fused[p] for p in only)
    judged = {"q0": {bm25["q0"][0]: 3}}
    fewer = goldset.pool([bm25, dense], depth=6, qrels=judged)
    assert fewer.skipped == 1 and ("q0", bm25["q0"][0]) not in fewer.pairs
    with pytest.raises(InvalidParameterError, match="depth"):
        goldset.pool([bm25], depth=0)
    # the dicts evaluate takes are runs here too
    assert goldset.pool([{"q": ["a"]}]).pairs == (("q", "a"),)  # type: ignore[list-item]
    with pytest.raises(InputFormatError, match="Run"):
        goldset.pool([["a"]])  # type: ignore[list-item]


def test_grade_caches_every_answer_and_reruns_for_free(tmp_path: Path) -> None:
    dataset, pairs = _dataset(), goldset.pool(_runs(), depth=5)
    cache = tmp_path / "gold.sqlite"
    before = goldset.estimate(pairs, dataset, Counter(), model_id="det-1", cache=cache)
    assert before.calls == len(pairs) and before.cached == 0 and before.tokens_from == "chars/4"
    judge = Counter()
    gold = goldset.grade(pairs, dataset, judge, model_id="det-1", cache=cache)
    assert judge.calls == len(pairs) == gold.usage.calls
    texts = {
        (q, d): goldset._prompt.prompt(dataset.queries[q], dataset.corpus[d]) for q, d in pairs
    }
    assert {(q, d): g for q in gold.qrels.query_ids for d, g in gold.qrels[q].items()} == {
        pair: _truth(text) for pair, text in texts.items()
    }
    again = Counter()
    rerun = goldset.grade(pairs, dataset, again, model_id="det-1", cache=cache)
    assert again.calls == 0 and rerun.usage.cache_hits == len(pairs)
    assert rerun.qrels == gold.qrels
    after = goldset.estimate(pairs, dataset, Counter(), model_id="det-1", cache=cache)
    assert after.calls == 0 and after.cached == len(pairs)
    # another model, or other parameters, never reuse these answers
    other = Counter()
    goldset.grade(pairs[:3], dataset, other, model_id="det-2", cache=cache)
    goldset.grade(
        pairs[:3], dataset, other, model_id="det-1", params={"temperature": 1}, cache=cache
    )
    assert other.calls == 6


def test_questions_and_a_corpus_without_labels_are_graded(tmp_path: Path) -> None:
    """Grading is how labels are made: a dataset of questions and a corpus, no relevant docs,
    is graded, and the labels it gets evaluate the runs; before grading, evaluating it says
    that it has no labels."""
    labelled = _dataset()
    bare = rm.RetrievalDataset(queries=labelled.queries, corpus=labelled.corpus)
    assert len(bare.qrels) == 0
    with pytest.raises(rm.RagMetricsError, match="qrels are empty"):
        rm.evaluate(bare.qrels, _runs()[0], ["ndcg@5"])
    pairs = goldset.pool(_runs(), depth=3)
    gold = goldset.grade(pairs, bare, Counter(), model_id="det-1", cache=tmp_path / "g.sqlite")
    assert gold.usage.calls == len(pairs) and len(gold.qrels) == N_QUERIES
    result = rm.evaluate(gold.qrels, _runs()[0], ["ndcg@5"], grade_map=None)
    assert result.counts.queries == N_QUERIES


def test_answers_that_are_not_grades_are_reasked_then_left_unjudged(tmp_path: Path) -> None:
    dataset = _dataset()
    pairs = [("q1", "d1"), ("q2", "d2"), ("q3", "d3")]

    def answer(prompt: str, call: int) -> str:
        if "question number 1 " in prompt:
            return "probably a 4 or 5"  # never a grade
        if "question number 2 " in prompt and "[user]" not in prompt:
            return "Grade: six"  # wrong at first, right when asked again
        return "**4**" if "question number 2 " in prompt else '{"grade": 2}'

    judge = Counter(answer)
    with pytest.warns(goldset.UngradedPairsWarning, match="1 of 3 pairs have no grade.*1 unjudged"):
        gold = goldset.grade(pairs, dataset, judge, model_id="m", cache=tmp_path / "c.sqlite")
    assert judge.calls == 3 + 2 + 1  # two re-asks, one re-ask, none
    assert gold.usage.reasks == 3
    assert gold.unjudged == {("q1", "d1"): "probably a 4 or 5"}
    assert gold.qrels["q2"] == {"d2": 4} and gold.qrels["q3"] == {"d3": 2}
    assert "q1" not in gold.qrels  # never a default grade
    assert [goldset.parse_grade(a) for a in ("3", " 5. ", "grade=1", "6", "4/5", "", "three")] == [
        3, 5, 1, None, None, None, None,
    ]  # fmt: skip
    structured = ('{"grade": 4.0}', '{"grade": 4.5}', '{"grade": 4, "or": 5}', {"grade": 0}, 5.0)
    assert [goldset.parse_grade(a) for a in structured] == [4, None, None, None, 5]


class RateLimitedError(Exception):
    def __init__(self, retry_after: float) -> None:
        super().__init__("429 Too Many Requests")
        self.retry_after = retry_after


def test_rate_limits_are_waited_out_and_lasting_failures_recorded(tmp_path: Path) -> None:
    dataset = _dataset()
    pairs = [("q1", "d1"), ("q2", "d2")]
    waits: list[float] = []

    def answer(prompt: str, call: int) -> str:
        if "question number 2 " in prompt:
            raise ConnectionError("the server is down")
        if call <= 2:
            waits.append(time.monotonic())
            raise RateLimitedError(retry_after=0.2)
        return "3"

    judge = Counter(answer)
    limits = goldset.Limits(concurrency=1, max_retries=3, backoff=0.01)
    with pytest.warns(goldset.UngradedPairsWarning, match="0 unjudged.*1 failed"):
        gold = goldset.grade(
            pairs, dataset, judge, model_id="m", cache=tmp_path / "c.sqlite", limits=limits
        )
    assert gold.qrels["q1"] == {"d1": 3}
    assert gold.failed == {("q2", "d2"): "ConnectionError: the server is down"}
    assert gold.usage.retries == 2 + 3
    assert judge.calls == 3 + 4
    # a failure is not cached: the next run asks again
    healed = Counter()
    goldset.grade(pairs, dataset, healed, model_id="m", cache=tmp_path / "c.sqlite")
    assert healed.calls == 1


def test_retry_after_is_honoured() -> None:
    from ragmetrics.goldset._grade import _delay, retry_after

    class Response:
        def __init__(self) -> None:
            self.headers = {"retry-after": "7"}

    class HttpError(Exception):
        def __init__(self) -> None:
            super().__init__("429")
            self.response = Response()

    assert retry_after(RateLimitedError(2.5)) == 2.5 and retry_after(HttpError()) == 7.0
    assert retry_after(ValueError()) is None
    assert _delay(RateLimitedError(2.5), 3, 1.0) == 2.5 and _delay(ValueError(), 3, 1.0) == 8.0


def test_a_budget_stops_cleanly_and_the_next_run_resumes(tmp_path: Path) -> None:
    dataset, pairs = _dataset(), goldset.pool(_runs(), depth=3)
    cache = tmp_path / "c.sqlite"
    judge = Counter()
    limits = goldset.Limits(concurrency=3, max_calls=10)
    with pytest.warns(goldset.UngradedPairsWarning, match=f"{len(pairs) - 10} left by the budget"):
        partial = goldset.grade(pairs, dataset, judge, model_id="m", cache=cache, limits=limits)
    assert judge.calls == 10 and not partial.complete
    assert len(partial.remaining) == len(pairs) - 10
    assert partial.remaining == [p for p in pairs if p not in partial.grades]  # in pool order
    rest = Counter()
    full = goldset.grade(pairs, dataset, rest, model_id="m", cache=cache)
    assert rest.calls == len(pairs) - 10 and full.complete


def test_samples_keep_the_median_and_the_disagreement(tmp_path: Path) -> None:
    dataset = _dataset()
    answers = iter(["2", "5", "4", "3", "3", "3"])
    lock = threading.Lock()

    def answer(prompt: str, call: int) -> str:
        with lock:
            return next(answers)

    limits = goldset.Limits(concurrency=1)
    gold = goldset.grade(
        [("q1", "d1"), ("q2", "d2")], dataset, Counter(answer), model_id="m", samples=3,
        cache=tmp_path / "c.sqlite", limits=limits,
    )  # fmt: skip
    assert gold.qrels["q1"] == {"d1": 4} and gold.qrels["q2"] == {"d2": 3}
    assert gold.grades[("q1", "d1")] == [2, 5, 4]
    assert gold.disagreement == {("q1", "d1"): 3}


def test_concurrent_async_judges_give_the_same_labels_within_the_cap(tmp_path: Path) -> None:
    dataset, pairs = _dataset(), goldset.pool(_runs(), depth=4)
    flight = {"now": 0, "most": 0}

    async def judge(prompt: str) -> str:
        flight["now"] += 1
        flight["most"] = max(flight["most"], flight["now"])
        await asyncio.sleep(0.001 * (_truth(prompt) % 3))  # answers arrive out of order
        flight["now"] -= 1
        return str(_truth(prompt))

    limits = goldset.Limits(concurrency=5)
    gold = goldset.grade(pairs, dataset, judge, model_id="async", cache=None, limits=limits)
    serial = goldset.grade(pairs, dataset, Counter(), model_id="sync", cache=None)
    assert gold.qrels == serial.qrels and flight["most"] == 5


def test_grade_runs_inside_a_running_event_loop(tmp_path: Path) -> None:
    async def notebook_cell() -> goldset.GoldSet:
        return goldset.grade([("q1", "d1")], _dataset(), Counter(), model_id="m", cache=None)

    assert len(asyncio.run(notebook_cell()).qrels) == 1


def test_a_killed_run_resumes_where_it_stopped(tmp_path: Path) -> None:
    cache = tmp_path / "c.sqlite"
    script = textwrap.dedent(
        f"""
        import os, sys
        sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})
        from ragmetrics import goldset
        from tests.test_goldset import _dataset, _runs, _truth
        calls = 0
        def judge(prompt):
            global calls
            calls += 1
            if calls > 7:
                os._exit(9)  # killed: no cleanup, no exception
            return str(_truth(prompt))
        pairs = goldset.pool(_runs(), depth=3)
        goldset.grade(pairs, _dataset(), judge, model_id="m", cache={str(cache)!r},
                      limits=goldset.Limits(concurrency=1))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 9, done.stderr
    pairs = goldset.pool(_runs(), depth=3)
    judge = Counter()
    gold = goldset.grade(pairs, _dataset(), judge, model_id="m", cache=cache)
    assert judge.calls == len(pairs) - 7 and gold.usage.cache_hits == 7 and gold.complete


def test_saved_with_a_sidecar_and_loaded_back(tmp_path: Path) -> None:
    pairs = goldset.pool(_runs(), depth=2)
    gold = goldset.grade(pairs, _dataset(), Counter(), model_id="det-1", cache=None)
    sidecar = gold.save(tmp_path / "gold.txt")
    assert sidecar.name == "gold.txt.json"
    loaded = goldset.GoldSet.load(tmp_path / "gold.txt")
    assert loaded.qrels == gold.qrels and loaded.grades == gold.grades
    assert loaded.provenance["model_id"] == "det-1"
    assert loaded.provenance["runs"] == ["bm25", "dense"] and loaded.provenance["depth"] == 2
    assert loaded.provenance["prompt_version"] == goldset.PROMPT_VERSION


def test_a_report_says_which_labels_it_used(tmp_path: Path) -> None:
    from ragmetrics.cli._commands import main
    from ragmetrics.report._report import write_report

    runs = _runs()
    gold = goldset.grade(
        goldset.pool(runs, depth=2), _dataset(), Counter(), model_id="det-1", cache=None
    )
    gold.save(tmp_path / "gold.txt")
    for run in runs:
        run.to_trec(tmp_path / f"{run.name}.txt")
    command = ["report", str(tmp_path / "gold.txt"), str(tmp_path / "bm25.txt")]
    command += [str(tmp_path / "dense.txt"), "-m", "ndcg@5", "--worst", "0"]
    assert main([*command, "-o", str(tmp_path / "r.md")]) == 0
    line = next(x for x in (tmp_path / "r.md").read_text().splitlines() if "| labels" in x)
    assert gold.describe() in line and "LLM-graded 1..5 by det-1" in line
    assert "prompt utility-1" in line and "pooled from bm25, dense at depth 2" in line

    # labels edited after grading: said in the report, and warned
    with open(tmp_path / "gold.txt", "a", encoding="utf-8") as handle:
        handle.write("q0 0 d39 5\n")
    with pytest.warns(goldset.LabelsChangedWarning, match=r"changed after GoldSet\.save"):
        assert main([*command, "-o", str(tmp_path / "r2.md")]) == 0
    assert "edited after grading" in (tmp_path / "r2.md").read_text()

    # labels from elsewhere: no sidecar, no line, unless the user writes one
    rm.Qrels.from_dict({"q0": {"d0": 2}}).to_trec(tmp_path / "human.txt")
    human = [*command[:1], str(tmp_path / "human.txt"), *command[2:]]
    assert main([*human, "-o", str(tmp_path / "r3.md")]) == 0
    assert "| labels" not in (tmp_path / "r3.md").read_text()
    said = "TREC assessors, 2019"
    assert main([*human, "--labels", said, "-o", str(tmp_path / "r4.md")]) == 0
    assert f"| labels | {said}" in (tmp_path / "r4.md").read_text()
    long = "Graded by two assessors per pair, disagreements settled by a third. " * 6
    assert main([*human, "--labels", long, "-o", str(tmp_path / "r4.md")]) == 0  # not a path
    assert long.strip() in (tmp_path / "r4.md").read_text()
    comparison = rm.compare(gold.qrels, {r.name: r for r in runs}, ["ndcg@5"])
    with pytest.raises(rm.RagMetricsError, match="no golden-set sidecar"):
        write_report(comparison, tmp_path / "r5.md", labels=tmp_path / "human.txt", plots=False)
    # a malformed qrels file is named as such, not blamed on the sidecar
    (tmp_path / "gold.txt").write_text("q0 0 d39\n")
    with pytest.raises(InputFormatError, match=r"gold\.txt, line 1") as raised:
        goldset.GoldSet.load(tmp_path / "gold.txt")
    assert "sidecar" not in str(raised.value)
    (tmp_path / "gold.txt.json").write_text("{}")
    with pytest.raises(InputFormatError, match=r"not what GoldSet\.save writes"):
        goldset.GoldSet.load(tmp_path / "gold.txt")


def test_inputs_are_checked_before_any_call() -> None:
    judge = Counter()
    with pytest.raises(InvalidParameterError, match="model_id"):
        goldset.grade([("q1", "d1")], _dataset(), judge, cache=None)
    with pytest.raises(MissingKeyError, match="'nope'"):
        goldset.grade([("q1", "d1"), ("q1", "nope")], _dataset(), judge, model_id="m", cache=None)
    with pytest.raises(InvalidParameterError, match="samples"):
        goldset.grade([("q1", "d1")], _dataset(), judge, model_id="m", samples=0, cache=None)
    with pytest.raises(InputFormatError, match="twice"):
        goldset.grade([("q1", "d1")] * 2, _dataset(), judge, model_id="m", cache=None)
    assert judge.calls == 0
    # a function that returns something other than text is named at once, not retried
    wrong = Counter(lambda prompt, call: object())
    with pytest.raises(InvalidParameterError, match="returned a object; it must return"):
        goldset.grade([("q1", "d1")], _dataset(), wrong, model_id="m", cache=None)
    assert wrong.calls == 1


# --- the audit --------------------------------------------------------------------------


def test_kappa_and_alpha_equal_scikit_learn_and_krippendorff() -> None:
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    krippendorff = pytest.importorskip("krippendorff")
    rng = np.random.default_rng(11)
    for trial in range(100):
        n = int(rng.integers(5, 300))
        first = rng.integers(1, 6, n)
        second = (
            np.clip(first + rng.integers(-2, 3, n), 1, 5) if trial % 2 else rng.integers(1, 6, n)
        )
        expected = sklearn_metrics.cohen_kappa_score(
            first, second, weights="quadratic", labels=[1, 2, 3, 4, 5]
        )
        assert weighted_kappa(first, second) == pytest.approx(expected, abs=1e-12)
        data = np.vstack([first, second, rng.integers(1, 6, n)]).astype(float)
        data[2, rng.random(n) < 0.4] = np.nan  # a third coder with gaps
        reference = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
        assert krippendorff_alpha_ordinal(data) == pytest.approx(reference, abs=1e-12)


def test_audit_against_human_labels_and_runs(tmp_path: Path) -> None:
    bm25, dense = _runs()
    tail = rm.Run.from_lists({q: list(bm25[q][3:8]) for q in bm25.query_ids}, name="tail")
    runs = [bm25, dense, tail]
    pairs = goldset.pool(runs, depth=5)
    gold = goldset.grade(pairs, _dataset(), Counter(), model_id="m", cache=None)
    llm = {q: dict(gold.qrels[q]) for q in gold.qrels.query_ids}
    human = {
        q: {d: max(1, g - 1) if i % 3 == 0 else g for i, (d, g) in enumerate(docs.items())}
        for q, docs in llm.items()
    }
    found = goldset.audit(gold, human, runs={r.name: r for r in runs}, k=5)
    assert found.n_pairs == len(pairs)
    assert 0.5 < found.kappa < 1 and 0.5 < found.alpha < 1
    assert np.array(found.confusion).sum() == len(pairs)
    assert np.trace(np.array(found.confusion)) == sum(
        human[q][d] == g for q, docs in llm.items() for d, g in docs.items()
    )
    share, low, high = found.prevalence["LLM"][5]
    assert low <= share <= high
    assert set(found.runs) == {"bm25", "dense", "tail"}
    assert found.tau is not None and -1 <= found.tau <= 1
    assert "weighted kappa" in found.to_markdown()
    perfect = goldset.audit(gold, llm)
    assert perfect.kappa == pytest.approx(1.0) and perfect.alpha == pytest.approx(1.0)
    with pytest.raises(InvalidParameterError, match=r"1\.\.5"):
        goldset.audit(gold, {"q0": {"x": 0}})


def test_a_review_sample_goes_out_and_comes_back(tmp_path: Path) -> None:
    dataset = _dataset()
    gold = goldset.grade(
        goldset.pool(_runs(), depth=5), dataset, Counter(), model_id="m", cache=None
    )
    for name in ("review.csv", "review.jsonl"):
        path = tmp_path / name
        written = goldset.export_sample(gold, dataset, path, per_grade=2)
        assert written == sum(
            min(2, sum(g == grade for q in gold.qrels.query_ids for g in gold.qrels[q].values()))
            for grade in range(1, 6)
        )
        with pytest.raises(InputFormatError, match="no row has a human_grade"):
            goldset.read_sample(path)
        if name.endswith(".csv"):
            with open(path, newline="") as handle:
                rows = list(csv.DictReader(handle))
            for row in rows:
                row["human_grade"] = row["llm_grade"]  # a reviewer who agrees with every grade
            with open(path, "w", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)
        else:
            rows = [json.loads(line) for line in path.read_text().splitlines()]
            for row in rows:
                row["human_grade"] = str(row["llm_grade"])
            path.write_text("".join(json.dumps(row) + "\n" for row in rows))
        found = goldset.audit(gold, path)
        assert found.n_pairs == written and found.kappa == pytest.approx(1.0)


def test_without_human_labels_samples_and_length_are_audited(tmp_path: Path) -> None:
    dataset = _dataset()
    lock = threading.Lock()
    state = {"n": 0}

    def noisy(prompt: str, call: int) -> str:
        with lock:
            state["n"] += 1
            return str(_truth(prompt) if state["n"] % 4 else max(1, _truth(prompt) - 1))

    gold = goldset.grade(goldset.pool(_runs(), depth=4), dataset, Counter(noisy), model_id="m",
                         samples=3, cache=None, limits=goldset.Limits(concurrency=1))  # fmt: skip
    found = goldset.audit(gold, dataset=dataset)
    assert 0 < found.sample_disagreement < 1 and found.sample_alpha < 1
    assert found.length_rho is not None and -1 <= found.length_rho <= 1
    assert found.kappa is None


def test_the_agreement_command_prints_the_audit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ragmetrics.cli._commands import main

    gold = goldset.grade(
        goldset.pool(_runs(), depth=5), _dataset(), Counter(), model_id="m", cache=None
    )
    gold.save(tmp_path / "llm.txt")
    human = {
        q: {d: max(1, g - (i % 2)) for i, (d, g) in enumerate(gold.qrels[q].items())}
        for q in gold.qrels.query_ids
    }
    rm.Qrels.from_dict(human).to_trec(tmp_path / "human.txt")
    expected = goldset.audit(gold.qrels, human)
    assert (
        main(
            [
                "agreement",
                str(tmp_path / "llm.txt"),
                str(tmp_path / "human.txt"),
                "--format",
                "json",
            ]
        )
        == 0
    )
    printed = json.loads(capsys.readouterr().out)
    assert (
        printed["kappa"] == pytest.approx(expected.kappa) and printed["n_pairs"] == expected.n_pairs
    )
    assert main(["agreement", str(tmp_path / "llm.txt"), str(tmp_path / "missing.txt")]) == 2


def test_the_rolling_minute_holds_requests_and_tokens_back() -> None:
    from ragmetrics.goldset._grade import _Window

    window = _Window()
    limits = goldset.Limits(requests_per_minute=2, tokens_per_minute=1000)
    assert window.wait_time(0.0, 100, limits) == 0
    window.events.extend([(0.0, 100), (1.0, 100)])
    assert window.wait_time(5.0, 100, limits) == pytest.approx(55.0)  # two requests this minute
    assert window.wait_time(59.0, 100, limits) == pytest.approx(1.0)
    assert window.wait_time(60.5, 100, limits) == 0  # the first has aged out: one slot free
    window.events.extend([(70.0, 900)])
    assert window.wait_time(71.0, 200, goldset.Limits(tokens_per_minute=1000)) == pytest.approx(
        59.0
    )


def test_a_foreign_damaged_or_edited_cache_is_refused_with_its_name(tmp_path: Path) -> None:
    import sqlite3

    dataset, pairs = _dataset(), goldset.pool(_runs(), depth=2)
    damaged = tmp_path / "damaged.sqlite"
    damaged.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 20)
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"not a database at all" * 100)
    foreign = tmp_path / "foreign.sqlite"
    with sqlite3.connect(foreign) as db:
        db.execute("CREATE TABLE users (name TEXT)")
    newer = tmp_path / "newer.sqlite"
    goldset.grade(pairs[:2], dataset, Counter(), model_id="m", cache=newer)
    with sqlite3.connect(newer) as db:
        db.execute("UPDATE meta SET value = '99' WHERE name = 'version'")
    for path, why in (
        (damaged, "cannot be used"),
        (garbage, "cannot be used"),
        (foreign, "holds other tables"),
        (newer, "version 99 of the cache"),
    ):
        with pytest.raises(InputFormatError, match=rf"{path.name}: .*{why}.*start afresh"):
            goldset.grade(pairs, dataset, Counter(), model_id="m", cache=path)
        with pytest.raises(InputFormatError, match=rf"{path.name}: "):
            goldset.estimate(pairs, dataset, Counter(), model_id="m", cache=path)
    edited = tmp_path / "edited.sqlite"
    goldset.grade(pairs, dataset, Counter(), model_id="m", cache=edited)
    with sqlite3.connect(edited) as db:
        db.execute("UPDATE answers SET grade = 9 WHERE rowid = 1")
    judge = Counter()
    with pytest.raises(InputFormatError, match=r"edited.sqlite: .*grade=9.*edited or damaged"):
        goldset.grade(pairs, dataset, judge, model_id="m", cache=edited)
    assert judge.calls == 0


def test_two_processes_grading_into_one_cache_pay_once(tmp_path: Path) -> None:
    """Two processes grade the same pairs into one cache at once, with a slow judge that
    logs every call: each answer is paid for once, and both get every grade."""
    import subprocess
    import sys

    cache, log = tmp_path / "gold.sqlite", tmp_path / "calls.log"
    script = f"""
import hashlib, sys, time
sys.path.insert(0, {str(Path(__file__).parents[1])!r})
from tests.test_goldset import _dataset, _runs, _truth
from ragmetrics import goldset

def judge(prompt):
    with open({str(log)!r}, "a") as out:
        out.write(hashlib.sha256(prompt.encode()).hexdigest() + chr(10))
    time.sleep(0.05)
    return str(_truth(prompt))

pairs = goldset.pool(_runs(), depth=3)
gold = goldset.grade(pairs, _dataset(), judge, model_id="slow", cache={str(cache)!r},
                     limits=goldset.Limits(concurrency=4), progress=False)
print(len(pairs), gold.usage.calls, gold.usage.cache_hits, gold.qrels.n_judgments)
"""
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", script],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    done = [w.communicate(timeout=300) for w in workers]
    assert all(w.returncode == 0 for w in workers), [err for _, err in done]
    outputs = [out.split() for out, _ in done]
    pairs = int(outputs[0][0])
    calls = log.read_text().split()
    assert len(calls) == len(set(calls)) == pairs  # no answer paid twice
    assert sum(int(o[1]) for o in outputs) == pairs  # the calls split between them
    assert all(int(o[3]) == pairs for o in outputs)  # each got every grade


def test_a_golden_set_with_ids_a_trec_file_cannot_hold_saves_as_json(tmp_path: Path) -> None:
    dataset = rm.RetrievalDataset(
        queries={"q 1": "where is the file"},
        corpus={"my file.pdf": "the file is here", "other.pdf": "nothing"},
        relevant_docs={"q 1": ["my file.pdf"]},
    )
    pairs = goldset.pool([rm.Run.from_lists({"q 1": ["my file.pdf", "other.pdf"]})], depth=2)
    gold = goldset.grade(pairs, dataset, Counter(), model_id="m", cache=None)
    with pytest.raises(InputFormatError, match=r"Cannot write the query id 'q 1' to the TREC"):
        gold.save(tmp_path / "gold.txt")
    assert not (tmp_path / "gold.txt").exists()
    gold.save(tmp_path / "gold.json")
    again = goldset.GoldSet.load(tmp_path / "gold.json")
    assert again.qrels == gold.qrels and again.grades == gold.grades


def test_processes_opening_a_new_cache_at_once_all_find_it_whole(tmp_path: Path) -> None:
    """The tables and their ``meta`` rows are made in one transaction: a process opening
    the file meanwhile waits, and never finds the tables without the rows (it used to
    refuse the cache as "format None")."""
    import subprocess
    import sys

    for trial in range(4):
        path = tmp_path / f"cache{trial}.sqlite"
        code = f"from ragmetrics.goldset._cache import Cache; Cache({str(path)!r})"
        workers = [
            subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)
            for _ in range(6)
        ]
        errors = [w.communicate(timeout=120)[1] for w in workers]
        assert all(w.returncode == 0 for w in workers), errors


def test_the_switch_to_write_ahead_logging_waits_for_a_writer_of_the_moment(
    tmp_path: Path,
) -> None:
    """sqlite answers "database is locked" at once, without its busy wait, when the switch to
    WAL meets another process's pending write (processes opening one new cache at once met
    it in CI): the switch is tried again until the writer is done, and gives up only after
    its wait."""
    import sqlite3

    from ragmetrics.goldset._cache import Cache

    path = tmp_path / "cache.sqlite"
    cache = Cache(path)
    assert cache._db is not None
    cache._db.execute("PRAGMA journal_mode=DELETE")
    for wait, released in ((30.0, True), (0.0, False)):
        writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("DELETE FROM claims")
        timer = threading.Timer(0.3, lambda w=writer: w.execute("COMMIT"))  # type: ignore[misc]
        timer.start()
        try:
            if released:
                cache._write_ahead(wait)
                mode = cache._db.execute("PRAGMA journal_mode").fetchone()[0]
                assert mode == "wal"
                cache._db.execute("PRAGMA journal_mode=DELETE")
            else:
                with pytest.raises(sqlite3.OperationalError, match="locked"):
                    cache._write_ahead(wait)
        finally:
            timer.join()
            writer.close()
