"""Neo4j's vector index as the retriever's first stage on wide databases (issue 33).

On a database of more token rows than the retriever's ``exact_limit`` the exact
MaxSim runs only on candidate documents; in memory they come from each
document's mean-token vector (``retrieve.late_interaction``). On a Neo4j server
(5.15 or later: ``store.capabilities.vector_index``) those same vectors are
written once per retrieval index onto ``SchemaDocument`` nodes of their own
(keyed as the Table and Column nodes are; the index's key is recorded on the
Database node, which a re-ingest that changes the database clears), and the
candidates come from the server's vector index: one round trip per question,
the nearest documents of each query token and of the question's mean. The
late-interaction re-rank on top is unchanged. The embedded ArcadeDB server has
no such index and keeps the in-memory path.

Any trouble with the server (an older release, a refused statement) turns this
stage off for the process with one warning: the in-memory first stage answers.
"""
from __future__ import annotations

import logging
import threading
from typing import Any

import numpy as np

from kgsql.errors import GraphError
from kgsql.graph.keys import column_key, table_key
from kgsql.retrieve.index import TokenIndex
from kgsql.retrieve.late_interaction import mean_token_candidates

log = logging.getLogger(__name__)

#: The vector size ``cypher/document_vectors_index.cypher`` declares (all-MiniLM-L6-v2, the shipped encoder).
VECTOR_DIMENSIONS = 384
#: Vectors written per statement.
WRITE_BATCH = 500
#: Seconds to wait for a new vector index to come online.
INDEX_WAIT_S = 300


class GraphVectorStage:
    """Candidate documents from the graph server's vector index (``retrieve.late_interaction.FirstStage``).

    ``overfetch``: the index holds every database of the graph, so each query vector asks for that many
    times the documents it needs and those of other databases drop out; when fewer than needed are left
    (several alike databases), the in-memory stage's candidates are added."""

    def __init__(self, store: Any, *, overfetch: int = 4) -> None:
        self.store = store
        self.overfetch = overfetch
        self.disabled = False
        self._written: dict[str, str] = {}  # database -> retrieval index key whose vectors the graph holds
        self._positions: dict[str, tuple[str, dict[str, int]]] = {}  # database -> (index key, node key -> doc)
        self._index_ready = False
        self._lock = threading.Lock()

    def candidates(self, database: str, index: TokenIndex, q: np.ndarray, k: int) -> np.ndarray | None:
        """About ``k`` document ids of ``index`` near ``q``'s token vectors; None when the graph cannot tell."""
        q = q[np.linalg.norm(q, axis=1) > 0]  # a cosine index refuses a zero vector
        if self.disabled or index.mean_tok.shape[1] != VECTOR_DIMENSIONS or len(q) == 0:
            return None
        per_token = max(1, k // len(q))
        mean = q.mean(axis=0)
        vectors = [*q.astype(float).tolist(), (mean / (np.linalg.norm(mean) or 1.0)).astype(float).tolist()]
        wanted = [per_token] * len(q) + [k]
        try:
            if not self._ensure_written(database, index):
                return None  # a schema the graph does not hold
            rows = self.store.run("document_vectors_nearest", vectors=vectors, ks=[n * self.overfetch for n in wanted],
                                  database=database, key=index.key)
        except GraphError as exc:
            self.disabled = True
            log.warning("the graph's vector index cannot serve the retriever (%s); using the in-memory first stage",
                        exc)
            return None
        if not rows:  # another process or a re-ingest changed the vectors: look again next time
            with self._lock:
                self._written.pop(database, None)
            return None
        position = self._document_positions(database, index)
        taken = [0] * len(vectors)
        out: set[int] = set()
        for row in rows:  # ordered by query, then score
            i, doc = int(row["query"]), position.get(row["key"])
            if doc is not None and taken[i] < wanted[i]:
                taken[i] += 1
                out.add(doc)
        found = np.array(sorted(out), dtype=np.int64)
        return found if sum(taken) >= sum(wanted) else np.union1d(found, mean_token_candidates(q, index, k))

    def _document_positions(self, database: str, index: TokenIndex) -> dict[str, int]:
        """Node key -> document id of ``index``, made once per index (a wide database has tens of thousands)."""
        known = self._positions.get(database)
        if known is None or known[0] != index.key:
            known = index.key, {key: i for i, key in enumerate(document_keys(database, index))}
            self._positions[database] = known
        return known[1]

    def forget(self, database: str) -> None:
        """Remove ``database``'s vectors from the graph (it was dropped)."""
        with self._lock:
            self._written.pop(database, None)
            try:
                self.store.run("document_vectors_clear", database=database)
            except GraphError as exc:
                log.warning("could not remove the vectors of %s from the graph (%s)", database, exc)

    def _ensure_written(self, database: str, index: TokenIndex) -> bool:
        """Write ``index``'s document vectors to the graph unless it already holds them (once per index key).
        False: the graph has no such database."""
        if self._written.get(database) == index.key:
            return True
        with self._lock:  # one writer; questions on databases already written do not wait (above)
            if self._written.get(database) == index.key:
                return True
            if not self._index_ready:
                self.store.run("document_vectors_constraint")
                self.store.run("document_vectors_index")
                self.store.run("document_vectors_await", timeout_s=INDEX_WAIT_S)
                self._index_ready = True
            rows = self.store.run("document_vectors_key", database=database)
            if not rows:
                return False
            if rows[0]["key"] != index.key:
                self.store.run("document_vectors_clear", database=database)
                keys = document_keys(database, index)
                for lo in range(0, len(keys), WRITE_BATCH):
                    batch = [{"key": key, "vector": index.mean_tok[lo + j].astype(float).tolist()}
                             for j, key in enumerate(keys[lo:lo + WRITE_BATCH])]
                    self.store.write(lambda tx, batch=batch: tx.run("document_vectors_write", rows=batch,
                                                                    database=database))
                self.store.run("document_vectors_mark", database=database, key=index.key)
                log.info("wrote %d document vectors of %s to the graph's vector index", len(keys), database)
            self._written[database] = index.key
            return True


def document_keys(database: str, index: TokenIndex) -> list[str]:
    """The graph node key of each document of ``index``, in its order."""
    return [table_key(database, table) if column is None else column_key(database, table, column)
            for table, column in index.doc_keys]


def vector_stage(store: Any) -> GraphVectorStage | None:
    """The graph's vector index as a first stage where the server has one (Neo4j 5.15+), else None."""
    capabilities = getattr(store, "capabilities", None)
    return GraphVectorStage(store) if capabilities is not None and capabilities.vector_index else None
