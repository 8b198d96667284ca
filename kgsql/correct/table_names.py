"""Table-name repair: a table written as the question says it (``city``) where the database has ``cities``.

Small models keep the question's word for a table even after the error and the tip have named the real one:
"Who is the mayor of Harbourg?" on the example database failed twice with ``no such table: city`` beside the
tip "Did you mean 'cities'?" (local 1.5B). A repair of a failed query, with no model call: each table
reference the schema lacks is renamed to the one table whose name says the same words up to number and case
(:func:`kgsql.text.words.same_words`); a column qualified by the old name follows. Failing that, the one
table whose own name says those words: the name without its schema (``staff`` for PostgreSQL's
``hr.staff``) or without a merged database's prefix (``singer`` for ``concert_singer__singer`` in a
warehouse-wide schema, where the 1.5B drops the prefix its examples never had); of several such, the
one the prompt showed first (retrieval's order). A name no table or several tables could be, a common
table expression's name, or a schema-qualified table is left alone.
"""
from __future__ import annotations

from sqlglot import exp

from kgsql.correct.context import CheckContext
from kgsql.correct.repair import rewrite_tree
from kgsql.sql.names import own_name
from kgsql.text.words import same_words

__all__ = ["rename_tables"]


def _one_table_meant(name: str, tables: list[str], shown: tuple[str, ...]) -> str | None:
    found = [t for t in tables if same_words(name, t)]
    if not found:
        found = [t for t in tables if own_name(t) != t and same_words(name, own_name(t))]
        if len(found) > 1:
            rank = {t: i for i, t in enumerate(shown)}
            found = sorted((t for t in found if t.lower() in rank), key=lambda t: rank[t.lower()])[:1]
    return found[0] if len(found) == 1 else None


def _set_name(table: exp.Table, meant: str) -> None:
    """Point ``table`` at ``meant``; a PostgreSQL table outside the search path is ``schema.table``."""
    schema, dot, name = meant.partition(".")
    if dot:
        table.set("db", exp.to_identifier(schema))
    table.set("this", exp.to_identifier(name if dot else meant))


def rename_tables(ctx: CheckContext, sql: str) -> str | None:
    """``sql`` with every table the database lacks renamed to the one it has in another number or without a
    prefix, or None."""
    tables = [t.name for t in ctx.schema.tables]
    known = {t.lower() for t in tables}

    def rewrite(tree: exp.Expression) -> bool:
        ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
        changed = False
        for table in list(tree.find_all(exp.Table)):
            name = table.name
            if not name or table.args.get("db") or name.lower() in known | ctes:
                continue
            meant = _one_table_meant(name, tables, ctx.shown_tables)
            if meant is None:
                continue
            if not table.alias and own_name(meant) != meant:  # `singer.name` keeps naming it
                table.set("alias", exp.TableAlias(this=exp.to_identifier(name)))
            elif not table.alias:  # `city.name` names the table itself
                for column in tree.find_all(exp.Column):
                    if column.table.lower() == name.lower():
                        column.set("table", exp.to_identifier(meant))
            _set_name(table, meant)
            changed = True
        return changed

    return rewrite_tree(ctx, sql, rewrite)
