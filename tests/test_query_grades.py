"""The utility-scale checks (``check_query_grades`` for one query scored on its own, the
adapters' plug-ins; ``check_utility_scale`` for whole qrels) at each edge of the scale, with
the sentence each raises; and grade maps, applied to every grade the set metrics read."""

from __future__ import annotations

import pytest

import ragmetrics as rm
from ragmetrics.errors import GradeScaleError
from ragmetrics.metrics._rag import check_query_grades, check_utility_scale, proposed_grade_map

LABELS = ["ra_nwg@5", "proc@5"]
NEED = (
    "The RAG set metrics (ra_nwg@5, proc@5) need utility grades 1..5 (5 decisive, 4 highly "
    "relevant, 3 partial, 2 weak, 1 not relevant); these qrels have grades "
)


@pytest.mark.parametrize(
    ("grades", "grade_map"),
    [
        ([], None),
        ([3, 2], None),  # partial evidence only: one query may lack a 4 or 5
        ([1, 3], None),  # 1 is on the scale when it is not alone
        ([1, 2], None),
        ([3, 5], None),
        ([5], None),
        ([1], {1: 5}),
        ([1], {1: 2}),  # mapped: a query without a 4 or 5 is still fine
        ([0, 7], {0: 1, 7: 5}),
        ([2.0, 3.0], None),  # grades read as integers
    ],
)
def test_grades_on_the_scale_pass(grades: list[int], grade_map: dict[int, int] | None) -> None:
    check_query_grades(grades, grade_map, LABELS)


@pytest.mark.parametrize(
    ("grades", "grade_map", "message"),
    [
        (
            [1],
            None,
            NEED + "{1} (binary judgments). Map them with grade_map={1: 5}, or give your own map.",
        ),
        (
            [1, 1],
            None,
            NEED + "{1} (binary judgments). Map them with grade_map={1: 5}, or give your own map.",
        ),
        (
            [0],
            None,
            NEED + "{0} (binary judgments). Map them with grade_map={0: 1}, or give your own map.",
        ),
        (
            [0, 1, 2, 3],
            None,
            NEED + "{0, 1, 2, 3} (a 0..3 scale, as TREC). Map them with "
            "grade_map={0: 1, 1: 3, 2: 4, 3: 5}, or give your own map.",
        ),
        (
            [2, 6],
            None,
            NEED + "{2, 6}, outside 1..5. Map them with grade_map={2: 4, 6: 5}, or "
            "give your own map.",
        ),
        (
            [6],
            None,
            NEED + "{6}, outside 1..5. Map them with grade_map={6: 5}, or give your own map.",
        ),
        (
            [1, 2],
            {1: 5},
            "grade_map does not map the grade(s) 2 found in the qrels (grades "
            "{1, 2}); add them, e.g. grade_map={1: 1, 2: 5}.",
        ),
    ],
)
def test_grades_off_the_scale_are_refused(
    grades: list[int], grade_map: dict[int, int] | None, message: str
) -> None:
    with pytest.raises(GradeScaleError) as caught:
        check_query_grades(grades, grade_map, LABELS)
    assert str(caught.value) == message


# --- the whole qrels' check, and grade maps -------------------------------------------------


@pytest.mark.parametrize(
    ("grades", "grade_map"),
    [([1, 4], None), ([5], None), ([2, 3, 4, 5], None), ([0, 1], {0: 1, 1: 4})],
)
def test_qrels_on_the_utility_scale_pass(
    grades: list[int], grade_map: dict[int, int] | None
) -> None:
    check_utility_scale(grades, grade_map, LABELS)


@pytest.mark.parametrize(
    ("grades", "grade_map", "message"),
    [
        (
            [1, 4, 6],
            None,
            NEED + "{1, 4, 6}, outside 1..5. Map them with grade_map={1: 1, 4: "
            "4, 6: 5}, or give your own map.",
        ),
        (
            [1, 2, 3],
            None,
            NEED + "{1, 2, 3} (within 1..5 but without a 4 or 5: read as utility grades, no "
            "document is useful evidence and every query is NA; if the labels are on a 1..3 "
            "scale, its top grade is the decisive one). Map them with grade_map={1: 1, 2: 4, "
            "3: 5}, or give your own map.",
        ),
        (
            [0, 1],
            None,
            NEED + "{0, 1} (binary judgments). Map them with grade_map={0: 1, 1: 5}, or give "
            "your own map.",
        ),
        (
            [-1, 2],
            None,
            NEED + "{-1, 2}, outside 1..5. Map them with grade_map={-1: 1, 2: 5}, or give "
            "your own map.",
        ),
        (
            [1, 2, 3],
            {1: 1, 2: 2, 3: 3},
            "The RAG set metrics (ra_nwg@5, proc@5) need utility "
            "grades where 4 or 5 mark the useful evidence, but grade_map maps the qrels' grades "
            "{1, 2, 3} to [1, 2, 3]: no grade 4 or 5, so nothing would count as highly relevant. "
            "A map such as grade_map={1: 1, 2: 4, 3: 5} reads the top grade as decisive.",
        ),
        (
            [1, 2, 3],
            {1: 5},
            "grade_map does not map the grade(s) 2, 3 found in the qrels "
            "(grades {1, 2, 3}); add them, e.g. grade_map={1: 1, 2: 4, 3: 5}.",
        ),
    ],
)
def test_qrels_off_the_utility_scale_are_refused(
    grades: list[int], grade_map: dict[int, int] | None, message: str
) -> None:
    with pytest.raises(GradeScaleError) as caught:
        check_utility_scale(grades, grade_map, LABELS)
    assert str(caught.value) == message


def test_the_proposed_map_keeps_the_order_of_the_grades() -> None:
    assert proposed_grade_map([0, 1, 2, 3, 4, 5]) == {0: 1, 1: 2, 2: 2, 3: 3, 4: 4, 5: 5}
    assert proposed_grade_map([-2, 0, 7]) == {-2: 1, 0: 1, 7: 5}


SET_METRICS = [
    "ra_nwg@3",
    "proc@3",
    "pct_proc@3",
    "n_recall_4plus@3",
    "n_recall_5@3",
    "precision_4plus@3",
    "harm@3",
    "unjudged@3",
]


def test_a_grade_map_equals_qrels_written_in_utility_grades() -> None:
    # grades 0..3 mapped onto 1..5 score exactly as the same qrels written in 1..5: in the
    # ranking (hits), in the oracle (every judged doc) and in the pool
    grade_map = {0: 1, 1: 3, 2: 4, 3: 5}
    raw = {
        "q1": {"a": 3, "b": 2, "c": 0, "d": 1, "e": 2},
        "q2": {"a": 1, "f": 2, "g": 0},
        "q3": {"h": 3, "i": 3, "j": 1},
    }
    mapped = {q: {d: grade_map[g] for d, g in docs.items()} for q, docs in raw.items()}
    run = {"q1": ["c", "x", "b", "a"], "q2": ["g", "a", "f"], "q3": ["j", "y", "i", "h"]}
    with_map = rm.evaluate(raw, run, SET_METRICS, grade_map=grade_map).per_query
    assert with_map == rm.evaluate(mapped, run, SET_METRICS).per_query
    # and the map matters: another reading (shifted by 1) gives other numbers
    shifted = {q: {d: g + 1 for d, g in docs.items()} for q, docs in raw.items()}
    assert rm.evaluate(shifted, run, SET_METRICS).per_query != with_map
