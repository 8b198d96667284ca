"""PostgreSQL's guard past the deny-list: the role kgsql runs as, and functions that run SQL given as text.

Issue 35: ``ts_stat('SELECT ... pg_read_file(''/etc/passwd'')')`` returned the
server's /etc/passwd, ``ts_stat`` ran the denied ``set_config`` and
``ts_rewrite`` ran ``pg_read_file``; a function in the database doing
``COPY ... TO PROGRAM`` ran as the superuser and created a file. Now the
engine reads from the catalog which functions run SQL from a string and
refuses them, and refuses a privileged role outright unless the user insists.
"""
from __future__ import annotations

import logging
import uuid
from pathlib import Path

import pytest

from engine_shop import PgShop
from kgsql.db import engines
from kgsql.db.engines.pg_functions import called_names, reaching_functions
from kgsql.db.engines.pg_role import role_problems
from kgsql.db.engines.postgres import ROLE_RECIPE, PrivilegedRoleError
from kgsql.db.guard import execute_query
from kgsql.db.privilege import ENV_ALLOW_PRIVILEGED
from kgsql.db.sql_errors import SQLQueryError
from kgsql.errors import QueryExecutionError, UnsafeSQLError
from kgsql.ingest.reader import read_database
from kgsql.lab.pg_cluster import TempCluster

PASSWD_BY_TS_STAT = "SELECT word FROM ts_stat('SELECT to_tsvector(''simple'', pg_read_file(''/etc/passwd''))')"
PASSWD_BY_TS_REWRITE = ("SELECT ts_rewrite('root'::tsquery, 'SELECT to_tsquery(''simple'', ''root''), "
                        "plainto_tsquery(''simple'', pg_read_file(''/etc/passwd''))')::text")
SET_CONFIG_BY_TS_STAT = ("SELECT word FROM ts_stat('SELECT to_tsvector(''simple'', "
                         "set_config(''statement_timeout'', ''0'', false))')")
#: What the catalog rule must find, without kgsql naming any of them.
RUN_SQL_FROM_TEXT = {"ts_stat", "ts_rewrite", "query_to_xml", "query_to_xmlschema", "query_to_xml_and_xmlschema",
                     "cursor_to_xml", "cursor_to_xmlschema"}
DBLINK = {"dblink", "dblink_exec", "dblink_open", "dblink_fetch", "dblink_send_query", "dblink_get_result",
          "dblink_connect", "dblink_connect_u"}
#: What generated SQL uses every day: none of it may be refused.
EVERYDAY = {"lower", "upper", "count", "sum", "avg", "coalesce", "concat", "format", "to_char", "date_trunc",
            "extract", "generate_series", "string_agg", "array_agg", "regexp_replace", "regexp_split_to_table",
            "to_tsvector", "to_tsquery", "plainto_tsquery", "websearch_to_tsquery", "ts_rank", "ts_headline",
            "json_populate_recordset", "jsonb_to_recordset", "json_agg", "xmlelement", "round", "length"}
POSTGIS_EVERYDAY = {"st_distance", "st_length", "st_area", "st_intersects", "st_contains", "st_dwithin",
                    "st_geomfromtext", "st_astext", "st_asgeojson", "st_transform", "st_buffer", "st_x", "st_srid"}


@pytest.fixture(autouse=True)
def _not_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_ALLOW_PRIVILEGED, raising=False)


@pytest.fixture(scope="module")
def catalog_db(pg_cluster: TempCluster) -> str:
    """A database with every extension of interest this server has (dblink, tablefunc, xml2, PostGIS) and a
    wrapper function around ts_stat; its superuser URL."""
    name = f"reach_{uuid.uuid4().hex[:8]}"
    url = pg_cluster.create_database(name)
    available = {r[0] for r in pg_cluster.sql("SELECT name FROM pg_available_extensions", database=name)}
    for extension in ("dblink", "tablefunc", "xml2", "postgis"):
        if extension in available:
            pg_cluster.sql(f"CREATE EXTENSION {extension}", database=name)
    pg_cluster.sql(
        "CREATE FUNCTION word_stats(q text) RETURNS bigint LANGUAGE sql AS $$ SELECT count(*) FROM ts_stat (q) $$",
        "CREATE FUNCTION run_it(q text) RETURNS void LANGUAGE plpgsql AS $$ BEGIN EXECUTE q; END $$",
        "CREATE FUNCTION shout(t text) RETURNS text LANGUAGE sql AS $$ SELECT upper(t) || '!' $$",
        database=name)
    return url


def _found(pg_cluster: TempCluster, url: str) -> dict[str, str]:
    database = url.rsplit("/", 1)[1]
    return reaching_functions(lambda sql: pg_cluster.sql(sql, database=database))


def test_the_catalog_rule_finds_the_functions_that_run_sql_from_text(pg_cluster: TempCluster,
                                                                     catalog_db: str) -> None:
    found = _found(pg_cluster, catalog_db)
    assert RUN_SQL_FROM_TEXT <= set(found)
    installed = {r[0] for r in pg_cluster.sql("SELECT extname FROM pg_extension",
                                              database=catalog_db.rsplit("/", 1)[1])}
    if "dblink" in installed:
        assert DBLINK <= set(found)
    if "tablefunc" in installed:
        assert {"crosstab", "connectby"} <= set(found)
    assert {"word_stats", "run_it"} <= set(found)  # the owner's own: a wrapper, and dynamic SQL
    assert found["word_stats"] == "calls ts_stat"
    everyday = EVERYDAY | (POSTGIS_EVERYDAY if "postgis" in installed else set())
    assert not everyday & set(found), everyday & set(found)
    assert "shout" not in found


def test_etc_passwd_through_ts_stat_or_ts_rewrite_is_refused(pg_shop: PgShop,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    for url in (pg_shop.reader_url, pg_shop.superuser_url):
        if url == pg_shop.superuser_url:
            monkeypatch.setenv(ENV_ALLOW_PRIVILEGED, "1")  # even when the user insists on the superuser
        for sql, name in ((PASSWD_BY_TS_STAT, "ts_stat"), (PASSWD_BY_TS_REWRITE, "ts_rewrite"),
                          (SET_CONFIG_BY_TS_STAT, "ts_stat")):
            with pytest.raises(UnsafeSQLError) as refused:
                execute_query(url, sql)
            assert f"function '{name}' is not allowed" in str(refused.value)
            assert "catalog" in str(refused.value)


@pytest.mark.parametrize("sql", [
    "SELECT query_to_xml('SELECT name FROM customer', true, true, '')",
    "SELECT Query_To_Xml('SELECT name FROM customer', true, true, '')",
    r"""SELECT U&"query\005fto_xml"('SELECT name FROM customer', true, true, '')""",  # the name spelled in escapes
    r"""SELECT U&"t\0073_stat"('SELECT to_tsvector(''a b'')')""",
    "SELECT pg_catalog.ts_stat ('SELECT to_tsvector(''a'')')",
    """SELECT "ts_stat"('SELECT to_tsvector(''a'')')""",
    "SELECT (SELECT count(*) FROM ts_stat/**/('SELECT to_tsvector(''a'')')) AS n",
])
def test_sql_executing_functions_are_refused_however_spelled(pg_shop: PgShop, sql: str) -> None:
    with pytest.raises(UnsafeSQLError):
        execute_query(pg_shop.reader_url, sql)
    assert execute_query(pg_shop.reader_url, "SELECT count(*) FROM customer").rows == [(3,)]


def test_called_names_decode_unicode_identifiers() -> None:
    assert "ts_stat" in called_names(r"""SELECT U&"t\0073_stat"('x')""")
    assert "ts_stat" in called_names(r"""SELECT U&"t\+000073_stat"('x')""")
    assert "ts_rewrite" in called_names("""SELECT E'\\'', "TS_REWRITE" (a, 'b')""")


def test_a_superuser_is_refused_in_one_line_naming_the_recipe(pg_shop: PgShop) -> None:
    with pytest.raises(PrivilegedRoleError) as refused:
        execute_query(pg_shop.superuser_url, "SELECT count(*) FROM customer")
    message = str(refused.value)
    assert "\n" not in message and "'postgres' is a superuser" in message
    assert ROLE_RECIPE in message and "--allow-privileged" in message
    assert pg_shop.cluster.password not in message


def test_with_allow_privileged_a_superuser_runs(pg_shop: PgShop, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_ALLOW_PRIVILEGED, "1")
    assert execute_query(pg_shop.superuser_url, "SELECT count(*) FROM customer").rows == [(3,)]


def test_a_role_that_can_write_one_table_is_refused(pg_shop: PgShop) -> None:
    role = f"kg_writer_{uuid.uuid4().hex[:6]}"
    url = pg_shop.cluster.create_reader(pg_shop.database, role, "wr1ter-Secret-55")
    assert execute_query(url, "SELECT count(*) FROM orders").rows == [(4,)]
    pg_shop.cluster.sql(f"GRANT UPDATE ON orders TO {role}", database=pg_shop.database)
    engines.close_all()  # the role's privileges are read once per connection
    try:
        with pytest.raises(PrivilegedRoleError, match=r"may write table orders"):
            execute_query(url, "SELECT count(*) FROM orders")
    finally:
        pg_shop.cluster.sql(f"REVOKE UPDATE ON orders FROM {role}", database=pg_shop.database)
        engines.close_all()


def test_the_select_only_recipe_has_no_problems(pg_shop: PgShop) -> None:
    import psycopg

    with psycopg.connect(pg_shop.reader_url, autocommit=True) as conn:
        assert role_problems(lambda sql: conn.execute(sql).fetchall()) == []


def test_a_to_program_function_never_runs_as_a_privileged_role(pg_shop: PgShop,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = pg_shop.cluster
    marker = cluster.root / f"pwned-{uuid.uuid4().hex[:8]}"  # a folder the server's user may write to
    function = f"kg_touch_{uuid.uuid4().hex[:6]}"
    cluster.sql(f"CREATE FUNCTION {function}() RETURNS integer LANGUAGE plpgsql AS $$ BEGIN "
                f"COPY (SELECT 1) TO PROGRAM 'touch {marker}'; RETURN 1; END $$", database=pg_shop.database)
    try:
        with pytest.raises(PrivilegedRoleError):  # refused before anything runs
            execute_query(pg_shop.superuser_url, f"SELECT {function}()")
        assert not marker.exists()
        with pytest.raises((SQLQueryError, UnsafeSQLError, QueryExecutionError)):  # the reader may not run programs
            execute_query(pg_shop.reader_url, f"SELECT {function}()")
        assert not marker.exists()
        monkeypatch.setenv(ENV_ALLOW_PRIVILEGED, "1")  # what the refusal stands between: the file appears
        execute_query(pg_shop.superuser_url, f"SELECT {function}()")
        assert marker.exists()
    finally:
        cluster.sql(f"DROP FUNCTION {function}()", database=pg_shop.database)
        marker.unlink(missing_ok=True)


def test_ingest_of_a_privileged_role_goes_on_with_one_warning(pg_shop: PgShop,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    engines.close_all()
    with caplog.at_level(logging.WARNING, logger="kgsql.ingest"):
        schema = read_database(pg_shop.superuser_url, with_stats=False)
        read_database(pg_shop.superuser_url, with_stats=False)
    assert {t.name for t in schema.tables} == {"customer", "product", "orders"}
    warnings = [r.getMessage() for r in caplog.records if "superuser" in r.getMessage()]
    assert len(warnings) == 1 and ROLE_RECIPE in warnings[0]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="kgsql.ingest"):
        read_database(pg_shop.reader_url, with_stats=False)
    assert not caplog.records


def test_the_catalog_is_read_once_per_connection(pg_shop: PgShop, monkeypatch: pytest.MonkeyPatch) -> None:
    from kgsql.db.engines import postgres

    reads: list[str] = []
    real = postgres.reaching_functions
    monkeypatch.setattr(postgres, "reaching_functions", lambda run: reads.append("read") or real(run))
    engines.close_all()
    for _ in range(3):
        execute_query(pg_shop.reader_url, "SELECT count(*) FROM customer")
    assert reads == ["read"]


@pytest.mark.parametrize("argv", [
    ["kgsql.ask", "how many?", "--db", "shop", "--allow-privileged"],
    ["kgsql.serve.__main__", "--allow-privileged"],
    ["kgsql.mcp.__main__", "--allow-privileged"],
])
def test_the_commands_that_run_generated_sql_take_allow_privileged(argv: list[str]) -> None:
    import importlib

    module = importlib.import_module(argv[0])
    assert module.build_parser().parse_args(argv[1:]).allow_privileged is True
    assert module.build_parser().parse_args(argv[1:-1]).allow_privileged is False


def test_eval_run_takes_allow_privileged(tmp_path: Path) -> None:
    from kgsql.eval.__main__ import build_parser
    from kgsql.eval.datasets import available_benchmarks

    argv = ["run", "--dataset", available_benchmarks()[0], "--data-dir", str(tmp_path), "--allow-privileged"]
    parser, _module = build_parser(argv)
    assert parser.parse_args(argv).allow_privileged is True


def test_allow_privileged_reaches_the_environment_of_ask(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    import kgsql.ask
    from kgsql.errors import KgsqlError

    def stop(*_args: object) -> None:
        raise KgsqlError("no service in this test")

    monkeypatch.setenv(ENV_ALLOW_PRIVILEGED, "0")
    monkeypatch.setattr(kgsql.ask, "_via_service", stop)
    assert kgsql.ask.main(["how many?", "--db", "shop", "--allow-privileged"]) == 1
    assert os.environ[ENV_ALLOW_PRIVILEGED] == "1"


def test_asking_on_a_superuser_ends_in_the_one_line_refusal(schema_graph, pg_shop: PgShop,  # type: ignore[no-untyped-def]
                                                             unique_name) -> None:
    from kgsql.llm.scripted import ScriptedLM
    from kgsql.methods import build
    from kgsql.text.encoder import HashEncoder
    from kgsql.retrieve.selection import SchemaSelection

    class WholeSchema:
        def select(self, schema, question, db_path=None):  # type: ignore[no-untyped-def]
            return SchemaSelection(schema.name, question, tables=[t.name for t in schema.tables])

    name = unique_name("shop_super")
    schema_graph.ingest(pg_shop.superuser_url, name=name)
    lm = ScriptedLM(["SELECT count(*) FROM customer"] * 3)
    method = build("kgsql", schema_graph, lm, encoder=HashEncoder(), retriever=WholeSchema(), samples=0)
    try:
        answer = method.ask("How many customers?", db=name)
    except PrivilegedRoleError as exc:
        message = str(exc)
    else:
        assert answer.rows is None or answer.rows == []
        message = answer.error or ""
    assert "is a superuser" in message and "--allow-privileged" in message
    assert len(lm.calls) <= 1  # not retried as if the SQL were wrong
