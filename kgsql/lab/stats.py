"""What the linking benchmark and calibration share: statistics, token counts, re-selection.

``MethodStats`` accumulates a method's recall, token and latency figures per
question; ``TokenMeter`` counts the rendered ``CREATE TABLE`` text of a column
set (MiniLM WordPiece, memoised). ``collect`` computes each question's
retrieval evidence and gold labels once (the expensive part: encoding +
MaxSim), and ``selection_stats`` re-runs only the selection step
(``SchemaRetriever.choose``) on it, so a threshold pair costs little.
"""
from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from kgsql.schema.model import DatabaseSchema
from kgsql.sql.gold_schema import GoldSchema

if TYPE_CHECKING:
    from kgsql.retrieve.retriever import PreparedDatabase, SchemaRetriever, SelectionScores


# --------------------------------------------------------------------------- tokens


def sub_schema(full: DatabaseSchema, columns: Iterable[tuple[str, str]], tables: Iterable[str] = ()) -> DatabaseSchema:
    """``full`` restricted to ``columns`` (and empty ``tables``), FKs kept when both ends are in."""
    keep = set(columns)
    keep_tables = {t for t, _ in keep} | set(tables)
    out_tables = []
    for t in full.tables:
        if t.name in keep_tables:
            out_tables.append(type(t)(name=t.name, columns=[c for c in t.columns if (t.name, c.name) in keep]))
    fks = [fk for fk in full.foreign_keys if (fk.table, fk.column) in keep and (fk.ref_table, fk.ref_column) in keep]
    return DatabaseSchema(name=full.name, tables=out_tables, foreign_keys=fks)


class TokenMeter:
    """Rendered-token counts, memoised per (database, column set)."""

    def __init__(self) -> None:
        from kgsql.retrieve.budget import count_tokens, render_ddl

        self._count, self._render = count_tokens, render_ddl
        self._memo: dict[tuple[str, frozenset[tuple[str, str]]], int] = {}

    def __call__(self, full: DatabaseSchema, columns: Iterable[tuple[str, str]]) -> int:
        key = (full.name, frozenset(columns))
        if key not in self._memo:
            self._memo[key] = self._count(self._render(sub_schema(full, key[1])))
        return self._memo[key]


# --------------------------------------------------------------------------- metrics


@dataclass
class MethodStats:
    recall: list[float] = field(default_factory=list)
    perfect: list[bool] = field(default_factory=list)
    table_recall: list[float] = field(default_factory=list)
    n_columns: list[int] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    ratio: list[float] = field(default_factory=list)
    full_tokens: list[int] = field(default_factory=list)
    ms: list[float] = field(default_factory=list)
    index_s: float = 0.0
    misses: dict[str, int] = field(default_factory=lambda: dict.fromkeys(MISS_KINDS, 0))

    def add(self, gold: GoldSchema, columns: set[tuple[str, str]], tables: set[str], tokens: int,
            full_tokens: int, ms: float) -> None:
        if gold.columns:
            self.recall.append(len(gold.columns & columns) / len(gold.columns))
        self.perfect.append(gold.columns <= columns and gold.tables <= tables)
        if not self.perfect[-1]:
            for kind in miss_kinds(gold, columns, tables):
                self.misses[kind] += 1
        self.table_recall.append(len(gold.tables & tables) / len(gold.tables) if gold.tables else 1.0)
        self.n_columns.append(len(columns))
        self.tokens.append(tokens)
        self.ratio.append(tokens / full_tokens if full_tokens else 1.0)
        self.full_tokens.append(full_tokens)
        self.ms.append(ms)

    def merge(self, other: MethodStats) -> None:
        """Add ``other``'s questions to these (index time is not per question: not added)."""
        for name in ("recall", "perfect", "table_recall", "n_columns", "tokens", "ratio", "full_tokens", "ms"):
            getattr(self, name).extend(getattr(other, name))
        for kind, count in other.misses.items():
            self.misses[kind] += count

    def summary(self) -> dict[str, float]:
        def mean(x: list[Any]) -> float:
            return float(np.mean(x)) if x else float("nan")

        return {
            "column_recall": round(mean(self.recall), 4),
            "perfect_recall_rate": round(mean(self.perfect), 4),
            "table_recall": round(mean(self.table_recall), 4),
            "mean_selected_columns": round(mean(self.n_columns), 2),
            "mean_tokens": round(mean(self.tokens), 1),
            # mean selected tokens / mean full-schema tokens (what a prompt budget sees) ...
            "token_ratio": round(float(np.sum(self.tokens)) / max(1.0, float(np.sum(self.full_tokens))), 4),
            # ... and the mean of per-question ratios (weighs small schemas, where little can be cut, equally)
            "token_ratio_per_question": round(mean(self.ratio), 4),
            "ms_p50": round(float(np.percentile(self.ms, 50)), 2) if self.ms else float("nan"),
            "ms_p95": round(float(np.percentile(self.ms, 95)), 2) if self.ms else float("nan"),
            "index_s": round(self.index_s, 2),
            "misses": dict(self.misses),
        }


#: How a question missed, counted per question: either ``whole_table`` (a gold table was not selected)
#: or ``column_of_selected_table`` (only columns of selected tables were missed); in addition
#: ``value_only`` when every missed column is compared with a text literal in the gold SQL (the question
#: names it only through a value, which a value index over the database file can find).
MISS_KINDS = ("whole_table", "column_of_selected_table", "value_only")


def miss_kinds(gold: GoldSchema, columns: set[tuple[str, str]], tables: set[str]) -> list[str]:
    """The ``MISS_KINDS`` a selection that missed part of ``gold`` falls under."""
    missed_tables = gold.tables - tables
    missed = gold.columns - columns
    kinds = ["whole_table" if missed_tables else "column_of_selected_table"]
    reachable_tables = {t for t, _c in gold.literal_columns} | {t for t, _c in missed}
    if missed and missed <= gold.literal_columns and missed_tables <= reachable_tables:
        kinds.append("value_only")
    return kinds


# --------------------------------------------------------------------------- evidence, re-selection


@dataclass
class Row:
    """One question: its database, evidence (features) and gold labels."""

    item: Any  # kgsql.lab.linking.Item
    prep: PreparedDatabase
    evidence: SelectionScores
    y_column: np.ndarray
    y_table: np.ndarray


def collect(bench: Any, items: Sequence[Any], retriever: SchemaRetriever, *, use_values: bool = True) -> list[Row]:
    """Selection scores and gold labels per question (the expensive part: encoding + MaxSim)."""
    rows, t0 = [], time.perf_counter()
    for i, it in enumerate(items):
        schema = bench.schemas[it.db_id]
        prep = retriever.prepare(schema, db_path=bench.db_paths.get(it.db_id) if use_values else None)
        ev = retriever.scores(schema, it.question, prepared=prep)
        y = np.array([k in it.gold.columns for k in prep.facts.column_keys], dtype=np.float64)
        yt = np.array([t in it.gold.tables for t in prep.facts.table_names], dtype=np.float64)
        rows.append(Row(it, prep, ev, y, yt))
        if (i + 1) % 200 == 0:
            print(f"  {i + 1}/{len(items)} ({time.perf_counter() - t0:.0f}s)", file=sys.stderr, flush=True)
    return rows


def selection_stats(retriever: SchemaRetriever, scored: Sequence[tuple[Row, SelectionScores]],
                    meter: TokenMeter) -> MethodStats:
    """``MethodStats`` of ``retriever``'s thresholds on ``scored`` questions (selection step only)."""
    stats = MethodStats()
    for r, ev in scored:
        sel = retriever.choose(r.prep, r.item.question, ev)
        cols = sel.column_keys()
        stats.add(r.item.gold, cols, set(sel.tables), meter(r.prep.schema, cols),
                  meter(r.prep.schema, r.prep.facts.column_keys), 0.0)
    return stats
