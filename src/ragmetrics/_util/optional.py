"""Imports of optional dependencies, with a message that says how to install them."""

from __future__ import annotations

from typing import Any

from ragmetrics.errors import MissingDependencyError


def import_pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise MissingDependencyError(
            "This needs pandas, which ragmetrics does not install by itself. "
            "Install it with: pip install 'ragmetrics[pandas]'"
        ) from None
    return pandas


def import_matplotlib_pyplot() -> Any:
    try:
        import matplotlib

        if matplotlib.get_backend().lower() not in {"module://matplotlib_inline.backend_inline"}:
            matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingDependencyError(
            "Plots need matplotlib. Install it with: pip install 'ragmetrics[plot]'"
        ) from None
    return plt


def import_pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.compute  # loads the compute module with the package
        import pyarrow.parquet  # loads the parquet module with the package
    except ImportError:
        raise MissingDependencyError(
            "Parquet and Arrow need pyarrow, which ragmetrics does not install by itself. "
            "Install it with: pip install 'ragmetrics[parquet]'"
        ) from None
    return pyarrow


def import_ray() -> Any:
    try:
        import ray
        import ray.data  # loads Ray Data with the package
    except ImportError:
        raise MissingDependencyError(
            "ragmetrics.ray needs Ray Data, which ragmetrics does not install by itself. "
            "Install it with: pip install 'ragmetrics[ray]'"
        ) from None
    return ray


def import_mlflow() -> Any:
    try:
        import mlflow
    except ImportError:
        raise MissingDependencyError(
            "ragmetrics.mlflow needs MLflow, which ragmetrics does not install by itself. "
            "Install it with: pip install 'ragmetrics[mlflow]' (mlflow-skinny) or pip "
            "install mlflow"
        ) from None
    return mlflow
