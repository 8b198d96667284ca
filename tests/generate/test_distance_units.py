"""``distance-unit``: a distance the question gives in kilometres or miles, written unconverted against a
measure in metres, on the shipped SpatiaLite example (the query run on it for its rows)."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from kgsql.correct import CheckContext
from kgsql.sql.distance_units import stated_distances
from kgsql.generate.explain import explain_sql
from kgsql.generate.flags import answer_flags
from kgsql.ingest.reader import read_database

NEAR_RIVER = "Which cities lie within 20 km of the Silver River?"


@pytest.fixture(scope="module")
def geo(example_db: Path) -> Iterator[CheckContext]:
    with CheckContext(read_database(example_db), NEAR_RIVER) as ctx:
        yield ctx


def _flags(ctx: CheckContext, question: str, sql: str) -> list[tuple[str, str]]:
    rows = ctx.execute(sql).rows
    return [(f.code, f.text) for f in answer_flags(question=question, sql=sql, schema=ctx.schema,
                                                    explanation=explain_sql(sql, ctx.schema), rows=rows)
            if f.code == "distance-unit"]


@pytest.mark.parametrize("question,sql,call", [
    # the local 1.5B's answer on the example (session 35): 20 metres where the question says 20 km
    (NEAR_RIVER, "SELECT c.name FROM cities AS c JOIN rivers AS r ON Intersects(r.Shape, c.Location) = 1 "
                 "WHERE r.name = 'Silver River' AND Distance(r.Shape, c.Location, 1) <= 20",
     "Distance(r.Shape, c.Location, 1)"),
    ("Which cities lie within one kilometer of the Silver River?",
     "SELECT c.name FROM cities AS c, rivers AS r WHERE r.name = 'Silver River' "
     "AND PtDistWithin(c.Location, r.Shape, 1)",
     "PtDistWithin(c.Location, r.Shape, 1)"),
    ("Which rivers are longer than 40 miles?", "SELECT name FROM rivers WHERE (GLength(Shape, 1)) > 40",
     "GLength(Shape, 1)"),
])
def test_a_stated_distance_written_unconverted_is_flagged(geo: CheckContext, question: str, sql: str,
                                                          call: str) -> None:
    (flag,) = _flags(geo, question, sql)
    said = stated_distances(question)[0][1]
    assert flag == ("distance-unit", f"the question says {said}, and the query compares {call}, which measures "
                                     "in metres, with that number")


@pytest.mark.parametrize("question,sql", [
    (NEAR_RIVER, "SELECT c.name FROM cities AS c, rivers AS r WHERE r.name = 'Silver River' "
                 "AND Distance(r.Shape, c.Location, 1) <= 20 * 1000"),
    (NEAR_RIVER, "SELECT c.name FROM cities AS c, rivers AS r WHERE r.name = 'Silver River' "
                 "AND Distance(r.Shape, c.Location, 1) <= 20000"),
    (NEAR_RIVER, "SELECT c.name FROM cities AS c, rivers AS r WHERE r.name = 'Silver River' "
                 "AND Distance(r.Shape, c.Location, 1) / 1000 <= 20"),
    ("Which rivers are longer than 40 km?", "SELECT name FROM rivers WHERE length_km > 40"),  # a column in km
    ("Which cities lie within 20 metres of the Silver River?",
     "SELECT c.name FROM cities AS c, rivers AS r WHERE r.name = 'Silver River' "
     "AND Distance(r.Shape, c.Location, 1) <= 20"),
])
def test_a_converted_distance_or_one_in_metres_is_not(geo: CheckContext, question: str, sql: str) -> None:
    assert _flags(geo, question, sql) == []
