"""The explanation of an answer's SQL, from the SQL and the real graph: joins over each edge origin
(declared, discovered, mined), a join no edge links and a join by location on the shipped SpatiaLite example;
filters with stored values; aggregation in words."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kgsql.generate.explain import explain_sql
from kgsql.generate.flags import answer_flags
from kgsql.ingest.reader import read_database
from kgsql.schema.model import DatabaseSchema
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


@pytest.fixture(scope="module")
def geo(example_db: Path) -> DatabaseSchema:
    return read_database(example_db)


@pytest.mark.parametrize("sql,join", [
    # SpatiaLite's predicate in ON, as the 1.5B writes it on the shipped example
    ("SELECT T1.name FROM provinces AS T1 JOIN cities AS T2 ON Within(T2.Location, T1.Shape) = 1 GROUP BY T1.name",
     ("cities.Location", "provinces.Shape", "lies within", "cities inside provinces")),
    # PostGIS's name, in WHERE; the pairing is the graph's whichever table comes first
    ("SELECT r.name FROM rivers AS r, provinces AS p WHERE ST_Intersects(p.Shape, r.Shape) AND p.name = 'Northmark'",
     ("provinces.Shape", "rivers.Shape", "intersects", "rivers crossing provinces")),
    # by distance: a predicate with its bound, or a distance compared with one
    ("SELECT c.name FROM cities AS c JOIN rivers AS r ON PtDistWithin(c.Location, r.Shape, 5000)",
     ("cities.Location", "rivers.Shape", "lies within 5000 of", "cities near rivers")),
    ("SELECT c.name FROM cities AS c JOIN rivers AS r ON Distance(c.Location, r.Shape, 1) < 1000",
     ("cities.Location", "rivers.Shape", "lies within 1000 metres of", "cities near rivers")),
    ("SELECT c.name FROM cities AS c JOIN rivers AS r ON ST_DWithin(c.Location::geography, r.Shape::geography, 500)",
     ("cities.Location", "rivers.Shape", "lies within 500 metres of", "cities near rivers")),  # PostGIS, metres
    ("SELECT r.name FROM rivers AS r JOIN provinces AS p ON MbrIntersects(r.Shape, p.Shape)",
     ("rivers.Shape", "provinces.Shape", "intersects, by bounding box,", "rivers crossing provinces")),
])
def test_a_join_by_location_is_said_with_the_graphs_pairing(geo: DatabaseSchema, sql: str,
                                                             join: tuple[str, str, str, str]) -> None:
    left, right, words, pairing = join
    explained = explain_sql(sql, geo)
    (step,) = explained.joins
    assert (step.left, step.right, step.origin) == (left, right, "location")
    assert step.text == (f"{left} {words} {right}: a location relation, no key "
                         f"(the graph pairs their geometry types: {pairing})")
    assert f"Joins {step.text}" in explained.lines()


def test_a_location_join_is_no_missing_edge_and_a_geometry_with_itself_joins_nothing(geo: DatabaseSchema) -> None:
    sql = "SELECT T1.name FROM provinces AS T1 JOIN cities AS T2 ON Within(T2.Location, T1.Shape) = 1"
    flags = answer_flags(question="Which provinces have cities?", sql=sql, schema=geo,
                         explanation=explain_sql(sql, geo), rows=[("Northmark",)])
    assert "no-edge-join" not in {f.code for f in flags}
    # two relations of one pair are both said: the bound of a distance is where "20 km" written as 20 shows
    both = explain_sql("SELECT c.name FROM cities AS c JOIN rivers AS r ON Intersects(r.Shape, c.Location) = 1 "
                       "WHERE Distance(r.Shape, c.Location, 1) <= 20", geo)
    assert [j.text.split(":")[0] for j in both.joins] == ["rivers.Shape intersects cities.Location",
                                                          "rivers.Shape lies within 20 metres of cities.Location"]
    itself = "SELECT r.name FROM rivers AS r JOIN provinces AS p ON Intersects(p.Shape, p.Shape) = 1"
    assert explain_sql(itself, geo).joins == []
    odd = explain_sql("SELECT c.name FROM cities AS c JOIN river_cities AS rc ON Within(c.Location, rc.city_id)", geo)
    assert [j.text for j in odd.joins] == ["cities.Location lies within river_cities.city_id: a location relation, "
                                           "no key (the graph pairs these tables' geometry types in no known way)"]
