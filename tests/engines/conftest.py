"""Real engines for the engine tests: the session's throwaway PostgreSQL/PostGIS server, DuckDB files.

The server is the session's ``pg_cluster`` (tests/conftest.py), started by the
tests themselves on a private port under a temp folder and removed afterwards;
tests that need it skip with one line only where the server binaries are absent.
Both engines get the same small shop database (``engine_shop``), so every
test can run on both.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from engine_shop import SHOP_ROWS, SHOP_TABLES, PgShop
from kgsql.lab.pg_cluster import TempCluster


@pytest.fixture(scope="session")
def pg_shop(pg_cluster: TempCluster) -> PgShop:
    """The shop database on the session's server, with a SELECT-only role."""
    url = pg_cluster.create_database("shop")
    pg_cluster.sql(*SHOP_TABLES, *SHOP_ROWS, database="shop")
    password = "r3ader-Secret-77"
    reader = pg_cluster.create_reader("shop", "kg_reader", password)
    return PgShop(pg_cluster, "shop", url, reader, password)


@pytest.fixture(scope="session")
def duck_shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shop database as a DuckDB file."""
    import duckdb

    path = tmp_path_factory.mktemp("duck") / "shop.duckdb"
    conn = duckdb.connect(str(path))
    for statement in SHOP_TABLES + SHOP_ROWS:
        conn.execute(statement)
    conn.close()
    return path

