"""LLM mining, the KG paper's knowledge completion: column knowledge and dependencies from a pair.

Per (question, SQL) pair the model sees the tables the SQL uses and answers
one JSON object (``prompts/mine_knowledge.txt``):

    {"columns": [{"column": "t.c", "description": "..."}],
     "dependencies": [{"head": "t.c", "tail": "t.c", "relation": "..."}]}

Every name is checked against the schema (an invented table or column is
dropped and counted, never stored); duplicates within a pair are merged. A
column that already has a description gets the paper's redundancy check
(``prompts/mine_redundancy.txt``: does the new text add anything? yes/no),
and only a "yes" is kept. Output that is not the JSON asked for costs that
pair its facts, not the run.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from kgsql.llm.errors import LLMBadResponseError, LLMEmptyResponseError
from kgsql.prompts.templates import fill
from kgsql.schema.facts import Fact
from kgsql.schema.model import DatabaseSchema
from kgsql.sql.gold_schema import gold_schema
from kgsql.mining.rules import Pair

MAX_TOKENS = 300
MAX_TEXT = 300  # characters kept of one description or relation


@dataclass
class LLMMiningStats:
    """What the model proposed and what survived the checks."""

    pairs: int = 0
    calls: int = 0
    malformed: int = 0  # answers that were not the JSON asked for
    invented: int = 0  # names not in the schema, dropped
    redundant: int = 0  # descriptions the redundancy check said add nothing
    kept: dict[str, int] = field(default_factory=dict)

    def add(self, other: "LLMMiningStats") -> None:
        for name in ("pairs", "calls", "malformed", "invented", "redundant"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for k, v in other.kept.items():
            self.kept[k] = self.kept.get(k, 0) + v


def _json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in the model's text (fences and chatter around it allowed)."""
    start = text.find("{")
    while start != -1:
        depth = 0
        for i in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                try:
                    found = json.loads(text[start:i + 1])
                except json.JSONDecodeError:
                    break
                return found if isinstance(found, dict) else None
        start = text.find("{", start + 1)
    return None


def _tables_text(schema: DatabaseSchema, tables: set[str]) -> str:
    """One line per table the query uses: its columns with types and descriptions (compact on purpose)."""
    lines = []
    for t in schema.tables:
        if t.name in tables:
            cols = ", ".join(f"{c.name} {c.type}".strip() + (f" /* {c.description[:60]} */" if c.description else "")
                             for c in t.columns)
            lines.append(f"{t.name}({cols})")
    keys = [f"{f.table}.{f.column} = {f.ref_table}.{f.ref_column}" for f in schema.foreign_keys
            if f.table in tables and f.ref_table in tables]
    return "\n".join(lines + ([f"joins: {'; '.join(keys)}"] if keys else []))


def _clean(text: Any) -> str:
    return " ".join(str(text or "").split())[:MAX_TEXT]


class LLMMiner:
    """Mines one pair at a time with ``lm`` (any ``kgsql.llm.LM``)."""

    def __init__(self, lm: Any) -> None:
        self.lm = lm

    def mine(self, pair: Pair, schema: DatabaseSchema, *, mined_at: str = "",
             known: dict[str, str] | None = None) -> tuple[list[Fact], LLMMiningStats]:
        """Facts of ``pair`` and the counts; ``known``: descriptions already held, by lower-case ``t.c``
        (the schema's, plus what was mined before), for the redundancy check."""
        stats = LLMMiningStats(pairs=1)
        used = gold_schema(pair.sql, schema)
        if not used.tables:
            return [], stats
        prompt = fill("mine_knowledge", schema=_tables_text(schema, used.tables), question=pair.question,
                      sql=pair.sql)
        try:
            reply = self.lm.complete([{"role": "user", "content": prompt}], step="mine_knowledge",
                                     max_tokens=MAX_TOKENS, temperature=0)
        except (LLMBadResponseError, LLMEmptyResponseError):  # this answer is unusable; the model is not down
            stats.malformed += 1
            return [], stats
        stats.calls += 1
        data = _json_object(reply.text)
        if data is None:
            stats.malformed += 1
            return [], stats
        names = {f"{t.name}.{c.name}".lower(): f"{t.name}.{c.name}" for t in schema.tables for c in t.columns}
        known = {k.lower(): v for k, v in (known or {}).items()}
        for t in schema.tables:
            for c in t.columns:
                known.setdefault(f"{t.name}.{c.name}".lower(), c.description)
        facts: dict[tuple[str, str, str], Fact] = {}

        def real(name: Any) -> str | None:
            found = names.get(str(name or "").strip().strip("`\"").lower())
            if found is None:
                stats.invented += 1
            return found

        for item in data.get("columns") or []:
            if not isinstance(item, dict):
                continue
            column, text = real(item.get("column")), _clean(item.get("description"))
            if column and text and not self._redundant(column, known.get(column.lower(), ""), text, stats):
                facts[("description", column, "")] = Fact(schema.name, "description", column, "", text, 1,
                                                          [pair.id], "llm", mined_at)
        for item in data.get("dependencies") or []:
            if not isinstance(item, dict):
                continue
            head, tail = real(item.get("head")), real(item.get("tail"))
            if head and tail and head != tail:
                facts[("dependency", head, tail)] = Fact(schema.name, "dependency", head, tail,
                                                         _clean(item.get("relation")), 1, [pair.id], "llm", mined_at)
        for fact in facts.values():
            stats.kept[fact.kind] = stats.kept.get(fact.kind, 0) + 1
        return list(facts.values()), stats

    def _redundant(self, column: str, known: str, new: str, stats: LLMMiningStats) -> bool:
        """The paper's check: with a description already there, keep the new one only if it adds."""
        if not known.strip():
            return False
        if new.lower() in known.lower():
            stats.redundant += 1
            return True
        prompt = fill("mine_redundancy", column=column, known=_clean(known), new=new)
        try:
            reply = self.lm.complete([{"role": "user", "content": prompt}], step="mine_redundancy",
                                     max_tokens=3, temperature=0)
        except (LLMBadResponseError, LLMEmptyResponseError):
            return True  # unsure: keep what is known
        stats.calls += 1
        adds = re.match(r"\W*yes\b", reply.text, flags=re.IGNORECASE) is not None
        stats.redundant += int(not adds)
        return not adds
