"""``GraphStore``: the one seam between kgsql and a graph database.

It speaks Bolt through the official ``neo4j`` driver, so a real Neo4j
(self-hosted or Aura) and the embedded ArcadeDB server are driven by the same
code and the same Cypher. Statements are named files from ``cypher/``
(see ``kgsql.graph.cypher``) and every value travels as a parameter.

Where servers differ (ArcadeDB has no vector indexes), callers ask
``store.capabilities`` instead of writing a second Cypher dialect.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

import neo4j
from neo4j import GraphDatabase
from neo4j.exceptions import AuthError, ConfigurationError, Neo4jError, ServiceUnavailable, SessionExpired

from kgsql.errors import GraphError, GraphUnavailableError
from kgsql.graph import cypher
from kgsql.graph.config import GraphConfig, resolve_config
from kgsql.graph.embedded import GRAPH_DATABASE, ROOT_USER, EmbeddedServerInfo, ensure_server

log = logging.getLogger(__name__)
T = TypeVar("T")

#: Failures that mean "the server is not there (any more)".
_CONNECTION_ERRORS = (ServiceUnavailable, SessionExpired, ConnectionError, OSError)


@dataclass(frozen=True)
class Capabilities:
    """What the connected server supports beyond the Cypher kgsql always uses."""

    server: str
    vector_index: bool

    @classmethod
    def detect(cls, agent: str) -> "Capabilities":
        is_neo4j = agent.lower().startswith("neo4j/") and "arcade" not in agent.lower()
        return cls(server=agent, vector_index=is_neo4j)


class Tx:
    """A transaction handle that runs named statements with parameters."""

    def __init__(self, tx: neo4j.ManagedTransaction | neo4j.Transaction):
        self._tx = tx

    def run(self, name: str, /, **params: Any) -> list[dict[str, Any]]:
        return [record.data() for record in self._tx.run(cypher.statement(name), **params)]


class GraphStore:
    """A connection to one graph (one Bolt server and database)."""

    def __init__(self, config: GraphConfig, *, embedded_root: Path | None = None):
        self.config = config
        self.embedded: EmbeddedServerInfo | None = None
        if config.is_embedded:
            self.embedded = ensure_server(embedded_root)
            uri, auth, database = self.embedded.uri, (ROOT_USER, self.embedded.password), GRAPH_DATABASE
        else:
            uri = config.uri
            auth = (config.user or "neo4j", config.password or "")
            database = config.database
        self.uri = uri
        self.database = database
        try:
            self._driver = GraphDatabase.driver(uri, auth=auth, connection_timeout=10.0, max_transaction_retry_time=5.0)
            self._driver.verify_connectivity()
            agent = self._driver.get_server_info().agent
        except AuthError as exc:
            raise GraphUnavailableError(f"graph server {uri} refused the credentials for user '{auth[0]}'") from exc
        except _CONNECTION_ERRORS as exc:
            raise GraphUnavailableError(f"cannot reach graph server at {uri}: {_short(exc)}") from exc
        except (ValueError, ConfigurationError) as exc:  # malformed URI or scheme
            raise GraphUnavailableError(f"invalid graph URI '{uri}': {exc}") from exc
        self.capabilities = Capabilities.detect(str(agent))
        self._ensure_constraints()

    @classmethod
    def open(
        cls,
        uri: str | None = None,
        *,
        user: str | None = None,
        password: str | None = None,
        database: str | None = None,
        embedded_root: Path | None = None,
    ) -> "GraphStore":
        """Connect to ``uri`` (or env/config), else to the embedded server."""
        return cls(resolve_config(uri, user, password, database), embedded_root=embedded_root)

    def _ensure_constraints(self) -> None:
        for stmt in cypher.statements("constraints"):
            self.run_text(stmt)

    def run_text(self, query: str, /, **params: Any) -> list[dict[str, Any]]:
        """Run a Cypher string in an auto-commit transaction (reads and schema)."""
        try:
            with self._driver.session(database=self.database) as session:
                return [r.data() for r in session.run(query, **params)]
        except _CONNECTION_ERRORS as exc:
            raise GraphUnavailableError(f"graph server at {self.uri} went away: {_short(exc)}") from exc
        except Neo4jError as exc:
            raise GraphError(f"graph query failed: {exc.message}") from exc

    def run(self, name: str, /, **params: Any) -> list[dict[str, Any]]:
        """Run the named statement from ``cypher/`` and return its records as dicts."""
        return self.run_text(cypher.statement(name), **params)

    def write(self, work: Callable[[Tx], T]) -> T:
        """Run ``work`` in one explicit transaction: all of it commits or none does."""
        try:
            with self._driver.session(database=self.database) as session:
                tx = session.begin_transaction()
                try:
                    result = work(Tx(tx))
                    tx.commit()
                    return result
                except BaseException:
                    if not tx.closed():
                        try:
                            tx.rollback()
                        except Exception:  # the server may be gone
                            pass
                    raise
        except _CONNECTION_ERRORS as exc:
            raise GraphUnavailableError(f"graph server at {self.uri} went away: {_short(exc)}") from exc
        except Neo4jError as exc:
            raise GraphError(f"graph write failed: {exc.message}") from exc

    def close(self) -> None:
        self._driver.close()

    def __enter__(self) -> "GraphStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"GraphStore(uri={self.uri!r}, server={self.capabilities.server!r})"


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def iter_batches(rows: list[T], size: int) -> Iterator[list[T]]:
    """Fixed-size slices, so huge databases are written in bounded UNWIND batches."""
    for start in range(0, len(rows), size):
        yield rows[start : start + size]
