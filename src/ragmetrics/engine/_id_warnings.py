"""The warnings given when numbers are zeros (or nothing) by construction: the qrels judge
no document, the run and the qrels share no query id, or no retrieved doc is judged."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from ragmetrics._util.warn import warn
from ragmetrics.data._qrels import Qrels
from ragmetrics.data._run import Run
from ragmetrics.engine._selection import Selection
from ragmetrics.engine._settings import MissingPolicy, Settings
from ragmetrics.errors import IdMismatchWarning, UndefinedMetricWarning
from ragmetrics.metrics.judged import JudgedRun

__all__ = [
    "ids_look_alike",
    "ranked_example",
    "sample_ids",
    "warn_if_ids_do_not_meet",
    "warn_if_ids_never_meet",
]


def ranked_example(judged: JudgedRun, run: Run) -> tuple[int, tuple[str, tuple[str, ...]] | None]:
    """The number of scored queries with a ranking, and, when no retrieved doc is judged,
    one of them with the start of its ranking (what :func:`warn_if_ids_never_meet` shows;
    a ranking is sorted only then)."""
    ranked = np.flatnonzero(judged.lengths)
    if not len(ranked) or judged.n_located:
        return len(ranked), None
    query_id = judged.query_ids[int(ranked[0])]
    return len(ranked), (query_id, run.ranking(query_id)[:50])


def warn_if_ids_do_not_meet(
    qrels: Qrels,
    run: Run,
    judged: JudgedRun,
    selected: Selection,
    settings: Settings,
    id_hint: str = "",
) -> None:
    """One warning when the numbers are zeros (or nothing) by construction (see
    :func:`warn_if_ids_never_meet`)."""
    n_ranked, example = ranked_example(judged, run)
    warn_if_ids_never_meet(
        qrels,
        judged_ids=selected.judged_ids,
        run_ids=run.query_ids,
        n_missing=len(selected.missing_ids),
        missing=settings.missing,
        n_located=judged.n_located,
        n_ranked=n_ranked,
        example=example,
        id_hint=id_hint,
    )


def warn_if_ids_never_meet(
    qrels: Qrels,
    *,
    judged_ids: Sequence[str],
    run_ids: Sequence[str],
    n_missing: int,
    missing: MissingPolicy,
    n_located: int,
    n_ranked: int,
    example: tuple[str, Sequence[str]] | None,
    id_hint: str = "",
) -> None:
    """One warning when the numbers are zeros (or nothing) by construction: the qrels judge
    no document, the run and the qrels share no query id, or no retrieved doc is judged.

    ``run_ids``: (some of) the run's query ids; ``n_located``: retrieved docs that are
    judged; ``n_ranked``: counted queries with a ranking; ``example``: one of them and the
    start of its ranking."""
    if not judged_ids:
        message = (
            f"The qrels judge no document: all {len(qrels)} of their queries have empty "
            f"judgments, so no query is counted. Check that the qrels were built from the "
            f"right data (e.g. that relevant ids were collected)."
        )
        warn(message, UndefinedMetricWarning)
        return
    if n_missing == len(judged_ids):
        outcome = (
            "every judged query scores 0 (missing='zero')"
            if missing == "zero"
            else "no query is counted"
        )
        message = (
            f"The run and the qrels share no query id: {outcome}. The run's ids look like "
            f"{sample_ids(run_ids)}, the qrels' like {sample_ids(judged_ids)}; use the same "
            f"ids in both (strings, same spelling)."
        )
        warn(message + id_hint, IdMismatchWarning)
        return
    if n_located or example is None:
        return
    query_id, retrieved = example
    judged_docs = list(qrels[query_id])
    # one query that missed is routine; ids of another form (uuids, paths) are not
    if n_ranked == 1 and ids_look_alike(retrieved, judged_docs):
        return
    message = (
        f"No retrieved doc is judged in any query: every metric is 0. The ids may be in "
        f"different forms: query {query_id!r} retrieved {sample_ids(retrieved)}, its judged "
        f"docs are {sample_ids(judged_docs)}. Map the retriever's ids (uuids, paths, chunk ids) "
        f"to the ids of the qrels."
    )
    warn(message + id_hint, IdMismatchWarning)


def ids_look_alike(some: Sequence[str], others: Sequence[str]) -> bool:
    """True when two lists of ids share a shape: each run of letters and digits read as
    ``a``, punctuation kept (``doc12`` and ``d7`` are ``a``; a uuid is ``a-a-a-a-a``, a path
    ``/a/a.a``). Ids of different shapes (uuids against doc names) cannot be the same ids."""
    return bool(_shapes(some) & _shapes(others))


def _shapes(ids: Sequence[str]) -> set[str]:
    return {_WORD.sub("a", i) for i in list(ids)[:50]}


_WORD = re.compile(r"[^\W_]+")


def sample_ids(ids: Sequence[str], n: int = 3) -> str:
    shown = ", ".join(map(repr, list(ids[:n])))
    return shown + (", ..." if len(ids) > n else "")
