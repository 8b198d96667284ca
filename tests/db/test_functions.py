"""Issue 13 item 3: generated SQL may call only allow-listed functions, on a hardened connection."""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from guard_helpers import dir_state
from kgsql.db.connect import defensive_mode, harden, load_spatialite, open_database, sqlite3
from kgsql.db.guard import execute_query, make_authorizer, validate_query
from kgsql.errors import UnsafeSQLError

KB = Path(__file__).resolve().parents[2] / "kgsql/sql/knowledge/spatialite_functions.yaml"

#: Writers and state changers that passed the old deny-list (the issue's list first).
OFF_THE_LIST = [
    "SELECT CreateClonedTable('main', 'parks', 'parks2', 1)",
    "SELECT CreateTopology('topo', 4326, 0, 0)",
    "SELECT CreateNetwork('net', 0, 4326, 0)",
    "SELECT ST_Cutter(NULL, 'parks', 'geom', NULL, 'parks', 'geom', 'out')",
    "SELECT WMS_CreateTables()",
    "SELECT UpgradeGeometryTriggers(1)",
    "SELECT AutoGPKGStart()",
    "SELECT SE_RegisterVectorCoverage('c', 'parks', 'geom')",
    "SELECT RegisterDataLicense('x', 'http://x')",
    "SELECT CreateTemporarySpatialIndex('main', 'parks', 'geom')",
    "SELECT BufferOptions_SetQuadrantSegments(1000000)",
    "SELECT sequence_nextval('s')",
    "SELECT ST_SquareGrid(geom, 0.000001) FROM parks",
    "SELECT rtreecheck('x')",
]


@pytest.fixture(scope="module")
def spatial_conn(spatial_db: Path) -> Any:
    conn = open_database(spatial_db)
    yield conn
    conn.close()


@pytest.fixture(scope="module")
def writable_spatial(tmp_path_factory: pytest.TempPathFactory, spatial_db: Path) -> Any:
    """A writable SpatiaLite connection with only the authorizer in place (layer 3 alone)."""
    copy = tmp_path_factory.mktemp("writable") / "w.sqlite"
    shutil.copy(spatial_db, copy)
    conn = sqlite3.connect(str(copy), isolation_level=None)
    load_spatialite(conn)
    yield conn
    conn.close()


@pytest.mark.parametrize("sql", OFF_THE_LIST)
def test_functions_off_the_list_rejected_statically(sql: str) -> None:
    with pytest.raises(UnsafeSQLError, match="not allowed"):
        validate_query(sql)


@pytest.mark.parametrize("sql", OFF_THE_LIST)
def test_functions_off_the_list_rejected_end_to_end(spatial_db: Path, spatial_conn: Any, sql: str) -> None:
    before = dir_state(spatial_db.parent)
    quadrants = spatial_conn.execute("SELECT BufferOptions_GetQuadrantSegments()").fetchone()
    with pytest.raises(UnsafeSQLError):
        execute_query(spatial_conn, sql)
    assert spatial_conn.execute("SELECT BufferOptions_GetQuadrantSegments()").fetchone() == quadrants
    assert dir_state(spatial_db.parent) == before


@pytest.mark.parametrize("sql", [s.replace("SELECT ", "SELECT 1 + length(", 1) + ")" for s in OFF_THE_LIST[:12]])
def test_authorizer_alone_allows_only_the_allow_list(writable_spatial: Any, sql: str) -> None:
    """Layer 3 on a writable connection: the function call itself is refused."""
    denied: list[str] = []
    writable_spatial.set_authorizer(make_authorizer(denied))
    try:
        with pytest.raises(sqlite3.DatabaseError, match="not authorized"):
            writable_spatial.execute(sql).fetchall()
    finally:
        writable_spatial.set_authorizer(None)
    assert any("allow-list" in d for d in denied), denied


def test_authorizer_refuses_a_callers_own_function(plain_db: Path) -> None:
    conn = open_database(plain_db, read_only=False)
    conn.create_function("leak", 1, lambda x: x)
    try:
        with pytest.raises(UnsafeSQLError, match="leak"):
            execute_query(conn, "SELECT leak(name) FROM users")
    finally:
        conn.close()


def test_read_only_functions_still_run(spatial_conn: Any) -> None:
    result = execute_query(
        spatial_conn,
        "SELECT CreateUUID() IS NOT NULL, ST_Area(Buffer(geom, 0.01)) > 0, GLength(ExteriorRing(geom), 1) > 0, "
        "AsGeoJSON(Centroid(geom)) LIKE '{%', json_extract('{\"a\": 2}', '$.a'), '{\"a\": 3}' ->> '$.a', "
        "iif(1, 'y', 'n'), unixepoch('2020-01-01'), MbrMinX(geom) < MbrMaxX(geom), spatialite_version() IS NOT NULL "
        "FROM parks",
    )
    assert result.rows == [(1, 1, 1, 1, 2, 3, "y", 1577836800, 1, 1)]


def test_allow_list_classifies_every_installed_function() -> None:
    from kgsql.db.functions import ALLOWED_FUNCTIONS, KNOWN_DENIED_FUNCTIONS

    conn = sqlite3.connect(":memory:")
    try:
        load_spatialite(conn)
        installed = {row[0] for row in conn.execute("SELECT name FROM pragma_function_list")}
        version = conn.execute("SELECT spatialite_version()").fetchone()[0]
    finally:
        conn.close()
    if not version.startswith("5.0"):
        pytest.skip(f"the lists were made from SpatiaLite 5.0, this is {version}")
    unclassified = installed - ALLOWED_FUNCTIONS - KNOWN_DENIED_FUNCTIONS
    assert not unclassified, sorted(unclassified)
    assert not ALLOWED_FUNCTIONS & KNOWN_DENIED_FUNCTIONS


def test_knowledge_base_functions_are_allowed() -> None:
    from kgsql.db.functions import is_allowed_function

    kb = yaml.safe_load(KB.read_text(encoding="utf-8"))
    names = {f["name"] for f in kb["functions"]}
    names |= {alias for f in kb["functions"] for alias in f.get("native_aliases") or []}
    assert not [n for n in sorted(names) if not is_allowed_function(n)]


def test_read_only_connection_is_hardened(plain_db: Path) -> None:
    conn = open_database(plain_db)
    try:
        assert conn.execute("PRAGMA trusted_schema").fetchone()[0] == 0
        assert defensive_mode(conn) in (True, None)  # None: this sqlite3 cannot report it
    finally:
        conn.close()


def test_defensive_mode_stops_schema_writes(plain_db: Path) -> None:
    """What defensive mode adds, shown on a writable connection: writable_schema has no effect."""
    conn = open_database(plain_db, read_only=False)
    try:
        harden(conn)
        if defensive_mode(conn) is None:
            pytest.skip("this sqlite3 cannot switch defensive mode")
        conn.execute("PRAGMA writable_schema = ON")
        with pytest.raises(sqlite3.DatabaseError, match="may not be modified"):
            conn.execute("UPDATE sqlite_master SET sql = 'x' WHERE name = 't'")
    finally:
        conn.close()


def test_views_keep_working_with_untrusted_schema(tmp_path: Path, spatial_db: Path) -> None:
    """SpatiaLite marks no function innocuous: a view using ST_Area is retried with the allow-list only."""
    copy = tmp_path / "views.sqlite"
    shutil.copy(spatial_db, copy)
    conn = open_database(copy, read_only=False, spatial=True)
    conn.execute("CREATE VIEW park_area AS SELECT name, ST_Area(geom) > 0 AS has_area FROM parks")
    conn.execute("CREATE VIEW park_evil AS SELECT name, BufferOptions_SetQuadrantSegments(3) AS x FROM parks")
    conn.commit()
    conn.close()
    reader = open_database(copy)
    try:
        assert execute_query(reader, "SELECT * FROM park_area").rows == [("square", 1)]
        assert reader.execute("PRAGMA trusted_schema").fetchone()[0] == 0  # restored after the retry
        with pytest.raises(UnsafeSQLError, match="BufferOptions_SetQuadrantSegments"):
            execute_query(reader, "SELECT * FROM park_evil")
        assert reader.execute("SELECT BufferOptions_GetQuadrantSegments()").fetchone()[0] != 3
    finally:
        reader.close()
