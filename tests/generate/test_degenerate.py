"""Answers the query's form decides (``echo``, ``count-per-unique``, ``text-for-number``, ``unlinked-join``), on
the real shop file through the review every answer gets, and the forms each leaves alone."""
from __future__ import annotations

from typing import Any

import pytest

from kgsql.schema.model import Column, ColumnStats
from shop_db import shop_schema
from test_flags import answered, codes


@pytest.fixture(scope="module")
def shop(schema_graph: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shop_schema(schema_graph, tmp_path_factory.mktemp("shop"), "degenerate_shop")


def test_an_answer_that_repeats_the_question_is_flagged(shop: Any) -> None:
    echo = answered(shop, "Describe the customers of Oslo.", "SELECT city FROM customers WHERE city = 'Oslo'")
    assert echo.rows == [("Oslo",), ("Oslo",)] and codes(echo) == ["echo"]
    assert echo.warnings[0]["text"] == ("the query shows only city, which its WHERE fixes to a value: the answer "
                                        "repeats the question")
    names = answered(shop, "Describe the customers of Oslo.", "SELECT name FROM customers WHERE city = 'Oslo'")
    counted = answered(shop, "How many customers live in Oslo?",
                       "SELECT city, count(*) FROM customers WHERE city = 'Oslo' GROUP BY city")
    assert names.warnings == [] and counted.warnings == []


def test_rows_counted_per_the_primary_key_are_flagged(shop: Any) -> None:
    per_key = answered(shop, "Which customer id appears most often?",
                       "SELECT customer_id FROM customers GROUP BY customer_id ORDER BY count(*) DESC LIMIT 1")
    assert codes(per_key) == ["count-per-unique"]
    assert per_key.warnings[0]["text"] == ("the query counts rows per customers.customer_id, which is unique: "
                                           "every count is 1")
    # counted where the key repeats, or across a join: the counts mean something
    orders = answered(shop, "Which customer placed the most orders?",
                      "SELECT customer_id FROM orders GROUP BY customer_id ORDER BY count(*) DESC LIMIT 1")
    joined = answered(shop, "Which customer placed the most orders?",
                      "SELECT c.name FROM customers AS c JOIN orders AS o ON o.customer_id = c.customer_id "
                      "GROUP BY c.customer_id ORDER BY count(*) DESC LIMIT 1")
    assert orders.warnings == [] and joined.warnings == [] and joined.rows == [("Ann",)]


def test_a_number_column_compared_with_a_word_is_flagged(shop: Any) -> None:
    answer = answered(shop, "How many orders did Ann place?", "SELECT count(*) FROM orders WHERE customer_id = 'Ann'")
    assert answer.rows == [(0,)] and codes(answer) == ["text-for-number"]
    assert answer.warnings[0]["text"] == ("the query compares orders.customer_id, which holds numbers, with the "
                                          "text 'Ann', which it does not hold")
    quoted_number = answered(shop, "How many orders did customer 1 place?",
                             "SELECT count(*) FROM orders WHERE customer_id = '1'")
    assert quoted_number.warnings == []


def test_what_holds_numbers_is_read_from_the_values_before_the_type() -> None:
    keys_as_text = Column("country", "TEXT", value_examples=["1", "2"], stats=ColumnStats(sample=["3"]))
    words_in_an_int = Column("flag", "INTEGER", value_examples=["T", "F"])
    assert keys_as_text.holds_numbers and not words_in_an_int.holds_numbers
    assert Column("price", "DECIMAL(10,2)").holds_numbers and not Column("name", "TEXT").holds_numbers


def test_a_join_no_condition_ties_is_flagged(shop: Any) -> None:
    question = "Which customers live in Pia's city?"
    crossed = answered(shop, question, "SELECT c.name FROM customers AS c JOIN performers AS p ON p.city = p.city "
                                       "WHERE p.name = 'Pia'")
    assert len(crossed.rows) == 4 and codes(crossed) == ["unlinked-join"]  # every customer: a cross product
    assert crossed.warnings[0]["text"] == ("the query joins performers AS p with no condition tying it to the "
                                           "other tables: every row is paired with every row")
    tied = answered(shop, question, "SELECT c.name FROM customers AS c JOIN performers AS p "
                                    "ON c.city = p.city OR 1 = 0 WHERE p.name = 'Pia'")
    in_where = answered(shop, question, "SELECT c.name FROM customers AS c, performers AS p "
                                        "WHERE c.city = p.city AND p.name = 'Pia'")
    assert tied.warnings == [] and in_where.warnings == [] and sorted(tied.rows) == [("Ann",), ("Cy",)]


@pytest.mark.parametrize("question, sql", [
    ("What share of all payments is each payment?",  # a one-row total joined for a ratio
     "WITH tot AS (SELECT sum(amount) AS s FROM payments) SELECT p.amount / tot.s FROM payments AS p, tot"),
    ("Which customers placed orders?", "SELECT DISTINCT c.name FROM customers AS c NATURAL JOIN orders AS o"),
    ("Which customers live in the same city as a performer?",
     "SELECT DISTINCT customers.name FROM customers JOIN performers USING (city)"),
    ("How many customers are there, next to each id?",
     "SELECT customer_id, count(*) OVER () FROM customers GROUP BY customer_id"),
    ("Is Oslo the city of more than one customer?",
     "SELECT city FROM customers WHERE city = 'Oslo' GROUP BY city HAVING count(*) > 1"),
])
def test_forms_that_say_something_are_left_alone(shop: Any, question: str, sql: str) -> None:
    answer = answered(shop, question, sql)
    assert answer.rows and answer.warnings == [], answer.warnings


def test_a_word_stored_among_numbers_is_not_flagged(schema_graph: Any, tmp_path: Any) -> None:
    """Ingest sees the most frequent values (all numbers); the database is asked before the flag is raised."""
    import sqlite3

    path = tmp_path / "rooms.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE staff (name TEXT, room TEXT);"
                       + "".join(f"INSERT INTO staff VALUES ('p{i}', '{100 + i % 6}');" for i in range(30))
                       + "INSERT INTO staff VALUES ('Eric', '324B');")
    conn.commit()
    conn.close()
    schema_graph.ingest(path, name="degenerate_rooms")
    try:
        schema = schema_graph.schema("degenerate_rooms")
        assert schema.table("staff").column("room").holds_numbers  # as far as ingest saw
        from kgsql.generate.answer import Answer
        from kgsql.generate.review import review

        held = review(Answer(question="Who sits in room 324B?", db=schema.name,
                             sql="SELECT name FROM staff WHERE room = '324B'", rows=[("Eric",)]), schema)
        missing = review(Answer(question="Who sits in room 9Z?", db=schema.name,
                                sql="SELECT name FROM staff WHERE room = '9Z'", rows=[]), schema)
        assert codes(held) == [] and codes(missing) == ["text-for-number", "empty-result"]
    finally:
        schema_graph.drop("degenerate_rooms")


def test_groups_shown_only_by_their_aggregates_are_flagged(shop: Any) -> None:
    bare = answered(shop, "How many orders does each customer have?", "SELECT count(*) FROM orders GROUP BY customer_id")
    assert sorted(bare.rows) == [(1,), (1,), (2,)] and codes(bare) == ["unlabelled-groups"]
    assert bare.warnings[0]["text"] == ("the query groups by customer_id and shows only the aggregates: no row says "
                                        "which group it is")
    labelled = answered(shop, "How many orders does each customer have?",
                        "SELECT customer_id, count(*) FROM orders GROUP BY customer_id")
    one_row = answered(shop, "How many orders does customer 1 have?",
                       "SELECT count(*) FROM orders WHERE customer_id = 1 GROUP BY customer_id")
    assert one_row.rows == [(2,)] and one_row.warnings == []  # one group: nothing to tell apart
    one_group = answered(shop, "How many orders does the busiest customer have?",
                         "SELECT count(*) FROM orders GROUP BY customer_id ORDER BY count(*) DESC LIMIT 1")
    assert labelled.warnings == [] and one_group.warnings == []


def test_a_quantity_counted_instead_of_added_up_is_flagged(shop: Any) -> None:
    counted = answered(shop, "What is the total amount paid?", "SELECT count(amount) FROM payments")
    assert counted.rows == [(5,)] and codes(counted) == ["counted-measure"]
    assert counted.warnings[0]["text"] == ("the query counts the rows that have a payments.amount (COUNT); the "
                                           "amount they add up to is SUM")
    # an average written out, the different values, and a count of a key are counts meant
    for sql in ("SELECT sum(amount) / count(amount) FROM payments", "SELECT count(DISTINCT amount) FROM payments",
                "SELECT count(order_id) FROM payments", "SELECT sum(amount) FROM payments"):
        assert answered(shop, "What is the total amount paid?", sql).warnings == [], sql


def test_rows_that_tie_for_an_extreme_are_flagged(shop: Any) -> None:
    # Ann and Cy both live in Oslo, the first city after M: both rows pass the test
    tied = answered(shop, "Which customer lives in the first city after M?",
                    "SELECT name FROM customers WHERE city = (SELECT min(city) FROM customers WHERE city > 'M')")
    assert sorted(tied.rows) == [("Ann",), ("Cy",)] and codes(tied) == ["tied-extreme"]
    assert tied.warnings[0]["text"] == ("2 rows pass city = (SELECT MIN(city) FROM customers WHERE city > 'M'): "
                                        "they tie, and the question may ask for one")
    # one row back: nothing tied
    latest = answered(shop, "Which customer placed the most recent order?",
                      "SELECT c.name FROM customers AS c JOIN orders AS o ON o.customer_id = c.customer_id "
                      "WHERE o.order_id = (SELECT max(order_id) FROM orders)")
    assert latest.rows == [("Cy",)] and latest.warnings == []
    # one extreme per city (a correlated subquery): the rows are one per group, not a tie
    per_city = answered(shop, "Which customer has the largest id in each city?",
                        "SELECT name FROM customers AS c WHERE customer_id = "
                        "(SELECT max(customer_id) FROM customers AS d WHERE d.city = c.city)")
    assert len(per_city.rows) == 3 and "tied-extreme" not in codes(per_city)


def test_a_column_shown_beside_a_count_without_group_by_is_flagged(shop: Any) -> None:
    # "the number and status of the orders": one row, with the status of some order among four of two statuses
    counted = answered(shop, "Give the number and status of the orders.", "SELECT count(*), status FROM orders")
    assert counted.rows[0][0] == 4 and codes(counted) == ["ungrouped-column"]
    assert counted.warnings[0]["text"] == ("the query shows status beside a COUNT, SUM or AVG with no GROUP BY: one "
                                           "row, with the status of one of the rows it sums up, which hold several "
                                           "(GROUP BY?)")
    summed = answered(shop, "What did each customer pay?",
                      "SELECT c.name, sum(p.amount) FROM customers AS c JOIN orders AS o ON o.customer_id = "
                      "c.customer_id JOIN payments AS p ON p.order_id = o.order_id WHERE c.city = 'Oslo'")
    assert codes(summed) == ["ungrouped-column"]


@pytest.mark.parametrize("sql", [
    # the rows summed up hold one value there: Ann's name beside her orders' count
    "SELECT c.name, count(*) FROM customers AS c JOIN orders AS o ON o.customer_id = c.customer_id "
    "WHERE c.customer_id = 1",
    # grouped, a MIN/MAX's row (SQLite takes the extreme's row), a window, only aggregates
    "SELECT status, count(*) FROM orders GROUP BY status",
    "SELECT name, max(customer_id) FROM customers",
    "SELECT name, max(customer_id), count(*) FROM customers",
    "SELECT order_id, sum(amount) OVER () FROM payments",
    "SELECT count(*), sum(amount) FROM payments",
])
def test_counts_beside_one_value_or_grouped_are_not_flagged(shop: Any, sql: str) -> None:
    answer = answered(shop, "How many orders are there?", sql)
    assert answer.error is None and "ungrouped-column" not in codes(answer), sql


def test_the_ungrouped_columns_probe_reads_the_same_rows_in_each_dialect() -> None:
    from kgsql.generate.degenerate import ungrouped_columns
    from kgsql.sql.names import parse_sql

    asked: list[str] = []
    sql = 'SELECT count(*), "T"."Time" FROM train AS "T" WHERE "T".origin = \'Chennai\' ORDER BY 2 LIMIT 5'
    for dialect in ("sqlite", "postgres"):
        asked.clear()
        assert ungrouped_columns(parse_sql(sql, dialect), lambda q: asked.append(q) or True, dialect) == ['"T"."Time"']
        assert asked == ['SELECT 1 FROM (SELECT DISTINCT "T"."Time" FROM train AS "T" WHERE "T".origin = \'Chennai\') '
                         'AS shown_values LIMIT 1 OFFSET 1']
    assert ungrouped_columns(parse_sql(sql, "sqlite"), lambda q: False, "sqlite") == []
