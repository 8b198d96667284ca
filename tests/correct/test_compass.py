""""The westernmost X" ordered by its shape's extreme on that side (``order_by_compass``), on the shipped
SpatiaLite example and in PostGIS's forms."""
from __future__ import annotations

from pathlib import Path

import pytest

from kgsql.correct import CheckContext
from kgsql.correct.compass import order_by_compass
from kgsql.schema.model import DatabaseSchema

WRONG_END = "SELECT name FROM provinces ORDER BY X(Shape) DESC LIMIT 1"  # X of a polygon: NULL on SpatiaLite


def _reorder(dbs: dict[str, tuple[Path, DatabaseSchema]], question: str, sql: str,
             dialect: str | None = None) -> str | None:
    with CheckContext(dbs["geo"][1], question, dialect=dialect) as ctx:
        return order_by_compass(ctx, sql)


@pytest.mark.parametrize("question,order", [
    ("Which province is the westernmost?", "ORDER BY MbrMinX(Shape) ASC NULLS LAST"),
    ("Which province lies furthest east?", "ORDER BY MbrMaxX(Shape) DESC"),
    ("Name the most northern province.", "ORDER BY MbrMaxY(Shape) DESC"),
    ("Which is the southernmost province?", "ORDER BY MbrMinY(Shape) ASC NULLS LAST"),
])
def test_the_word_names_the_side_and_the_end(dbs: dict[str, tuple[Path, DatabaseSchema]], question: str,
                                             order: str) -> None:
    assert _reorder(dbs, question, WRONG_END) == f"SELECT name FROM provinces {order} LIMIT 1"


def test_the_reordered_query_answers_the_westernmost_shape(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    with CheckContext(dbs["geo"][1], "q") as ctx:
        every = ctx.execute("SELECT name, MbrMinX(Shape) FROM provinces").rows
        assert ctx.execute(WRONG_END).rows and ctx.execute("SELECT X(Shape) FROM provinces").rows[0] == (None,)
        reordered = _reorder(dbs, "Which province is the westernmost?", WRONG_END)
        assert reordered is not None
        west = ctx.execute(reordered).rows
    assert west == [(min(every, key=lambda row: row[1])[0],)]


def test_a_point_through_its_centroid_and_the_postgis_forms(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    assert _reorder(dbs, "Which city is the easternmost?",
                    "SELECT c.name FROM cities AS c ORDER BY ST_X(c.Location) LIMIT 1") == (
        "SELECT c.name FROM cities AS c ORDER BY MbrMaxX(c.Location) DESC LIMIT 1")
    assert _reorder(dbs, "Which province is the northernmost?",
                    "SELECT name FROM provinces ORDER BY Y(Centroid(Shape)) LIMIT 1", dialect="postgis") == (
        "SELECT name FROM provinces ORDER BY ST_YMax(Shape) DESC NULLS LAST LIMIT 1")


@pytest.mark.parametrize("question,sql", [
    ("Which province is the largest?", WRONG_END),                              # no compass word
    ("Is the westernmost city east of the easternmost river?", WRONG_END),       # two directions
    ("Which province is the westernmost?", "SELECT name FROM provinces ORDER BY population DESC LIMIT 1"),
    ("Which province is the westernmost?", "SELECT name FROM provinces ORDER BY X(Shape), name LIMIT 1"),
])
def test_left_alone(dbs: dict[str, tuple[Path, DatabaseSchema]], question: str, sql: str) -> None:
    assert _reorder(dbs, question, sql) is None
