"""A relation of two geometries where the question means a distance: dropped beside it, or made into it.

"Which cities lie within 20 km of the Silver River?" answered by the local 1.5B on the shipped example
(session 36) with ``JOIN rivers ON Intersects(rivers.Shape, cities.Location) = 1 WHERE ... AND
Distance(rivers.Shape, cities.Location, 1) <= 20 * 1000``: geometries that intersect are 0 apart, so the
bound holds for every pair the relation keeps and the query answers "which cities does the river cross"
(three cities, not the four within 20 km). Small models write a relation into every JOIN's ON; the
spatial benchmark's answers to "within 100 kilometers of a station" did the same with ``Within``.

Per SELECT, over the conjuncts of its WHERE and its JOINs' ONs together: a relation of two geometries
(``kgsql.sql.calls.RELATIONS``: ``Intersects(a, b)``, ``= 1`` or ``= TRUE``) whose two geometries also have an
upper distance bound (``Distance(a, b[, 1]) <= d`` or ``< d``, either side; ``PtDistWithin(a, b, d)``,
``ST_DWithin``; casts to geography see through) is dropped: from its AND chain, or, where it was a JOIN's
whole ON, replaced by the bound (moved from the WHERE). A bound of zero keeps the relation (it is one); an
outer join's ON filters nothing, so it is left alone. So is a relation of two geometries whose distance the
SELECT is ordered by: "Which park is closest to Shanghai Road Subway Station?" written ``JOIN subwaystations
ON Within(s.Location, g.Shape) = 1 ... ORDER BY Distance(g.Shape, s.Location, 1) LIMIT 1`` ranks only the
parks the station lies in, all 0 away (the spatial benchmark, traffic52, session 36); without it the JOIN is
a CROSS JOIN and the nearest comes first (a park the station lies in still would: it is 0 away).
None of the spatial benchmark's 200 gold queries holds such a pair.

The reverse mistake reads "within 150 kilometers" as containment: "How many cities can Dali Airport serve?",
evidence "Cities within 150 kilometers are considered within the service range", answered (local 1.5B,
tourism24, both splits) with ``Within(airports.Location, cities.Shape) = 1`` and no distance anywhere.
:func:`distance_for_within`: where the question (or its evidence) asks for one distance "within N <unit>"
and the query measures no distance at all, the relation of the query's one pair of geometries becomes that
bound, ``Distance(a, b) <= 150 * 1000`` (``ST_Distance`` on PostGIS; ``metre_units`` and
``geography_units``, run after it, measure it in metres on lon/lat data).
"""
from __future__ import annotations

from sqlglot import exp

from kgsql.correct.context import CheckContext
from kgsql.correct.repair import rewrite_selects, rewrite_tree
from kgsql.sql.calls import DISTANCES, RELATIONS, WITHIN_DISTANCE, function_call, is_spatial_cast
from kgsql.sql.dialects import dialect_of, sqlglot_name
from kgsql.sql.distance_units import number_text, within_distances

__all__ = ["distance_for_within", "drop_vacuous_relations"]

_UPPER = (exp.LT, exp.LTE)
_LOWER = (exp.GT, exp.GTE)


def _geometry(node: exp.Expression) -> str:
    node = node.unnest() if isinstance(node, exp.Paren) else node
    while is_spatial_cast(node):
        node = node.this
    return node.sql().lower()


def _pair(call: exp.Func) -> frozenset[str] | None:
    _name, args = function_call(call)
    return frozenset((_geometry(args[0]), _geometry(args[1]))) if len(args) >= 2 else None


def _true(node: exp.Expression) -> bool:
    return (isinstance(node, exp.Boolean) and bool(node.this)) or \
        (isinstance(node, exp.Literal) and node.is_number and node.this == "1")


def _called(conjunct: exp.Expression) -> exp.Expression:
    """The call a predicate is (``Within(a, b) = 1``, ``= TRUE``, or the bare call)."""
    return conjunct.this if isinstance(conjunct, exp.EQ) and _true(conjunct.expression) else conjunct


def _relation(conjunct: exp.Expression) -> frozenset[str] | None:
    """The two geometries ``conjunct`` relates (``Within(a, b)``, ``= 1`` or ``= TRUE``), else None."""
    call = _called(conjunct)
    if isinstance(call, exp.Func) and function_call(call)[0] in RELATIONS:
        return _pair(call)
    return None


def _positive(node: exp.Expression) -> bool:
    """Anything but a literal zero or less (``20 * 1000``, a column: a bound that may hold further than 0)."""
    node = node.unnest() if isinstance(node, exp.Paren) else node
    return not (isinstance(node, exp.Literal) and node.is_number and float(node.this) <= 0)


def _bound(conjunct: exp.Expression) -> frozenset[str] | None:
    """The two geometries ``conjunct`` keeps within a distance above zero of each other, else None."""
    call = _called(conjunct)
    if isinstance(call, exp.Func):
        name, args = function_call(call)
        return _pair(call) if name in WITHIN_DISTANCE and len(args) >= 3 and _positive(args[2]) else None
    if isinstance(conjunct, _UPPER + _LOWER):
        measure, limit = (conjunct.this, conjunct.expression) if isinstance(conjunct, _UPPER) \
            else (conjunct.expression, conjunct.this)
        measure = measure.unnest() if isinstance(measure, exp.Paren) else measure
        if isinstance(measure, exp.Func) and function_call(measure)[0] in DISTANCES and _positive(limit):
            return _pair(measure)
    return None


def _conjuncts(condition: exp.Expression | None) -> list[exp.Expression]:
    if condition is None:
        return []
    condition = condition.unnest() if isinstance(condition, exp.Paren) else condition
    return [c.unnest() if isinstance(c, exp.Paren) else c for c in condition.flatten()] \
        if isinstance(condition, exp.And) else [condition]


def _remove(select: exp.Select, conjunct: exp.Expression, owner: exp.Expression) -> None:
    """Take ``conjunct`` out of ``owner``'s AND chain (the WHERE, or a JOIN's ON); a WHERE left empty goes."""
    condition = owner.this if isinstance(owner, exp.Where) else owner.args["on"]
    kept = [c.copy() for c in _conjuncts(condition) if c is not conjunct]
    if isinstance(owner, exp.Where):
        select.set("where", exp.Where(this=exp.and_(*kept, copy=False)) if kept else None)
    else:  # never left empty: an ON that is one relation is replaced by the bound instead
        owner.set("on", exp.and_(*kept, copy=False))


def _ranked(select: exp.Select) -> set[frozenset[str]]:
    """The pairs of geometries whose distance ``select`` is ordered by (the call, or the alias of an output)."""
    outputs = {o.alias.lower(): o.this for o in select.expressions if isinstance(o, exp.Alias) and o.alias}
    order = select.args.get("order")
    out = set()
    for ordered in order.expressions if order is not None else ():
        key = ordered.this.unnest() if isinstance(ordered.this, exp.Paren) else ordered.this
        if isinstance(key, exp.Column) and not key.table:
            key = outputs.get(key.name.lower(), key)
        if isinstance(key, exp.Func) and function_call(key)[0] in DISTANCES and (pair := _pair(key)) is not None:
            out.add(pair)
    return out


def _relieve(select: exp.Select) -> bool:
    """Drop one relation whose two geometries the same SELECT bounds or ranks by distance; True if one was."""
    where = select.args.get("where")
    owned: list[tuple[exp.Expression, exp.Expression]] = \
        [(c, where) for c in _conjuncts(where.this if where is not None else None)]
    owned += [(c, j) for j in select.args.get("joins") or [] if not j.side  # an outer join's ON is no filter
              for c in _conjuncts(j.args.get("on"))]
    bounds = {pair: (c, owner) for c, owner in owned if (pair := _bound(c)) is not None}
    ranked = _ranked(select)
    for conjunct, owner in owned:
        pair = _relation(conjunct)
        if pair is None or len(pair) < 2 or (pair not in bounds and pair not in ranked):
            continue
        whole_on = isinstance(owner, exp.Join) and len(_conjuncts(owner.args["on"])) == 1
        if whole_on and pair in bounds:
            bound, bound_owner = bounds[pair]
            owner.set("on", bound.copy())  # a JOIN keeps an ON: the bound moves there
            if bound_owner is where:
                _remove(select, bound, where)
        elif whole_on:  # ranked by the distance: every pair, nearest first
            owner.set("on", None)
            owner.set("kind", "CROSS")
        else:
            _remove(select, conjunct, owner)
        return True
    return False


def drop_vacuous_relations(ctx: CheckContext, sql: str) -> str | None:
    """``sql`` without a relation that makes a distance bound of the same two geometries say nothing (module
    docstring); None when there was none."""
    parsed = ctx.tree(sql)
    if parsed is None or not any(function_call(f)[0] in RELATIONS for f in parsed.find_all(exp.Func)):
        return None  # most queries relate no geometries: no copy of the tree for nothing
    def relieve(select: exp.Select) -> bool:
        changed = False
        while _relieve(select):  # one relation at a time: each drop rewrites the chains read
            changed = True
        return changed

    return rewrite_selects(ctx, sql, relieve, sqlglot_name(ctx.dialect))


#: Relations a "within N km" may have been read as (not ``Equals``, which says something else).
_CONTAINMENT = frozenset(r for r in RELATIONS if not r.endswith("equals"))
_DISTANCE_CALL = {"spatialite": "Distance", "postgis": "ST_Distance"}


def distance_for_within(ctx: CheckContext, sql: str) -> str | None:
    """``sql`` with the relation a stated "within N km" was read as written as that distance bound (module
    docstring); None when the text states no such distance or two, the query measures one already, or relates
    other than one pair of geometries."""
    asked = within_distances(f"{ctx.question}\n{ctx.evidence}")
    distance = _DISTANCE_CALL.get(dialect_of(ctx.schema))
    if len(asked) != 1 or distance is None:
        return None
    (stated,) = asked

    def measured(tree: exp.Expression) -> bool:
        calls = [(c, function_call(c)) for c in tree.find_all(exp.Func)]
        if any(name in DISTANCES | WITHIN_DISTANCE for _c, (name, _a) in calls):
            return False
        related = [(c, args) for c, (name, args) in calls if name in _CONTAINMENT and len(args) >= 2]
        pairs = {_pair(c) for c, _args in related}
        if len(pairs) != 1 or len(next(iter(pairs)) or ()) < 2:
            return False
        limit = exp.Literal.number(number_text(stated.value))
        if stated.metres != 1:
            limit = exp.Mul(this=limit, expression=exp.Literal.number(number_text(stated.metres)))
        for call, args in related:
            bound = exp.LTE(this=exp.Anonymous(this=distance, expressions=[a.copy() for a in args[:2]]),
                            expression=limit.copy())
            predicate = call.parent if isinstance(call.parent, exp.EQ) and _true(call.parent.expression) else call
            predicate.replace(bound)
        return True

    return rewrite_tree(ctx, sql, measured)
