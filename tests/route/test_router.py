"""Routing over a real graph: the right database for distinct questions, a close call named as one, the
database index cached by content (only a changed database is encoded again), compounds segmented."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from route_databases import CLOSE_CALL, QUESTIONS, make_databases

from kgsql.errors import InputError
from kgsql.route.documents import database_document, segment
from kgsql.route.index import DatabaseIndex, build_index, graph_databases
from kgsql.route.router import DatabaseRouter
from kgsql.text.encoder import get_encoder


@pytest.fixture(scope="module")
def routed(schema_graph, tmp_path_factory):  # type: ignore[no-untyped-def]
    """The four fixture databases ingested as a folder, and the index over just them."""
    folder = tmp_path_factory.mktemp("route_dbs")
    names = make_databases(folder)
    report = schema_graph.ingest(folder)
    assert set(names.values()) <= set(schema_graph.databases()), report
    ours = [(n, h) for n, h in graph_databases(schema_graph.store) if n in set(names.values())]
    cache = tmp_path_factory.mktemp("route_cache")
    index = build_index(get_encoder(), ours, lambda n: schema_graph.schema(n, knowledge=False), cache_dir=cache)
    return names, ours, index, cache, folder


def test_distinct_questions_go_to_their_database(routed) -> None:  # type: ignore[no-untyped-def]
    names, _ours, index, _cache, _folder = routed
    router = DatabaseRouter(index, get_encoder())
    for question, topic in QUESTIONS.items():
        routing = router.route(question)
        assert routing.db == names[topic], (question, routing.to_dict())
        assert not routing.close and routing.tied_with is None
    for mode in ("dense", "bm25", "exact"):  # each signal alone gets the plain ones right too
        router.mode = mode
        assert router.route("How much honey did each hive give?").db == names["apiary"]


def test_a_question_naming_nothing_says_so(routed) -> None:  # type: ignore[no-untyped-def]
    _names, _ours, index, _cache, _folder = routed
    router = DatabaseRouter(index, get_encoder())
    vague = router.route("xyzzy plugh?")
    assert vague.matched is False and vague.to_dict()["matched"] is False and "by meaning alone" in vague.note()
    assert router.route("How much honey did each hive give?").matched is True


def test_a_close_call_names_both_databases(routed) -> None:  # type: ignore[no-untyped-def]
    names, _ours, index, _cache, _folder = routed
    routing = DatabaseRouter(index, get_encoder()).route(CLOSE_CALL)
    pair = {names["observatory_north"], names["observatory_south"]}
    assert routing.close and {routing.db, routing.tied_with} == pair
    data = routing.to_dict()
    assert data["close"] is True and data["tied_with"] == routing.tied_with and data["db"] == routing.db
    assert [c["db"] for c in data["candidates"][:2]] == [routing.db, routing.tied_with]
    assert "close call" in routing.note() and routing.tied_with in routing.note()


def test_the_index_is_cached_by_content(routed, schema_graph) -> None:  # type: ignore[no-untyped-def]
    names, ours, index, cache, folder = routed
    assert index.encoded == 4
    load_nothing = lambda name: pytest.fail(f"{name} was read again")  # noqa: E731
    again = build_index(get_encoder(), ours, load_nothing, cache_dir=cache)
    assert again.encoded == 0 and again.names == index.names
    assert (again.table_vectors.shape == index.table_vectors.shape)
    assert all(p.stat().st_mode & 0o077 == 0 for p in cache.iterdir())  # private state
    changed = folder / f"{names['lighthouse']}.sqlite"
    with sqlite3.connect(changed) as conn:
        conn.execute("CREATE TABLE fog_horns (horn_id INTEGER PRIMARY KEY, lighthouse_id INTEGER, decibels REAL)")
    schema_graph.ingest(changed)
    now = [(n, h) for n, h in graph_databases(schema_graph.store) if n in set(names.values())]
    rebuilt = build_index(get_encoder(), now, lambda n: schema_graph.schema(n, knowledge=False), cache_dir=cache)
    assert rebuilt.encoded == 1  # only the changed database
    assert DatabaseRouter(rebuilt, get_encoder()).route("How loud are the fog horns?").db == names["lighthouse"]


def test_compound_names_are_segmented(routed, schema_graph) -> None:  # type: ignore[no-untyped-def]
    vocabulary = frozenset({"country", "language", "high", "school", "year", "life"})
    assert segment("countrylanguage", vocabulary) == ["country", "language"]
    assert segment("highschooler", vocabulary) == ["high", "schooler"]
    assert segment("indepyear", vocabulary) == ["indep", "year"]
    assert segment("country", vocabulary) == ["country"] and segment("zzzzqqqq", vocabulary) == ["zzzzqqqq"]
    names = routed[0]
    doc = database_document(schema_graph.schema(names["apiary"]), "digest")
    assert doc.phrases["honey harvest"] == "table" and doc.phrases["buckfast"] == "value"
    assert "hive" in doc.terms and any("queen bee" in t for t in doc.tables)


def test_no_database_is_one_clear_error() -> None:
    empty = DatabaseIndex([], get_encoder().encode_pooled(["x"])[:0], __import__("numpy").zeros(0, int))
    with pytest.raises(InputError, match="no database to route to"):
        DatabaseRouter(empty, get_encoder()).route("anything?")
    with pytest.raises(InputError, match="unknown routing mode"):
        DatabaseRouter(empty, get_encoder(), mode="psychic")


def test_a_stale_cache_entry_is_not_used(tmp_path: Path, schema_graph, routed) -> None:  # type: ignore[no-untyped-def]
    names, ours, _index, cache, _folder = routed
    for entry in cache.iterdir():
        entry.write_bytes(b"not an npz")
    rebuilt = build_index(get_encoder(), ours, lambda n: schema_graph.schema(n, knowledge=False), cache_dir=cache)
    assert rebuilt.encoded == len(ours)
