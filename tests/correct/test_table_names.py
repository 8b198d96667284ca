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

