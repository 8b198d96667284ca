"""A join that only multiplies rows: a table joined for nothing, on the side that holds many rows per key.

"How many concerts in each stadium?" answered ``stadium JOIN concert JOIN singer_in_concert ... COUNT(*)``
counts each concert once per singer: ``singer_in_concert`` gives the query nothing (no column of it is
selected, filtered, grouped or ordered) except copies of the rows it joins, one per matching row, because
its join column is not unique there. A join on the other side (a key to a table's primary key) at most
filters rows, so it is left alone, and so is a table the question asks for by a word no other table of the
query holds ("students who have a pet": ``Has_Pet`` is how the query says "have a pet").

The same copies show in a list's rows: "countries with at least one car maker" answered ``countries JOIN
car_makers`` lists a country once per maker. Whether the rows an answer shows are such copies the data
says (:func:`copied_rows` asks the database), where the form alone cannot tell them from two entities that
share a name.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Sequence

from sqlglot import exp

from kgsql.schema.model import DatabaseSchema, Table
from kgsql.text.words import STOPWORDS, split_identifier, words

__all__ = ["RowProbe", "copied_rows", "fanout_joins", "own_aggregates", "picks_one_row", "result_selects",
           "rows_of"]

#: ``sql -> does it return a row?``: a read-only probe on the answer's database.
RowProbe = Callable[[str], bool]

#: Name words that say nothing of what a table holds (``has_pet``'s "has" is in STOPWORDS already).
_GENERIC = frozenset({"id", "ids", "ref", "info", "detail", "details", "list", "data", "record", "records"})
#: What a question counts: the words after "how many" / "number of" / "count of" / "at least two" (up to three).
_COUNTED = re.compile(r"\b(?:how many|(?:number|count|total) of|(?:at least|at most|more than|fewer than|less than|"
                      r"exactly)\s+(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten)(?:\s+or\s+more)?)\s+"
                      r"((?:[\w-]+\s+){0,2}[\w-]+)", re.I)
#: Words between "number of" and the thing counted.
_COUNT_LEAD = frozenset({"distinct", "different", "unique", "all", "the", "total"})
#: Endings by which a question's word still names a table's ("rent"/"rental", "own"/"owner").
_ENDINGS = ("s", "es", "al", "er", "ers", "ing", "ed", "ion", "ment")


def _name_words(name: str) -> set[str]:
    return {w for w in split_identifier(name) if w not in STOPWORDS and w not in _GENERIC and len(w) > 1}


def _read_tables(select: exp.Select) -> list[exp.Table]:
    """The tables this SELECT reads directly (its FROM and its JOINs), as written."""
    sources = [select.args.get("from_", select.args.get("from"))] + list(select.args.get("joins") or [])
    return [s.this for s in sources if s is not None and isinstance(s.this, exp.Table)]


def _tables_of(select: exp.Select, schema: DatabaseSchema) -> dict[str, Table]:
    """alias (lower case) -> the schema table, for the tables this SELECT reads directly."""
    by_name = {t.name.lower(): t for t in schema.tables}
    return {table.alias_or_name.lower(): by_name[table.name.lower()] for table in _read_tables(select)
            if table.name.lower() in by_name}


def _owner(column: exp.Column, tables: dict[str, Table]) -> str | None:
    """The alias a column belongs to: its qualifier, else the one table of the SELECT that has that name."""
    if column.table:
        return column.table.lower() if column.table.lower() in tables else None
    owners = [a for a, t in tables.items() if any(c.name.lower() == column.name.lower() for c in t.columns)]
    return owners[0] if len(owners) == 1 else None


def _join_pairs(select: exp.Select, tables: dict[str, Table]) -> list[tuple[exp.Column, exp.Column]]:
    """The column equalities of this SELECT's ON clauses, both sides resolved to its tables."""
    pairs = []
    for join in select.args.get("joins") or []:
        on = join.args.get("on")
        for eq in on.find_all(exp.EQ) if on is not None else []:
            left, right = eq.this, eq.expression
            if isinstance(left, exp.Column) and isinstance(right, exp.Column) \
                    and _owner(left, tables) and _owner(right, tables):
                pairs.append((left, right))
    return pairs


def _unique(table: Table, column: str, schema: DatabaseSchema) -> bool:
    """Is ``column`` alone a key of ``table``: its whole primary key, what a declared foreign key refers to,
    ``rowid``, or a column whose values ingest found all distinct (a key nobody declared)?"""
    if column.lower() == "rowid" or [c.lower() for c in table.primary_key] == [column.lower()]:
        return True
    if any(fk.ref_table.lower() == table.name.lower() and fk.ref_column.lower() == column.lower()
           and fk.origin == "declared" for fk in schema.foreign_keys):
        return True
    found = next((c for c in table.columns if c.name.lower() == column.lower()), None)
    distinct = found.stats.distinct_count if found is not None else None
    return bool(distinct and table.row_count and distinct >= table.row_count)


def _forms(word: str) -> set[str]:
    """The word, what it is without one ending of :data:`_ENDINGS` (three letters left at least), and a
    plural's "-ies" as "-y" ("companies": ``company``)."""
    forms = {word} | {word[:-len(e)] for e in _ENDINGS if word.endswith(e) and len(word) - len(e) >= 3}
    return forms | ({word[:-3] + "y"} if word.endswith("ies") and len(word) > 4 else set())


def _said(name_word: str, question_words: set[str]) -> bool:
    """The question says the name's word, in any form ("rented" for ``rental``, "courses" for ``course``)."""
    forms = _forms(name_word)
    return any(forms & _forms(q) for q in question_words)


def _own_words(alias: str, tables: dict[str, Table], columns: list[exp.Column]) -> list[str]:
    """The words of a table's name that nothing else the query reads (another table, a column of another
    table) holds: what the table alone brings to the query."""
    others: set[str] = set()
    for other, table in tables.items():
        if other != alias:
            others |= _name_words(table.name)
    for column in columns:
        if _owner(column, tables) != alias:
            others |= _name_words(column.name)
    return [w for w in _name_words(tables[alias].name) if not any(_forms(w) & _forms(o) for o in others)]


def result_selects(tree: exp.Expression) -> list[exp.Select]:
    """The SELECTs whose rows are the answer: the query's own, or each side of a UNION ALL. A subquery's
    copies may be what an outer DISTINCT, GROUP BY, IN or COUNT(DISTINCT) removes, so subqueries are not read;
    UNION, EXCEPT and INTERSECT remove copies themselves."""
    if isinstance(tree, exp.Select):
        return [tree]
    if isinstance(tree, exp.Union) and not tree.args.get("distinct"):
        return result_selects(tree.left) + result_selects(tree.right)
    return []


def own_aggregates(select: exp.Select, *kinds: type[exp.AggFunc], in_windows: bool = True) -> list[exp.AggFunc]:
    """The aggregates of this SELECT (of ``kinds``, else any), not of its subqueries; ``in_windows=False``:
    not those inside a window either (a window's aggregate is one value per row, not one row)."""
    return [a for a in select.find_all(*(kinds or (exp.AggFunc,))) if a.find_ancestor(exp.Select) is select
            and (in_windows or a.find_ancestor(exp.Window) is None)]


def picks_one_row(select: exp.Select) -> bool:
    """``LIMIT 1`` with no OFFSET: the SELECT returns its first row only."""
    limit = select.args.get("limit")
    return limit is not None and limit.expression is not None and limit.expression.name == "1" \
        and select.args.get("offset") is None


def _copies_ignored(select: exp.Select) -> bool:
    """Copies of rows change nothing: only aggregates that ignore them (MIN, MAX, DISTINCT) and then SELECT
    DISTINCT or ``*``, a GROUP BY, or one row picked (``ORDER BY ... LIMIT 1``). A DISTINCT on the rows shown
    does not undo copies a COUNT, SUM or AVG of the same SELECT has counted (``HAVING COUNT(*) >= 2``)."""
    counted = [a for a in own_aggregates(select)
               if not (isinstance(a, (exp.Min, exp.Max)) or isinstance(a.this, exp.Distinct))]
    if counted:
        return False
    if select.args.get("distinct") is not None or any(isinstance(e, exp.Star) for e in select.expressions):
        return True
    return bool(own_aggregates(select)) or select.args.get("group") is not None or picks_one_row(select)


def _counted(question: str) -> set[str]:
    """The words of what the question counts ("how many concerts", "the number of distinct singers"): the
    words after "how many" / "number of" up to the first that is no name ("students the teacher" -> students)."""
    out: set[str] = set()
    for match in _COUNTED.finditer(question):
        for w in words(match.group(1)):
            if w in _COUNT_LEAD and not out:
                continue
            if w in STOPWORDS:
                break
            out.add(w)
    return out


def _inflates_count(select: exp.Select, alias: str, own: list[str], tables: dict[str, Table],
                    counted: set[str]) -> bool:
    """Under COUNT, the copied rows are what is counted unless the question counts another table's rows
    ("the number of concerts" while ``singer_in_concert`` is joined): only then are the copies a mistake."""
    if not any(isinstance(a, exp.Count) for a in own_aggregates(select)):
        return True
    if any(_said(w, counted) for w in own) or _counts(tables[alias], counted):
        return False  # "how many department stores": the copied rows are the ones asked for
    return any(_counts(table, counted) for other, table in tables.items() if other != alias)


def _counts(table: Table, counted: set[str]) -> bool:
    """The question counts this table's rows: every word of its name is in what it counts."""
    name = _name_words(table.name)
    return bool(name) and all(_said(w, counted) for w in name)


def _shown(select: exp.Select, alias: str) -> str:
    """The table as the query writes it (``concert AS T2``)."""
    for table in _read_tables(select):
        if table.alias_or_name.lower() == alias:
            return f"{table.name} AS {table.alias}" if table.alias else table.name
    return alias


def fanout_joins(question: str, tree: exp.Expression, schema: DatabaseSchema) -> list[str]:
    """The tables a query joins only to copy rows (see module doc), as the query names them. Only the SELECTs
    whose rows are the answer are read (:func:`result_selects`), and not one whose copies change nothing
    (:func:`_copies_ignored`)."""
    question_words, counted = set(words(question)), _counted(question)
    found: list[str] = []
    for select in result_selects(tree):
        if _copies_ignored(select):
            continue
        tables = _tables_of(select, schema)
        pairs = _join_pairs(select, tables)
        in_joins = {id(c) for pair in pairs for c in pair}
        columns = list(select.find_all(exp.Column))
        used = {_owner(c, tables) for c in columns if id(c) not in in_joins}
        for alias, table in tables.items():
            ends = [(mine, theirs) for a, b in pairs for mine, theirs in ((a, b), (b, a))
                    if _owner(mine, tables) == alias and _owner(theirs, tables) != alias]
            if alias in used or len(ends) != 1 or _unique(table, ends[0][0].name, schema):
                continue
            if tables.get(_owner(ends[0][1], tables) or "") is table:  # a self-join pairs rows on purpose
                continue
            own = _own_words(alias, tables, columns)
            if not any(_said(w, question_words) for w in own) and _inflates_count(select, alias, own, tables, counted):
                found.append(_shown(select, alias))
    return found


def rows_of(select: exp.Select, shown: Sequence[exp.Expression]) -> exp.Select:
    """A copy of ``select`` showing ``shown`` for every row it reads: its ORDER BY, LIMIT and OFFSET dropped
    (what a probe on the answer's rows asks about)."""
    copy = select.copy()
    copy.set("expressions", list(shown))
    for part in ("order", "limit", "offset"):
        copy.set(part, None)
    return copy


def _repeats(rows: Sequence[Sequence[Any]]) -> bool:
    """Does some row come back more than once?"""
    seen: set[str] = set()
    for row in rows:
        key = repr(tuple(row))
        if key in seen:
            return True
        seen.add(key)
    return False


def copied_rows(tree: exp.Expression, schema: DatabaseSchema, rows: Sequence[Sequence[Any]],
                exists: RowProbe, dialect: str | None = None) -> list[str]:
    """The tables whose same row the answer shows more than once because a join copied it ("countries
    with at least one car maker" answered ``countries JOIN car_makers``: a country once per maker).

    Read only when the rows repeat, and only a SELECT that shows columns of one table with a primary key,
    joins, and neither aggregates nor removes copies (:func:`_copies_ignored`): the database is asked
    whether the same query, showing that key instead, returns a key twice. Rows that repeat because two
    entities share a name are not copies, so they are not flagged."""
    if len(rows) < 2 or not _repeats(rows):
        return []
    found: list[str] = []
    for select in result_selects(tree):
        if not select.args.get("joins") or _copies_ignored(select) or own_aggregates(select):
            continue
        tables = _tables_of(select, schema)
        shown = [c for p in select.expressions for c in p.find_all(exp.Column)]
        owners = {_owner(c, tables) for c in shown}
        if len(owners) != 1 or None in owners:
            continue
        alias = owners.pop()
        table = tables[alias]
        if not table.primary_key:
            continue
        node = next(t for t in _read_tables(select) if t.alias_or_name.lower() == alias)
        written = node.args["alias"].this if node.alias else node.this  # quoted as the query quotes it
        keys = rows_of(select, [exp.Column(this=exp.to_identifier(k, quoted=True), table=written.copy())
                                for k in table.primary_key])
        probe = exp.select("1").from_(keys.subquery("shown")) \
            .group_by(*[exp.column(k, quoted=True) for k in table.primary_key]).having("COUNT(*) > 1").limit(1)
        if exists(probe.sql(dialect=dialect)):
            found.append(_shown(select, alias))
    return found
