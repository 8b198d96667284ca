"""Tips from real SQLite/SpatiaLite failures, static prechecks and value checks (golden files)."""
from __future__ import annotations

from pathlib import Path

import pytest

from kgsql.correct import Tip, precheck, render_tips, tips_from_error, value_tips
from kgsql.db.guard import QueryResult, execute_query
from kgsql.schema.model import DatabaseSchema
from tip_cases import CASES, read_case, run_error


def test_fixture_count() -> None:
    assert len(CASES) >= 40


@pytest.mark.parametrize("fixture", CASES, ids=[p.stem for p in CASES])
def test_golden(fixture: Path, dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    case = read_case(fixture)
    path, schema = dbs[case.db]
    dialect = case.dialect or ("spatialite" if case.db == "geo" else "sqlite")
    if case.check.startswith("error "):
        err = run_error(path, case.sql, case.timeout)
        assert err.kind == case.check.split()[1], err.sqlite_message
        tips = tips_from_error(err, case.sql, schema, dialect=dialect)
    elif case.check == "precheck":
        tips = precheck(case.sql, schema)
    elif case.check == "values":
        result = execute_query(path, case.sql)  # the query itself runs fine
        assert isinstance(result, QueryResult)
        tips = value_tips(case.sql, schema, path)
    else:  # pragma: no cover - a malformed fixture
        raise AssertionError(f"unknown check {case.check!r}")
    assert render_tips(tips) == case.tips
    assert all(isinstance(t, Tip) and t.kind and t.text for t in tips)
