"""SQLite and SpatiaLite: the engine kgsql opens in-process.

The class only describes SQLite; the work is done where kgsql controls the
connection itself: :mod:`kgsql.db.connect` opens a file (loading SpatiaLite
when it is spatial), :mod:`kgsql.db.guard` runs a query under the
authorizer's allow-list and the budgets, :mod:`kgsql.ingest.reader` reads the
schema. A path that no other engine's suffix claims is SQLite's.
"""
from __future__ import annotations

from pathlib import Path
from typing import Final

from kgsql.db.engine import Engine, register_engine
from kgsql.db.engines.sqlite_functions import FUNCTION_EQUIVALENTS, FUNCTION_SIGNATURES
from kgsql.db.sql_errors import SQLITE_ERROR_PATTERNS
from kgsql.schema.spatial_forms import Measured, SpatialForms

__all__ = ["SPATIALITE_FORMS", "SQLITE_HEADER", "SQLiteEngine"]

#: The first 16 bytes of every SQLite file.
SQLITE_HEADER: Final = b"SQLite format 3\x00"

#: SpatiaLite's forms: a last argument 1 measures on the ellipsoid, in metres.
SPATIALITE_FORMS: Final = SpatialForms(
    within="Within({a}, {b}) = 1", intersects="Intersects({a}, {b}) = 1",
    length=Measured("GLength({g}, 1)", "GLength({g})"), area=Measured("Area({g}, 1)", "Area({g})"),
    distance=Measured("Distance({a}, {b}, 1)", "Distance({a}, {b})"),
    bounds=("MbrMinX({g})", "MbrMaxX({g})", "MbrMinY({g})", "MbrMaxY({g})"))


@register_engine
class SQLiteEngine(Engine):
    """SQLite files (SpatiaLite when they carry geometry columns)."""

    name = "sqlite"
    label = "SQLite"
    spatial_name = "spatialite"
    spatial_label = "SpatiaLite"
    function_kb = "spatialite"
    spatial_forms = SPATIALITE_FORMS
    schemes = ("sqlite", "spatialite")
    suffixes = (".sqlite", ".sqlite3", ".db")
    default_for_paths = True
    fence_names = frozenset({"sqlite", "sqlite3", "spatialite", "spatial_sql"})
    example = "a SQLite file path"
    in_process = True
    quote_char = "`"  # SQLite accepts backticks, and BIRD's own SQL uses them
    error_patterns = SQLITE_ERROR_PATTERNS
    function_equivalents = FUNCTION_EQUIVALENTS
    function_signatures = FUNCTION_SIGNATURES
    nulls_first_when_ascending = True
    integer_division = True

    @classmethod
    def matches_header(cls, header: bytes) -> bool:
        return header == SQLITE_HEADER

    @classmethod
    def display_for(cls, path: Path) -> str:
        return str(path)  # a SQLite database is shown and stored as its plain path

    @classmethod
    def rename_hint(cls, path: Path) -> str:
        return f"rename it to {path.stem}.sqlite"
