"""How one spatial SQL flavour writes the few expressions kgsql writes itself: a relation between two
geometries and a measure in metres.

The forms differ by engine (SpatiaLite's ``GLength(g, 1)`` is PostGIS's
``ST_Length(g::geography)``), so each engine class with geometry carries one
:class:`SpatialForms` (``Engine.spatial_forms``, :mod:`kgsql.db.engine`) and the
code that writes them (the measure notes of :mod:`kgsql.schema.geometry_units`,
the location pairings of :mod:`kgsql.schema.spatial_pairs`) takes it as given:
a new spatial engine brings its forms in its own module.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Measured", "SpatialForms"]


@dataclass(frozen=True)
class Measured:
    """One measure's forms: in metres on longitude/latitude data, and on projected data (in its units)."""

    lon_lat: str
    projected: str

    def form(self, *, lon_lat: bool) -> str:
        return self.lon_lat if lon_lat else self.projected


@dataclass(frozen=True)
class SpatialForms:
    """A flavour's forms. ``{g}``: one geometry; ``{a}``, ``{b}``: two (the first relates to the second)."""

    within: str  # true when {a} lies inside {b}
    intersects: str  # true when {a} and {b} meet
    length: Measured  # of a line {g}
    area: Measured  # of a polygon {g}
    distance: Measured  # between {a} and {b}
    bounds: tuple[str, str, str, str]  # the extremes of {g}'s bounding box: min x, max x, min y, max y
