"""The grouping a question asks for: "the average weight of cars each year" is one number per year.

Small models drop the ``GROUP BY`` of a per-group question and the query still runs, answering one row:
``SELECT AVG(Weight) FROM cars_data`` for "What is the average weight of cars each year?",
``SELECT COUNT(T1.name) FROM scenicSpots AS T1 JOIN cities AS T2 ON Within(...)`` for "How many 5A
attractions are there in each city?", ``SELECT COUNT(DISTINCT T1.Maker), T2.Continent ...`` for "How many
car makers are there per continent?" (SQLite answers a bare column beside an aggregate from one arbitrary
row). A rewrite of every candidate, when the question says "each / per / every <word>" and the outer
SELECT aggregates with no ``GROUP BY``:

* outputs that are bare columns beside the aggregates are grouped by;
* when every output is an aggregate, the word is looked up among the FROM items: one column named by it
  (``Year``), else one table named by it (``cities``) and the column that names its rows (one called
  ``name``, else :func:`kgsql.correct.lookup.label_column`'s choice); that column is shown first and
  grouped by.

Nothing changes when the word names nothing, or several things, in the query's tables.
"""
from __future__ import annotations

import re

from sqlglot import exp

from kgsql.correct.context import CheckContext
from kgsql.correct.lookup import label_column
from kgsql.correct.repair import Scope, rewrite_tree, written
from kgsql.schema.model import Column, DatabaseSchema, Table
from kgsql.text.words import same_words

__all__ = ["group_per_question"]

#: "for each city", "per continent", "every year", "each of the districts".
_EACH = re.compile(r"\b(?:each|per|every)\s+(?:of\s+the\s+)?([A-Za-z_]+)", re.IGNORECASE)


def _row_name(schema: DatabaseSchema, table: Table) -> Column | None:
    """The column that names a row of ``table``: one called ``name``, else the lookup label."""
    named = [c for c in table.columns if c.name.lower() == "name"]
    return named[0] if len(named) == 1 else label_column(schema, table)


def _group_column(scope: Scope, word: str) -> exp.Column | None:
    """The one FROM-item column the word names, else the row name of the one FROM table it names."""
    columns = [(alias, c) for alias, t in scope.by_alias.items() for c in t.columns if same_words(word, c.name)]
    if len(columns) == 1:
        alias, column = columns[0]
    else:
        tables = [(alias, t) for alias, t in scope.by_alias.items() if same_words(word, t.name)]
        if columns or len(tables) != 1:
            return None
        alias, table = tables[0]
        found = _row_name(scope.schema, table)
        if found is None:
            return None
        column = found
    return exp.column(exp.to_identifier(column.name), table=exp.to_identifier(written(scope, alias)))


def _is_aggregate(output: exp.Expression) -> bool:
    return output.unalias().find(exp.AggFunc) is not None


def group_per_question(ctx: CheckContext, sql: str) -> str | None:
    """``sql`` grouped the way the question asks (module docstring), or None."""
    asked = _EACH.findall(ctx.question)
    if not asked:
        return None

    def group(tree: exp.Expression) -> bool:
        if not isinstance(tree, exp.Select) or tree.args.get("group") is not None:
            return False
        outputs = tree.expressions
        if not any(_is_aggregate(o) for o in outputs):
            return False
        bare = [o.unalias() for o in outputs if not _is_aggregate(o)]
        if bare:
            if not all(isinstance(b, exp.Column) and not isinstance(b.this, exp.Star) for b in bare):
                return False
            tree.group_by(*[b.copy() for b in bare], copy=False)
            return True
        scope = Scope(tree, ctx.schema)
        if not scope.ok:
            return False
        for word in asked:
            column = _group_column(scope, word)
            if column is not None:
                tree.set("expressions", [column] + list(outputs))
                tree.group_by(column.copy(), copy=False)
                return True
        return False

    return rewrite_tree(ctx, sql, group)
