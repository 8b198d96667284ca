"""Spider's hardness classes (easy/medium/hard/extra) of a gold query, re-implemented with sqlglot.

The rules of Spider's ``eval_hardness`` on the outermost query; docs/eval.md
("Spider hardness") spells them out and says how they were checked.
"""
from __future__ import annotations

import sqlglot
from sqlglot import exp


def _strip(node: exp.Expression | None) -> exp.Expression | None:
    while isinstance(node, (exp.Paren, exp.Alias)):
        node = node.this
    return node


def _is_query(node: exp.Expression | None) -> bool:
    node = _strip(node)
    return isinstance(node, (exp.Subquery, exp.Select, exp.Union, exp.Intersect, exp.Except))


def _conditions(node: exp.Expression | None) -> tuple[list[exp.Expression], int]:
    """Leaf conditions of an AND/OR tree and the number of ORs joining them."""
    node = _strip(node)
    if node is None:
        return [], 0
    if isinstance(node, exp.Connector):
        left, lor = _conditions(node.left)
        right, ror = _conditions(node.right)
        return left + right, lor + ror + int(isinstance(node, exp.Or))
    return [node], 0


def _negated(cond: exp.Expression) -> bool:
    """Spider's ``not_op``: NOT IN / NOT LIKE / NOT BETWEEN (not IS NOT NULL)."""
    if isinstance(cond, exp.Not):
        return not isinstance(_strip(cond.this), exp.Is)
    return bool(cond.args.get("negate"))


def _is_like(cond: exp.Expression) -> bool:
    inner = _strip(cond.this) if isinstance(cond, exp.Not) else cond
    return isinstance(inner, exp.Like)


def _nested_values(cond: exp.Expression) -> int:
    """Subqueries used as the value(s) of a condition (Spider's val1/val2)."""
    inner = _strip(cond.this) if isinstance(cond, exp.Not) else cond
    if isinstance(inner, exp.Exists):
        return 1
    if isinstance(inner, exp.In):
        return int(_is_query(inner.args.get("query"))
                   or any(_is_query(e) for e in inner.expressions))
    if isinstance(inner, exp.Between):
        return int(_is_query(inner.args.get("low"))) + int(_is_query(inner.args.get("high")))
    if isinstance(inner, exp.Binary):
        return int(_is_query(inner.expression))
    return 0


def _is_agg(node: exp.Expression | None) -> bool:
    return isinstance(_strip(node), exp.AggFunc)


def _leading_agg(node: exp.Expression | None) -> bool:
    """Spider sets a select item's agg only when the item starts with one."""
    node = _strip(node)
    while isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Div)):
        node = _strip(node.left)
    return isinstance(node, exp.AggFunc)


def _agg_units(node: exp.Expression | None) -> int:
    """Aggregated column units of an ORDER BY value (at most two in Spider)."""
    node = _strip(node)
    if isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Div)):
        return int(_is_agg(node.left)) + int(_is_agg(node.right))
    return int(_is_agg(node))


def spider_hardness_counts(sql: str) -> tuple[int, int, int] | None:
    """(component1, component2, others) of Spider's hardness rules, or None if unparsable."""
    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError, ValueError):
        return None
    core = _strip(tree)
    set_ops = 0
    while isinstance(core, (exp.Union, exp.Intersect, exp.Except, exp.Subquery)):
        if not isinstance(core, exp.Subquery):
            set_ops = 1
        core = _strip(core.this)
    if not isinstance(core, exp.Select):
        return None
    where, where_or = _conditions(core.args["where"].this if core.args.get("where") else None)
    having, having_or = _conditions(core.args["having"].this if core.args.get("having") else None)
    on: list[exp.Expression] = []
    on_or = 0
    for join in core.args.get("joins") or []:
        conds, ors = _conditions(join.args.get("on"))
        on += conds
        on_or += ors
    group = core.args["group"].expressions if core.args.get("group") else []
    order = core.args["order"].expressions if core.args.get("order") else []
    tables = (1 if core.args.get("from_") or core.args.get("from") else 0) + len(
        core.args.get("joins") or [])

    comp1 = (bool(where) + bool(group) + bool(order) + bool(core.args.get("limit"))
             + max(tables - 1, 0) + on_or + where_or + having_or
             + sum(_is_like(c) for c in on + where + having))
    comp2 = sum(_nested_values(c) for c in on + where + having) + set_ops
    aggs = (sum(_leading_agg(e) for e in core.expressions)
            + sum(_negated(c) for c in where)
            + sum(_is_agg(g) for g in group)
            + sum(_agg_units(o.this if isinstance(o, exp.Ordered) else o) for o in order)
            # Spider counts every AND/OR joining HAVING conditions as an aggregate.
            + max(len(having) - 1, 0) + sum(_negated(c) for c in having))
    others = (int(aggs > 1) + int(len(core.expressions) > 1) + int(len(where) > 1)
              + int(len(group) > 1))
    return comp1, comp2, others


def classify_hardness(comp1: int, comp2: int, others: int) -> str:
    """Spider's easy/medium/hard/extra thresholds on the three counts."""
    if comp1 <= 1 and others == 0 and comp2 == 0:
        return "easy"
    if (others <= 2 and comp1 <= 1 and comp2 == 0) or (comp1 <= 2 and others < 2 and comp2 == 0):
        return "medium"
    if ((others > 2 and comp1 <= 2 and comp2 == 0)
            or (2 < comp1 <= 3 and others <= 2 and comp2 == 0)
            or (comp1 <= 1 and others == 0 and comp2 <= 1)):
        return "hard"
    return "extra"


def spider_hardness(sql: str) -> str | None:
    """Spider hardness of a gold query, or None when sqlglot cannot parse it."""
    counts = spider_hardness_counts(sql)
    return classify_hardness(*counts) if counts else None
