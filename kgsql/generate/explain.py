"""What an answer's SQL does, in words, from the SQL and the schema graph alone (no model call).

A person checking an answer needs to see which tables it read, how it joined
them, what it filtered on and what it computed. All of that is in the SQL
(parsed with sqlglot in the database's dialect) and the graph's knowledge of
the schema: table and column descriptions, value examples, and the join edges
with their origin (``declared`` in the database, ``discovered`` from its data,
``mined`` from past questions). A join whose columns no edge links is said so
("no edge in the graph"): that is where a plausible-looking wrong answer
usually hides. Spatial tables rarely share a key: a join by a relation of two
geometries (``Within(cities.Location, provinces.Shape) = 1``, ``ST_DWithin``)
is said as a location relation, with how the graph's geometry types pair the
two tables (``kgsql.schema.spatial_pairs``).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from sqlglot import exp

from kgsql.schema.model import Column, DatabaseSchema, ForeignKey
from kgsql.schema.spatial_pairs import pairing
from kgsql.sql.calls import DISTANCES, RELATIONS, WITHIN_DISTANCE, function_call, is_spatial_cast
from kgsql.sql.dialects import dialect_of, sqlglot_name
from kgsql.sql.names import SchemaNames, parse_sql, resolved_columns, schema_table, scopes

__all__ = ["Explanation", "JoinStep", "FilterStep", "ValueProbe", "explain_sql", "edge_between"]

#: ``(table, column, text) -> the stored value equal to text, or None``: a read-only probe on the database.
ValueProbe = Callable[[str, str, str], "str | None"]
#: Comparisons a filter can make, in words.
OPERATORS: dict[type[exp.Expression], str] = {
    exp.EQ: "=", exp.NEQ: "!=", exp.GT: ">", exp.GTE: ">=", exp.LT: "<", exp.LTE: "<=",
    exp.Like: "LIKE", exp.ILike: "ILIKE",
}
AGGREGATES: dict[type[exp.Expression], str] = {
    exp.Count: "the number of", exp.Sum: "the sum of", exp.Avg: "the average of",
    exp.Min: "the smallest", exp.Max: "the largest",
}
MEANING_CHARS = 120
#: A relation of two geometries, in words (the ``Mbr`` forms compare bounding boxes).
RELATION_WORDS: dict[str, str] = {
    "within": "lies within", "contains": "contains", "intersects": "intersects", "touches": "touches",
    "crosses": "crosses", "overlaps": "overlaps", "covers": "covers", "coveredby": "is covered by",
    "equals": "equals",
}


@dataclass
class JoinStep:
    """One join condition ``left = right`` and the graph edge it follows (``origin`` None: no edge;
    ``"location"``: a relation of the two tables' geometries, which needs no key)."""

    left: str
    right: str
    origin: str | None
    text: str


@dataclass
class FilterStep:
    """One filter on a column, the column's meaning, and the stored value it matched (None: none found)."""

    column: str
    op: str
    value: str
    meaning: str
    stored: str | None
    text: str


@dataclass
class Explanation:
    """What the SQL reads, joins, filters and computes; every item has a ``text`` for people."""

    tables: list[dict[str, str]] = field(default_factory=list)
    joins: list[JoinStep] = field(default_factory=list)
    filters: list[FilterStep] = field(default_factory=list)
    aggregation: list[str] = field(default_factory=list)
    parsed: bool = True
    hesitation: str = ""  # a name the model wrote with a low probability (kgsql.correct.confidence), last

    def lines(self) -> list[str]:
        """The explanation as short lines (what the CLI and the MCP result print)."""
        if not self.parsed:
            return ["The SQL could not be parsed, so it is not explained."]
        out = [f"Reads {t['text']}" for t in self.tables]
        out += [f"Joins {j.text}" for j in self.joins]
        out += [f"Filters {f.text}" for f in self.filters]
        out += list(self.aggregation)
        return out + ([self.hesitation] if self.hesitation else [])

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "lines": self.lines()}


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MEANING_CHARS else text[: MEANING_CHARS - 1] + "…"


def meaning_of(column: Column) -> str:
    """What a column holds, in the graph's words (its description, readable name or value meaning)."""
    return _short(column.description or column.readable_name or column.value_explanation or "")


def edge_between(schema: DatabaseSchema, a: tuple[str, str], b: tuple[str, str]) -> tuple[str | None, str]:
    """(origin, how) of the graph edge linking columns ``a`` and ``b`` (``(table, column)``): an edge
    between them, else two keys that refer to the same column (``shared key``); (None, "") for none."""
    ka, kb = (a[0].lower(), a[1].lower()), (b[0].lower(), b[1].lower())

    def ends(fk: ForeignKey) -> tuple[tuple[str, str], tuple[str, str]]:
        return (fk.table.lower(), fk.column.lower()), (fk.ref_table.lower(), fk.ref_column.lower())

    for fk in schema.foreign_keys:
        if {*ends(fk)} == {ka, kb}:
            return fk.origin, f"{fk.table}.{fk.column} -> {fk.ref_table}.{fk.ref_column}"
    if ka == kb:  # one column joined with itself (a self-join): no edge makes that a link
        return None, ""
    targets_a = {ends(fk)[1]: fk for fk in schema.foreign_keys if ends(fk)[0] == ka}
    for fk in schema.foreign_keys:
        if ends(fk)[0] == kb and ends(fk)[1] in targets_a:
            other = targets_a[ends(fk)[1]]
            return "shared key", (f"both refer to {fk.ref_table}.{fk.ref_column} "
                                  f"({other.origin} and {fk.origin})")
    return None, ""


def _join_text(left: str, right: str, origin: str | None, how: str) -> str:
    if origin is None:
        return f"{left} = {right}: no edge in the graph links these columns"
    if origin == "shared key":
        return f"{left} = {right}: {how}"
    return f"{left} = {right}: follows the {origin} key {how}"


def location_text(schema: DatabaseSchema, first: str, second: str) -> str:
    """How the graph's geometry types pair tables ``first`` and ``second`` (a sentence's tail)."""
    tables = {t.name.lower(): t for t in schema.tables}
    a, b = tables.get(first.lower()), tables.get(second.lower())
    pair = pairing(a, b) if a is not None and b is not None else None
    if pair is None:
        return "a location relation, no key (the graph pairs these tables' geometry types in no known way)"
    return (f"a location relation, no key (the graph pairs their geometry types: "
            f"{pair.first.name} {pair.verb} {pair.second.name})")


def _relation_words(call: exp.Func, name: str, args: list[exp.Expression]) -> str | None:
    """``Within`` -> "lies within", ``ST_DWithin(a, b, 500)`` and ``Distance(a, b) < 500`` -> "lies within 500
    of"; None for a call that relates no two geometries. ``MbrWithin`` compares bounding boxes: "lies within,
    by bounding box,"."""
    if name in WITHIN_DISTANCE and len(args) >= 3:
        return f"lies within {args[2].sql()}{_metres(name, args)} of"
    if name in DISTANCES and isinstance(call.parent, (exp.LT, exp.LTE)) and call.parent.this is call:
        return f"lies within {call.parent.expression.sql()}{_metres(name, args)} of"
    if name not in RELATIONS:
        return None
    if name.startswith("mbr"):
        return f"{RELATION_WORDS[name[3:]]}, by bounding box,"
    return RELATION_WORDS[name.removeprefix("st_")]


def _metres(name: str, args: list[exp.Expression]) -> str:
    """" metres" where the call surely measures in metres (SpatiaLite's ``Distance(a, b, 1)``, a geography
    cast): "lies within 20 metres of" is where "20 km" written as 20 shows; else nothing (a projection's unit)."""
    ellipsoid = name in DISTANCES and len(args) == 3 and args[2].sql() == "1"
    return " metres" if ellipsoid or any(is_spatial_cast(a, "geography") for a in args[:2]) else ""


def _geometry(node: exp.Expression) -> exp.Expression:
    """A geometry argument without its cast (``a.geom::geography`` is ``a.geom``)."""
    return node.this if is_spatial_cast(node) else node


def _literal_text(node: exp.Expression) -> str | None:
    """The text of a literal (a negative number too), else None."""
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal):
        return "-" + node.this.name
    if isinstance(node, exp.Literal):
        return node.name
    return None


class _Reader:
    """Walks one parsed query once and fills an :class:`Explanation`."""

    def __init__(self, tree: exp.Expression, schema: DatabaseSchema, probe: ValueProbe | None) -> None:
        self.tree = tree
        self.schema = schema
        self.names = SchemaNames(schema)
        self.columns = resolved_columns(tree, self.names, innermost=True)  # each read in its innermost scope
        self.probe = probe
        self.out = Explanation()

    def column(self, node: exp.Expression) -> tuple[str, Column] | None:
        return self.columns.get(id(node)) if isinstance(node, exp.Column) else None

    def run(self) -> Explanation:
        self._tables()
        for scope in scopes(self.tree):
            select = scope.expression
            if not isinstance(select, exp.Select):
                continue
            self._joins(select)
            self._filters(select)
            self._aggregation(select)
        return self.out

    def _tables(self) -> None:
        seen: list[str] = []
        for node in self.tree.find_all(exp.Table):
            table = schema_table(node, self.names.tables)
            if table is not None and table.name not in seen:
                seen.append(table.name)
                about = _short(table.description)
                self.out.tables.append({"table": table.name, "description": about,
                                        "text": f"{table.name}" + (f": {about}" if about else "")})

    def _own(self, node: exp.Expression, select: exp.Select) -> bool:
        return node.find_ancestor(exp.Select) is select

    def _add_join(self, a: tuple[str, Column], b: tuple[str, Column], qa: str, qb: str) -> None:
        if a[0].lower() == b[0].lower() and qa.lower() == qb.lower():
            return  # one FROM item's columns compared with each other: a filter, not a join
        left, right = f"{a[0]}.{a[1].name}", f"{b[0]}.{b[1].name}"
        if any({j.left, j.right} == {left, right} for j in self.out.joins):
            return
        origin, how = edge_between(self.schema, (a[0], a[1].name), (b[0], b[1].name))
        self.out.joins.append(JoinStep(left, right, origin, _join_text(left, right, origin, how)))

    def _add_location(self, a: tuple[str, Column], b: tuple[str, Column], qa: str, qb: str, words: str) -> None:
        if a[0].lower() == b[0].lower() and qa.lower() == qb.lower():
            return  # a geometry related to itself joins nothing (the correction loop mends that)
        left, right = f"{a[0]}.{a[1].name}", f"{b[0]}.{b[1].name}"
        text = f"{left} {words} {right}: {location_text(self.schema, a[0], b[0])}"
        if text not in {j.text for j in self.out.joins}:  # two relations of one pair (Intersects and a distance) both
            self.out.joins.append(JoinStep(left, right, "location", text))

    def _locations(self, place: exp.Expression, select: exp.Select) -> None:
        """Joins by a relation of two geometries: a predicate, or a distance below a bound."""
        for call in place.find_all(exp.Func):
            name, args = function_call(call)
            words = _relation_words(call, name, args)
            if words is None or len(args) < 2 or not self._own(call, select):
                continue
            first, second = _geometry(args[0]), _geometry(args[1])
            a, b = self.column(first), self.column(second)
            if a and b:
                self._add_location(a, b, first.table, second.table, words)

    def _joins(self, select: exp.Select) -> None:
        places = [j.args.get("on") for j in select.args.get("joins") or []] + [select.args.get("where")]
        for place in (p for p in places if p is not None):
            self._locations(place, select)
            for eq in place.find_all(exp.EQ):
                a, b = self.column(eq.this), self.column(eq.expression)
                if a and b and self._own(eq, select):
                    self._add_join(a, b, eq.this.table, eq.expression.table)
            for node in place.find_all(exp.In):
                query = node.args.get("query")
                inner = query.this if isinstance(query, exp.Subquery) else query
                a = self.column(node.this)
                if a and isinstance(inner, exp.Select) and len(inner.selects) == 1 and self._own(node, select):
                    b = self.column(inner.selects[0])
                    # x IN (SELECT x FROM the same table ...) filters the table by a subquery: no join
                    if b and (a[0].lower(), a[1].name.lower()) != (b[0].lower(), b[1].name.lower()):
                        self._add_join(a, b, node.this.table, "(subquery)")

    def _filters(self, select: exp.Select) -> None:
        for clause in (select.args.get("where"), select.args.get("having")):
            if clause is None:
                continue
            for node in clause.find_all(*OPERATORS, exp.In, exp.Between, exp.Is):
                if self._own(node, select):
                    self._filter(node)

    def _filter(self, node: exp.Expression) -> None:
        found = self.column(node.this)
        if isinstance(node, exp.In):
            values = [_literal_text(e) for e in node.expressions]
            op = "NOT IN" if isinstance(node.parent, exp.Not) else "IN"
        elif isinstance(node, exp.Between):
            values = [_literal_text(node.args.get("low")), _literal_text(node.args.get("high"))]
            op = "BETWEEN"
        elif isinstance(node, exp.Is):
            values, op = ["NULL"], "IS NOT" if isinstance(node.parent, exp.Not) else "IS"
        else:
            values, op = [_literal_text(node.expression)], OPERATORS[type(node)]
            if found is None:  # the literal on the left: 'x' = col
                found, values = self.column(node.expression), [_literal_text(node.this)]
        if found is None or not values or any(v is None for v in values):
            return
        table, column = found
        strings = [lit for lit in node.find_all(exp.Literal) if lit.is_string]
        texts = [v for v in values if v is not None]
        shown = [f"'{v}'" if strings and v != "NULL" else v for v in texts]
        stored = self._stored(table, column, texts[0]) if strings and op in ("=", "IN", "LIKE", "ILIKE") else None
        value = " AND ".join(texts) if op == "BETWEEN" else ", ".join(texts)
        meaning = meaning_of(column)
        text = f"{table}.{column.name} {op} {' AND '.join(shown) if op == 'BETWEEN' else ', '.join(shown)}"
        text += f" ({meaning})" if meaning else ""
        if strings and op in ("=", "IN"):
            text += f"; stored value: {stored}" if stored is not None else "; no stored value known to match"
        self.out.filters.append(FilterStep(f"{table}.{column.name}", op, value, meaning, stored, text))

    def _stored(self, table: str, column: Column, text: str) -> str | None:
        """The stored value ``text`` matches: a value example or sample of the column, else the probe's."""
        known = [*column.value_examples, *column.stats.sample]
        for value in known:
            if str(value) == text:
                return str(value)
        for value in known:
            if str(value).lower() == text.lower():
                return str(value)
        return self.probe(table, column.name, text) if self.probe is not None else None

    def _aggregation(self, select: exp.Select) -> None:
        computed = [self._aggregate_words(agg) for expr in select.selects for agg in expr.find_all(*AGGREGATES)
                    if agg.find_ancestor(exp.Select) is select]
        group = select.args.get("group")
        per = f" per {', '.join(self._name(e) for e in group.expressions)}" if group is not None else ""
        words = [f"Computes {', '.join(computed)}{per}"] if computed else ([f"Groups{per}"] if per else [])
        order, limit = select.args.get("order"), select.args.get("limit")
        if order is not None and limit is not None and isinstance(limit, exp.Limit) and limit.expression:
            key = order.expressions[0]
            way = "highest" if key.args.get("desc") else "lowest"
            name = self._name(key.this).removeprefix("the ")
            words.append(f"Keeps the {limit.expression.name} row(s) with the {way} {name}")
        elif order is not None:
            key = order.expressions[0]
            words.append(f"Sorts by {self._name(key.this)}{' descending' if key.args.get('desc') else ''}")
        if select.args.get("distinct") is not None:
            words.append("Keeps distinct rows only")
        self.out.aggregation += words

    def _aggregate_words(self, agg: exp.Expression) -> str:
        arg = agg.this
        distinct = isinstance(arg, exp.Distinct)
        if distinct:
            arg = arg.expressions[0] if arg.expressions else arg
        if isinstance(agg, exp.Count) and (arg is None or isinstance(arg, exp.Star)):
            return "the number of rows"
        return f"{AGGREGATES[type(agg)]} {'distinct ' if distinct else ''}{self._name(arg)}"

    def _name(self, node: exp.Expression | None) -> str:
        """A column as table.column when it resolves, else the SQL of the expression."""
        found = self.column(node) if node is not None else None
        if found:
            return f"{found[0]}.{found[1].name}"
        if isinstance(node, exp.Expression):
            if isinstance(node, tuple(AGGREGATES)):
                return self._aggregate_words(node)
            return node.sql()
        return "?"


def explain_sql(sql: str, schema: DatabaseSchema, *, probe: ValueProbe | None = None) -> Explanation:
    """The :class:`Explanation` of ``sql`` over ``schema`` (parsed in the schema's dialect)."""
    tree = parse_sql(sql, sqlglot_name(dialect_of(schema))) if sql.strip() else None
    if tree is None:
        return Explanation(parsed=False)
    return _Reader(tree, schema, probe).run()
