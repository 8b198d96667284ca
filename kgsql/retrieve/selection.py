"""``SchemaSelection``: what retrieval chose for a question, and why.

Prompt renderers consume it: ``to_schema(full)`` gives the sub-schema (same
dataclasses as the full one, descriptions and examples kept, FKs restricted
to the chosen tables and columns), and each column carries its score and the
reasons it was chosen, so a renderer or a person can see why it is there.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from kgsql.retrieve.values import ValueMatch
from kgsql.schema.model import DatabaseSchema

#: Reasons a column can be selected.
REASON_NAME = "name"  # its name matched the question
REASON_DESCRIPTION = "description"  # its description / value explanation matched
REASON_VALUE = "value"  # a value of it is mentioned in the question
REASON_TABLE = "table"  # its table matched strongly (the table brings its key columns)
REASON_JOIN = "join_path"  # needed to join the selected tables
REASON_PRIMARY_KEY = "primary_key"  # key of a selected table
REASON_TOP_K = "top_k"  # kept by the top-k floor, below the threshold
REASONS = (REASON_NAME, REASON_DESCRIPTION, REASON_VALUE, REASON_TABLE, REASON_JOIN, REASON_PRIMARY_KEY, REASON_TOP_K)


@dataclass(frozen=True)
class ColumnChoice:
    table: str
    column: str
    score: float
    reasons: tuple[str, ...]


@dataclass
class SchemaSelection:
    """Tables and columns selected for one question (schema order)."""

    db_name: str
    question: str
    tables: list[str] = field(default_factory=list)
    columns: list[ColumnChoice] = field(default_factory=list)
    values: list[ValueMatch] = field(default_factory=list)
    join_tables: list[str] = field(default_factory=list)  # added only to connect others
    disconnected: bool = False  # selected tables that no FK path joins
    timings_ms: dict[str, float] = field(default_factory=dict)
    # Each question word's best late-interaction match over every table and column document: how well
    # the schema holds the word at all (issue 34's refusals read the weakest ones).
    word_support: dict[str, float] = field(default_factory=dict)

    def column_keys(self) -> set[tuple[str, str]]:
        return {(c.table, c.column) for c in self.columns}

    def columns_of(self, table: str) -> list[ColumnChoice]:
        return [c for c in self.columns if c.table == table]

    def to_schema(self, full: DatabaseSchema) -> DatabaseSchema:
        """The sub-schema of ``full`` holding only the selected tables and columns.

        A copy: the full schema is never modified. Foreign keys are kept when
        both of their ends were selected.
        """
        keep = self.column_keys()
        tables = []
        for t in full.tables:
            if t.name not in self.tables:
                continue
            nt = copy.copy(t)
            nt.columns = [copy.deepcopy(c) for c in t.columns if (t.name, c.name) in keep]
            tables.append(nt)
        fks = [fk for fk in full.foreign_keys
               if (fk.table, fk.column) in keep and (fk.ref_table, fk.ref_column) in keep]
        return DatabaseSchema(name=full.name, tables=tables, foreign_keys=fks, path=full.path,
                              dialect=full.dialect, is_spatial=full.is_spatial)

    def to_dict(self) -> dict[str, Any]:
        return {
            "db_name": self.db_name,
            "question": self.question,
            "tables": list(self.tables),
            "columns": [{"table": c.table, "column": c.column, "score": c.score, "reasons": list(c.reasons)}
                        for c in self.columns],
            "values": [{"table": v.table, "column": v.column, "value": v.value, "score": v.score, "kind": v.kind}
                       for v in self.values],
            "join_tables": list(self.join_tables),
            "disconnected": self.disconnected,
            "word_support": dict(self.word_support),
        }
