"""What a superlative asks to measure and what a name measures (:mod:`kgsql.text.measures`), and the
``other-measure`` flag read from them: a mismatch is claimed only where both sides are plain."""
from __future__ import annotations

import pytest

from kgsql.generate.flags import other_measure
from kgsql.sql.names import parse_sql
from kgsql.text.measures import asked_quantities, named_quantity


def test_plain_superlatives_fix_a_quantity_and_vague_ones_none() -> None:
    assert asked_quantities("Which river is the longest?") == (["longest"], frozenset({"length", "duration", "time"}))
    assert asked_quantities("Name the most  recent and the cheapest show.")[0] == ["most recent", "cheapest"]
    assert asked_quantities("Which city is the largest?") == ([], frozenset())  # area? population? left out
    assert asked_quantities("the highest score") == ([], frozenset())


def test_names_measure_one_quantity_or_none() -> None:
    assert named_quantity(["length_km"]) == "length"
    assert named_quantity(["GLength", "Shape"]) == "length"
    assert named_quantity(["ST_Area", "geom"]) == "area"
    assert named_quantity(["Birth_Date"]) == "time"
    assert named_quantity(["length", "area"]) is None  # a ratio measures neither
    assert named_quantity(["name"]) is None


@pytest.mark.parametrize("question, sql, flagged", [
    ("Which river is the longest?", "SELECT name FROM rivers ORDER BY Area(shape, 1) DESC LIMIT 1", True),
    ("Which river is the longest?", "SELECT name FROM rivers ORDER BY length_km DESC LIMIT 1", False),
    ("Which river is the longest?", "SELECT name FROM rivers ORDER BY GLength(shape, 1) DESC LIMIT 1", False),
    ("Which river is the longest?", "SELECT name, ST_Length(shape) AS l FROM rivers ORDER BY l DESC LIMIT 1", False),
    ("Which river is the longest?", "SELECT name, Area(shape) AS a FROM rivers ORDER BY a DESC LIMIT 1", True),
    ("What is the weight of the shortest person?", "SELECT weight FROM people ORDER BY height LIMIT 1", False),
    ("Who is the oldest singer?", "SELECT name FROM singer WHERE age = (SELECT max(age) FROM singer)", False),
    ("Who is the oldest singer?", "SELECT name FROM singer ORDER BY price DESC LIMIT 1", True),
    ("Who is the oldest singer?", "SELECT name FROM singer ORDER BY count(*) DESC LIMIT 1", False),  # not plain
    ("Which city is the largest?", "SELECT name FROM city ORDER BY founded DESC LIMIT 1", False),  # vague asked
])
def test_other_measure(question: str, sql: str, flagged: bool) -> None:
    found = other_measure(question, parse_sql(sql, "sqlite"))
    assert bool(found) is flagged, found
