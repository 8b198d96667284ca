"""Gold tables and columns of a SQL query, resolved against a schema.

Which tables and columns a query uses: the linking benchmark
(:mod:`kgsql.lab.linking`) scores retrieval against them, evaluation reports
the gold columns a selection missed, and auto-CoT names them. sqlglot parses
and qualifies the query (so unqualified columns get their table), then every
column reference is mapped, scope by scope, through aliases to a real
``table.column``. ``SELECT *`` needs its tables but no particular column.
Double-quoted strings that name no column are string literals in SQLite
(Spider uses them) and are ignored; anything else that cannot be mapped is
reported, never silently dropped.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import traverse_scope

from kgsql.schema.model import DatabaseSchema


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


class _Names:
    """Case-insensitive lookup of real table/column names."""

    def __init__(self, schema: DatabaseSchema) -> None:
        self.tables = {t.name.lower(): t.name for t in schema.tables}
        self.columns = {t.name.lower(): {c.name.lower(): c.name for c in t.columns} for t in schema.tables}

    def sqlglot_schema(self) -> dict[str, dict[str, str]]:
        return {t: {c: "TEXT" for c in cols} for t, cols in self.columns.items()}


def _lower_identifiers(tree: exp.Expression) -> exp.Expression:
    """Lower-case every identifier so quoted mixed-case names resolve like SQLite does."""
    for ident in tree.find_all(exp.Identifier):
        ident.set("this", ident.this.lower())
    return tree


def gold_schema(sql: str, schema: DatabaseSchema, *, dialect: str = "sqlite") -> GoldSchema:
    """Tables and columns ``sql`` references in ``schema`` (see module doc)."""
    names = _Names(schema)
    gold = GoldSchema()
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except sqlglot.errors.SqlglotError as exc:
        gold.unresolved.append(f"parse error: {str(exc).splitlines()[0][:120]}")
        return gold
    if tree is None:
        gold.unresolved.append("empty query")
        return gold
    tree = _lower_identifiers(tree)
    quoted_strings = {
        c.name for c in tree.find_all(exp.Column) if not c.table and c.this is not None and c.this.args.get("quoted")
    }
    try:
        tree = qualify(
            tree, schema=names.sqlglot_schema(), dialect=dialect, validate_qualify_columns=False,
            expand_stars=False, quote_identifiers=False, identify=False,
        )
    except Exception:  # noqa: BLE001 - sqlglot raises many types; fall back to unqualified scopes
        pass
    for t in tree.find_all(exp.Table):
        real = names.tables.get(t.name.lower())
        if real:
            gold.tables.add(real)
    try:
        scopes = traverse_scope(tree)
    except Exception as exc:  # noqa: BLE001
        gold.unresolved.append(f"scope error: {exc}")
        return gold
    for scope in scopes:
        sources = _table_sources(scope, names)  # inner first: unqualified names prefer it
        outer = scope.parent
        while outer is not None:  # correlated subqueries see the enclosing scopes' aliases
            for alias, table in _table_sources(outer, names).items():
                sources.setdefault(alias, table)
            outer = outer.parent
        for col in scope.columns:
            key = _resolve(col, scope, sources, names, quoted_strings, gold)
            if key is not None and _compared_with_text(col, quoted_strings):
                gold.literal_columns.add(key)
    return gold


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


def _table_sources(scope, names: _Names) -> dict[str, str]:
    out: dict[str, str] = {}
    for alias, (_node, source) in scope.selected_sources.items():
        if isinstance(source, exp.Table) and source.name.lower() in names.tables:
            out[alias.lower()] = source.name.lower()
    return out


def _resolve(col: exp.Column, scope, sources: dict[str, str], names: _Names, quoted: set[str],
             gold: GoldSchema) -> tuple[str, str] | None:
    """Add ``col``'s real (table, column) to ``gold`` and return it; None when it names no schema column."""
    cname = col.name.lower()
    if not cname or cname == "*":
        return None
    qualifier = col.table.lower() if col.table else ""
    if qualifier:
        local = scope.selected_sources.get(qualifier)
        if local is not None and not isinstance(local[1], exp.Table):
            return None  # a derived table / CTE column: resolved in its own scope
        table = sources.get(qualifier) or (qualifier if qualifier in names.tables and qualifier not in scope.selected_sources else None)
        if table is None:
            if qualifier in scope.selected_sources:  # a derived table / CTE column: resolved in its own scope
                return None
            gold.unresolved.append(f"unknown table alias '{col.table}' for column '{col.name}'")
            return None
        real = names.columns[table].get(cname)
        if real is None:
            if cname in quoted:
                return None
            gold.unresolved.append(f"no column '{col.name}' in table '{names.tables[table]}'")
            return None
        gold.columns.add((names.tables[table], real))
        return names.tables[table], real
    owners = [t for t in sources.values() if cname in names.columns[t]]
    if owners:
        t = owners[0]
        gold.columns.add((names.tables[t], names.columns[t][cname]))
        return names.tables[t], names.columns[t][cname]
    if cname in quoted:
        return None  # a "string literal"
    if any(cname == (a.alias or "").lower() and a.this is not col for a in scope.expression.find_all(exp.Alias)):
        return None  # a reference to a SELECT alias (ORDER BY total)
    if scope.selected_sources and all(not isinstance(src, exp.Table) for _n, src in scope.selected_sources.values()):
        return None  # selects from a derived table only: its columns are resolved inside it
    gold.unresolved.append(f"column '{col.name}' not found in {sorted(names.tables[s] for s in set(sources.values()))}")
    return None
