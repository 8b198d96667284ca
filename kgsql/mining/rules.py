"""Rule mining: what a (question, SQL) pair says about its database, read exactly with sqlglot.

No model call. From one pair:

* **joins** people write: ``a.x = b.y`` between columns of two tables (in ``ON``
  or ``WHERE``), also where no foreign key is declared;
* **derived expressions**: arithmetic over columns (ratios, differences),
  ``CASE`` buckets and date parts (``strftime``), with their alias as the name;
* **values**: a text literal compared with a column, with the question's own
  words for it where the question spells it (``'Africa'`` for ``Continent``);
* **usage**: every column the query reads (counts add up over a log).

Names are resolved by :mod:`kgsql.sql.names` (SQLite's scoping), so aliases,
subqueries and unqualified columns land on the real ``table.column``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from sqlglot import exp

from kgsql.schema.facts import Fact
from kgsql.schema.model import DatabaseSchema
from kgsql.sql.names import SchemaNames, SourceCache, columns_of, parse_sqlite, resolve, scopes


@dataclass(frozen=True)
class Pair:
    """One past question with its SQL; ``id`` is stable across runs (see ``kgsql.mining.history``)."""

    id: str
    db_id: str
    question: str
    sql: str
    evidence: str = ""


_DATE_FUNCS = ("strftime", "date", "julianday", "substr")
_COMPARISONS = (exp.EQ, exp.NEQ, exp.Like, exp.ILike, exp.In, exp.GT, exp.GTE, exp.LT, exp.LTE)


class _Resolver:
    """``exp.Column`` -> real ``table.column`` in one query (None for aliases, CTE columns, unknowns)."""

    def __init__(self, schema: DatabaseSchema) -> None:
        self.names = SchemaNames(schema)
        self.cache: SourceCache = {}

    def __call__(self, column: exp.Column, scope) -> str | None:  # type: ignore[no-untyped-def]
        status, found = resolve(column, scope, self.names, self.cache)
        base = [s for s in found if s.table is not None]
        if status not in ("ok", "ambiguous") or not base:
            return None
        real = self.names.columns[base[0].table.lower()].get(column.name.lower())
        return f"{base[0].table}.{real.name}" if real is not None else None


def mine_pair(pair: Pair, schema: DatabaseSchema, *, mined_at: str = "") -> list[Fact] | None:
    """Every fact the pair's SQL states about ``schema`` (module doc); None when it does not parse."""
    tree = parse_sqlite(pair.sql)
    if tree is None:
        return None
    resolver = _Resolver(schema)
    facts: list[Fact] = []

    def add(kind: str, subject: str, obj: str = "", text: str = "") -> None:
        facts.append(Fact(schema.name, kind, subject, obj, text, 1, [pair.id], "rule", mined_at))

    for scope in scopes(tree):
        own = [c for c in columns_of(scope) if _in_scope(c, scope)]
        resolved = {id(c): resolver(c, scope) for c in own}
        for name in sorted({r for r in resolved.values() if r}):
            add("usage", name)
        for node in scope.expression.find_all(exp.EQ):
            if not _owned(node, scope):
                continue
            left, right = node.this, node.expression
            if isinstance(left, exp.Column) and isinstance(right, exp.Column):
                a, b = resolved.get(id(left)), resolved.get(id(right))
                if a and b and a.split(".")[0].lower() != b.split(".")[0].lower():
                    first, second = sorted((a, b), key=str.lower)
                    add("join", first, second)
        for node in scope.expression.find_all(*_COMPARISONS):
            if not _owned(node, scope):
                continue
            for column, literal in _column_literals(node, resolved):
                name = resolved.get(id(column))
                if name:
                    add("value", name, literal, _phrase(pair.question, literal))
        for item in _derived(scope):
            cols = sorted({r for c in item.find_all(exp.Column) if (r := resolved.get(id(c)))}, key=str.lower)
            if cols:
                alias = item.parent.alias if isinstance(item.parent, exp.Alias) else ""
                add("expression", ",".join(cols), _qualified_sql(item, resolved), alias)
    return facts


def _in_scope(column: exp.Column, scope) -> bool:  # type: ignore[no-untyped-def]
    if isinstance(column.this, exp.Star) or not column.name:
        return False
    return not isinstance(scope.expression, exp.Select) or column.find_ancestor(exp.Select) is scope.expression


def _owned(node: exp.Expression, scope) -> bool:  # type: ignore[no-untyped-def]
    """``node`` belongs to this scope's SELECT, not to a subquery inside it."""
    return not isinstance(scope.expression, exp.Select) or node.find_ancestor(exp.Select) is scope.expression


def _column_literals(node: exp.Expression, resolved: dict[int, str | None]) -> list[tuple[exp.Column, str]]:
    """(column, text literal) pairs a comparison states (``c = 'x'``, ``c IN ('x', 'y')``, ``c LIKE '%x%'``).

    A double-quoted name that is no column is SQLite's string literal (Spider writes ``name = "Bob"``)."""
    sides = [node.this, *(node.expressions if isinstance(node, exp.In) else [node.expression])]
    columns = [s for s in sides if isinstance(s, exp.Column) and resolved.get(id(s))]
    literals = [s.this for s in sides if isinstance(s, exp.Literal) and s.is_string]
    literals += [s.name for s in sides if isinstance(s, exp.Column) and not s.table and not resolved.get(id(s))
                 and isinstance(s.this, exp.Identifier) and s.this.quoted]
    if len(columns) != 1 or not literals:
        return []
    return [(columns[0], lit.strip("%")) for lit in literals if lit.strip("%")]


def _phrase(question: str, literal: str) -> str:
    """The question's spelling of ``literal`` when it contains it (case and spacing aside)."""
    m = re.search(re.escape(literal).replace(r"\ ", r"\s+"), question, flags=re.IGNORECASE)
    return m.group(0) if m else ""


def _derived(scope) -> list[exp.Expression]:  # type: ignore[no-untyped-def]
    """Outermost computed expressions of this scope: arithmetic, CASE, date parts."""
    found = []
    for node in scope.expression.find_all(exp.Div, exp.Sub, exp.Mul, exp.Add, exp.Case, exp.Anonymous,
                                          exp.TimeToStr, exp.Substring):
        if not _owned(node, scope) or not node.find(exp.Column):
            continue
        if isinstance(node, exp.Anonymous) and node.name.lower() not in _DATE_FUNCS:
            continue
        if any(isinstance(p, (exp.Div, exp.Sub, exp.Mul, exp.Add, exp.Case)) for p in _ancestors(node, scope)):
            continue  # part of a bigger expression: that one is the fact
        found.append(node)
    return found


def _ancestors(node: exp.Expression, scope) -> list[exp.Expression]:  # type: ignore[no-untyped-def]
    out = []
    parent = node.parent
    while parent is not None and parent is not scope.expression:
        out.append(parent)
        parent = parent.parent
    return out


def _qualified_sql(node: exp.Expression, resolved: dict[int, str | None]) -> str:
    """The expression's SQL with every column written as its real ``table.column``."""
    copy = node.copy()
    originals = list(node.find_all(exp.Column))
    for original, column in zip(originals, copy.find_all(exp.Column)):
        name = resolved.get(id(original))
        if name:
            table, col = name.split(".", 1)
            column.replace(exp.column(col, table=table, quoted=False))
    return copy.sql(dialect="sqlite")
