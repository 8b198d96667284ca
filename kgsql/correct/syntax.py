"""Syntax rule: SQLite's syntax errors, quoting its token, plus hints for other dialects'
syntax that SQLite rejects (TOP, ``::`` casts, ILIKE, method calls, FETCH FIRST)."""
from __future__ import annotations

import re

from kgsql.correct.context import CheckContext, ErrorRule
from kgsql.correct.functions import knowledge
from kgsql.sql.dialects import sqlglot_name
from kgsql.correct.tip import Tip

__all__ = ["ON_ERROR", "foreign_syntax", "syntax_error"]

SYNTAX_NEAR_TIP = 'There is a syntax error near "{token}"; write a single valid SQLite SELECT statement.'
SYNTAX_TOKEN_TIP = ('SQLite cannot read the token "{token}"; check quotes and brackets, and write a single '
                    "valid SQLite SELECT statement.")
SYNTAX_INCOMPLETE_TIP = "The query is incomplete (it ends too early); write a single complete SQLite SELECT statement."
SYNTAX_COMPOUND_TIP = "The SELECTs combined with UNION, INTERSECT or EXCEPT must return the same number of columns."
SYNTAX_OTHER_TIP = "SQLite reported a syntax error ({message}); write a single valid SQLite SELECT statement."

_STRING_OR_COMMENT = re.compile(r"'(?:[^']|'')*'|--[^\n]*|/\*.*?\*/", re.S)


def syntax_error(ctx: CheckContext, sql: str, token: str | None, message: str) -> list[Tip] | None:
    """One tip for SQLite's syntax message, then :func:`foreign_syntax`'s hints."""
    shown = (token or "").strip()[:40]
    if message.startswith("unrecognized token"):
        first = Tip("syntax", SYNTAX_TOKEN_TIP.format(token=shown), token)
    elif message == "incomplete input":
        first = Tip("syntax", SYNTAX_INCOMPLETE_TIP)
    elif message.startswith("SELECTs to the left and right"):
        first = Tip("syntax", SYNTAX_COMPOUND_TIP)
    elif token is not None:
        first = Tip("syntax", SYNTAX_NEAR_TIP.format(token=shown), token)
    else:
        first = Tip("syntax", SYNTAX_OTHER_TIP.format(message=message))
    return [first] + (foreign_syntax(sql) if sqlglot_name(ctx.dialect) == "sqlite" else [])


def foreign_syntax(sql: str) -> list[Tip]:
    """Hints for other dialects' syntax that SQLite rejects."""
    code = _STRING_OR_COMMENT.sub("''", sql)
    tips: list[Tip] = []
    top = re.search(r"\bSELECT\s+(?:DISTINCT\s+)?TOP\s*\(?\s*(\d+)", code, re.I)
    if top:
        tips.append(Tip("syntax", f"SQLite has no TOP; write LIMIT {top.group(1)} at the end of the query instead."))
    if "::" in code:
        tips.append(Tip("syntax", "SQLite has no '::' casts; use CAST(x AS type)."))
    if re.search(r"\bILIKE\b", code, re.I):
        tips.append(Tip("syntax", "SQLite has no ILIKE; LIKE already ignores the case of ASCII letters."))
    method = re.search(r"[\w\"\]`]\s*\.\s*(ST[A-Za-z_]+)\s*\(", code)
    if method:
        kb = knowledge()
        f = kb.suggest(method.group(1)) if kb is not None else None
        instead = f"call it as a function, e.g. {f.signature}" if f else "call spatial functions as functions"
        tips.append(Tip("syntax", f"SpatiaLite has no method calls such as '.{method.group(1)}()'; {instead}."))
    if re.search(r"\bFETCH\s+(?:FIRST|NEXT)\b", code, re.I):
        tips.append(Tip("syntax", "SQLite has no FETCH FIRST; use LIMIT n."))
    return tips


#: Error kinds (see kgsql.db.guard.ErrorKind) this rule answers.
ON_ERROR: dict[str, ErrorRule] = {"syntax": syntax_error}
