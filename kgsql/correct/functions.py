"""Functions rule: unknown functions and wrong argument counts.

An unknown name is mapped back to the SpatiaLite function through the
function KB's aliases (PostGIS ``ST_DWithin`` -> ``PtDistWithin``), or to the
engine's way of writing another dialect's function (``Engine.function_equivalents``);
a wrong argument count is answered with the KB signature or the engine's core
signature (``Engine.function_signatures``), and so are wrong argument types (PostgreSQL's
"function st_within(geography, geometry) does not exist": the function is there, not for those types).
"""
from __future__ import annotations

import re
from typing import Any

from sqlglot import exp

from kgsql.correct.context import CheckContext, ErrorRule
from kgsql.sql.dialects import engine_of_dialect, function_kb, label
from kgsql.correct.tip import Tip
from kgsql.errors import KgsqlError

__all__ = ["ON_ERROR", "arguments_error", "function_error", "knowledge"]

FUNCTION_RENAMED_TIP = "The function '{name}' does not exist in {system}; use '{good}' instead: {call}"
FUNCTION_EQUIVALENT_TIP = "The function '{name}' does not exist in {system}; use {good} instead."
FUNCTION_UNKNOWN_TIP = "The function '{name}' does not exist in {system} and should not be used."
FUNCTION_NOT_LOADED_TIP = "The function '{name}' is not available: {system} is not loaded for this database."
FUNCTION_NOT_SPATIAL_TIP = "The function '{name}' does not exist in {system}: this database has no spatial functions."
ARGUMENTS_TIP = "The function '{name}' was called with the wrong number of arguments{given}; {advice}"
TYPES_TIP = "The function '{name}' does not take arguments of types ({types}); {call}"
#: PostgreSQL's message for a call no form of the function matches: the argument types it was given.
_GIVEN_TYPES = re.compile(r"function [\w.]+\((?P<types>[^)]*)\) does not exist")

def knowledge(dialect: str = "spatialite") -> Any:
    """The spatial function KB of ``dialect`` ("spatialite", "postgis"), or None when it cannot be loaded."""
    try:
        from kgsql.sql.spatialite import SpatialKnowledge

        return SpatialKnowledge.load(dialect)
    except (KgsqlError, OSError, ValueError):  # pragma: no cover - KB missing from a broken install
        return None


def function_error(ctx: CheckContext, sql: str, name: str | None, message: str) -> list[Tip] | None:
    """"no such function: f": the spatial dialect's name, the SQLite equivalent, or "do not use it"."""
    if not name:
        return None
    dialect = ctx.dialect.lower()
    system = label(dialect)
    spatial_kb = function_kb(dialect)
    kb = knowledge(spatial_kb or "spatialite")
    if kb is not None and spatial_kb:
        f = kb.suggest(name)
        if f is not None and f.name.lower() != name.lower():
            tip = FUNCTION_RENAMED_TIP.format(name=name, system=system, good=f.name, call=kb.call_hint(f))
            return [Tip("no_such_function", tip, name)]
        given = _GIVEN_TYPES.search(message)
        if f is not None and given and given.group("types").strip():  # there, but not for these types
            tip = TYPES_TIP.format(name=name, types=given.group("types"), call=kb.call_hint(f))
            return [Tip("wrong_arguments", tip, name)]
        if f is not None:  # the dialect's own function, unknown to the database: its extension is not loaded
            return [Tip("no_such_function", FUNCTION_NOT_LOADED_TIP.format(name=name, system=system), name)]
    elif kb is not None and kb.function(name) is not None:
        tip = FUNCTION_NOT_SPATIAL_TIP.format(name=name, system=system)
        return [Tip("no_such_function", tip, name)]
    equivalent = engine_of_dialect(dialect).function_equivalents.get(name.lower())
    if equivalent:
        tip = FUNCTION_EQUIVALENT_TIP.format(name=name, system=system, good=equivalent)
        return [Tip("no_such_function", tip, name)]
    return [Tip("no_such_function", FUNCTION_UNKNOWN_TIP.format(name=name, system=system), name)]


def _argument_count(tree: exp.Expression | None, name: str) -> int | None:
    """How many arguments the first call of ``name`` in the query has."""
    low = name.lower()
    for node in tree.find_all(exp.Func) if tree is not None else []:
        if isinstance(node, exp.Anonymous):
            if str(node.this).lower() == low:
                return len(node.expressions)
        elif low in {n.lower() for n in type(node).sql_names()} | {node.sql_name().lower()}:
            return sum(len(v) if isinstance(v, list) else 1 for v in node.args.values() if v is not None)
    return None


def arguments_error(ctx: CheckContext, sql: str, name: str | None, message: str) -> list[Tip] | None:
    """SQLite's "wrong number of arguments to function f()": the count given and the signature."""
    if not name:
        return None
    count = _argument_count(ctx.tree(sql), name)
    given = f" ({count} given)" if count is not None else ""
    kb = knowledge(function_kb(ctx.dialect)) if function_kb(ctx.dialect) else None
    f = kb.function(name) if kb is not None else None
    if f is None:
        sig = engine_of_dialect(ctx.dialect).function_signatures.get(name.lower())
        advice = f"call it as {sig}." if sig else "check how many arguments it takes."
        return [Tip("wrong_arguments", ARGUMENTS_TIP.format(name=name, given=given, advice=advice), name)]
    use = "call it as" if f.name.lower() == name.lower() else "use"
    returns = f", which returns {f.returns.rstrip('.')}" if f.returns else ""
    advice = f"{use} {f.signature}{returns}."
    tips = [Tip("wrong_arguments", ARGUMENTS_TIP.format(name=name, given=given, advice=advice), name)]
    note = next((v for k, v in kb.alias_notes.items() if k.lower() == name.lower()), None)
    if note:
        tips.append(Tip("suggestion", f"Note: {name} {note}", name))
    return tips


#: Error kinds (see kgsql.db.guard.ErrorKind) this rule answers.
ON_ERROR: dict[str, ErrorRule] = {
    "no_such_function": function_error,
    "wrong_arguments": arguments_error,
}
