"""``check_query_grades``: the utility-scale check for one query scored on its own (the
adapters' plug-ins), at each edge of the scale, with the sentence it raises."""

from __future__ import annotations

import pytest

from ragmetrics.errors import GradeScaleError
from ragmetrics.metrics.rag import check_query_grades

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
            "{1, 2}); add them, e.g. grade_map={1: 4, 2: 5}.",
        ),
    ],
)
def test_grades_off_the_scale_are_refused(
    grades: list[int], grade_map: dict[int, int] | None, message: str
) -> None:
    with pytest.raises(GradeScaleError) as caught:
        check_query_grades(grades, grade_map, LABELS)
    assert str(caught.value) == message
