"""Nuggets from the user's LLM: the facts each question needs (vital or okay), made from its
graded evidence or its reference answers, then each fact's supporting passages, labelled
passage by passage.

Both steps go through the grading engine (:mod:`ragmetrics.goldset._grade`): answers are
cached by model, settings and prompt version (a re-run makes no call for what it holds; an
interrupted run resumes exactly), calls are budgeted, rate-limited and retried, and a reply
that cannot be read is asked again, then kept as unread rather than guessed. The prompts are
versioned; docs/goldset.md prints them.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragmetrics._util.warn import warn
from ragmetrics._version import __version__
from ragmetrics.data._nuggets import Nugget, Nuggets
from ragmetrics.data._qrels import Qrels
from ragmetrics.data._run import Run
from ragmetrics.errors import InvalidParameterError, UngradedPairsWarning
from ragmetrics.goldset._grade import Asking, Limits, Usage, ask_pairs
from ragmetrics.goldset._judge import as_judge
from ragmetrics.goldset._utility import questions_and_passages

__all__ = [
    "NUGGET_TEMPLATE",
    "SUPPORT_TEMPLATE",
    "NuggetSet",
    "SupportAgreement",
    "make_nuggets",
    "parse_nuggets",
    "parse_support",
    "support_agreement",
    "support_nuggets",
]

NUGGET_VERSION = "nuggets-1"
SUPPORT_VERSION = "support-1"

NUGGET_TEMPLATE = """You list the facts that a complete answer to a question must contain.

Question:
{query}

Material to draw the facts from (passages judged useful, or reference answers):
{passage}

Write each fact on a line of its own, short but understandable without the others, the most
important first, and at most {limit} lines. Begin a line with "vital:" for a fact the
answer cannot leave out, or with "okay:" for a fact that makes it better. Write nothing else."""

NUGGET_REASK = """Your reply held no line that begins with "vital:" or "okay:". Reply with the
facts only, one a line, each line beginning with "vital:" or "okay:"."""

SUPPORT_TEMPLATE = """Does the passage state the fact below, so that a reader could cite the
passage for it? Judge the passage alone, not what you know.

{query}

Passage:
{passage}

Reply with one word: yes or no."""

SUPPORT_REASK = """Your reply was {answer}. Reply with one word, yes or no, and nothing else."""

_LINE = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])?\s*\**(vital|okay)\**\s*[:\-\u2013]\s*(.+?)\s*$",
                   re.IGNORECASE)  # fmt: skip
_YES_NO = re.compile(r"^\W*(yes|no)\W*$", re.IGNORECASE)


def _hash(*texts: str) -> str:
    return hashlib.sha256("\0".join(texts).encode()).hexdigest()[:16]


def parse_nuggets(answer: object) -> list[tuple[bool, str]]:
    """The ``(vital, text)`` facts of a reply: its lines that begin with ``vital:`` or
    ``okay:`` (after a list marker or bold markup); the other lines are not facts.

    Example:
        >>> parse_nuggets("1. vital: Ada wrote the notes\\n- okay: in 1843\\nThanks!")
        [(True, 'Ada wrote the notes'), (False, 'in 1843')]
    """
    if not isinstance(answer, str):
        return []
    found = []
    for line in answer.splitlines():
        match = _LINE.match(line)
        if match and match.group(2).strip():
            found.append((match.group(1).lower() == "vital", match.group(2).strip()))
    return found


def parse_support(answer: object) -> bool | None:
    """``True`` for a reply that is "yes", ``False`` for "no", ``None`` for anything else.

    Example:
        >>> parse_support("Yes."), parse_support("no"), parse_support("maybe")
        (True, False, None)
    """
    if not isinstance(answer, str):
        return None
    match = _YES_NO.match(answer.strip())
    return None if match is None else match.group(1).lower() == "yes"


def _creating(limit: int) -> Asking:
    return Asking(
        prompt=lambda query, passage: NUGGET_TEMPLATE.format(
            query=query.strip(), passage=passage.strip(), limit=limit
        ),
        parse=lambda text: 1 if parse_nuggets(text) else None,  # the facts are read again
        reask=lambda raw: NUGGET_REASK,
        version=f"{NUGGET_VERSION}-max{limit}",
        template_hash=_hash(NUGGET_TEMPLATE, NUGGET_REASK),
        text=True,
    )


# a yes is kept as 5 and a no as 1 in the cache (whose answers hold grades 1..5)
_SUPPORTING = Asking(
    prompt=lambda query, passage: SUPPORT_TEMPLATE.format(query=query, passage=passage.strip()),
    parse=lambda text: None if (yes := parse_support(text)) is None else (5 if yes else 1),
    reask=lambda raw: SUPPORT_REASK.format(answer=json.dumps(raw[:200])),
    version=SUPPORT_VERSION,
    template_hash=_hash(SUPPORT_TEMPLATE, SUPPORT_REASK),
    text=True,
)


@dataclass(frozen=True)
class NuggetSet:
    """Nuggets made or labelled by an LLM, and what it cost.

    Attributes:
        nuggets: the :class:`~ragmetrics.Nuggets` (ids ``n1``, ``n2``... in the order the
            model listed them).
        labels: ``(query id, nugget id, doc id) -> True/False``: every support question the
            model answered (empty after :func:`make_nuggets`).
        unread: what could not be read after the re-asks (a query's creation, or a
            ``(query id, nugget id, doc id)`` support question), with the last reply.
        failed: what kept raising; remaining: what the budget left. Both are asked again by
            the next run; nothing of them is guessed.
        usage: calls and tokens; provenance: the model, its settings, the prompt, the date.
    """

    nuggets: Nuggets
    labels: dict[tuple[str, str, str], bool]
    unread: dict[Any, str]
    failed: dict[Any, str]
    remaining: list[Any]
    usage: Usage
    provenance: dict[str, Any]


def make_nuggets(
    questions: Mapping[str, str] | Any,
    judge: Any,
    *,
    evidence: Qrels | Mapping[str, Mapping[str, int]] | None = None,
    passages: Mapping[str, str] | None = None,
    references: Mapping[str, str | Sequence[str]] | None = None,
    min_grade: int = 4,
    max_passages: int = 10,
    max_nuggets: int = 8,
    model_id: str | None = None,
    params: Mapping[str, Any] | None = None,
    cache: str | os.PathLike[str] | None = "goldset.sqlite",
    limits: Limits | None = None,
    progress: bool | None = None,
) -> NuggetSet:
    """The facts each question needs, listed by ``judge`` from the question's graded
    evidence (``evidence`` qrels, the passages graded ``min_grade`` or above, best first,
    at most ``max_passages``) or from its ``references`` (reference answers).

    ``questions`` may be a ``RetrievalDataset`` (its queries, its corpus as ``passages`` and
    its qrels as ``evidence`` where not given). ``judge`` is as for
    :func:`~ragmetrics.goldset.grade`: ``as_judge(model)`` of an integration, or a function
    ``fn(prompt) -> str`` with ``model_id=``. The nuggets have no support yet:
    :func:`support_nuggets` labels it.
    """
    texts, corpus = questions_and_passages(questions, passages, need_passages=False)
    evidence = evidence if evidence is not None else getattr(questions, "qrels", None)
    _check_counts(min_grade=min_grade, max_passages=max_passages, max_nuggets=max_nuggets)
    material = _material(texts, corpus, evidence, references, min_grade, max_passages)
    the_judge = as_judge(judge, model_id=model_id, params=params)
    asking = _creating(max_nuggets)
    queries = sorted(material)
    outcomes, usage = ask_pairs(
        [(q, "") for q in queries], lambda q, _: (texts[q], material[q]), the_judge, asking,
        cache=cache, limits=limits, progress=progress, what="listing facts",
    )  # fmt: skip
    made: dict[str, dict[str, Nugget]] = {}
    unread: dict[Any, str] = {}
    failed: dict[Any, str] = {}
    remaining: list[Any] = []
    for query_id, outcome in zip(queries, outcomes, strict=True):
        if outcome.answer is None:
            if outcome.error is not None:
                failed[query_id] = outcome.error
            else:
                remaining.append(query_id)
            continue
        facts = parse_nuggets(outcome.answer.answer)[:max_nuggets]
        if not facts:
            unread[query_id] = outcome.answer.answer
            continue
        made[query_id] = {
            f"n{i}": Nugget(text, vital, ()) for i, (vital, text) in enumerate(facts, 1)
        }
    _warn_missing("questions", len(queries), unread, failed, remaining)
    provenance = _provenance(the_judge, asking, pairs=len(queries), max_nuggets=max_nuggets)
    return NuggetSet(Nuggets(made), {}, unread, failed, remaining, usage, provenance)


def support_nuggets(
    nuggets: Nuggets | NuggetSet | Mapping[str, Any],
    pairs: Run | Mapping[str, Any] | Iterable[tuple[str, str]],
    passages: Mapping[str, str],
    judge: Any,
    *,
    questions: Mapping[str, str] | None = None,
    k: int = 10,
    model_id: str | None = None,
    params: Mapping[str, Any] | None = None,
    cache: str | os.PathLike[str] | None = "goldset.sqlite",
    limits: Limits | None = None,
    progress: bool | None = None,
) -> NuggetSet:
    """Label, passage by passage, which passages state each nugget: ``judge`` is asked
    for every (nugget, passage) of each query, the passages being each query's top ``k`` of
    a run (or given ``(query id, doc id)`` pairs, as :func:`~ragmetrics.goldset.pool`
    returns). A "yes" adds the passage to the nugget's support; the support already given
    stays. ``questions`` (query id -> text) shows the model each fact's question.
    """
    given = nuggets.nuggets if isinstance(nuggets, NuggetSet) else Nuggets.from_dict(nuggets)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InvalidParameterError(f"k must be an int >= 1; got {k!r}.")
    if not isinstance(passages, Mapping):
        raise InvalidParameterError("passages maps each doc id to its text.")
    wanted = _pairs_of(pairs, k)
    triples = [
        (query_id, nugget_id, doc)
        for query_id, doc in wanted
        if query_id in given
        for nugget_id in given[query_id]
    ]
    missing = sorted({doc for _, _, doc in triples if doc not in passages})
    if missing:
        raise InvalidParameterError(
            f"{len(missing)} docs have no passage text ({', '.join(map(repr, missing[:3]))}); "
            f"give the text of every doc to label."
        )
    if questions is not None and not isinstance(questions, Mapping):
        raise InvalidParameterError(
            f"questions maps each query id to its text; got {type(questions).__name__}."
        )
    asked = questions or {}
    the_judge = as_judge(judge, model_id=model_id, params=params)

    def texts(index_key: str, doc: str) -> tuple[str, str]:
        query_id, nugget_id = json.loads(index_key)
        question = asked.get(query_id)
        fact = given[query_id][nugget_id].text
        head = f"Question: {question}\n" if question else ""
        return f"{head}Fact: {fact}", passages[doc]

    outcomes, usage = ask_pairs(
        [(json.dumps([q, n]), d) for q, n, d in triples], texts, the_judge, _SUPPORTING,
        cache=cache, limits=limits, progress=progress, what="labelling support",
    )  # fmt: skip
    labels: dict[tuple[str, str, str], bool] = {}
    unread: dict[Any, str] = {}
    failed: dict[Any, str] = {}
    remaining: list[Any] = []
    for triple, outcome in zip(triples, outcomes, strict=True):
        if outcome.answer is None and outcome.error is not None:
            failed[triple] = outcome.error
        elif outcome.answer is None:
            remaining.append(triple)
        elif outcome.answer.grade is None:
            unread[triple] = outcome.answer.answer
        else:
            labels[triple] = outcome.answer.grade >= 3
    _warn_missing("support questions", len(triples), unread, failed, remaining)
    found: dict[tuple[str, str], list[str]] = {}
    for (query_id, nugget_id, doc), yes in labels.items():
        if yes:
            found.setdefault((query_id, nugget_id), []).append(doc)
    supported = {
        query_id: {
            nugget_id: Nugget(
                nugget.text,
                nugget.vital,
                tuple(dict.fromkeys([*nugget.support, *found.get((query_id, nugget_id), [])])),
            )
            for nugget_id, nugget in of_query.items()
        }
        for query_id, of_query in given.items()
    }
    provenance = _provenance(the_judge, _SUPPORTING, pairs=len(triples), k=k)
    return NuggetSet(Nuggets(supported), labels, unread, failed, remaining, usage, provenance)


@dataclass(frozen=True)
class SupportAgreement:
    """How far the LLM's support labels agree with people's, on the pairs both labelled.

    Attributes:
        n: the (query, nugget, doc) questions both answered.
        agreement: the share answered alike.
        kappa: Cohen's kappa (agreement beyond chance); NaN when either side gave one answer
            only.
        llm_yes, human_yes: the share of "yes" on each side.
    """

    n: int
    agreement: float
    kappa: float
    llm_yes: float
    human_yes: float


def support_agreement(
    llm: NuggetSet | Mapping[tuple[str, str, str], bool],
    human: Mapping[tuple[str, str, str], bool],
) -> SupportAgreement:
    """Agreement of the LLM's support labels (``NuggetSet.labels``) with people's on a
    sample (``{(query id, nugget id, doc id): True/False}``), on the questions both answered.
    """
    ours = llm.labels if isinstance(llm, NuggetSet) else llm
    if not isinstance(ours, Mapping) or not isinstance(human, Mapping):
        raise InvalidParameterError(
            "support_agreement compares {(query id, nugget id, doc id): True/False} labels."
        )
    shared = [key for key in human if key in ours]
    for key in shared:
        if not isinstance(human[key], bool):
            raise InvalidParameterError(
                f"The human label of {key!r} is {human[key]!r}; labels are True or False."
            )
    if len(shared) < 2:
        raise InvalidParameterError(
            f"support_agreement needs two or more questions both labelled; got {len(shared)}. "
            f"Label a sample of NuggetSet.labels' keys."
        )
    a = [ours[key] for key in shared]
    b = [human[key] for key in shared]
    n = len(shared)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    pa, pb = sum(a) / n, sum(b) / n
    expected = pa * pb + (1 - pa) * (1 - pb)
    kappa = (observed - expected) / (1 - expected) if expected < 1 else float("nan")
    return SupportAgreement(n, observed, kappa, pa, pb)


# --- helpers ---------------------------------------------------------------------------------


def _check_counts(**counts: Any) -> None:
    for name, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InvalidParameterError(f"{name} must be an int >= 1; got {value!r}.")


def _material(
    texts: dict[str, str],
    corpus: Mapping[str, str],
    evidence: Any,
    references: Any,
    min_grade: int,
    max_passages: int,
) -> dict[str, str]:
    """Per question, what the model reads: its reference answers, else its best passages."""
    if references is not None:
        if not isinstance(references, Mapping):
            raise InvalidParameterError("references maps each query id to its answer(s).")
        out = {}
        for query_id, given in references.items():
            listed = [given] if isinstance(given, str) else given
            if (
                not isinstance(listed, Sequence)
                or not listed
                or not all(isinstance(r, str) for r in listed)
            ):
                raise InvalidParameterError(f"The references of {query_id!r} must be strings.")
            if query_id in texts:
                out[query_id] = "\n".join(f"- {r}" for r in listed)
        return out
    if evidence is None:
        raise InvalidParameterError(
            "make_nuggets reads each question's graded evidence (evidence= qrels with "
            "passages=) or its reference answers (references=); neither was given."
        )
    qrels = evidence if isinstance(evidence, Qrels) else Qrels.from_dict(evidence)
    out = {}
    for query_id in texts:
        if query_id not in qrels:
            continue
        best = sorted(
            ((g, d) for d, g in qrels[query_id].items() if g >= min_grade),
            key=lambda x: (-x[0], x[1]),
        )[:max_passages]
        missing = [d for _, d in best if d not in corpus]
        if missing:
            raise InvalidParameterError(
                f"Evidence {missing[0]!r} of query {query_id!r} has no passage text; give "
                f"passages= (doc id -> text) for every graded doc."
            )
        if best:
            out[query_id] = "\n\n".join(
                f"[{i}] {corpus[d].strip()}" for i, (_, d) in enumerate(best, 1)
            )
    return out


def _pairs_of(pairs: Any, k: int) -> list[tuple[str, str]]:
    if isinstance(pairs, Run | Mapping):
        run = pairs if isinstance(pairs, Run) else Run.from_obj(pairs)
        return [(q, d) for q in run.query_ids for d in run[q][:k]]
    if isinstance(pairs, str | bytes) or not isinstance(pairs, Iterable):
        raise InvalidParameterError(
            f"pairs is a run or (query id, doc id) pairs; got {type(pairs).__name__}."
        )
    listed = list(pairs)
    if not all(
        isinstance(p, tuple) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in listed
    ):
        raise InvalidParameterError(
            "pairs is a run or (query id, doc id) pairs, as goldset.pool returns them."
        )
    return list(dict.fromkeys(listed))


def _warn_missing(what: str, total: int, unread: Any, failed: Any, remaining: Any) -> None:
    if unread or failed or remaining:
        warn(
            f"{len(unread) + len(failed) + len(remaining)} of {total} {what} have no answer: "
            f"{len(unread)} unread after re-asks (.unread), {len(failed)} failed (.failed), "
            f"{len(remaining)} left by the budget (.remaining). Running again asks the failed "
            f"and the left ones only; nothing of them is guessed.",
            UngradedPairsWarning,
        )


def _provenance(judge: Any, asking: Asking, **more: Any) -> dict[str, Any]:
    return {
        "model_id": judge.model_id,
        "params": dict(judge.params),
        "prompt_version": asking.version,
        "template_hash": asking.template_hash,
        **more,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "ragmetrics": __version__,
    }
