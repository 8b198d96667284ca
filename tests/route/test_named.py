"""A name the question says that one database stores decides between databases its words fit alike: the
spans read as names, the choice among the first candidates, and routing over a real graph where the name is
one of hundreds of stored values no graph sample holds."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from kgsql.route.index import build_index, graph_databases
from kgsql.route.documents import phrase
from kgsql.route.named import NamedValues, database_values, named_spans
from kgsql.route.router import DatabaseRouter
from kgsql.schema.model import DatabaseSchema
from kgsql.text.encoder import get_encoder


@pytest.mark.parametrize("question, spans", [
    ("What is the zip code for Port Chelsea?", ["Port Chelsea"]),
    ("How many flights have destination ATO?", ["ATO"]),
    ("What region is Kabul in?", ["Kabul"]),
    ("Which country does Airline \"JetBlue Airways\" belong to?", ["Airline", "JetBlue Airways"]),
    ("How many singers do we have?", []),  # the first word is capitalised by the sentence, not a name
    ("Which students were born after 1948? Order by age.", []),  # so is a later sentence's
    ("What is Kyle\u2019s id?", ["Kyle"]),  # typographic apostrophes and quotes read as plain ones
    ("Find the films titled \u201cThe Godfather\u201d.", ["The Godfather"]),
    ("Which of Germany, France or Spain is largest?", ["Germany", "France", "Spain"]),  # a comma ends a name
    ("Which professionals live in a city containing the substring 'West'?", []),  # part of a value, not one
    ("List the names that start with 'Al'.", []),
])
def test_the_names_a_question_says(question: str, spans: list[str]) -> None:
    assert named_spans(question) == spans


def test_a_later_candidate_storing_the_name_is_chosen() -> None:
    named = NamedValues([["aberdeen"], ["port chelsea", "timmothy", "ward"], ["asia"], ["asia"], ["asia"], ["asia"]])
    assert named.choose("What is the zip code for Port Chelsea?", [0, 1, 2]) == (1, "Port Chelsea")
    assert named.choose("What is the zip code for Port Chelsea?", [1, 0]) is None  # the first stores it already
    assert named.choose("What is the zip code for Port Chelsea?", [0, 2, 3, 1]) is None  # beyond the first three
    assert named.choose("Find Timmothy Ward's phone.", [0, 1]) == (1, "Timmothy Ward")  # every word a value of it
    assert named.choose("How many countries are in Asia?", [0, 2]) is None  # four databases store it: says nothing
    assert NamedValues([[], ["id"]]).choose("What is the ID of the oldest dog?", [0, 1]) is None  # a generic word
    assert phrase("Port  Chelseas") == "port chelsea"


def test_a_database_that_cannot_be_read_routes_by_its_words(tmp_path: Path) -> None:
    assert database_values(DatabaseSchema("gone", path=str(tmp_path / "gone.sqlite"))) is None
    assert database_values(DatabaseSchema("graph_only")) is None
    assert database_values(DatabaseSchema("down", path="postgresql://kg@127.0.0.1:1/down", dialect="postgres")) is None
    assert not (tmp_path / "gone.sqlite").exists()  # looked at, not created
    # values unknown: never passed over for a name it may store; a database storing nothing is
    named = NamedValues([None, ["english"], []])
    assert named.choose("How many English courses are there?", [0, 1]) is None
    assert named.choose("How many English courses are there?", [2, 1]) == (1, "English")


def test_the_notes_say_which_name_chose_and_what_the_fallback_did() -> None:
    from kgsql.ask import routing_line
    from kgsql.route.router import PassedOver, Route, Routing

    chosen = Routing("Which city is the Alton airport in?", [Route("flight_2", 1.0), Route("flight_4", 2.0)], 0.5,
                     "fused", named="Alton")
    data = chosen.to_dict()
    assert not chosen.close and data["gap"] is None and data["named"] == "Alton"  # scores out of order: no gap
    assert data["notes"] == ["it stores 'Alton', which the question names; 'flight_4' fit its words better"]
    assert data["notes"][0] in routing_line(data) and data["notes"][0] in chosen.note()
    passed = Routing(chosen.question, chosen.ranked, 0.5, "fused", named="Alton",
                     passed_over=(PassedOver("flight_2", "returned no rows"),))
    assert passed.db == "flight_4" and passed.to_dict()["named"] is None and passed.chosen_by == ""
    assert passed.notes() == ["'flight_2' stores 'Alton', which the question names, and its answer returned no rows"]


TOWNS = ["Ashford", "Barnstaple", "Carlisle", "Dunbar", "Exmouth", "Falmouth", "Grantham", "Hexham"]


def _make(folder: Path) -> dict[str, str]:
    """Two databases about places: ``zones_nm`` is about zip codes, ``addresses_nm`` stores 'Port Chelsea' once
    among hundreds of addresses (a value no graph sample keeps)."""
    folder.mkdir(parents=True, exist_ok=True)
    zones = sqlite3.connect(folder / "zones_nm.sqlite")
    zones.executescript("""
        CREATE TABLE zip_codes (zip_code TEXT PRIMARY KEY, zip_code_region TEXT, mean_temperature REAL);
        INSERT INTO zip_codes VALUES ('94107', 'Bay', 14.0), ('94041', 'Peninsula', 16.5);""")
    zones.commit()
    zones.close()
    addresses = sqlite3.connect(folder / "addresses_nm.sqlite")
    addresses.execute("CREATE TABLE addresses (address_id INTEGER PRIMARY KEY, line_1 TEXT, city TEXT, "
                      "zip_postcode TEXT)")
    rows = [(i, f"{i} High Street", TOWNS[i % len(TOWNS)], f"{10000 + i}") for i in range(400)]
    rows.append((400, "7 Quay Lane", "Port Chelsea", "20999"))
    addresses.executemany("INSERT INTO addresses VALUES (?, ?, ?, ?)", rows)
    addresses.commit()
    addresses.close()
    return {"zones": "zones_nm", "addresses": "addresses_nm"}


def test_routing_follows_a_stored_name(schema_graph, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    names = _make(tmp_path / "dbs")
    schema_graph.ingest(tmp_path / "dbs")
    ours = [(n, h) for n, h in graph_databases(schema_graph.store) if n in set(names.values())]
    index = build_index(get_encoder(), ours, lambda n: schema_graph.schema(n, knowledge=False),
                        cache_dir=tmp_path / "cache")
    doc = {d.name: d for d in index.documents}[names["addresses"]]
    assert "port chelsea" in doc.values and "port chelsea" not in doc.phrases  # stored, but no sample holds it
    question = "What is the zip code for Port Chelsea?"
    router = DatabaseRouter(index, get_encoder())
    router.named = NamedValues([[] for _ in index.documents])
    assert router.route(question).db == names["zones"]  # by its words alone: the zip code database
    routing = DatabaseRouter(index, get_encoder()).route(question)
    assert routing.db == names["addresses"] and routing.named == "Port Chelsea"
    assert not routing.close and routing.tied_with is None
    data = routing.to_dict()
    assert data["named"] == "Port Chelsea" and [c["db"] for c in data["candidates"]][:2] == [
        names["addresses"], names["zones"]]
    assert data["notes"] == [f"it stores 'Port Chelsea', which the question names; '{names['zones']}' fit its "
                             f"words better"]
    assert data["notes"][0] in routing.note()
    plain = DatabaseRouter(index, get_encoder()).route("What is the mean temperature of each zip code region?")
    assert plain.db == names["zones"] and plain.named == "" and plain.to_dict()["notes"] == []
