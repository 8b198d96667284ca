"""What example selection and auto-CoT need from a SQL query: its literal
values and its skeleton.

The skeleton (DAIL-SQL) keeps a query's keywords and operators and replaces
every table, column and value with ``_``, so "SELECT name FROM singer WHERE
age > 30" and "SELECT title FROM film WHERE year > 1990" share one skeleton.
Similarity of two skeletons is the Jaccard similarity of their token sets.
"""
from __future__ import annotations

import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

_QUOTED = re.compile(r"'((?:[^']|'')*)'|\"([^\"]*)\"")
_IDENTISH = {TokenType.VAR, TokenType.IDENTIFIER}
_VALUEISH = {TokenType.STRING, TokenType.NUMBER, TokenType.NATIONAL_STRING, TokenType.HEX_STRING,
             TokenType.BIT_STRING, TokenType.BYTE_STRING}


def _parse(sql: str) -> exp.Expression | None:
    try:
        return sqlglot.parse_one(sql, read="sqlite")
    except (SqlglotError, ValueError):
        return None


def sql_values(sql: str, *, numbers: bool = True) -> list[str]:
    """Literal values of ``sql`` as written (strings unquoted), in order, without repeats;
    ``LIMIT``/``OFFSET`` counts are not values. Falls back to quoted spans when unparsable."""
    tree = _parse(sql)
    out: list[str] = []
    if tree is None:
        for m in _QUOTED.finditer(sql):
            value = m.group(1).replace("''", "'") if m.group(1) is not None else m.group(2)
            if value not in out:
                out.append(value)
        return out
    for lit in tree.find_all(exp.Literal):
        if lit.find_ancestor(exp.Limit, exp.Offset) is not None:
            continue
        if not lit.is_string and not numbers:
            continue
        value = lit.this
        if value not in out:
            out.append(value)
    # Spider writes string values in double quotes, which sqlglot reads as identifiers.
    for col in tree.find_all(exp.Column):
        ident = col.this
        if isinstance(ident, exp.Identifier) and ident.quoted and not col.table and col.parent is not None \
                and isinstance(col.parent, (exp.EQ, exp.NEQ, exp.Like, exp.In)) and col.arg_key != "this":
            if ident.this not in out:
                out.append(ident.this)
    return out


def sql_literal(value: str, sql: str) -> str:
    """``value`` as the query wrote it: bare when it is a number there, else single-quoted."""
    if re.fullmatch(r"-?\d+(\.\d+)?", value) and re.search(rf"(?<![\w'\"]){re.escape(value)}(?![\w'\"])", sql):
        return value
    return "'" + value.replace("'", "''") + "'"


def sql_skeleton(sql: str) -> str:
    """The query with every identifier and value replaced by ``_`` (keywords upper-cased)."""
    try:
        tokens = sqlglot.tokenize(sql, read="sqlite")
    except (SqlglotError, ValueError):
        return " ".join(sql.upper().split())
    out: list[str] = []
    for i, tok in enumerate(tokens):
        called = i + 1 < len(tokens) and tokens[i + 1].token_type == TokenType.L_PAREN
        if tok.token_type == TokenType.VAR and called:  # a function name: part of the shape
            piece = tok.text.upper()
        elif tok.token_type in _IDENTISH or tok.token_type in _VALUEISH:
            piece = "_"
        else:
            piece = tok.text.upper()
        if piece == "_" and out and out[-1] == "_":
            continue
        out.append(piece)
    # "_ . _" (table.column) is one name
    text = " ".join(out)
    return re.sub(r"_ \. _", "_", text)


def skeleton_similarity(a: str, b: str) -> float:
    """Jaccard similarity of the skeleton token sets of two queries (1.0 = same shape)."""
    sa, sb = set(sql_skeleton(a).split()), set(sql_skeleton(b).split())
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)
