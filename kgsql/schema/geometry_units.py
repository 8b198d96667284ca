"""What a geometry column's numbers are in, and how to measure it in metres: read from the graph's
spatial metadata (SRID, extent, geometry type), for any SpatiaLite or PostGIS database.

Small models measure lon/lat geometries in degrees (``GLength(Shape)``) when the
question wants metres; SSpa's hand-written profiles said "SRID 4326; pass 1 as
the last argument of Area, GLength or Distance to get metres" for two benchmark
databases only (issue 29). The SRID (or, without one, an extent inside
+-180/+-90) says whether the coordinates are degrees; the geometry type says
which measure applies. ``measure_note`` writes it next to the column, in the
forms of the database's engine (``Engine.spatial_forms``).
"""
from __future__ import annotations

from typing import Final

from kgsql.schema.model import Column, SpatialInfo
from kgsql.schema.spatial_forms import SpatialForms

__all__ = ["GEOGRAPHIC_SRIDS", "base_type", "is_lon_lat", "measure", "measure_note"]

#: Longitude/latitude reference systems: WGS 84, NAD83, ETRS89, GDA94, CGCS2000.
GEOGRAPHIC_SRIDS: Final = frozenset({4326, 4269, 4258, 4283, 4490})

#: geometry type -> (the measure: a field of SpatialForms, its metre unit).
_MEASURES: Final = {
    "LINESTRING": ("length", "metres"),
    "POLYGON": ("area", "square metres"),
    "POINT": ("distance", "metres"),
}


def is_lon_lat(info: SpatialInfo) -> bool | None:
    """True: longitude/latitude degrees; False: projected (metres, as a rule); None: unknown."""
    if info.srid is not None and info.srid > 0:
        return info.srid in GEOGRAPHIC_SRIDS
    if info.extent and len(info.extent) == 4:
        min_x, min_y, max_x, max_y = info.extent
        return -180 <= min_x <= max_x <= 180 and -90 <= min_y <= max_y <= 90
    return None


def base_type(geometry_type: str) -> str:
    """POINT, LINESTRING or POLYGON for a (MULTI)(Z/M) geometry type name; other names upper-cased."""
    kind = geometry_type.upper().removeprefix("MULTI").split()[0] if geometry_type else ""
    return kind.rstrip("ZM") if kind not in _MEASURES else kind


def measure(column: Column, ref: str, forms: SpatialForms) -> tuple[str, str] | None:
    """(what is measured: ``length`` or ``area``, the expression measuring ``ref`` in metres where the units are
    known, written in ``forms``) for a line or polygon column; None for points, other columns and unknown units."""
    info = column.spatial
    found = _MEASURES.get(base_type(info.geometry_type)) if info is not None else None
    lon_lat = is_lon_lat(info) if info is not None else None
    if found is None or found[0] == "distance" or lon_lat is None:
        return None
    what = found[0]
    return what, getattr(forms, what).form(lon_lat=lon_lat).format(g=ref)


def measure_note(column: Column, forms: SpatialForms | None) -> str:
    """``lon/lat degrees (SRID 4326); length in metres: GLength(Shape, 1)`` for a geometry column (only the
    units when the engine has no spatial ``forms``), or "" when the column is not spatial or its units are
    unknown."""
    info = column.spatial
    if info is None:
        return ""
    lon_lat = is_lon_lat(info)
    if lon_lat is None:
        return ""
    srid = f"SRID {info.srid}" if info.srid else "no SRID"
    found = _MEASURES.get(base_type(info.geometry_type))
    units = (f"lon/lat degrees ({srid})" if lon_lat
             else f"projected coordinates ({srid}), in the projection's units (metres, as a rule)")
    if found is None or forms is None:
        return units
    what, unit = found
    form = getattr(forms, what).form(lon_lat=lon_lat).format(g=column.name, a=column.name, b="other")
    return f"{units}; {what} in {unit}: {form}" if lon_lat else f"{units}; {what}: {form}"
