"""A router over the databases of a schema graph, kept current as databases are ingested.

``route_question(graph, question)`` is the one call ``ask`` makes when no database is named;
``GraphRouter`` is what a long-lived process (the service, the MCP server) keeps: it asks the
graph for its databases' content hashes and question logs' sizes (two queries) before each question and
rebuilds the router only when they changed, re-encoding only the databases (and logs) that are new or changed.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from kgsql.route.history import build_log, graph_log_digest, graph_questions
from kgsql.route.index import build_index, graph_databases
from kgsql.route.router import DatabaseRouter, Routing


class GraphRouter:
    """Routes questions over ``graph``'s databases (a ``SchemaGraph``); thread-safe."""

    def __init__(self, graph: Any, encoder: Any = None, *, cache_dir: str | os.PathLike[str] | None = None,
                 only: set[str] | None = None) -> None:
        self.graph = graph
        self.only = only  # route among these databases of the graph (None: all)
        self._encoder = encoder
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self._router: DatabaseRouter | None = None
        self._digests: tuple[list[tuple[str, str]], list[tuple[str, int, str]]] | None = None
        self._lock = threading.Lock()

    @property
    def encoder(self) -> Any:
        if self._encoder is None:
            from kgsql.text.encoder import get_encoder

            self._encoder = get_encoder()
        return self._encoder

    def router(self) -> DatabaseRouter:
        """The router over the graph's databases as they are now."""
        digests = [d for d in graph_databases(self.graph.store) if self.only is None or d[0] in self.only]
        logs = [d for d in graph_log_digest(self.graph.store) if self.only is None or d[0] in self.only]
        with self._lock:
            if self._router is None or (digests, logs) != self._digests:
                index = build_index(self.encoder, digests, lambda name: self.graph.schema(name, knowledge=False),
                                    cache_dir=self.cache_dir)
                questions = graph_questions(self.graph.store) if logs else {}
                history = build_log(self.encoder, index.names, questions, cache_dir=self.cache_dir)
                self._router = DatabaseRouter(index, self.encoder, history=history)
                self._digests = (digests, logs)
            return self._router

    def route(self, question: str) -> Routing:
        """The databases ranked for ``question`` (InputError when the graph holds none)."""
        return self.router().route(question)


def route_question(graph: Any, question: str, *, retriever: Any = None) -> Routing:
    """Route one question over ``graph`` (``retriever``: share its encoder, already loaded)."""
    encoder = getattr(retriever, "encoder", None)
    return GraphRouter(graph, encoder).route(question)
