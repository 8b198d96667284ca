"""Gold tables and columns of a SQL query, resolved against a schema.

Which tables and columns a query uses: the linking benchmark
(:mod:`kgsql.lab.linking`) scores retrieval against them, evaluation reports
the gold columns a selection missed, and auto-CoT names them. Names are
resolved by :mod:`kgsql.sql.names`, the resolver the correction rules use
(SQLite's rules: own scope first, then the enclosing ones; aliases, CTEs and
derived tables resolved in their own scope). ``SELECT *`` needs its tables but
no particular column. Double-quoted strings that name no column are string
literals in SQLite (Spider uses them) and are ignored; anything else that
cannot be mapped is reported, never silently dropped.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp

from kgsql.schema.model import DatabaseSchema
from kgsql.sql.names import SchemaNames, SourceCache, columns_of, output_names, resolve, schema_table, scopes


@dataclass
class GoldSchema:
    """Real (schema-cased) names the query uses; ``unresolved`` explains what could not be mapped."""

    tables: set[str] = field(default_factory=set)
    columns: set[tuple[str, str]] = field(default_factory=set)
    unresolved: list[str] = field(default_factory=list)
    # Columns compared with a text literal (``County = 'Fresno'``, ``name LIKE 'A%'``): a question
    # usually names such a column only through the value, so only a value index can find it.
    literal_columns: set[tuple[str, str]] = field(default_factory=set)

    @property
    def ok(self) -> bool:
        return not self.unresolved


def gold_schema(sql: str, schema: DatabaseSchema, *, dialect: str = "sqlite") -> GoldSchema:
    """Tables and columns ``sql`` references in ``schema`` (see module doc)."""
    names = SchemaNames(schema)
    gold = GoldSchema()
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except sqlglot.errors.SqlglotError as exc:
        gold.unresolved.append(f"parse error: {str(exc).splitlines()[0][:120]}")
        return gold
    if tree is None:
        gold.unresolved.append("empty query")
        return gold
    quoted = {c.name for c in tree.find_all(exp.Column)
              if not c.table and c.this is not None and c.this.args.get("quoted")}
    for t in tree.find_all(exp.Table):
        real = schema_table(t, names.tables)
        if real is not None:
            gold.tables.add(real.name)
    all_scopes = scopes(tree)
    if not all_scopes:
        gold.unresolved.append("sqlglot could not build the query's scopes")
        return gold
    cache: SourceCache = {}
    for scope in all_scopes:
        for col in columns_of(scope):
            if _belongs_elsewhere(col, scope):
                continue
            key = _resolve(col, scope, names, cache, quoted, gold)
            if key is not None and _compared_with_text(col, quoted):
                gold.literal_columns.add(key)
    return gold


def _belongs_elsewhere(col: exp.Column, scope) -> bool:  # type: ignore[no-untyped-def]
    """``*``, a subquery's column (its own scope has it), or a UNION's ORDER BY naming a result column."""
    if isinstance(col.this, exp.Star) or not col.name:
        return True
    if isinstance(scope.expression, exp.Select) and col.find_ancestor(exp.Select) is not scope.expression:
        return True
    if isinstance(scope.expression, exp.SetOperation) and not col.table:
        return col.name.lower() in {n.lower() for n in output_names(scope.expression) or ()}
    return False


def _resolve(col: exp.Column, scope, names: SchemaNames, cache: SourceCache,  # type: ignore[no-untyped-def]
             quoted: set[str], gold: GoldSchema) -> tuple[str, str] | None:
    """Add ``col``'s real (table, column) to ``gold`` and return it; None when it names no schema column."""
    status, found = resolve(col, scope, names, cache)
    if status in ("ok", "ambiguous"):  # ambiguous: SQLite would refuse; the first table is the likeliest
        base = [s for s in found if s.table is not None]
        if not base:
            return None  # a derived table / CTE column or a SELECT alias: resolved where it is defined
        real = names.columns[base[0].table.lower()].get(col.name.lower())
        if real is None:
            return None  # rowid
        key = (base[0].table, real.name)
        gold.columns.add(key)
        return key
    if not col.table and col.name in quoted:
        return None  # a "string literal"
    if status == "unknown_qualifier":
        gold.unresolved.append(f"unknown table alias '{col.table}' for column '{col.name}'")
    else:
        gold.unresolved.append(f"column '{col.name}' not found in {sorted(s.label for s in found)}")
    return None


_TEXT_PREDICATES = (exp.EQ, exp.NEQ, exp.Like, exp.ILike, exp.Glob, exp.In)


def _compared_with_text(col: exp.Column, quoted: set[str]) -> bool:
    """``col`` is one side of a comparison whose other side is a string literal."""
    node: exp.Expression = col
    while isinstance(node.parent, (exp.Paren, exp.Lower, exp.Upper, exp.Trim, exp.Cast)):
        node = node.parent
    pred = node.parent
    if not isinstance(pred, _TEXT_PREDICATES):
        return False
    for other in pred.iter_expressions():
        if other is node:
            continue
        for leaf in [other, *other.find_all(exp.Literal, exp.Column)]:
            if isinstance(leaf, exp.Literal) and leaf.is_string:
                return True
            if isinstance(leaf, exp.Column) and not leaf.table and leaf.name in quoted:  # Spider's "value"
                return True
    return False
