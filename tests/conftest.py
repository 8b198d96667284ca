"""Shared fixtures: a real embedded Bolt server for the test session, real SQLite files."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path
from contextlib import contextmanager
from typing import Any, Callable, ContextManager, Iterator

import pytest
from hypothesis import settings

# Property tests have no per-example deadline: a machine loaded by an evaluation run must not fail them. The
# profile in force stays the parent (Hypothesis's derandomized "ci" profile where CI is set).
settings.register_profile("kgsql", parent=settings.default, deadline=None)
settings.load_profile("kgsql")

REPO = Path(__file__).resolve().parents[1]
# llm_stub (a real OpenAI-compatible HTTP endpoint answering from a script) for tests in any folder
sys.path.insert(0, str(Path(__file__).resolve().parent / "llm"))
EXAMPLE_DB = REPO / "examples" / "geo" / "geo.sqlite"
sys.path.insert(0, str(Path(__file__).resolve().parent))
pytest_plugins = ["strict_skips"]  # KGSQL_STRICT_TESTS=1 (.ci/run): a skip for a missing install fails


def pytest_report_header() -> str:
    from timing import load_factor

    return f"kgsql: wall-clock bounds scaled by the load factor {load_factor():.2f} (tests/timing.py)"


@pytest.fixture(scope="session")
def graph_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Folder of the embedded ArcadeDB server started for this test session."""
    from kgsql.graph.embedded import ensure_server, stop_server

    root = tmp_path_factory.mktemp("graph")
    ensure_server(root)
    yield root
    stop_server(root)


@pytest.fixture(scope="session")
def schema_graph(graph_root: Path):  # type: ignore[no-untyped-def]
    """A SchemaGraph on the session's embedded server, or on the real Neo4j named by
    ``KGSQL_TEST_GRAPH_URI`` (set by tests/graph/test_neo4j_docker.py)."""
    from kgsql.schema_graph import SchemaGraph

    uri = os.environ.get("KGSQL_TEST_GRAPH_URI")
    if uri:
        graph = SchemaGraph.open(uri, user=os.environ.get("KGSQL_TEST_GRAPH_USER", "neo4j"),
                                 password=os.environ.get("KGSQL_TEST_GRAPH_PASSWORD"))
    else:
        graph = SchemaGraph.open(embedded_root=graph_root)
    yield graph
    graph.close()


@pytest.fixture
def unique_name() -> Callable[[str], str]:
    """Database names unique per test, so tests sharing the graph never collide."""
    return lambda prefix: f"{prefix}_{uuid.uuid4().hex[:8]}"


@pytest.fixture
def make_sqlite(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write a SQLite file from a SQL script; returns its path."""

    def make(name: str, script: str) -> Path:
        path = tmp_path / f"{name}.sqlite"
        path.unlink(missing_ok=True)
        conn = sqlite3.connect(path)
        conn.executescript(script)
        conn.commit()
        conn.close()
        return path

    return make


@pytest.fixture(scope="session")
def example_db() -> Path:
    """The shipped example SpatiaLite database (built if a checkout lacks it)."""
    if not EXAMPLE_DB.exists():
        from examples.make_example_db import build  # pragma: no cover

        build(EXAMPLE_DB)
    return EXAMPLE_DB


@pytest.fixture
def cli_env(graph_root: Path) -> dict[str, str]:
    """Environment for CLI subprocesses: the session's embedded graph, no stray config."""
    env = dict(os.environ)
    env["KGSQL_GRAPH_DIR"] = str(graph_root)
    env["KGSQL_NO_SERVICE"] = "1"  # a developer's running `kgsql serve` must not answer the tests' asks
    for var in ("KGSQL_GRAPH_URI", "NEO4J_URI", "KGSQL_CONFIG"):
        env.pop(var, None)
    return env


@pytest.fixture
def stub_env(cli_env: dict[str, str], tmp_path: Path) -> Callable[..., dict[str, str]]:
    """``stub_env(stub, **more)``: ``cli_env`` whose model is ``stub`` (an ``llm_stub.StubServer``), with its
    own cache folder and the response cache off."""
    def make(stub: object, **more: str) -> dict[str, str]:
        env = dict(cli_env, KGSQL_LLM_BASE_URL=stub.base_url, KGSQL_LLM_MODEL="stub-model",  # type: ignore[attr-defined]
                   KGSQL_LLM_CACHE="off", KGSQL_CACHE_DIR=str(tmp_path / "cache"))
        env.update(more)
        return env

    return make


def ingest_cli(env: dict[str, str], path: Path, name: str) -> None:
    """``python -m kgsql.ingest PATH --name NAME`` as a user runs it; must succeed."""
    run = subprocess.run([sys.executable, "-m", "kgsql.ingest", str(path), "--name", name], capture_output=True,
                         text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr


@pytest.fixture
def cli_ingest() -> Callable[[dict[str, str], Path, str], None]:
    return ingest_cli


class GeoAsk:
    """``kgsql ask`` as a user runs it on the example database ingested as ``db``; ``stub``: its model."""

    def __init__(self, env: dict[str, str], db: str, stub: Any) -> None:
        self.env, self.db, self.stub = env, db, stub

    def __call__(self, question: str, *flags: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "kgsql.ask", question, "--db", self.db, *flags],
                              capture_output=True, text=True, env=self.env, timeout=300)


@pytest.fixture
def geo_ask(stub_env: Callable[..., dict[str, str]], example_db: Path) -> Callable[[str, str], ContextManager[GeoAsk]]:
    """``with geo_ask(SQL, NAME) as ask:`` the example database ingested as NAME, and ``ask(question, *flags)``
    running ``python -m kgsql.ask`` on it with a stub model that answers SQL to every call
    (``ask.stub.requests``: what the model was sent, readable after the block too)."""
    @contextmanager
    def start(sql: str, name: str) -> Iterator[GeoAsk]:
        from llm_stub import Reply, StubServer, chat_body

        stub = StubServer().always(Reply(body=chat_body(sql)))
        try:
            env = stub_env(stub)
            ingest_cli(env, example_db, name)
            yield GeoAsk(env, name, stub)
        finally:
            stub.close()

    return start


@pytest.fixture(scope="session")
def bench_data() -> Path:
    """The benchmark data folder (``$KGSQL_DATA_DIR`` or ``../shared/data`` beside the checkout; may be absent)."""
    from benchdata import data_dir

    return data_dir()


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Any]:
    """One throwaway PostgreSQL (+PostGIS) server for the session (``kgsql.lab.pg_cluster``): a private port
    under a temp folder, removed afterwards. Tests create their own databases on it, with unique names."""
    from kgsql.db import engines
    from kgsql.lab.pg_cluster import TempCluster, postgres_bindir

    if postgres_bindir() is None:
        pytest.skip("PostgreSQL server binaries not installed (Debian: postgresql-15)")
    with TempCluster() as cluster:
        yield cluster
    engines.close_all()
