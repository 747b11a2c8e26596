"""Evaluate runs larger than memory, or spread over many machines, by batches of whole queries.

Every metric is a per-query value followed by a reduction over queries, so a batch of whole
queries can be scored on its own: :func:`partial` scores one batch into a
:class:`PartialResult` (per metric: queries defined, NA, and the exact sum of the values; the
counts; per-query values when asked), partial results :func:`merge` by addition, and
:meth:`PartialResult.result` turns the merged state into the :class:`EvaluationResult` that
:func:`~ragmetrics.evaluate` gives on the whole run. The sums are exact (``_exact``), so the
numbers are the same bit for bit however the queries are split into batches.

:func:`evaluate_stream` runs this over a TREC file, a Parquet file or folder, Arrow record
batches, or an iterator of ``Run`` batches, in memory bounded by the batch size (plus the
qrels, and the per-query values when kept). ``ragmetrics.ray`` runs it on Ray Data.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import numpy as np

from ragmetrics._util.progress import progress_bar
from ragmetrics._util.warn import warn
from ragmetrics.data._batches import batches as run_batches
from ragmetrics.data._batches import input_size, regrouped
from ragmetrics.data._files import find_format, formats
from ragmetrics.data._qrels import Qrels
from ragmetrics.data._run import Run, judged_docs_only
from ragmetrics.data._store import store_of
from ragmetrics.engine._evaluation import score_queries
from ragmetrics.engine._id_warnings import ranked_example, warn_if_ids_never_meet
from ragmetrics.engine._result import EvaluationResult
from ragmetrics.engine._selection import check_missing, count, judged_rows, select_batch
from ragmetrics.engine._settings import (
    Settings,
    as_qrels,
    check_settings,
    checked_qrels,
    metric_list,
    resolve_metrics,
)
from ragmetrics.errors import (
    InputFormatError,
    InvalidParameterError,
    OneProcessWarning,
    RagMetricsError,
    UngroupedInputError,
)
from ragmetrics.formats import _stream_io
from ragmetrics.formats._stream_io import Columns, not_grouped
from ragmetrics.metrics import Metric
from ragmetrics.metrics.registry import MetricSpec, Tally, aliases_of, register, registered

__all__ = [
    "Job",
    "Merger",
    "PartialResult",
    "UngroupedInputError",
    "evaluate_stream",
    "merge",
    "partial",
]

DEFAULT_BATCH_ROWS = 500_000


@dataclass
class PartialResult:
    """What batches of whole queries contribute to an evaluation; merge them with
    :func:`merge` (or ``+``), then call :meth:`result`.

    Attributes:
        metrics: the metric names as given; keywords: the keywords of :func:`evaluate`.
        tallies: per metric, queries defined, NA, and the exact sum of the values.
        rows: the qrels row of each judged query scored (in scoring order).
        query_ids: their ids (kept with the values; empty when values are not kept).
        values: their per-query values (rows x metrics), or None when not kept.
        unjudged: the run's queries that the qrels do not judge (left out, reported).
        in_run, empty_rankings, repeated_ids_dropped: additive counts, as in :class:`Counts`.
        n_located: retrieved docs that are judged; n_ranked: scored queries with a
            non-empty ranking (both for the warning of ids that never meet).
        example: a scored query and the start of its ranking, for that warning.
    """

    metrics: tuple[str, ...]
    keywords: dict[str, Any]
    tallies: tuple[Tally, ...]
    rows: np.ndarray
    values: np.ndarray | None
    query_ids: tuple[str, ...] = ()
    unjudged: tuple[str, ...] = ()
    in_run: int = 0
    empty_rankings: int = 0
    repeated_ids_dropped: int = 0
    n_located: int = 0
    n_ranked: int = 0
    example: tuple[str, tuple[str, ...]] | None = field(default=None, repr=False)
    qrels_key: str = field(default="", repr=False)  # which qrels ``rows`` number

    def __add__(self, other: PartialResult) -> PartialResult:
        return merge([self, other])

    def result(
        self, qrels: Qrels | Mapping[str, Mapping[str, int]], *, name: str | None = None
    ) -> EvaluationResult:
        """The evaluation of everything merged, against the same ``qrels``: judged queries
        no batch had are missing (scored 0, left out or an error, by ``missing``)."""
        checked = as_qrels(qrels)
        if self.qrels_key and self.qrels_key != qrels_key(checked):
            raise InvalidParameterError(
                "These partial results were scored against other qrels than the ones given "
                "here: their queries are numbered by the qrels they were scored with, so "
                "they would land on the wrong queries. Pass the same qrels to partial() and "
                "to result()."
            )
        settings = check_settings(**self.keywords)
        parsed = resolve_metrics(list(self.metrics), settings)
        return _finish(self, checked, parsed, settings, name)


_KEYS: dict[int, tuple[object, str]] = {}


def qrels_key(qrels: Qrels) -> str:
    """A digest of the qrels' query ids in their order (the numbering partial results'
    rows refer to), the same in every process; kept for the last few qrels."""
    store = store_of(qrels)
    known = _KEYS.get(id(store))
    if known is not None and known[0] is store:
        return known[1]
    digest = hashlib.blake2b(digest_size=16)
    for query_id in store.query_ids:
        digest.update(query_id.encode("utf-8", "surrogatepass") + b"\0")
    key = f"{len(store.query_ids)}:{digest.hexdigest()}"
    if len(_KEYS) >= 8:
        _KEYS.clear()
    _KEYS[id(store)] = (store, key)
    return key


def partial(
    qrels: Qrels | Mapping[str, Mapping[str, int]],
    run: Run | Mapping[str, Any],
    metrics: str | Sequence[str],
    *,
    per_query: bool = False,
    **keywords: Any,
) -> PartialResult:
    """Score one batch of whole queries (every result of each query it has).

    ``keywords`` are those of :func:`~ragmetrics.evaluate`. Judged queries the batch lacks are
    not counted as missing here: that is decided when the merged result is made.
    """
    settings = check_settings(**keywords)
    names = metric_list(metrics)
    parsed = resolve_metrics(names, settings)
    checked = checked_qrels(qrels, parsed, settings)
    from ragmetrics.engine._settings import as_run

    return _score_batch(checked, as_run(run), parsed, settings, tuple(names), keywords, per_query)


def merge(partials: Iterable[PartialResult]) -> PartialResult:
    """One partial result of many (their queries must not overlap); exact, in any order."""
    merged = Merger()
    for item in partials:
        merged.add(item)
    return merged.partial()


def evaluate_stream(
    qrels: Qrels | Mapping[str, Mapping[str, int]],
    source: str | os.PathLike[str] | Iterable[Any],
    metrics: str | Sequence[str],
    *,
    per_query: bool = False,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    name: str | None = None,
    query_col: str | None = None,
    doc_col: str = "doc_id",
    score_col: str | None = None,
    workers: int = 1,
    **keywords: Any,
) -> EvaluationResult:
    """Evaluate a run read in batches of whole queries, in bounded memory.

    Args:
        qrels: the judgments, held in memory.
        source: a TREC run file (``.gz`` too, ``-`` for standard input), a Parquet file or a
            folder of them (``.parquet`` or a folder; columns as :meth:`Run.from_parquet`), an
            object with the Arrow C stream interface (a Polars DataFrame or LazyFrame's
            ``collect()``, a DuckDB result, a pyarrow ``RecordBatchReader``: read batch by
            batch), an iterable of pyarrow tables or record batches, or an iterable of
            ``Run`` batches (each holding whole queries). Rows grouped by query (sorted or
            not) are read in one pass; a file whose queries are scattered is grouped as it
            is read: in memory up to ``batch_rows`` rows, else through a temporary file,
            read back one part of the queries at a time (``RegroupedStreamWarning`` says
            where; about the run's size on disk while it is read).
        metrics: metric names, as for :func:`~ragmetrics.evaluate`.
        per_query: keep per-query values (needed by ``compare``; memory grows with queries).
        batch_rows: rows read before a batch is scored (a query is never split).
        name: the run's name (default: the file's stem).
        query_col, doc_col, score_col: column names of Parquet or Arrow input.
        workers: processes that share the work (each core can take one). A plain TREC file
            is cut into byte ranges at query boundaries, each read by one worker; a gzip
            file likewise, each worker decompressing up to its share; Parquet is shared
            out by row groups (of one file or a folder). The partial results merge
            exactly: the same bits as with one worker. Standard input is read by one
            process (``OneProcessWarning``).
        **keywords: those of :func:`~ragmetrics.evaluate` (``missing``, ``relevance_threshold``,
            ``grade_map``, ``score_precision``, ``progress``, ...).

    Returns:
        The :class:`EvaluationResult` that :func:`~ragmetrics.evaluate` gives on the whole run:
        equal aggregate and counts (and per-query values with ``per_query=True``, in the
        qrels' order); without ``per_query`` it has no per-query rows.

    Raises:
        UngroupedInputError: a query's rows are not together in input that cannot be read
            twice (standard input, an Arrow stream, an iterable), once a batch holding the
            query was scored (the query is named). A file is grouped instead (see ``source``).
        InputFormatError: a bad line, row or value (file and line named, as from_trec).
    """
    if not isinstance(batch_rows, int) or isinstance(batch_rows, bool) or batch_rows < 1:
        raise InvalidParameterError(f"batch_rows must be a positive integer; got {batch_rows!r}.")
    names = metric_list(metrics)
    columns = Columns(query_col, doc_col, score_col)
    job = Job.of(  # names, keywords and qrels checked here, before any reading
        qrels, names, keywords, per_query=per_query, batch_rows=batch_rows, columns=columns,
        name=name,
    )  # fmt: skip
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise InvalidParameterError(f"workers must be a positive integer; got {workers!r}.")
    if workers > 1:
        from ragmetrics.engine._parallel import evaluate_in_processes, why_one_process

        reason = why_one_process(source)
        if reason is not None:
            warn(f"{source}: read by one process, not {workers}: {reason}.", OneProcessWarning)
            workers = 1
    settings, checked, parsed = job.settings, job.qrels, job.resolved()

    def scored(label: str, runs: Iterable[Run]) -> Merger:
        merged = job.merger(label)
        show = settings.progress if settings.progress is not None else True
        with progress_bar(
            total=None, desc="evaluating", unit=" queries", disable=not show, leave=False
        ) as bar:
            for run in runs:
                merged.add(
                    _score_batch(checked, run, parsed, settings, tuple(names), keywords, per_query)
                )
                bar.update(len(run))
        return merged

    try:
        if workers > 1:
            label, merged = evaluate_in_processes(job, source, workers)
        else:
            label, runs = _batches(source, batch_rows, columns, name)
            merged = scored(label, runs)
    except UngroupedInputError:
        again = _regrouped(source, batch_rows, columns, name)
        if again is None:
            raise  # read in one pass (standard input, an Arrow stream): cannot be read again
        label, regrouped_runs = again
        if workers > 1:
            warn(
                f"{label}: read again by one process, not {workers}: a query's rows lie in "
                f"more than one worker's share (the run is not grouped by query).",
                OneProcessWarning,
            )
        merged = scored(label, regrouped_runs)
    if merged.first is None or not merged.in_run:
        raise RagMetricsError(
            f"{label}: the run is empty: it has no query. Check that the file is the one you meant."
        )
    return _finish(merged.partial(), checked, parsed, settings, name or _stem(source))


# --- the pieces ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """What every worker of a shared evaluation needs (sent to each once). A worker that was
    spawned, not forked, knows only the library's own metrics: the metrics the caller
    registered go with the job (``custom``: each spec with its aliases) and are registered
    there before the names are resolved."""

    qrels: Qrels
    metrics: tuple[str, ...]
    keywords: dict[str, Any]
    per_query: bool
    batch_rows: int
    columns: Columns
    name: str | None
    settings: Settings
    custom: tuple[tuple[MetricSpec, tuple[str, ...]], ...] = ()

    @classmethod
    def of(
        cls,
        qrels: Qrels | Mapping[str, Mapping[str, int]],
        metrics: Sequence[str],
        keywords: Mapping[str, Any],
        *,
        per_query: bool,
        batch_rows: int,
        columns: Columns,
        name: str | None,
    ) -> Job:
        """A job with its metrics resolved and its qrels checked here, in the caller."""
        settings = check_settings(**keywords)
        parsed = resolve_metrics(list(metrics), settings)
        checked = checked_qrels(qrels, parsed, settings)
        specs = {m.spec.name: m.spec for m in parsed if not _own(m.spec)}
        custom = tuple((spec, tuple(aliases_of(name))) for name, spec in specs.items())
        return cls(
            checked,
            tuple(metrics),
            dict(keywords),
            per_query,
            batch_rows,
            columns,
            name,
            settings,
            custom,
        )

    def resolved(self) -> list[Metric]:
        """The metrics, registering first those of the caller this process lacks."""
        known = registered()
        for spec, aliases in self.custom:
            if spec.name not in known:
                register(spec, *[a for a in aliases if a not in known])
        return resolve_metrics(list(self.metrics), self.settings)

    def score(self, runs: Iterable[Run], source: str) -> PartialResult | None:
        """The merged partial result of ``runs`` (batches of whole queries), or None when
        there was no batch."""
        parsed = self.resolved()
        merged = Merger(source=source, names=store_of(self.qrels).query_ids)
        for run in runs:
            merged.add(
                _score_batch(
                    self.qrels,
                    run,
                    parsed,
                    self.settings,
                    self.metrics,
                    self.keywords,
                    self.per_query,
                )
            )
        return merged.partial() if merged.first is not None else None

    def merger(self, source: str) -> Merger:
        return Merger(source=source, names=store_of(self.qrels).query_ids)


def _own(spec: MetricSpec) -> bool:
    """A metric of the library (registered when ragmetrics.metrics is imported)."""
    return getattr(spec.kernel, "__module__", "").startswith("ragmetrics.")


def _score_batch(
    qrels: Qrels,
    run: Run,
    parsed: list[Metric],
    settings: Settings,
    names: tuple[str, ...],
    keywords: dict[str, Any],
    per_query: bool,
) -> PartialResult:
    if settings.judged_only:
        run = judged_docs_only(run, qrels)
    batch = select_batch(qrels, run)
    query_ids = batch.query_ids
    result, values = score_queries(qrels, run, query_ids, batch.run_rows, parsed, settings)
    n_ranked, example = ranked_example(result, run)  # for the warning of ids that never meet
    return PartialResult(
        metrics=names,
        keywords=dict(keywords),
        tallies=tuple(m.spec.aggregate.tally(values[:, i]) for i, m in enumerate(parsed)),
        rows=batch.qrels_rows,
        values=values if per_query else None,
        query_ids=tuple(query_ids),
        unjudged=batch.unjudged_ids,
        in_run=len(run),
        empty_rankings=int(np.count_nonzero(result.in_run & (result.lengths == 0))),
        repeated_ids_dropped=sum(run.duplicates.values()),
        n_located=result.n_located,
        n_ranked=n_ranked,
        example=example,
        qrels_key=qrels_key(qrels),
    )


class Merger:
    """Adds partial results, refusing a query scored twice (it names the query)."""

    def __init__(
        self, source: str = "the merged batches", names: Sequence[str] | None = None
    ) -> None:
        self.source = source
        self.names = names  # the qrels' query ids, to name a query scored twice
        self.first: PartialResult | None = None
        self.tallies: list[Tally] = []
        self.rows: list[np.ndarray] = []
        self.values: list[np.ndarray] = []
        self.query_ids: list[str] = []
        self.keep_values = True
        self.seen = np.zeros(0, dtype=bool)  # the qrels' rows scored so far
        self.n_seen = 0
        self.unjudged: list[str] = []
        self.unjudged_seen: set[str] = set()
        self.in_run = self.empty_rankings = self.repeated = self.located = self.ranked = 0
        self.example: tuple[str, tuple[str, ...]] | None = None

    def add(self, item: PartialResult) -> None:
        if self.first is None:
            self.first = item
            self.tallies = [Tally()] * len(item.tallies)
        elif item.metrics != self.first.metrics or item.keywords != self.first.keywords:
            raise InvalidParameterError(
                "Partial results merge only when made with the same metrics and keywords; got "
                f"{list(self.first.metrics)} and {list(item.metrics)}."
            )
        elif item.qrels_key != self.first.qrels_key:
            raise InvalidParameterError(
                "Partial results merge only when scored against the same qrels: each numbers "
                "its queries by the qrels it was scored with, so parts scored against "
                "different qrels (slices of one, say) would land on the wrong queries. Score "
                "every part against the full qrels."
            )
        self._check_new(item)
        self.tallies = [a + b for a, b in zip(self.tallies, item.tallies, strict=True)]
        self.rows.append(item.rows)
        if item.values is None:
            self.keep_values = False
        elif self.keep_values:
            self.values.append(item.values)
            self.query_ids.extend(item.query_ids)
        self.unjudged.extend(item.unjudged)
        self.in_run += item.in_run
        self.empty_rankings += item.empty_rankings
        self.repeated += item.repeated_ids_dropped
        self.located += item.n_located
        self.ranked += item.n_ranked
        self.example = self.example or item.example

    def _check_new(self, item: PartialResult) -> None:
        if len(item.rows):
            top = int(item.rows.max()) + 1
            if top > len(self.seen):
                self.seen = np.concatenate(
                    [self.seen, np.zeros(max(top, 2 * len(self.seen)) - len(self.seen), bool)]
                )
            again = self.seen[item.rows]
            if again.any():
                raise not_grouped(self._name(item, int(np.flatnonzero(again)[0])), self.source)
            self.seen[item.rows] = True
            n_seen = int(np.count_nonzero(self.seen))
            if n_seen - self.n_seen != len(item.rows):  # a query twice within this partial
                raise not_grouped(self._name(item, _first_repeat(item.rows)), self.source)
            self.n_seen = n_seen
        for query_id in item.unjudged:
            if query_id in self.unjudged_seen:
                raise not_grouped(query_id, self.source)
            self.unjudged_seen.add(query_id)

    def _name(self, item: PartialResult, position: int) -> str:
        if self.names is not None:
            return self.names[int(item.rows[position])]
        if item.query_ids:
            return item.query_ids[position]
        return f"at row {int(item.rows[position])} of the qrels"

    def partial(self) -> PartialResult:
        if self.first is None:
            raise RagMetricsError("There is nothing to merge: no partial result was given.")
        width = len(self.first.metrics)
        rows = np.concatenate(self.rows) if self.rows else np.zeros(0, np.int64)
        values = None
        if self.keep_values:
            values = np.concatenate(self.values) if self.values else np.zeros((0, width))
        return PartialResult(
            metrics=self.first.metrics,
            keywords=self.first.keywords,
            tallies=tuple(self.tallies),
            rows=rows,
            values=values,
            query_ids=tuple(self.query_ids) if self.keep_values else (),
            unjudged=tuple(self.unjudged),
            in_run=self.in_run,
            empty_rankings=self.empty_rankings,
            repeated_ids_dropped=self.repeated,
            n_located=self.located,
            n_ranked=self.ranked,
            example=self.example,
            qrels_key=self.first.qrels_key,
        )


class _RowIds(Sequence[str]):
    """The query ids of some rows of the qrels, named only when read (a warning's sample)."""

    def __init__(self, names: Sequence[str], rows: np.ndarray) -> None:
        self.names, self.rows = names, rows

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...

    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        if isinstance(index, slice):
            return [self.names[i] for i in self.rows[index].tolist()]
        return self.names[int(self.rows[index])]


def _first_repeat(rows: np.ndarray) -> int:
    seen: set[int] = set()
    for position, row in enumerate(rows.tolist()):
        if row in seen:
            return position
        seen.add(row)
    return 0


def _finish(
    merged: PartialResult, qrels: Qrels, parsed: list[Metric], settings: Settings, name: str | None
) -> EvaluationResult:
    """The evaluation of the merged state: missing queries decided, per-query rows in the
    qrels' order (as :func:`evaluate` has them), one warning when the ids never meet."""
    judgments = store_of(qrels)
    judged = judged_rows(qrels)
    seen = np.zeros(len(judgments), dtype=bool)
    seen[merged.rows] = True
    missing_rows = judged[~seen[judged]]
    missing_ids = tuple(judgments.query_ids[i] for i in missing_rows.tolist())
    check_missing(missing_ids, settings.missing)
    tallies = list(merged.tallies)
    rows, values = merged.rows, merged.values
    counted = len(rows)
    if settings.missing == "zero" and missing_ids:
        # judged as absent from a run (row -1), as evaluate() judges a missing query
        empty = Run.from_lists({"(none)": []})
        _, missing_values = score_queries(
            qrels, empty, list(missing_ids), np.full(len(missing_ids), -1), parsed, settings
        )
        tallies = [
            t + m.spec.aggregate.tally(missing_values[:, i])
            for i, (t, m) in enumerate(zip(tallies, parsed, strict=True))
        ]
        counted += len(missing_ids)
        if values is not None:
            rows = np.concatenate([rows, missing_rows])
            values = np.concatenate([values, missing_values])
    query_ids: tuple[str, ...] = ()
    if values is None:
        values = np.zeros((0, len(parsed)))
    else:
        order = np.argsort(rows, kind="stable")
        values = values[order]
        query_ids = tuple(judgments.query_ids[i] for i in rows[order].tolist())
    counts = count(
        counted=counted,
        judged=len(judged),
        in_run=merged.in_run,
        missing=len(missing_ids),
        not_judged=len(merged.unjudged),
        empty_rankings=merged.empty_rankings,
        repeated_ids_dropped=merged.repeated_ids_dropped,
        metrics=parsed,
        tallies=tallies,
    )
    warn_if_ids_never_meet(
        qrels,
        judged_ids=_RowIds(judgments.query_ids, judged),
        run_ids=merged.unjudged,
        n_missing=len(missing_ids),
        missing=settings.missing,
        n_located=merged.n_located,
        n_ranked=merged.n_ranked,
        example=merged.example,
    )
    return EvaluationResult(
        metrics=parsed,
        query_ids=query_ids,
        values=values,
        counts=counts,
        missing_query_ids=missing_ids,
        unjudged_query_ids=merged.unjudged,
        settings=settings.to_dict(),
        run_name=name,
        tallies=tallies,
    )


def _batches(
    source: Any, batch_rows: int, columns: Columns, name: str | None
) -> tuple[str, Iterator[Run]]:
    """A label for messages, and the source as Run batches of whole queries."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        spec = find_format(path)
        if spec.stream_run is None:
            raise InputFormatError(
                f"{path}: {spec.name} input cannot be streamed (only formats with a streaming "
                f"reader can: {', '.join(n for n, f in formats().items() if f.stream_run)}); "
                f"read it with ragmetrics.data._files.read_run and call evaluate()."
            )
        return path, spec.stream_run(path, batch_rows, columns, name or _stem(source))
    if hasattr(source, "__arrow_c_stream__") and not isinstance(source, Run):
        # a Polars frame, a DuckDB result, a pyarrow reader: batch by batch, no pandas
        from ragmetrics.formats._columnar import arrow_batches

        return "the Arrow stream", _items(iter(arrow_batches(source)), batch_rows, columns, name)
    if isinstance(source, (Run, Mapping)):
        raise InputFormatError(
            "evaluate_stream reads a path or an iterable of batches; for a Run or a dict in "
            "memory, use evaluate()."
        )
    if not isinstance(source, Iterable):
        raise InputFormatError(
            f"source must be a TREC or Parquet path, or an iterable of Run batches or Arrow "
            f"record batches; got {type(source).__name__}."
        )
    return "the stream", _items(iter(source), batch_rows, columns, name)


def _regrouped(
    source: Any, batch_rows: int, columns: Columns, name: str | None
) -> tuple[str, Iterator[Run]] | None:
    """The batches of a file whose queries are scattered, grouped on a second reading
    (``data._batches.regrouped``), for a query found to come back after a batch was scored
    (before that, the reading itself turns to grouping); None when the source cannot be
    read again (standard input, an Arrow stream, an iterable) or its format has no chunk
    reader."""
    if not isinstance(source, (str, os.PathLike)) or os.fspath(source) == "-":
        return None
    path = os.fspath(source)
    spec = find_format(path)
    if spec.stream_chunks is None:
        return None
    chunks = spec.stream_chunks(path, batch_rows, columns)
    return path, regrouped(chunks, batch_rows, path, name or _stem(source), input_size(path))


def _items(
    items: Iterator[Any], batch_rows: int, columns: Columns, name: str | None
) -> Iterator[Run]:
    first = next(items, None)
    if first is None:
        return
    if isinstance(first, Run):
        yield first
        for number, item in enumerate(items, start=2):
            if not isinstance(item, Run):
                raise InputFormatError(
                    f"Batch {number} of the stream is a {type(item).__name__}; the first was a "
                    f"Run, so every batch must be one."
                )
            yield item
        return

    def chained() -> Iterator[Any]:
        yield first
        yield from items

    yield from run_batches(
        _stream_io.arrow_chunks(chained(), columns), batch_rows, "the stream", name
    )


def _stem(source: Any) -> str | None:
    if isinstance(source, (str, os.PathLike)) and os.fspath(source) != "-":
        base = os.path.basename(os.fspath(source).rstrip("/"))
        for suffix in (".gz", ".parquet", ".txt", ".trec", ".run"):
            base = base.removesuffix(suffix)
        return base
    return None
