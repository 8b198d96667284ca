"""The explanation of an answer's SQL, from the SQL and the real graph: joins over each edge origin
(declared, discovered, mined) and a join no edge links; filters with stored values; aggregation in words."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kgsql.generate.explain import explain_sql
from shop_db import shop_schema


@pytest.fixture(scope="module")
def shop(schema_graph: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shop_schema(schema_graph, tmp_path_factory.mktemp("shop"), "explain_shop")


def test_each_join_names_the_graph_edge_it_follows_and_its_origin(shop: Any) -> None:
    sql = ("SELECT c.name, sum(p.amount) FROM customers AS c JOIN orders AS o ON o.customer_id = c.customer_id "
           "JOIN payments AS p ON p.order_id = o.order_id JOIN performers AS f ON c.city = f.city GROUP BY c.name")
    explained = explain_sql(sql, shop)
    assert [(j.left, j.right, j.origin) for j in explained.joins] == [
        ("orders.customer_id", "customers.customer_id", "declared"),
        ("payments.order_id", "orders.order_id", "discovered"),
        ("customers.city", "performers.city", "mined")]
    assert explained.joins[0].text == ("orders.customer_id = customers.customer_id: follows the declared key "
                                       "orders.customer_id -> customers.customer_id")
    assert explained.joins[1].text.endswith("follows the discovered key payments.order_id -> orders.order_id")
    assert explained.joins[2].text.endswith("follows the mined key customers.city -> performers.city")
    assert [t["table"] for t in explained.tables] == ["customers", "orders", "payments", "performers"]
    assert "Computes the sum of payments.amount per customers.name" in explained.lines()


def test_a_join_no_edge_links_is_said_so(shop: Any) -> None:
    # the example: customers joined to performers on two unrelated ids
    sql = "SELECT c.name FROM customers AS c JOIN performers AS p ON c.customer_id = p.performer_id"
    (join,) = explain_sql(sql, shop).joins
    assert (join.origin, join.text) == (None, "customers.customer_id = performers.performer_id: "
                                              "no edge in the graph links these columns")


def test_joins_in_where_and_in_subqueries_count_too(shop: Any) -> None:
    implicit = explain_sql("SELECT name FROM customers, orders WHERE orders.customer_id = customers.customer_id",
                           shop)
    semi = explain_sql("SELECT name FROM customers WHERE customer_id NOT IN (SELECT customer_id FROM orders)", shop)
    same = explain_sql("SELECT name FROM customers WHERE customer_id NOT IN "
                       "(SELECT c.customer_id FROM customers AS c WHERE c.city = 'Oslo')", shop)
    self_join = explain_sql("SELECT a.name FROM customers AS a JOIN customers AS b ON a.city = b.city", shop)
    assert same.joins == []  # a table filtered by a subquery over itself: no join
    assert [(j.left, j.right, j.origin) for j in self_join.joins] == [("customers.city", "customers.city", None)]
    assert [j.origin for j in implicit.joins] == ["declared"]
    assert [(j.left, j.right, j.origin) for j in semi.joins] == [
        ("customers.customer_id", "orders.customer_id", "declared")]


def test_filters_carry_the_stored_value_they_match(shop: Any) -> None:
    found = explain_sql("SELECT name FROM customers WHERE city = 'Oslo' AND customer_id > 1", shop)
    probed = explain_sql("SELECT count(*) FROM orders WHERE status = 'shipped'", shop,
                         probe=lambda table, column, text: "shipped" if (table, column) == ("orders", "status")
                         else None)
    missing = explain_sql("SELECT name FROM customers WHERE city = 'Paris'", shop)
    city, ident = found.filters
    assert (city.column, city.op, city.value, city.stored) == ("customers.city", "=", "Oslo", "Oslo")
    assert city.text == "customers.city = 'Oslo'; stored value: Oslo"
    assert (ident.column, ident.op, ident.value, ident.stored) == ("customers.customer_id", ">", "1", None)
    assert probed.filters[0].stored == "shipped"
    assert missing.filters[0].text == "customers.city = 'Paris'; no stored value known to match"


def test_aggregation_and_ranking_in_words(shop: Any) -> None:
    lines = explain_sql("SELECT city, count(*) FROM customers GROUP BY city ORDER BY count(*) DESC LIMIT 2",
                        shop).lines()
    assert lines == ["Reads customers", "Computes the number of rows per customers.city",
                     "Keeps the 2 row(s) with the highest number of rows"]
    assert explain_sql("SELECT avg(DISTINCT amount) FROM payments", shop).aggregation == \
        ["Computes the average of distinct payments.amount"]


def test_sql_that_does_not_parse_is_not_explained(shop: Any) -> None:
    explained = explain_sql("SELEC name FROM", shop)
    assert not explained.parsed and explained.lines() == ["The SQL could not be parsed, so it is not explained."]
