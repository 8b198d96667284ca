"""The rules in order, and the one entry point that checks a candidate query.

Each rule module declares what it answers: ``ON_ERROR`` maps error kinds
(:data:`kgsql.db.guard.ErrorKind`) to a function over the
:class:`~kgsql.correct.context.CheckContext`, ``ON_EMPTY`` runs when a query
returned no rows. :data:`RULES` lists the modules; an error kind no rule
answers (and a rule that cannot use the error) gets :mod:`~kgsql.correct.other`'s
generic tip.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, replace

# the rule modules themselves, not through kgsql.correct: its __init__ imports this module
import kgsql.correct.empty as empty
import kgsql.correct.functions as functions
import kgsql.correct.names as names
import kgsql.correct.other as other
import kgsql.correct.syntax as syntax
import kgsql.correct.timeouts as timeouts
import kgsql.correct.unsafe as unsafe
import kgsql.correct.values as values
from kgsql.correct.context import CheckContext, EmptyRule, ErrorRule
from kgsql.correct.tip import Tip
from kgsql.db.guard import QueryResult, SQLQueryError
from kgsql.errors import UnsafeSQLError
from kgsql.schema.model import DatabaseSchema
from kgsql.sql.dialects import dialect_of, label, sqlglot_name
from kgsql.sql.names import reads_no_table

__all__ = ["CONSTANT_TIP", "EMPTY_RULES", "ERROR_RULES", "RULES", "Checked", "check_candidate", "error_tips",
           "is_vacuous", "tips_from_error"]

#: The rule modules; EMPTY_RULES keep this order (value tips before the empty-result tip).
log = logging.getLogger(__name__)

RULES = (names, functions, syntax, timeouts, values, empty)
#: Error kind -> the rule that answers it.
ERROR_RULES: dict[str, ErrorRule] = {kind: rule for m in RULES for kind, rule in getattr(m, "ON_ERROR", {}).items()}
#: Rules run, in order, when a query returned no rows.
EMPTY_RULES: tuple[EmptyRule, ...] = tuple(m.ON_EMPTY for m in RULES if hasattr(m, "ON_EMPTY"))


def error_tips(ctx: CheckContext, error: BaseException, sql: str) -> list[Tip]:
    """Tips for the next round from a failed execution of ``sql`` (see :func:`tips_from_error`)."""
    if isinstance(error, UnsafeSQLError):
        return in_dialect(ctx, unsafe.unsafe_tips(error))
    kind = getattr(error, "kind", None)
    message = getattr(error, "sqlite_message", None) or str(error)
    rule = ERROR_RULES.get(kind) if isinstance(kind, str) else None
    tips = rule(ctx, sql, getattr(error, "name", None), message) if rule is not None else None
    return in_dialect(ctx, tips if tips is not None else other.other_tips(message))


def in_dialect(ctx: CheckContext, tips: list[Tip]) -> list[Tip]:
    """The tips with "SQLite" read as the database's engine (the rules' sentences name SQLite)."""
    if sqlglot_name(ctx.dialect) == "sqlite":
        return tips
    name = label(ctx.dialect)
    return [replace(t, text=t.text.replace("SQLite", name)) for t in tips]


def tips_from_error(error: BaseException, sql: str, schema: DatabaseSchema, *,
                    dialect: str | None = None) -> list[Tip]:
    """Tips for the next round from a failed execution of ``sql``.

    ``error`` is what :func:`kgsql.db.guard.execute_query` raised
    (``SQLQueryError``/``QueryTimeoutError``/``UnsafeSQLError``); other
    exceptions give one generic tip. ``dialect`` (default: the schema's own,
    :func:`kgsql.sql.dialects.dialect_of`) decides whether and which spatial
    function names are suggested.
    """
    return error_tips(CheckContext(schema, dialect=dialect or dialect_of(schema)), error, sql)


@dataclass
class Checked:
    """One checked candidate."""

    sql: str
    result: QueryResult | None  # None when it failed
    error: str | None  # str(exception) when it failed
    tips: list[Tip]  # tips for the next round
    kind: str | None = None  # error kind ("no_such_column", ..., "unsafe") or None
    constant: bool = False  # it reads no table (``SELECT 1``): an answer made up, not looked up


#: Told to the next round when a query reads no table.
CONSTANT_TIP = Tip("constant_answer", "The query reads no table, so it returns a constant instead of looking the "
                                      "answer up; select the answer from the database's tables.")


def is_vacuous(result: QueryResult) -> bool:
    """No rows, or one row of only NULLs and zeros: what an aggregate over no rows returns
    (``count(*)`` of a filter that matched nothing), which deserves the same checks as no rows."""
    if not result.rows:
        return True
    return len(result.rows) == 1 and all(v is None or v == 0 for v in result.rows[0])


def _static_tips(ctx: CheckContext, sql: str) -> list[Tip]:
    """The static name check's tips; a query the analysis cannot handle costs its tips, never the answer
    (a model-written query once ended a whole evaluation run here)."""
    try:
        return names.static_tips(ctx, sql)
    except Exception as exc:  # noqa: BLE001 - tips are a bonus; the query still runs and is judged
        log.warning("static name check failed on a candidate: %s: %s", type(exc).__name__, exc)
        return []


def check_candidate(ctx: CheckContext, sql: str, *, tips: bool = True, last: bool = False,
                    vacuous_as_empty: bool = False) -> Checked:
    """Run one candidate on the context's connection; say what to tell the next round.

    With ``tips`` the static name check runs first and names every unknown
    table/column at once, where SQLite stops at the first; its tips are used
    only when SQLite also rejects the query (after the error's own tips), so a
    static false positive never costs a round. A rejected (unsafe) query gets
    one tip; a query that returned no rows gets the EMPTY_RULES' tips unless
    it is the ``last`` round (with ``vacuous_as_empty``, so does a lone row
    of NULLs/zeros, see :func:`is_vacuous`). Without ``tips`` no tips are made at all.
    Errors other than the guard's (an unreadable file) propagate.
    """
    static = _static_tips(ctx, sql) if tips else []
    try:
        result = ctx.execute(sql)
    except UnsafeSQLError as exc:
        return Checked(sql, None, str(exc), in_dialect(ctx, unsafe.candidate_tips()) if tips else [], "unsafe")
    except SQLQueryError as exc:
        found = error_tips(ctx, exc, sql) if tips else []
        found += [t for t in static if t.text not in {x.text for x in found}]
        return Checked(sql, None, str(exc), found, exc.kind)
    if vacuous_as_empty and reads_no_table(ctx.tree(sql)):
        return Checked(sql, result, None, [CONSTANT_TIP] if tips and not last else [], constant=True)
    empty = is_vacuous(result) if vacuous_as_empty else not result.rows
    if empty and tips and not last:
        return Checked(sql, result, None, [t for rule in EMPTY_RULES for t in rule(ctx, sql, result)])
    return Checked(sql, result, None, [])
