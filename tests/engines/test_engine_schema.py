"""Schemas read from PostgreSQL/PostGIS and DuckDB: the same graph facts as from the SQLite file."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from engine_shop import SHOP_ROWS, SHOP_TABLES, PgShop
from kgsql.ingest.pipeline import read_sources
from kgsql.ingest.reader import read_database
from kgsql.lab.pg_cluster import TempCluster
from kgsql.retrieve.values import extract_values
from kgsql.route.named import database_values
from kgsql.schema.model import DatabaseSchema


def _facts(schema: DatabaseSchema) -> dict:
    return {
        "tables": {t.name: t.row_count for t in schema.tables},
        "columns": {(t.name, c.name, c.is_primary_key, c.not_null or c.is_primary_key) for t in schema.tables
                    for c in t.columns},
        "fks": {(f.table, f.column, f.ref_table, f.ref_column) for f in schema.foreign_keys},
        "examples": {(t.name, c.name): tuple(c.value_examples) for t in schema.tables for c in t.columns
                     if c.name in ("city", "title")},
        "distinct": {(t.name, c.name): c.stats.distinct_count for t in schema.tables for c in t.columns},
    }


@pytest.fixture(scope="module")
def sqlite_shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sqlite") / "shop.sqlite"
    conn = sqlite3.connect(path)
    for statement in SHOP_TABLES + SHOP_ROWS:
        conn.execute(statement)
    conn.commit()
    conn.close()
    return path


def test_all_three_engines_give_the_same_schema_facts(pg_shop: PgShop, duck_shop: Path, sqlite_shop: Path) -> None:
    lite = read_database(sqlite_shop)
    pg = read_database(pg_shop.reader_url)
    duck = read_database(f"duckdb://{duck_shop}")
    assert _facts(pg) == _facts(lite) == _facts(duck)
    # PostgreSQL lists the tables in the order they were made, as SQLite does: one database, one prompt.
    # DuckDB's oids are renumbered when a file is opened (parents first), so it keeps the alphabetical order
    assert [t.name for t in pg.tables] == [t.name for t in lite.tables] == ["customer", "product", "orders"]
    assert [t.name for t in duck.tables] == ["customer", "orders", "product"]
    assert (pg.name, pg.dialect, duck.name, duck.dialect) == ("shop", "postgres", "shop", "duckdb")
    assert pg.path == pg_shop.reader_url.replace(pg_shop.reader_password, "***")
    price = {c.name: c for c in pg.table("product").columns}["price"]
    assert (price.type, price.stats.min, price.stats.max) == ("numeric(8,2)", 2, 4.25)
    joined = {c.name: c for c in duck.table("customer").columns}["joined"]
    assert (joined.stats.min, joined.stats.max) == ("2021-03-01", "2022-07-15")


def test_values_for_the_value_index(pg_shop: PgShop, duck_shop: Path) -> None:
    for db in (pg_shop.reader_url, f"duckdb://{duck_shop}"):
        values = set(extract_values(db, read_database(db)))
        assert {("customer", "city", "Oslo"), ("product", "title", "Green Tea")} <= values
        assert not any(column == "id" for _t, column, _v in values)


def test_values_for_routing_from_the_schema_alone(pg_shop: PgShop, duck_shop: Path) -> None:
    """Routing reads a database's stored names from its schema's path as ingest reads it and the graph keeps
    it: PostgreSQL's URL with the password masked (put back from kgsql's private store), a DuckDB file."""
    for db in (pg_shop.reader_url, f"duckdb://{duck_shop}"):
        [schema] = read_sources(db)  # as ingest reads it: the password kept aside
        assert "***" in schema.path or schema.dialect == "duckdb"
        assert {"oslo", "green tea", "ann lee"} <= set(database_values(schema)), db


def test_postgis_geometry_columns_come_with_type_and_srid(pg_cluster: TempCluster) -> None:
    if not pg_cluster.postgis:
        pytest.skip("PostGIS not installed (Debian: postgresql-15-postgis-3)")
    pg_cluster.create_database("places", postgis=True)
    pg_cluster.sql(
        "CREATE TABLE city (id INTEGER PRIMARY KEY, name TEXT, geom geometry(Point, 4326))",
        "CREATE TABLE road (id INTEGER PRIMARY KEY, name TEXT, city_id INTEGER, geom geometry(LineString, 3857))",
        "INSERT INTO city VALUES (1, 'Oslo', 'SRID=4326;POINT(10.75 59.91)'), (2, 'Rome', 'SRID=4326;POINT(12.5 41.9)')",
        "INSERT INTO road VALUES (1, 'Ring 3', 1, 'SRID=3857;LINESTRING(0 0, 1000 0)'), "
        "(2, 'Via Appia', 2, 'SRID=3857;LINESTRING(0 0, 0 5000)')",
        database="places")
    [schema] = read_sources(pg_cluster.url("places"), discover_joins="on")
    assert schema.is_spatial and [t.name for t in schema.tables] == ["city", "road"]  # spatial_ref_sys left out
    city_geom = {c.name: c for c in schema.table("city").columns}["geom"]
    road_geom = {c.name: c for c in schema.table("road").columns}["geom"]
    assert (city_geom.spatial.geometry_type, city_geom.spatial.srid) == ("POINT", 4326)
    assert (road_geom.spatial.geometry_type, road_geom.spatial.srid) == ("LINESTRING", 3857)
    assert city_geom.spatial.extent == [10.75, 41.9, 12.5, 59.91]
    # no declared keys between the tables: the join is found in the data, as for SQLite files
    assert ("road", "city_id", "city", "id") in {(f.table, f.column, f.ref_table, f.ref_column)
                                                 for f in schema.foreign_keys}


def test_the_agent_and_the_service_run_sql_on_engine_databases(schema_graph, pg_shop: PgShop, duck_shop: Path,
                                                               unique_name) -> None:  # type: ignore[no-untyped-def]
    """Both used to ask whether the stored path was a file, which a URL never is."""
    from kgsql.agent.tools import DatabaseTools
    from kgsql.serve.service import Service

    for url in (pg_shop.reader_url, f"duckdb://{duck_shop}"):
        name = unique_name("shop_tools")
        schema_graph.ingest(url, name=name)
        tools = DatabaseTools(schema_graph, name)
        seen = tools.execute_sql("SELECT count(*) FROM orders")
        assert seen.result is not None and seen.result.rows == [(4,)], seen.text
        failed = tools.execute_sql("SELECT nme FROM customer")
        assert failed.error and "nme" in failed.text
        service = Service(lambda: schema_graph)
        assert service.sql(name, "SELECT name FROM customer WHERE id = 2")["rows"] == [["Bob Stone"]]
