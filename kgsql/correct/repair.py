"""Join repair: a column written on the wrong table is moved to its owner, through the FK graph.

The commonest failure of small models (issue 12's 0.5B/1.5B runs) is a column
used on a table that lacks it: ``SELECT Model FROM car_names ORDER BY
Horsepower`` when ``Horsepower`` lives in ``cars_data``. A tip ("Did you
mean cars_data.Horsepower?") rarely gets a small model to add the join. The
graph knows the join, so this rule writes it: no model call.

Per SELECT (its own FROM items only; one with a derived table is left alone):

* a qualified column whose table lacks it but exactly one other FROM item
  has it is requalified to that item (``T2.name`` -> ``T3.name``);
* a column no FROM item has is joined in from the table that owns it and is
  nearest in the FK graph (a tie between owners: left alone), along the
  shortest key path, and qualified with it; the existing unqualified columns
  are qualified first so the new join cannot make them ambiguous;
* a column qualified with a table's own name that is no FROM alias takes the
  alias that table has in FROM (``major.major_name`` with ``major AS T2``), or
  the table is joined along the shortest key path (``budget.category`` in a
  query on ``event``); a name of an enclosing query is left to it.

The repaired query is an ordinary candidate: it is checked and run like any
other, so a wrong repair costs nothing but one execution.
"""
from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from kgsql.correct.context import CheckContext
from kgsql.schema.joins import FKGraph, fk_graph, path_to
from kgsql.sql.dialects import sqlglot_name
from kgsql.schema.model import DatabaseSchema, Table
from kgsql.sql.names import schema_table


class Scope:
    """One SELECT's FROM items: alias -> schema table, and the real tables present."""

    def __init__(self, select: exp.Select, schema: DatabaseSchema) -> None:
        self.select = select
        self.schema = schema
        self.by_alias: dict[str, Table] = {}
        self.alias_of: dict[str, str] = {}  # real table (lower) -> alias as written
        self.ok = True
        from_ = select.args.get("from_")
        items = ([from_.this] if from_ is not None else []) + [j.this for j in select.args.get("joins") or []]
        tables = {t.name.lower(): t for t in schema.tables}
        for item in items:
            if not isinstance(item, exp.Table) or not isinstance(item.this, exp.Identifier):
                self.ok = False
                return
            table = schema_table(item, tables)
            if table is None:
                self.ok = False
                return
            alias = item.alias_or_name
            self.by_alias[alias.lower()] = table
            self.alias_of.setdefault(table.name.lower(), alias)
        self.ok = bool(items)

    def holders(self, column: str) -> list[str]:
        """Aliases of the FROM items that have ``column``."""
        return [a for a, t in self.by_alias.items() if has_column(t, column)]

    def alias(self, table: str) -> str:
        return self.alias_of[table.lower()]

    def fresh_alias(self, table: str) -> str:
        """``table`` itself when no FROM item is called so, else ``table_2``, ``table_3``... (``hr.staff``:
        ``staff``, as a qualified name is no alias)."""
        base = table.rpartition(".")[2]
        alias, n = base, 1
        while alias.lower() in self.by_alias:
            n += 1
            alias = f"{base}_{n}"
        return alias

    def add_join(self, table: Table, alias: str, on: exp.Expression) -> None:
        """``JOIN table [AS alias] ON on``, known to this scope from now on."""
        self.by_alias[alias.lower()] = table
        self.alias_of.setdefault(table.name.lower(), alias)
        target = exp.to_table(table.name) if alias == table.name else exp.alias_(exp.to_table(table.name), alias,
                                                                                  table=True)
        self.select.join(target, on=on, copy=False)


def has_column(table: Table, column: str) -> bool:
    """Whether ``table`` has ``column`` (case-insensitive, as SQLite resolves names)."""
    return any(c.name.lower() == column.lower() for c in table.columns)


def own_columns(select: exp.Select) -> list[exp.Column]:
    return [c for c in select.find_all(exp.Column)
            if c.find_ancestor(exp.Select) is select and not isinstance(c.this, exp.Star)]


def _set_table(column: exp.Column, alias: str) -> None:
    column.set("table", exp.to_identifier(alias))


def qualify_all(scope: Scope) -> None:
    """Qualify the SELECT's unqualified columns that exactly one FROM item has."""
    for col in own_columns(scope.select):
        if not col.table:
            holders = scope.holders(col.name)
            if len(holders) == 1:
                _set_table(col, written(scope, holders[0]))


def written(scope: Scope, alias_lower: str) -> str:
    """The alias as the query wrote it."""
    table = scope.by_alias[alias_lower]
    for alias in scope.alias_of.values():
        if alias.lower() == alias_lower:
            return alias
    return table.name if table.name.lower() == alias_lower else alias_lower


def _nearest_owner(scope: Scope, column: str, g: FKGraph) -> tuple[Table, list[tuple[str, str]]] | None:
    present = [t.name for t in scope.by_alias.values()]
    found: list[tuple[int, Table, list[tuple[str, str]]]] = []
    for table in scope.schema.tables:
        if table.name.lower() in scope.alias_of or not has_column(table, column):
            continue
        steps = path_to(g, present, table.name)
        if steps:
            found.append((len(steps), table, steps))
    if not found:
        return None
    found.sort(key=lambda f: f[0])
    if len(found) > 1 and found[1][0] == found[0][0]:
        return None  # two owners equally near: the question must decide, not this rule
    return found[0][1], found[0][2]


def _join_path(scope: Scope, steps: list[tuple[str, str]], g: FKGraph) -> None:
    """Append a JOIN for each new table on the path, on the first FK between the pair."""
    for a, b in steps:
        if b.lower() in scope.alias_of:
            continue
        fk = g.fks(a, b)[0]
        alias = scope.fresh_alias(b)

        def ref(table: str) -> exp.Identifier:
            return exp.to_identifier(alias if table == b else scope.alias(table))

        left = exp.column(exp.to_identifier(fk.column), table=ref(fk.table))
        right = exp.column(exp.to_identifier(fk.ref_column), table=ref(fk.ref_table))
        scope.add_join(scope.schema.table(b), alias, exp.EQ(this=left, expression=right))


def enclosing_names(select: exp.Select) -> set[str]:
    """Aliases and table names of the queries around ``select`` (a correlated reference is theirs)."""
    names: set[str] = set()
    outer = select.parent
    while outer is not None:
        if isinstance(outer, exp.Select):
            for item in outer.find_all(exp.Table):
                names.update({item.name.lower(), item.alias_or_name.lower()})
        outer = outer.parent
    return names


def _requalify_or_join(scope: Scope, col: exp.Column, g: FKGraph, enclosing: set[str]) -> bool:
    """``table.column`` whose qualifier is a schema table's own name but no FROM alias: the table's alias
    when it is in FROM under another name, else the table joined along the shortest key path."""
    qualifier = col.table.lower()
    if qualifier in enclosing:
        return False
    table = next((t for t in scope.schema.tables if t.name.lower() == qualifier), None)
    if table is None or not has_column(table, col.name):
        return False
    if qualifier in scope.alias_of:  # in FROM, written under an alias
        _set_table(col, scope.alias(table.name))
        return True
    steps = path_to(g, [t.name for t in scope.by_alias.values()], table.name)
    if not steps:
        return False
    qualify_all(scope)
    _join_path(scope, steps, g)
    _set_table(col, scope.alias(table.name))
    return True


def _repair_select(select: exp.Select, schema: DatabaseSchema, g: FKGraph) -> bool:
    scope = Scope(select, schema)
    if not scope.ok:
        return False
    outputs = {e.alias.lower() for e in select.expressions if isinstance(e, exp.Alias) and e.alias}
    changed = joined = False
    for col in own_columns(select):
        qualifier = col.table.lower()
        holders = scope.holders(col.name)
        if qualifier and qualifier in scope.by_alias:
            if has_column(scope.by_alias[qualifier], col.name):
                continue
            if len(holders) == 1:
                _set_table(col, written(scope, holders[0]))
                changed = True
                continue
        elif qualifier:
            # a real table's name: aliased in FROM (major.x with major AS T2), or not joined yet (budget.x)
            if _requalify_or_join(scope, col, g, enclosing_names(select)):
                changed = joined = True
            continue  # else an alias of an enclosing query (correlated) or a typo the tips handle
        elif holders or col.name.lower() in outputs:
            continue
        if holders:
            continue  # several FROM items have it: ambiguity, not a missing join
        owner = _nearest_owner(scope, col.name, g)
        if owner is None:
            continue
        table, steps = owner
        if not joined:
            qualify_all(scope)
            joined = True
        _join_path(scope, steps, g)
        _set_table(col, scope.alias(table.name))
        changed = True
    return changed


def rewrite_tree(ctx: CheckContext, sql: str, rewrite: Callable[[exp.Expression], bool],
                 dialect: str | None = None) -> str | None:
    """``sql`` after ``rewrite`` changed a copy of its parsed tree in place (True: changed), written in
    ``dialect`` (default: the context's); None when it does not parse, nothing changed, or the text
    came out the same. The frame every rewrite and repair of :mod:`kgsql.correct.loop` shares."""
    tree = ctx.tree(sql)
    if tree is None:
        return None
    tree = tree.copy()
    if not rewrite(tree):
        return None
    rewritten = tree.sql(dialect=dialect or sqlglot_name(ctx.dialect), normalize_functions=False)  # as written
    return rewritten if " ".join(rewritten.split()) != " ".join(sql.split()) else None


def rewrite_selects(ctx: CheckContext, sql: str, rewrite: Callable[[exp.Select], bool],
                    dialect: str = "sqlite") -> str | None:
    """:func:`rewrite_tree` with ``rewrite`` applied to each SELECT of the tree."""
    def each(tree: exp.Expression) -> bool:
        changed = False
        for select in list(tree.find_all(exp.Select)):
            changed = rewrite(select) or changed
        return changed

    return rewrite_tree(ctx, sql, each, dialect)


def repair_joins(ctx: CheckContext, sql: str) -> str | None:
    """``sql`` with misplaced columns moved to their owning tables, or None when nothing applies."""
    g = fk_graph(ctx.schema)
    return rewrite_selects(ctx, sql, lambda select: _repair_select(select, ctx.schema, g))
