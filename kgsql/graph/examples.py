"""A database's own few-shot examples: the (question, SQL) pairs it has been taught, kept in the graph.

Fed by ``ingest --history`` and ``SchemaGraph.learn`` (the calls that also mine
knowledge from the pairs); the default method shows the most similar ones
when no example pool is given. A pair is stored once (keyed by its id).
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Iterable

from kgsql.graph.store import GraphStore


def save_examples(store: GraphStore, database: str, pairs: Iterable[Any], source: str) -> int:
    """Store ``pairs`` (``id``, ``question``, ``sql``) as examples of ``database``; returns how many."""
    # to the microsecond: routing's log digest (count, latest) must see one removed and another added at once
    now = datetime.now(timezone.utc).isoformat(timespec="microseconds")
    rows = [{"key": f"{database}/{p.id}", "database": database, "question": p.question, "sql": p.sql,
             "source": source, "added": now} for p in pairs]

    def work(tx):  # type: ignore[no-untyped-def]
        for i in range(0, len(rows), 500):
            tx.run("examples_add", examples=rows[i:i + 500])

    if rows:
        store.write(work)
    return len(rows)


def remove_examples(store: GraphStore, database: str, keys: Iterable[str]) -> int:
    """Remove the examples with these keys, and what only they taught the graph (a join mined from a
    wrong example must not outlive it, :func:`kgsql.graph.facts.forget_pairs`); returns how many existed."""
    from kgsql.graph.facts import forget_pairs

    wanted = set(keys)
    present = [e["key"] for e in list_examples(store, database) if e["key"] in wanted]
    if present:
        store.write(lambda tx: tx.run("examples_delete", database=database, keys=present))
        forget_pairs(store, database, [key.split("/", 1)[1] for key in present])
    return len(present)


def list_examples(store: GraphStore, database: str) -> list[dict[str, Any]]:
    """Every stored example of ``database``: ``{key, question, sql, source, added}``, oldest first."""
    return [dict(r) for r in store.run("examples_list", database=database)]
