"""How two tables with geometry relate by location, read from their geometry types alone.

Spatial tables rarely share a key: an airport lies in a city because its point is
inside the city's polygon, not because it stores the city's id. The geometry
types decide the predicate: a point inside a polygon (``Within``), a line or
polygon meeting another line or polygon (``Intersects``), two points or a point
and a line by distance (in metres on lon/lat data). Two users read this: the
spatial hints write it as a sentence (``kgsql.generate.spatial_relations``) and
the spatial join repair writes it as a join (``kgsql.correct.spatial_joins``);
each names the tables its own way, so a pairing gives the condition for any two
references.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kgsql.schema.geometry_units import base_type, is_lon_lat
from kgsql.schema.model import Column, DatabaseSchema, Table
from kgsql.schema.spatial_forms import SpatialForms

__all__ = ["Pairing", "geometry_column", "geometry_names", "pairing"]

#: (geometry type of a, of b) -> (how a relates to b, the SpatialForms field of its predicate); the pair is tried
#: both ways.
_RELATIONS: Final = {
    ("POINT", "POLYGON"): ("inside", "within"),
    ("LINESTRING", "POLYGON"): ("crossing", "intersects"),
    ("POLYGON", "POLYGON"): ("overlapping", "intersects"),
    ("LINESTRING", "LINESTRING"): ("crossing", "intersects"),
}


def geometry_column(table: Table) -> Column | None:
    """The table's geometry column (the first, when it has several); None without one."""
    return next((c for c in table.columns if c.spatial is not None), None)


def geometry_names(schema: DatabaseSchema) -> set[str]:
    """The lower-case names of every geometry column of the schema (what a written column may refer to)."""
    return {c.name.lower() for t in schema.tables for c in t.columns if c.spatial is not None}


@dataclass(frozen=True)
class Pairing:
    """``first`` relates to ``second`` by ``verb``; a distance between them when ``measured``."""

    first: Table
    first_geometry: Column
    second: Table
    second_geometry: Column
    verb: str
    predicate: str  # the SpatialForms field of the predicate ("within"), or "distance"

    @property
    def measured(self) -> bool:
        """A distance between the two, not a predicate that joins them."""
        return self.predicate == "distance"

    def condition(self, first_ref: str, second_ref: str, forms: SpatialForms) -> str:
        """The predicate (or, when ``measured``, the distance) over the two geometry references as given
        (``T1.Location``), written in ``forms`` (the engine's); in metres on lon/lat data."""
        if self.measured:
            lon_lat = (is_lon_lat(self.first_geometry.spatial) is not False  # type: ignore[arg-type]
                       and is_lon_lat(self.second_geometry.spatial) is not False)  # type: ignore[arg-type]
            form = forms.distance.form(lon_lat=lon_lat)
        else:
            form = getattr(forms, self.predicate)
        return form.format(a=first_ref, b=second_ref)


def pairing(a: Table, b: Table) -> Pairing | None:
    """How ``a`` relates to ``b`` by location (either may come first in the pairing), or None when either
    has no geometry or their types pair in no known way."""
    ga, gb = geometry_column(a), geometry_column(b)
    if ga is None or gb is None or ga.spatial is None or gb.spatial is None:
        return None
    kinds = (base_type(ga.spatial.geometry_type), base_type(gb.spatial.geometry_type))
    for (x, gx), (y, gy), pair in (((a, ga), (b, gb), kinds), ((b, gb), (a, ga), kinds[::-1])):
        found = _RELATIONS.get(pair)
        if found is not None:
            verb, predicate = found
            return Pairing(x, gx, y, gy, verb, predicate)
    if "POINT" in kinds and "POLYGON" not in kinds:
        return Pairing(a, ga, b, gb, "near", "distance")
    return None
