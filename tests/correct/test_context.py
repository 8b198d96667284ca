"""CheckContext: one connection per question, parsed SQL cached, execute_query's errors unchanged."""
from __future__ import annotations

from pathlib import Path

import pytest

from kgsql.correct import CheckContext
from kgsql.db.guard import SQLQueryError, execute_query
from kgsql.errors import DatabaseFileError, UnsafeSQLError
from kgsql.schema.model import DatabaseSchema


def test_dialect_and_defaults(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    assert CheckContext(dbs["geo"][1]).dialect == "spatialite"
    assert CheckContext(dbs["school"][1]).dialect == "sqlite"
    assert CheckContext(dbs["geo"][1], dialect="sqlite").dialect == "sqlite"
    assert str(CheckContext(dbs["geo"][1]).path) == str(dbs["geo"][1].path)


def test_execute_reuses_one_connection_and_reopens_after_close(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    path, schema = dbs["school"]
    with CheckContext(schema, path=path, max_rows=2) as ctx:
        first = ctx.connection()
        result = ctx.execute("SELECT name FROM students ORDER BY name")
        assert result.rows == [("Alice",), ("Bob",)] and result.truncated
        alone = execute_query(path, "SELECT name FROM students ORDER BY name", max_rows=2)
        assert (result.columns, result.rows, result.truncated) == (alone.columns, alone.rows, alone.truncated)
        with pytest.raises(SQLQueryError):
            ctx.execute("SELECT nme FROM students")
        assert ctx.connection() is first
        assert ctx.execute("SELECT count(*) FROM classes").rows == [(2,)]  # still usable after an error
    assert ctx.execute("SELECT 1").rows == [(1,)]  # a closed context opens a new connection
    ctx.close()


def test_execute_raises_what_execute_query_raises(dbs: dict[str, tuple[Path, DatabaseSchema]],
                                                  tmp_path: Path) -> None:
    schema = dbs["school"][1]
    missing = tmp_path / "missing.sqlite"
    ctx = CheckContext(schema, path=missing)
    for sql, error in (("DELETE FROM students", UnsafeSQLError), ("SELECT 1", DatabaseFileError)):
        with pytest.raises(error):
            execute_query(missing, sql)
        with pytest.raises(error):
            ctx.execute(sql)


def test_trees_and_names_are_cached(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    ctx = CheckContext(dbs["geo"][1])
    assert ctx.tree("SELECT name FROM cities") is ctx.tree("SELECT name FROM cities")
    assert ctx.tree("SELEC name FROM") is None
    assert ctx.names is ctx.names
