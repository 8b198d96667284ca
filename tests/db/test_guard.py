"""Plain tests of the SQL guard against real SQLite and SpatiaLite files."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from benchdata import DATA
from guard_helpers import dir_state, sha256_of
from kgsql.db import guard
from kgsql.db.connect import open_database, sqlite3
from kgsql.db.guard import (
    QueryResult,
    QueryTimeoutError,
    SQLQueryError,
    classify_sqlite_error,
    execute_query,
    is_denied_function,
    make_authorizer,
    split_statements,
    validate_query,
)
from kgsql.errors import DatabaseFileError, QueryExecutionError, UnsafeSQLError
from timing import scaled

TRAFFIC = DATA / "spatial" / "dataset1" / "traffic" / "traffic.sqlite"

FOREVER = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c"


# ---------------------------------------------------------------- legit SQL


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT b FROM t WHERE b = 'x;y'", [("x;y",)]),
        ("SELECT b FROM t WHERE b = 'semi; colon';", [("semi; colon",)]),
        ("SELECT b FROM t WHERE a = 3 ;  \n  ", [("--not a comment",)]),
        ("SELECT b FROM t WHERE a = 4; -- trailing note", [("/* nor this */",)]),
        ("/* leading comment */ SELECT a FROM t WHERE a = 1", [(1,)]),
        ("-- why\nSELECT a FROM t WHERE a = 1 -- which; row\n", [(1,)]),
        ("SELECT 'it''s; fine' AS s", [("it's; fine",)]),
        ('SELECT "b" FROM "t" WHERE [a] = 2 AND `a` = 2', [("semi; colon",)]),
        ("WITH s AS (SELECT sum(amount) AS total FROM orders) SELECT total FROM s", [(19.75,)]),
        (
            "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 3) SELECT n FROM c",
            [(1,), (2,), (3,)],
        ),
        ("SELECT name FROM users WHERE id = 1 UNION SELECT name FROM users WHERE id = 2 ORDER BY 1", [("ann",), ("bob",)]),
        ("SELECT id FROM users INTERSECT SELECT user_id FROM orders ORDER BY 1", [(1,), (2,)]),
        ("SELECT id FROM users EXCEPT SELECT user_id FROM orders WHERE amount > 8", [(2,)]),
        ("VALUES (1, 'a'), (2, 'b')", [(1, "a"), (2, "b")]),
        (
            "SELECT u.name, count(*) FROM users u JOIN orders o ON o.user_id = u.id GROUP BY u.name ORDER BY 1",
            [("ann", 2), ("bob", 1)],
        ),
        ("SELECT id, row_number() OVER (ORDER BY amount DESC) FROM orders ORDER BY id", [(1, 1), (2, 3), (3, 2)]),
        ("SELECT count(*) FROM big_orders", [(2,)]),
        ("SELECT name FROM pragma_table_info('users') ORDER BY cid", [("id",), ("name",), ("city",)]),
        ("SELECT count(*) FROM sqlite_master WHERE type = 'table'", [(4,)]),
        ("select upper(name) from users where city like 'o%'", [("ANN",)]),
    ],
)
def test_legit_queries_run(plain_db: Path, sql: str, expected: list[tuple]) -> None:
    result = execute_query(plain_db, sql)
    assert isinstance(result, QueryResult)
    assert result.rows == expected
    assert result.truncated is False
    assert result.elapsed_s >= 0


def test_result_carries_columns_and_clean_sql(plain_db: Path) -> None:
    result = execute_query(plain_db, "SELECT id AS user_id, name FROM users ORDER BY id;  -- done")
    assert result.columns == ["user_id", "name"]
    assert result.row_count == 2
    assert result.sql == "SELECT id AS user_id, name FROM users ORDER BY id"


def test_validate_returns_single_statement() -> None:
    assert validate_query("SELECT 1;") == "SELECT 1"
    assert validate_query("  SELECT ';' ; ; -- x\n") == "SELECT ';'"
    assert validate_query("SELECT 1 -- c") == "SELECT 1 -- c"


def test_split_statements_follows_sqlite_quoting() -> None:
    assert split_statements("SELECT 'a;b'; SELECT 2") == ["SELECT 'a;b'", "SELECT 2"]
    assert split_statements('SELECT "x;y" FROM [a;b]') == ['SELECT "x;y" FROM [a;b]']
    # backslash is not an escape in SQLite: the string ends at the second quote
    assert split_statements("SELECT 'a\\'; DROP TABLE t; --'") == ["SELECT 'a\\'", "DROP TABLE t"]
    assert split_statements("SELECT 1 /* ; */ ; -- ;") == ["SELECT 1 /* ; */"]
    assert split_statements(";;  ; /* only */") == []


# ---------------------------------------------------------------- rejected SQL


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        ("INSERT INTO t VALUES (9, 'x')", "INSERT"),
        ("UPDATE t SET b = 'x'", "UPDATE"),
        ("DELETE FROM t", "DELETE"),
        ("REPLACE INTO t VALUES (1, 'x')", "REPLACE"),
        ("DROP TABLE t", "DROP"),
        ("ALTER TABLE t ADD COLUMN c", "ALTER"),
        ("CREATE TABLE x (a)", "CREATE"),
        ("ATTACH DATABASE 'other.db' AS o", "ATTACH"),
        ("DETACH o", "DETACH"),
        ("PRAGMA writable_schema = 1", "PRAGMA"),
        ("VACUUM", "VACUUM"),
        ("REINDEX", "REINDEX"),
        ("ANALYZE", "ANALYZE"),
        ("BEGIN", "BEGIN"),
        ("COMMIT", "COMMIT"),
        ("EXPLAIN SELECT 1", "EXPLAIN"),
        ("SELECT 1; DROP TABLE t", "2 statements"),
        ("SELECT 1;DELETE FROM t;", "2 statements"),
        ("SELECT 'a\\'; DROP TABLE t; --'", "statements"),
        ("SELECT 1 /* */; DELETE FROM t", "2 statements"),
        ("SELECT 1 --\n; DELETE FROM t", "2 statements"),
        ("/* SELECT 1 */ DELETE FROM t", "DELETE"),
        ("-- SELECT 1\nDELETE FROM t", "DELETE"),
        ("WITH x AS (SELECT 1) DELETE FROM t", "DELETE"),
        ("WITH x AS (SELECT 1) INSERT INTO t SELECT 7, 'x' FROM x", "INSERT"),
        ("with x as (select 1) update t set b = 'x'", "UPDATE"),
        ("SELECT * INTO copy FROM t", "INTO"),
        ("SELECT load_extension('mod_spatialite')", "load_extension"),
        ("SELECT LOAD_EXTENSION ( '/tmp/evil' )", "load_extension"),
        ('SELECT "load_extension"(\'x\')', "load_extension"),
        ("SELECT writefile('/tmp/x', 'y')", "writefile"),
        ("SELECT readfile('/etc/passwd')", "readfile"),
        ("SELECT fts3_tokenizer('simple')", "fts3_tokenizer"),
        ("SELECT ExportGeoJSON2('parks', 'geom', '/tmp/x.json')", "ExportGeoJSON2"),
        ("SELECT BlobToFile(x'00', '/tmp/x')", "BlobToFile"),
        ("SELECT CreateSpatialIndex('parks', 'geom')", "CreateSpatialIndex"),
        ("", "no SQL"),
        ("  ;; -- nothing\n", "no SQL"),
        ("SELECT 1\x00; DROP TABLE t", "NUL"),
    ],
)
def test_rejected_with_reason(plain_db: Path, sql: str, reason: str) -> None:
    before = sha256_of(plain_db)
    with pytest.raises(UnsafeSQLError) as info:
        validate_query(sql)
    assert reason.lower() in str(info.value).lower()
    with pytest.raises(UnsafeSQLError):
        execute_query(plain_db, sql)
    assert sha256_of(plain_db) == before


def test_non_string_and_huge_sql_rejected() -> None:
    with pytest.raises(UnsafeSQLError, match="string"):
        validate_query(b"SELECT 1")  # type: ignore[arg-type]
    with pytest.raises(UnsafeSQLError, match="characters long"):
        validate_query("SELECT " + "1+" * guard.MAX_SQL_CHARS + "1")


def test_deep_nesting_rejected_not_crashing() -> None:
    with pytest.raises(UnsafeSQLError, match="nested too deeply"):
        validate_query("SELECT " + "(" * 300 + "1" + ")" * 300)
    assert validate_query("SELECT " + "(" * 10 + "1" + ")" * 10)


def test_reason_attribute_is_bare() -> None:
    with pytest.raises(UnsafeSQLError) as info:
        validate_query("DELETE FROM t")
    assert info.value.reason.startswith("not a read-only query")  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "name",
    ["load_extension", "LOAD_EXTENSION", "readfile", "writefile", "edit", "fts3_tokenizer", "ImportSHP",
     "ExportGeoJSON", "BlobFromFile", "SqlProc_Execute", "XB_LoadXML", "InitSpatialMetadata", "zipfile"],
)
def test_denied_functions(name: str) -> None:
    assert is_denied_function(name)


@pytest.mark.parametrize(
    "name",
    ["count", "sum", "upper", "ST_Area", "Area", "GLength", "Distance", "Transform", "AsGeoJSON",
     "GeomFromText", "sqlite_compileoption_used", "sqlite_version", "json_extract", "printf"],
)
def test_allowed_functions(name: str) -> None:
    assert not is_denied_function(name)


def test_compileoption_functions_allowed(plain_db: Path) -> None:
    result = execute_query(plain_db, "SELECT sqlite_compileoption_used('THREADSAFE=1'), sqlite_version() IS NOT NULL")
    assert result.rows[0][1] == 1


# ---------------------------------------------------------------- the SQLite layer alone


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM t",
        "INSERT INTO t VALUES (9, 'x')",
        "UPDATE t SET b = 'x'",
        "DROP TABLE t",
        "CREATE TEMP TABLE x (a)",
        "ALTER TABLE t RENAME TO t2",
        "PRAGMA writable_schema = 1",
        "PRAGMA query_only = 0",
        "SELECT * FROM pragma_user_version",
        "VACUUM",
        "REINDEX",
        "ANALYZE",
        "BEGIN IMMEDIATE",
        "SAVEPOINT s",
        "SELECT load_extension('mod_spatialite')",
        "WITH x AS (SELECT 1) DELETE FROM t",
    ],
)
def test_authorizer_alone_blocks_writes_on_writable_connection(tmp_path: Path, sql: str) -> None:
    """Layer 3 without layers 1, 2 and 4: a writable connection, no query_only."""
    from guard_helpers import build_plain_db

    path = build_plain_db(tmp_path / "w.sqlite")
    before = dir_state(tmp_path)
    conn = sqlite3.connect(str(path), isolation_level=None)
    denied: list[str] = []
    conn.set_authorizer(make_authorizer(denied))
    with pytest.raises(sqlite3.DatabaseError):
        conn.execute(sql).fetchall()
    conn.close()
    assert denied, "the authorizer should have named what it refused"
    assert dir_state(tmp_path) == before


def test_authorizer_allows_reads(plain_db: Path) -> None:
    conn = sqlite3.connect(str(plain_db))
    denied: list[str] = []
    conn.set_authorizer(make_authorizer(denied))
    rows = conn.execute(
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 2) "
        "SELECT count(*), max(n) FROM c JOIN t ON t.a = c.n"
    ).fetchall()
    conn.close()
    assert rows == [(2, 2)]
    assert denied == []


def test_write_via_authorizer_reports_unsafe(plain_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Even if the static layers were fooled, execute_query reports the authorizer's refusal."""
    monkeypatch.setattr(guard, "validate_query", lambda sql, dialect="sqlite": sql)
    before = sha256_of(plain_db)
    with pytest.raises(UnsafeSQLError, match="authorizer denied DELETE t"):
        execute_query(plain_db, "DELETE FROM t")
    assert sha256_of(plain_db) == before


# ---------------------------------------------------------------- error kinds


@pytest.mark.parametrize(
    ("sql", "kind", "name"),
    [
        ("SELECT * FROM nosuch", "no_such_table", "nosuch"),
        ("SELECT * FROM main.nosuch", "no_such_table", "main.nosuch"),
        ("SELECT nosuch FROM users", "no_such_column", "nosuch"),
        ("SELECT u.nosuch FROM users u", "no_such_column", "u.nosuch"),
        ("SELECT id FROM users JOIN orders ON users.id = orders.user_id", "ambiguous_column", "id"),
        ("SELECT nosuch_fn(1)", "no_such_function", "nosuch_fn"),
        ("SELECT upper(name, 2) FROM users", "wrong_arguments", "upper"),
        ("SELECT substr()", "wrong_arguments", "substr"),
        ("SELECT * FROM users WHERE", "syntax", None),
        ("SELECT * FROM users WHERE name = 'ann", "syntax", "'ann"),
        ("SELEC * FROM users", "syntax", "SELEC"),
        ("SELECT id FROM users UNION SELECT id, name FROM users", "syntax", None),
        ("SELECT sum(sum(amount)) FROM orders", "other", None),
    ],
)
def test_error_kinds_from_real_sqlite(plain_db: Path, sql: str, kind: str, name: str | None) -> None:
    with pytest.raises(SQLQueryError) as info:
        execute_query(plain_db, sql)
    err = info.value
    assert isinstance(err, QueryExecutionError)
    assert err.kind == kind
    assert err.name == name
    assert err.sqlite_message in str(err)


def test_unbound_parameter_is_an_execution_error(plain_db: Path) -> None:
    with pytest.raises(SQLQueryError) as info:
        execute_query(plain_db, "SELECT * FROM users WHERE id = ?")
    assert info.value.kind == "other"


def test_non_ascii_space_is_not_whitespace_to_sqlite(plain_db: Path) -> None:
    # U+00A0 is an identifier character for SQLite, so this is two statements
    with pytest.raises(UnsafeSQLError):
        execute_query(plain_db, "SELECT 1;\u00a0DELETE FROM t")
    assert split_statements("SELECT 1;\u00a0") == ["SELECT 1", "\u00a0"]


def test_syntax_error_near_token(plain_db: Path) -> None:
    with pytest.raises(SQLQueryError) as info:
        execute_query(plain_db, "SELECT name FROM users ORDER name")
    assert info.value.kind == "syntax"
    assert info.value.sqlite_message == 'near "name": syntax error'
    assert info.value.name == "name"


@pytest.mark.parametrize(
    ("message", "kind", "name"),
    [
        ("no such table: frpm", "no_such_table", "frpm"),
        ("no such column: T1.School Name", "no_such_column", "T1.School Name"),
        ("ambiguous column name: cds", "ambiguous_column", "cds"),
        ("no such function: ST_Foo", "no_such_function", "ST_Foo"),
        ("wrong number of arguments to function Area()", "wrong_arguments", "Area"),
        ('near "FROM": syntax error', "syntax", "FROM"),
        ("incomplete input", "syntax", None),
        ("interrupted", "timeout", None),
        ("misuse of aggregate function count()", "other", None),
    ],
)
def test_classify_messages(message: str, kind: str, name: str | None) -> None:
    assert classify_sqlite_error(message) == (kind, name)


def test_database_file_errors(tmp_path: Path) -> None:
    with pytest.raises(DatabaseFileError):
        execute_query(tmp_path / "missing.sqlite", "SELECT 1")
    (tmp_path / "junk.sqlite").write_text("not sqlite")
    with pytest.raises(DatabaseFileError):
        execute_query(tmp_path / "junk.sqlite", "SELECT 1")


# ---------------------------------------------------------------- timeout and row cap


def test_timeout_interrupts_endless_recursive_cte(plain_db: Path) -> None:
    started = time.monotonic()
    with pytest.raises(QueryTimeoutError) as info:
        execute_query(plain_db, FOREVER, timeout_s=0.3)
    assert time.monotonic() - started < scaled(5)
    assert info.value.kind == "timeout"
    assert isinstance(info.value, QueryExecutionError)


def test_timeout_also_covers_fetching(plain_db: Path) -> None:
    endless_rows = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT n FROM c WHERE n < 0"
    with pytest.raises(QueryTimeoutError):
        execute_query(plain_db, endless_rows, timeout_s=0.3)


def test_row_cap_truncates(plain_db: Path) -> None:
    capped = execute_query(plain_db, "SELECT n FROM many ORDER BY n", max_rows=10)
    assert capped.truncated is True
    assert capped.rows == [(n,) for n in range(1, 11)]
    exact = execute_query(plain_db, "SELECT n FROM many", max_rows=25)
    assert exact.truncated is False and exact.row_count == 25
    none = execute_query(plain_db, "SELECT n FROM many", max_rows=0)
    assert none.truncated is True and none.rows == []


def test_infinite_rows_are_capped_quickly(plain_db: Path) -> None:
    sql = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT n FROM c"
    result = execute_query(plain_db, sql, max_rows=100, timeout_s=5)
    assert result.truncated and result.row_count == 100


def test_bad_limits_rejected(plain_db: Path) -> None:
    with pytest.raises(ValueError):
        execute_query(plain_db, "SELECT 1", timeout_s=0)
    with pytest.raises(ValueError):
        execute_query(plain_db, "SELECT 1", max_rows=-1)


# ---------------------------------------------------------------- caller-owned connections


def test_caller_connection_is_guarded_then_restored(plain_db: Path) -> None:
    conn = open_database(plain_db, read_only=False)
    try:
        assert execute_query(conn, "SELECT count(*) FROM t").rows == [(4,)]
        with pytest.raises(UnsafeSQLError):
            execute_query(conn, "DELETE FROM t")
        with pytest.raises(QueryTimeoutError):
            execute_query(conn, FOREVER, timeout_s=0.2)
        # handlers removed and query_only restored: the owner can write again
        conn.execute("INSERT INTO t VALUES (99, 'owner write')")
        conn.commit()
        assert conn.execute("PRAGMA query_only").fetchone()[0] == 0
    finally:
        conn.close()


def test_read_only_caller_connection_stays_read_only(plain_db: Path) -> None:
    conn = open_database(plain_db)
    try:
        execute_query(conn, "SELECT 1")
        assert conn.execute("PRAGMA query_only").fetchone()[0] == 1
    finally:
        conn.close()


def test_extension_loading_is_switched_off_for_user_sql(plain_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conn = open_database(plain_db)
    conn.enable_load_extension(True)  # a careless caller
    monkeypatch.setattr(guard, "validate_query", lambda sql, dialect="sqlite": sql)  # static layers fooled
    try:
        with pytest.raises(UnsafeSQLError, match="load_extension"):
            execute_query(conn, "SELECT load_extension('mod_spatialite')")
        conn.set_authorizer(None)
        with pytest.raises(sqlite3.OperationalError, match="not authorized"):
            conn.execute("SELECT load_extension('mod_spatialite')")  # left switched off
    finally:
        conn.close()


# ---------------------------------------------------------------- SpatiaLite


def test_spatialite_query_through_guard(spatial_db: Path) -> None:
    before = sha256_of(spatial_db)
    square = execute_query(spatial_db, "SELECT ST_Area(GeomFromText('POLYGON((0 0,1 0,1 1,0 1,0 0))'))")
    assert square.rows == [(1.0,)]
    park = execute_query(spatial_db, "SELECT name, Area(geom, 1) FROM parks")
    assert park.rows[0][0] == "square"
    assert 1.0e6 < park.rows[0][1] < 1.1e6  # ~1.1 km x 0.95 km near Nanjing
    wkt = execute_query(spatial_db, "SELECT AsText(ST_Transform(geom, 32650)) FROM parks")  # UTM 50N
    assert wkt.rows[0][0].startswith("POLYGON((")
    assert sha256_of(spatial_db) == before


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT CreateSpatialIndex('parks', 'geom')",
        "SELECT DiscardGeometryColumn('parks', 'geom')",
        "SELECT UpdateLayerStatistics()",
        "SELECT ExportGeoJSON2('parks', 'geom', 'out.geojson')",
        "SELECT InitSpatialMetadata(1)",
        "SELECT load_extension('mod_spatialite')",
    ],
)
def test_spatialite_writers_rejected(spatial_db: Path, sql: str) -> None:
    before = dir_state(spatial_db.parent)
    with pytest.raises(UnsafeSQLError):
        execute_query(spatial_db, sql)
    assert dir_state(spatial_db.parent) == before


def test_spatialite_error_kinds(spatial_db: Path) -> None:
    with pytest.raises(SQLQueryError) as info:
        execute_query(spatial_db, "SELECT ST_NoSuchThing(geom) FROM parks")
    assert (info.value.kind, info.value.name) == ("no_such_function", "ST_NoSuchThing")
    with pytest.raises(SQLQueryError) as info:
        execute_query(spatial_db, "SELECT ST_Area() FROM parks")
    assert (info.value.kind, info.value.name) == ("wrong_arguments", "ST_Area")


@pytest.mark.skipif(not TRAFFIC.exists(), reason="spatial benchmark data not present")
def test_real_spatial_database_unchanged() -> None:
    before = sha256_of(TRAFFIC)
    result = execute_query(TRAFFIC, "Select Sum(GLength(Shape, 1)) from subways", timeout_s=20)
    assert result.rows[0][0] > 100_000
    near = execute_query(
        TRAFFIC,
        "Select hotels.name, Distance(busstops.Location, hotels.Location, 1) as d "
        "from busstops inner join hotels on busstops.name = '三元巷' order by d asc limit 5",
        timeout_s=20,
    )
    assert near.row_count == 5
    assert sha256_of(TRAFFIC) == before
