"""The PostGIS function KB: its file, against a real PostGIS server, and in the prompt's spatial notes.

The server is a throwaway PostgreSQL + PostGIS cluster (``kgsql.lab.pg_cluster``) started once for this
module; the tests that need it skip with one line only where the server binaries or PostGIS are missing.
"""
from __future__ import annotations

import math
import re
from typing import Any, Iterator

import pytest

from kgsql.schema.model import Column, DatabaseSchema, SpatialInfo, Table
from kgsql.sql.spatialite import TYPE_BOOSTS, Function, SpatialKnowledge, spatial_notes

PREAMBLE_START = "You are an expert in PostgreSQL with the PostGIS extension and highly skilled in writing SQL queries."
GEOMETRY_TYPES = {"POINT", "MULTIPOINT", "LINESTRING", "MULTILINESTRING", "POLYGON", "MULTIPOLYGON"}
FUNCTIONS = SpatialKnowledge.load("postgis").functions


@pytest.fixture(scope="module")
def kb() -> SpatialKnowledge:
    return SpatialKnowledge.load("postgis")


# ---------------------------------------------------------------------------- the KB file


def test_load(kb: SpatialKnowledge) -> None:
    assert kb.dialect == "postgis"
    assert kb.preamble.startswith(PREAMBLE_START)
    assert "::geography" in kb.preamble and "degrees" in kb.preamble
    assert 30 <= len(kb.functions) <= 45
    names = [f.name.lower() for f in kb.functions]
    assert len(names) == len(set(names))
    assert SpatialKnowledge.load("postgis") is kb  # read once per process
    assert SpatialKnowledge.load("postgres") is kb and SpatialKnowledge.load("PostgreSQL") is kb
    assert SpatialKnowledge.load("spatialite") is not kb


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.name)
def test_entry_is_complete(function: Function) -> None:
    assert function.name.startswith("ST_")
    assert function.signature.startswith(function.name + "(")
    assert function.description.startswith(("The function", "The aggregate function"))
    assert function.returns and function.keywords
    assert set(a.lower() for a in function.native_aliases) <= set(a.lower() for a in function.aliases)


def test_aliases_name_one_function_each(kb: SpatialKnowledge) -> None:
    names = {f.name.lower() for f in kb.functions}
    seen: dict[str, str] = {}
    for f in kb.functions:
        for alias in f.aliases:
            assert alias.lower() not in names, f"{alias} is a KB function and an alias of {f.name}"
            assert seen.setdefault(alias.lower(), f.name) == f.name, f"{alias} is an alias of two functions"


def test_type_boosts_name_kb_functions(kb: SpatialKnowledge) -> None:
    assert set(kb.type_boosts) == GEOMETRY_TYPES
    names = {f.name for f in kb.functions}
    for geometry, boosted in kb.type_boosts.items():
        assert boosted and set(boosted) <= names, geometry
    assert kb.type_boosts != TYPE_BOOSTS  # its own names, not SpatiaLite's
    assert SpatialKnowledge.load("spatialite").type_boosts == TYPE_BOOSTS


def test_alias_notes_name_aliases(kb: SpatialKnowledge) -> None:
    aliases = {a for f in kb.functions for a in f.aliases}
    assert set(kb.alias_notes) <= aliases
    assert {"GeometryType", "ST_NumPoints", "Length"} <= set(kb.alias_notes)


def test_every_measurement_in_metres_goes_through_geography(kb: SpatialKnowledge) -> None:
    for name in ("ST_Length", "ST_Area", "ST_Perimeter", "ST_Distance", "ST_DWithin", "ST_Buffer"):
        f = kb.function(name)
        assert f is not None and "::geography" in f.signature and "::geography" in f.line
        assert re.search(r"\bmet(er|re)s\b", f.line), f.line


@pytest.mark.parametrize(
    ("written", "meant"),
    [("GLength", "ST_Length"), ("Length", "ST_Length"), ("STLength", "ST_Length"), ("Area", "ST_Area"),
     ("STArea", "ST_Area"), ("Distance", "ST_Distance"), ("PtDistWithin", "ST_DWithin"), ("MakePoint", "ST_Point"),
     ("X", "ST_X"), ("Y", "ST_Y"), ("Within", "ST_Within"), ("GUnion", "ST_Union"), ("NumPoints", "ST_NPoints"),
     ("st_length", "ST_Length"), ("st_touches", "ST_Touches"), ("StartPoint", "ST_StartPoint")],
)
def test_other_systems_names_map_to_postgis(kb: SpatialKnowledge, written: str, meant: str) -> None:
    f = kb.suggest(written)
    assert f is not None and f.name == meant


# ---------------------------------------------------------------------------- against PostGIS


@pytest.fixture(scope="session")
def pg(pg_cluster: Any) -> Iterator[Any]:
    """An autocommit psycopg connection to a PostGIS database with two regions, a river and two towns
    (on the session's server, tests/conftest.py)."""
    import psycopg

    if not pg_cluster.postgis:
        pytest.skip(f"PostGIS is not installed for PostgreSQL {pg_cluster.bindir.parent.name}")
    url = pg_cluster.create_database("kb_functions", postgis=True)
    pg_cluster.sql(
        "CREATE TABLE regions (id int PRIMARY KEY, shape geometry(Polygon, 4326))",
        "CREATE TABLE rivers (id int PRIMARY KEY, shape geometry(LineString, 4326))",
        "CREATE TABLE towns (id int PRIMARY KEY, location geometry(Point, 4326))",
        "INSERT INTO regions VALUES (1, ST_GeomFromText('POLYGON((10 50, 11 50, 11 51, 10 51, 10 50))', 4326)), "
        "(2, ST_GeomFromText('POLYGON((11 50, 12 50, 12 51, 11 51, 11 50))', 4326))",
        "INSERT INTO rivers VALUES (1, ST_GeomFromText('LINESTRING(9.5 50.5, 10.5 50.6, 12.5 50.4)', 4326))",
        "INSERT INTO towns VALUES (1, ST_GeomFromText('POINT(10.5 50.5)', 4326)), "
        "(2, ST_GeomFromText('POINT(11.5 50.5)', 4326))",
        database="kb_functions")
    with psycopg.connect(url, autocommit=True) as conn:
        yield conn


def one(conn: Any, sql: str, *params: Any) -> Any:
    return conn.execute(sql, params or None).fetchone()[0]


G1 = "(SELECT shape FROM regions WHERE id = 1)"
G2 = "(SELECT shape FROM regions WHERE id = 2)"
LINE = "(SELECT shape FROM rivers WHERE id = 1)"
P1 = "(SELECT location FROM towns WHERE id = 1)"
P2 = "(SELECT location FROM towns WHERE id = 2)"
#: parameter name in a KB signature -> an SQL expression over the sample data
ARGUMENTS = {"g": G1, "g1": G1, "g2": G2, "c": LINE, "l": LINE, "p": P1, "p1": P1, "p2": P2, "x": "10.5",
             "y": "50.5", "srid": "4326", "radius": "50000", "wkt": "'POINT(10.5 50.5)'"}


def sample_call(function: Function, name: str | None = None) -> str:
    """The first call of the KB signature with each parameter replaced by sample data (casts kept)."""
    params = re.match(r"\w+\(([^)]*)\)", function.signature)
    assert params, function.signature
    args = []
    for param in (p.strip() for p in params.group(1).split(",")):
        m = re.fullmatch(r"(\w+)(?:\s+\w+)?(::geography)?", param)
        assert m and m.group(1) in ARGUMENTS, f"{function.name}: cannot fill parameter {param!r}"
        args.append(ARGUMENTS[m.group(1)] + (m.group(2) or ""))
    return f"{name or function.name}({', '.join(args)})"


def test_every_function_exists(pg: Any, kb: SpatialKnowledge) -> None:
    missing = [f.name for f in kb.functions
               if one(pg, "SELECT count(*) FROM pg_proc WHERE lower(proname) = lower(%s)", f.name) == 0]
    assert missing == []


def test_every_native_alias_exists(pg: Any, kb: SpatialKnowledge) -> None:
    natives = [a for f in kb.functions for a in f.native_aliases]
    assert natives
    missing = [a for a in natives if one(pg, "SELECT count(*) FROM pg_proc WHERE lower(proname) = lower(%s)", a) == 0]
    assert missing == []


POSTGIS_OWNED = ("SELECT count(*) FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass "
                 "AND d.objid = p.oid AND d.deptype = 'e' JOIN pg_extension e ON e.oid = d.refobjid "
                 "AND e.extname = 'postgis' WHERE lower(p.proname) = lower(%s)")


def test_native_aliases_are_exactly_the_aliases_postgis_defines(pg: Any, kb: SpatialKnowledge) -> None:
    documented = {a for f in kb.functions for a in f.native_aliases}
    defined = {a for f in kb.functions for a in f.aliases if one(pg, POSTGIS_OWNED, a) > 0}
    assert documented == defined


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.name)
def test_signature_is_callable(pg: Any, function: Function) -> None:
    """The call the prompt recommends runs on the sample data and gives a value (and so does the aggregate form)."""
    assert one(pg, f"SELECT {sample_call(function)}") is not None
    if "as an aggregate" in function.signature:
        assert one(pg, f"SELECT {function.name}(shape) FROM regions") is not None


@pytest.mark.parametrize(("function", "alias"), [(f, a) for f in FUNCTIONS for a in f.native_aliases],
                         ids=lambda v: v.name if isinstance(v, Function) else v)
def test_native_alias_behaves_like_the_function_or_is_documented(pg: Any, kb: SpatialKnowledge,
                                                                  function: Function, alias: str) -> None:
    expected = one(pg, f"SELECT ({sample_call(function)})::text")
    got = one(pg, f"SELECT ({sample_call(function, alias)})::text")
    if alias in kb.alias_notes:
        assert got != expected, f"{alias} is documented as different but behaves like {function.name}"
    else:
        assert got == expected


def test_other_aliases_fail_or_are_documented(pg: Any, kb: SpatialKnowledge) -> None:
    """A SpatiaLite/SQL Server name PostGIS lacks raises an error (which the correction step maps back),
    even where PostgreSQL has a function of that name (area, overlaps); the one that answers instead
    (length() of a geography: its size in bytes) has an alias note."""
    import psycopg

    answered = set()
    for f in kb.functions:
        for alias in set(f.aliases) - set(f.native_aliases):
            try:
                one(pg, f"SELECT {sample_call(f, alias)}")
            except psycopg.Error:
                continue
            answered.add(alias)
    native = {a for f in kb.functions for a in f.native_aliases}
    assert answered == set(kb.alias_notes) - native == {"Length"}
    assert one(pg, f"SELECT length({LINE_1_DEGREE}::geography)") == 45  # bytes, not metres


LINE_1_DEGREE = "ST_GeomFromText('LINESTRING(0 0, 1 0)', 4326)"
SQUARE = "ST_MakeEnvelope(0, 0, 0.01, 0.01, 4326)"


def test_length_on_geography_is_metres_on_geometry_degrees(pg: Any) -> None:
    assert one(pg, f"SELECT ST_Length({LINE_1_DEGREE}::geography)") == pytest.approx(111_319.5, rel=1e-3)
    assert one(pg, f"SELECT ST_Length({LINE_1_DEGREE})") == pytest.approx(1.0)  # degrees: what the preamble warns of


def test_area_and_perimeter_on_geography_are_square_metres_and_metres(pg: Any) -> None:
    # 0.01 degree of longitude and of latitude at the equator: about 1113.2 m by 1105.7 m on the WGS84 spheroid
    assert one(pg, f"SELECT ST_Area({SQUARE}::geography)") == pytest.approx(1113.2 * 1105.7, rel=2e-3)
    assert one(pg, f"SELECT ST_Area({SQUARE})") == pytest.approx(1e-4)  # square degrees
    assert one(pg, f"SELECT ST_Perimeter({SQUARE}::geography)") == pytest.approx(2 * (1113.2 + 1105.7), rel=2e-3)


def test_distance_and_dwithin_on_geography_are_metres(pg: Any) -> None:
    a, b = "ST_Point(0, 0, 4326)", "ST_Point(0.001, 0, 4326)"  # about 111 m apart
    assert one(pg, f"SELECT ST_Distance({a}::geography, {b}::geography)") == pytest.approx(111.3, rel=1e-2)
    assert one(pg, f"SELECT ST_DWithin({a}::geography, {b}::geography, 200)") is True
    assert one(pg, f"SELECT ST_DWithin({a}::geography, {b}::geography, 100)") is False
    far = "ST_Point(1, 0, 4326)"  # 111 km away, yet "within 200" on geometry: 200 degrees
    assert one(pg, f"SELECT ST_DWithin({a}, {far}, 200)") is True
    assert one(pg, f"SELECT ST_DWithin({a}::geography, {far}::geography, 200)") is False


def test_buffer_on_geography_takes_metres(pg: Any) -> None:
    area = one(pg, "SELECT ST_Area(ST_Buffer(ST_Point(0, 0, 4326)::geography, 1000))")
    assert area == pytest.approx(math.pi * 1000 ** 2, rel=0.02)


def test_points_azimuth_and_geometry_types(pg: Any) -> None:
    assert one(pg, "SELECT ST_SRID(ST_Point(10.5, 50.5, 4326))") == 4326
    assert one(pg, "SELECT ST_SRID(ST_MakePoint(10.5, 50.5, 4326))") == 0  # the third argument is Z
    assert one(pg, "SELECT ST_SRID(ST_SetSRID(ST_MakePoint(10.5, 50.5), 4326))") == 4326
    assert one(pg, "SELECT degrees(ST_Azimuth(ST_Point(0, 0), ST_Point(1, 0)))") == pytest.approx(90.0)
    assert one(pg, "SELECT degrees(ST_Azimuth(ST_Point(0, 0), ST_Point(0, 1)))") == pytest.approx(0.0)
    assert one(pg, f"SELECT ST_GeometryType({G1})") == "ST_Polygon"
    assert one(pg, f"SELECT GeometryType({G1})") == "POLYGON"


# ---------------------------------------------------------------------------- in the prompt


def _schema(table: str, geometry: str, *more: Column) -> DatabaseSchema:
    cols = [Column("id", "integer", is_primary_key=True), Column("name", "text"), *more,
            Column("geom", f"geometry({geometry.title()},4326)", spatial=SpatialInfo(geometry, 4326))]
    return DatabaseSchema("gis", [Table(table, cols)], dialect="postgres", is_spatial=True)


ROADS = _schema("roads", "LINESTRING")
PARKS = _schema("parks", "POLYGON")


def _lines(notes: str) -> dict[str, str]:
    return {m.group(1): line for line in notes.split("\n") if (m := re.match(r"The (?:aggregate )?function (\w+)", line))}


def test_spatial_notes_length_question_names_st_length_with_geography() -> None:
    preamble, notes = spatial_notes("How long is the longest road in km?", ROADS, dialect="postgis")
    assert preamble.startswith(PREAMBLE_START)
    lines = _lines(notes)
    assert len(lines) == 6
    assert next(iter(lines)) == "ST_Length"
    assert "ST_Length(c::geography)" in lines["ST_Length"] and "meters" in lines["ST_Length"]
    assert all(name.startswith("ST_") for name in lines)


def test_spatial_notes_area_question_picks_st_area() -> None:
    _, notes = spatial_notes("Which park has the largest area in square kilometres?", PARKS, dialect="postgis")
    lines = _lines(notes)
    assert next(iter(lines)) == "ST_Area"
    assert "ST_Area(g::geography)" in lines["ST_Area"]


def test_spatial_notes_postgres_synonym_and_fixed_list_in_spatialite_names() -> None:
    question = "How long is the longest road in km?"
    assert spatial_notes(question, ROADS, dialect="postgres") == spatial_notes(question, ROADS, dialect="postgis")
    _, notes = spatial_notes(question, ROADS, dialect="postgis", fixed=("GLength", "Area", "PtDistWithin"))
    assert list(_lines(notes)) == ["ST_Length", "ST_Area", "ST_DWithin"]


def test_spatial_notes_default_stays_spatialite() -> None:
    preamble, notes = spatial_notes("How long is the longest road in km?", ROADS)
    assert preamble == "You are an expert in the SpatiaLite spatial database and highly skilled in writing SQL queries."
    assert next(iter(_lines(notes))) == "GLength"
    assert spatial_notes("How long?", DatabaseSchema("plain", [Table("t", [Column("id", "integer")])]),
                         dialect="postgis") == ("", "")


@pytest.mark.parametrize(
    ("geometry", "boosted"),
    [("POINT", {"ST_Distance", "ST_DWithin", "ST_Within", "ST_X", "ST_Y"}),
     ("MULTILINESTRING", {"ST_Length", "ST_Intersects", "ST_Crosses"}),
     ("MULTIPOLYGON", {"ST_Area", "ST_Within", "ST_Contains", "ST_Touches", "ST_Centroid", "ST_Intersection"})],
)
def test_geometry_types_boost_postgis_names(kb: SpatialKnowledge, geometry: str, boosted: set[str]) -> None:
    """With no telling words in the question, the schema's geometry types decide, through the YAML's type_boosts."""
    chosen = {f.name for f in kb.select("Tell me about them.", _schema("t", geometry), k=len(boosted), encoder=None)}
    assert chosen == boosted
