"""GraphSchemas: one schema object per database, read again after a re-ingest when asked to follow it."""
from __future__ import annotations

import pytest

from kgsql.errors import UnknownNameError
from kgsql.schema.sources import GraphSchemas


def test_follow_ingest_rereads_only_what_changed(schema_graph, make_sqlite, unique_name) -> None:  # type: ignore[no-untyped-def]
    name = unique_name("follow")
    schema_graph.ingest(make_sqlite(name, "CREATE TABLE a (id INTEGER PRIMARY KEY, x TEXT);"), name=name)
    plain, following = GraphSchemas(schema_graph), GraphSchemas(schema_graph, follow_ingest=True)
    first = following(name)
    assert following(name) is first and plain(name) is plain(name)  # read once, the same object after
    schema_graph.ingest(make_sqlite(name, "CREATE TABLE a (id INTEGER PRIMARY KEY, x TEXT); "
                                          "CREATE TABLE b (id INTEGER PRIMARY KEY);"), name=name)
    assert [t.name for t in following(name).tables] == ["a", "b"]  # re-ingested: read again
    assert [t.name for t in plain(name).tables] == ["a"]  # a plain source keeps what it read
    again = following(name)
    following.forget(name)
    assert following(name) is not again
    with pytest.raises(UnknownNameError):
        following(unique_name("absent"))
