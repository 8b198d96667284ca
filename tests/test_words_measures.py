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


@pytest.mark.parametrize("question, sql", [
    # the superlative only picks the row another ranking (an id) finds: nothing claimed
    ("What is the highest price in the latest order?",
     "SELECT MAX(price) FROM items WHERE order_id = (SELECT MAX(order_id) FROM orders)"),
    ("Which is the earliest flight?", "SELECT id FROM flights ORDER BY departure_hour LIMIT 1"),
    ("Which is the tallest building?", "SELECT name FROM buildings ORDER BY meters DESC LIMIT 1"),
    ("Which items shipped in 2020 at the latest cost most?", "SELECT name FROM items ORDER BY price DESC"),
])
def test_no_false_alarm(question: str, sql: str) -> None:
    assert other_measure(question, parse_sql(sql, "sqlite")) is None


def test_a_max_is_shown_as_written() -> None:
    found = other_measure("How much does the most recent treatment cost?",
                          parse_sql("SELECT MAX(cost_of_treatment) FROM Treatments", "sqlite"), "sqlite")
    assert found == ("most recent", "MAX(cost_of_treatment)", "price")
