"""The graph's vector index as the retriever's first stage (``kgsql.graph.vectors``).

No Neo4j server can be started on these machines, so the stage's own logic (which vectors it writes, when,
what it asks, how it maps and filters the answer, what happens when the server refuses) is checked against
a small in-process server that answers the same named statements by brute force. The same stage against a
real Neo4j is ``test_vectors_neo4j.py`` (run whenever one is reachable).
"""
from __future__ import annotations

import logging

import numpy as np
import pytest

from kgsql.errors import GraphError
from kgsql.graph.store import Capabilities
from kgsql.graph.vectors import GraphVectorStage, document_keys, vector_stage
from kgsql.retrieve.documents import schema_documents
from kgsql.retrieve.index import IndexStore
from kgsql.retrieve.late_interaction import mean_token_candidates
from kgsql.schema.model import Column, DatabaseSchema, Table
from kgsql.text.encoder import HashEncoder


class VectorServer:
    """Answers kgsql's vector statements as Neo4j would, nearest first by cosine, over every database."""

    def __init__(self) -> None:
        self.vectors: dict[str, tuple[str, np.ndarray]] = {}  # node key -> (database, vector)
        self.marks: dict[str, str] = {}
        self.log: list[str] = []
        self.refuse: set[str] = set()
        self.absent: set[str] = set()  # databases the graph does not hold
        self.capabilities = Capabilities.detect("Neo4j/5.26.0")

    def run(self, name: str, /, **params):  # type: ignore[no-untyped-def]
        self.log.append(name)
        if name in self.refuse:
            raise GraphError(f"graph query failed: There is no procedure with the name `{name}`")
        if name == "document_vectors_key":
            return [] if params["database"] in self.absent else [{"key": self.marks.get(params["database"])}]
        if name == "document_vectors_mark":
            self.marks[params["database"]] = params["key"]
        if name == "document_vectors_clear":
            self.vectors = {k: v for k, v in self.vectors.items() if v[0] != params["database"]}
        if name == "document_vectors_write":
            for row in params["rows"]:
                self.vectors[row["key"]] = (params["database"], np.array(row["vector"]))
        if name == "document_vectors_nearest":
            if self.marks.get(params["database"]) != params["key"]:
                return []
            keys = list(self.vectors)
            matrix = np.array([self.vectors[k][1] for k in keys])
            out = []
            for i, (v, k) in enumerate(zip(params["vectors"], params["ks"])):
                for j in np.argsort(-(matrix @ np.array(v)), kind="stable")[:k]:
                    if self.vectors[keys[j]][0] == params["database"]:
                        out.append({"query": i, "key": keys[j], "score": float(matrix[j] @ np.array(v))})
            return out
        return []

    def write(self, work):  # type: ignore[no-untyped-def]
        return work(self)


def wide_schema(name: str, tables: int = 12) -> DatabaseSchema:
    return DatabaseSchema(name, [
        Table(f"t{i}_{word}", [Column("id", "INTEGER"), Column(f"{word}_name", "TEXT"), Column(f"{word}_size", "REAL")])
        for i, word in enumerate(["city", "river", "school", "pupil", "teacher", "course", "room", "floor",
                                  "lake", "mountain", "car", "maker"][:tables])])


@pytest.fixture()
def indexes():  # type: ignore[no-untyped-def]
    store = IndexStore(HashEncoder(384), use_disk=False)
    return {name: store.get(name, schema_documents(wide_schema(name))) for name in ("alpha", "beta")}


def test_capabilities_from_the_bolt_agent() -> None:
    assert Capabilities.detect("Neo4j/5.15.0").vector_index
    assert Capabilities.detect("Neo4j/5.26.12").vector_index
    assert Capabilities.detect("Neo4j/2025.10.1").vector_index
    assert not Capabilities.detect("Neo4j/5.13.0").vector_index  # GA, but created by a procedure until 5.15
    assert not Capabilities.detect("Neo4j/4.4.30").vector_index
    assert not Capabilities.detect("Neo4j/5.11.0 compatible graph database server - Memgraph").vector_index
    assert not Capabilities.detect("ArcadeDB/25.1.1").vector_index
    assert vector_stage(VectorServer()) is not None
    arcade = VectorServer()
    arcade.capabilities = Capabilities.detect("ArcadeDB/25.1.1")
    assert vector_stage(arcade) is None


def test_writes_each_database_once_and_answers_its_own_documents(indexes) -> None:  # type: ignore[no-untyped-def]
    server = VectorServer()
    stage = GraphVectorStage(server)
    q = HashEncoder(384).encode_tokens(["the biggest lake near the mountain"], is_query=True)[0].vectors
    for name in ("alpha", "beta"):
        got = stage.candidates(name, indexes[name], q, 8)
        assert got is not None and len(got) and got.max() < indexes[name].n_docs
        # the server's documents are the index's, key for key
        assert {k for k, (db, _) in server.vectors.items() if db == name} == set(document_keys(name, indexes[name]))
    assert server.log.count("document_vectors_index") == 1
    assert server.log.count("document_vectors_mark") == 2
    # nearest first, as the in-memory stage: each query token's best documents (ties aside) and the question's
    got, memory = stage.candidates("alpha", indexes["alpha"], q, 8), mean_token_candidates(q, indexes["alpha"], 8)
    assert len(got) == len(memory)
    coarse = q @ indexes["alpha"].mean_tok.T
    for row in [*coarse, coarse.mean(axis=0)]:
        assert row[got].max() == pytest.approx(row.max())
    np.testing.assert_allclose(np.sort(coarse.mean(axis=0)[got])[-8:], np.sort(coarse.mean(axis=0))[-8:])
    writes = server.log.count("document_vectors_write")
    stage.candidates("alpha", indexes["alpha"], q, 8)
    assert server.log.count("document_vectors_write") == writes  # written once per index
    # another process finds the vectors already there (the key on the Database node): nothing is rewritten
    GraphVectorStage(server).candidates("alpha", indexes["alpha"], q, 8)
    assert server.log.count("document_vectors_write") == writes


def test_a_changed_index_is_written_again(indexes) -> None:  # type: ignore[no-untyped-def]
    server = VectorServer()
    stage = GraphVectorStage(server)
    q = HashEncoder(384).encode_tokens(["pupils per course"], is_query=True)[0].vectors
    stage.candidates("alpha", indexes["alpha"], q, 6)
    changed = IndexStore(HashEncoder(384), use_disk=False).get("alpha", schema_documents(wide_schema("alpha", 11)))
    before = server.log.count("document_vectors_write")
    stage.candidates("alpha", changed, q, 6)
    assert server.log.count("document_vectors_write") > before
    assert server.marks["alpha"] == changed.key


def test_a_refusing_server_turns_the_stage_off_with_one_warning(indexes, caplog):  # type: ignore[no-untyped-def]
    server = VectorServer()
    server.refuse.add("document_vectors_nearest")
    stage = GraphVectorStage(server)
    q = HashEncoder(384).encode_tokens(["rivers"], is_query=True)[0].vectors
    with caplog.at_level(logging.WARNING, logger="kgsql.graph.vectors"):
        assert stage.candidates("alpha", indexes["alpha"], q, 6) is None
        assert stage.candidates("alpha", indexes["alpha"], q, 6) is None
    assert stage.disabled and len(caplog.records) == 1 and "in-memory first stage" in caplog.text
    # another encoder's vectors are never written: the declared size is 384
    other = IndexStore(HashEncoder(256), use_disk=False).get("beta", schema_documents(wide_schema("beta")))
    fresh = VectorServer()
    assert GraphVectorStage(fresh).candidates("beta", other, q[:, :256], 6) is None and fresh.log == []


def test_a_schema_the_graph_does_not_hold_keeps_the_in_memory_stage(indexes) -> None:  # type: ignore[no-untyped-def]
    server = VectorServer()
    server.absent.add("alpha")
    q = HashEncoder(384).encode_tokens(["rivers"], is_query=True)[0].vectors
    stage = GraphVectorStage(server)
    assert stage.candidates("alpha", indexes["alpha"], q, 6) is None and not stage.disabled
    assert "document_vectors_write" not in server.log and "document_vectors_nearest" not in server.log


def test_a_reingest_clears_the_vectors_key_on_the_real_graph(schema_graph, make_sqlite, unique_name):  # type: ignore
    """The stage trusts the key on the Database node: a re-ingest that changes the database must drop it
    (its Table and Column nodes' properties, the written vectors among them, are replaced too)."""
    db = unique_name("vkey")
    schema_graph.ingest(make_sqlite(db, "CREATE TABLE lake (id INTEGER PRIMARY KEY, name TEXT);"))
    schema_graph.store.run("document_vectors_mark", database=db, key="index-1")
    assert schema_graph.store.run("document_vectors_key", database=db) == [{"key": "index-1"}]
    schema_graph.ingest(make_sqlite(db, "CREATE TABLE lake (id INTEGER PRIMARY KEY, name TEXT);"))  # unchanged
    assert schema_graph.store.run("document_vectors_key", database=db) == [{"key": "index-1"}]
    schema_graph.ingest(make_sqlite(db, "CREATE TABLE lake (id INTEGER PRIMARY KEY, name TEXT, depth REAL);"))
    assert schema_graph.store.run("document_vectors_key", database=db) == [{"key": None}]


def test_vectors_changed_under_the_stage_are_written_again(indexes) -> None:  # type: ignore[no-untyped-def]
    """A re-ingest (or another process) changed the key on the Database node: the question gets the in-memory
    stage's answer and the next one writes the vectors again; a dropped database's vectors go with it."""
    server = VectorServer()
    stage = GraphVectorStage(server)
    q = HashEncoder(384).encode_tokens(["lakes near mountains"], is_query=True)[0].vectors
    assert stage.candidates("alpha", indexes["alpha"], q, 6) is not None
    server.marks["alpha"] = None  # what a re-ingest of a changed database does
    assert stage.candidates("alpha", indexes["alpha"], q, 6) is None
    writes = server.log.count("document_vectors_write")
    assert stage.candidates("alpha", indexes["alpha"], q, 6) is not None
    assert server.log.count("document_vectors_write") > writes and server.marks["alpha"] == indexes["alpha"].key
    stage.forget("alpha")
    assert not any(db == "alpha" for db, _ in server.vectors.values())


def test_too_few_of_the_databases_own_documents_are_topped_up(indexes) -> None:  # type: ignore[no-untyped-def]
    """Alike databases share the index: with no over-fetch the nearest nodes are mostly the other
    database's, and the in-memory stage's candidates are added rather than scoring too few documents."""
    server = VectorServer()
    q = HashEncoder(384).encode_tokens(["the biggest lake near the mountain"], is_query=True)[0].vectors
    GraphVectorStage(server).candidates("beta", indexes["beta"], q, 8)
    got = GraphVectorStage(server, overfetch=1).candidates("alpha", indexes["alpha"], q, 8)
    assert got is not None
    assert set(mean_token_candidates(q, indexes["alpha"], 8)) <= set(got.tolist())
