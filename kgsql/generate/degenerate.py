"""Answers the query's own form decides, whatever the data: three shapes a small model writes that run,
return rows and still say nothing.

* **echo**: every column the answer shows is fixed by an equality to a literal of the same query ("Describe
  the section h." answered ``SELECT section_name FROM Sections WHERE section_name = 'h'``): the rows say the
  question's value back.
* **count per unique key**: rows counted per the primary key of the one table read ("Which dogs are of the
  rarest breed?" answered ``... IN (SELECT breed_code FROM Breeds GROUP BY breed_code ORDER BY count(*))``):
  each group is one row, so every count is 1 and the ranking is arbitrary.
* **text for a number**: a column whose stored values are all numbers compared with a word
  (``car_makers.country = 'france'`` where ``country`` holds the key of ``countries``): it matches nothing.
* **unlinked join**: a table joined with no condition that ties it to another table of the SELECT
  (``JOIN Owners AS T2 ON T2.owner_id = T2.owner_id``): every row is paired with every row of the rest.

Each reads the SQL (sqlglot) and the schema as ingest saw it (keys, value examples); no model is called.
"""
from __future__ import annotations

from sqlglot import exp

from kgsql.generate.fanout import result_selects
from kgsql.schema.model import DatabaseSchema
from kgsql.sql.comparisons import COMPARISONS, compared
from kgsql.sql.names import SchemaNames, resolved_columns

__all__ = ["counts_per_unique_key", "echoed_columns", "text_for_numbers", "unlinked_joins"]


def _conjuncts(where: exp.Expression | None) -> list[exp.Expression]:
    if where is None:
        return []
    node = where.this if isinstance(where, exp.Where) else where
    return list(node.flatten()) if isinstance(node, exp.And) else [node]


def _same_column(a: exp.Column, b: exp.Column) -> bool:
    """The same name, and the same qualifier where both have one."""
    return a.name.lower() == b.name.lower() and (not a.table or not b.table or a.table.lower() == b.table.lower())


def echoed_columns(tree: exp.Expression) -> list[str]:
    """The answer's columns (as written) when every one of them is fixed by ``column = literal`` in its
    SELECT's WHERE; else none. Only the SELECTs whose rows are the answer are read; an aggregate, an
    expression or ``*`` among the shown columns says something the question did not, so it is never an echo."""
    out: list[str] = []
    for select in result_selects(tree):
        shown = [p.this if isinstance(p, exp.Alias) else p for p in select.expressions]
        if not shown or not all(isinstance(p, exp.Column) and not isinstance(p.this, exp.Star) for p in shown):
            return []
        fixed = [side for test in _conjuncts(select.args.get("where")) if isinstance(test, exp.EQ)
                 for side, other in ((test.this, test.expression), (test.expression, test.this))
                 if isinstance(side, exp.Column) and isinstance(other, exp.Literal)]
        if not all(any(_same_column(p, f) for f in fixed) for p in shown):
            return []
        out += [p.sql() for p in shown]
    return out


def counts_per_unique_key(tree: exp.Expression, schema: DatabaseSchema) -> list[str]:
    """``table.column`` for each SELECT that reads one table, groups by its whole primary key and counts rows
    (in what it shows, orders by or filters on): every group holds one row, so every count is 1. Only a
    declared key counts: a column whose values merely happen to be distinct in a small table ("shops in each
    location", one shop a location) is grouped rightly."""
    names = SchemaNames(schema)
    columns = resolved_columns(tree, names, innermost=True)
    out: list[str] = []
    for select in tree.find_all(exp.Select):
        group = select.args.get("group")
        source = select.args.get("from_", select.args.get("from"))
        if group is None or select.args.get("joins") or source is None or not isinstance(source.this, exp.Table):
            continue
        counts = [c for c in select.find_all(exp.Count) if c.find_ancestor(exp.Select) is select
                  and not isinstance(c.this, exp.Distinct)]
        if not counts:
            continue
        for key in group.expressions:
            found = columns.get(id(key)) if isinstance(key, exp.Column) else None
            if found is not None and [k.lower() for k in schema.table(found[0]).primary_key] == [found[1].name.lower()]:
                out.append(f"{found[0]}.{found[1].name}")
                break
    return out


def text_for_numbers(tree: exp.Expression, schema: DatabaseSchema) -> list[tuple[str, str]]:
    """(``table.column``, the word) for each comparison (=, !=, IN, LIKE) of a column that holds numbers
    (:attr:`kgsql.schema.model.Column.holds_numbers`) with a text literal that has a letter in it."""
    columns = resolved_columns(tree, SchemaNames(schema), innermost=True)
    out: list[tuple[str, str]] = []
    for node in tree.find_all(*COMPARISONS):
        column, literals = compared(node)
        found = columns.get(id(column)) if isinstance(column, exp.Column) else None
        words = [lit.this for lit in literals if isinstance(lit, exp.Literal) and lit.is_string
                 and any(ch.isalpha() for ch in lit.this)]
        if found is not None and words and found[1].holds_numbers:
            out.append((f"{found[0]}.{found[1].name}", words[0]))
    return out


def unlinked_joins(tree: exp.Expression) -> list[str]:
    """The joined tables (as written) that no condition of the SELECT (any ON clause, any part of its WHERE)
    ties to another of its tables: each is a cross product. A condition with an unqualified column might be
    the tie, so such a SELECT is left alone, and so is one that joins with USING."""
    out: list[str] = []
    for select in tree.find_all(exp.Select):
        joins = select.args.get("joins") or []
        if any(j.args.get("using") for j in joins):
            continue
        tests = _conjuncts(select.args.get("where")) + [t for j in joins for t in _conjuncts(j.args.get("on"))]
        columns = [[c for c in t.find_all(exp.Column) if c.find_ancestor(exp.Select) is select] for t in tests]
        if any(not c.table for cols in columns for c in cols):
            continue
        qualifiers = [{c.table.lower() for c in cols} for cols in columns]
        for join in joins:
            alias = join.this.alias_or_name.lower() if isinstance(join.this, exp.Table) else None
            if alias and not any(alias in q and len(q) >= 2 for q in qualifiers):
                out.append(join.this.sql())
    return out
