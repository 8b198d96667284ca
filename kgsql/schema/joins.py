"""Join-path completion: make a selected sub-schema joinable.

Retrieval picks tables that look relevant; SQL also needs the tables between
them (the bridge of a many-to-many) and the key columns of every join. The
FK graph of the ``DatabaseSchema`` (tables as nodes, one edge per table pair
carrying its FK column pairs) is enough. Two tables get a shortest path;
three or more a Steiner-tree approximation (Takahashi-Matsuyama: grow a tree
from the first table, repeatedly joining the nearest remaining table by a
shortest path; within a factor 2 of the optimum, like Kou's). All edges weigh
one join, so breadth-first search replaces Dijkstra; this keeps completion at
a few milliseconds on schemas with thousands of tables, where networkx's
Steiner routine took hundreds. Selected tables in different FK components
cannot be joined by keys: each component is completed on its own and the
result says so.

No graph server is needed. This is the one join-path implementation:
retrieval's completion, join repair in self-correction and
``SchemaGraph.join_path`` (:func:`join_path`) all walk this FK graph.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Iterable

from kgsql.errors import UnknownNameError
from kgsql.schema.model import DatabaseSchema, ForeignKey


@dataclass
class JoinCompletion:
    """What completion added: tables, key columns, and the FKs of the join tree."""

    added_tables: list[str] = field(default_factory=list)
    key_columns: list[tuple[str, str]] = field(default_factory=list)
    foreign_keys: list[ForeignKey] = field(default_factory=list)
    disconnected: bool = False  # some selected tables share no FK path


@dataclass
class FKGraph:
    """Undirected table graph of a schema's foreign keys, built once per database.

    Neighbours are kept in schema order so every search is deterministic.
    """

    order: dict[str, int]
    adjacency: dict[str, list[str]]
    edge_fks: dict[frozenset[str], list[ForeignKey]]
    component: dict[str, int]

    def fks(self, a: str, b: str) -> list[ForeignKey]:
        return self.edge_fks.get(frozenset((a, b)), [])


def fk_graph(schema: DatabaseSchema) -> FKGraph:
    """The FK graph of ``schema`` (self-references and unknown tables ignored)."""
    order = {t.name: i for i, t in enumerate(schema.tables)}
    adjacency: dict[str, list[str]] = {t.name: [] for t in schema.tables}
    edge_fks: dict[frozenset[str], list[ForeignKey]] = {}
    for fk in schema.foreign_keys:
        if fk.table == fk.ref_table or fk.table not in order or fk.ref_table not in order:
            continue
        key = frozenset((fk.table, fk.ref_table))
        if key not in edge_fks:
            edge_fks[key] = []
            adjacency[fk.table].append(fk.ref_table)
            adjacency[fk.ref_table].append(fk.table)
        if fk not in edge_fks[key]:
            edge_fks[key].append(fk)
    for nbrs in adjacency.values():
        nbrs.sort(key=order.__getitem__)
    component: dict[str, int] = {}
    cid = -1
    for start in adjacency:  # schema order
        if start in component:
            continue
        cid += 1
        component[start] = cid
        queue = deque([start])
        while queue:
            u = queue.popleft()
            for v in adjacency[u]:
                if v not in component:
                    component[v] = cid
                    queue.append(v)
    return FKGraph(order, adjacency, edge_fks, component)


def _grow_tree(g: FKGraph, terminals: list[str]) -> list[tuple[str, str]]:
    """Takahashi-Matsuyama Steiner heuristic over one connected component (edges as (parent, child))."""
    in_tree = {terminals[0]}
    remaining = set(terminals[1:])
    edges: list[tuple[str, str]] = []
    while remaining:
        parent: dict[str, str | None] = {n: None for n in sorted(in_tree, key=g.order.__getitem__)}
        queue = deque(parent)
        found = None
        while queue:
            u = queue.popleft()
            if u in remaining:
                found = u
                break
            for v in g.adjacency[u]:
                if v not in parent:
                    parent[v] = u
                    queue.append(v)
        if found is None:  # pragma: no cover - callers pass one component
            break
        remaining.discard(found)
        v = found
        while parent[v] is not None:
            p = parent[v]
            edges.append((p, v))  # type: ignore[arg-type]
            in_tree.add(v)
            remaining.discard(v)
            v = p  # type: ignore[assignment]
        in_tree.add(found)
    return edges


def complete_joins(schema: DatabaseSchema, tables: Iterable[str], graph: FKGraph | None = None) -> JoinCompletion:
    """Tables and key columns connecting ``tables`` through foreign keys."""
    g = graph if graph is not None else fk_graph(schema)
    selected = sorted({t for t in tables if t in g.order}, key=g.order.__getitem__)
    result = JoinCompletion()
    if len(selected) < 2:
        return result
    groups: dict[int, list[str]] = {}
    for t in selected:
        groups.setdefault(g.component[t], []).append(t)
    result.disconnected = len(groups) > 1
    seen_tables = set(selected)
    for terms in groups.values():
        for a, b in _grow_tree(g, terms):
            for t in (a, b):
                if t not in seen_tables:
                    seen_tables.add(t)
                    result.added_tables.append(t)
            # Several FKs between one pair: keep them all (composite keys, or two roles).
            for fk in g.fks(a, b):
                if fk not in result.foreign_keys:
                    result.foreign_keys.append(fk)
                for key in ((fk.table, fk.column), (fk.ref_table, fk.ref_column)):
                    if key not in result.key_columns:
                        result.key_columns.append(key)
    result.added_tables.sort(key=g.order.__getitem__)
    return result


def path_to(g: FKGraph, sources: Iterable[str], target: str) -> list[tuple[str, str]] | None:
    """The shortest FK path from any of ``sources`` to ``target`` as (from, to) table steps;
    [] when ``target`` is a source, None when no path exists (breadth-first, schema order)."""
    start = [s for s in sources if s in g.order]
    if target in start:
        return []
    parent: dict[str, str | None] = {s: None for s in start}
    queue = deque(start)
    while queue:
        u = queue.popleft()
        for v in g.adjacency.get(u, []):
            if v in parent:
                continue
            parent[v] = u
            if v == target:
                steps: list[tuple[str, str]] = []
                while parent[v] is not None:
                    steps.append((parent[v], v))  # type: ignore[arg-type]
                    v = parent[v]  # type: ignore[assignment]
                return steps[::-1]
            queue.append(v)
    return None


@dataclass
class JoinPath:
    """Tables from start to end and, for each hop, its join conditions (``a.x = b.y``)."""

    tables: list[str]
    conditions: list[list[str]]


def join_path(schema: DatabaseSchema, from_table: str, to_table: str,
              graph: FKGraph | None = None) -> JoinPath | None:
    """The shortest FK join path between two tables (names case-insensitive), or None when none exists.

    Raises UnknownNameError for a table the schema does not have.
    """
    real = {t.name.lower(): t.name for t in schema.tables}
    names = []
    for name in (from_table, to_table):
        if name.lower() not in real:
            raise UnknownNameError(f"table '{name}' not in database '{schema.name}'")
        names.append(real[name.lower()])
    g = graph if graph is not None else fk_graph(schema)
    steps = path_to(g, [names[0]], names[1])
    if steps is None:
        return None
    return JoinPath(tables=[names[0], *(b for _a, b in steps)],
                    conditions=[[f"{fk.table}.{fk.column} = {fk.ref_table}.{fk.ref_column}" for fk in g.fks(a, b)]
                                for a, b in steps])
