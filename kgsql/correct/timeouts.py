"""Timeouts rule: a query stopped at its time or memory budget, and the cross joins that usually cause it."""
from __future__ import annotations

from typing import Iterable

from sqlglot import exp

from kgsql.correct.context import CheckContext, ErrorRule
from kgsql.correct.tip import Tip, quoted
from kgsql.sql.comparisons import select_conditions
from kgsql.sql.names import SchemaNames, Source, SourceCache, is_natural, resolve, scopes, sources

__all__ = ["ON_ERROR", "cross_joins", "resource_error", "timeout_error"]

TIMEOUT_SPATIAL_TIP = (
    "The query took too long and was stopped; avoid cross joins (join tables on their key columns) and filter "
    "with cheap conditions before exact spatial functions, e.g. MbrIntersects(g1, g2) AND Intersects(g1, g2), "
    "or PtDistWithin(g1, g2, radius, 1) instead of computing Distance for every pair."
)
TIMEOUT_TIP = ("The query took too long and was stopped; avoid cross joins (join tables on their key columns) "
               "and filter rows as early as possible.")
CROSS_JOIN_TIP = "The tables {tables} are combined without any join condition (a cross join)."
RESOURCE_TIP = ("The query needed too much memory or made a value too large and was stopped; join tables on "
                "their key columns, avoid cross joins and huge generated values, and return only the rows and "
                "columns the question asks for.")


def timeout_error(ctx: CheckContext, sql: str, name: str | None, message: str) -> list[Tip] | None:
    """The timeout advice (spatial filters on SpatiaLite), then one tip per cross join."""
    tips = [Tip("timeout", TIMEOUT_SPATIAL_TIP if ctx.dialect.lower() == "spatialite" else TIMEOUT_TIP)]
    tree = ctx.tree(sql)
    for group in cross_joins(tree, ctx.names) if tree is not None else []:
        tips.append(Tip("timeout", CROSS_JOIN_TIP.format(tables=quoted(group))))
    return tips


def resource_error(ctx: CheckContext, sql: str, name: str | None, message: str) -> list[Tip] | None:
    """The memory-budget advice, then one tip per cross join (the usual cause of a huge result)."""
    tips = [Tip("resource", RESOURCE_TIP)]
    tree = ctx.tree(sql)
    for group in cross_joins(tree, ctx.names) if tree is not None else []:
        tips.append(Tip("resource", CROSS_JOIN_TIP.format(tables=quoted(group))))
    return tips


def cross_joins(tree: exp.Expression, names: SchemaNames) -> list[list[str]]:
    """Per SELECT, its FROM items when no ON/USING/WHERE condition connects them all."""
    out: list[list[str]] = []
    cache: SourceCache = {}
    for scope in scopes(tree):
        select = scope.expression
        srcs = cache.setdefault(id(scope), sources(scope, names)) if isinstance(select, exp.Select) else {}
        if len(srcs) < 2:
            continue
        group = {a: a for a in srcs}  # union-find over FROM items

        def root(x: str) -> str:
            while group[x] != x:
                x = group[x]
            return x

        def link(items: Iterable[str]) -> None:
            items = sorted(items)
            for other in items[1:]:
                group[root(other)] = root(items[0])

        first = next(iter(srcs))
        for join in select.args.get("joins") or []:
            if join.args.get("using") or is_natural(join):  # joined to the items before it
                link({first, (join.this.alias_or_name or "").lower()} & set(group))
        for pred in select_conditions(select):
            used = set()
            for col in pred.find_all(exp.Column):
                status, found = resolve(col, scope, names, cache)
                used.update(s.alias.lower() for s in found if status == "ok" and s.alias.lower() in group)
            link(used)
        roots: dict[str, Source] = {}
        for alias, src in srcs.items():
            roots.setdefault(root(alias), src)
        if len(roots) > 1:
            out.append([s.label if s.alias.lower() == s.label.lower() else f"{s.label} {s.alias}"
                        for s in roots.values()])
    return out


#: Error kinds (see kgsql.db.guard.ErrorKind) this rule answers.
ON_ERROR: dict[str, ErrorRule] = {"timeout": timeout_error, "resource": resource_error}
