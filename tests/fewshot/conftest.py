"""Example-selection tests: a private cache dir and a small hand-made pool over in-memory schemas."""
from __future__ import annotations

from pathlib import Path

import pytest

from kgsql.errors import UnknownNameError
from kgsql.fewshot.pool import ExamplePool, PoolExample
from kgsql.schema.model import Column, DatabaseSchema, Table


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KGSQL_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "examples"


def schema(name: str, tables: dict[str, list[str]]) -> DatabaseSchema:
    return DatabaseSchema(name=name, tables=[Table(t, [Column(c, "TEXT") for c in cols]) for t, cols in tables.items()])


SCHEMAS = {
    "concert": schema("concert", {"singer": ["singer_id", "name", "country", "age"], "song": ["song_id", "title"]}),
    "flight": schema("flight", {"pilot": ["pilot_id", "name", "age"], "aircraft": ["aircraft_id", "model"]}),
    "shop": schema("shop", {"product": ["product_id", "product_name", "price"], "store": ["store_id", "city"]}),
    "school": schema("school", {"student": ["student_id", "name", "home_city"], "course": ["course_id", "title"]}),
}


def schemas(db_id: str) -> DatabaseSchema:
    if db_id not in SCHEMAS:
        raise UnknownNameError(db_id)
    return SCHEMAS[db_id]


POOL = [
    PoolExample("How many pilots are older than 40?", "SELECT count(*) FROM pilot WHERE age > 40", "flight", "p1"),
    PoolExample("Which singers are from the singer list of France?", "SELECT name FROM singer WHERE country = 'France'",
                "concert", "p2"),
    PoolExample("What is the average price of all products?", "SELECT avg(price) FROM product", "shop", "p3"),
    PoolExample("List the titles of all courses.", "SELECT title FROM course", "school", "p4"),
    PoolExample("How many students live in 'Springfield'?",
                "SELECT count(*) FROM student WHERE home_city = 'Springfield'", "school", "p5"),
    PoolExample("What are the names of the pilots ordered by age?", "SELECT name FROM pilot ORDER BY age", "flight", "p6"),
]


@pytest.fixture
def pool() -> ExamplePool:
    return ExamplePool(list(POOL), name="handmade", schemas=schemas)
