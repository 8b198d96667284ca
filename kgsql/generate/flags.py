"""Warnings on an answer: short flags that say where a plausible-looking answer may be wrong.

Each flag is a code and one line. They are read from what the answer already
has (its SQL's explanation, its rows, its selection, its correction rounds) and
the question's own words; no model is called. A flag is not a verdict: on the
200-question Spider sample (docs/eval.md, issue 34) it separates most wrong
answers from most right ones, which is what makes it worth a reader's glance.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Sequence

from sqlglot import exp

from kgsql.generate.explain import Explanation
from kgsql.schema.model import DatabaseSchema
from kgsql.sql.dialects import dialect_of, sqlglot_name
from kgsql.sql.names import parse_sql
from kgsql.text.words import says_name

__all__ = ["Flag", "FLAG_CODES", "answer_flags", "question_literals", "unused_literals", "unused_tables"]

FLAG_CODES = ("no-edge-join", "unused-table", "unused-literal", "empty-result", "null-result", "corrected",
              "failed")
_QUOTED = re.compile(r"""(?:^|[\s(])["'“‘]([^"'”’]{1,80})["'”’]""")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")


@dataclass(frozen=True)
class Flag:
    """One warning: a stable ``code`` (:data:`FLAG_CODES`) and a line for people."""

    code: str
    text: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def question_literals(question: str) -> list[str]:
    """The quoted strings and the numbers a question states (what its SQL should use)."""
    quoted = [m.group(1).strip() for m in _QUOTED.finditer(question) if m.group(1).strip()]
    rest = _QUOTED.sub(" ", question)
    return list(dict.fromkeys([*quoted, *_NUMBER.findall(rest)]))


def _sql_literals(tree: exp.Expression) -> list[str]:
    """The SQL's literals, and its double-quoted names (SQLite reads ``"USA"`` as a string where no column
    has that name)."""
    quoted = [i.name for i in tree.find_all(exp.Identifier) if i.args.get("quoted")]
    return [lit.name for lit in tree.find_all(exp.Literal)] + quoted


def _same_number(a: str, b: str) -> bool:
    try:
        return float(a) == float(b)
    except ValueError:
        return False


def unused_literals(question: str, tree: exp.Expression) -> list[str]:
    """The question's literals that no literal of the SQL holds (text: contained, any case; numbers: equal)."""
    found = _sql_literals(tree)
    missing = []
    for literal in question_literals(question):
        if _NUMBER.fullmatch(literal):
            used = any(_same_number(literal, v) for v in found) or any(literal in v for v in found)
        else:
            used = any(literal.lower() in v.lower() or (v.strip("%").lower() and v.strip("%").lower() in
                                                         literal.lower()) for v in found)
        if not used:
            missing.append(literal)
    return missing


def unused_tables(question: str, used: Iterable[str], schema: DatabaseSchema) -> list[str]:
    """Tables the question names (:func:`kgsql.text.words.says_name`) that the SQL leaves out.

    A table the question names outright and the SQL ignores is the issue's ``Customer_Orders``; any of the
    schema's (retrieval chooses every table the question names, so the selection adds nothing). A table a
    used table holds a key to is not counted: the query can stand for its rows by that key
    (``Has_Pet.PetID`` for ``Pets``)."""
    used_lower = {t.lower() for t in used}
    referenced = {fk.ref_table.lower() for fk in schema.foreign_keys if fk.table.lower() in used_lower}
    return [t.name for t in schema.tables
            if t.name.lower() not in used_lower | referenced and says_name(question, t.name)]


def _empty_or_null(rows: Sequence[Sequence[Any]], error: str | None) -> list[Flag]:
    if error:
        return []
    if not rows:
        return [Flag("empty-result", "the query returned no rows")]
    if len(rows) == 1 and all(v is None for v in rows[0]):
        return [Flag("null-result", "the query returned one row of NULL (an aggregate over nothing?)")]
    return []


def _normal(sql: str, dialect: str) -> str:
    """The query as sqlglot writes it (keyword case and spacing do not count as a change; literals do)."""
    tree = parse_sql(sql, dialect)
    return tree.sql(dialect=dialect) if tree is not None else " ".join(sql.split()).rstrip(";")


def answer_flags(*, question: str, sql: str, schema: DatabaseSchema, explanation: Explanation,
                 rows: Sequence[Sequence[Any]], error: str | None = None, first_sql: str = "",
                 rounds: int = 1) -> list[Flag]:
    """The flags of one answer. ``first_sql``: the first query run; ``rounds``: the generations the correction loop made. ``corrected`` needs both a second
    generation and a final query other than the first: a join repair alone (no second generation)
    follows a graph edge, which the explanation shows, where a second generation is the model's guess
    after a failure."""
    flags: list[Flag] = []
    if error:
        flags.append(Flag("failed", f"the query failed: {error.splitlines()[0][:120]}"))
    for join in explanation.joins:
        if join.origin is None:
            flags.append(Flag("no-edge-join", f"joins {join.left} = {join.right}, which no graph edge links"))
    dialect = sqlglot_name(dialect_of(schema))
    tree = parse_sql(sql, dialect) if sql.strip() else None
    if tree is not None:
        used = [t["table"] for t in explanation.tables]
        for table in unused_tables(question, used, schema):
            flags.append(Flag("unused-table", f"the question names table {table}, which the query does not use"))
        missing = unused_literals(question, tree)
        if missing:
            shown = ", ".join(repr(m) for m in missing[:3])
            flags.append(Flag("unused-literal", f"the question's {shown} do(es) not appear in the query"))
    flags += _empty_or_null(rows, error)
    if sql and rounds > 1 and first_sql and _normal(first_sql, dialect) != _normal(sql, dialect):
        flags.append(Flag("corrected", f"self-correction rewrote the model's first query ({rounds} generations)"))
    return flags
