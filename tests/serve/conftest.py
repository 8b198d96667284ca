"""Shared by the service tests: the session's graph behind a service that must not close it."""
from __future__ import annotations

import threading
from typing import Any

import pytest

from kgsql.serve.http import ApiServer
from kgsql.serve.service import Service


class SharedGraph:
    """The session's graph, not closed by the service (other tests share it)."""

    def __init__(self, graph: Any) -> None:
        self._graph = graph

    def __getattr__(self, name: str) -> Any:
        return getattr(self._graph, name)

    def close(self) -> None:
        pass


@pytest.fixture(scope="module")
def serve_graph(schema_graph):  # type: ignore[no-untyped-def]
    """``serve_graph(lm, **server_options)`` -> a running ApiServer over the session's graph."""
    servers: list[ApiServer] = []

    def start(lm: Any, host: str = "127.0.0.1", **options: Any) -> ApiServer:
        server = ApiServer((host, 0), Service(lambda: SharedGraph(schema_graph), lambda: lm), **options)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()
