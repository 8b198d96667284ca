"""How two tables with geometry relate by location, read from their geometry types, for any spatial database.

Spatial tables rarely share a key: an airport lies in a city because its point is
inside the city's polygon, not because it stores the city's id. Without saying so,
the 1.5B joins such tables on look-alike text columns (``airports.name =
cities.name``) or on nothing; on the spatial set this was the most common wrong
answer (issue 29's failure table). The geometry types decide the predicate
(``kgsql.schema.spatial_pairs``); this module writes it as the hint's sentence.
Nothing here is written for one database; a profile may still override the
schema, and these lines then follow from what it says.
"""
from __future__ import annotations

from dataclasses import dataclass

from kgsql.errors import UnknownNameError
from kgsql.generate.render import column_ref, table_ref
from kgsql.schema.model import Column, DatabaseSchema, Table
from kgsql.schema.spatial_pairs import pairing
from kgsql.sql.dialects import spatial_forms

__all__ = ["SpatialRelation", "spatial_relation", "relations_between"]


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


def _ref(table: Table, column: Column) -> str:
    return f"{table_ref(table.name)}.{column_ref(column.name)}"


def spatial_relation(a: Table, b: Table, dialect: str = "sqlite") -> SpatialRelation | None:
    """How ``a`` relates to ``b`` by location, or None when either has no geometry of a known type or the
    dialect's engine has no spatial forms."""
    p, forms = pairing(a, b), spatial_forms(dialect)
    if p is None or forms is None:
        return None
    condition = p.condition(_ref(p.first, p.first_geometry), _ref(p.second, p.second_geometry), forms)
    return SpatialRelation(p.first.name, p.second.name, p.verb, condition, measured=p.measured)


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
