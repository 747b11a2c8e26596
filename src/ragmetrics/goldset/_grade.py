"""The grading engine: asks the judge for every (pair, sample) not in the cache, with a
concurrency cap, request and token rate limits, retries that honour a rate limit's
retry-after, strict parsing with corrective re-asks, and a budget that stops cleanly."""

from __future__ import annotations

import asyncio
import collections
import os
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ragmetrics._util.progress import progress_bar
from ragmetrics.errors import InvalidParameterError, RagMetricsError
from ragmetrics.goldset._cache import Answer, Cache, cache_key
from ragmetrics.goldset._judge import Conversation, Judge, Reply
from ragmetrics.goldset._prompt import PROMPT_VERSION, TEMPLATE_HASH, parse_grade, prompt, reask

T = TypeVar("T")

MAX_REASKS = 2


def run_sync(make: Callable[[], Awaitable[T]]) -> T:
    """``await make()`` from synchronous code: on a new event loop, or, inside a running one
    (a notebook), on a loop of its own in a thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())  # type: ignore[arg-type]
    box: dict[str, Any] = {}

    def in_thread() -> None:
        try:
            box["result"] = asyncio.run(make())  # type: ignore[arg-type]
        except BaseException as error:
            box["error"] = error

    thread = threading.Thread(target=in_thread)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    result: T = box["result"]
    return result


@dataclass(frozen=True)
class Asking:
    """What one kind of question to the model is: its first message for a (query, passage)
    pair, the strict reader of its reply (None: not an answer, re-ask), the corrective
    re-ask (None: take the reply as it is), and the version and template hash that key the
    cache (another prompt never reads this one's answers)."""

    prompt: Callable[[str, str], str]
    parse: Callable[[object], int | None]
    reask: Callable[[str], str] | None
    version: str
    template_hash: str
    text: bool = False  # answered in free text: a judge's grade tool or schema is not used


GRADING = Asking(prompt, parse_grade, reask, PROMPT_VERSION, TEMPLATE_HASH)


@dataclass(frozen=True)
class Limits:
    """How hard the judge may be pushed.

    Attributes:
        concurrency: calls in flight at once.
        requests_per_minute, tokens_per_minute: rolling one-minute caps (None: none);
            tokens are the prompt's, counted as the usage counts them.
        max_retries: retries of a call that raised, before the pair is recorded as failed.
        backoff: the first wait in seconds, doubled at each retry, unless the error says
            how long to wait (a rate limit's ``retry_after``).
        max_calls, max_tokens: the budget; grading stops cleanly when the next call would
            pass it, leaving the rest for a later run (the cache keeps what was paid for).
    """

    concurrency: int = 4
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    max_retries: int = 5
    backoff: float = 1.0
    max_calls: int | None = None
    max_tokens: int | None = None


@dataclass
class Task:
    """One (pair, sample) to grade."""

    index: int
    sample: int
    query: str
    passage: str
    key: str
    parts: dict[str, Any]


@dataclass
class Outcome:
    """What became of one task: an answer (graded or not), an error, or not asked."""

    answer: Answer | None = None
    error: str | None = None
    cached: bool = False
    skipped: bool = False  # over budget: left for a later run


@dataclass
class Usage:
    """Calls made and tokens spent by one grading.

    Attributes:
        calls: requests sent to the judge (re-asks and retries included).
        cache_hits: (pair, sample) answers read from the cache, no call made.
        retries: calls that raised and were tried again.
        reasks: corrective questions after an answer that was not a grade.
        prompt_tokens, completion_tokens: as the framework reported them, where it did.
        estimated_tokens: prompt tokens estimated at 4 characters a token, for calls whose
            framework reported none.
    """

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    reasks: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated_tokens: int = 0

    def to_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class _Window:
    """Rolling one-minute counts of requests and tokens."""

    events: collections.deque[tuple[float, int]] = field(default_factory=collections.deque)

    def wait_time(self, now: float, tokens: int, limits: Limits) -> float:
        while self.events and now - self.events[0][0] >= 60.0:
            self.events.popleft()
        waits = [0.0]
        if limits.requests_per_minute and len(self.events) >= limits.requests_per_minute:
            waits.append(60.0 - (now - self.events[0][0]))
        if limits.tokens_per_minute:
            used = sum(t for _, t in self.events)
            if self.events and used + tokens > limits.tokens_per_minute:
                waits.append(60.0 - (now - self.events[0][0]))
        return max(waits)


def make_tasks(
    pairs: list[tuple[str, str]],
    texts: Callable[[str, str], tuple[str, str]],
    judge: Judge,
    samples: int,
    asking: Asking = GRADING,
) -> list[Task]:
    tasks = []
    params = dict(judge.params)
    for index, (query_id, doc_id) in enumerate(pairs):
        query, passage = texts(query_id, doc_id)
        for sample in range(samples):
            key, parts = cache_key(
                judge.model_id, params, asking.version, asking.template_hash, query, passage, sample
            )
            tasks.append(Task(index, sample, query, passage, key, parts))
    return tasks


def estimate_tokens(text: str) -> int:
    """About four characters a token (a rough rule for English; say so where it is used)."""
    return max(1, len(text) // 4)


CLAIM_POLL_SECONDS = 0.2  # how often a key another process claimed is looked up


class Engine:
    """Runs the tasks against the judge (see the module docstring)."""

    def __init__(
        self, judge: Judge, cache: Cache, limits: Limits, progress: Any, asking: Asking = GRADING
    ) -> None:
        self.judge, self.cache, self.limits, self.progress = judge, cache, limits, progress
        self.asking = asking
        self.usage = Usage()
        self.window = _Window()
        self.spent_tokens = 0
        self.stopped = False
        self._lock = asyncio.Lock()

    async def run(self, tasks: list[Task]) -> list[Outcome]:
        outcomes = [Outcome() for _ in tasks]
        todo = []
        for number, task in enumerate(tasks):
            stored = self.cache.get(task.key)
            if stored is not None:
                outcomes[number] = Outcome(answer=stored, cached=True)
                self.usage.cache_hits += 1
                self.progress.update(1)
            else:
                todo.append(number)
        gate = asyncio.Semaphore(self.limits.concurrency)

        async def one(number: int) -> None:
            async with gate:
                outcomes[number] = await self._grade(tasks[number])
                self.progress.update(1)

        await asyncio.gather(*(one(number) for number in todo))
        return outcomes

    async def _grade(self, task: Task) -> Outcome:
        # another process grading into the same cache may have answered, or be answering
        while not self.cache.claim(task.key):
            stored = self.cache.get(task.key)
            if stored is not None:
                break
            await asyncio.sleep(CLAIM_POLL_SECONDS)
        stored = self.cache.get(task.key)
        if stored is not None:
            self.cache.release(task.key)
            self.usage.cache_hits += 1
            return Outcome(answer=stored, cached=True)
        try:
            return await self._ask(task)
        finally:
            self.cache.release(task.key)  # after put() nothing is left to release

    async def _ask(self, task: Task) -> Outcome:
        asking = self.asking
        conversation: Conversation = [("user", asking.prompt(task.query, task.passage))]
        prompt_tokens = completion_tokens = 0
        reported = True
        raw = ""
        for attempt in range(MAX_REASKS + 1):
            reply = await self._call(conversation)
            if isinstance(reply, Outcome):
                return reply  # failed or over budget
            if reply.prompt_tokens is None:
                reported = False
            prompt_tokens += reply.prompt_tokens or 0
            completion_tokens += reply.completion_tokens or 0
            raw = reply.text if isinstance(reply.text, str) else repr(reply.text)
            grade = asking.parse(reply.text)
            if grade is not None or asking.reask is None:
                break
            if attempt < MAX_REASKS:
                self.usage.reasks += 1
                conversation = [*conversation, ("assistant", raw), ("user", asking.reask(raw))]
        answer = Answer(
            grade=grade,
            answer=raw,
            prompt_tokens=prompt_tokens if reported else None,
            completion_tokens=completion_tokens if reported else None,
        )
        self.cache.put(task.key, task.parts, answer)
        return Outcome(answer=answer)

    async def _call(self, conversation: Conversation) -> Reply | Outcome:
        """One request, within the limits and the budget, retried on errors."""
        tokens = sum(estimate_tokens(text) for _, text in conversation)
        for attempt in range(self.limits.max_retries + 1):
            async with self._lock:
                if self._over_budget(tokens):
                    self.stopped = True
                    return Outcome(skipped=True)
                while (wait := self.window.wait_time(time.monotonic(), tokens, self.limits)) > 0:
                    await asyncio.sleep(wait)
                self.window.events.append((time.monotonic(), tokens))
                self.usage.calls += 1
                self.spent_tokens += tokens
            try:
                asked = self.judge.aask_text if self.asking.text else self.judge.aask
                reply = await asked(conversation)
            except RagMetricsError:
                raise  # a mistake in how the judge is made: retrying cannot mend it
            except Exception as error:
                if attempt == self.limits.max_retries:
                    return Outcome(error=f"{type(error).__name__}: {error}")
                self.usage.retries += 1
                await asyncio.sleep(_delay(error, attempt, self.limits.backoff))
                continue
            if reply.prompt_tokens is None:
                self.usage.estimated_tokens += tokens
            else:
                self.usage.prompt_tokens += reply.prompt_tokens
                self.usage.completion_tokens += reply.completion_tokens or 0
            return reply
        return Outcome(error="no attempt made")  # pragma: no cover - the loop returns

    def _over_budget(self, tokens: int) -> bool:
        limits = self.limits
        if self.stopped:
            return True
        if limits.max_calls is not None and self.usage.calls + 1 > limits.max_calls:
            return True
        return limits.max_tokens is not None and self.spent_tokens + tokens > limits.max_tokens


def _delay(error: BaseException, attempt: int, backoff: float) -> float:
    """How long to wait before retrying: the error's retry-after when it gives one (a rate
    limit), else ``backoff`` doubled per attempt."""
    after = retry_after(error)
    return after if after is not None else backoff * (2**attempt)


def retry_after(error: BaseException) -> float | None:
    """The wait a rate-limit error asks for: its ``retry_after`` attribute, or the
    ``Retry-After`` header of its HTTP response (seconds), else None."""
    value = getattr(error, "retry_after", None)
    if value is None:
        response = getattr(error, "response", None)
        headers = getattr(response, "headers", None)
        if headers is not None:
            try:
                value = headers.get("retry-after") or headers.get("Retry-After")
            except AttributeError:
                value = None
    try:
        return None if value is None else max(0.0, float(value))
    except (TypeError, ValueError):
        return None


def check_run_options(limits: Any, cache: Any, progress: Any) -> None:
    """The keywords every question to the model takes, refused before any call."""
    if limits is not None and not isinstance(limits, Limits):
        raise InvalidParameterError(
            f"limits must be a goldset.Limits; got {type(limits).__name__}."
        )
    if cache is not None and (not isinstance(cache, str | os.PathLike) or cache == ""):
        raise InvalidParameterError(f"cache is a file path or None; got {cache!r}.")
    if progress is not None and not isinstance(progress, bool):
        raise InvalidParameterError(f"progress must be True, False or None; got {progress!r}.")


def ask_pairs(
    keys: list[tuple[str, str]],
    texts: Callable[[str, str], tuple[str, str]],
    judge: Judge,
    asking: Asking,
    *,
    cache: Any,
    limits: Limits | None,
    progress: bool | None,
    what: str,
) -> tuple[list[Outcome], Usage]:
    """Ask ``judge`` once for each key's (query, passage) texts, through the engine (cache,
    limits, budget, retries), with a progress bar from 50 keys on; the outcomes in order."""
    check_run_options(limits, cache, progress)
    tasks = make_tasks(keys, texts, judge, 1, asking)
    show = progress if progress is not None else len(keys) >= 50
    return run_sync(lambda: run_tasks(tasks, judge, asking, cache, limits, show, what))


async def run_tasks(
    tasks: list[Task],
    judge: Judge,
    asking: Asking,
    cache: Any,
    limits: Limits | None,
    show: bool,
    what: str,
) -> tuple[list[Outcome], Usage]:
    """The tasks through the engine, with the cache opened and closed around them and a
    progress bar (shown when ``show``) named ``what``; the outcomes in order, and the usage."""
    store = Cache(cache)
    bar = progress_bar(total=len(tasks), desc=what, unit=" answers", disable=not show)
    try:
        engine = Engine(judge, store, limits or Limits(), bar, asking)
        outcomes = await engine.run(tasks)
    finally:
        bar.close()
        store.close()
    return outcomes, engine.usage
