"""Run the graph suite against a real Neo4j 5 in Docker, whenever Docker is reachable.

CI machines here have no Docker engine, so this skips with the reason; the
same suite runs against the embedded ArcadeDB Bolt server in every run.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def docker_unavailable_reason() -> str | None:
    try:
        import docker  # installed with testcontainers
    except ImportError:
        return "testcontainers[neo4j] is not installed (pip install 'kgsql[neo4j-docker]')"
    try:
        docker.from_env().ping()
    except Exception as exc:  # no socket, no daemon, no permission
        return f"no Docker daemon reachable ({type(exc).__name__})"
    return None


@pytest.mark.slow
def test_graph_suite_on_real_neo4j():
    if os.environ.get("KGSQL_TEST_GRAPH_URI"):
        pytest.skip("already running inside the Neo4j suite")
    reason = docker_unavailable_reason()
    if reason:
        pytest.skip(reason)
    from testcontainers.neo4j import Neo4jContainer

    with Neo4jContainer("neo4j:5") as neo4j:
        env = dict(os.environ)
        env.update(
            KGSQL_TEST_GRAPH_URI=neo4j.get_connection_url(),
            KGSQL_TEST_GRAPH_USER="neo4j",
            KGSQL_TEST_GRAPH_PASSWORD=neo4j.password,
        )
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", str(REPO / "tests" / "graph" / "test_schema_graph.py"),
             str(REPO / "tests" / "graph" / "test_vectors_neo4j.py")],
            env=env, capture_output=True, text=True, timeout=1800,
        )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
