"""The rule lists, tips_from_error's fallbacks and check_candidate, the one entry point."""
from __future__ import annotations

from pathlib import Path

import pytest

from kgsql.correct import CheckContext, Tip, check_candidate, precheck, tips_from_error, value_tips
from kgsql.correct.empty import EMPTY_RESULT_TIP
from kgsql.correct.rules import ERROR_RULES
from kgsql.db.guard import ERROR_KINDS, execute_query
from kgsql.errors import UnsafeSQLError
from kgsql.schema.model import DatabaseSchema
from tip_cases import run_error


def test_every_error_kind_has_a_rule() -> None:
    assert set(ERROR_RULES) == set(ERROR_KINDS) - {"other"}


def test_unsafe_sql(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    path, schema = dbs["geo"]
    with pytest.raises(UnsafeSQLError) as info:
        execute_query(path, "DELETE FROM cities")
    tips = tips_from_error(info.value, "DELETE FROM cities", schema)
    assert [t.kind for t in tips] == ["unsafe"]
    assert "read-only SQLite SELECT" in tips[0].text


def test_any_other_exception(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    tips = tips_from_error(RuntimeError("disk I/O error"), "SELECT 1", dbs["geo"][1])
    assert tips == [Tip("other", "SQLite reported an error: disk I/O error; fix the query so that it runs.")]


@pytest.fixture
def school_ctx(dbs: dict[str, tuple[Path, DatabaseSchema]]):  # type: ignore[no-untyped-def]
    path, schema = dbs["school"]
    with CheckContext(schema, "Which students take Math?", path=path, timeout_s=5.0, max_rows=100) as ctx:
        yield ctx


def test_check_candidate_unsafe(school_ctx: CheckContext) -> None:
    checked = check_candidate(school_ctx, "DELETE FROM students")
    assert checked.result is None and checked.kind == "unsafe" and checked.error
    assert checked.tips == [Tip("unsafe", "Write exactly one read-only SELECT query.")]


def test_check_candidate_error_tips_then_static_tips(school_ctx: CheckContext,
                                                     dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    path, schema = dbs["school"]
    sql = "SELECT nme, teachr FROM students JOIN classes USING (class_id)"
    checked = check_candidate(school_ctx, sql)
    error = run_error(path, sql)
    assert checked.result is None and checked.kind == "no_such_column" and checked.error == str(error)
    from_error = tips_from_error(error, sql, schema, dialect="sqlite")
    static = [t for t in precheck(sql, schema) if t.text not in {x.text for x in from_error}]
    assert static and checked.tips == from_error + static


def test_check_candidate_empty_result(school_ctx: CheckContext, dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    path, schema = dbs["school"]
    sql = "SELECT s.name FROM students s JOIN classes c ON s.class_id = c.class_id WHERE c.name = 'Math'"
    checked = check_candidate(school_ctx, sql)
    assert checked.result is not None and checked.result.rows == [] and checked.error is None and checked.kind is None
    assert checked.tips == value_tips(sql, schema, path) + [Tip("empty_result", EMPTY_RESULT_TIP)]
    assert check_candidate(school_ctx, sql, last=True).tips == []


def test_check_candidate_without_tips(school_ctx: CheckContext) -> None:
    for sql in ("DELETE FROM students", "SELECT nme FROM students", "SELECT name FROM classes WHERE name = 'Math'"):
        assert check_candidate(school_ctx, sql, tips=False).tips == []
    ok = check_candidate(school_ctx, "SELECT count(*) FROM students")
    assert ok.result is not None and ok.result.rows == [(3,)] and ok.tips == [] and ok.error is None


def test_tips_follow_the_schemas_dialect_by_default(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    """Without ``dialect`` a plain SQLite schema is not told of SpatiaLite's functions."""
    path, schema = dbs["school"]
    sql = "SELECT Area(name) FROM students"
    error = run_error(path, sql)
    tips = tips_from_error(error, sql, schema)
    assert tips == tips_from_error(error, sql, schema, dialect="sqlite")
    assert "this database has no spatial functions" in tips[0].text
    assert tips != tips_from_error(error, sql, schema, dialect="spatialite")


def test_a_query_that_reuses_an_alias_is_judged_not_crashed(make_sqlite) -> None:  # type: ignore[no-untyped-def]
    """sqlglot cannot scope ``FROM event e JOIN expense e``; the static check raised and ended a whole
    evaluation run (issue 28's run). Now the scope is 'unlisted': no false tips, SQLite's error judged."""
    from kgsql.correct import CheckContext
    from kgsql.correct.rules import check_candidate
    from kgsql.ingest.reader import read_database

    path = make_sqlite("aliases", "CREATE TABLE event (event_id TEXT, name TEXT); "
                                  "CREATE TABLE expense (expense_id TEXT, event_id TEXT, cost REAL);")
    with CheckContext(read_database(path), "q") as ctx:
        checked = check_candidate(ctx, "SELECT e.name FROM event e JOIN expense e ON e.event_id = e.event_id", tips=True)
    assert checked.result is None and "ambiguous column name" in checked.error
    assert [t.kind for t in checked.tips] == ["ambiguous_column"]  # SQLite's own error, nothing made up
