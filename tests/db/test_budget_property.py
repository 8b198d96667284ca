"""Property-based memory and time bombs: every query keeps its budget and returns within 2x its timeout.

Each example builds a bomb from a value of some size (zeroblob, randomblob,
printf, replace, ...) or a SpatiaLite geometry (buffers, circles, unions), a
shape that multiplies it (many rows, a sort, DISTINCT, a cross join, a
window, UNION, group_concat, a doubling recursive CTE, an endless CTE, the
SpatiaLite aggregates Collect/GUnion/ST_Union/Extent) and some nesting, and runs it
through the guard on a caller's connection with a 64 MB budget and a 0.5 s
timeout. It must return within 1 s, the process's resident memory (sampled
every 2 ms) must not grow past the budget, SQLite's heap must stay within its
share, the rows within the result share, and only the guard's typed errors
may escape. KGSQL_BOMB_EXAMPLES raises the number of examples for a longer run.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from guard_helpers import PeakRSS
from kgsql.db.budget import Budget, row_bytes
from kgsql.db.connect import open_database, sqlite_heap_limits, sqlite_memory_highwater, sqlite_memory_used
from kgsql.db.guard import QueryResult, SQLQueryError, execute_query
from kgsql.errors import UnsafeSQLError
from timing import scaled

BUDGET_MB = 64
TIMEOUT_S = 0.5
MB = 2**20
EXAMPLES = int(os.environ.get("KGSQL_BOMB_EXAMPLES", "0"))

SIZES = [10**3, 10**5, 10**6, 4 * 10**6, 10**7, 10**8, 10**9]
ROWS = [1, 10, 1_000, 100_000, 10_000_000]
R = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < {rows}) "

#: SQL values of about ``n`` bytes (``h`` = n/2, ``q`` = n/4 where hex doubles the size).
VALUES = [
    "zeroblob({n})",
    "randomblob({n})",
    "hex(zeroblob({h}))",
    "printf('%.*c', {n}, 'x')",
    "replace(hex(zeroblob({q})), '00', 'abcd')",
    "substr(randomblob({n}), 2)",
    "quote(zeroblob({h}))",
    "upper(hex(randomblob({h})))",
    "json_array(hex(zeroblob({q})))",
    "x'00' || zeroblob({n})",
    "n || zeroblob({n})",
]
SHAPES = [
    R + "SELECT {v} AS v FROM r",
    R + "SELECT n, {v} AS v FROM r ORDER BY random()",
    R + "SELECT DISTINCT {v} AS v FROM r",
    R + "SELECT length(group_concat(v)) FROM (SELECT {v} AS v FROM r)",
    R + "SELECT a.n, b.m, b.v FROM r AS a, (SELECT n AS m, {v} AS v FROM r) AS b ORDER BY random()",
    R + "SELECT length(v), row_number() OVER (ORDER BY v) FROM (SELECT {v} AS v FROM r)",
    R + "SELECT {v} FROM r UNION SELECT {v} FROM r",
    R + "SELECT max(v), count(*) FROM (SELECT n, {v} AS v FROM r) GROUP BY n % 7",
    (
        "WITH RECURSIVE d(n, v) AS (SELECT n, {v} FROM (SELECT 1 AS n) UNION ALL SELECT n + 1, v || v FROM d "
        "WHERE n < {rows}) SELECT n, length(v) FROM d"
    ),
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT {v} FROM r",
]
SEGMENTS = [1, 8, 30, 200, 1000]
#: Rows fed to a geometry function one row at a time (SQLite interrupts between rows)...
SPATIAL_ROWS = [1, 100, 10_000, 1_000_000]
#: ...and to an aggregate, whose final step (one GEOS union or copy) SQLite runs even
#: after an interrupt and nothing in-process can stop: GUnion of 2,000 circle
#: outlines takes 1.8 s there, of 300 4,000-point polygons 0.7 s. So these stay
#: small; bigger ones are the known gap (docs/limits.md, "What is not covered").
AGGREGATE_ROWS = [1, 10, 100]
GEOMETRIES = [
    "Buffer(MakePoint(n % 100, n / 100), 1, {segs})",
    "Buffer(Buffer(MakePoint(n % 100, n / 100), 1, {segs}), 0.5, {segs})",
    "ST_Union(Buffer(MakePoint(n, 0), 1, {segs}), Buffer(MakePoint(n, 1), 1, {segs}))",
    "MakeCircle(n, n, 1, 4326, {step})",
    "ST_Transform(Buffer(MakePoint(n % 90, 0, 4326), 1, {segs}), 32650)",
]
SPATIAL_SHAPES = [
    R + "SELECT AsText({g}) FROM r",
    R + "SELECT {g} FROM r ORDER BY random()",
    R + "SELECT n, Area({g}) FROM r ORDER BY 2 DESC",
    R + "SELECT AsText(Extent({g})) FROM r",
]
AGGREGATE_SHAPES = [
    R + "SELECT NumGeometries(Collect({g})) FROM r",
    R + "SELECT Area(GUnion({g})) FROM r",
    R + "SELECT GeometryType(ST_Union({g})) FROM r",
]


def _nest(draw: st.DrawFn, sql: str) -> str:
    for _ in range(draw(st.integers(0, 3))):
        sql = draw(st.sampled_from(["SELECT * FROM ({})", "SELECT * FROM ({}) LIMIT 1000000", "WITH q AS ({}) SELECT * FROM q"])).format(sql)
    return sql


@st.composite
def sqlite_bombs(draw: st.DrawFn) -> str:
    n = draw(st.sampled_from(SIZES))
    value = draw(st.sampled_from(VALUES)).format(n=n, h=n // 2, q=n // 4)
    shape = draw(st.sampled_from(SHAPES))
    return _nest(draw, shape.format(v=value, rows=draw(st.sampled_from(ROWS))))


@st.composite
def spatial_bombs(draw: st.DrawFn) -> str:
    geometry = draw(st.sampled_from(GEOMETRIES)).format(
        segs=draw(st.sampled_from(SEGMENTS)), step=draw(st.sampled_from([0.01, 1, 10]))
    )
    if draw(st.booleans()):
        shape, rows = draw(st.sampled_from(SPATIAL_SHAPES)), draw(st.sampled_from(SPATIAL_ROWS))
    else:
        shape, rows = draw(st.sampled_from(AGGREGATE_SHAPES)), draw(st.sampled_from(AGGREGATE_ROWS))
    return _nest(draw, shape.format(g=geometry, rows=rows))


@pytest.fixture(scope="module")
def plain_conn(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from guard_helpers import build_plain_db

    conn = open_database(build_plain_db(tmp_path_factory.mktemp("bombs") / "plain.sqlite"))
    yield conn
    conn.close()


@pytest.fixture(scope="module")
def spatial_conn(spatial_db: Path) -> Any:
    conn = open_database(spatial_db)
    yield conn
    conn.close()


def _detonate(conn: Any, sql: str) -> None:
    budget = Budget.of(BUDGET_MB, None)
    heap_before = sqlite_memory_used()
    sqlite_memory_highwater(reset=True)
    limits_before = sqlite_heap_limits()
    started = time.monotonic()
    outcome: object
    with PeakRSS() as rss:
        try:
            outcome = execute_query(conn, sql, timeout_s=TIMEOUT_S, memory_mb=BUDGET_MB)
        except (UnsafeSQLError, SQLQueryError) as exc:
            outcome = exc
    elapsed = time.monotonic() - started
    assert elapsed <= scaled(2 * TIMEOUT_S), f"{elapsed:.2f}s > 2x timeout: {sql} -> {outcome!r}"
    assert rss.growth <= budget.total, f"RSS grew {rss.growth / MB:.0f} MB: {sql} -> {outcome!r}"
    if heap_before is not None:
        heap_growth = sqlite_memory_highwater() - heap_before
        assert heap_growth <= budget.heap + MB, f"SQLite heap grew {heap_growth / MB:.0f} MB: {sql}"
        assert sqlite_heap_limits() == limits_before
    if isinstance(outcome, QueryResult):
        assert sum(row_bytes(r) for r in outcome.rows) <= budget.result
    else:
        assert isinstance(outcome, UnsafeSQLError) or outcome.kind in ("timeout", "resource", "other"), outcome
    conn.execute("SELECT 1").fetchone()  # the connection is still usable, no interrupt left behind


BOMBS = settings(
    max_examples=EXAMPLES or 60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)


@BOMBS
@given(sqlite_bombs())
def test_sqlite_bombs_keep_budget_and_deadline(plain_conn: Any, sql: str) -> None:
    _detonate(plain_conn, sql)


@settings(max_examples=EXAMPLES or 30, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(spatial_bombs())
def test_spatialite_bombs_keep_budget_and_deadline(spatial_conn: Any, sql: str) -> None:
    _detonate(spatial_conn, sql)
