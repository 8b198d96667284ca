"""Learn from a query log: mine each pair once and keep the facts in the graph.

    report = learn(store, pairs)                 # rules; pairs of databases not ingested are counted, skipped
    report = learn(store, pairs, miner="both", lm=lm)   # rules, then the model (kgsql.mining.llm)
    SchemaGraph.learn(question, sql, db=...)     # one pair

Incremental: a pair already mined by a miner (same database, question and
SQL) is skipped by that miner, so mining a growing log again costs only the
new pairs.
"""
from __future__ import annotations

import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterable, Sequence

from kgsql.errors import InputError, UnknownNameError
from kgsql.graph.examples import save_examples
from kgsql.graph.facts import mined_pairs, save_facts
from kgsql.graph.queries import list_databases, load_schema
from kgsql.graph.store import GraphStore
from kgsql.mining.llm import LLMMiner, LLMMiningStats
from kgsql.mining.rules import Pair, mine_pair
from kgsql.schema.facts import Fact


@dataclass
class MiningReport:
    """Counts of one mining run, as ``ingest --json`` prints them under ``mining``."""

    pairs: int = 0
    mined: int = 0
    already_mined: int = 0
    unparsed: int = 0
    unknown_database: dict[str, int] = field(default_factory=dict)
    new_facts: int = 0
    facts_by_kind: dict[str, int] = field(default_factory=dict)
    llm: dict[str, Any] | None = None  # LLMMiningStats of the model's pass
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


MINERS = ("rules", "llm", "both")


def learn(store: GraphStore, pairs: Sequence[Pair], *, miner: str = "rules", lm: Any = None,
          progress: bool = False, source: str = "history") -> MiningReport:
    """Mine ``pairs`` into the graph with the rules (``kgsql.mining.rules``), the model
    (``kgsql.mining.llm``, needs ``lm``) or both (module doc), and keep them as each database's
    few-shot examples (``source`` says where they came from)."""
    if miner not in MINERS:
        raise InputError(f"miner '{miner}': expected one of {', '.join(MINERS)}")
    if miner != "rules" and lm is None:
        raise InputError("LLM mining needs a model (lm=...)")
    t0 = time.perf_counter()
    report = MiningReport(pairs=len(pairs))
    known = {d["name"] for d in list_databases(store)}
    by_db: dict[str, list[Pair]] = defaultdict(list)
    for pair in pairs:
        if pair.db_id in known:
            by_db[pair.db_id].append(pair)
        else:
            report.unknown_database[pair.db_id] = report.unknown_database.get(pair.db_id, 0) + 1
    kinds: Counter[str] = Counter()
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    llm_stats = LLMMiningStats() if miner != "rules" else None
    origins = [o for o, on in (("rule", miner in ("rules", "both")), ("llm", miner in ("llm", "both"))) if on]
    for db in _progress(sorted(by_db), progress):
        save_examples(store, db, by_db[db], source)  # the database's own few-shot examples
        schema = None
        for origin in origins:
            done = mined_pairs(store, db, origin)
            todo = [p for p in by_db[db] if p.id not in done]
            report.already_mined += len(by_db[db]) - len(todo)
            if not todo:
                continue
            schema = schema or load_schema(store, db)
            if origin == "rule":
                facts = []
                for pair in todo:
                    found = mine_pair(pair, schema, mined_at=now)
                    report.unparsed += int(found is None)
                    facts += found or []
            else:
                facts = _mine_with_model(LLMMiner(lm), todo, schema, now, llm_stats)  # type: ignore[arg-type]
            kinds.update(f.kind for f in facts)
            report.new_facts += save_facts(store, db, facts, [p.id for p in todo], origin)
            report.mined += len(todo)
    report.facts_by_kind = dict(sorted(kinds.items()))
    report.llm = llm_stats.__dict__ if llm_stats is not None else None
    report.seconds = round(time.perf_counter() - t0, 2)
    return report


def _mine_with_model(miner: LLMMiner, pairs: list[Pair], schema: Any, now: str,
                     stats: LLMMiningStats) -> list[Fact]:
    """Each pair through the model; descriptions mined earlier in the run count as known."""
    known: dict[str, str] = {}
    facts: list[Fact] = []
    for pair in pairs:
        found, one = miner.mine(pair, schema, mined_at=now, known=known)
        stats.add(one)
        for fact in found:
            if fact.kind == "description":
                known[fact.subject.lower()] = f"{known.get(fact.subject.lower(), '')} {fact.text}".strip()
        facts += found
    return facts


def learn_one(store: GraphStore, question: str, sql: str, db: str) -> MiningReport:
    """Mine one pair into ``db`` (which must be ingested)."""
    from kgsql.mining.history import pair_id

    if db not in {d["name"] for d in list_databases(store)}:
        raise UnknownNameError(f"database '{db}' is not in the graph; ingest it first")
    return learn(store, [Pair(pair_id(db, question, sql), db, " ".join(question.split()), sql.strip())],
                 source="learn")


def _progress(items: list[str], enabled: bool) -> Iterable[str]:
    if not enabled or len(items) <= 1:
        return items
    from tqdm import tqdm

    return tqdm(items, unit="db", desc="mine", leave=False)
