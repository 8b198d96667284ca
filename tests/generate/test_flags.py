"""Each warning on a real SQLite database, through :func:`kgsql.generate.review.review` as every answer
gets it: the SQL run on the file for its rows, the joins checked against the real graph."""
from __future__ import annotations

from typing import Any

import pytest

from kgsql.db.isolate import execute_isolated
from kgsql.generate.answer import Answer
from kgsql.generate.flags import question_literals, unused_literals
from kgsql.generate.review import review
from kgsql.sql.names import parse_sql
from shop_db import shop_schema


@pytest.fixture(scope="module")
def shop(schema_graph: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shop_schema(schema_graph, tmp_path_factory.mktemp("shop"), "flags_shop")


def answered(shop: Any, question: str, sql: str, **fields: Any) -> Answer:
    """The reviewed answer ``sql`` gives on the shop file."""
    answer = Answer(question=question, db=shop.name, sql=sql, **fields)
    try:
        result = execute_isolated(shop.path, sql)
        answer.columns, answer.rows = result.columns, result.rows
    except Exception as exc:  # noqa: BLE001 - a failing query is an answer with an error
        answer.error = str(exc)
    return review(answer, shop)


def codes(answer: Answer) -> list[str]:
    return [w["code"] for w in answer.warnings]


def test_a_right_looking_answer_carries_no_flag(shop: Any) -> None:
    answer = answered(shop, "Which customers placed an order?",
                      "SELECT DISTINCT c.name FROM customers AS c JOIN orders AS o ON o.customer_id = c.customer_id",
                      selection={"tables": ["customers", "orders"]})
    assert answer.warnings == [] and answer.rows
    assert answer.explanation["lines"][:2] == ["Reads customers", "Reads orders"]


def test_the_issue_example_is_flagged_three_ways(shop: Any) -> None:
    # a join no edge links, a table the question names but the SQL ignores (selected or not: retrieval
    # chooses every named table), and no rows
    answer = answered(shop, "What are the names of customers who placed orders with performers?",
                      "SELECT c.name FROM customers AS c JOIN performers AS p ON c.customer_id = p.performer_id",
                      selection={"tables": ["customers", "performers"]})
    assert codes(answer) == ["no-edge-join", "unused-table", "empty-result"]
    assert answer.warnings[0]["text"] == ("joins customers.customer_id = performers.performer_id, "
                                          "which no graph edge links")
    assert answer.warnings[1]["text"] == "the question names table orders, which the query does not use"


def test_a_table_the_query_reaches_by_its_key_is_not_unused(shop: Any) -> None:
    answer = answered(shop, "How many orders did each customer place?",
                      "SELECT customer_id, count(*) FROM orders GROUP BY customer_id",
                      selection={"tables": ["customers", "orders"]})
    assert answer.warnings == []


def test_a_question_literal_the_query_leaves_out(shop: Any) -> None:
    answer = answered(shop, "How many customers live in 'Oslo' and have paid more than 1 time?",
                      "SELECT count(*) FROM customers WHERE city = 'Rome'")
    assert codes(answer) == ["unused-literal"]
    assert answer.warnings[0]["text"] == "the question's 'Oslo', '1' do(es) not appear in the query"
    assert question_literals('Orders of "Ann" over 2.5 in 2024') == ["Ann", "2.5", "2024"]
    # SQLite reads a double-quoted name no column has as a string: "Oslo" is the question's 'Oslo'
    assert answered(shop, "Who lives in 'Oslo'?", 'SELECT name FROM customers WHERE city = "Oslo"').warnings == []


def test_codes_the_question_defines_are_not_missing_when_the_query_uses_one() -> None:
    # Spider dev: "Note that 1 stands for yes, and 0 stands for no in the tables." -> abandoned_yn = '1'
    question = "Which dogs were abandoned? Note that 1 stands for yes, and 0 stands for no in the tables."
    assert unused_literals(question, parse_sql("SELECT name FROM dogs WHERE abandoned_yn = '1'", "sqlite")) == []
    assert unused_literals(question, parse_sql("SELECT name FROM dogs", "sqlite")) == ["1", "0"]  # none used
    assert unused_literals("Who paid? 'Y' means paid, 'N' means not.",
                           parse_sql("SELECT name FROM fees WHERE paid = 'Y'", "sqlite")) == []
    # a number that is no code is still asked for
    assert unused_literals("Which VIPs spent over 100? 1 means VIP.",
                           parse_sql("SELECT name FROM c WHERE vip = 1", "sqlite")) == ["100"]


def test_a_column_the_question_names_and_the_query_leaves_out(shop: Any) -> None:
    answer = answered(shop, "What is the city of each customer with a shipped order?",
                      "SELECT DISTINCT c.name FROM customers AS c JOIN orders AS o ON o.customer_id = c.customer_id "
                      "WHERE o.status = 'shipped'")
    assert codes(answer) == ["unused-column"]
    assert answer.warnings[0]["text"] == "the question names column customers.city, which the query does not use"
    used = answered(shop, "What is the city of each customer with a shipped order?",
                    "SELECT DISTINCT c.name, c.city FROM customers AS c JOIN orders AS o "
                    "ON o.customer_id = c.customer_id WHERE o.status = 'shipped'")
    # a key stands for its row (customer_id is "customer"), and a query that shows * leaves nothing out
    by_key = answered(shop, "How many orders does each customer have?",
                      "SELECT customer_id, count(*) FROM orders GROUP BY customer_id")
    starred = answered(shop, "Show the status and the customer of every order.", "SELECT * FROM orders")
    assert used.warnings == [] and by_key.warnings == [] and starred.warnings == []


def test_a_negation_tested_row_by_row_across_a_join(shop: Any) -> None:
    # Ann has a shipped and an open order: "no open order" must leave her out, "status != 'open'" keeps her
    wrong = answered(shop, "Which customers have no open order?",
                     "SELECT DISTINCT c.name FROM customers AS c JOIN orders AS o ON o.customer_id = c.customer_id "
                     "WHERE o.status != 'open'")
    assert ("Ann",) in wrong.rows and codes(wrong) == ["negation-by-row"]
    assert wrong.warnings[0]["text"].startswith("the question says 'not', and o.status <> 'open' tests each joined row")
    right = answered(shop, "Which customers have no open order?",
                     "SELECT name FROM customers WHERE customer_id NOT IN "
                     "(SELECT customer_id FROM orders WHERE status = 'open')")
    unjoined = answered(shop, "Which customers don't live in Oslo?", "SELECT name FROM customers WHERE city != 'Oslo'")
    assert right.warnings == [] and ("Ann",) not in right.rows and unjoined.warnings == []


def test_both_values_asked_and_either_tested(shop: Any) -> None:
    either = answered(shop, "Which customers have both a shipped and an open order?",
                      "SELECT DISTINCT c.name FROM customers AS c JOIN orders AS o ON o.customer_id = c.customer_id "
                      "WHERE o.status IN ('shipped', 'open')")
    assert ("Bo",) in either.rows and codes(either) == ["both-as-either"]
    assert either.warnings[0]["text"] == ("the question asks for 'both', and o.status is tested for either value "
                                          "(one row holds one value)")
    also_or = answered(shop, "Which customers have both a shipped and an open order?",
                       "SELECT DISTINCT c.name FROM customers AS c JOIN orders AS o ON o.customer_id = c.customer_id "
                       "WHERE o.status = 'shipped' OR o.status = 'open'")
    both = answered(shop, "Which customers have both a shipped and an open order?",
                    "SELECT c.name FROM customers AS c JOIN orders AS o ON o.customer_id = c.customer_id "
                    "WHERE o.status = 'shipped' INTERSECT SELECT c.name FROM customers AS c JOIN orders AS o "
                    "ON o.customer_id = c.customer_id WHERE o.status = 'open'")
    assert codes(also_or) == ["both-as-either"] and both.warnings == [] and both.rows == [("Ann",)]


def test_one_total_for_a_question_asked_per_group_is_flagged(shop: Any) -> None:
    total = answered(shop, "What is the total amount paid for each order?", "SELECT sum(amount) FROM payments")
    assert total.rows == [(18.5,)] and codes(total) == ["one-total"]
    assert total.warnings[0]["text"] == ("the question asks 'each order', and the query adds all the rows into one "
                                         "total (no GROUP BY)")
    different = answered(shop, "Show the largest payment for different orders.", "SELECT max(amount) FROM payments")
    assert codes(different) == ["one-total"] and "'for different orders'" in different.warnings[0]["text"]


@pytest.mark.parametrize("question, sql", [
    ("What is the total amount paid for each order?", "SELECT order_id, sum(amount) FROM payments GROUP BY order_id"),
    # one average over the groups ("on average each order"), a list, "each time", "each other", a quoted name
    ("How much is paid on average for each order?", "SELECT avg(amount) FROM payments"),
    ("Show the status of each order.", "SELECT order_id, status FROM orders"),
    ("What is the largest amount paid each time?", "SELECT max(amount) FROM payments"),
    ("How many pairs of customers live near each other?", "SELECT count(*) FROM customers"),
    ("How many orders are 'Each Day' orders?", "SELECT count(*) FROM orders"),
])
def test_totals_the_question_asks_for_are_not_flagged(shop: Any, question: str, sql: str) -> None:
    assert "one-total" not in codes(answered(shop, question, sql))


def test_one_null_is_flagged(shop: Any) -> None:
    answer = answered(shop, "What is the largest payment of Lima's customers?",
                      "SELECT max(p.amount) FROM payments AS p JOIN orders AS o ON p.order_id = o.order_id "
                      "JOIN customers AS c ON o.customer_id = c.customer_id WHERE c.city = 'Lima'")
    assert answer.rows == [(None,)] and codes(answer) == ["null-result"]


def test_a_query_the_correction_loop_rewrote(shop: Any) -> None:
    first = "SELECT name FROM customers WHERE city = 'oslo'"
    final = "SELECT name FROM customers WHERE city = 'Oslo'"
    rewritten = answered(shop, "Who lives in Oslo?", final, candidates=[first, final], rounds=2)
    repaired_in_place = answered(shop, "Who lives in Oslo?", final, candidates=[first, final], rounds=1)
    same_again = answered(shop, "Who lives in Oslo?", final, candidates=[final], rounds=2)
    assert codes(rewritten) == ["corrected"]
    assert rewritten.warnings[0]["text"] == "self-correction rewrote the model's first query (2 generations)"
    assert repaired_in_place.warnings == [] and same_again.warnings == []


def test_a_constant_answer_is_flagged(shop: Any) -> None:
    """A query that reads no table (the model answering by itself) is flagged even though it has a row."""
    answer = answered(shop, "How many customers live in Lima?", "SELECT 2")
    assert answer.rows == [(2,)] and codes(answer) == ["constant", "unused-table"]
    assert answer.warnings[0]["text"] == "the query reads no table: its answer was written, not looked up"


def test_a_failed_query_is_flagged_and_still_explained(shop: Any) -> None:
    answer = answered(shop, "Who lives in Oslo?", "SELECT nickname FROM customers WHERE city = 'Oslo'")
    assert answer.error and codes(answer) == ["failed"]
    assert "Reads customers" in answer.explanation["lines"]


def test_the_answer_shows_them_in_its_repr_and_notebook_html(shop: Any) -> None:
    answer = answered(shop, "Which customers live in Paris?", "SELECT name FROM customers WHERE city = 'Paris'")
    assert "warnings=['empty-result']" in repr(answer)
    html = answer._repr_html_()
    assert "the query returned no rows" in html and "<details><summary>What the query does</summary>" in html
    assert answer.to_dict()["warnings"] == [{"code": "empty-result", "text": "the query returned no rows"}]


def test_a_table_a_used_column_is_named_after_is_no_unused_table() -> None:
    """"positions of players from college UCLA" answered from ``match_season`` alone: its ``Player`` column
    stands for the ``player`` table as a key would; a table no used column is named after is still flagged."""
    from kgsql.generate.flags import unused_tables
    from kgsql.schema.model import Column, DatabaseSchema, Table

    schema = DatabaseSchema("match_season", tables=[
        Table("match_season", columns=[Column("Player"), Column("Position"), Column("College"),
                                       Column("Marketing_Region_Code")]),
        Table("player", columns=[Column("Player_ID"), Column("Player")]),
        Table("Ref_Marketing_Regions", columns=[Column("Marketing_Region_Code")]),
        Table("team", columns=[Column("Team_id"), Column("Name")])])
    question = "Show the positions of players from college UCLA in each marketing region and their team."
    assert unused_tables(question, ["match_season"], schema) == ["team"]
    # a column of numbers named after a table holds its ids, not its names: "which airlines" needs the table
    flights = DatabaseSchema("flight_2", tables=[Table("flights", columns=[Column("Airline", "INTEGER")]),
                                                 Table("airlines", columns=[Column("uid"), Column("Airline")])])
    assert unused_tables("Which airlines have at least 10 flights?", ["flights"], flights) == ["airlines"]


def test_a_command_word_and_a_used_tables_own_words_name_no_unused_table() -> None:
    from kgsql.generate.flags import unused_tables
    from kgsql.schema.model import Column, DatabaseSchema, Table

    schema = DatabaseSchema("orchestra", tables=[Table(n, columns=[Column("id")]) for n in
                                                 ("show", "conductor", "Ref_Template_Types", "Templates", "student")])
    # "Show" / "Please show" open the request; "a show" names the table
    assert unused_tables("Please show the name of the conductor.", ["conductor"], schema) == []
    assert unused_tables("Show the names of conductors. Show them sorted.", ["conductor"], schema) == []
    assert unused_tables("Which conductors have a show?", ["conductor"], schema) == ["show"]
    # a period inside a name or a number ends no sentence: the word after it does not open one
    assert unused_tables("Which conductor led at St. Show hall?", ["conductor"], schema) == ["show"]
    assert unused_tables("Which conductor earns over 3.5? Show them.", ["conductor"], schema) == []
    assert unused_tables("Which conductor is called Li? Show his name.", ["conductor"], schema) == []
    # "template type" is the used Ref_Template_Types, not Templates; "templates" alone names Templates
    assert unused_tables("What is the template type code for description Book?", ["Ref_Template_Types"],
                         schema) == []
    assert unused_tables("Which template types do the templates use?", ["Ref_Template_Types"],
                         schema) == ["Templates"]
    # a quoted value's words are the value's, not a table's
    assert unused_tables('Which conductor leads "Student Enterprises"?', ["conductor"], schema) == []
    assert unused_tables("Which conductor teaches a student?", ["conductor"], schema) == ["student"]


def test_a_column_that_names_the_rows_or_shares_a_used_columns_word_is_not_unused() -> None:
    from kgsql.generate.flags import unused_columns
    from kgsql.schema.model import Column, ColumnStats, DatabaseSchema, Table
    from kgsql.sql.names import parse_sql

    def university(distinct: int | None) -> DatabaseSchema:
        return DatabaseSchema("basketball", tables=[Table("university", row_count=5, columns=[
            Column("School_ID", "INTEGER", is_primary_key=True),
            Column("School", "TEXT", stats=ColumnStats(distinct_count=distinct)),
            Column("Enrollment", "INTEGER")])])

    sql = parse_sql("SELECT sum(Enrollment) FROM university", "sqlite")
    # each school's name is its own: "schools" names the rows, which the query sums over
    assert unused_columns("Return the total enrollment across all schools.", sql, ["university"],
                          university(5)) == []
    assert unused_columns("Return the total enrollment across all schools.", sql, ["university"],
                          university(3)) == ["university.School"]
    # said once, in the singular, it is the value asked for
    assert unused_columns("What is the enrollment of the school founded first?", sql, ["university"],
                          university(5)) == ["university.School"]
    rooms = DatabaseSchema("inn", tables=[Table("Rooms", columns=[
        Column("RoomId", "TEXT", is_primary_key=True), Column("beds", "INTEGER"), Column("bedType", "TEXT")])])
    # "bed" is bedType's word, used; "beds" is the same word in another number
    assert unused_columns("Find the number of rooms with king beds.",
                          parse_sql("SELECT count(*) FROM Rooms WHERE bedType = 'King'", "sqlite"), ["Rooms"],
                          rooms) == []


def test_a_count_of_a_value_the_database_does_not_hold_is_flagged(shop: Any) -> None:
    zero = answered(shop, "How many orders were cancelled?", "SELECT count(*) FROM orders WHERE status = 'cancelled'")
    assert zero.rows == [(0,)] and codes(zero) == ["zero-count"]
    assert zero.warnings[0]["text"] == "the query counts 0 rows, and orders.status holds no 'cancelled' in any spelling"


@pytest.mark.parametrize("sql", [
    # stored with other case and spaces: the zero is the database's own answer
    "SELECT count(*) FROM orders WHERE status = ' OPEN '",
    # a stored value that no row of the join has, a count that is not zero, a number compared
    "SELECT count(*) FROM orders AS o JOIN customers AS c ON o.customer_id = c.customer_id WHERE c.city = 'Lima'",
    "SELECT count(*) FROM orders WHERE status = 'open'",
    "SELECT count(*) FROM orders WHERE customer_id = 99",
])
def test_zero_counts_of_stored_values_are_not_flagged(shop: Any, sql: str) -> None:
    assert "zero-count" not in codes(answered(shop, "How many orders are there?", sql)), sql


def test_the_zero_count_probe_names_a_schema_qualified_table_for_postgresql() -> None:
    from kgsql.generate.explain import Explanation, FilterStep
    from kgsql.generate.unmatched import unmatched_count
    from kgsql.sql.names import parse_sql

    asked: list[str] = []
    step = FilterStep("hr.Staff.dept", "=", "Sales ", None, None, "")
    tree = parse_sql('SELECT count(*) FROM hr."Staff" WHERE dept = \'Sales \'', "postgres")
    found = unmatched_count(tree, [(0,)], Explanation(filters=[step]), lambda q: asked.append(q) or True, "postgres")
    assert found == ("hr.Staff.dept", "Sales ")
    assert asked == ['SELECT 1 WHERE NOT EXISTS(SELECT 1 FROM "hr"."Staff" WHERE LOWER(TRIM("dept")) = '
                     'LOWER(TRIM(\'Sales \'))) AND EXISTS(SELECT 1 FROM "hr"."Staff" WHERE NOT "dept" IS NULL)']
    # a probe the database refuses (no row back) flags nothing; on SQLite a dotted name is one table
    assert unmatched_count(tree, [(0,)], Explanation(filters=[step]), lambda q: False, "postgres") is None
    asked.clear()
    unmatched_count(tree, [(0,)], Explanation(filters=[step]), lambda q: asked.append(q) or True, "sqlite")
    assert '"hr.Staff"' in asked[0]


def test_a_zero_count_on_a_table_with_no_rows_is_not_flagged(tmp_path: Any) -> None:
    """An empty table (Spider's music_2 has no rows at all) holds no value in any spelling, and its zero is
    the database's own answer."""
    import sqlite3

    from kgsql.correct.context import CheckContext
    from kgsql.generate.explain import explain_sql
    from kgsql.generate.flags import answer_flags
    from kgsql.generate.review import row_probe, value_probe
    from kgsql.ingest.reader import read_database

    path = tmp_path / "music.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript("CREATE TABLE songs (song_id INTEGER PRIMARY KEY, title TEXT);"
                           "CREATE TABLE albums (album_id INTEGER PRIMARY KEY, kind TEXT);"
                           "INSERT INTO albums VALUES (1, 'live');")
    schema = read_database(path)
    for sql, flagged in (("SELECT count(*) FROM songs WHERE title = 'Flash'", False),
                         ("SELECT count(*) FROM albums WHERE kind = 'studio'", True)):
        with CheckContext(schema) as ctx:
            explanation = explain_sql(sql, schema, probe=value_probe(ctx))
            flags = answer_flags(question="How many?", sql=sql, schema=schema, explanation=explanation,
                                 rows=[(0,)], exists=row_probe(ctx))
        assert ("zero-count" in [f.code for f in flags]) is flagged, sql
