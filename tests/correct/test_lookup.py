"""Lookup repair: a column named after a key's lookup table read through the key (exact SQL), and the
correction loop's tuple of repairs that tries it after join repair."""
from __future__ import annotations

import pytest
from fixed_model import FixedQuery

from kgsql.correct import CheckContext
from kgsql.correct.lookup import label_column, repair_lookups
from kgsql.ingest.reader import read_database

#: The shape of BIRD's superhero database: labels kept in lookup tables, reached through *_id keys.
SCRIPT = """
CREATE TABLE colour (id INTEGER PRIMARY KEY, colour TEXT);
CREATE TABLE publisher (id INTEGER PRIMARY KEY, publisher_name TEXT, founded INTEGER, country TEXT);
CREATE TABLE gender (id INTEGER PRIMARY KEY, gender TEXT);
CREATE TABLE team (id INTEGER PRIMARY KEY, label TEXT, motto TEXT);
CREATE TABLE superhero (id INTEGER PRIMARY KEY, superhero_name TEXT, weight_kg INTEGER,
    eye_colour_id INTEGER REFERENCES colour(id), skin_colour_id INTEGER REFERENCES colour(id),
    publisher_id INTEGER REFERENCES publisher(id), gender_id INTEGER REFERENCES gender(id),
    team_id INTEGER REFERENCES team(id));
INSERT INTO colour VALUES (1, 'Blue'), (2, 'Gold');
INSERT INTO publisher VALUES (1, 'Marvel Comics', 1939, 'US');
INSERT INTO gender VALUES (1, 'Female');
INSERT INTO team VALUES (1, 'X', 'y');
INSERT INTO superhero VALUES (75, 'A-Bomb', 90, 1, 2, 1, 1, 1);
"""


@pytest.fixture
def ctx(make_sqlite):  # type: ignore[no-untyped-def]
    with CheckContext(read_database(make_sqlite("heroes", SCRIPT)), "q") as c:
        yield c


@pytest.mark.parametrize("sql,repaired", [
    ("SELECT eye_colour FROM superhero WHERE id = 75",
     "SELECT colour.colour FROM superhero JOIN colour ON superhero.eye_colour_id = colour.id WHERE superhero.id = 75"),
    ("SELECT eye_colour FROM superhero ORDER BY weight_kg DESC LIMIT 1",
     "SELECT colour.colour FROM superhero JOIN colour ON superhero.eye_colour_id = colour.id "
     "ORDER BY superhero.weight_kg DESC LIMIT 1"),
    ("SELECT T1.eye_colour, T1.skin_colour FROM superhero AS T1 WHERE T1.id = 75",  # one alias per key
     "SELECT colour.colour, colour_2.colour FROM superhero AS T1 JOIN colour ON T1.eye_colour_id = colour.id "
     "JOIN colour AS colour_2 ON T1.skin_colour_id = colour_2.id WHERE T1.id = 75"),
    ("SELECT superhero_name FROM superhero WHERE publisher = 'Marvel Comics'",  # the table's one *name* column
     "SELECT superhero.superhero_name FROM superhero JOIN publisher ON superhero.publisher_id = publisher.id "
     "WHERE publisher.publisher_name = 'Marvel Comics'"),
])
def test_repairs(ctx: CheckContext, sql: str, repaired: str) -> None:
    assert repair_lookups(ctx, sql) == repaired
    assert ctx.execute(repaired).rows  # and it runs


@pytest.mark.parametrize("sql", [
    "SELECT colour FROM colour",                                 # nothing wrong
    "SELECT COUNT(*) FROM superhero WHERE gender = 'Female'",    # gender.gender exists: join repair's case
    "SELECT team FROM superhero",                                # team has two text columns, neither its name
    "SELECT hair_colour FROM superhero",                         # no hair_colour_id key
    "SELECT x.eye_colour FROM superhero",                        # unknown alias: the tips handle it
    "SELECT eye_colour FROM (SELECT * FROM superhero)",          # derived table: left alone
])
def test_left_alone(ctx: CheckContext, sql: str) -> None:
    assert repair_lookups(ctx, sql) is None


def test_label_column(ctx: CheckContext) -> None:
    schema = ctx.schema
    assert label_column(schema, schema.table("colour")).name == "colour"
    assert label_column(schema, schema.table("publisher")).name == "publisher_name"
    assert label_column(schema, schema.table("team")) is None
    assert label_column(schema, schema.table("superhero")).name == "superhero_name"


def test_the_loop_tries_the_repairs_in_order_and_keeps_the_first_that_runs(ctx: CheckContext) -> None:
    from kgsql.correct.loop import REPAIRS, CorrectionLoop, LoopOptions
    from kgsql.llm.trace import Trace

    names = [name for name, _ in REPAIRS]
    assert names.index("join_repair") < names.index("lookup_repair")

    for lookup, expected in ((True, [("Blue",)]), (False, None)):
        model = FixedQuery("SELECT eye_colour FROM superhero WHERE id = 75")
        result = CorrectionLoop(model, LoopOptions(lookup_repair=lookup, max_rounds=1, samples=0)).run(None, "q", ctx, Trace())
        rows = result.best.result.rows if result.best is not None and result.best.result is not None else None
        assert rows == expected and model.calls == 1  # repaired without a second model call


@pytest.mark.parametrize("sql, rewritten, before, after", [
    ("SELECT COUNT(*) FROM superhero WHERE gender_id = 'Female'",
     "SELECT COUNT(*) FROM superhero WHERE gender_id IN (SELECT id FROM gender WHERE gender = 'Female')", [(0,)], [(1,)]),
    ("SELECT T1.superhero_name FROM superhero AS T1 WHERE T1.eye_colour_id <> 'Gold'",
     "SELECT T1.superhero_name FROM superhero AS T1 WHERE NOT T1.eye_colour_id IN "
     "(SELECT id FROM colour WHERE colour = 'Gold')", [("A-Bomb",)], [("A-Bomb",)]),
    ("SELECT superhero_name FROM superhero WHERE skin_colour_id IN ('Gold', 'Blue')",
     "SELECT superhero_name FROM superhero WHERE skin_colour_id IN "
     "(SELECT id FROM colour WHERE colour IN ('Gold', 'Blue'))", [], [("A-Bomb",)]),
])
def test_a_key_compared_with_a_label_is_compared_through_its_lookup_table(
        ctx: CheckContext, sql: str, rewritten: str, before: list, after: list) -> None:  # type: ignore[type-arg]
    from kgsql.correct.lookup import labels_through_keys

    assert ctx.execute(sql).rows == before
    assert labels_through_keys(ctx, sql) == rewritten
    assert ctx.execute(rewritten).rows == after


@pytest.mark.parametrize("sql", [
    "SELECT COUNT(*) FROM superhero WHERE gender_id = 1",          # a number: the key's own value
    "SELECT COUNT(*) FROM superhero WHERE gender_id = '1'",        # a number in quotes: SQLite compares it
    "SELECT COUNT(*) FROM superhero WHERE superhero_name = 'Bad'",  # not a key
    "SELECT COUNT(*) FROM superhero WHERE team_id = 'X'",          # team has two text columns: no one label
])
def test_keys_compared_with_numbers_or_ambiguous_labels_are_left_alone(ctx: CheckContext, sql: str) -> None:
    from kgsql.correct.lookup import labels_through_keys

    assert labels_through_keys(ctx, sql) is None


@pytest.mark.parametrize("sql,rewritten,rows", [
    ("SELECT eye_colour_id FROM superhero WHERE superhero_name = 'A-Bomb'",
     "SELECT colour.colour FROM superhero JOIN colour ON superhero.eye_colour_id = colour.id "
     "WHERE superhero.superhero_name = 'A-Bomb'", [("Blue",)]),
    ("SELECT T1.superhero_name, T1.skin_colour_id AS skin FROM superhero AS T1",  # the output keeps its alias
     "SELECT T1.superhero_name, colour.colour AS skin FROM superhero AS T1 JOIN colour ON T1.skin_colour_id = colour.id",
     [("A-Bomb", "Gold")]),
])
def test_a_key_shown_as_the_answer_shows_its_label(make_sqlite, sql: str, rewritten: str, rows: list) -> None:  # type: ignore[type-arg]
    from kgsql.correct.lookup import labels_for_shown_keys

    schema = read_database(make_sqlite("shown_keys", SCRIPT))
    with CheckContext(schema, "What is A-Bomb's eye colour?") as c:
        assert labels_for_shown_keys(c, sql) == rewritten
        assert c.execute(rewritten).rows == rows


@pytest.mark.parametrize("question,evidence,sql", [
    ("What is the eye colour id of A-Bomb?", "", "SELECT eye_colour_id FROM superhero"),    # asks for ids
    ("List the eyes of A-Bomb.", "eyes refers to eye_colour_id", "SELECT eye_colour_id FROM superhero"),  # named
    ("Eye colour of A-Bomb?", "", "SELECT publisher_id FROM superhero"),  # publisher holds more than a label
    ("Eye colour of A-Bomb?", "", "SELECT team_id FROM superhero"),       # team: two text columns, no one label
    ("Eye colour of A-Bomb?", "", "SELECT COUNT(*) FROM superhero WHERE eye_colour_id = 1"),  # not shown
    ("Eye colour of A-Bomb?", "", "SELECT eye_colour_id, COUNT(*) FROM superhero GROUP BY eye_colour_id"),  # grouped
])
def test_keys_asked_for_or_not_into_a_pure_lookup_are_left_alone(make_sqlite, question: str, evidence: str,
                                                                  sql: str) -> None:
    from kgsql.correct.lookup import labels_for_shown_keys

    schema = read_database(make_sqlite("kept_keys", SCRIPT))
    with CheckContext(schema, question, evidence=evidence) as c:
        assert labels_for_shown_keys(c, sql) is None
