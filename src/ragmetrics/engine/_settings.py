"""The checked arguments of an evaluation: its keywords (:class:`Settings`), its metric
names and its inputs, each refused with a message that says how to fix it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ragmetrics.data._precision import ScorePrecision, check_score_precision
from ragmetrics.data._qrels import Qrels
from ragmetrics.data._run import Run, judged_docs_only
from ragmetrics.errors import InputFormatError, InvalidParameterError, RagMetricsError
from ragmetrics.metrics import Metric, parse_metrics
from ragmetrics.metrics._rag import check_utility_scale
from ragmetrics.metrics.registry import REL, Scale, coerce, keyword_params

__all__ = [
    "MissingPolicy",
    "Settings",
    "as_qrels",
    "as_run",
    "check_grade_map",
    "check_settings",
    "checked_inputs",
    "checked_qrels",
    "evaluate_keywords",
    "metric_list",
    "metric_names",
    "resolve_metrics",
]

if TYPE_CHECKING:  # loaded when nuggets are given: the trec_eval stand-in never reads them
    from ragmetrics.data._nuggets import Nuggets

MissingPolicy = Literal["zero", "skip", "error"]
_MISSING_POLICIES = ("zero", "skip", "error")


# The keywords of evaluate() besides the inputs and the registered metric parameters
# (compare() and evaluate_stream() pass these through).
_OTHER_KEYWORDS = (
    "missing",
    "pool",
    "nuggets",
    "grade_map",
    "score_precision",
    "progress",
    "judged_only",
)


def evaluate_keywords() -> tuple[str, ...]:
    """Every keyword :func:`~ragmetrics.evaluate` takes besides the inputs: the registered
    metric parameters (:func:`~ragmetrics.metrics.registry.register_param`), then the rest."""
    return (*keyword_params(), *_OTHER_KEYWORDS)


@dataclass(frozen=True)
class Settings:
    """The keywords of one evaluation, validated.

    Attributes:
        params: the metric-parameter keywords given (by keyword name; None where not given).
        relevance_threshold: the threshold in force for metrics whose name does not set one.
        missing, grade_map, pool, score_precision, progress: as given to :func:`evaluate`.
        judged_only: rank only the docs the qrels judge (grade >= 0), as trec_eval's ``-J``.
    """

    params: dict[str, Any]
    relevance_threshold: int
    missing: MissingPolicy
    grade_map: dict[int, int] | None
    pool: Run | None
    score_precision: ScorePrecision
    progress: bool | None
    judged_only: bool = False
    nuggets: Nuggets | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain values for ``EvaluationResult.settings``."""
        return {
            "relevance_threshold": self.relevance_threshold,
            "missing": self.missing,
            **{  # the value in force: given, else the declared default
                k: keyword_params()[k].default if v is None else v
                for k, v in self.params.items()
                if k != "relevance_threshold"
            },
            "grade_map": self.grade_map,
            "pool": None if self.pool is None else (self.pool.name or "given"),
            "score_precision": self.score_precision,
            **({"judged_only": True} if self.judged_only else {}),
            **({"nuggets": repr(self.nuggets)} if self.nuggets is not None else {}),
        }


def check_settings(**keywords: Any) -> Settings:
    """Validate the keywords of :func:`evaluate` (all of them, whether or not a metric uses
    them); raises :class:`~ragmetrics.errors.InvalidParameterError` naming the valid range."""
    known = evaluate_keywords()
    if "alpha" in keywords:
        raise InvalidParameterError(
            "alpha= is not a keyword of evaluate(): the rarity exponent of the RAG set "
            "metrics is rarity_alpha= (--rarity-alpha on the command line), and alpha= is "
            "compare()'s significance level. A metric name may set its own: "
            "'ra_nwg(alpha=0.5)@5'."
        )
    unknown = [k for k in keywords if k not in known]
    if unknown:
        raise InvalidParameterError(
            f"Unknown keyword(s) {', '.join(map(repr, unknown))}; the keywords of evaluate() "
            f"are {', '.join(known)}."
        )
    params = {
        name: param.check(keywords.get(name)) if keywords.get(name) is not None else None
        for name, param in keyword_params().items()
    }
    missing = keywords.get("missing", "zero")
    if missing not in _MISSING_POLICIES:
        raise InvalidParameterError(
            f"missing must be one of 'zero', 'skip' or 'error'; got {missing!r}."
        )
    progress = keywords.get("progress")
    if progress is not None and not isinstance(progress, bool):
        raise InvalidParameterError(
            f"progress must be True, False or None (automatic); got {progress!r}."
        )
    pool = keywords.get("pool")
    judged_only = keywords.get("judged_only", False)
    if not isinstance(judged_only, bool):
        raise InvalidParameterError(f"judged_only must be True or False; got {judged_only!r}.")
    threshold = params["relevance_threshold"]
    return Settings(
        params=params,
        relevance_threshold=REL.default if threshold is None else threshold,
        missing=missing,
        grade_map=check_grade_map(keywords.get("grade_map")),
        pool=None if pool is None else as_run(pool, "pool"),
        score_precision=check_score_precision(keywords.get("score_precision", "float64")),
        progress=progress,
        judged_only=judged_only,
        nuggets=_checked_nuggets(keywords.get("nuggets")),
    )


def _checked_nuggets(value: Any) -> Nuggets | None:
    """``nuggets=`` as :class:`Nuggets`: given so, or built from ``{qid: {nugget_id: {...}}}``."""
    if value is None:
        return None
    from ragmetrics.data._nuggets import Nuggets

    if isinstance(value, Nuggets):
        return value
    if isinstance(value, Mapping):
        return Nuggets.from_dict(value)
    raise InvalidParameterError(
        f"nuggets= takes Nuggets (rm.Nuggets.from_dict / from_json) or a mapping "
        f"{{qid: {{nugget_id: {{'text', 'vital', 'support'}}}}}}; got {type(value).__name__}."
    )


def check_grade_map(grade_map: Any) -> dict[int, int] | None:
    """A copy of ``grade_map`` with int keys and utility grades 1..5 as values."""
    if grade_map is None:
        return None
    if not isinstance(grade_map, Mapping) or not grade_map:
        raise InvalidParameterError(
            f"grade_map must be a non-empty mapping of grade to utility grade 1..5, such as "
            f"{{0: 1, 1: 3, 2: 4, 3: 5}}; got {grade_map!r}."
        )
    checked: dict[int, int] = {}
    for key, value in grade_map.items():
        raw = coerce(key, int)
        mapped = coerce(value, int)
        if raw is None or mapped is None or not 1 <= mapped <= 5:
            raise InvalidParameterError(
                f"grade_map must map integer grades to utility grades 1..5; the entry "
                f"{key!r}: {value!r} is not one (e.g. {{0: 1, 1: 3, 2: 4, 3: 5}})."
            )
        checked[raw] = mapped
    return checked


def resolve_metrics(metrics: str | Sequence[str], settings: Settings) -> list[Metric]:
    """Parse metric names and fill each parameter the name leaves out from the keywords of
    ``settings``, else from its declared default."""
    resolved = [m.resolve(settings.params) for m in parse_metrics(metric_names(metrics))]
    needing = [m.label for m in resolved if m.spec.needs_nuggets]
    if needing and settings.nuggets is None:
        raise InvalidParameterError(
            f"{', '.join(needing)} count(s) nuggets: pass nuggets= (rm.Nuggets.from_json, or "
            f"--nuggets FILE on the command line). Without nuggets, group_recall@k and "
            f"recall_all@k count the relevant docs (or the evidence groups) the same way."
        )
    return resolved


def checked_inputs(
    qrels: Any, run: Any, metrics: list[Metric], settings: Settings
) -> tuple[Qrels, Run]:
    """The qrels and the run as objects, refused when empty or (for the RAG set metrics)
    not on the utility scale."""
    qrels = checked_qrels(qrels, metrics, settings)
    run = as_run(run)
    if len(run) == 0:
        raise RagMetricsError(
            "The run is empty: it has no query. Check that the retriever ran and that the "
            "file or dict is the one you meant."
        )
    if settings.judged_only:
        run = judged_docs_only(run, qrels)
    return qrels, run


def checked_qrels(qrels: Any, metrics: list[Metric], settings: Settings) -> Qrels:
    """The qrels as an object, refused when empty or (for the RAG set metrics) not on the
    utility scale."""
    checked = as_qrels(qrels)
    if len(checked) == 0:
        raise RagMetricsError("The qrels are empty: there is nothing to evaluate against.")
    if checked.has_real_grades:
        refused = [m.label for m in metrics if not m.spec.real_grades]
        if refused:
            from ragmetrics.errors import GradeScaleError
            from ragmetrics.metrics.registry import registered

            example = next(g for g in checked.grade_values().tolist() if not float(g).is_integer())
            takers = sorted(name for name, spec in registered().items() if spec.real_grades)
            raise GradeScaleError(
                f"The qrels hold real-valued grades (such as {example!r}); "
                f"{', '.join(refused)} decide relevance by comparing integer grades with "
                f"relevance_threshold, which a real-valued gain does not answer. The metrics "
                f"that take a gain as it is: {', '.join(takers)}. For the others, turn the "
                f"gains into grades first, e.g. {{doc: int(gain >= 0.5)}}. (If these are a "
                f"run's scores, the arguments are swapped: the qrels come first.)"
            )
    utility = [m.label for m in metrics if m.spec.scale is Scale.UTILITY]
    if utility:
        check_utility_scale(checked.grade_values(), settings.grade_map, utility)
    return checked


def metric_names(metrics: Any) -> Any:
    """``metrics`` as parse_metrics takes it (a name, or a list of names)."""
    if (
        isinstance(metrics, str)
        or not isinstance(metrics, Iterable)
        or isinstance(metrics, Mapping)
    ):
        return metrics
    return list(metrics)


def metric_list(metrics: Any) -> list[str]:
    """``metrics`` (a name, or an iterable of names) as a list of names; anything else is
    refused as :func:`~ragmetrics.metrics.parse_metrics` refuses it."""
    names = metric_names(metrics)
    if isinstance(names, str):
        return [names]
    if not isinstance(names, list):
        raise InvalidParameterError(
            "metrics must be a metric name or a list of names, such as ['ndcg@10', 'mrr']; "
            f"got {names!r} of type {type(names).__name__}."
        )
    return names


def _table_kind(value: Any) -> Literal["pandas", "arrow"] | None:
    """``"pandas"`` for a pandas DataFrame; ``"arrow"`` for a pyarrow Table or RecordBatch
    or anything with the Arrow C stream interface (a Polars DataFrame, a DuckDB result);
    else None. Nothing is imported to tell."""
    if type(value).__module__.partition(".")[0] == "pandas" and hasattr(value, "columns"):
        return "pandas"
    if hasattr(value, "__arrow_c_stream__") or hasattr(value, "__arrow_c_array__"):
        return "arrow"
    return None


def _column_names(value: Any, kind: str) -> list[str]:
    """The column names of a table (``kind="arrow"``: a pyarrow Table, made once)."""
    names = value.columns if kind == "pandas" else value.column_names
    return [str(name) for name in names]


# the grade columns of a table handed to evaluate (not built first): as from_arrow finds
# them, but a run's scores ("score", ranx's name for grades too) never taken for grades
_TABLE_GRADES = ("relevance", "grade")


def _table(value: Any, kind: str) -> Any:
    """``value`` itself (pandas), or as a pyarrow Table (read once: a stream is spent)."""
    if kind == "pandas":
        return value
    from ragmetrics.formats import _columnar  # here: only a table given needs it

    return _columnar.as_table(value)


def _query_column(names: list[str]) -> str | None:
    """The query column among ``names``, as the Arrow readers look for it."""
    from ragmetrics.formats._columnar import QUERY_COLUMNS, find_column

    return find_column(names, None, QUERY_COLUMNS)


def _qrels_of_table(value: Any, kind: str) -> Qrels:
    names = _column_names(value, kind)
    query = _query_column(names)
    grade = next((name for name in _TABLE_GRADES if name in names), None)
    if query is None or grade is None or "doc_id" not in names:
        maker = "Qrels.from_pandas" if kind == "pandas" else "Qrels.from_arrow"
        raise InputFormatError(
            f"A table given as qrels is read by its columns 'query_id' (or 'q_id'), 'doc_id' "
            f"and 'relevance' (or 'grade'); it has {', '.join(map(repr, names))}. "
            + (
                "Is it a run? evaluate(qrels, run, metrics) takes the judgments first. "
                if "score" in names and grade is None
                else ""
            )
            + f"For other names, build the qrels first: {maker}(table, query_col=..., "
            f"doc_col=..., grade_col=...)."
        )
    if kind == "pandas":
        return Qrels.from_pandas(value, query_col=query, grade_col=grade)
    return Qrels.from_arrow(value, query_col=query, grade_col=grade)


def _run_of_table(value: Any, kind: str, what: str) -> Run:
    names = _column_names(value, kind)
    query = _query_column(names)
    grades = [name for name in _TABLE_GRADES if name in names]
    if query is None or "doc_id" not in names or ("score" not in names and grades):
        maker = "Run.from_pandas" if kind == "pandas" else "Run.from_arrow"
        raise InputFormatError(
            f"A table given as the {what} is read by its columns 'query_id' (or 'q_id'), "
            f"'doc_id' and 'score' (without 'score', the row order of each query is its "
            f"ranking); it has {', '.join(map(repr, names))}. "
            + (
                f"Its column {grades[0]!r} holds grades: is it the qrels? evaluate(qrels, run, "
                f"metrics) takes the judgments first. "
                if "score" not in names and grades
                else ""
            )
            + f"For other names, build the {what} first: {maker}(table, query_col=..., "
            f"doc_col=..., score_col=...)."
        )
    score = "score" if "score" in names else None
    if kind == "pandas":
        return Run.from_pandas(value, query_col=query, score_col=score)
    return Run.from_arrow(value, query_col=query, score_col=score)


def as_qrels(value: Any) -> Qrels:
    """Accept a :class:`Qrels`, a ``{qid: {doc: grade}}`` mapping, or a table of one row per
    judgment (pandas, Polars, pyarrow, DuckDB) with the columns ``query_id`` (or ``q_id``),
    ``doc_id`` and ``relevance`` (or ``grade``)."""
    if isinstance(value, Qrels):
        return value
    if isinstance(value, Run):
        raise InputFormatError(
            f"The qrels given are a Run ({value.name or 'unnamed'}, {len(value)} queries): "
            f"evaluate(qrels, run, metrics) and compare(qrels, runs, metrics) take the "
            f"judgments first. Swap the two arguments."
        )
    if isinstance(value, Mapping):
        return Qrels.from_dict(value)
    kind = _table_kind(value)
    if kind is not None:
        return _qrels_of_table(_table(value, kind), kind)
    raise InputFormatError(
        "qrels must be a Qrels, a dict {query_id: {doc_id: grade}} or a table (pandas, "
        f"Polars, pyarrow) of query_id, doc_id and relevance; got {type(value).__name__}. "
        f"Read files with Qrels.from_trec, Qrels.from_json or Qrels.from_parquet."
    )


def as_run(value: Any, what: str = "run") -> Run:
    """Accept a :class:`Run`, a ``{qid: {doc: score}}`` or a ``{qid: [doc, ...]}`` mapping,
    or a table of one row per result (pandas, Polars, pyarrow, DuckDB) with the columns
    ``query_id`` (or ``q_id``), ``doc_id`` and ``score`` (or none: the row order)."""
    if isinstance(value, Run):
        return value
    if isinstance(value, Qrels):
        raise InputFormatError(
            f"The {what} given is a Qrels ({len(value)} judged queries): evaluate(qrels, "
            f"run, metrics) takes the judgments first and the ranking second. Swap the two "
            f"arguments."
        )
    if isinstance(value, Mapping):
        lists = [v for v in value.values() if isinstance(v, (list, tuple))]
        if lists and len(lists) == len(value):
            return Run.from_lists(value)
        return Run.from_dict(value)
    kind = _table_kind(value)
    if kind is not None:
        return _run_of_table(_table(value, kind), kind, what)
    raise InputFormatError(
        f"{what} must be a Run, a dict of {{query_id: {{doc_id: score}}}} or "
        "{query_id: [doc_id, ...]}, or a table (pandas, Polars, pyarrow) of query_id, doc_id "
        f"and score; got {type(value).__name__}. Read files with Run.from_trec, Run.from_json "
        f"or Run.from_parquet."
    )
