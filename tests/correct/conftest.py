"""Databases for the self-correction tests: the example SpatiaLite file and a small plain SQLite one."""
from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from kgsql.correct import CheckContext
from kgsql.ingest.reader import read_database
from kgsql.schema.model import DatabaseSchema

SCHOOL = """
CREATE TABLE classes (class_id INTEGER PRIMARY KEY, name TEXT NOT NULL, teacher TEXT);
CREATE TABLE students (
    student_id INTEGER PRIMARY KEY, name TEXT NOT NULL,
    class_id INTEGER REFERENCES classes(class_id), enrolled TEXT
);
INSERT INTO classes VALUES (1, 'Maths', 'Ada Byron'), (2, 'History', 'Herodotus');
INSERT INTO students VALUES (1, 'Alice', 1, '2020-09-01'), (2, 'Bob', 2, '2021-09-01'), (3, 'Carol', 1, '2020-09-01');
"""


@pytest.fixture(scope="session")
def dbs(example_db: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, DatabaseSchema]]:
    """name -> (file, schema) for "geo" (SpatiaLite) and "school" (plain SQLite)."""
    school = tmp_path_factory.mktemp("tips") / "school.sqlite"
    conn = sqlite3.connect(school)
    conn.executescript(SCHOOL)
    conn.commit()
    conn.close()
    return {name: (path, read_database(path)) for name, path in (("geo", example_db), ("school", school))}


@pytest.fixture
def geo_ctx(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> Iterator[CheckContext]:
    """A check context on the example SpatiaLite file (a question-free one: the rewrites read the SQL)."""
    with CheckContext(dbs["geo"][1], "q") as ctx:
        yield ctx
