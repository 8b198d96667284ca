"""The values rule: literals that occur nowhere in their column, on the context's one connection."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kgsql.correct import CheckContext, check_candidate, render_tips, value_tips
from kgsql.correct import context as context_module
from kgsql.correct.values import check_values
from kgsql.db import guard
from kgsql.db.connect import sqlite3
from kgsql.db.guard import execute_query
from kgsql.retrieve.values import ValueMatch
from kgsql.schema.model import DatabaseSchema


class FakeIndex:
    def __init__(self, matches: list[ValueMatch]) -> None:
        self.matches = matches
        self.queries: list[str] = []

    def search(self, question: str, *, top_k: int = 20, min_score: float = 0.75) -> list[ValueMatch]:
        self.queries.append(question)
        return self.matches


def test_value_tips_use_the_value_index(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    path, schema = dbs["geo"]
    index = FakeIndex([ValueMatch("cities", "name", "Silver Town", 0.9),
                       ValueMatch("rivers", "name", "Silver River", 0.9)])
    tips = value_tips("SELECT * FROM rivers WHERE name = 'Silvr'", schema, path, value_index=index)
    assert index.queries == ["Silvr"]
    assert render_tips(tips) == ("The value 'Silvr' does not occur in the column 'rivers.name'; "
                                 "the closest value is 'Silver River'.")


def test_value_tips_fall_back_when_the_index_fails(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    path, schema = dbs["geo"]

    class Broken:
        def search(self, *a: Any, **k: Any) -> list[Any]:
            raise RuntimeError("index gone")

    tips = value_tips("SELECT * FROM rivers WHERE name = 'Amber'", schema, path, value_index=Broken())
    assert tips[0].text.endswith("the closest value is 'Amber River'.")


def test_value_tips_with_the_real_value_index(dbs: dict[str, tuple[Path, DatabaseSchema]], tmp_path: Path) -> None:
    pytest.importorskip("bm25s")
    from kgsql.retrieve.values import ValueIndex

    path, schema = dbs["geo"]
    index = ValueIndex.for_database(path, schema, cache_dir=tmp_path)
    tips = value_tips("SELECT name FROM cities WHERE name = 'Kestrel'", schema, path, value_index=index)
    assert render_tips(tips) == ("The value 'Kestrel' does not occur in the column 'cities.name'; "
                                 "the closest value is 'Kestrel Bay'.")


def test_value_tips_skip_what_they_cannot_check(dbs: dict[str, tuple[Path, DatabaseSchema]], tmp_path: Path) -> None:
    path, schema = dbs["geo"]
    assert value_tips("SELECT name FROM cities WHERE name = 'Nowhere'", schema, None) == []
    assert value_tips("SELECT name FROM cities WHERE name = 'Nowhere'", schema, tmp_path / "missing.sqlite") == []
    assert value_tips("SELEC name FROM", schema, path) == []
    assert value_tips("SELECT name FROM cities WHERE population = 5", schema, path) == []  # not a string literal
    assert value_tips("SELECT name FROM nowhere WHERE name = 'x'", schema, path) == []  # unknown table
    many = " OR ".join(f"name = 'Nowhere{i}'" for i in range(20))
    assert len(value_tips(f"SELECT name FROM cities WHERE {many}", schema, path, max_checks=3)) == 3


def test_value_tips_plain_sqlite(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    path, schema = dbs["school"]
    sql = "SELECT s.name FROM students s JOIN classes c ON s.class_id = c.class_id WHERE c.name = 'Math'"
    assert execute_query(path, sql).rows == []
    tips = value_tips(sql, schema, path)
    assert render_tips(tips) == ("The value 'Math' does not occur in the column 'classes.name'; "
                                 "the closest value is 'Maths'.")


def test_value_rule_uses_the_context_connection(dbs: dict[str, tuple[Path, DatabaseSchema]],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """One question, several candidates (failing, empty with value probes, fine): one connection."""
    path, schema = dbs["school"]
    opened: list[Any] = []
    real_open = context_module.open_database

    def counting_open(*args: Any, **kwargs: Any) -> Any:
        opened.append(real_open(*args, **kwargs))
        return opened[-1]

    def no_own_connection(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("execute_query opened a connection of its own")

    monkeypatch.setattr(context_module, "open_database", counting_open)
    monkeypatch.setattr(guard, "open_database", no_own_connection)  # what execute_query(path, ...) would call
    empty_sql = "SELECT s.name FROM students s JOIN classes c ON s.class_id = c.class_id WHERE c.name = 'Math'"
    with CheckContext(schema, "Which students take Math?", path=path) as ctx:
        checked = [
            check_candidate(ctx, "SELECT nme FROM students"),
            check_candidate(ctx, empty_sql),
            check_candidate(ctx, "SELECT name FROM classes WHERE name IN ('Histry', 'Maths')"),
            check_candidate(ctx, "SELECT name FROM students WHERE name = 'Alice'"),
        ]
        more = check_values(ctx, "SELECT name FROM classes WHERE teacher = 'Ada'")
    assert len(opened) == 1
    assert checked[0].kind == "no_such_column"
    assert [t.kind for t in checked[1].tips] == ["value_not_found", "empty_result"]
    assert "the closest value is 'Maths'" in checked[1].tips[0].text
    assert checked[2].tips == [] and checked[2].result is not None and checked[2].result.rows == [("Maths",)]
    assert checked[3].result is not None and checked[3].result.rows == [("Alice",)]
    assert render_tips(more) == ("The value 'Ada' does not occur in the column 'classes.teacher'; "
                                 "the closest value is 'Ada Byron'.")
    with pytest.raises(sqlite3.ProgrammingError):  # closed with the context
        opened[0].execute("SELECT 1")
