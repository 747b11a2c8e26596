"""Shared fixtures: the real public data beside the project, read in place."""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ragmetrics import Run

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def _hypothesis_profile() -> None:
    """The suite's one hypothesis profile: derandomized (the same examples on every run),
    no deadline, no example database."""
    try:
        from hypothesis import HealthCheck, settings
    except ImportError:  # the integrations' own suites run without it
        return
    settings.register_profile(
        "ragmetrics",
        derandomize=True,
        deadline=None,
        database=None,
        max_examples=150,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


_hypothesis_profile()


def rankings_beyond_ascii(
    rng: random.Random, n_queries: int, n_names: int, depth: int
) -> list[tuple[str, list[str]]]:
    """Query ids and their rankings of doc ids beyond ASCII (accents, CJK, Greek, a combining
    mark, an emoji), each doc once a query, for the tests of the UTF-8 readers."""
    prefixes = ["d", "dé", "東京", "Ελλάδα", "e\u0301", "📚", "naïve"]
    made = []
    for q in range(n_queries):
        query = rng.choice(["q", "é", "問"]) + str(q)
        picks = (rng.choice(prefixes) + str(rng.randrange(n_names)) for _ in range(depth))
        made.append((query, list(dict.fromkeys(picks))))
    return made


def shared_file(*parts: str) -> Path:
    """A file of ../shared/data; skips the test with a clear reason when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not available: {path} (tests read ../shared/data in place)")
    return path


def scored_run(results: dict[str, dict[str, float]], source: str, folder: Path) -> Run:
    """``results`` as a ``Run``: from the dicts themselves (``source="dict"``), or from a TREC
    file written from them in their order (``"trec"``, scores as ``repr`` writes them)."""
    import ragmetrics as rm

    if source == "dict":
        return rm.Run.from_dict(results)
    path = folder / "run.txt"
    path.write_text(
        "".join(
            f"{q} Q0 {d} {i + 1} {s!r} t\n"
            for q, ranking in results.items()
            for i, (d, s) in enumerate(ranking.items())
        )
    )
    return rm.Run.from_trec(path)


def shared_seed(name: str) -> Path:
    """A seed document of ../shared/seeds (the tools the facades reproduce); skips the test
    with a clear reason when it is absent."""
    path = SHARED_DATA.parent / "seeds" / name
    if not path.exists():
        pytest.skip(f"seed document not available: {path} (tests read ../shared in place)")
    return path


def restore_registries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Copies of every registry (metrics, keyword parameters, tests, corrections, formats,
    fusion methods, normalizations and output formats), put back when the test ends: what a test or a
    document's example registers stays there."""
    from ragmetrics.analysis import stats
    from ragmetrics.data import _files as files
    from ragmetrics.fusion import _methods, _norms
    from ragmetrics.metrics import registry
    from ragmetrics.output import _renderers

    files.formats()  # the built-in formats are in the copy
    for module, name in (
        (registry, "_REGISTRY"),
        (registry, "_ALIASES"),
        (registry, "_PRESETS"),
        (registry, "_KEYWORD_PARAMS"),
        (stats, "_PAIRED_TESTS"),
        (stats, "_CORRECTIONS"),
        (files, "_FORMATS"),
        (_renderers, "_RENDERERS"),
    ):
        monkeypatch.setattr(module, name, dict(getattr(module, name)))
    for module in (_methods, _norms):
        table = module._REGISTRY
        monkeypatch.setattr(table, "entries", dict(table.entries))
        monkeypatch.setattr(table, "_aliases", dict(table._aliases))


def real_trec_eval_missing() -> str | None:
    """Why NIST's trec_eval cannot run here (None when it can): no ``$TREC_EVAL`` and no
    ``../shared/tools`` to build it from. The modules that compare with the running program
    skip once, with this reason; ``tests/test_trec_eval_committed.py`` checks the same parity
    from its committed outputs everywhere."""
    import os

    if (
        os.environ.get("TREC_EVAL")
        or (SHARED_DATA.parent / "tools" / "build-trec-eval.sh").exists()
    ):
        return None
    return (
        f"NIST trec_eval cannot run here: no $TREC_EVAL and no {SHARED_DATA.parent / 'tools'} to "
        f"build it from (tests/test_trec_eval_committed.py checks its committed outputs)"
    )


@pytest.fixture(scope="session")
def trec_eval_binary(tmp_path_factory: pytest.TempPathFactory) -> str:
    """NIST trec_eval 10.0, built once per session from ``../shared/tools`` (its own
    script; a few seconds), or ``$TREC_EVAL``. Skips, saying why, only when neither is
    there."""
    import os
    import subprocess

    given = os.environ.get("TREC_EVAL")
    if given:
        return given
    script = SHARED_DATA.parent / "tools" / "build-trec-eval.sh"
    if not script.exists():
        pytest.skip(f"no {script} beside the project to build trec_eval from, and no $TREC_EVAL")
    folder = tmp_path_factory.mktemp("trec_eval")
    done = subprocess.run(
        ["bash", str(script), str(folder)], capture_output=True, text=True, timeout=300
    )
    if done.returncode != 0:
        raise RuntimeError(f"building trec_eval failed:\n{done.stderr}")
    return done.stdout.strip().splitlines()[-1]


_SHARED_CALLS = ("shared_file(", "shared_seed(")


def _shared_helpers(module: object) -> tuple[str, ...]:
    """The calls that read ``../shared`` in ``module``: ``shared_file(`` and its helpers that
    call it, directly or through one another (found by their source)."""
    import inspect

    calls = list(_SHARED_CALLS)
    functions = {}
    for name, value in vars(module).items():
        if inspect.isfunction(value) and value.__module__ == getattr(module, "__name__", ""):
            try:
                functions[name] = inspect.getsource(value)
            except (OSError, TypeError):  # made at run time: no source to read
                continue
    changed = True
    while changed:
        changed = False
        for name, source in functions.items():
            call = f"{name}("
            if call not in calls and any(c in source for c in calls):
                calls.append(call)
                changed = True
    return tuple(calls)


def _reads_shared(item: pytest.Item) -> bool:
    """Whether a test (or a fixture it uses) reads ``../shared``, by its source."""
    import inspect

    module = getattr(item, "module", None)
    calls = _shared_helpers(module) if module is not None else _SHARED_CALLS
    functions = [getattr(item, "obj", None)]
    info = getattr(item, "_fixtureinfo", None)
    for name in getattr(item, "fixturenames", ()):
        for definition in info.name2fixturedefs.get(name, ()) if info is not None else ():
            functions.append(definition.func)
    for function in functions:
        try:
            source = inspect.getsource(function)  # type: ignore[arg-type]
        except (TypeError, OSError):
            continue
        if any(call in source for call in calls):
            return True
    return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without ``../shared`` (a fresh clone), the tests that compare with its data cannot run:
    one of them stands for all, skipped with the count per module and the reason, and the
    others are deselected (pytest's summary counts them). Where ``../shared`` is present,
    every one of them runs."""
    if SHARED_DATA.exists():
        return
    kept: list[pytest.Item] = []
    dropped: dict[str, list[pytest.Item]] = {}
    for item in items:
        if _reads_shared(item):
            dropped.setdefault(item.nodeid.split("::")[0], []).append(item)
        else:
            kept.append(item)
    if dropped:  # one test stands for them all, skipped with the counts and the reason
        stand_in = next(iter(dropped.values()))[0]
        counts = ", ".join(f"{module} {len(tests)}" for module, tests in dropped.items())
        total = sum(len(tests) for tests in dropped.values())
        stand_in.add_marker(
            pytest.mark.skip(
                reason=f"{total} tests compare with {SHARED_DATA}, absent here ({counts}); "
                f"they run where it is present"
            )
        )
        kept.append(stand_in)
    deselected = [t for tests in dropped.values() for t in tests if t is not stand_in]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
    items[:] = kept


def best_copies(rows: list[tuple[str, str, float]]) -> tuple[dict, dict[str, int]]:
    """The run that rows ``(query, doc, score)`` make, a repeated doc keeping its best score,
    and per query how many copies were dropped: what every reader must give."""
    best: dict[str, dict[str, float]] = {}
    copies: dict[str, int] = {}
    for q, d, s in rows:
        of_query = best.setdefault(q, {})
        if d in of_query:
            copies[q] = copies.get(q, 0) + 1
            of_query[d] = max(of_query[d], s)
        else:
            of_query[d] = s
    return best, copies


def standins_out_of_order() -> tuple[str, str]:
    """Two long doc ids, the smaller string first, whose stand-ins (``formats._packed``)
    sort the other way round: what tests of the order by id among stand-ins need."""
    import itertools

    from ragmetrics.formats import _packed

    prefix = "https://example.com/" + "p" * 300 + "/"
    pairs = ((prefix + a, prefix + b) for a, b in itertools.combinations("abcdefgh", 2))
    return next(
        (x, y)
        for x, y in pairs
        if (made := _packed.standins([x.encode(), y.encode()])) is not None and made[0] > made[1]
    )
