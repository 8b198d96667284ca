"""Issue 13 items 1-2: the guard caps a query's memory and holds its timeout.

Every bomb here is small on purpose (budgets of 16-64 MB, timeouts of at most
one second), so the tests stay cheap even on a busy machine.
"""
from __future__ import annotations

import ctypes
import time
from pathlib import Path
from typing import Any

import pytest

from guard_helpers import PeakRSS
from kgsql.db import budget, guard
from kgsql.db.budget import row_bytes
from kgsql.db.connect import SQLITE_LIMIT_LENGTH, defensive_mode, open_database, set_limit, sqlite_heap_limits
from kgsql.db.guard import ERROR_KINDS, SQLQueryError, classify_sqlite_error, execute_query, validate_query
from kgsql.errors import UnsafeSQLError
from timing import scaled

R = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < {n}) "
MB = 2**20
#: SpatiaLite's Collect() gathers a copy of a 1,000-segment buffer per row, with malloc.
BOMB = (
    R.format(n=1_000_000) + ", g AS MATERIALIZED (SELECT Buffer(MakePoint(0, 0), 1, 1000) AS g) "
    "SELECT NumGeometries(Collect(g.g)) FROM r, g"
)


@pytest.fixture(scope="module")
def spatial_conn(spatial_db: Path) -> Any:
    conn = open_database(spatial_db)
    yield conn
    conn.close()


def _resource_error(db: Any, sql: str, **kwargs: Any) -> SQLQueryError:
    with pytest.raises(SQLQueryError) as info:
        execute_query(db, sql, **kwargs)
    assert info.value.kind == "resource", info.value
    return info.value


# ---------------------------------------------------------------- item 1: memory


def test_resource_is_an_error_kind() -> None:
    assert "resource" in ERROR_KINDS
    assert classify_sqlite_error("out of memory") == ("resource", None)
    assert classify_sqlite_error("string or blob too big") == ("resource", None)


def test_value_bigger_than_its_share_is_a_resource_error(plain_db: Path) -> None:
    """100 MB is more than one value may take of the default 512 MB budget."""
    err = _resource_error(plain_db, "SELECT zeroblob(100000000)")
    assert err.sqlite_message.startswith("string or blob too big")
    assert "512 MB" in str(err)


def test_zeroblob_rows_stay_within_the_budget(plain_db: Path) -> None:
    """The issue's bomb: 1,000 rows of 400 MB each reached 4 GiB before."""
    with PeakRSS() as rss:
        _resource_error(plain_db, R.format(n=1000) + "SELECT zeroblob(4e8) FROM r", memory_mb=64)
        result = execute_query(plain_db, R.format(n=1000) + "SELECT zeroblob(3e6) FROM r", memory_mb=64)
    assert result.truncated_by == "bytes" and 0 < result.row_count < 1000
    assert rss.growth < 64 * MB


def test_result_bytes_are_capped(plain_db: Path) -> None:
    result = execute_query(plain_db, R.format(n=10_000) + "SELECT n, randomblob(10000) FROM r", max_bytes=1_000_000)
    assert result.truncated and result.truncated_by == "bytes"
    assert 50 < result.row_count < 100
    assert sum(row_bytes(r) for r in result.rows) <= 1_000_000
    rows_first = execute_query(plain_db, R.format(n=10_000) + "SELECT n FROM r", max_rows=5, max_bytes=1_000_000)
    assert rows_first.truncated_by == "rows" and rows_first.row_count == 5


def test_sqlite_heap_exhaustion_is_a_resource_error(plain_db: Path) -> None:
    """A DISTINCT over 60 MB of blobs needs SQLite's heap, which gets 1/8 of 16 MB."""
    err = _resource_error(plain_db, R.format(n=300_000) + "SELECT count(DISTINCT randomblob(200)) FROM r", memory_mb=16)
    assert err.sqlite_message.startswith("out of memory")


def test_python_memory_error_becomes_a_resource_error(plain_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_memory(row: tuple) -> int:
        raise MemoryError

    monkeypatch.setattr(guard, "row_bytes", no_memory)  # where execute_query reads it
    _resource_error(plain_db, "SELECT 1")


def test_watchdog_stops_memory_outside_sqlite(spatial_conn: Any) -> None:
    """SpatiaLite's Collect() gathers copies with malloc, where SQLite's heap limit does not reach."""
    with PeakRSS() as rss:
        err = _resource_error(spatial_conn, BOMB, memory_mb=64, timeout_s=5)
    assert "process memory" in err.sqlite_message
    assert rss.growth < 64 * MB


def test_watchdog_sees_memory_reused_without_rss_growth(spatial_conn: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Freed pages stay resident, so a query that reuses them grows malloc's count, not the RSS.

    With the resident size frozen, only malloc's count can trip the watchdog;
    before it read malloc, such a query gathered until its timeout.
    """
    if budget.malloc_in_use() is None:
        pytest.skip("malloc's count is not readable here (not glibc 2.33+)")
    frozen = budget.rss_bytes()
    monkeypatch.setattr(budget, "rss_bytes", lambda: frozen)
    started = time.monotonic()
    err = _resource_error(spatial_conn, BOMB, memory_mb=64, timeout_s=5)
    assert "process memory" in err.sqlite_message
    assert time.monotonic() - started < scaled(2.5)


def test_watchdog_falls_back_to_rss_without_malloc_count(spatial_conn: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(budget, "malloc_in_use", lambda: None)
    err = _resource_error(spatial_conn, BOMB, memory_mb=64, timeout_s=5)
    assert "process memory" in err.sqlite_message


def test_memory_growth_counts_c_allocations() -> None:
    growth = budget.MemoryGrowth()
    assert growth.available
    held = ctypes.create_string_buffer(24 * MB)  # zero-filled: every page is touched
    assert growth() >= 24 * MB
    del held


def test_bad_budgets_rejected(plain_db: Path) -> None:
    with pytest.raises(ValueError):
        execute_query(plain_db, "SELECT 1", memory_mb=0)
    with pytest.raises(ValueError):
        execute_query(plain_db, "SELECT 1", max_bytes=-1)


def test_default_budget_is_read_at_call_time(plain_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(guard, "MEMORY_MB", 16.0)
    _resource_error(plain_db, "SELECT zeroblob(2000000)")  # > 16 MB / 16


def test_process_wide_heap_limit_is_restored(plain_db: Path) -> None:
    before = sqlite_heap_limits()
    if before is None:
        pytest.skip("SQLite's C API is not reachable from this Python")
    assert execute_query(plain_db, "SELECT 1").rows == [(1,)]
    assert sqlite_heap_limits() == before
    sqlite_heap_limits(1 << 40, 1 << 40)  # an application's own, looser limit
    try:
        execute_query(plain_db, "SELECT 1")
        assert sqlite_heap_limits() == (1 << 40, 1 << 40)
    finally:
        sqlite_heap_limits(*before)


def test_caller_connection_settings_are_restored(plain_db: Path) -> None:
    conn = open_database(plain_db, read_only=False)
    try:
        length_before = set_limit(conn, SQLITE_LIMIT_LENGTH, -1)
        defensive_before = defensive_mode(conn)
        trusted_before = conn.execute("PRAGMA trusted_schema").fetchone()[0]
        _resource_error(conn, "SELECT zeroblob(5000000)", memory_mb=16)
        assert set_limit(conn, SQLITE_LIMIT_LENGTH, -1) == length_before
        assert defensive_mode(conn) == defensive_before
        assert conn.execute("PRAGMA trusted_schema").fetchone()[0] == trusted_before
        assert len(conn.execute("SELECT zeroblob(5000000)").fetchone()[0]) == 5_000_000
    finally:
        conn.close()


# ---------------------------------------------------------------- item 2: time


def test_randomblob_returns_within_twice_the_timeout(plain_db: Path) -> None:
    """One C call: SELECT randomblob(1e9) ran 2.9 s against a 1 s timeout before."""
    started = time.monotonic()
    _resource_error(plain_db, "SELECT randomblob(1e9)", timeout_s=1.0)
    assert time.monotonic() - started < scaled(2.0)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT Area(Buffer(MakePoint(0, 0), 1, 1500000))",
        "SELECT ST_Buffer(MakePoint(0, 0), 1, 1e7)",
        'SELECT "Buffer"(MakePoint(0, 0), 1, 5000)',
        "SELECT buffer /* c */ (MakePoint(0, 0), 1, (2000))",
        "SELECT Buffer(geom, 1, id * 100000) FROM parks",
        "SELECT Buffer(geom, 1, '9999999') FROM parks",
        "SELECT Area(Buffer(Buffer(geom, 1, 30), 1, 1001)) FROM parks",
    ],
)
def test_buffer_segments_are_bounded_at_validation(spatial_conn: Any, sql: str) -> None:
    """A SpatiaLite buffer with 1.5 M segments ran 5.95 s in one GEOS call."""
    with pytest.raises(UnsafeSQLError, match="quadrant segments"):
        validate_query(sql)
    started = time.monotonic()
    with pytest.raises(UnsafeSQLError):
        execute_query(spatial_conn, sql, timeout_s=1.0)
    assert time.monotonic() - started < scaled(2.0)


@pytest.mark.parametrize(
    "sql",
    ["SELECT Buffer(geom, 0.1) FROM parks", "SELECT ST_Buffer(geom, 0.1, 30) FROM parks",
     "SELECT Buffer(geom, 0.1, -8) FROM parks", "SELECT Buffer(geom, 0.1, 1000) FROM parks"],
)
def test_ordinary_buffers_pass(spatial_conn: Any, sql: str) -> None:
    assert execute_query(spatial_conn, sql).row_count == 1


def test_watchdog_holds_the_deadline_without_the_progress_handler(
    plain_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the progress handler silenced, the watchdog thread's conn.interrupt() alone stops the query."""
    monkeypatch.setattr(guard, "PROGRESS_STEPS", 2**31 - 1)
    started = time.monotonic()
    with pytest.raises(SQLQueryError) as info:
        execute_query(plain_db, R.format(n=30_000_000) + "SELECT count(*) FROM r", timeout_s=0.5)
    assert info.value.kind == "timeout"
    assert time.monotonic() - started < scaled(1.0)


def test_fast_queries_never_meet_a_late_interrupt(plain_db: Path) -> None:
    conn = open_database(plain_db)
    try:
        for _ in range(50):
            try:
                assert execute_query(conn, "SELECT count(*) FROM many", timeout_s=0.01).rows == [(25,)]
            except SQLQueryError as exc:  # a busy machine may take 10 ms; what follows must still run
                assert exc.kind == "timeout"
            assert conn.execute(R.format(n=20_000) + "SELECT count(*) FROM r").fetchone() == (20_000,)
    finally:
        conn.close()
