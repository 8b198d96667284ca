"""Comparing another engine with SQLite: schemas, result rows, and the cause of each difference.

Why: the same query on the same data can answer differently on PostgreSQL
or DuckDB for reasons that are no error of either engine: SQLite's dynamic
typing, its looser GROUP BY, LIKE that ignores case, integer division, ties
an ORDER BY leaves open. :mod:`kgsql.lab.cross_engine` runs the queries;
this module decides what counts as the same answer and names the cause of
each difference:

* rows compare as a multiset, or as a list when the outer SELECT has ORDER
  BY; numbers compare by value (int, float and Decimal alike, to 9
  significant digits), text as text; an ordered result that differs only
  among rows whose ORDER BY keys tie is "equal up to ties";
* a double-quoted name that is no column becomes a string literal, as SQLite
  reads it (sqlglot keeps it an identifier, which no other engine accepts);
* an error's cause comes from its message; a difference's from a rerun that
  removes one known difference (LIKE as ILIKE, SQLite's integer division);
* schemas compare by tables, columns, primary keys, foreign keys and row
  counts, names case-insensitively, types not at all (they differ by design).
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, Final

from kgsql.db.cells import SIGNIFICANT, normalise

__all__ = ["BUILTIN_FUNCTIONS", "SIGNIFICANT", "as_text", "compare_rows", "compare_schemas", "error_cause",
           "explain_fk", "has_order_by", "likes_to_ilike", "normalise", "normalised_rows", "parse_sqlite",
           "sqlite_division", "tie_blocks", "tie_equivalent", "unquote_strings"]


# --------------------------------------------------------------------------- values


def as_text(value: Any) -> Any:
    """A normalised value as text: tells "5" from 5 apart only by kind."""
    if value is None:
        return None
    kind, v = value
    if kind == "n" and isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def normalised_rows(rows: Sequence[Sequence[Any]]) -> list[tuple[Any, ...]]:
    return [tuple(normalise(v) for v in row) for row in rows]


def compare_rows(expected: Sequence[Sequence[Any]], got: Sequence[Sequence[Any]], *, ordered: bool) -> bool:
    """Same rows (as a list when ``ordered``, else as a multiset) after :func:`normalise`."""
    a, b = normalised_rows(expected), normalised_rows(got)
    return a == b if ordered else Counter(a) == Counter(b)


def tie_equivalent(got: list[tuple[Any, ...]], blocks: list[Counter]) -> bool:
    """``got`` follows SQLite's order up to ties.

    Each block of equal ORDER BY keys compares as a multiset; a LIMIT may cut the last one short.
    """
    i = 0
    for block in blocks:
        if i == len(got):
            return True
        size = sum(block.values())
        chunk = Counter(got[i:i + size])
        if i + size > len(got):
            return not (chunk - block)
        if chunk != block:
            return False
        i += size
    return i == len(got)


# --------------------------------------------------------------------------- SQL


def parse_sqlite(sql: str) -> Any:
    import sqlglot

    return sqlglot.parse_one(sql, read="sqlite")


def unquote_strings(tree: Any, column_names: set[str]) -> int:
    """Turn double-quoted names that are no column into string literals, in place; how many."""
    from sqlglot import exp

    aliases = {a.alias.lower() for a in tree.find_all(exp.Alias) if a.alias}
    known = column_names | aliases
    changed = 0
    for column in list(tree.find_all(exp.Column)):
        ident = column.this
        if column.table or not isinstance(ident, exp.Identifier) or not ident.quoted:
            continue
        if ident.name.lower() in known:
            continue
        column.replace(exp.Literal.string(ident.name))
        changed += 1
    return changed


def has_order_by(tree: Any) -> bool:
    return bool(tree.args.get("order"))


def likes_to_ilike(tree: Any) -> Any:
    from sqlglot import exp

    tree = tree.copy()
    found = False
    for like in list(tree.find_all(exp.Like)):
        like.replace(exp.ILike(this=like.this, expression=like.expression))
        found = True
    return tree if found else None


def sqlite_division(tree: Any) -> Any:
    """DuckDB's ``/`` always divides exactly; SQLite's truncates two integers: rewrite each a / b accordingly."""
    from sqlglot import exp

    tree = tree.copy()
    found = False
    for div in list(tree.find_all(exp.Div)):
        a, b = div.this.copy(), div.expression.copy()
        ints = " AND ".join(f"typeof({x.sql('duckdb')}) IN ('BIGINT', 'INTEGER', 'SMALLINT', 'TINYINT', 'HUGEINT')"
                            for x in (a, b))
        div.replace(exp.maybe_parse(f"(CASE WHEN {ints} THEN ({a.sql('duckdb')}) // ({b.sql('duckdb')}) "
                                    f"ELSE ({a.sql('duckdb')}) / ({b.sql('duckdb')}) END)", dialect="duckdb"))
        found = True
    return tree if found else None


def tie_blocks(tree: Any, run: Callable[[str], list[tuple[Any, ...]]]) -> list[Counter] | None:
    """SQLite's full ordered result cut into blocks of equal ORDER BY keys (None when it cannot tell)."""
    from sqlglot import exp

    if not isinstance(tree, exp.Select) or not tree.args.get("order") or tree.args.get("distinct") \
            or tree.args.get("offset"):
        return None
    sel = tree.copy()
    sel.set("limit", None)
    outputs = list(sel.expressions)
    if any(isinstance(o, exp.Star) or (isinstance(o, exp.Column) and isinstance(o.this, exp.Star)) for o in outputs):
        return None
    n = len(outputs)
    keys: list[int] = []
    extra: list[Any] = []
    for ordered in sel.args["order"].expressions:
        e = ordered.this
        idx = None
        if isinstance(e, exp.Literal) and e.is_int:
            idx = int(e.this) - 1
        for k, o in enumerate(outputs):
            if idx is not None:
                break
            if isinstance(e, exp.Column) and not e.table and o.alias and o.alias.lower() == e.name.lower():
                idx = k
            elif o.unalias().sql("sqlite").lower() == e.sql("sqlite").lower():
                idx = k
        if idx is None:
            extra.append(e.copy())
            idx = n + len(extra) - 1
        keys.append(idx)
    for j, e in enumerate(extra):
        sel.append("expressions", exp.alias_(e, f"kgsql_key_{j}"))
    try:
        rows = run(sel.sql("sqlite"))
    except Exception:  # noqa: BLE001 - the augmented query may not be valid; no tie check then
        return None
    blocks: list[Counter] = []
    last: Any = object()
    for row in rows:
        norm = tuple(normalise(v) for v in row)
        key = tuple(norm[i] for i in keys)
        if key != last:
            blocks.append(Counter())
            last = key
        blocks[-1][norm[:n]] += 1
    return blocks


# --------------------------------------------------------------------------- causes

#: Functions both engines have: "function avg(text) does not exist" is a type problem, not a missing function.
BUILTIN_FUNCTIONS: Final = ("avg", "sum", "min", "max", "count", "abs", "round", "length", "lower", "upper", "substr",
                            "substring", "trim", "ltrim", "rtrim", "replace", "coalesce", "instr", "strpos",
                            "to_char", "date_part", "extract")
_ERROR_CAUSES: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("GROUP BY strictness (a bare column SQLite accepts)",
     re.compile(r"must appear in the GROUP BY clause|must be part of an aggregate function", re.I)),
    ("ORDER BY strictness with DISTINCT / aggregates",
     re.compile(r"for SELECT DISTINCT, ORDER BY expressions must appear|ORDER BY .*(DISTINCT|aggregate)"
                r"|DISTINCT ON|ORDER BY clause of a DISTINCT", re.I)),
    ("type mismatch from SQLite's dynamic typing",
     re.compile(r"operator does not exist|invalid input syntax for type|cannot be matched|Cannot compare values"
                r"|Could not convert|Conversion Error|cannot cast|Cannot mix values|argument of \w+ must be type"
                r"|types? .* and .* cannot|No function matches the given name and argument types '(~~|like|!~~|"
                r"not_like|ilike|equals|>|<|=)", re.I)),
    ("typed dates (SQLite computes on the date text)",
     re.compile(r"function \w+\([^)]*\b(timestamp|date|time)\b[^)]*\) does not exist"
                r"|No function matches the given name and argument types '\w+\([^)]*\b(TIMESTAMP|DATE|TIME)\b", re.I)),
    ("type mismatch from SQLite's dynamic typing",
     re.compile(r"function (" + "|".join(BUILTIN_FUNCTIONS) + r")\([^)]*\) does not exist"
                r"|No function matches the given name and argument types", re.I)),
    ("sqlglot transpile problem (FROM subquery without alias: PostgreSQL < 16 needs one)",
     re.compile(r"subquery in FROM must have an alias", re.I)),
    ("function sqlglot did not translate",
     re.compile(r"function .* does not exist|Function with name .* does not exist", re.I)),
    ("name resolution (unknown column / table)",
     re.compile(r"column .* does not exist|Referenced column .* not found|relation .* does not exist"
                r"|Table with name .* does not exist|missing FROM-clause|not found in FROM clause"
                r"|Ambiguous reference|is ambiguous", re.I)),
    ("syntax the engine rejects", re.compile(r"syntax error|Parser Error", re.I)),
    ("timeout", re.compile(r"timed out|timeout|canceling statement", re.I)),
)


def error_cause(message: str, *, double_quoted: bool = False) -> str:
    """The cause of an engine's error, from its message."""
    if double_quoted and re.search(r'column "?[^"]*"? does not exist|Referenced column .* not found', message):
        return "double-quoted string literal (SQLite quirk)"
    for cause, pattern in _ERROR_CAUSES:
        if pattern.search(message):
            return cause
    return "other error: " + re.sub(r"\d+", "N", message.split("\n")[0])[:70]


# --------------------------------------------------------------------------- schemas


def compare_schemas(reference: Any, other: Any) -> dict[str, Any]:
    """What differs between two schemas (tables, columns, keys, foreign keys, row counts), names case-insensitive."""
    def tables(schema: Any) -> dict[str, Any]:
        return {t.name.lower(): t for t in schema.tables}

    a, b = tables(reference), tables(other)
    diffs: list[str] = []
    for name in sorted(set(a) - set(b)):
        diffs.append(f"table {name} missing")
    for name in sorted(set(b) - set(a)):
        diffs.append(f"extra table {name}")
    for name in sorted(set(a) & set(b)):
        ta, tb = a[name], b[name]
        ca = [c.name.lower() for c in ta.columns]
        cb = [c.name.lower() for c in tb.columns]
        if ca != cb:
            diffs.append(f"{name}: columns {ca} vs {cb}")
        pa = sorted(c.name.lower() for c in ta.columns if c.is_primary_key)
        pb = sorted(c.name.lower() for c in tb.columns if c.is_primary_key)
        if pa != pb:
            diffs.append(f"{name}: primary key {pa} vs {pb}")
        if ta.row_count != tb.row_count:
            diffs.append(f"{name}: {ta.row_count} rows vs {tb.row_count}")

    def fks(schema: Any) -> set[str]:
        return {f"{f.table}.{f.column}->{f.ref_table}.{f.ref_column}".lower() for f in schema.foreign_keys}

    missing, extra = sorted(fks(reference) - fks(other)), sorted(fks(other) - fks(reference))
    return {"same": not diffs and not missing and not extra, "differences": diffs,
            "foreign_keys_missing": missing, "foreign_keys_extra": extra,
            "tables": len(b), "columns": sum(len(t.columns) for t in other.tables),
            "foreign_keys": len(other.foreign_keys), "rows": sum(t.row_count or 0 for t in other.tables)}


def explain_fk(fk: str, report: Any) -> str:
    """The load report's reason for a foreign key the engine lacks."""
    t, _, rest = fk.partition(".")
    col, _, ref = rest.partition("->")
    for item in report.skipped_foreign_keys:
        text = item["fk"].lower()
        if text.startswith(f"{t}(") and col in text and ref.split(".")[0] in text:
            return item["reason"]
    return "not in the load report"
