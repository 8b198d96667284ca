"""Mined facts in the graph: list, save (merging with what is there), remove.

Facts are ``(:Fact {key, database, kind, subject, object, text, count, sources,
origin, mined_at})`` nodes beside the schema, and mined pairs are
``(:MinedPair {key, database, origin, pair})`` nodes; neither is touched by
re-ingesting a database, so knowledge learnt from a query log survives
schema updates (facts about dropped columns are skipped when read).
"""
from __future__ import annotations

from dataclasses import asdict
from typing import Any, Iterable

from kgsql.graph.store import GraphStore
from kgsql.schema.facts import Fact


def list_facts(store: GraphStore, database: str, *, kind: str | None = None,
               origin: str | None = None) -> list[Fact]:
    out = []
    for row in store.run("facts_list", database=database):
        props = dict(row["fact"])
        props.pop("key", None)
        fact = Fact(**{k: v for k, v in props.items() if k in Fact.__dataclass_fields__})
        fact.sources = list(fact.sources or [])
        if (kind is None or fact.kind == kind) and (origin is None or fact.origin == origin):
            out.append(fact)
    return out


def mined_pairs(store: GraphStore, database: str, origin: str) -> set[str]:
    """Ids of the pairs of ``database`` already mined by ``origin``."""
    return {r["pair"] for r in store.run("mined_pairs_list", database=database, origin=origin)}


def save_facts(store: GraphStore, database: str, facts: Iterable[Fact], pairs: Iterable[str],
               origin: str) -> int:
    """Merge ``facts`` into what ``database`` already holds and record ``pairs`` as mined, in one
    transaction; returns how many facts were new."""
    existing = {f.key: f for f in list_facts(store, database)}
    changed: dict[str, Fact] = {}
    new = 0
    for fact in facts:
        base = changed.get(fact.key) or existing.get(fact.key)
        if base is None:
            new += 1
            changed[fact.key] = fact
        else:
            changed[fact.key] = base.merged(fact)
    rows = [{"key": f.key, **asdict(f)} for f in changed.values()]
    marks = [{"key": f"{database}/{origin}/{p}", "database": database, "origin": origin, "pair": p} for p in pairs]

    def work(tx):  # type: ignore[no-untyped-def]
        for i in range(0, len(rows), 500):
            tx.run("facts_upsert", facts=rows[i:i + 500])
        for i in range(0, len(marks), 500):
            tx.run("mined_pairs_add", pairs=marks[i:i + 500])

    store.write(work)
    return new


def remove_facts(store: GraphStore, database: str, *, keys: Iterable[str] = (), origin: str | None = None) -> int:
    """Remove the facts with these ``keys``, or every fact of ``origin`` (and forget its mined pairs,
    so mining again relearns them); returns how many were removed."""
    wanted = set(keys)
    doomed = [f.key for f in list_facts(store, database, origin=origin)
              if (not wanted or f.key in wanted)] if (wanted or origin) else []

    def work(tx):  # type: ignore[no-untyped-def]
        if doomed:
            tx.run("facts_delete", keys=doomed)
        if origin and not wanted:
            tx.run("mined_pairs_delete", database=database, origin=origin)

    store.write(work)
    return len(doomed)


def forget_pairs(store: GraphStore, database: str, pairs: Iterable[str]) -> int:
    """Take back what the pairs ``pairs`` taught ``database``: a fact only they support is removed, a fact
    others support too loses them from its sources (and count); the pairs count as not mined. Returns how
    many facts were removed."""
    gone = set(pairs)
    if not gone:
        return 0
    doomed: list[str] = []
    kept: list[dict[str, Any]] = []
    for fact in list_facts(store, database):
        taught = gone.intersection(fact.sources)
        if not taught:
            continue
        if taught == set(fact.sources):
            doomed.append(fact.key)
        else:
            fact.sources = [s for s in fact.sources if s not in gone]
            fact.count = max(1, fact.count - len(taught))
            kept.append({"key": fact.key, **asdict(fact)})

    def work(tx):  # type: ignore[no-untyped-def]
        if doomed:
            tx.run("facts_delete", keys=doomed)
        if kept:
            tx.run("facts_upsert", facts=kept)
        tx.run("mined_pairs_forget", database=database, pairs=sorted(gone))

    store.write(work)
    return len(doomed)
