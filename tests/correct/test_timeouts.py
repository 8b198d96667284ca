"""The timeouts rule: timeout advice and cross joins."""
from __future__ import annotations

from pathlib import Path

from kgsql.correct import tips_from_error
from kgsql.db.guard import SQLQueryError
from kgsql.schema.model import DatabaseSchema


def test_timeout_tip_for_plain_sqlite(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    path, schema = dbs["school"]
    sql = "SELECT count(*) FROM students a, students b, students c, classes d"
    err = SQLQueryError("timeout", "interrupted", sql=sql)
    tips = tips_from_error(err, sql, schema, dialect="sqlite")
    assert tips[0].kind == "timeout" and "spatial" not in tips[0].text
    assert tips[1].text == ("The tables 'students a', 'students b', 'students c' and 'classes d' are combined "
                            "without any join condition (a cross join).")


def test_no_cross_join_reported_when_tables_are_joined(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    _path, schema = dbs["geo"]
    sql = ("SELECT count(*) FROM cities a JOIN river_cities rc ON rc.city_id = a.city_id, rivers r, provinces p "
           "WHERE r.river_id = rc.river_id AND Within(a.Location, p.Shape)")
    tips = tips_from_error(SQLQueryError("timeout", "interrupted", sql=sql), sql, schema)
    assert [t.kind for t in tips] == ["timeout"]


def test_resource_error_names_the_cross_join(make_sqlite) -> None:  # type: ignore[no-untyped-def]
    from kgsql.correct import CheckContext
    from kgsql.correct.timeouts import RESOURCE_TIP, resource_error
    from kgsql.ingest.reader import read_database

    schema = read_database(make_sqlite("r", "CREATE TABLE a (x INT); CREATE TABLE b (y INT);"))
    tips = resource_error(CheckContext(schema), "SELECT * FROM a, b", None, "out of memory")
    assert [t.text for t in tips] == [RESOURCE_TIP,
                                      "The tables 'a' and 'b' are combined without any join condition (a cross join)."]
