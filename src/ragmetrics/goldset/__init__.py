"""Golden sets from your own LLM: pool the pairs your runs retrieve, grade each 1..5 with our
versioned prompt, cache every answer, and say how far the labels can be trusted.

    >>> from ragmetrics import goldset
    >>> pairs = goldset.pool([run_bm25, run_dense], depth=20)              # doctest: +SKIP
    >>> goldset.estimate(pairs, dataset, judge, cache="gold.sqlite")       # doctest: +SKIP
    >>> gold = goldset.grade(pairs, dataset, judge, cache="gold.sqlite")   # doctest: +SKIP
    >>> gold.qrels, gold.usage, gold.unjudged, gold.provenance             # doctest: +SKIP

The grades follow the utility scale of the RAG set metrics (5 decisive, 4 highly relevant,
3 partial, 2 weak, 1 not relevant, a distractor or harmful). A grade is never invented: an
answer that is not one integer 1..5 after two corrective re-asks leaves the pair unjudged,
with the answer kept; a call that keeps failing leaves it failed, with the error.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmetrics._util.warn import warn
from ragmetrics._version import __version__
from ragmetrics.data._qrels import Qrels
from ragmetrics.data._run import Run
from ragmetrics.engine._settings import as_qrels, as_run
from ragmetrics.errors import (
    InputFormatError,
    InvalidParameterError,
    LabelsChangedWarning,
    MissingKeyError,
    UngradedPairsWarning,
)
from ragmetrics.formats._atomic import write_text
from ragmetrics.goldset._audit import Audit, audit, export_sample, read_sample
from ragmetrics.goldset._cache import Cache
from ragmetrics.goldset._grade import (
    GRADING,
    Limits,
    Usage,
    estimate_tokens,
    make_tasks,
    run_sync,
    run_tasks,
)
from ragmetrics.goldset._judge import FunctionJudge, Judge, Reply, as_judge, model_identity
from ragmetrics.goldset._nuggetize import (
    NUGGET_TEMPLATE,
    SUPPORT_TEMPLATE,
    NuggetSet,
    SupportAgreement,
    make_nuggets,
    parse_nuggets,
    parse_support,
    support_agreement,
    support_nuggets,
)
from ragmetrics.goldset._prompt import PROMPT_VERSION, TEMPLATE, TEMPLATE_HASH, parse_grade, prompt
from ragmetrics.goldset._utility import Tracking, UtilityLabels, tracking, utility_qrels

__all__ = [
    "NUGGET_TEMPLATE",
    "PROMPT_VERSION",
    "SUPPORT_TEMPLATE",
    "TEMPLATE",
    "Audit",
    "Estimate",
    "FunctionJudge",
    "GoldSet",
    "Judge",
    "LabelsChangedWarning",
    "Limits",
    "NuggetSet",
    "Pool",
    "Reply",
    "SupportAgreement",
    "Tracking",
    "UngradedPairsWarning",
    "Usage",
    "UtilityLabels",
    "agrade",
    "as_judge",
    "audit",
    "estimate",
    "export_sample",
    "grade",
    "labels_of",
    "make_nuggets",
    "model_identity",
    "parse_grade",
    "parse_nuggets",
    "parse_support",
    "pool",
    "read_sample",
    "support_agreement",
    "support_nuggets",
    "tracking",
    "utility_qrels",
]

RRF_K = 60  # the constant of reciprocal-rank fusion (Cormack et al.)


@dataclass(frozen=True)
class Pool(Sequence[tuple[str, str]]):
    """The (query, doc) pairs to grade, most likely useful first.

    Attributes:
        pairs: the pairs, ordered by fused score (reciprocal-rank fusion over the runs).
        fused: the fused score of each pair.
        runs: the names of the runs pooled; depth: how deep each was read.
        skipped: pairs already judged in the qrels given (not graded again).
    """

    pairs: tuple[tuple[str, str], ...]
    fused: tuple[float, ...]
    runs: tuple[str, ...]
    depth: int
    skipped: int = 0

    def __len__(self) -> int:
        return len(self.pairs)

    def __getitem__(self, index: Any) -> Any:
        return self.pairs[index]

    def __repr__(self) -> str:
        queries = len({q for q, _ in self.pairs})
        return (
            f"Pool({len(self.pairs)} pairs over {queries} queries from {len(self.runs)} runs "
            f"at depth {self.depth}; {self.skipped} already judged)"
        )


def pool(
    runs: Run | Iterable[Run] | Mapping[str, Run],
    depth: int = 20,
    *,
    qrels: Qrels | Mapping[str, Mapping[str, int]] | None = None,
) -> Pool:
    """The union of each run's top ``depth`` per query, ordered by reciprocal-rank fusion
    (``sum 1 / (60 + rank)`` over the runs), so that a budget grades the likeliest useful
    pairs first; pairs the ``qrels`` already judge are left out."""
    named: dict[str, Run]
    if isinstance(runs, Run):
        named = {runs.name or "run": runs}
    elif isinstance(runs, Mapping):
        named = {str(name): as_run(run) for name, run in runs.items()}
    elif isinstance(runs, str | bytes) or not isinstance(runs, Iterable):
        raise InputFormatError(
            f"pool() takes runs: a Run, a list of them or a {{name: run}} mapping; got "
            f"{type(runs).__name__}."
        )
    else:
        named = {}
        for number, run in enumerate(runs, start=1):
            if isinstance(run, Mapping):
                run = as_run(run)
            if not isinstance(run, Run):
                raise InputFormatError(
                    f"pool() takes Run objects; item {number} is a {type(run).__name__} "
                    f"(build it with Run.from_dict or Run.from_lists)."
                )
            named[run.name or f"run{number}"] = run
    if not named or not all(isinstance(r, Run) for r in named.values()):
        raise InputFormatError("pool() takes one or more Run objects (or a name -> Run mapping).")
    if not isinstance(depth, int) or isinstance(depth, bool) or depth < 1:
        raise InvalidParameterError(f"depth must be an integer >= 1; got {depth!r}.")
    judged = None if qrels is None else as_qrels(qrels)
    scores: dict[tuple[str, str], float] = {}
    order: dict[str, int] = {}
    for run in named.values():
        for query_id in run.query_ids:
            order.setdefault(query_id, len(order))
            for rank, doc_id in enumerate(run[query_id][:depth], start=1):
                key = (query_id, doc_id)
                scores[key] = scores.get(key, 0.0) + 1.0 / (RRF_K + rank)
    skipped = 0
    if judged is not None:
        for key in list(scores):
            if key[0] in judged and key[1] in judged[key[0]]:
                del scores[key]
                skipped += 1
    ranked = sorted(scores.items(), key=lambda item: (-item[1], order[item[0][0]], item[0][1]))
    return Pool(
        pairs=tuple(pair for pair, _ in ranked),
        fused=tuple(score for _, score in ranked),
        runs=tuple(named),
        depth=depth,
        skipped=skipped,
    )


def _texts(dataset: Any) -> Any:
    """A function (query id, doc id) -> (query text, passage text), from a RetrievalDataset
    (or anything with ``queries`` and ``corpus`` mappings)."""
    queries = getattr(dataset, "queries", None)
    corpus = getattr(dataset, "corpus", None)
    if not isinstance(queries, Mapping) or not isinstance(corpus, Mapping):
        raise InputFormatError(
            "dataset must have the query texts (queries) and the passages (corpus), as a "
            "RetrievalDataset has them."
        )

    def texts(query_id: str, doc_id: str) -> tuple[str, str]:
        if query_id not in queries:
            raise MissingKeyError(f"The dataset has no text for query {query_id!r}.")
        if doc_id not in corpus:
            raise MissingKeyError(
                f"The dataset's corpus has no passage {doc_id!r} (retrieved for query "
                f"{query_id!r}); grading needs the text of every pooled doc."
            )
        return str(queries[query_id]), str(corpus[doc_id])

    return texts


def _pairs(pairs: Any) -> list[tuple[str, str]]:
    listed = list(pairs)
    for item in listed:
        if not (
            isinstance(item, tuple) and len(item) == 2 and all(isinstance(i, str) for i in item)
        ):
            raise InputFormatError(
                f"pairs must be (query id, doc id) tuples, as pool() returns; got {item!r}."
            )
    if len(set(listed)) != len(listed):
        raise InputFormatError("pairs holds a (query id, doc id) pair twice.")
    return listed


@dataclass(frozen=True)
class Estimate:
    """What a grading will cost, net of the cache.

    Attributes:
        pairs, samples: what was asked; cached: answers the cache already holds.
        calls: first calls still to make (re-asks and retries come on top).
        prompt_tokens, completion_tokens: their tokens; ``tokens_from`` says how counted
            ("tokenizer", or "chars/4", a rough rule).
        cost: from the prices given (None without prices; we keep no price table).
    """

    pairs: int
    samples: int
    cached: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    tokens_from: str
    cost: float | None

    def __str__(self) -> str:
        cost = "" if self.cost is None else f", cost {self.cost:.4f}"
        return (
            f"{self.calls} calls to make ({self.pairs} pairs x {self.samples} samples, "
            f"{self.cached} cached): about {self.prompt_tokens:,} prompt and "
            f"{self.completion_tokens:,} completion tokens (counted by {self.tokens_from}){cost}"
        )


def estimate(
    pairs: Iterable[tuple[str, str]],
    dataset: Any,
    judge: Any,
    *,
    model_id: str | None = None,
    params: Mapping[str, Any] | None = None,
    cache: str | os.PathLike[str] | None = None,
    samples: int = 1,
    tokenizer: Any = None,
    price_per_million_prompt: float | None = None,
    price_per_million_completion: float | None = None,
) -> Estimate:
    """Calls and tokens a :func:`grade` would pay for, net of what ``cache`` holds.

    ``tokenizer``: a function text -> token count (or -> list of tokens); without one, tokens
    are characters / 4, and the estimate says so. Prices are yours (per million tokens)."""
    listed, _, tasks = _tasks(pairs, dataset, judge, model_id, params, samples)
    store = Cache(cache)
    try:
        cached = store.keys([t.key for t in tasks])
    finally:
        store.close()
    todo = [t for t in tasks if t.key not in cached]
    count = _counter(tokenizer)
    prompt_tokens = sum(count(prompt(t.query, t.passage)) for t in todo)
    completion_tokens = 2 * len(todo)  # one digit, and an end
    cost = None
    if price_per_million_prompt is not None or price_per_million_completion is not None:
        cost = (
            prompt_tokens * (price_per_million_prompt or 0.0)
            + completion_tokens * (price_per_million_completion or 0.0)
        ) / 1e6
    return Estimate(
        pairs=len(listed),
        samples=samples,
        cached=len(tasks) - len(todo),
        calls=len(todo),
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        tokens_from="tokenizer" if tokenizer is not None else "chars/4",
        cost=cost,
    )


def _tasks(
    pairs: Any,
    dataset: Any,
    judge: Any,
    model_id: str | None,
    params: Mapping[str, Any] | None,
    samples: int,
) -> tuple[list[tuple[str, str]], Judge, list[Any]]:
    """The pairs, the judge and one task per (pair, sample), every input and text checked
    before any call."""
    listed = _pairs(pairs)
    the_judge = as_judge(judge, model_id=model_id, params=params)
    return listed, the_judge, make_tasks(listed, _texts(dataset), the_judge, _samples(samples))


def _counter(tokenizer: Any) -> Any:
    if tokenizer is None:
        return estimate_tokens

    def count(text: str) -> int:
        tokens = tokenizer(text)
        return tokens if isinstance(tokens, int) else len(tokens)

    return count


def _samples(samples: Any) -> int:
    if not isinstance(samples, int) or isinstance(samples, bool) or samples < 1:
        raise InvalidParameterError(f"samples must be an integer >= 1; got {samples!r}.")
    return samples


@dataclass
class GoldSet:
    """Graded qrels from an LLM, with what they cost and where they came from.

    Attributes:
        qrels: the pairs graded, on the utility scale 1..5 (the median of the samples).
        grades: (query, doc) -> every sample's grade (None where a sample gave none).
        unjudged: (query, doc) -> the last answer, for pairs the judge never graded 1..5.
        failed: (query, doc) -> the error, for pairs whose calls kept failing.
        remaining: pairs not asked because the budget ran out (a later run takes them).
        usage: calls, cache hits, retries, re-asks and tokens.
        provenance: model id and parameters, prompt version and template hash, runs pooled,
            depth, samples, date, ragmetrics version.
    """

    qrels: Qrels
    grades: dict[tuple[str, str], list[int | None]]
    unjudged: dict[tuple[str, str], str]
    failed: dict[tuple[str, str], str]
    remaining: list[tuple[str, str]]
    usage: Usage
    provenance: dict[str, Any]
    passages: dict[tuple[str, str], int] = field(default_factory=dict, repr=False)

    @property
    def complete(self) -> bool:
        """True when every pair was asked (none left by the budget)."""
        return not self.remaining

    @property
    def disagreement(self) -> dict[tuple[str, str], int]:
        """(query, doc) -> the spread (highest - lowest grade) of its samples, where they
        differ."""
        spread = {}
        for pair, grades in self.grades.items():
            given = [g for g in grades if g is not None]
            if len(given) > 1 and max(given) != min(given):
                spread[pair] = max(given) - min(given)
        return spread

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the qrels at ``path`` (a TREC file; JSON when ``path`` ends in ``.json``,
        which keeps any id: a TREC file refuses ids with whitespace) and everything else
        beside it, in ``path + ".json"`` (provenance, usage, samples, unjudged and failed
        pairs, and a hash of the qrels file), so a report can say which labels it used. Both
        are written atomically. Returns the sidecar's path."""
        target = Path(path)
        if _as_json(target):  # any id, spaces and all
            self.qrels.to_json(target)
        else:  # a TREC file: ids it cannot hold are refused, pointing to a .json path
            self.qrels.to_trec(target)
        sidecar = _sidecar(target)
        payload = {
            "provenance": self.provenance,
            "usage": self.usage.to_dict(),
            "grades": [[q, d, g] for (q, d), g in self.grades.items()],
            "unjudged": [[q, d, a] for (q, d), a in self.unjudged.items()],
            "failed": [[q, d, e] for (q, d), e in self.failed.items()],
            "remaining": [list(p) for p in self.remaining],
            "qrels_sha256": _digest(target),
        }
        write_text(sidecar, json.dumps(payload, indent=1, ensure_ascii=False))
        return sidecar

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> GoldSet:
        """Read what :meth:`save` wrote. Warns (:class:`LabelsChangedWarning`) when the qrels
        file was edited since: the sidecar then describes the grading, not the edits."""
        target = Path(path)
        sidecar = _sidecar(target)
        try:
            payload = json.loads(sidecar.read_text(encoding="utf-8"))
            parts: dict[str, Any] = {
                "grades": {(q, d): g for q, d, g in payload["grades"]},
                "unjudged": {(q, d): a for q, d, a in payload["unjudged"]},
                "failed": {(q, d): e for q, d, e in payload["failed"]},
                "remaining": [(q, d) for q, d in payload["remaining"]],
                "usage": Usage(**payload["usage"]),
                "provenance": dict(payload["provenance"]),
            }
        except FileNotFoundError:
            raise InputFormatError(
                f"No sidecar {str(sidecar)!r}: GoldSet.load reads what GoldSet.save wrote."
            ) from None
        except (ValueError, KeyError, TypeError) as error:
            raise InputFormatError(
                f"The golden-set sidecar {str(sidecar)!r} is not what GoldSet.save writes "
                f"({type(error).__name__}: {error}); save the golden set again."
            ) from None
        qrels = Qrels.from_json(target) if _as_json(target) else Qrels.from_trec(target)
        gold = cls(qrels=qrels, **parts)
        written = payload.get("qrels_sha256")
        if written and _digest(target) != written:
            gold.provenance["edited_after_grading"] = True
            warn(
                f"{str(target)!r} changed after GoldSet.save wrote it: its sidecar describes "
                f"the grading, not the edits. Save the golden set again, or keep the edits "
                f"in a file of their own.",
                LabelsChangedWarning,
            )
        return gold

    def describe(self) -> str:
        """One line saying which labels these are, for a report: model, prompt, samples,
        pool, what was left ungraded, and when."""
        given = self.provenance
        params = ", ".join(f"{k}={v}" for k, v in sorted(given.get("params", {}).items()))
        graded = self.qrels.n_judgments
        runs = ", ".join(given.get("runs") or []) or "pairs given"
        depth = f" at depth {given['depth']}" if given.get("depth") else ""
        samples = given.get("samples", 1)
        text = (
            f"LLM-graded 1..5 by {given.get('model_id')}"
            + (f" ({params})" if params else "")
            + f", prompt {given.get('prompt_version')} ({given.get('template_hash')}), "
            f"{samples} sample{'s' if samples != 1 else ''} per pair; {graded} of "
            f"{given.get('pairs', graded)} pairs graded, pooled from {runs}{depth}; "
            f"{len(self.unjudged)} unjudged, {len(self.failed)} failed, "
            f"{len(self.remaining)} left by the budget; {given.get('date')}, "
            f"ragmetrics {given.get('ragmetrics')}"
        )
        if given.get("edited_after_grading"):
            text += "; the qrels file was edited after grading"
        return text + "."

    def __repr__(self) -> str:
        return (
            f"GoldSet({self.qrels.n_judgments} pairs graded, "
            f"{len(self.unjudged)} unjudged, {len(self.failed)} failed, "
            f"{len(self.remaining)} left by the budget; {self.usage.calls} calls, "
            f"{self.usage.cache_hits} from the cache)"
        )


def labels_of(qrels_path: str | os.PathLike[str]) -> str | None:
    """The :meth:`GoldSet.describe` line of the golden set saved at ``qrels_path``, or None
    when no sidecar lies beside it (labels from elsewhere)."""
    target = Path(qrels_path)
    if not _sidecar(target).is_file():
        return None
    return GoldSet.load(target).describe()


def _as_json(target: Path) -> bool:
    """Golden-set qrels are JSON at a ``.json`` path, a TREC file at any other."""
    return target.suffix.lower() == ".json"


def _sidecar(target: Path) -> Path:
    return target.with_name(target.name + ".json")


def _digest(target: Path) -> str:
    """The hash of a saved qrels file, kept in its sidecar to notice later edits."""
    return hashlib.sha256(target.read_bytes()).hexdigest()


def grade(
    pairs: Iterable[tuple[str, str]],
    dataset: Any,
    judge: Any,
    *,
    model_id: str | None = None,
    params: Mapping[str, Any] | None = None,
    cache: str | os.PathLike[str] | None = "goldset.sqlite",
    samples: int = 1,
    limits: Limits | None = None,
    progress: bool | None = None,
) -> GoldSet:
    """Grade each (query, passage) pair 1..5 with ``judge``, one passage per call.

    Args:
        pairs: (query id, doc id) pairs, as :func:`pool` returns them.
        dataset: the query texts and the corpus (a :class:`~ragmetrics.RetrievalDataset`).
        judge: ``as_judge(model)`` of an integration, or a function ``fn(prompt) -> str`` (or
            an async one) with ``model_id=``.
        model_id, params: for a function judge: the model it calls and the settings that
            change its output (both key the cache).
        cache: the SQLite file of answers (None: no cache). A re-run makes no call for
            what it holds; an interrupted run resumes.
        samples: answers per pair; the grade is their median (the lower middle one), and
            ``disagreement`` lists the pairs whose samples differ.
        limits: concurrency, rate limits, retries and budget (:class:`Limits`).
        progress: a progress bar over the answers (default: from 50 pairs on).

    Returns:
        A :class:`GoldSet`. Works inside a running event loop (a notebook) too; use
        :func:`agrade` from async code.
    """

    def graded() -> Any:
        return agrade(
            pairs,
            dataset,
            judge,
            model_id=model_id,
            params=params,
            cache=cache,
            samples=samples,
            limits=limits,
            progress=progress,
        )

    done: GoldSet = run_sync(graded)  # inside a running loop (a notebook): on one of its own
    return done


async def agrade(
    pairs: Iterable[tuple[str, str]],
    dataset: Any,
    judge: Any,
    *,
    model_id: str | None = None,
    params: Mapping[str, Any] | None = None,
    cache: str | os.PathLike[str] | None = "goldset.sqlite",
    samples: int = 1,
    limits: Limits | None = None,
    progress: bool | None = None,
) -> GoldSet:
    """:func:`grade`, awaited."""
    listed, the_judge, tasks = _tasks(pairs, dataset, judge, model_id, params, samples)
    show = progress if progress is not None else len(listed) >= 50
    outcomes, usage = await run_tasks(tasks, the_judge, GRADING, cache, limits, show, "grading")
    return _assemble(listed, tasks, outcomes, usage, the_judge, samples, pairs)


def _assemble(
    listed: list[tuple[str, str]],
    tasks: list[Any],
    outcomes: list[Any],
    usage: Usage,
    judge: Judge,
    samples: int,
    pairs: Any,
) -> GoldSet:
    grades: dict[tuple[str, str], list[int | None]] = {pair: [] for pair in listed}
    last_answer: dict[tuple[str, str], str] = {}
    errors: dict[tuple[str, str], str] = {}
    skipped: set[tuple[str, str]] = set()
    for task, outcome in zip(tasks, outcomes, strict=True):
        pair = listed[task.index]
        if outcome.answer is not None:
            grades[pair].append(outcome.answer.grade)
            if outcome.answer.grade is None:
                last_answer[pair] = outcome.answer.answer
        elif outcome.error is not None:
            errors[pair] = outcome.error
        else:
            skipped.add(pair)
    graded: dict[str, dict[str, int]] = {}
    unjudged: dict[tuple[str, str], str] = {}
    failed: dict[tuple[str, str], str] = {}
    remaining: list[tuple[str, str]] = []
    for pair in listed:
        given = [g for g in grades[pair] if g is not None]
        if pair in skipped and len(grades[pair]) + (pair in errors) < samples:
            remaining.append(pair)  # some samples never asked: the next run asks them
        elif given:
            graded.setdefault(pair[0], {})[pair[1]] = int(statistics.median_low(given))
        elif pair in errors:
            failed[pair] = errors[pair]
        else:
            unjudged[pair] = last_answer.get(pair, "")
    provenance = {
        "model_id": judge.model_id,
        "params": dict(judge.params),
        "prompt_version": PROMPT_VERSION,
        "template_hash": TEMPLATE_HASH,
        "samples": samples,
        "runs": list(getattr(pairs, "runs", ())),
        "depth": getattr(pairs, "depth", None),
        "pairs": len(listed),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "ragmetrics": __version__,
        "scale": "utility 1..5 (5 decisive, 4 highly relevant, 3 partial, 2 weak, 1 not relevant)",
    }
    if unjudged or failed or remaining:
        warn(
            f"{len(unjudged) + len(failed) + len(remaining)} of {len(listed)} pairs have no "
            f"grade and are absent from the qrels (a metric reads them as not judged): "
            f"{len(unjudged)} unjudged (answers that never became a grade: .unjudged), "
            f"{len(failed)} failed (calls that kept raising: .failed), {len(remaining)} left "
            f"by the budget (.remaining). Grading again asks the failed and the left ones "
            f"only; the unjudged answers are cached, as paid for.",
            UngradedPairsWarning,
        )
    return GoldSet(
        qrels=Qrels.from_dict(graded) if graded else Qrels.from_dict({}),
        grades={pair: grades[pair] for pair in listed if grades[pair]},
        unjudged=unjudged,
        failed=failed,
        remaining=remaining,
        usage=usage,
        provenance=provenance,
    )
