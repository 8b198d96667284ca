"""How two tables with geometry relate by location, read from their geometry types, for any spatial database.

Spatial tables rarely share a key: an airport lies in a city because its point is
inside the city's polygon, not because it stores the city's id. Without saying so,
the 1.5B joins such tables on look-alike text columns (``airports.name =
cities.name``) or on nothing; on the spatial set this was the most common wrong
answer (issue 29's failure table). The geometry types decide the predicate: a
point inside a polygon (``Within``), a line or polygon meeting another line or
polygon (``Intersects``), two points or a point and a line by distance (in metres
on lon/lat data). Nothing here is written for one database; a profile may still
override the schema, and these lines then follow from what it says.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kgsql.errors import UnknownNameError
from kgsql.generate.render import table_ref
from kgsql.schema.geometry_units import base_type, is_lon_lat, measure_form
from kgsql.schema.model import Column, DatabaseSchema, Table

__all__ = ["SpatialRelation", "spatial_relation", "relations_between"]

#: (SpatiaLite, PostGIS) forms: a predicate that is true when ``{a}`` relates to ``{b}``.
_WITHIN: Final = ("Within({a}, {b}) = 1", "ST_Within({a}, {b})")
_INTERSECTS: Final = ("Intersects({a}, {b}) = 1", "ST_Intersects({a}, {b})")
#: distance forms: (SpatiaLite lon/lat, PostGIS lon/lat, SpatiaLite projected, PostGIS projected)
_DISTANCE: Final = ("Distance({a}, {b}, 1)", "ST_Distance({a}::geography, {b}::geography)",
                    "Distance({a}, {b})", "ST_Distance({a}, {b})")

#: (geometry type of a, of b) -> (how a relates to b, the predicate forms); the pair is tried both ways.
_RELATIONS: Final = {
    ("POINT", "POLYGON"): ("inside", _WITHIN),
    ("LINESTRING", "POLYGON"): ("crossing", _INTERSECTS),
    ("POLYGON", "POLYGON"): ("overlapping", _INTERSECTS),
    ("LINESTRING", "LINESTRING"): ("crossing", _INTERSECTS),
}


@dataclass(frozen=True)
class SpatialRelation:
    """``a`` relates to ``b`` by ``condition`` (a join condition, or a distance expression when ``measured``)."""

    a: str
    b: str
    verb: str
    condition: str
    measured: bool = False

    def sentence(self) -> str:
        """``airports inside cities: Within(airports.Location, cities.Shape) = 1``."""
        if self.measured:
            return f"distance between {table_ref(self.a)} and {table_ref(self.b)}: {self.condition}"
        return f"{table_ref(self.a)} {self.verb} {table_ref(self.b)}: {self.condition}"


def _geometry(table: Table) -> Column | None:
    return next((c for c in table.columns if c.spatial is not None), None)


def _ref(table: Table, column: Column) -> str:
    return f"{table_ref(table.name)}.{table_ref(column.name)}"


def spatial_relation(a: Table, b: Table, dialect: str = "sqlite") -> SpatialRelation | None:
    """How ``a`` relates to ``b`` by location, or None when either has no geometry of a known type."""
    ga, gb = _geometry(a), _geometry(b)
    if ga is None or gb is None or ga.spatial is None or gb.spatial is None:
        return None
    kinds = (base_type(ga.spatial.geometry_type), base_type(gb.spatial.geometry_type))
    postgis = dialect == "postgres"
    for (x, gx), (y, gy), pair in (((a, ga), (b, gb), kinds), ((b, gb), (a, ga), kinds[::-1])):
        found = _RELATIONS.get(pair)
        if found is not None:
            verb, forms = found
            return SpatialRelation(x.name, y.name, verb, forms[postgis].format(a=_ref(x, gx), b=_ref(y, gy)))
    if "POINT" in kinds and "POLYGON" not in kinds:
        lon_lat = is_lon_lat(ga.spatial) is not False and is_lon_lat(gb.spatial) is not False
        form = measure_form(_DISTANCE, lon_lat=lon_lat, postgis=postgis)
        return SpatialRelation(a.name, b.name, "near", form.format(a=_ref(a, ga), b=_ref(b, gb)), measured=True)
    return None


def relations_between(schema: DatabaseSchema, tables: list[str], *, limit: int = 3,
                      distances: bool = True) -> list[SpatialRelation]:
    """Relations among ``tables`` (in their order) that share no foreign key: those the key joins cannot give;
    ``distances=False`` keeps only the relations a join condition states (inside, crossing, overlapping)."""
    keyed = {frozenset((fk.table, fk.ref_table)) for fk in schema.foreign_keys}
    chosen: list[Table] = []
    for name in dict.fromkeys(tables):
        try:
            chosen.append(schema.table(name))
        except UnknownNameError:
            continue
    relations: list[SpatialRelation] = []
    for i, a in enumerate(chosen):
        for b in chosen[i + 1:]:
            if frozenset((a.name, b.name)) in keyed:
                continue
            relation = spatial_relation(a, b, schema.dialect)
            if relation is not None and (distances or not relation.measured):
                relations.append(relation)
                if len(relations) >= limit:
                    return relations
    return relations
