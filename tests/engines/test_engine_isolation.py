"""PostgreSQL and DuckDB queries run in the killable worker too, under the same time and memory budget.

Before issue 35 only SQLite files went to the worker: a DuckDB ``string_agg``
reached 6.4 GB in the caller's process, and a PostgreSQL query held the
caller for as long as the server let it run.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from engine_shop import PgShop
from kgsql.db import isolate
from kgsql.db.budget import rss_bytes
from kgsql.db.engines.duckdb import MEMORY_SHARE, THREADS
from kgsql.db.isolate import execute_isolated
from kgsql.db.sql_errors import QueryResourceError, QueryTimeoutError
from timing import scaled

#: DuckDB allocates these in its own threads: only its memory_limit (and the worker) bound them.
DUCK_BOMBS = ["SELECT length(string_agg(repeat('x', 1000), ',')) FROM range(6000000)",
              "SELECT len(list(range)) FROM range(300000000)"]


@pytest.fixture
def duck_url(duck_shop: Path) -> str:
    return f"duckdb://{duck_shop}"


@pytest.mark.parametrize("sql", DUCK_BOMBS)
def test_duckdb_memory_bombs_end_in_a_resource_error_outside_this_process(duck_url: str, sql: str) -> None:
    execute_isolated(duck_url, "SELECT 1")
    before = rss_bytes()
    with pytest.raises(QueryResourceError) as caught:
        execute_isolated(duck_url, sql, timeout_s=30)
    assert caught.value.kind == "resource"
    after = rss_bytes()
    assert before is None or after is None or after - before <= 64 * 2**20
    assert execute_isolated(duck_url, "SELECT count(*) FROM customer").rows == [(3,)]


def test_duckdb_runs_with_its_own_memory_limit_and_thread_count(duck_url: str) -> None:
    from kgsql.db import guard

    rows = execute_isolated(duck_url, "SELECT current_setting('memory_limit'), current_setting('threads')").rows
    limit, threads = rows[0]
    assert int(threads) == THREADS
    number, unit = str(limit).split()
    mib = float(number) * {"KiB": 1 / 1024, "MiB": 1, "GiB": 1024}[unit]
    assert mib <= guard.MEMORY_MB * MEMORY_SHARE  # DuckDB rounds down to its block size


def test_a_slow_duckdb_query_ends_within_twice_its_limit(duck_url: str) -> None:
    execute_isolated(duck_url, "SELECT 1")
    started = time.monotonic()
    with pytest.raises(QueryTimeoutError):
        execute_isolated(duck_url, "SELECT count(*) FROM range(100000000) a, range(100000) b", timeout_s=1)
    assert time.monotonic() - started <= scaled(2.0 * 1 + 1.0)


def test_postgres_queries_run_in_the_worker_with_their_time_limit(pg_shop: PgShop,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    ran_here: list[str] = []
    monkeypatch.setattr(isolate, "execute_query", lambda *a, **k: ran_here.append("in-process"))
    url = pg_shop.reader_url
    assert execute_isolated(url, "SELECT name FROM customer ORDER BY id").rows == [
        ("Ann Lee",), ("Bob Stone",), ("Cai Wu",)]
    started = time.monotonic()
    with pytest.raises(QueryTimeoutError):
        execute_isolated(url, "SELECT count(*) FROM generate_series(1, 100000000) a, generate_series(1, 100000) b",
                         timeout_s=1)
    assert time.monotonic() - started <= scaled(2.0 * 1 + 1.0)
    assert ran_here == []  # nothing ran in this process
