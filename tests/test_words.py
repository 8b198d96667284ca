"""Words of identifiers and questions: the same word in another number, and a name a question says."""
from __future__ import annotations

import pytest

from kgsql.text.words import same_words, says_name


@pytest.mark.parametrize("a, b, same", [
    ("city", "cities", True), ("course", "Courses", True), ("match", "matches", True), ("status", "statuses", True),
    ("river_city", "RiverCities", True), ("class", "classes", True),
    ("city", "river_cities", False), ("person", "people", False), ("class", "clas", False), ("", "", False),
])
def test_same_words(a: str, b: str, same: bool) -> None:
    assert same_words(a, b) is same


@pytest.mark.parametrize("text, name, said", [
    ("What is the name of the event?", "event", True), ("List all tv series.", "TV_series", True),
    ("Which student pets are there?", "Student_Pets", True), ("the events' names", "event", True),
    ("List the car maker's full name.", "car_names", False),  # scattered words name nothing
    ("Which series is on tv?", "TV_series", False), ("", "event", False),
])
def test_says_name(text: str, name: str, said: bool) -> None:
    assert says_name(text, name) is said
