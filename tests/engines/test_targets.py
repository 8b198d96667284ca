"""Database names: SQLite paths, PostgreSQL and DuckDB URLs; passwords kept out of sight and stored 0600."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from kgsql.db import credentials
from kgsql.db.engines import engine_of
from kgsql.db.target import is_url, parse_target
from kgsql.errors import InputError


def test_file_paths_and_file_urls(tmp_path: Path) -> None:
    plain = parse_target(str(tmp_path / "a.sqlite"))
    assert (plain.engine, plain.name, plain.path) == ("sqlite", "a", tmp_path / "a.sqlite")
    duck = parse_target(f"duckdb://{tmp_path}/b.duckdb")
    assert (duck.engine, duck.name, duck.path, duck.display) == (
        "duckdb", "b", tmp_path / "b.duckdb", f"duckdb://{tmp_path}/b.duckdb")
    assert parse_target(tmp_path / "c.duckdb").engine == "duckdb"
    assert parse_target(f"sqlite://{tmp_path}/d.db").path == tmp_path / "d.db"
    assert [engine_of(x) for x in ("x.sqlite", "x.duckdb", "postgresql://u@h/db", "duckdb:///x.duckdb")] == \
        ["sqlite", "duckdb", "postgres", "duckdb"]
    assert not is_url("C:\\data\\x.sqlite") and is_url("postgres://h/db")


def test_postgres_urls_mask_the_password() -> None:
    t = parse_target("postgres://kg:p%40ss-Word9@db.example:6543/sales?sslmode=disable")
    assert t.engine == "postgres" and t.name == "sales" and t.password == "p@ss-Word9"
    assert t.display == "postgresql://kg:***@db.example:6543/sales?sslmode=disable"
    assert "Word9" not in repr(t) and "Word9" not in str(t)
    assert t.url.startswith("postgresql://kg:p%40ss-Word9@")
    assert parse_target("postgresql:///sales?host=/run/postgresql").name == "sales"
    masked = parse_target(t.display)
    assert masked.password is None and masked.display == t.display


@pytest.mark.parametrize(("text", "says"), [
    ("postgresql://kg:hunter22@db.example", "names no database"),
    ("postgresql://kg:hunter22@db.example:99999/x", "not a valid PostgreSQL URL"),
    ("mysql://kg:hunter22@db.example/x", "unsupported database URL scheme 'mysql'"),
    ("duckdb://relative.duckdb", "write three slashes"),
    ("duckdb:", "names no file"),
])
def test_bad_urls_are_one_line_without_the_password(text: str, says: str) -> None:
    with pytest.raises(InputError) as err:
        parse_target(text)
    assert says in str(err.value) and "hunter22" not in str(err.value) and "\n" not in str(err.value)


def test_a_remembered_password_is_private_and_comes_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KGSQL_CACHE_DIR", str(tmp_path / "state"))
    given = parse_target("postgresql://kg:s3cret-Pw@db.example:5432/sales")
    credentials.remember(given)
    stored = credentials.store_path()
    assert stat.S_IMODE(os.stat(stored).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(stored.parent).st_mode) == 0o700
    later = parse_target(given.display)  # what the graph keeps
    assert credentials.connect_url(later) == "postgresql://kg:s3cret-Pw@db.example:5432/sales"
    assert credentials.forget(given.display) and not credentials.forget(given.display)
    # nothing kept: the password part is dropped, so libpq's own lookup (PGPASSWORD, ~/.pgpass) applies
    assert credentials.connect_url(later) == "postgresql://kg@db.example:5432/sales"
