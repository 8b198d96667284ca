"""The retriever's first stage from a real Neo4j's vector index (``kgsql.graph.vectors``).

Runs whenever the test graph is a server with node vector indexes (Neo4j 5.15+): ``test_neo4j_docker.py``
points the suite at one when Docker is reachable. On the embedded ArcadeDB server it skips with one line.
"""
from __future__ import annotations

import numpy as np
import pytest

from kgsql.retrieve import SchemaRetriever
from kgsql.retrieve.late_interaction import mean_token_candidates
from kgsql.text.encoder import HashEncoder

WORDS = ["city", "river", "school", "pupil", "teacher", "course", "room", "floor", "lake", "mountain"]
WIDE = "\n".join(f"CREATE TABLE t_{w} (id INTEGER PRIMARY KEY, {w}_name TEXT, {w}_size REAL);" for w in WORDS)


def test_candidates_come_from_the_servers_vector_index(schema_graph, make_sqlite, unique_name):
    capabilities = schema_graph.store.capabilities
    if not capabilities.vector_index:
        pytest.skip(f"the test graph ({capabilities.server}) has no vector index; Neo4j 5.15+ runs this")
    db = unique_name("wide")
    schema_graph.ingest(make_sqlite(db, WIDE))
    schema = schema_graph.schema(db)
    stage = schema_graph.vector_stage
    retriever = SchemaRetriever(HashEncoder(384), use_cache=False, exact_limit=0, candidates=8, first_stage=stage)
    question = "How big is the largest lake near a mountain?"
    selection = retriever.select(schema, question)
    assert not stage.disabled and "t_lake" in selection.tables
    index = retriever.prepare(schema).index
    q = retriever.encode_question(question).vectors
    got = stage.candidates(db, index, q, 8)
    assert got is not None and len(got) >= len(mean_token_candidates(q, index, 8))  # topped up if the index missed
    coarse = q @ index.mean_tok.T
    for row in [*coarse, coarse.mean(axis=0)]:  # nearest first, as the in-memory stage (ties aside)
        assert row[got].max() == pytest.approx(row.max(), abs=1e-4)
    # a re-ingest of a changed database clears the vectors' key: the next question writes them again
    schema_graph.ingest(make_sqlite(db, WIDE + "\nCREATE TABLE t_car (id INTEGER PRIMARY KEY, car_name TEXT);"))
    assert schema_graph.store.run("document_vectors_key", database=db)[0]["key"] is None
    changed = schema_graph.schema(db)
    assert "t_car" in retriever.select(changed, "Which car names are there?").tables
    assert schema_graph.store.run("document_vectors_key", database=db)[0]["key"] == retriever.prepare(changed).index.key
    index = retriever.prepare(changed).index
    assert np.all(stage.candidates(db, index, q, 8) < index.n_docs)
