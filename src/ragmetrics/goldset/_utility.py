"""Utility labels (eRAG, Salemi and Zamani, SIGIR 2024): a passage is labelled by whether the
user's own generator answers the question correctly from that passage alone.

For each query, each of its top-k retrieved passages is given to ``answer(question,
passage)``; the answer is compared with the query's reference answers (exact match after
SQuAD's normalization, or the token F1 as a real grade), and the comparison is the passage's
label. Relevance labels say whether a passage is on the topic; these say whether it helps
this generator, which is what end-to-end quality depends on. :func:`tracking` checks, on the
user's data, how well a metric over any labels orders systems as their answers do.

The calls go through the grading engine: cached (a re-run makes no call for what it holds,
an interrupted run resumes), budgeted, rate-limited and retried as :func:`grade` is.
"""

from __future__ import annotations

import asyncio
import datetime
import hashlib
import inspect
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragmetrics._util.answers import exact_match, token_f1
from ragmetrics._util.warn import warn
from ragmetrics._version import __version__
from ragmetrics.data._qrels import Qrels
from ragmetrics.data._run import Run
from ragmetrics.errors import InvalidParameterError, UngradedPairsWarning
from ragmetrics.goldset._agreement import kendall_tau_b
from ragmetrics.goldset._grade import Asking, Limits, Usage, ask_pairs, check_run_options
from ragmetrics.goldset._judge import Conversation, Judge, Reply

__all__ = [
    "UTILITY_METRICS",
    "Tracking",
    "UtilityLabels",
    "questions_and_passages",
    "tracking",
    "utility_qrels",
]

UTILITY_METRICS = ("exact_match", "f1")
ANSWER_VERSION = "answer-alone-1"  # keys the cache: another labelling never reads these


def _payload(question: str, passage: str) -> str:
    return json.dumps([question, passage], ensure_ascii=False)


_ANSWERING = Asking(
    prompt=_payload,
    parse=lambda text: None,  # any text is the answer: compared with the references, not parsed
    reask=None,
    version=ANSWER_VERSION,
    template_hash=hashlib.sha256(b"answer(question, passage)").hexdigest()[:16],
    text=True,
)


@dataclass
class _Generator(Judge):
    """The user's generator, ``answer(question, passage) -> str`` (or async), asked through
    the grading engine (which sends it the pair as its one message)."""

    function: Callable[[str, str], Any]
    model_id: str = ""
    params: Mapping[str, Any] = field(default_factory=dict)

    async def aask(self, conversation: Conversation) -> Reply:
        question, passage = json.loads(conversation[0][1])
        if inspect.iscoroutinefunction(self.function):
            text = await self.function(question, passage)
        else:
            text = await asyncio.to_thread(self.function, question, passage)
        if not isinstance(text, str):
            raise InvalidParameterError(
                f"answer(question, passage) returned a {type(text).__name__}; it must return "
                f"the generated answer as a str."
            )
        return Reply(text)


@dataclass(frozen=True)
class UtilityLabels:
    """The utility labels of each query's top-k passages.

    Attributes:
        qrels: (query, passage) -> label: 1 or 0 (``exact_match``), or the token F1 in
            [0, 1] as a real grade (``"f1"``). Read with ``relevance_threshold=1`` for exact
            match; nDCG reads the F1 as a gain.
        answers: (query id, doc id) -> the answer the generator gave from that passage.
        failed: pairs whose calls kept raising (absent from the qrels; asked again next run).
        remaining: pairs left by the budget (asked next run; the cache keeps the rest).
        skipped_queries: queries of the run with no question or no reference answer.
        usage: calls and tokens (cache hits included).
        provenance: the generator's id and settings, the metric, k, the date.
    """

    qrels: Qrels
    answers: dict[tuple[str, str], str]
    failed: dict[tuple[str, str], str]
    remaining: list[tuple[str, str]]
    skipped_queries: list[str]
    usage: Usage
    provenance: dict[str, Any]


def utility_qrels(
    questions: Mapping[str, str] | Any,
    run: Run | Mapping[str, Any],
    passages: Mapping[str, str] | None,
    *,
    answer: Callable[[str, str], Any],
    references: Mapping[str, str | Sequence[str]],
    k: int = 10,
    metric: str = "exact_match",
    model_id: str | None = None,
    params: Mapping[str, Any] | None = None,
    cache: str | os.PathLike[str] | None = "utility.sqlite",
    limits: Limits | None = None,
    progress: bool | None = None,
) -> UtilityLabels:
    """Label each query's top ``k`` passages by whether the generator answers correctly
    from that passage alone (eRAG).

    Args:
        questions: query id -> question text (or a ``RetrievalDataset``: its queries, and
            its corpus when ``passages`` is None).
        run: the retrieval whose passages are labelled (each query's top ``k``).
        passages: doc id -> passage text.
        answer: the user's generator, ``answer(question, passage) -> str`` (or async).
        references: query id -> the reference answer(s).
        k: how many passages of each query to label.
        metric: ``"exact_match"`` (label 1 or 0) or ``"f1"`` (the token F1, a real grade).
        model_id, params: the generator's model and settings: they key the cache, so a new
            generator never reuses another's answers (required).
        cache, limits, progress: as :func:`~ragmetrics.goldset.grade`.

    Raises:
        InvalidParameterError: no ``model_id``, an unknown metric, ``k`` below 1, or a
            retrieved doc without a passage text.
    """
    _check_options(metric, k, answer, model_id, params, limits, cache, progress)
    texts, corpus = questions_and_passages(questions, passages)
    wanted = _references(references)
    ranked = run if isinstance(run, Run) else Run.from_obj(run)
    pairs: list[tuple[str, str]] = []
    skipped = [q for q in ranked.query_ids if q not in texts or q not in wanted]
    for query_id in ranked.query_ids:
        if query_id in texts and query_id in wanted:
            pairs += [(query_id, doc) for doc in ranked[query_id][:k]]
    missing = sorted({doc for _, doc in pairs if doc not in corpus})
    if missing:
        shown = ", ".join(map(repr, missing[:3])) + (", ..." if len(missing) > 3 else "")
        raise InvalidParameterError(
            f"{len(missing)} retrieved docs have no passage text ({shown}): the generator "
            f"cannot be asked about them. Give passages for every doc of the top {k}."
        )
    if skipped:
        warn(
            f"{len(skipped)} queries of the run have no question or no reference answer and "
            f"are not labelled ({', '.join(map(repr, skipped[:3]))}): .skipped_queries.",
            UngradedPairsWarning,
        )
    generator = _Generator(answer, str(model_id), dict(params or {}))

    outcomes, usage = ask_pairs(
        pairs, lambda q, d: (texts[q], corpus[d]), generator, _ANSWERING,
        cache=cache, limits=limits, progress=progress, what="answering",
    )  # fmt: skip
    return _labels(pairs, outcomes, usage, wanted, metric, k, generator, skipped)


def _check_options(
    metric: Any,
    k: Any,
    answer: Any,
    model_id: Any,
    params: Any,
    limits: Any,
    cache: Any,
    progress: Any,
) -> None:
    """The keywords of :func:`utility_qrels`, refused before any call with what to give."""
    if metric not in UTILITY_METRICS:
        raise InvalidParameterError(
            f"metric must be one of {', '.join(map(repr, UTILITY_METRICS))}; got {metric!r}."
        )
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InvalidParameterError(f"k must be an int >= 1; got {k!r}.")
    if not callable(answer):
        raise InvalidParameterError("answer must be a function answer(question, passage) -> str.")
    if not model_id or not isinstance(model_id, str):
        raise InvalidParameterError(
            "utility_qrels needs model_id='...' (the generator's model and version): the "
            "cache is keyed by it, so another generator never reuses these answers."
        )
    if params is not None and not isinstance(params, Mapping):
        raise InvalidParameterError(
            f"params maps the generator's settings to their values; got {type(params).__name__}."
        )
    check_run_options(limits, cache, progress)


def questions_and_passages(
    questions: Any, passages: Any, *, need_passages: bool = True
) -> tuple[dict[str, str], Mapping[str, str]]:
    """The question texts and the passages' texts, from mappings or a ``RetrievalDataset``
    (its queries, and its corpus when ``passages`` is None)."""
    queries = getattr(questions, "queries", questions)
    corpus = passages if passages is not None else getattr(questions, "corpus", None)
    if not isinstance(queries, Mapping) or not all(
        isinstance(q, str) and isinstance(t, str) for q, t in queries.items()
    ):
        raise InvalidParameterError(
            "questions maps each query id to its question text (or is a RetrievalDataset)."
        )
    if not isinstance(corpus, Mapping):
        if need_passages:
            raise InvalidParameterError(
                "passages maps each doc id to its text (or questions is a RetrievalDataset)."
            )
        corpus = {}
    return dict(queries), corpus


def _references(references: Any) -> dict[str, list[str]]:
    if not isinstance(references, Mapping):
        raise InvalidParameterError(
            f"references maps each query id to its reference answer(s); got "
            f"{type(references).__name__}."
        )
    out: dict[str, list[str]] = {}
    for query_id, given in references.items():
        listed = [given] if isinstance(given, str) else given
        if (
            not isinstance(listed, Sequence)
            or not listed
            or not all(isinstance(r, str) for r in listed)
        ):
            raise InvalidParameterError(
                f"The references of query {query_id!r} must be a string or a non-empty list "
                f"of strings; got {given!r:.80}."
            )
        out[query_id] = list(listed)
    return out


def _labels(
    pairs: list[tuple[str, str]],
    outcomes: list[Any],
    usage: Usage,
    references: dict[str, list[str]],
    metric: str,
    k: int,
    generator: _Generator,
    skipped: list[str],
) -> UtilityLabels:
    labels: dict[str, dict[str, float]] = {}
    answers: dict[tuple[str, str], str] = {}
    failed: dict[tuple[str, str], str] = {}
    remaining: list[tuple[str, str]] = []
    for (query_id, doc), outcome in zip(pairs, outcomes, strict=True):
        if outcome.answer is None:
            if outcome.error is not None:
                failed[(query_id, doc)] = outcome.error
            else:
                remaining.append((query_id, doc))
            continue
        text = outcome.answer.answer
        answers[(query_id, doc)] = text
        wanted = references[query_id]
        value: float = (
            exact_match(text, wanted) if metric == "exact_match" else token_f1(text, wanted)
        )
        labels.setdefault(query_id, {})[doc] = value
    if failed or remaining:
        warn(
            f"{len(failed) + len(remaining)} of {len(pairs)} passages have no label and are "
            f"absent from the qrels: {len(failed)} failed (.failed), {len(remaining)} left by "
            f"the budget (.remaining). Labelling again asks only those.",
            UngradedPairsWarning,
        )
    provenance = {
        "model_id": generator.model_id,
        "params": dict(generator.params),
        "metric": metric,
        "k": k,
        "version": ANSWER_VERSION,
        "pairs": len(pairs),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "ragmetrics": __version__,
    }
    qrels = Qrels.from_dict(labels) if labels else Qrels.from_dict({})  # type: ignore[arg-type]
    return UtilityLabels(qrels, answers, failed, remaining, skipped, usage, provenance)


# --- does a metric track end-to-end quality? ---------------------------------------------


@dataclass(frozen=True)
class Tracking:
    """How well a metric orders systems as their end-to-end answers do.

    Attributes:
        tau: Kendall's tau-b between the systems' mean metric and their mean answer quality.
        low, high: the ``1 - alpha`` percentile interval of tau over queries resampled with
            replacement (``n_boot`` times).
        n_systems, n_queries: the systems compared and the queries every one of them has.
    """

    tau: float
    low: float
    high: float
    n_systems: int
    n_queries: int


def tracking(
    metric: Mapping[str, Mapping[str, float | None]],
    quality: Mapping[str, Mapping[str, float | None]],
    *,
    alpha: float = 0.05,
    n_boot: int = 2000,
    seed: int = 0,
) -> Tracking:
    """Kendall's tau between a retrieval metric and end-to-end answer quality across
    systems (retrievers, settings, label sets), with a bootstrap interval over queries.

    Args:
        metric: system -> query id -> the metric's value (``result.column`` of each run, as
            a mapping, or ``{q: v[label] for q, v in result.per_query.items()}``).
        quality: system -> query id -> the quality of the system's final answer (exact match,
            F1, a judge's score), for the same systems.
        alpha, n_boot, seed: the interval's level, its resamples, and their seed.

    Only queries that every system has a value for (not NA) in both count.

    Example:
        >>> metric = {"a": {"q1": 0.9, "q2": 0.7}, "b": {"q1": 0.5, "q2": 0.4},
        ...           "c": {"q1": 0.1, "q2": 0.2}}
        >>> quality = {"a": {"q1": 1, "q2": 1}, "b": {"q1": 1, "q2": 0}, "c": {"q1": 0, "q2": 0}}
        >>> tracking(metric, quality, n_boot=200).tau
        1.0
    """
    if not isinstance(metric, Mapping) or not isinstance(quality, Mapping):
        raise InvalidParameterError("metric and quality map each system to {query id: value}.")
    systems = [s for s in metric if s in quality]
    if len(systems) < 3 or set(metric) != set(quality):
        raise InvalidParameterError(
            f"tracking needs the same three or more systems in metric and quality; got "
            f"{sorted(map(str, metric))} and {sorted(map(str, quality))}."
        )
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or not 100 <= n_boot <= 100_000:
        raise InvalidParameterError(f"n_boot must be an int in [100, 100000]; got {n_boot!r}.")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InvalidParameterError(f"seed must be an int >= 0; got {seed!r}.")
    if not isinstance(alpha, float | int) or isinstance(alpha, bool) or not 0 < alpha < 1:
        raise InvalidParameterError(f"alpha must be a number in (0, 1); got {alpha!r}.")
    queries = sorted(set.intersection(*(set(_defined(metric[s])) & set(_defined(quality[s]))
                                        for s in systems)))  # fmt: skip
    if len(queries) < 2:
        raise InvalidParameterError(
            f"tracking needs two or more queries that every system has a value for in both; "
            f"got {len(queries)}."
        )
    m = np.array([[_number(metric[s][q], s, q) for q in queries] for s in systems])
    y = np.array([[_number(quality[s][q], s, q) for q in queries] for s in systems])
    tau = kendall_tau_b(m.mean(axis=1), y.mean(axis=1))
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(n_boot):
        pick = rng.integers(0, len(queries), len(queries))
        value = kendall_tau_b(m[:, pick].mean(axis=1), y[:, pick].mean(axis=1))
        if not math.isnan(value):
            draws.append(value)
    low, high = np.quantile(draws, [alpha / 2, 1 - alpha / 2]) if draws else (math.nan,) * 2
    return Tracking(float(tau), float(low), float(high), len(systems), len(queries))


def _defined(values: Mapping[str, float | None]) -> list[str]:
    return [
        q
        for q, v in values.items()
        if v is not None and not (isinstance(v, float) and math.isnan(v))
    ]


def _number(value: Any, system: str, query_id: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidParameterError(
            f"The value of query {query_id!r} for system {system!r} is {value!r}; a number is "
            f"needed."
        )
    return float(value)
