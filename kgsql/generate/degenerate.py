"""Answers the query's own form decides: shapes a small model writes that run, return rows and still say
nothing, or say something else than they seem to.

* **echo**: every column the answer shows is fixed by an equality to a literal of the same query ("Describe
  the section h." answered ``SELECT section_name FROM Sections WHERE section_name = 'h'``): the rows say the
  question's value back.
* **count per unique key**: rows counted per the single-column primary key of the one table read ("Which dogs
  are of the rarest breed?" answered ``... IN (SELECT breed_code FROM Breeds GROUP BY breed_code ORDER BY
  count(*))``): each group is one row, so every count is 1 and the ranking is arbitrary.
* **text for a number**: a column that holds numbers compared with a word (``car_makers.country = 'france'``
  where ``country`` holds the key of ``countries``) that the database does not hold there: it matches nothing.
* **unlinked join**: a table joined with no condition that ties it to another table of the SELECT
  (``JOIN Owners AS T2 ON T2.owner_id = T2.owner_id``): every row is paired with every row of the rest.
* **unlabelled groups**: a GROUP BY whose rows show only aggregates ("the maximum accelerate for each
  number of cylinders" answered ``SELECT max(accelerate) FROM cars_data GROUP BY cylinders``): a list of
  numbers with nothing to say which group each is.
* **counted measure**: ``COUNT`` of a column that holds a quantity ("How many people live in Asia?" answered
  ``COUNT(Population)``): it counts the rows that have one; the people are the SUM.
* **tied extremes**: ``WHERE x = (SELECT MIN(x) ...)`` keeps every row that ties for the extreme ("the
  ship commanded by the youngest captain" with two captains of that age): the flag is raised when more than
  one row comes back (:func:`extreme_tests` finds the test; the rows say whether anything tied).
* **ungrouped column**: a column shown beside ``COUNT``, ``SUM`` or ``AVG`` with no GROUP BY ("the number
  and time of the train from Chennai" answered ``SELECT count(*), time FROM train WHERE ...``): one row comes
  back, and the column's value is the one of some row among those summed up; flagged when the database, asked
  read-only, says those rows hold more than one value there (a member's major beside the count of her events
  is one value).

Each reads the SQL (sqlglot) and the schema as ingest saw it (keys, value examples); no model is called.
"""
from __future__ import annotations

from typing import Iterable

from sqlglot import exp

from kgsql.generate.fanout import RowProbe, own_aggregates, picks_one_row, result_selects, rows_of
from kgsql.schema.model import DatabaseSchema
from kgsql.sql.comparisons import COMPARISONS, compared, conjuncts, select_conditions
from kgsql.sql.names import SchemaNames, is_natural, resolved_columns
from kgsql.text.words import is_number, split_identifier

__all__ = ["counted_measures", "counts_per_unique_key", "echoed_columns", "extreme_tests", "text_for_numbers",
           "ungrouped_columns", "unlabelled_groups", "unlinked_joins"]


def _same_column(a: exp.Column, b: exp.Column) -> bool:
    """The same name, and the same qualifier where both have one."""
    return a.name.lower() == b.name.lower() and (not a.table or not b.table or a.table.lower() == b.table.lower())


def echoed_columns(tree: exp.Expression, dialect: str | None = None) -> list[str]:
    """The answer's columns (as written, in ``dialect``) when every one of them is fixed by ``column =
    literal`` in its SELECT's WHERE; else none. Only the SELECTs whose rows are the answer are read; an
    aggregate, an expression or ``*`` among the shown columns says something the question did not, and so
    does a HAVING (which rows come back is the answer), so neither is an echo."""
    out: list[str] = []
    for select in result_selects(tree):
        shown = [p.this if isinstance(p, exp.Alias) else p for p in select.expressions]
        if select.args.get("having") is not None or not shown \
                or not all(isinstance(p, exp.Column) and not isinstance(p.this, exp.Star) for p in shown):
            return []
        fixed = [side for test in conjuncts(select.args.get("where")) if isinstance(test, exp.EQ)
                 for side, other in ((test.this, test.expression), (test.expression, test.this))
                 if isinstance(side, exp.Column) and isinstance(other, exp.Literal)]
        if not all(any(_same_column(p, f) for f in fixed) for p in shown):
            return []
        out += [p.sql(dialect=dialect) for p in shown]
    return out


def _row_counts(select: exp.Select, key: exp.Column) -> bool:
    """Does this SELECT count rows (``count(*)``, or ``count`` of its key) outside any window?"""
    return any(isinstance(c.this, exp.Star) or (isinstance(c.this, exp.Column) and _same_column(c.this, key))
               for c in own_aggregates(select, exp.Count, in_windows=False))


def counts_per_unique_key(tree: exp.Expression, schema: DatabaseSchema) -> list[str]:
    """``table.column`` for each SELECT that reads one table, groups by its single-column primary key and counts
    its rows (in what it shows, orders by or filters on): every group holds one row, so every count is 1.
    Only a declared key: a column whose values merely happen to be distinct in a small table ("shops in each
    location", one shop a location) is grouped rightly."""
    columns = resolved_columns(tree, SchemaNames(schema), innermost=True)
    out: list[str] = []
    for select in tree.find_all(exp.Select):
        group = select.args.get("group")
        source = select.args.get("from_", select.args.get("from"))
        if group is None or select.args.get("joins") or source is None or not isinstance(source.this, exp.Table):
            continue
        for key in group.expressions:
            found = columns.get(id(key)) if isinstance(key, exp.Column) else None
            if found is None or not _row_counts(select, key):
                continue
            if [k.lower() for k in schema.table(found[0]).primary_key] == [found[1].name.lower()]:
                out.append(f"{found[0]}.{found[1].name}")
                break
    return out


def text_for_numbers(tree: exp.Expression, schema: DatabaseSchema,
                     stored: Iterable[str] = ()) -> list[tuple[str, str]]:
    """(``table.column``, the word) for each comparison (=, !=, IN, LIKE) of a column that holds numbers
    (:attr:`kgsql.schema.model.Column.holds_numbers`) with a text literal that has a letter in it and is no
    number (``1e3`` is one). ``stored``: the ``table.column`` filters whose value the database was found to
    hold (the explanation's probe): a column with rare words among its numbers (``324B``) is not flagged."""
    matched = {s.lower() for s in stored}
    columns = resolved_columns(tree, SchemaNames(schema), innermost=True)
    out: list[tuple[str, str]] = []
    for node in tree.find_all(*COMPARISONS):
        column, literals = compared(node)
        found = columns.get(id(column)) if isinstance(column, exp.Column) else None
        words = [lit.this for lit in literals if isinstance(lit, exp.Literal) and lit.is_string
                 and any(ch.isalpha() for ch in lit.this) and not is_number(lit.this)]
        if found is None or not words or not found[1].holds_numbers:
            continue
        name = f"{found[0]}.{found[1].name}"
        if name.lower() not in matched:
            out.append((name, words[0]))
    return out


def unlinked_joins(tree: exp.Expression, schema: DatabaseSchema) -> list[str]:
    """The joined tables of the schema (as written) that no condition of the SELECT (any ON clause, any part
    of its WHERE, a correlated subquery in them included) ties to another of its tables: each is a cross
    product. Left alone: a SELECT whose conditions hold an unqualified column of its own (it might be the
    tie), one that joins with USING or NATURAL, and a joined CTE or derived table (a one-row total joined
    for a ratio is meant)."""
    tables = {t.name.lower() for t in schema.tables}
    out: list[str] = []
    for select in tree.find_all(exp.Select):
        joins = select.args.get("joins") or []
        if any(j.args.get("using") or is_natural(j) for j in joins):
            continue
        columns = [list(t.find_all(exp.Column)) for t in select_conditions(select)]
        if any(not c.table and c.find_ancestor(exp.Select) is select for cols in columns for c in cols):
            continue
        qualifiers = [{c.table.lower() for c in cols if c.table} for cols in columns]
        for join in joins:
            if not isinstance(join.this, exp.Table) or join.this.name.lower() not in tables:
                continue
            alias = join.this.alias_or_name.lower()
            if not any(alias in q and len(q) >= 2 for q in qualifiers):
                out.append(join.this.sql())
    return out


def _only_aggregates(shown: exp.Expression) -> bool:
    """Is this shown value computed from aggregates alone (``count(*)``, ``max(x) - min(x)``)?"""
    node = shown.this if isinstance(shown, exp.Alias) else shown
    return node.find(exp.AggFunc) is not None and \
        all(c.find_ancestor(exp.AggFunc) is not None for c in node.find_all(exp.Column))


def unlabelled_groups(tree: exp.Expression, dialect: str | None = None) -> list[str]:
    """The GROUP BY keys (as written, in ``dialect``) of an answer's SELECT that groups, may return more than
    one group (no ``LIMIT 1``) and shows only aggregates: which number belongs to which group the rows do not
    say. Whether more than one group came back, the rows say (the flag asks for two rows at least)."""
    for select in result_selects(tree):
        group = select.args.get("group")
        if group is None or picks_one_row(select) or not select.expressions:
            continue
        if all(_only_aggregates(p) for p in select.expressions):
            return [k.sql(dialect=dialect) for k in group.expressions]
    return []


#: Name words of a column that identifies rather than measures (``code``, ``id``).
_IDENTIFYING = frozenset({"id", "ids", "code", "codes", "key", "no"})


def counted_measures(tree: exp.Expression, schema: DatabaseSchema) -> list[str]:
    """``table.column`` for each plain ``COUNT(column)`` of a column that holds numbers and measures: no key
    (primary, either end of a foreign key), no ``..._id`` or code. Not read: ``COUNT(DISTINCT x)`` ("how many
    different grades"), a COUNT inside arithmetic (``SUM(x) / COUNT(x)`` is an average)."""
    columns = resolved_columns(tree, SchemaNames(schema), innermost=True)
    keys = {(fk.table.lower(), fk.column.lower()) for fk in schema.foreign_keys}
    keys |= {(fk.ref_table.lower(), fk.ref_column.lower()) for fk in schema.foreign_keys}
    out: list[str] = []
    for count in tree.find_all(exp.Count):
        if not isinstance(count.this, exp.Column) or isinstance(count.parent, exp.Binary):
            continue
        found = columns.get(id(count.this))
        if found is None:
            continue
        table, column = found
        if column.is_primary_key or (table.lower(), column.name.lower()) in keys or not column.holds_numbers:
            continue
        if _IDENTIFYING & set(split_identifier(column.name)):
            continue
        out.append(f"{table}.{column.name}")
    return out


def _correlated(inner: exp.Select) -> bool:
    """Does a subquery name a table it does not read (an outer query's: one extreme per outer row)?"""
    own = {t.alias_or_name.lower() for t in inner.find_all(exp.Table)}
    return any(c.table and c.table.lower() not in own for c in inner.find_all(exp.Column))


def extreme_tests(tree: exp.Expression, dialect: str | None = None) -> list[str]:
    """The tests (as written) of the answer's one SELECT that keep the rows equal to an extreme, ``x =
    (SELECT MAX(x) FROM ...)`` with one ungrouped, uncorrelated MIN or MAX: every row that ties passes. A
    UNION's rows are not one test's, so it is not read."""
    selects = result_selects(tree)
    if len(selects) != 1:
        return []
    out: list[str] = []
    for test in conjuncts(selects[0].args.get("where")):
        if not isinstance(test, exp.EQ):
            continue
        for side in (test.this, test.expression):
            inner = side.this if isinstance(side, exp.Subquery) else None
            if isinstance(inner, exp.Select) and inner.args.get("group") is None and not _correlated(inner) \
                    and len(inner.expressions) == 1 and isinstance(inner.expressions[0], (exp.Max, exp.Min)):
                out.append(test.sql(dialect=dialect))
    return out


#: Aggregates whose one row is no row of the table. MIN and MAX are left out: SQLite takes a plain column
#: beside a query's one MIN or MAX from the row that holds it (``SELECT name, max(age), count(*)`` names the
#: oldest).
_SUMMING = (exp.Count, exp.Sum, exp.Avg)


def ungrouped_columns(tree: exp.Expression, exists: RowProbe, dialect: str | None = None) -> list[str]:
    """The first plain column (as written) an answer's SELECT without GROUP BY shows beside COUNT, SUM or AVG
    of its own (not in a window) whose rows hold more than one value there: ``exists`` is asked whether the
    SELECT's rows, that column alone, hold a second distinct value (read-only, one row at most)."""
    for select in result_selects(tree):
        extremes = own_aggregates(select, exp.Min, exp.Max)
        if select.args.get("group") is not None or (dialect in (None, "sqlite") and len(extremes) == 1):
            continue  # SQLite takes the plain columns from the row of a query's one MIN or MAX, COUNT beside it
        shown = [p.this if isinstance(p, exp.Alias) else p for p in select.expressions]
        if not any(a.find_ancestor(exp.Select) is select and a.find_ancestor(exp.Window) is None
                   for p in shown for a in p.find_all(*_SUMMING)):
            continue
        for column in (c for p in shown for c in p.find_all(exp.Column)
                       if c.find_ancestor(exp.Select) is select and c.find_ancestor(exp.AggFunc) is None):
            values = rows_of(select, [column.copy()])
            values.set("distinct", exp.Distinct())
            values.set("having", None)
            second = exp.select("1").from_(values.subquery("shown_values")).limit(1).offset(1)
            if exists(second.sql(dialect=dialect)):
                return [column.sql(dialect=dialect)]
    return []
