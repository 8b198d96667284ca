"""Lookup repair: a column named after a key's lookup table is read from that table, through the key.

Databases keep repeated labels in lookup tables: ``superhero.eye_colour_id``
references ``colour(id)``, whose one label column is ``colour.colour``. Asked
for "the eye colour of hero 75", small models write the name the question
uses, ``SELECT eye_colour FROM superhero WHERE id = 75``, and keep writing it
when told the column does not exist (BIRD superhero: 5 of the first 12
failures with the 1.5B, hand-written evidence notwithstanding). The graph
knows the key and the lookup table, so this rule writes the join: no model
call.

Per SELECT (its own FROM items only; one with a derived table is left alone),
a column that no FROM item has and no other rule owns is replaced when

* exactly one FROM item (the one its qualifier names, if any) has a foreign
  key column named like it plus ``_id``/``id`` (``eye_colour`` ->
  ``eye_colour_id``), and
* the referenced table has one label: its only column that is neither a key
  nor a foreign key, or else its only text column of that kind named after
  the table or ``name`` (``colour.colour``, ``publisher.publisher_name``);

by that label on the lookup table, joined on the key under an alias of its
own (``eye_colour`` and ``skin_colour`` both read ``colour``). The repaired
query is an ordinary candidate: checked and run like any other.

The same knowledge rewrites a key compared with a label before the query
runs (:func:`labels_through_keys`): ``alignment_id = 'Bad'`` runs and matches
nothing, since the key holds numbers (read from its values: Spider's
``car_makers.country`` is declared TEXT); it becomes ``alignment_id IN
(SELECT id FROM alignment WHERE alignment = 'Bad')``.

And a key shown as the answer (:func:`labels_for_shown_keys`): asked
"what is Abomination's eye colour?", small models answer ``SELECT eye_colour_id
FROM superhero ...``, a number that means nothing to the person asking. When
the outer query shows a foreign key into a pure lookup table (its key and one
label, nothing else) and neither the question nor the evidence names the key
or asks for ids, the label is shown instead, joined through the key.
"""
from __future__ import annotations

from sqlglot import exp

from kgsql.correct.context import CheckContext
from kgsql.correct.repair import Scope, own_columns, qualify_all, rewrite_selects, rewrite_tree, written
from kgsql.correct.values import value_exists
from kgsql.errors import KgsqlError
from kgsql.schema.model import Column, DatabaseSchema, ForeignKey, Table
from kgsql.sql.comparisons import compared
from kgsql.sql.dialects import sqlglot_name
from kgsql.sql.names import resolved_columns
from kgsql.text.words import is_number

__all__ = ["label_column", "labels_for_shown_keys", "labels_through_keys", "repair_lookups"]

_KEY_SUFFIXES = ("_id", "id")


def label_column(schema: DatabaseSchema, table: Table) -> Column | None:
    """The one column that names a row of a lookup table (None when there is not exactly one)."""
    keys = {fk.column.lower() for fk in schema.foreign_keys if fk.table.lower() == table.name.lower()}
    plain = [c for c in table.columns if not c.is_primary_key and c.name.lower() not in keys]
    if len(plain) == 1:
        return plain[0]
    named = [c for c in plain if ("TEXT" in c.type.upper() or "CHAR" in c.type.upper())
             and (table.name.lower() in c.name.lower() or "name" in c.name.lower())]
    return named[0] if len(named) == 1 else None


def _key_for(scope: Scope, column: exp.Column) -> tuple[str, ForeignKey] | None:
    """(FROM item alias, its foreign key) whose key column is ``column``'s name plus a key suffix."""
    wanted = {column.name.lower() + suffix for suffix in _KEY_SUFFIXES}
    aliases = [column.table.lower()] if column.table else list(scope.by_alias)
    found = [(alias, fk) for alias in aliases if alias in scope.by_alias
             for fk in scope.schema.foreign_keys
             if fk.table.lower() == scope.by_alias[alias].name.lower() and fk.column.lower() in wanted]
    return found[0] if len(found) == 1 else None


def _join_lookup(scope: Scope, alias: str, fk: ForeignKey) -> str:
    """Join the key's table under a fresh alias; the alias."""
    lookup = scope.schema.table(fk.ref_table)
    new = scope.fresh_alias(lookup.name)
    left = exp.column(exp.to_identifier(fk.column), table=exp.to_identifier(written(scope, alias)))
    right = exp.column(exp.to_identifier(fk.ref_column), table=exp.to_identifier(new))
    scope.add_join(lookup, new, exp.EQ(this=left, expression=right))
    return new


def _repair_select(select: exp.Select, schema: DatabaseSchema) -> bool:
    scope = Scope(select, schema)
    if not scope.ok:
        return False
    outputs = {e.alias.lower() for e in select.expressions if isinstance(e, exp.Alias) and e.alias}
    owned = {c.name.lower() for t in schema.tables for c in t.columns}
    changed = False
    for col in own_columns(select):
        qualifier = col.table.lower()
        if (qualifier and qualifier not in scope.by_alias) or col.name.lower() in owned or col.name.lower() in outputs:
            continue  # another query's alias, a column some table has (join repair's case), an output name
        key = _key_for(scope, col)
        if key is None:
            continue
        alias, fk = key
        label = label_column(schema, schema.table(fk.ref_table))
        if label is None:
            continue
        if not changed:
            qualify_all(scope)  # before the join, so the lookup's own columns cannot make others ambiguous
        lookup_alias = _join_lookup(scope, alias, fk)
        col.set("this", exp.to_identifier(label.name))
        col.set("table", exp.to_identifier(lookup_alias))
        changed = True
    return changed


def repair_lookups(ctx: CheckContext, sql: str) -> str | None:
    """``sql`` with lookup-table labels read through their keys, or None when nothing applies."""
    return rewrite_selects(ctx, sql, lambda select: _repair_select(select, ctx.schema),
                           dialect=sqlglot_name(ctx.dialect))


def _label_subquery(schema: DatabaseSchema, fk: ForeignKey, literals: list[exp.Expression]) -> exp.Expression | None:
    """``SELECT ref_column FROM ref_table WHERE label = <literal>`` (or IN), None without one label."""
    lookup = schema.table(fk.ref_table)
    label = label_column(schema, lookup)
    if label is None:
        return None
    target = exp.column(exp.to_identifier(label.name))
    condition: exp.Expression = (exp.EQ(this=target, expression=literals[0].copy()) if len(literals) == 1
                                 else exp.In(this=target, expressions=[lit.copy() for lit in literals]))
    return exp.select(exp.column(exp.to_identifier(fk.ref_column))).from_(exp.to_table(lookup.name)).where(condition)


def _holds_any(ctx: CheckContext, table: str, column: str, texts: list[str]) -> bool:
    """Does ``table.column`` hold one of ``texts`` (:func:`value_exists`' probes; a probe that fails says no)?"""
    try:
        conn = ctx.connection()
        return any(value_exists(conn, table, column, text) for text in texts)
    except (KgsqlError, OSError, ValueError):
        return False


def labels_through_keys(ctx: CheckContext, sql: str) -> str | None:
    """``sql`` with each foreign key that holds numbers (:attr:`Column.holds_numbers`: by its values, so a
    key declared TEXT counts too) compared with text it does not hold (``alignment_id = 'Bad'``) compared
    through its lookup table's label instead; None when nothing applies."""
    keys = {(fk.table.lower(), fk.column.lower()): fk for fk in ctx.schema.foreign_keys}

    def through_labels(tree: exp.Expression) -> bool:
        columns = resolved_columns(tree, ctx.names)
        changed = False
        for node in list(tree.find_all(exp.EQ, exp.NEQ, exp.In)):
            column, literals = compared(node)
            found = columns.get(id(column)) if isinstance(column, exp.Column) else None
            if found is None or not found[1].holds_numbers or not literals or not all(
                    isinstance(lit, exp.Literal) and lit.is_string and not is_number(lit.this) for lit in literals):
                continue
            if _holds_any(ctx, found[0], found[1].name, [lit.this for lit in literals]):
                continue  # ingest saw only numbers, yet the words are there: compared as written
            fk = keys.get((found[0].lower(), found[1].name.lower()))
            subquery = _label_subquery(ctx.schema, fk, literals) if fk is not None else None
            if subquery is None:
                continue
            member: exp.Expression = exp.In(this=column.copy(), query=exp.Subquery(this=subquery))
            node.replace(exp.Not(this=member) if isinstance(node, exp.NEQ) else member)
            changed = True
        return changed

    return rewrite_tree(ctx, sql, through_labels)


#: Words by which a question asks for keys themselves ("the ids of ...", "the colour code").
_ASKS_FOR_KEYS = frozenset({"id", "ids", "identifier", "identifiers", "code", "codes", "number", "numbers", "key",
                            "keys"})


def _pure_lookup_label(schema: DatabaseSchema, fk: ForeignKey) -> Column | None:
    """The label of a table holding only its key and that label (``colour(id, colour)``), else None."""
    table = schema.table(fk.ref_table)
    if len(table.columns) != 2 or not any(c.name.lower() == fk.ref_column.lower() for c in table.columns):
        return None
    label = label_column(schema, table)
    return label if label is not None and label.name.lower() != fk.ref_column.lower() else None


def _asks_for_key(text: str, key: str) -> bool:
    words = {w.strip("?.,;:'\"()").lower() for w in text.split()}
    return key.lower() in text.lower() or bool(words & _ASKS_FOR_KEYS)


def labels_for_shown_keys(ctx: CheckContext, sql: str) -> str | None:
    """``sql`` whose outer query shows a lookup table's label instead of the key into it (see the module
    docstring); None when nothing applies."""
    keys = {(fk.table.lower(), fk.column.lower()): fk for fk in ctx.schema.foreign_keys}
    asked = f"{ctx.question} {ctx.evidence}"

    def show_labels(tree: exp.Expression) -> bool:
        if not isinstance(tree, exp.Select) or tree.args.get("group") is not None:
            return False  # a set operation's or a grouped query's outputs are left alone
        scope = Scope(tree, ctx.schema)
        if not scope.ok:
            return False
        shown: list[tuple[exp.Column, str, ForeignKey, Column]] = []
        for output in tree.expressions:
            column = output.this if isinstance(output, exp.Alias) else output
            if not isinstance(column, exp.Column) or isinstance(column.this, exp.Star):
                continue
            holders = [column.table.lower()] if column.table else scope.holders(column.name)
            if len(holders) != 1 or holders[0] not in scope.by_alias:
                continue
            fk = keys.get((scope.by_alias[holders[0]].name.lower(), column.name.lower()))
            label = _pure_lookup_label(ctx.schema, fk) if fk is not None else None
            if label is None or _asks_for_key(asked, column.name):
                continue
            shown.append((column, holders[0], fk, label))
        if not shown:
            return False
        qualify_all(scope)
        for column, alias, fk, label in shown:
            lookup_alias = _join_lookup(scope, alias, fk)
            column.set("this", exp.to_identifier(label.name))
            column.set("table", exp.to_identifier(lookup_alias))
        return True

    return rewrite_tree(ctx, sql, show_labels)
