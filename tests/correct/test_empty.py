"""The empty-result rule."""
from __future__ import annotations

from pathlib import Path

import pytest

from kgsql.correct import empty_result_tip
from kgsql.db.guard import execute_query
from kgsql.schema.model import DatabaseSchema


@pytest.mark.parametrize(
    ("question", "expects_tip"),
    [
        ("Which cities lie in Northmark?", True),
        ("List the rivers longer than 100 km.", True),
        ("What is the total length of the Silver River in metres?", True),
        ("Is there a city called Oster?", False),
        ("Are there rivers in Westmoor?", False),
        ("Does the Silver River flow through Oster?", False),
        ("Tell me whether any city was founded before 1200.", False),
    ],
)
def test_empty_result_tip(question: str, expects_tip: bool) -> None:
    tip = empty_result_tip(question, "SELECT name FROM cities WHERE 0")
    assert (tip is not None) == expects_tip
    if tip is not None:
        assert tip.kind == "empty_result"
        assert tip.text.startswith("The query returned no rows; check the filter values against the value examples")


def test_empty_result_tip_looks_at_the_result(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    path, _schema = dbs["geo"]
    question = "What is the total length of the Nordland river?"
    null_sum = execute_query(path, "SELECT SUM(length_km) FROM rivers WHERE name = 'Nordland'")
    assert null_sum.rows == [(None,)]
    assert empty_result_tip(question, result=null_sum) is not None  # an aggregate over no rows
    rows = execute_query(path, "SELECT SUM(length_km) FROM rivers")
    assert empty_result_tip(question, result=rows) is None
    assert empty_result_tip(question, result=[]) is not None
