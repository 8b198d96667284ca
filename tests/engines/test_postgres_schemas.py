"""A PostgreSQL database with several schemas (issue 33): every schema the role may read is ingested, a
table outside the search path is named and queried ``schema.table``, and a same-named table in two
schemas is two tables."""
from __future__ import annotations

import logging

import pytest

from kgsql.lab.pg_cluster import TempCluster
from kgsql.llm.scripted import ScriptedLM
from kgsql.methods import build
from kgsql.retrieve.selection import SchemaSelection
from kgsql.text.encoder import HashEncoder

TABLES = (
    "CREATE SCHEMA sales",
    "CREATE SCHEMA hr",
    "CREATE SCHEMA vault",
    "CREATE TABLE hr.staff (id INTEGER PRIMARY KEY, name TEXT NOT NULL, dept TEXT)",
    "CREATE TABLE orders (id INTEGER PRIMARY KEY, amount NUMERIC)",  # public.orders
    "CREATE TABLE sales.orders (id INTEGER PRIMARY KEY, customer TEXT, amount NUMERIC, "
    "rep_id INTEGER REFERENCES hr.staff (id))",
    "CREATE TABLE vault.secrets (id INTEGER PRIMARY KEY, code TEXT)",  # the reader gets no USAGE on vault
    "INSERT INTO hr.staff VALUES (1, 'Alice Moreau', 'north'), (2, 'Bo Lind', 'south')",
    "INSERT INTO orders VALUES (1, 5)",
    "INSERT INTO sales.orders VALUES (10, 'Acme', 250, 1), (11, 'Birch', 40, 2), (12, 'Cedar', 900, 1)",
    "INSERT INTO vault.secrets VALUES (1, 'x')",
)


class WholeSchema:
    def select(self, schema, question, db_path=None):  # type: ignore[no-untyped-def]
        return SchemaSelection(schema.name, question, tables=[t.name for t in schema.tables])


@pytest.fixture(scope="module")
def office(pg_cluster: TempCluster) -> str:
    """The office database's URL for a SELECT-only role on public, sales and hr (not vault)."""
    pg_cluster.create_database("office")
    pg_cluster.sql(*TABLES, database="office")
    return pg_cluster.create_reader("office", "office_reader", schemas=("public", "sales", "hr"))


def test_every_readable_schema_is_ingested_qualified(office: str, schema_graph, unique_name,  # type: ignore[no-untyped-def]
                                                     caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="kgsql.ingest")
    db = unique_name("office")
    schema_graph.ingest(office, name=db)
    schema = schema_graph.schema(db)
    assert {t.name: t.row_count for t in schema.tables} == {"orders": 1, "hr.staff": 2, "sales.orders": 3}
    assert ("sales.orders", "rep_id", "hr.staff", "id") in {
        (f.table, f.column, f.ref_table, f.ref_column) for f in schema.foreign_keys}
    staff = schema.table("hr.staff")
    assert "Alice Moreau" in staff.column("name").value_examples  # statistics read from the qualified table
    assert "vault.secrets" in caplog.text and "cannot read" in caplog.text


def test_a_question_is_answered_on_the_qualified_tables(office: str, schema_graph, unique_name) -> None:  # type: ignore[no-untyped-def]
    db = unique_name("office")
    schema_graph.ingest(office, name=db)
    # the model writes a name's case wrongly; the value check probes hr.staff and names the stored spelling
    written = ("SELECT s.name, SUM(o.amount) FROM sales.orders AS o JOIN hr.staff AS s ON o.rep_id = s.id "
               "WHERE s.name = 'alice moreau' GROUP BY s.name")
    fixed = written.replace("'alice moreau'", "'Alice Moreau'")
    lm = ScriptedLM([written, fixed])
    method = build("kgsql", schema_graph, lm, encoder=HashEncoder(), retriever=WholeSchema(), samples=0)
    answer = method.ask("How much did Alice Moreau sell?", db=db)
    first, second = lm.calls[0].prompt, lm.calls[1].prompt
    assert "CREATE TABLE hr.staff" in first and "CREATE TABLE sales.orders" in first
    assert "CREATE TABLE orders" in first  # the search path's table keeps its own name
    assert "REFERENCES hr.staff(id)" in first and "sales.orders.rep_id = hr.staff.id" in first
    assert "the closest value is 'Alice Moreau'" in second
    assert answer.error is None and answer.sql == fixed
    assert not {"no-edge-join", "unused-table"} & {w["code"] for w in answer.warnings}  # flags read qualified names
    assert [tuple(str(v) for v in row) for row in answer.rows] == [("Alice Moreau", "1150")]


def test_qualified_names_resolve_and_quote() -> None:
    """``hr.staff`` is the graph's table; ``public.orders`` is ``orders``; a schema the graph lacks is unknown."""
    from kgsql.db.engines.postgres import PostgresEngine
    from kgsql.schema.model import Column, DatabaseSchema, Table
    from kgsql.sql.names import SchemaNames, analyse, parse_sql

    schema = DatabaseSchema(name="office", dialect="postgres", tables=[
        Table("orders", [Column("id")]), Table("hr.staff", [Column("id"), Column("Name")])])
    names = SchemaNames(schema)

    def unknown(sql: str) -> list[str]:
        return [p.name for p in analyse(parse_sql(sql, "postgres"), names) if p.kind == "no_such_table"]

    assert unknown("SELECT s.name FROM hr.staff AS s JOIN public.orders AS o ON o.id = s.id") == []
    assert unknown("SELECT name FROM staff") == ["staff"] and unknown("SELECT id FROM sales.staff") == ["sales.staff"]
    assert PostgresEngine.quote_table("hr.staff") == '"hr"."staff"'
    assert PostgresEngine.table_ref("hr.Staff") == 'hr."Staff"' and PostgresEngine.table_ref("orders") == "orders"
