"""docs/ held to the registries: every registered metric, paired test, correction, fusion
method, normalization and input format is in its page, and every name a page lists as one
is registered (docs/metrics.md once said infAP and gm_bpref were not computed; both are)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ragmetrics.analysis import stats
from ragmetrics.data import _files as files
from ragmetrics.fusion import FUSION_METHODS, NORMALIZATIONS
from ragmetrics.metrics import parse_metric, registered
from ragmetrics.metrics.registry import UNSUPPORTED

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _own(function: object) -> bool:
    """A component of the library (other tests and the docs' examples register their own)."""
    return str(getattr(function, "__module__", "")).startswith("ragmetrics.")


def _library(registry: dict[str, object], attribute: str) -> dict[str, object]:
    return {n: e for n, e in registry.items() if _own(getattr(e, attribute))}


def _tables(page: str, *headers: str) -> list[str]:
    """The first cells of the rows of the tables of ``page`` whose first header is one of
    ``headers``."""
    lines = (DOCS / page).read_text(encoding="utf-8").splitlines()
    cells = []
    for i, line in enumerate(lines[:-1]):
        if line.startswith("|") and lines[i + 1].startswith("|---"):
            if line.split("|")[1].strip() not in headers:
                continue
            for row in lines[i + 2 :]:
                if not row.startswith("|"):
                    break
                cells.append(row.split("|")[1])
    return cells


def _backticked(text: str) -> set[str]:
    return set(re.findall(r"`([^`]+)`", text))


def _base(token: str) -> str:
    return re.split(r"[(@ =]", token.strip('"'))[0]


def test_every_registered_metric_is_documented() -> None:
    named = {_base(t) for t in _backticked((DOCS / "metrics.md").read_text(encoding="utf-8"))}
    missing = sorted(set(_library(registered(), "kernel")) - named)
    assert not missing, f"registered but not in docs/metrics.md: {missing}"


def test_every_metric_docs_list_is_registered() -> None:
    listed = {
        _base(token)
        for cell in _tables("metrics.md", "name (aliases)", "metric", "name")
        for token in re.findall(r"`([^`]+)`", cell)[:1]
    }
    assert len(listed) > 40
    for name in sorted(listed):
        try:
            parse_metric(name)
        except Exception:
            parse_metric(f"{name}@1")  # a metric whose cutoff is required


def test_what_docs_call_not_computed_is_not_computed() -> None:
    text = (DOCS / "metrics.md").read_text(encoding="utf-8")
    match = re.search(r"not\s+computed here \(([^)]*)\)", text)
    assert match is not None
    for name in re.findall(r"`([^`]+)`", match.group(1)):
        assert name.lower() in UNSUPPORTED, f"{name} is said not to be computed"
        assert name.lower() not in {n.lower() for n in registered()}, name


@pytest.mark.parametrize(
    ("page", "header", "registry"),
    [
        ("statistics.md", "`test=`", _library(stats.paired_tests(), "run")),
        ("statistics.md", "`correction=`", _library(stats.corrections(), "adjust")),
        ("fusion.md", "`norm=`", _library(NORMALIZATIONS, "apply")),
        ("fusion.md", "`method=`", _library(FUSION_METHODS, "combine")),
    ],
    ids=["tests", "corrections", "normalizations", "fusion methods"],
)
def test_each_registry_table_lists_exactly_the_registered(
    page: str, header: str, registry: dict[str, object]
) -> None:
    listed = {
        token.strip('"')
        for cell in _tables(page, header)
        for token in re.findall(r"`([^`]+)`", cell)
        if re.fullmatch(r'"?[a-z][a-z0-9_-]*"?', token)
    }
    listed -= {"None"}
    aliases = {a for a in listed if a not in registry}
    assert set(registry) <= listed, f"{page}: not listed: {sorted(set(registry) - listed)}"
    if header == "`method=`":  # the comb* aliases stand beside their methods
        aliases = {a for a in aliases if not a.startswith("comb")}
    assert not aliases, f"{page} lists what is not registered: {sorted(aliases)}"


def test_every_input_format_is_documented() -> None:
    text = (DOCS / "formats.md").read_text(encoding="utf-8").lower()
    for name, spec in _library(files.formats(), "read_qrels").items():
        assert name in text, name
        for suffix in spec.suffixes:
            assert f"`{suffix}`" in text or suffix in text, (name, suffix)
