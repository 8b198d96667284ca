"""``fanout-join``: a table joined for none of its columns, on the side with many rows per key, copies rows.
On the real shop file (an order has several payments), through the review every answer gets."""
from __future__ import annotations

from typing import Any

import pytest

from kgsql.generate.fanout import fanout_joins
from kgsql.sql.names import parse_sql
from shop_db import shop_schema
from test_flags import answered, codes

THREE_TABLES = ("FROM customers AS c JOIN orders AS o ON o.customer_id = c.customer_id "
                "JOIN payments AS p ON p.order_id = o.order_id")


@pytest.fixture(scope="module")
def shop(schema_graph: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shop_schema(schema_graph, tmp_path_factory.mktemp("shop"), "fanout_shop")


def test_a_join_that_only_copies_rows_inflates_the_count_and_is_flagged(shop: Any) -> None:
    answer = answered(shop, "How many orders did each customer place?",
                      f"SELECT c.name, count(*) {THREE_TABLES} GROUP BY c.name ORDER BY c.name")
    assert answer.rows[0] == ("Ann", 3)  # Ann placed 2 orders; one of them has two payments
    assert codes(answer) == ["fanout-join"]
    assert answer.warnings[0]["text"] == ("the query joins payments AS p for none of its columns: each row is "
                                          "copied once per matching row of payments AS p, which changes counts "
                                          "and sums")


def test_the_same_count_without_the_join_is_clean(shop: Any) -> None:
    answer = answered(shop, "How many orders did each customer place?",
                      "SELECT c.name, count(*) FROM customers AS c JOIN orders AS o ON o.customer_id = c.customer_id "
                      "GROUP BY c.name ORDER BY c.name")
    assert answer.rows[0] == ("Ann", 2) and answer.warnings == []


@pytest.mark.parametrize("question, sql", [
    # the copied rows are what the question counts
    ("How many payments did each customer make?", f"SELECT c.name, count(*) {THREE_TABLES} GROUP BY c.name"),
    # the question asks for the table by a word nothing else in the query holds: an existence filter
    ("Which customers have made a payment?", f"SELECT c.name {THREE_TABLES}"),
    # copies do not count: DISTINCT, COUNT(DISTINCT), MAX, a set operation, an IN test, one row picked
    ("Which customers placed orders?", f"SELECT DISTINCT c.name {THREE_TABLES}"),
    ("How many orders did each customer place?",
     f"SELECT c.name, count(DISTINCT o.order_id) {THREE_TABLES} GROUP BY c.name"),
    ("What is the latest order of each customer?", f"SELECT c.name, max(o.order_id) {THREE_TABLES} GROUP BY c.name"),
    ("Which customers placed no order?", f"SELECT name FROM customers EXCEPT SELECT c.name {THREE_TABLES}"),
    ("Which customers placed orders?",
     f"SELECT name FROM customers WHERE customer_id IN (SELECT c.customer_id {THREE_TABLES})"),
    ("Which customer placed the latest order?", f"SELECT c.name {THREE_TABLES} ORDER BY o.order_id DESC LIMIT 1"),
    # a GROUP BY without aggregates, SELECT *, and a subquery whose copies an outer query may remove
    ("Which customers placed orders?", f"SELECT c.name {THREE_TABLES} GROUP BY c.name"),
    ("Show the customers and their orders.", f"SELECT * {THREE_TABLES}"),
    ("How many customers placed an order?", f"SELECT count(DISTINCT name) FROM (SELECT c.name {THREE_TABLES})"),
    # a join to the one side (a key to a primary key) at most filters rows
    ("How many orders are there?",
     "SELECT count(*) FROM orders AS o JOIN customers AS c ON o.customer_id = c.customer_id"),
    # a self-join pairs rows on purpose
    ("Which cities have two customers?",
     "SELECT a.city FROM customers AS a JOIN customers AS b ON a.city = b.city GROUP BY a.city HAVING count(*) >= 4"),
])
def test_joins_whose_copies_change_nothing_or_are_asked_for_are_not_flagged(shop: Any, question: str, sql: str) -> None:
    assert fanout_joins(question, parse_sql(sql, "sqlite"), shop) == []


def test_copied_rows_of_a_plain_select_are_flagged(shop: Any) -> None:
    """No aggregate: each customer is listed once per payment of each order."""
    sql = f"SELECT c.name, o.status {THREE_TABLES} WHERE c.city = 'Oslo'"
    assert fanout_joins("List the status of every order of the customers in Oslo.", parse_sql(sql, "sqlite"), shop) \
        == ["payments AS p"]


def test_a_plural_in_ies_names_its_table() -> None:
    from kgsql.generate.fanout import _said

    # "the legality status of these cards" asks for `legalities`: the join is what the question wants
    assert _said("legalities", {"legality"}) and _said("company", {"companies"}) and not _said("count", {"country"})


def test_a_listed_row_a_join_copied_is_flagged_by_asking_the_database(shop: Any) -> None:
    """``copied-rows``: Ann placed two orders, so joining orders lists her twice; the database, asked for the
    shown table's key, says the same customer came back twice."""
    answer = answered(shop, "Which customers placed an order?",
                      "SELECT c.name FROM customers AS c JOIN orders AS o ON o.customer_id = c.customer_id")
    assert sorted(answer.rows) == [("Ann",), ("Ann",), ("Bo",), ("Cy",)]
    assert codes(answer) == ["copied-rows"]
    assert answer.warnings[0]["text"] == ("the answer shows the same row of customers AS c more than once: a join "
                                          "copied it (DISTINCT, or IN instead of the join?)")


@pytest.mark.parametrize("sql", [
    # two customers of one city: the rows repeat, the customers do not
    "SELECT c.city FROM orders AS o JOIN customers AS c ON o.customer_id = c.customer_id WHERE o.status = 'open'",
    # copies removed, or no join to make them
    "SELECT DISTINCT c.name FROM customers AS c JOIN orders AS o ON o.customer_id = c.customer_id",
    "SELECT city FROM customers",
    # shown columns of two tables: which one repeats is not one table's row
    "SELECT c.city, o.status FROM customers AS c JOIN orders AS o ON o.customer_id = c.customer_id",
])
def test_rows_that_repeat_without_a_copied_row_are_not_flagged(shop: Any, sql: str) -> None:
    answer = answered(shop, "Which customers placed an order?", sql)
    assert "copied-rows" not in codes(answer) and answer.error is None


def test_the_database_is_asked_only_when_rows_repeat_and_only_with_a_probe(shop: Any) -> None:
    from kgsql.generate.explain import explain_sql
    from kgsql.generate.fanout import copied_rows
    from kgsql.generate.flags import answer_flags

    tree = parse_sql("SELECT c.name FROM customers AS c JOIN orders AS o ON o.customer_id = c.customer_id", "sqlite")
    asked: list[str] = []
    rows = [("Ann",), ("Ann",)]
    assert copied_rows(tree, shop, rows, lambda sql: asked.append(sql) or True) == ["customers AS c"]
    assert 'GROUP BY "customer_id" HAVING COUNT(*) > 1' in asked[0]
    assert copied_rows(tree, shop, [("Ann",), ("Bo",)], lambda sql: asked.append(sql) or True) == []
    assert len(asked) == 1  # rows that do not repeat are not asked about
    sql = "SELECT c.name FROM customers AS c JOIN orders AS o ON o.customer_id = c.customer_id"
    flags = answer_flags(question="Which customers placed an order?", sql=sql, schema=shop,
                         explanation=explain_sql(sql, shop), rows=rows)  # no probe: not looked for
    assert "copied-rows" not in [f.code for f in flags]


def test_the_probe_names_the_shown_table_as_the_query_writes_it() -> None:
    """PostgreSQL folds an unquoted alias to lower case: the probe must not quote ``T1`` (it would name no table)."""
    from kgsql.generate.fanout import copied_rows
    from kgsql.schema.model import Column, DatabaseSchema, Table

    schema = DatabaseSchema("cars", tables=[
        Table("countries", columns=[Column("CountryId", "INTEGER", is_primary_key=True), Column("CountryName")]),
        Table("car_makers", columns=[Column("Id", "INTEGER", is_primary_key=True), Column("Country", "INTEGER")])],
        dialect="postgres")
    tree = parse_sql("SELECT T1.CountryName FROM countries AS T1 JOIN car_makers AS T2 ON T1.CountryId = T2.Country",
                     "postgres")
    asked: list[str] = []
    assert copied_rows(tree, schema, [("France",), ("France",)], lambda sql: asked.append(sql) or True,
                       "postgres") == ["countries AS T1"]
    assert 'T1."CountryId"' in asked[0] and '"T1"' not in asked[0]


def test_copies_counted_under_a_distinct_and_at_least_n_are_flagged(shop: Any) -> None:
    """"at least two customers" counts customers, and a DISTINCT on the cities shown does not undo the orders'
    copies that HAVING count(*) counted: Oslo's two customers come back as three rows, Rome's one as one."""
    sql = ("SELECT DISTINCT c.city FROM customers AS c JOIN orders AS o ON o.customer_id = c.customer_id "
           "GROUP BY c.city HAVING count(*) >= 2")
    assert fanout_joins("Which cities have at least two customers?", parse_sql(sql, "sqlite"), shop) == ["orders AS o"]
    # without an aggregate that counts them, the DISTINCT does remove the copies
    plain = "SELECT DISTINCT c.city FROM customers AS c JOIN orders AS o ON o.customer_id = c.customer_id"
    assert fanout_joins("Which cities have customers with orders?", parse_sql(plain, "sqlite"), shop) == []
