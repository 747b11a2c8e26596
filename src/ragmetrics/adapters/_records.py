"""Retrievals recorded from a running pipeline, framework-neutral.

The adapters translate their framework's events (LlamaIndex instrumentation spans,
LangChain callbacks) into calls on a :class:`RetrievalLog`: :meth:`~RetrievalLog.start`,
:meth:`~RetrievalLog.end` or :meth:`~RetrievalLog.fail`, paired by a span (run) id. The log
keeps one :class:`RetrievalRecord` per retrieval, failed ones included, and turns them into
a :class:`~ragmetrics.Run` or an evaluation, for every stage or for one.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from ragmetrics._util.warn import warn
from ragmetrics.data._run import Run
from ragmetrics.engine._evaluation import evaluate as evaluate_run
from ragmetrics.engine._result import EvaluationResult
from ragmetrics.engine._settings import MissingPolicy
from ragmetrics.errors import (
    HandlerFailureWarning,
    InputFormatError,
    InvalidParameterError,
    RagMetricsError,
    StageWarning,
)

if TYPE_CHECKING:
    from ragmetrics.adapters._scoring import QueryScorer
    from ragmetrics.data._qrels import Qrels

__all__ = [
    "POLICIES",
    "RERANKING_RETRIEVERS",
    "HandlerFailure",
    "Policy",
    "RecordedRetrievals",
    "RetrievalLog",
    "RetrievalRecord",
    "current_question",
    "question",
]

# How the retrievals of one query become its ranking: "latest" keeps the last successful
# retrieval (a pipeline that retrieves once per question); "union" joins every successful
# retrieval of the query (in the order they started), docs in the order first seen, each once
# (an agent that calls its retriever tool several times for one question).
Policy = Literal["latest", "union"]
POLICIES: tuple[str, ...] = ("latest", "union")

# Retrievers that rerank or cut what a retriever inside them found (LangChain's
# ContextualCompressionRetriever, around a document compressor or a cross-encoder): recorded
# as "rerank" stages, and the retriever inside them as the query's retrieval.
RERANKING_RETRIEVERS = frozenset({"ContextualCompressionRetriever"})

_QUESTION: ContextVar[str | None] = ContextVar("ragmetrics_question", default=None)


@contextmanager
def question(query_id: str) -> Iterator[str]:
    """Every retrieval started inside the block belongs to query ``query_id``, whatever
    text the pipeline searched with: an agent's tool calls, a graph's nodes, the tasks
    started inside the block (asyncio copies the context into them) and the framework
    threads that copy it (LangChain's executors do). A thread of your own sees it when
    started with ``contextvars.copy_context().run``. An id given by the framework itself (a
    LangChain run's metadata) still wins.

    Example:
        >>> from ragmetrics.adapters import RetrievalLog, question
        >>> log = RetrievalLog()
        >>> with question("q7"):
        ...     log.start("span-1", "the agent's own rewrite")
        >>> log.end("span-1", ["d3", "d1"]).query_id
        'q7'
    """
    if not isinstance(query_id, str) or not query_id:
        raise InvalidParameterError(
            f"question() takes the query id the retrievals belong to, a non-empty string; "
            f"got {query_id!r}."
        )
    token = _QUESTION.set(query_id)
    try:
        yield query_id
    finally:
        _QUESTION.reset(token)


def current_question() -> str | None:
    """The query id of the innermost :func:`question` block around this call, or None."""
    return _QUESTION.get()


def _check_policy(policy: object) -> Policy:
    if policy not in POLICIES:
        raise InvalidParameterError(
            f"policy must be one of {', '.join(map(repr, POLICIES))} (how a query's "
            f"retrievals become its ranking); got {policy!r}."
        )
    return policy  # type: ignore[return-value]


@dataclass(frozen=True)
class RetrievalRecord:
    """One retrieval, as a pipeline made it.

    Attributes:
        query: the query text.
        query_id: its key in runs and qrels (a given id, else the text).
        doc_ids, texts, scores: what came back, best first (empty when it failed).
        retriever: the retriever's name, else its class name.
        tags: the framework's tags of the call.
        span_id: the framework's id of this retrieval (LlamaIndex span, LangChain run).
        parent_id: the retrieval this one was made for (a fusion or ensemble retriever's
            span or run), else the span or run it was called from, if any.
        error: ``"ErrorType: message"`` when the retrieval raised, else ``None``.
        kind: ``"retrieve"``, ``"rerank"`` for a stage that reorders or cuts what a
            retrieval found (a LlamaIndex node post-processor, a LangChain compression
            retriever), or ``"context"`` for the final context a response synthesizer was
            given: the stages ``"rerank"`` and ``"context"`` select these, and the default
            run leaves them out.
        in_question: True when the query id came from a :func:`question` block (an agent's
            search for the user's question, whatever text it searched with).
        seconds: how long the retrieval took (wall time from its start event to its end or
            error), ``None`` when its start was not seen.
        started: when it started, on the log's own clock (a recorder's ``perf_counter``, a
            trace's epoch seconds): ``policy="union"`` joins a question's searches in the
            order they were started. ``None`` when its start was not seen.
    """

    query: str
    query_id: str
    doc_ids: tuple[str, ...] = ()
    texts: tuple[str, ...] = ()
    scores: tuple[float | None, ...] = ()
    retriever: str | None = None
    tags: tuple[str, ...] = ()
    span_id: str | None = None
    parent_id: str | None = None
    error: str | None = None
    seconds: float | None = None
    in_question: bool = False
    kind: str = "retrieve"
    started: float | None = None

    @property
    def failed(self) -> bool:
        return self.error is not None

    def is_stage(self, stage: str) -> bool:
        """True when ``stage`` is this record's retriever name or one of its tags; a
        retriever named ``Class@node`` (a LangGraph node) answers to ``Class``, to ``node``
        and to the whole name, and ``Class#2`` (the second object of a class under one
        LlamaIndex recorder) to ``Class`` and to the whole name."""
        if stage == self.retriever or stage in self.tags or stage == self.kind:
            return True
        if self.retriever is not None and "@" in self.retriever:
            kind, _, node = self.retriever.partition("@")
            return stage in (kind, node)
        if self.retriever is not None and "#" in self.retriever:
            kind, _, number = self.retriever.rpartition("#")
            return number.isdigit() and stage == kind
        return False


@dataclass
class _Open:
    query: str
    query_id: str
    retriever: str | None
    tags: tuple[str, ...]
    parent_id: str | None
    started: float = field(default_factory=time.perf_counter)
    in_question: bool = False
    kind: str = "retrieve"


@dataclass
class HandlerFailure:
    """An error inside a recorder or handler (not the retriever's): where and what."""

    where: str
    error: str
    query: str | None = None


@dataclass
class RetrievalLog:
    """Thread-safe records of retrievals, paired by span id.

    Args:
        queries: query text -> query id, for retrievals that carry no id.
        max_records: keep at most this many records (the oldest go first).
        scorer: scores each finished retrieval of a judged query (``live``).
        raise_errors: let an error of live scoring propagate (default: kept and warned).
    """

    queries: Mapping[str, str] = field(default_factory=dict)
    max_records: int | None = None
    scorer: QueryScorer | None = None
    raise_errors: bool = False
    _records: deque[RetrievalRecord] = field(init=False)
    _open: dict[str, _Open] = field(init=False, default_factory=dict)
    _live: dict[str, dict[str, float | None]] = field(init=False, default_factory=dict)
    _failures: list[HandlerFailure] = field(init=False, default_factory=list)
    _n_failures: int = field(init=False, default=0)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        if self.max_records is not None and (
            not isinstance(self.max_records, int) or self.max_records < 1
        ):
            raise RagMetricsError(
                f"max_records must be an int >= 1 or None; got {self.max_records!r}."
            )
        self._records = deque(maxlen=self.max_records)

    # --- events --------------------------------------------------------------------------

    def query_id(self, query: str, given: Any = None) -> str:
        """The id of ``query``: ``given`` when set, else the mapped id, else the text."""
        if given not in (None, ""):
            return str(given)
        return self.queries.get(query, query)

    def start(
        self,
        span_id: str,
        query: str,
        *,
        query_id: Any = None,
        retriever: str | None = None,
        tags: Sequence[str] = (),
        parent_id: str | None = None,
        kind: str = "retrieve",
    ) -> None:
        """A retrieval began (a second start of the same span adds what it knows); inside a
        :func:`question` block it belongs to that query unless ``query_id`` is given."""
        in_question = False
        if query_id in (None, ""):
            query_id = _QUESTION.get()
            in_question = query_id is not None
        with self._lock:
            known = self._open.get(span_id)
            if known is not None:  # e.g. a span handler saw it before the start event
                known.query = query or known.query
                known.query_id = self.query_id(known.query, query_id)
                known.retriever = known.retriever or retriever
                known.tags = known.tags or tuple(tags)
                known.parent_id = known.parent_id or parent_id
                known.in_question = known.in_question or in_question
                return
            self._open[span_id] = _Open(
                query,
                self.query_id(query, query_id),
                retriever,
                tuple(tags),
                parent_id,
                in_question=in_question,
                kind=kind,
            )

    def end(
        self,
        span_id: str,
        doc_ids: Sequence[str],
        *,
        texts: Sequence[str] = (),
        scores: Sequence[float | None] = (),
        query: str | None = None,
    ) -> RetrievalRecord:
        """A retrieval returned; records it (and scores it live when judged)."""
        now = time.perf_counter()
        with self._lock:
            opened = self._open.pop(span_id, None)
        seconds = None if opened is None else now - opened.started
        if opened is None:
            text = query or ""
            opened = _Open(text, self.query_id(text), None, (), None)
        record = RetrievalRecord(
            opened.query,
            opened.query_id,
            tuple(doc_ids),
            tuple(texts),
            tuple(scores),
            opened.retriever,
            opened.tags,
            span_id,
            opened.parent_id,
            seconds=seconds,
            in_question=opened.in_question,
            kind=opened.kind,
            started=None if seconds is None else opened.started,
        )
        live = self._score(record)
        with self._lock:
            self._records.append(record)
            if live is not None:
                self._live[record.query_id] = live
        return record

    def fail(self, span_id: str, error: BaseException | str, *, query: str | None = None) -> None:
        """A retrieval raised: it is recorded with the error, and its span closed. A span
        that was never started is recorded only when ``query`` says what it was for."""
        text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
        with self._lock:
            opened = self._open.pop(span_id, None)
            if opened is None:
                if query is None:
                    return
                opened = _Open(query, self.query_id(query), None, (), None)
            self._records.append(
                RetrievalRecord(
                    opened.query,
                    opened.query_id,
                    retriever=opened.retriever,
                    tags=opened.tags,
                    span_id=span_id,
                    parent_id=opened.parent_id,
                    error=text,
                    seconds=time.perf_counter() - opened.started,
                    in_question=opened.in_question,
                    kind=opened.kind,
                    started=opened.started,
                )
            )

    def add(self, record: RetrievalRecord) -> None:
        """Keep a retrieval recorded elsewhere (read back from a trace), as it is."""
        with self._lock:
            self._records.append(record)

    def discard(self, span_id: str) -> None:
        """Forget an open span that will neither end nor fail here."""
        with self._lock:
            self._open.pop(span_id, None)

    def handler_failed(self, where: str, error: BaseException, query: str | None = None) -> None:
        """An error inside the adapter itself: kept (with the query) and warned about once."""
        failure = HandlerFailure(where, f"{type(error).__name__}: {error}", query)
        with self._lock:
            self._failures = [*self._failures[-99:], failure]
            self._n_failures += 1
            first = self._n_failures == 1
        if first:
            warn(
                f"ragmetrics could not handle a retrieval ({where}"
                f"{'' if query is None else f', query {query!r}'}): {failure.error}. The "
                f"pipeline goes on; further failures are counted without a warning, and "
                f"the last ones are kept in .last_error / .handler_failures.",
                HandlerFailureWarning,
            )

    def _score(self, record: RetrievalRecord) -> dict[str, float | None] | None:
        scorer = self.scorer
        if scorer is None or scorer.qrels is None or record.query_id not in scorer.qrels:
            return None
        try:
            return scorer.score(record.doc_ids, query_id=record.query_id)
        except Exception as error:  # live scoring never breaks the pipeline by default
            self.handler_failed("live scoring", error, record.query)
            if self.raise_errors:
                raise
            return None

    # --- what was recorded ---------------------------------------------------------------

    def records(self, stage: str | None = None) -> list[RetrievalRecord]:
        """Every retrieval kept, failed ones included; of one ``stage`` (a retriever name
        or a tag) when given."""
        with self._lock:
            records = list(self._records)
        return records if stage is None else [r for r in records if r.is_stage(stage)]

    def is_open(self, span_id: str) -> bool:
        """True while the retrieval ``span_id`` has started and not finished."""
        with self._lock:
            return span_id in self._open

    @property
    def open_spans(self) -> int:
        """Retrievals started and not yet finished."""
        with self._lock:
            return len(self._open)

    @property
    def live(self) -> dict[str, dict[str, float | None]]:
        """Per judged query, the metrics of its latest retrieval."""
        with self._lock:
            return {q: dict(v) for q, v in self._live.items()}

    @property
    def n_failures(self) -> int:
        """Errors inside the adapter itself (not the retrievers')."""
        return self._n_failures

    @property
    def handler_failures(self) -> list[HandlerFailure]:
        """The last (up to 100) errors inside the adapter."""
        with self._lock:
            return list(self._failures)

    @property
    def last_error(self) -> HandlerFailure | None:
        with self._lock:
            return self._failures[-1] if self._failures else None

    def run(
        self, stage: str | None = None, *, name: str = "recorded", policy: Policy = "latest"
    ) -> Run:
        """Each query's ranking, as a ranked-list run: its latest successful retrieval
        (``policy="latest"``), or the union of all of them, docs in the order first seen,
        searches in the order they started (``policy="union"``: an agent that searched
        several times for one question;
        :meth:`calls` says how many times).

        Without ``stage``, retrievals nested in another recorded one (the sub-retrievers of
        a fusion retriever) are left out, and with ``"latest"`` a warning names the stages
        when distinct retrievers recorded the same query (pick one with ``stage=``).
        """
        policy = _check_policy(policy)
        return self._run_of(self._successful(stage), stage, name, policy)

    def _run_of(
        self, records: list[RetrievalRecord], stage: str | None, name: str, policy: Policy
    ) -> Run:
        """:meth:`run` of the successful records of ``stage`` already read."""
        if stage is None and policy == "latest":
            self._warn_stages(records)
        if policy == "latest":
            ranked = {r.query_id: list(r.doc_ids) for r in records}
        else:  # in the order the searches were started (an agent's parallel calls end in
            # any order; they start in the order it issued them)
            seen: dict[str, dict[str, None]] = {}
            for record in sorted(records, key=_start_order):
                seen.setdefault(record.query_id, {}).update(dict.fromkeys(record.doc_ids))
            ranked = {query_id: list(docs) for query_id, docs in seen.items()}
        return Run.from_lists(ranked, name=name)

    def latencies(self, stage: str | None = None) -> dict[str, float]:
        """Per query, the seconds of its latest successful retrieval among those
        :meth:`run` draws from (of ``stage``, else the top-level ones), where timed."""
        return _latencies(self._successful(stage))

    def calls(self, stage: str | None = None) -> dict[str, int]:
        """Per query, how many successful retrievals :meth:`run` draws from (the same
        records: of ``stage``, else the top-level ones)."""
        counted: dict[str, int] = {}
        for record in self._successful(stage):
            counted[record.query_id] = counted.get(record.query_id, 0) + 1
        return counted

    def _successful(self, stage: str | None) -> list[RetrievalRecord]:
        """The successful retrievals of ``stage`` (refused with the stages that exist when
        none was recorded), else the top-level ones, in the order they ended."""
        chosen = self.records(stage)
        if stage == "context" and not chosen:
            return self._last_stage()
        if stage is not None and not chosen:
            raise InputFormatError(
                f"No retrieval was recorded for the stage {stage!r}. The stages recorded: "
                f"{', '.join(self.stage_names()) or 'none'} (a retriever's name, a tag, or "
                f"a LangGraph node's class or node name)."
            )
        records = [r for r in chosen if not r.failed]
        if stage is None:
            records = [r for r in _top_level(chosen, records) if r.kind == "retrieve"]
        return records

    def _last_stage(self) -> list[RetrievalRecord]:
        """The final context where no synthesizer was seen (a LangChain chain, a trace): the
        records of the last stage each query went through (a rerank, where the retrieval was
        reranked, else the retrieval), so "latest" gives the list the chain passed on."""
        every = self.records()
        top = _top_level(every, [r for r in every if not r.failed])
        last: dict[str, str] = {}
        for record in top:  # in the order they ended: the last kind seen per query wins
            last[record.query_id] = record.kind
        if not top:
            raise InputFormatError(
                "No retrieval was recorded, so there is no final context: the stage "
                "'context' is what a response synthesizer was given, else the last stage of "
                "each query (a rerank, else the retrieval)."
            )
        return [r for r in top if r.kind == last[r.query_id]]

    def stage_names(self) -> list[str]:
        """Every name a stage can be selected by: retrievers' names and tags, in order."""
        names: dict[str, None] = {}
        for record in self.records():
            for name in (record.retriever, *record.tags):
                if name:
                    names[name] = None
        return list(names)

    def _warn_stages(self, records: list[RetrievalRecord]) -> None:
        stages: dict[str, set[str]] = {}
        siblings: dict[tuple[str, str, str], int] = {}
        for record in records:
            stages.setdefault(record.query_id, set()).add(record.retriever or "?")
            if record.parent_id is not None:  # two retrievals inside one call of a pipeline
                key = (record.query_id, record.retriever or "?", record.parent_id)
                siblings[key] = siblings.get(key, 0) + 1
        shared = {q: s for q, s in stages.items() if len(s) > 1}
        if shared:
            query_id, names = next(iter(shared.items()))
            warn(
                f"{len(shared)} queries were retrieved by several retrievers (query "
                f"{query_id!r}: {', '.join(sorted(names))}); the run keeps each query's latest "
                f"retrieval. Pass stage=<retriever name or tag> to score one of them.",
                StageWarning,
            )
        # searched again for one question() (a query merely asked twice is not warned of)
        times = Counter((r.query_id, r.retriever or "?") for r in records if r.in_question)
        again = [(q, name, n) for (q, name), n in times.items() if n > 1]
        twice = [key for key, n in siblings.items() if n > 1]
        if twice:
            query_id, name, _ = twice[0]
            warn(
                f"{len(twice)} queries were retrieved more than once by retrievers named "
                f"{name!r} within one call of the pipeline (query {query_id!r}): two retrievers "
                f"of one class, or one called twice (an agent searching again); the run keeps "
                f'the latest. policy="union" joins an agent\'s searches; naming each '
                f"retriever (run_name, or a graph node) scores them as separate stages.",
                StageWarning,
            )
        elif again:
            query_id, name, n = again[0]
            warn(
                f"{len(again)} queries were retrieved more than once by {name!r} (query "
                f"{query_id!r}: {n} times); the run keeps each query's latest retrieval. "
                f'policy="union" joins them (an agent that searches several times for '
                f"one question).",
                StageWarning,
            )

    def evaluate(
        self,
        qrels: Qrels | Mapping[str, Mapping[str, int]],
        metrics: str | Sequence[str],
        *,
        stage: str | None = None,
        missing: MissingPolicy = "skip",
        policy: Policy = "latest",
        **options: Any,
    ) -> EvaluationResult:
        """Score the recorded run (:meth:`run` with ``stage`` and ``policy``) against
        ``qrels``; ``result.settings["policy"]`` says which policy made the run.

        ``missing="skip"`` by default: a judged query the pipeline was never asked says
        nothing about its retrieval, so it is left out and counted
        (``counts.missing_from_run``), not scored 0. Retrievals that raised are listed in
        ``result.retrieval_errors`` and their queries score as empty rankings.
        """
        policy = _check_policy(policy)
        successful = self._successful(stage)
        run = self._run_of(successful, stage, "recorded", policy)
        chosen = self.records(stage)
        reranked = stage is not None and any(r.kind != "retrieve" for r in chosen)
        if reranked and "pool" not in options and self._successful(None):
            # PROC@k of a reranker or of the final context: the candidates are the retrieval's
            options = {**options, "pool": self.run(policy=policy)}
        failed = {
            r.query_id: r.error for r in chosen if r.error is not None and r.query_id not in run
        }
        if failed:
            lists = {q: list(run[q]) for q in run}
            lists.update({key: [] for key in failed})
            run = Run.from_lists(lists, name=run.name)
        result = evaluate_run(qrels, run, metrics, missing=missing, **options)
        errors = {q: e for q, e in failed.items() if e is not None}
        return result.replace(
            settings={**result.settings, "policy": policy},
            retrieval_errors=errors,
            latencies={q: s for q, s in _latencies(successful).items() if q in run},
            counts=replace(result.counts, failed_retrievals=len(errors)),
        )

    def clear(self) -> None:
        with self._lock:
            self._records.clear()
            self._open.clear()
            self._live.clear()


def _top_level(
    every: list[RetrievalRecord], records: list[RetrievalRecord]
) -> list[RetrievalRecord]:
    """``records`` but the retrievals nested in another retrieval of ``every`` (a fusion
    retriever's sub-retrievers); a retrieval inside a rerank (a compression retriever's base
    retriever) is top-level."""
    spans = {r.span_id for r in every if r.kind == "retrieve"}
    return [
        r
        for r in records
        if r.kind != "retrieve" or r.parent_id is None or r.parent_id not in spans
    ]


def _latencies(records: list[RetrievalRecord]) -> dict[str, float]:
    """Per query, the seconds of its latest timed record."""
    return {r.query_id: r.seconds for r in records if r.seconds is not None}


def _start_order(record: RetrievalRecord) -> tuple[bool, float]:
    """Records by start (those whose start was not seen after, in their own order)."""
    return (record.started is None, record.started or 0.0)


class RecordedRetrievals:
    """What every recorder shows of its :class:`RetrievalLog` (``self._log``), written once
    for the LlamaIndex recorder and the LangChain handler: the records, the run of a stage
    under a policy, the searches per query, and the failures inside the recorder."""

    if TYPE_CHECKING:
        _log: RetrievalLog

    _run_name = "recorded"  # the name of the run of the top-level retrievals

    @property
    def records(self) -> list[RetrievalRecord]:
        """Every retrieval kept (bounded by ``max_records``), failed ones included."""
        return self._log.records()

    def records_of(self, stage: str) -> list[RetrievalRecord]:
        """The retrievals of one stage: a retriever's name (or class) or a tag."""
        return self._log.records(stage)

    @property
    def run(self) -> Run:
        """The latest successful top-level retrieval of each query, as a ranked-list run."""
        return self._log.run(name=self._run_name)

    def run_of(self, stage: str | None = None, *, policy: Policy = "latest") -> Run:
        """The successful retrievals of one stage (None: the top-level ones) as a run: each
        query's latest, or with ``policy="union"`` all of them joined, docs in the order
        first seen (an agent that searched several times for one question)."""
        return self._log.run(stage, name=stage or self._run_name, policy=policy)

    def calls(self, stage: str | None = None) -> dict[str, int]:
        """Per query, how many successful retrievals :meth:`run_of` draws from."""
        return self._log.calls(stage)

    def stage_names(self) -> list[str]:
        """Every name a stage can be selected by: retrievers' names (or classes), tags, and
        a trace's span names."""
        return self._log.stage_names()

    def latencies(self, stage: str | None = None) -> dict[str, float]:
        """Per query, the seconds its latest successful retrieval (of ``stage``, else the
        top-level ones) took (from a trace: its span's start and end)."""
        return self._log.latencies(stage)

    @property
    def failures(self) -> int:
        """Errors inside the recorder itself (kept, not raised, by default)."""
        return self._log.n_failures

    @property
    def last_error(self) -> HandlerFailure | None:
        """The last error inside the recorder (where, the error, the query)."""
        return self._log.last_error
