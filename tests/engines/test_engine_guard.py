"""Guarded execution on PostgreSQL and DuckDB: rows, caps, error kinds, and hostile SQL that changes nothing.

Each engine gets the same shop database. Ordinary queries run as kgsql
requires on PostgreSQL, as a SELECT-only role. The hostile statements run as
a role that could write (PostgreSQL's superuser, let through with
``KGSQL_ALLOW_PRIVILEGED=1`` as ``--allow-privileged`` does; DuckDB's file
owner): what stops them is kgsql's read-only run, and the data is checked
unchanged after each batch. Only the guard's typed errors may escape.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine_shop import FINGERPRINT, PgShop, file_digest
from kgsql.db.guard import execute_query
from kgsql.db.privilege import ENV_ALLOW_PRIVILEGED
from kgsql.db.sql_errors import QueryTimeoutError, SQLQueryError
from kgsql.errors import DatabaseFileError, QueryExecutionError, UnsafeSQLError


@dataclass
class Shop:
    engine: str
    url: str            # how kgsql should connect: PostgreSQL's SELECT-only role
    writer_url: str     # a role that may write: only kgsql's read-only run stands in the way
    state: Callable[[], object]


@pytest.fixture(params=["postgres", "duckdb"])
def shop(request: pytest.FixtureRequest) -> Shop:
    if request.param == "postgres":
        pg: PgShop = request.getfixturevalue("pg_shop")
        return Shop("postgres", pg.reader_url, pg.superuser_url,
                    lambda: pg.cluster.sql(FINGERPRINT, database=pg.database))
    path = request.getfixturevalue("duck_shop")
    return Shop("duckdb", f"duckdb://{path}", f"duckdb://{path}", lambda: file_digest(path))


@pytest.fixture
def writer(shop: Shop, monkeypatch: pytest.MonkeyPatch) -> Shop:
    """The shop as a role that may write, run anyway (``--allow-privileged``)."""
    monkeypatch.setenv(ENV_ALLOW_PRIVILEGED, "1")
    return Shop(shop.engine, shop.writer_url, shop.writer_url, shop.state)


def test_rows_come_back_as_plain_values(shop: Shop) -> None:
    result = execute_query(shop.url, "SELECT c.name, sum(o.quantity * p.price) AS spent FROM customer c "
                                     "JOIN orders o ON o.customer_id = c.id JOIN product p ON p.code = o.product_code "
                                     "WHERE c.name LIKE '%_%' GROUP BY c.name ORDER BY spent DESC")
    assert result.columns == ["name", "spent"]
    assert result.rows == [("Bob Stone", 21.25), ("Ann Lee", 11.25), ("Cai Wu", 2)]
    dates = execute_query(shop.url, "SELECT joined FROM customer WHERE id = 1").rows
    assert dates == [("2021-03-01",)]


def test_row_and_byte_caps_stop_the_fetch(shop: Shop) -> None:
    many = "SELECT a.id, b.id FROM orders a, orders b, orders c, orders d"  # 256 rows
    capped = execute_query(shop.url, many, max_rows=10)
    assert capped.row_count == 10 and capped.truncated and capped.truncated_by == "rows"
    small = execute_query(shop.url, many, max_bytes=200)
    assert small.truncated_by == "bytes" and 0 < small.row_count < 256


@pytest.mark.parametrize(("sql", "kind", "name"), [
    ("SELECT * FROM nowhere", "no_such_table", "nowhere"),
    ("SELECT nme FROM customer", "no_such_column", "nme"),
    ("SELECT o.qty FROM orders o", "no_such_column", "qty"),  # DuckDB: 'Table "o" does not have a column named'
    ("SELECT id FROM customer, orders", "ambiguous_column", "id"),
    ("SELECT no_such_fn(name) FROM customer", "no_such_function", "no_such_fn"),
])
def test_errors_carry_the_kind_self_correction_acts_on(shop: Shop, sql: str, kind: str, name: str) -> None:
    with pytest.raises(SQLQueryError) as err:
        execute_query(shop.url, sql)
    assert err.value.kind == kind and (err.value.name or "").lower().endswith(name)
    assert execute_query(shop.url, "SELECT count(*) FROM customer").rows == [(3,)]  # the connection still works


def test_a_long_query_is_stopped_at_its_time(shop: Shop) -> None:
    slow = ("SELECT count(*) FROM range(100000000) a, range(100000) b" if shop.engine == "duckdb" else
            "SELECT count(*) FROM generate_series(1, 100000000) a, generate_series(1, 100000) b")
    with pytest.raises(QueryTimeoutError):
        execute_query(shop.url, slow, timeout_s=1)
    assert execute_query(shop.url, "SELECT 1").rows == [(1,)]


COMMON_WRITES = [
    "INSERT INTO customer VALUES (9, 'pwned', 'x', NULL)",
    "UPDATE orders SET quantity = 0",
    "DELETE FROM orders",
    "DROP TABLE orders",
    "ALTER TABLE customer ADD COLUMN pwned INTEGER",
    "CREATE TABLE pwned (x INTEGER)",
    "CREATE VIEW pwned AS SELECT 1",
    "TRUNCATE orders",
    "SELECT * INTO pwned FROM customer",
    "WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d",
    "WITH u AS (UPDATE orders SET quantity = 0 RETURNING id) SELECT count(*) FROM u",
    "SELECT 1; DELETE FROM orders",
    "BEGIN",
    "COMMIT",
    "SET search_path = pwned",
    "COPY orders TO '/tmp/kgsql-pwned.csv'",
]
ENGINE_WRITES = {
    "postgres": [
        "SELECT * FROM customer FOR UPDATE",
        "SELECT set_config('transaction_read_only', 'off', false)",
        "SELECT pg_read_file('/etc/passwd')",
        "SELECT lo_import('/etc/passwd')",
        "SELECT pg_terminate_backend(pg_backend_pid())",
        "SELECT nextval('pwned_seq')",
        "SELECT txid_current()",
        "SELECT query_to_xml('DELETE FROM orders RETURNING 1', true, true, '')",
        "SELECT pg_sleep(30)",
        "DO $$ BEGIN DELETE FROM orders; END $$",
        "COPY (SELECT 1) TO PROGRAM 'touch /tmp/kgsql-pwned'",
        "GRANT ALL ON customer TO PUBLIC",
        "VACUUM orders",
        "LOCK TABLE orders",
        "PREPARE p AS DELETE FROM orders",
        "CALL pwned()",
        "SELECT $$; DELETE FROM orders; $$",
        "SELECT E'\\'; DELETE FROM orders; --'",
        "/* /* */ ; DELETE FROM orders; */ SELECT 1",
    ],
    "duckdb": [
        "ATTACH '/tmp/kgsql-pwned.duckdb' AS pwned",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM '/etc/passwd'",
        "SELECT * FROM query('DELETE FROM orders')",
        "INSTALL spatial",
        "LOAD spatial",
        "SET enable_external_access = true",
        "PRAGMA enable_profiling",
        "CHECKPOINT",
        "EXPORT DATABASE '/tmp/kgsql-pwned'",
        "SELECT * FROM glob('/etc/*')",
        "CREATE SECRET pwned (TYPE s3, KEY_ID 'x', SECRET 'y')",
    ],
}


def _refused(shop: Shop, sql: str) -> None:
    try:
        execute_query(shop.url, sql, timeout_s=3)
    except (UnsafeSQLError, QueryExecutionError):
        return
    except DatabaseFileError as exc:  # pragma: no cover - the connection must survive hostile SQL
        pytest.fail(f"{sql!r} broke the connection: {exc}")
    # it ran: then it must have been a harmless read; the state check below decides


def test_hostile_statements_change_nothing(writer: Shop) -> None:
    before = writer.state()
    for sql in COMMON_WRITES + ENGINE_WRITES[writer.engine]:
        _refused(writer, sql)
        _refused(writer, sql.lower())
    assert writer.state() == before
    assert execute_query(writer.url, "SELECT count(*) FROM orders").rows == [(4,)]


WRAPS = [
    "{w}", "{w};", " \n{w} -- tail", "/* c */ {w}", "WITH x AS ({w} RETURNING *) SELECT * FROM x",
    "SELECT 1; {w}", "SELECT * FROM ({w} RETURNING *) AS x", "({w})", "EXPLAIN ANALYZE {w}",
    "SELECT 1 UNION ALL {w}",
]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(write=st.sampled_from(COMMON_WRITES[:8]), wrap=st.sampled_from(WRAPS), upper=st.booleans())
def test_wrapped_writes_never_write(writer: Shop, write: str, wrap: str, upper: bool) -> None:
    sql = wrap.format(w=write)
    before = writer.state()
    _refused(writer, sql.upper() if upper else sql)
    assert writer.state() == before
