"""``SchemaGraph``: the notebook-facing API over the schema knowledge graph.

    from kgsql import SchemaGraph
    g = SchemaGraph.open()                 # embedded server, or a Bolt URI
    g.ingest("examples/geo.sqlite")
    g.databases(); g.tables("geo"); g.table("geo", "cities")
    g.join_path("geo", "cities", "rivers")
    g.export("geo", "geo.html")            # look at it in a browser
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import Any, Sequence

from kgsql.graph import queries
from kgsql.graph.facts import list_facts, remove_facts
from kgsql.graph.store import GraphStore
from kgsql.ingest.pipeline import IngestReport, ingest
from kgsql.schema.joins import JoinPath, join_path
from kgsql.schema.facts import Fact
from kgsql.schema.model import Column, DatabaseSchema, Table


class SchemaGraph:
    """A schema knowledge graph reached through a ``GraphStore``."""

    def __init__(self, store: GraphStore):
        self.store = store

    @classmethod
    def open(
        cls,
        uri: str | None = None,
        *,
        user: str | None = None,
        password: str | None = None,
        database: str | None = None,
        embedded_root: str | os.PathLike[str] | None = None,
    ) -> "SchemaGraph":
        """Connect to ``uri`` (or ``KGSQL_GRAPH_URI`` / config), else the embedded server."""
        root = Path(embedded_root) if embedded_root else None
        return cls(GraphStore.open(uri, user=user, password=password, database=database, embedded_root=root))

    @classmethod
    @contextmanager
    def of_own(cls, root: str | os.PathLike[str]) -> Iterator["SchemaGraph"]:
        """A graph on the embedded server of folder ``root``, closed at the end and its server stopped when
        this call started it: a tool's throwaway graph must not outlive the tool (each server is a JVM)."""
        from kgsql.graph.embedded import running_server, stop_server

        started_here = running_server(Path(root)) is None
        graph = cls.open(embedded_root=root)
        try:
            yield graph
        finally:
            graph.close()
            if started_here:
                stop_server(Path(root))

    # -- writing -----------------------------------------------------------
    def ingest(
        self,
        source: str | os.PathLike[str],
        *,
        name: str | None = None,
        descriptions: str | os.PathLike[str] | None = None,
        regions: str | os.PathLike[str] | None = None,
        profile: str | os.PathLike[str] | None = None,
        force: bool = False,
        discover_joins: str = "auto",
        shipped_profiles: bool = True,
    ) -> IngestReport:
        """Ingest a SQLite file or folder; unchanged databases are left as they are.
        ``discover_joins``: auto | on | off (joins found in the data, ``kgsql.ingest.discover``);
        ``shipped_profiles``: False uses no profile shipped with kgsql; ``regions``: a ``<db>.table.csv``
        of region descriptions (found beside a file by itself; a PostgreSQL database needs it given)."""
        return ingest(
            self.store,
            source,
            name=name,
            descriptions_dir=Path(descriptions) if descriptions else None,
            region_csv=Path(regions) if regions else None,
            profile_path=Path(profile) if profile else None,
            force=force,
            discover_joins=discover_joins,
            shipped_profiles=shipped_profiles,
        )

    def learn(self, question: str, sql: str, *, db: str) -> dict[str, Any]:
        """Mine one past (question, SQL) pair of ``db`` into the graph (rules; a pair is mined once)."""
        from kgsql.mining.learn import learn_one

        return learn_one(self.store, question, sql, db).to_dict()

    def examples(self, database: str) -> list[dict[str, Any]]:
        """The (question, SQL) pairs ``database`` was taught (``learn``, ``ingest --history``): its own
        few-shot examples, ``{key, question, sql, source, added}``."""
        from kgsql.graph.examples import list_examples

        queries.require_database(self.store, database)
        return list_examples(self.store, database)

    def knowledge(self, database: str, *, kind: str | None = None, origin: str | None = None) -> list[Fact]:
        """What was mined about ``database`` (each fact with its provenance)."""
        queries.require_database(self.store, database)
        return list_facts(self.store, database, kind=kind, origin=origin)

    def forget(self, database: str, *, keys: Sequence[str] = (), origin: str | None = None) -> int:
        """Remove mined facts by key, or all of one origin (rule | llm); returns how many."""
        queries.require_database(self.store, database)
        return remove_facts(self.store, database, keys=keys, origin=origin)

    def drop(self, database: str) -> None:
        """Remove a database and all its knowledge from the graph."""
        queries.require_database(self.store, database)
        def work(tx):  # type: ignore[no-untyped-def]
            tx.run("database_delete", name=database)
            tx.run("knowledge_clear", name=database)

        self.store.write(work)
        if self.vector_stage is not None:  # a Neo4j server's vector nodes of the database go with it
            self.vector_stage.forget(database)

    # -- reading -----------------------------------------------------------
    def databases(self) -> list[str]:
        return [d["name"] for d in queries.list_databases(self.store)]

    def database_info(self, database: str) -> dict[str, Any]:
        return queries.require_database(self.store, database)

    def schema(self, database: str, *, knowledge: bool = True) -> DatabaseSchema:
        """Everything stored about ``database`` as a DatabaseSchema (``knowledge=False``: leave out
        what was mined from past questions)."""
        return queries.load_schema(self.store, database, knowledge=knowledge)

    def tables(self, database: str) -> list[str]:
        return [t.name for t in self.schema(database).tables]

    def table(self, database: str, table: str) -> Table:
        """One table with its columns (unknown names raise with a suggestion)."""
        return self.schema(database).table(table)

    def columns(self, database: str, table: str) -> list[Column]:
        return self.table(database, table).columns

    def foreign_keys(self, database: str, table: str | None = None) -> list[Any]:
        fks = self.schema(database).foreign_keys
        if table is None:
            return fks
        t = self.table(database, table).name
        return [fk for fk in fks if t in (fk.table, fk.ref_table)]

    def join_path(self, database: str, from_table: str, to_table: str) -> JoinPath | None:
        """Shortest foreign-key join path between two tables (the same FK graph retrieval and repair walk)."""
        return join_path(self.schema(database), from_table, to_table)

    # -- looking -----------------------------------------------------------
    def export(self, database: str, path: str | os.PathLike[str]) -> Path:
        """Write a picture of one database's subgraph: ``.html`` (interactive), ``.svg`` or ``.png``."""
        from kgsql.graph.visualize import export_schema

        return export_schema(self.schema(database), Path(path))

    @cached_property
    def vector_stage(self) -> Any:
        """The retriever's first stage on wide databases from the server's vector index (Neo4j 5.15+:
        ``kgsql.graph.vectors``), or None: the retriever's own in-memory one (the embedded server)."""
        from kgsql.graph.vectors import vector_stage

        return vector_stage(self.store)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> "SchemaGraph":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SchemaGraph({self.store!r})"
