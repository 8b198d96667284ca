"""``GraphStore``: the one seam between kgsql and a graph database.

It speaks Bolt through the official ``neo4j`` driver, so a real Neo4j
(self-hosted or Aura) and the embedded ArcadeDB server are driven by the same
code and the same Cypher. Statements are named files from ``cypher/``
(see ``kgsql.graph.cypher``) and every value travels as a parameter.

Where servers differ (ArcadeDB has no vector indexes), callers ask
``store.capabilities`` instead of writing a second Cypher dialect.

Two writers at once (two folder ingests) can make the server refuse a
statement or a commit as a transient conflict (ArcadeDB: "concurrent change
to the same record. Please retry"; Neo4j: a TransientError such as a
deadlock). Statements and write transactions are retried a few times with
jittered exponential backoff; a conflict that outlasts them is an
``IngestInProgressError`` saying another ingest is writing.
"""
from __future__ import annotations

import logging
import random
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

import neo4j
from neo4j import GraphDatabase
from neo4j.exceptions import (
    AuthError, ConfigurationError, Neo4jError, ServiceUnavailable, SessionExpired, TransientError,
)

from kgsql.errors import GraphError, GraphUnavailableError, IngestInProgressError
from kgsql.graph import cypher
from kgsql.graph.config import GraphConfig, resolve_config
from kgsql.graph.embedded import GRAPH_DATABASE, ROOT_USER, EmbeddedServerInfo, ensure_server

log = logging.getLogger(__name__)
T = TypeVar("T")

#: Failures that mean "the server is not there (any more)".
_CONNECTION_ERRORS = (ServiceUnavailable, SessionExpired, ConnectionError, OSError)

#: Tries of a statement or write transaction the server refused as a transient
#: conflict, and the backoff before each retry: base * 2**n seconds, capped, +-50%.
CONFLICT_ATTEMPTS = 6
CONFLICT_BASE_DELAY_S = 0.05
CONFLICT_MAX_DELAY_S = 1.0
_CONFLICT_WORDS = ("please retry", "concurrent modification", "concurrent change",
                   # two MERGEs of one new node (the ingest lock) racing on its unique key: run again,
                   # the MERGE then finds the node the other transaction created
                   "duplicated key", "duplicate key", "constraintvalidationfailed")


def is_transient_conflict(exc: BaseException) -> bool:
    """True for a server error that a retry can cure (a concurrent change, a deadlock)."""
    if isinstance(exc, TransientError):
        return True
    if isinstance(exc, Neo4jError):
        text = f"{exc.message or ''} {exc.code or ''}".lower()
        return any(word in text for word in _CONFLICT_WORDS)
    return False


#: The first Neo4j release with ``CREATE VECTOR INDEX`` (vector indexes are GA from 5.13, created by a
#: procedure until 5.15).
VECTOR_INDEX_SINCE = (5, 15)


@dataclass(frozen=True)
class Capabilities:
    """What the connected server supports beyond the Cypher kgsql always uses."""

    server: str
    vector_index: bool

    @classmethod
    def detect(cls, agent: str) -> "Capabilities":
        """From the server's Bolt agent string: Neo4j's node vector indexes (``CREATE VECTOR INDEX``,
        ``db.index.vector.queryNodes``) are there from 5.15 on (CalVer 2025.01 and later too); servers that
        speak Bolt as "Neo4j/x compatible" (ArcadeDB, Memgraph) have other vector syntaxes or none."""
        version = re.match(r"neo4j/v?(\d+)\.(\d+)", agent.strip().lower())
        foreign = any(word in agent.lower() for word in ("arcade", "compatible", "memgraph"))
        vector = bool(version) and not foreign and (int(version[1]), int(version[2])) >= VECTOR_INDEX_SINCE
        return cls(server=agent, vector_index=vector)


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

    def _retrying(self, what: str, attempt: Callable[[], T]) -> T:
        """``attempt()``, run again after a transient conflict (at most CONFLICT_ATTEMPTS tries)."""
        tries = 0
        while True:
            try:
                return attempt()
            except Neo4jError as exc:
                tries += 1
                if not is_transient_conflict(exc):
                    raise
                if tries >= CONFLICT_ATTEMPTS:
                    raise IngestInProgressError(
                        f"graph {what} at {self.uri} kept colliding with another writer (concurrent changes to "
                        f"the same records) after {tries} tries: another ingest is writing; retry when it finishes"
                    ) from exc
                delay = min(CONFLICT_BASE_DELAY_S * 2 ** (tries - 1), CONFLICT_MAX_DELAY_S) * random.uniform(0.5, 1.5)
                log.debug("graph %s conflicted (%s); retry %d in %.2fs", what, _short_message(exc), tries, delay)
                time.sleep(delay)

    def run_text(self, query: str, /, **params: Any) -> list[dict[str, Any]]:
        """Run a Cypher string in an auto-commit transaction (reads and schema)."""

        def attempt() -> list[dict[str, Any]]:
            with self._driver.session(database=self.database) as session:
                return [r.data() for r in session.run(query, **params)]

        try:
            return self._retrying("query", attempt)
        except _CONNECTION_ERRORS as exc:
            raise GraphUnavailableError(f"graph server at {self.uri} went away: {_short(exc)}") from exc
        except Neo4jError as exc:
            raise GraphError(f"graph query failed: {exc.message}") from exc

    def run(self, name: str, /, **params: Any) -> list[dict[str, Any]]:
        """Run the named statement from ``cypher/`` and return its records as dicts."""
        return self.run_text(cypher.statement(name), **params)

    def write(self, work: Callable[[Tx], T]) -> T:
        """Run ``work`` in one explicit transaction: all of it commits or none does.

        After a transient conflict the transaction is rolled back and ``work``
        runs again in a fresh one, so it must not depend on side effects of an
        earlier try.
        """

        def attempt() -> T:
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

        try:
            return self._retrying("write", attempt)
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


def _short_message(exc: Neo4jError) -> str:
    return " ".join(str(exc.message or exc.code or type(exc).__name__).split())[:200]


def _short(exc: BaseException) -> str:
    """The first line of ``exc``, completed by the reason the driver puts on later lines (its first
    line alone ends at a colon: "Couldn't connect to host:port (resolved to ...):")."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    first = lines[0]
    if first.endswith(":") and len(lines) > 1:
        reasons = re.findall(r"\(reason ([^)]*\)?)\)", " ".join(lines[1:]))
        first = f"{first} {reasons[0] if reasons else lines[1]}"
    return first


def iter_batches(rows: list[T], size: int) -> Iterator[list[T]]:
    """Fixed-size slices, so huge databases are written in bounded UNWIND batches."""
    for start in range(0, len(rows), size):
        yield rows[start : start + size]
