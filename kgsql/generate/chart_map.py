"""A spatial answer on a plain map: its areas, lines and points as Vega-Lite layers (no tiles, works offline).

Areas and lines are GeoJSON features drawn with ``geoshape``; points are circles
at their longitude and latitude, labelled with the row's first text column so
a user can tell which row each is. Coordinates that look like degrees get a
Mercator projection; anything else (metres of a projected SRID) is drawn as
is (``identity``, y up), which keeps a city plan's shape.
"""
from __future__ import annotations

from typing import Any, Sequence

from kgsql.generate.chart_data import plain, tooltip
from kgsql.generate.geojson import coordinates_of, to_geojson

__all__ = ["map_of_geometries", "map_of_points"]

MAX_POSITIONS = 50_000  # vertices a map carries at most (a detailed coastline stops being added there)
MAP_HEIGHT = 300
AREA = {"type": "geoshape", "fill": "#dbe7f5", "stroke": "#4a6f99", "strokeWidth": 1}
LINE = {"type": "geoshape", "filled": False, "stroke": "#2b7bb9", "strokeWidth": 2}
POINT = {"type": "circle", "size": 60, "color": "#c0392b", "opacity": 0.9}


def map_of_geometries(columns: Sequence[str], rows: Sequence[Sequence[Any]], geometry: int,
                      labels: Sequence[int]) -> dict[str, Any] | None:
    """The rows' geometries (column ``geometry``) as areas, lines and points, with ``labels`` as tooltips."""
    areas: list[dict[str, Any]] = []
    lines: list[dict[str, Any]] = []
    points: list[dict[str, Any]] = []
    budget = MAX_POSITIONS
    for row in rows:
        shape = to_geojson(row[geometry])
        if shape is None:
            continue
        budget -= len(coordinates_of(shape))
        if budget < 0:
            break
        properties = {f"c{i}": plain(row[i]) for i in labels}
        for part in _parts(shape):
            if part["type"] in ("Point", "MultiPoint"):
                positions = [part["coordinates"]] if part["type"] == "Point" else part["coordinates"]
                points += [{"lon": p[0], "lat": p[1], **properties} for p in positions]
            else:
                feature = {"type": "Feature", "geometry": clockwise(part), "properties": properties}
                (areas if "Polygon" in part["type"] else lines).append(feature)
    if not (areas or lines or points):
        return None
    tips = tooltip(columns, labels, {})
    layers = [{"data": {"values": features}, "mark": mark, "encoding": {"tooltip": _under_properties(tips)}}
              for features, mark in ((areas, AREA), (lines, LINE)) if features]
    if points:
        layers += _point_layers(points, tips, _first_text(labels, rows))
    everything = [p for f in areas + lines for p in coordinates_of(f["geometry"])] + \
        [[p["lon"], p["lat"]] for p in points]
    return _map("map", layers, everything)


def map_of_points(columns: Sequence[str], rows: Sequence[Sequence[Any]], lon: int, lat: int,
                  labels: Sequence[int]) -> dict[str, Any] | None:
    """Rows with a longitude and a latitude column as points."""
    points = [{"lon": row[lon], "lat": row[lat], **{f"c{i}": plain(row[i]) for i in labels}} for row in rows
              if row[lon] is not None and row[lat] is not None]
    if not points:
        return None
    layers = _point_layers(points, tooltip(columns, labels, {}), _first_text(labels, rows))
    return _map("map", layers, [[p["lon"], p["lat"]] for p in points])


def clockwise(shape: dict[str, Any]) -> dict[str, Any]:
    """Polygons wound as d3 (Vega's projections) reads them: outer rings clockwise, holes counter-clockwise.
    GeoJSON's own rule is the opposite, and d3 draws such a ring as the whole globe but the area."""
    def wound(ring: list[list[float]], outer: bool) -> list[list[float]]:
        area = sum(a[0] * b[1] - b[0] * a[1] for a, b in zip(ring, ring[1:] + ring[:1]))
        return ring[::-1] if (area > 0) == outer else ring

    def polygon(rings: list[list[list[float]]]) -> list[list[list[float]]]:
        return [wound(ring, i == 0) for i, ring in enumerate(rings)]

    if shape["type"] == "Polygon":
        return {"type": "Polygon", "coordinates": polygon(shape["coordinates"])}
    if shape["type"] == "MultiPolygon":
        return {"type": "MultiPolygon", "coordinates": [polygon(p) for p in shape["coordinates"]]}
    return shape


def _parts(shape: dict[str, Any]) -> list[dict[str, Any]]:
    """A geometry, or a collection's members (each drawn by its own kind)."""
    if shape["type"] == "GeometryCollection":
        return [p for g in shape["geometries"] for p in _parts(g)]
    return [shape]


def _under_properties(tips: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A feature keeps its row's fields in ``properties``."""
    return [{**t, "field": f"properties.{t['field']}"} for t in tips]


def _first_text(labels: Sequence[int], rows: Sequence[Sequence[Any]]) -> int | None:
    """The first label column holding text (a name to write beside each point), if any."""
    return next((i for i in labels if any(isinstance(r[i], str) for r in rows)), None)


def _point_layers(points: list[dict[str, Any]], tips: list[dict[str, Any]],
                  label: int | None) -> list[dict[str, Any]]:
    """Circles at the points, and their names beside them while few enough to read."""
    position = {"longitude": {"field": "lon", "type": "quantitative"},
                "latitude": {"field": "lat", "type": "quantitative"}}
    layers = [{"data": {"values": points}, "mark": POINT, "encoding": {**position, "tooltip": tips}}]
    if label is not None and len(points) <= 60:  # names stay readable up to a few dozen points
        text = {"type": "text", "align": "left", "dx": 6, "fontSize": 11}
        layers.append({"data": {"values": points}, "mark": text,
                       "encoding": {**position, "text": {"field": f"c{label}", "type": "nominal"}}})
    return layers


def _map(kind: str, layers: list[dict[str, Any]], positions: list[list[float]]) -> dict[str, Any]:
    """The layers under one projection: Mercator for degrees, the plane as is otherwise."""
    degrees = all(-180 <= x <= 180 and -90 <= y <= 90 for x, y in positions)
    projection = {"type": "mercator"} if degrees else {"type": "identity", "reflectY": True}
    named = any(layer["mark"]["type"] == "text" for layer in layers)
    padding = {"left": 5, "top": 5, "bottom": 5, "right": 75 if named else 5}  # room for the eastern names
    return {"kind": kind, "height": MAP_HEIGHT, "padding": padding, "projection": projection, "layer": layers}
