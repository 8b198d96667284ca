"""What a geometry column's numbers are in, and how to measure it in metres: read from the graph's
spatial metadata (SRID, extent, geometry type), for any SpatiaLite or PostGIS database.

Small models measure lon/lat geometries in degrees (``GLength(Shape)``) when the
question wants metres; SSpa's hand-written profiles said "SRID 4326; pass 1 as
the last argument of Area, GLength or Distance to get metres" for two benchmark
databases only (issue 29). The SRID (or, without one, an extent inside
+-180/+-90) says whether the coordinates are degrees; the geometry type says
which measure applies. ``measure_note`` writes it next to the column, in the
database's own dialect.
"""
from __future__ import annotations

from typing import Final

from kgsql.schema.model import Column, SpatialInfo

__all__ = ["GEOGRAPHIC_SRIDS", "base_type", "is_lon_lat", "measure", "measure_form", "measure_note"]

#: Longitude/latitude reference systems: WGS 84, NAD83, ETRS89, GDA94, CGCS2000.
GEOGRAPHIC_SRIDS: Final = frozenset({4326, 4269, 4258, 4283, 4490})

#: geometry type -> (the measure, its metre unit, on lon/lat: SpatiaLite, PostGIS; projected: SpatiaLite,
#: PostGIS); ``{g}``: the column.
_MEASURES: Final = {
    "LINESTRING": ("length", "metres", "GLength({g}, 1)", "ST_Length({g}::geography)", "GLength({g})",
                   "ST_Length({g})"),
    "POLYGON": ("area", "square metres", "Area({g}, 1)", "ST_Area({g}::geography)", "Area({g})", "ST_Area({g})"),
    "POINT": ("distance", "metres", "Distance({g}, other, 1)", "ST_Distance({g}::geography, other::geography)",
              "Distance({g}, other)", "ST_Distance({g}, other)"),
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


def measure_form(forms: tuple[str, ...] | list[str], *, lon_lat: bool, postgis: bool) -> str:
    """The one of four forms (SpatiaLite lon/lat, PostGIS lon/lat, SpatiaLite projected, PostGIS projected)
    that measures in metres on this geometry and engine."""
    return forms[(0 if lon_lat else 2) + (1 if postgis else 0)]


def measure(column: Column, ref: str, dialect: str = "sqlite") -> tuple[str, str] | None:
    """(what is measured: ``length`` or ``area``, the expression measuring ``ref`` in metres where the units are
    known) for a line or polygon column; None for points, other columns and unknown units."""
    info = column.spatial
    found = _MEASURES.get(base_type(info.geometry_type)) if info is not None else None
    lon_lat = is_lon_lat(info) if info is not None else None
    if found is None or found[0] == "distance" or lon_lat is None:
        return None
    what, _unit, *forms = found
    return what, measure_form(forms, lon_lat=lon_lat, postgis=dialect == "postgres").format(g=ref)


def measure_note(column: Column, dialect: str = "sqlite") -> str:
    """``lon/lat degrees (SRID 4326); length in metres: GLength(Shape, 1)`` for a geometry column, or
    "" when the column is not spatial or its units are unknown."""
    info = column.spatial
    if info is None:
        return ""
    lon_lat = is_lon_lat(info)
    if lon_lat is None:
        return ""
    srid = f"SRID {info.srid}" if info.srid else "no SRID"
    measure = _MEASURES.get(base_type(info.geometry_type))
    postgis = dialect == "postgres"
    units = (f"lon/lat degrees ({srid})" if lon_lat
             else f"projected coordinates ({srid}), in the projection's units (metres, as a rule)")
    if measure is None:
        return units
    what, unit, *forms = measure
    form = measure_form(forms, lon_lat=lon_lat, postgis=postgis)
    return f"{units}; {what} in {unit}: {form.format(g=column.name)}" if lon_lat else \
        f"{units}; {what}: {form.format(g=column.name)}"
