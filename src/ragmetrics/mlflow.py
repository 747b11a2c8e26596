"""Log evaluations to MLflow (the ``[mlflow]`` extra): metrics, per-query tables, the
settings and the HTML report, in the active run.

MLflow's metric keys take letters, digits and ``_ - . / `` and spaces only, so a label such
as ``ndcg@10`` is logged as ``ndcg_at_10``; ``ragmetrics/metric_keys.json`` in the run's
artifacts maps every key back to its label. A metric that is NA for every query has no
value to log: it is listed in ``ragmetrics/na_metrics.json`` instead of being logged as 0.

Example (not run here: it needs MLflow and a tracking store)::

    import mlflow
    import ragmetrics as rm
    from ragmetrics.mlflow import log

    with mlflow.start_run(run_name="bm25 vs hybrid"):
        log(rm.compare(qrels, {"bm25": a, "hybrid": b}, ["ndcg@10", "ra_nwg@5"]))
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragmetrics._util.optional import import_mlflow
from ragmetrics.analysis._comparison import Comparison
from ragmetrics.engine._result import EvaluationResult
from ragmetrics.errors import RagMetricsError

__all__ = ["log", "metric_key"]

_COUNTS = ("queries", "missing_from_run", "not_judged", "empty_rankings", "failed_retrievals")


def metric_key(label: str) -> str:
    """The MLflow key of a metric label: ``ndcg@10`` -> ``ndcg_at_10``,
    ``P(rel=2)@5`` -> ``P_rel_2_at_5`` (letters, digits, ``_ - . /`` kept)."""
    key = label.replace("@", "_at_")
    key = re.sub(r"[^A-Za-z0-9_\-./ ]+", "_", key)
    return re.sub(r"_+", "_", key).strip("_") or "metric"


def _scopes(names: list[str]) -> dict[str, str]:
    """A key prefix per run name: letters, digits, ``_`` and ``-`` only (no ``/`` or ``..``
    that MLflow would read as a path), at most 60 characters, and distinct: two names that
    sanitize alike (``a+b`` and ``a_b``; any two names in Chinese) get ``_2``, ``_3``..."""
    taken: dict[str, str] = {}
    out = {}
    for name in names:
        base = re.sub(r"[^A-Za-z0-9_\-]+", "_", name.replace("@", "_at_"))
        base = re.sub(r"_+", "_", base).strip("_")[:60] or "run"
        scope = _unique(base, taken)
        taken[scope] = name
        out[name] = scope
    return out


def _check_prefix(prefix: str) -> str:
    if (
        not isinstance(prefix, str)
        or len(prefix) > 100
        or ".." in prefix
        or (re.fullmatch(r"[A-Za-z0-9_\-./ ]*", prefix) is None or prefix.startswith("/"))
    ):
        raise RagMetricsError(
            f"prefix must be at most 100 letters, digits, '_', '-', '.', '/' or spaces, "
            f"without '..' or a leading '/'; got {prefix!r}."
        )
    return prefix


def log(
    evaluated: EvaluationResult | Comparison,
    *,
    prefix: str = "",
    report: bool = True,
    per_query: bool = True,
    run_name: str | None = None,
    report_options: Mapping[str, Any] | None = None,
) -> str:
    """Log ``evaluated`` to the active MLflow run (or to a new run, ended afterwards, when
    none is active) and return the run's id.

    An :class:`EvaluationResult` logs each metric's mean, the counts (queries counted,
    missing, failed retrievals...), p50/p95 latency when the adapters timed the
    retrievals, the settings as parameters, and the per-query values as a table
    (``ragmetrics/per_query.json``). A :class:`Comparison` logs the same per run under
    ``<run>/`` keys, the paired tests as a table, and (``report=True``) the HTML report as
    ``ragmetrics/report.html``. ``prefix`` goes before every key.
    """
    if not isinstance(evaluated, (EvaluationResult, Comparison)):
        raise RagMetricsError(
            f"ragmetrics.mlflow.log takes an EvaluationResult or a Comparison; got "
            f"{type(evaluated).__name__}."
        )
    prefix = _check_prefix(prefix)
    if run_name is not None and (not isinstance(run_name, str) or len(run_name) > 250):
        raise RagMetricsError("run_name must be a string of at most 250 characters.")
    mlflow = import_mlflow()
    started = mlflow.active_run() is None
    active = mlflow.start_run(run_name=run_name) if started else mlflow.active_run()
    status = "FAILED"
    try:
        keys: dict[str, str] = {}
        na: list[str] = []
        if isinstance(evaluated, EvaluationResult):
            _log_result(mlflow, evaluated, prefix, keys, na, per_query, "", "")
            mlflow.log_params(_params(prefix, evaluated.settings))
        else:
            scopes = _scopes(list(evaluated.results))
            for name, result in evaluated.results.items():
                scope = scopes[name]
                _log_result(mlflow, result, f"{prefix}{scope}/", keys, na, per_query, name, scope)
            first = next(iter(evaluated.results.values()))
            mlflow.log_params(_params(prefix, {**first.settings, **evaluated.settings}))
            mlflow.log_dict(scopes, "ragmetrics/run_keys.json")
            _table(mlflow, evaluated.tests_to_pandas, evaluated.to_dict()["tests"], "tests")
            if report:
                _log_report(mlflow, evaluated, report_options or {})
        mlflow.log_dict(keys, "ragmetrics/metric_keys.json")
        if na:
            mlflow.log_dict(na, "ragmetrics/na_metrics.json")
        run_id: str = active.info.run_id
        status = "FINISHED"
    except RagMetricsError:
        raise
    except Exception as error:  # MLflow's own refusal: named, and the run marked failed
        raise RagMetricsError(
            f"MLflow refused part of the log ({type(error).__name__}: {error}); "
            + (
                "the run this call started is marked FAILED."
                if started
                else "the active run holds what was logged before it."
            )
        ) from error
    finally:
        if started:
            mlflow.end_run(status=status)
    return run_id


def _log_result(
    mlflow: Any,
    result: EvaluationResult,
    prefix: str,
    keys: dict[str, str],
    na: list[str],
    per_query: bool,
    run: str,
    scope: str,
) -> None:
    values: dict[str, float] = {}
    for label, mean in result.aggregate.items():
        key = _unique(prefix + metric_key(label), keys)
        keys[key] = f"{run} / {label}" if run else label
        if mean is None:
            na.append(keys[key])
        else:
            values[key] = float(mean)
    counts = result.counts
    for field in _COUNTS:
        values[f"{prefix}count/{field}"] = float(getattr(counts, field))
    latency = result.latency()
    if latency is not None:
        for stat in ("p50", "p95", "mean"):
            values[f"{prefix}latency_seconds/{stat}"] = latency[stat]
    mlflow.log_metrics(values)
    if per_query:
        name = f"per_query/{scope}" if run else "per_query"
        _table(mlflow, result.to_pandas, result.per_query, name)


def _unique(key: str, taken: Mapping[str, str]) -> str:
    """``key``, or ``key_2``, ``key_3``... when two labels sanitize alike."""
    found, n = key, 1
    while found in taken:
        n += 1
        found = f"{key}_{n}"
    return found


def _table(mlflow: Any, frame: Any, fallback: Any, name: str) -> None:
    """A table MLflow's UI shows (with pandas), else the same data as JSON."""
    try:
        table = frame()
    except RagMetricsError:  # pandas is not installed
        mlflow.log_dict(fallback, f"ragmetrics/{name}.json")
        return
    if "query_id" not in table.columns and table.index.name is not None:
        table = table.reset_index()
    mlflow.log_table(table, f"ragmetrics/{name}.json")


def _params(prefix: str, settings: Mapping[str, Any]) -> dict[str, str]:
    """Settings as MLflow parameters (strings of at most 6,000 characters)."""
    out = {}
    for name, value in settings.items():
        text = json.dumps(value, default=str) if not isinstance(value, str) else value
        out[f"{prefix}{metric_key(str(name))}"] = text[:6000]
    return out


def _log_report(mlflow: Any, comparison: Comparison, options: Mapping[str, Any]) -> None:
    from ragmetrics.report._report import write_report

    with tempfile.TemporaryDirectory() as folder:
        path = write_report(comparison, Path(folder) / "report.html", **options)
        mlflow.log_artifact(str(path), "ragmetrics")
