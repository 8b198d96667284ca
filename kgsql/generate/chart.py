"""A chart for an answer's rows when their shape fits one: a Vega-Lite v5 spec, data inlined.

Reading a column of numbers against a column of names is faster as bars than
as a table, and a spatial answer is only checkable on a map. The shape decides,
first match wins: a geometry column -> its shapes and points on a plain map
(no tiles: the page and the notebook work offline); longitude and latitude
columns -> points on that map; a date/time (or year) and a number -> a line; a
category and a number -> bars; two numbers -> a scatter. Anything else (one
value, text only, too many categories for bars) gets no chart. The spec is a
plain dict: the page draws it with vega-embed, the notebook with Altair.
"""
from __future__ import annotations

import re
from typing import Any, Sequence

from kgsql.generate.chart_data import field, tooltip, values
from kgsql.generate.chart_map import map_of_geometries, map_of_points
from kgsql.generate.geojson import to_geojson

__all__ = ["chart_spec", "column_kinds", "SCHEMA", "MAX_CHART_ROWS"]

SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"
MAX_CHART_ROWS = 500  # rows a chart carries at most (the rest are left out; usermeta says so)
MAX_BARS = 50  # more categories than this read better as the table
WIDTH, HEIGHT = 360, 240
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?")
_LON = re.compile(r"(?:.*[_ ])?(?:lon|lng|long|longitude)|(?:st_)?x\(.*\)", re.I)
_LAT = re.compile(r"(?:.*[_ ])?(?:lat|latitude)|(?:st_)?y\(.*\)", re.I)
_YEAR = re.compile(r"(?:.*[_ ])?year", re.I)
_TEMPORAL_TYPE = re.compile(r"date|time", re.I)


def column_kinds(columns: Sequence[str], rows: Sequence[Sequence[Any]],
                 types: Sequence[str | None] | None = None) -> list[str]:
    """Each column's kind from its values (and declared type where known): number, lon, lat, year,
    temporal, geometry, category, other or empty (no value but NULL)."""
    return [_kind(name, [row[i] for row in rows if row[i] is not None], (types or [None] * len(columns))[i])
            for i, name in enumerate(columns)]


def _kind(name: str, values: list[Any], declared: str | None) -> str:
    if not values:
        return "empty"
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        if _LON.fullmatch(name) and all(-180 <= v <= 180 for v in values):
            return "lon"
        if _LAT.fullmatch(name) and all(-90 <= v <= 90 for v in values):
            return "lat"
        if _YEAR.fullmatch(name) and all(float(v).is_integer() and 1000 <= v <= 2999 for v in values):
            return "year"
        return "number"
    if all(isinstance(v, str) for v in values):
        if all(_DATE.fullmatch(v.strip()) for v in values) or (declared and _TEMPORAL_TYPE.search(declared)
                                                                 and all(_DATE.match(v) for v in values)):
            return "temporal"
        if all(to_geojson(v) is not None for v in values):
            return "geometry"
        return "category"
    if all(isinstance(v, (bytes, bytearray, memoryview)) for v in values):
        return "geometry" if all(to_geojson(v) is not None for v in values) else "other"
    return "category" if all(isinstance(v, (str, bool)) for v in values) else "other"


def chart_spec(columns: Sequence[str], rows: Sequence[Sequence[Any]], types: Sequence[str | None] | None = None,
               *, truncated: bool = False) -> dict[str, Any] | None:
    """The Vega-Lite spec that fits these rows (see the module docstring), or None."""
    if not columns or not rows:
        return None
    shown = list(rows[:MAX_CHART_ROWS])
    kinds = column_kinds(columns, shown, types)
    first = {kind: kinds.index(kind) for kind in reversed(kinds)}
    numbers = [i for i, k in enumerate(kinds) if k in ("number", "lon", "lat", "year")]
    labels = [i for i, k in enumerate(kinds) if k in ("category", "temporal", "number", "year")]
    spec: dict[str, Any] | None = None
    if "geometry" in first:
        spec = map_of_geometries(columns, shown, first["geometry"], [i for i in labels if i != first["geometry"]])
    elif "lon" in first and "lat" in first:
        spec = map_of_points(columns, shown, first["lon"], first["lat"], labels)
    elif len(shown) >= 2:
        spec = _plot(columns, shown, kinds, first, numbers)
    if spec is None:
        return None
    kind = spec.pop("kind")
    body = {"$schema": SCHEMA, "width": WIDTH, "height": spec.pop("height", HEIGHT), **spec}
    body["usermeta"] = {"kgsql": {"chart": kind, "rows": min(len(rows), MAX_CHART_ROWS),
                                  "truncated": truncated or len(rows) > MAX_CHART_ROWS}}
    return body


def _plot(columns: Sequence[str], rows: list[Sequence[Any]], kinds: list[str], first: dict[str, int],
          numbers: list[int]) -> dict[str, Any] | None:
    """A line, bars or a scatter (the non-map charts), or None."""
    when = first.get("temporal", first.get("year"))
    if when is not None:
        value = next((i for i in numbers if i != when), None)
        if value is not None:
            return _line(columns, rows, when, value, kinds[when], first.get("category"))
    if "category" in first and numbers:
        return _bars(columns, rows, first["category"], numbers[0])
    if len(numbers) >= 2:
        return _scatter(columns, rows, numbers[0], numbers[1], first.get("category"))
    return None


def _line(columns: Sequence[str], rows: list[Sequence[Any]], when: int, value: int, kind: str,
          series: int | None) -> dict[str, Any] | None:
    keep = [when, value] + ([series] if series is not None else [])
    data = [v for v in values(rows, keep) if v[f"c{when}"] is not None]
    encoding: dict[str, Any] = {
        "x": field(columns, when, "temporal" if kind == "temporal" else "ordinal"),
        "y": field(columns, value, "quantitative"),
        "tooltip": tooltip(columns, keep, {value: "quantitative"})}
    if series is not None:
        if len({d[f"c{series}"] for d in data}) > 10:
            return None  # too many lines to tell apart
        encoding["color"] = field(columns, series, "nominal")
    return {"kind": "line", "data": {"values": data}, "mark": {"type": "line", "point": True},
            "encoding": encoding}


def _bars(columns: Sequence[str], rows: list[Sequence[Any]], label: int, value: int) -> dict[str, Any] | None:
    data = values(rows, [label, value])
    if len({d[f"c{label}"] for d in data}) > MAX_BARS:
        return None
    return {"kind": "bar", "height": {"step": 18}, "data": {"values": data}, "mark": "bar",
            "encoding": {"y": field(columns, label, "nominal", sort="-x"),
                         "x": field(columns, value, "quantitative"),
                         "tooltip": tooltip(columns, [label, value], {value: "quantitative"})}}


def _scatter(columns: Sequence[str], rows: list[Sequence[Any]], x: int, y: int,
             label: int | None) -> dict[str, Any]:
    keep = [x, y] + ([label] if label is not None else [])
    return {"kind": "scatter", "data": {"values": values(rows, keep)}, "mark": {"type": "point", "filled": True},
            "encoding": {"x": field(columns, x, "quantitative", scale={"zero": False}),
                         "y": field(columns, y, "quantitative", scale={"zero": False}),
                         "tooltip": tooltip(columns, keep, {x: "quantitative", y: "quantitative"})}}
