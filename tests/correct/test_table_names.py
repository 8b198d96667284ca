"""Table-name repair on the example SpatiaLite database (tables `cities`, `provinces`, `river_cities`): a table
written in another number or case is renamed (exact SQL), anything else is left alone, and the correction loop
answers the geo question the local 1.5B failed on twice, without a second model call."""
from __future__ import annotations

import pytest
from fixed_model import FixedQuery

from kgsql.correct import CheckContext
from kgsql.correct.table_names import rename_tables


@pytest.mark.parametrize("sql, renamed", [
    ("SELECT mayor FROM city WHERE name = 'Harbourg'", "SELECT mayor FROM cities WHERE name = 'Harbourg'"),
    ("SELECT city.name FROM city JOIN province AS p ON city.province = p.name",
     "SELECT cities.name FROM cities JOIN provinces AS p ON cities.province = p.name"),
    ("SELECT c.name FROM River_City AS c", "SELECT c.name FROM river_cities AS c"),
    ("SELECT COUNT(*) FROM Cities", None),  # a table the database has, in any case: nothing to do
    ("SELECT name FROM towns", None),  # no table says these words
    ("WITH city AS (SELECT 1 AS a) SELECT a FROM city", None),  # the query's own name
    ("SELECT name FROM main.city", None),  # schema-qualified: not a guess to make
])
def test_rename_tables(geo_ctx: CheckContext, sql: str, renamed: str | None) -> None:
    assert rename_tables(geo_ctx, sql) == renamed


def test_the_loop_renames_the_table_without_another_model_call(geo_ctx: CheckContext) -> None:
    from kgsql.correct.loop import REPAIRS, CorrectionLoop, LoopOptions
    from kgsql.llm.trace import Trace

    assert REPAIRS[0][0] == "table_names"  # tried first: any other repair reads the tables it names

    for on, expected in ((True, [(geo_ctx.execute("SELECT COUNT(*) FROM cities").rows[0][0],)]), (False, None)):
        model = FixedQuery("SELECT COUNT(*) FROM city")  # what the 1.5B wrote, round after round
        result = CorrectionLoop(model, LoopOptions(table_names=on, max_rounds=1, samples=0)).run(
            None, "How many cities are there?", geo_ctx, Trace())
        rows = result.best.result.rows if result.best is not None and result.best.result is not None else None
        assert rows == expected
        assert model.calls == 1



def test_a_table_without_its_prefix_or_schema_is_the_one_the_prompt_showed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """In a warehouse-wide schema the 1.5B drops the merged database's prefix (``FROM singer`` for
    ``concert_singer__singer``: session 24's wide run) and on PostgreSQL the schema (``staff`` for
    ``hr.staff``); of two such tables, the one the prompt showed first is meant, and of none shown, neither."""
    import sqlite3

    from kgsql.ingest.reader import read_database
    from kgsql.schema.model import Table

    db = tmp_path / "wide.sqlite"
    with sqlite3.connect(db) as conn:
        for name in ("concert_singer__singer", "singer__singer", "pets__pet_types"):
            conn.execute(f"CREATE TABLE {name} (id INTEGER PRIMARY KEY, name TEXT)")
    schema = read_database(db)
    written = "SELECT singer.name FROM singer WHERE singer.id = 1"
    with CheckContext(schema, shown_tables=["concert_singer__singer", "pets__pet_types"]) as ctx:
        fixed = rename_tables(ctx, written)
        assert fixed == "SELECT singer.name FROM concert_singer__singer AS singer WHERE singer.id = 1"
        assert ctx.execute(fixed).rows == []
        assert rename_tables(ctx, "SELECT name FROM pet_type") == "SELECT name FROM pets__pet_types AS pet_type"
    with CheckContext(schema, shown_tables=["singer__singer", "concert_singer__singer"]) as ctx:
        assert rename_tables(ctx, written) == "SELECT singer.name FROM singer__singer AS singer WHERE singer.id = 1"
    with CheckContext(schema, shown_tables=["pets__pet_types"]) as ctx:
        assert rename_tables(ctx, written) is None  # two could be meant, the prompt showed neither
    schema.tables.append(Table(name="hr.staff", columns=list(schema.tables[0].columns)))
    with CheckContext(schema) as ctx:
        assert rename_tables(ctx, "SELECT name FROM staff") == "SELECT name FROM hr.staff AS staff"
