"""What kgsql writes to its caches is private: 0600 files in 0700 folders.

Cell values (value index), schema documents (token index) and example
questions (pool embeddings) must not be readable by other local users.
"""
from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from kgsql.text.encoder import HashEncoder
from kgsql.schema.model import Column, DatabaseSchema, Table


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    """The common 022 umask, under which plain open()/mkdir give 0644/0755."""
    old = os.umask(0o022)
    yield
    os.umask(old)


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("KGSQL_CACHE_DIR", str(root))
    return root


def _assert_private_tree(folder: Path) -> list[Path]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    assert files, f"nothing written under {folder}"
    assert _mode(folder) == 0o700
    for p in folder.rglob("*"):
        assert _mode(p) == (0o700 if p.is_dir() else 0o600), (p, oct(_mode(p)))
    return files


def test_value_cache_is_private(tmp_path: Path, cache: Path) -> None:
    from kgsql.retrieve.values import ValueIndex

    db = tmp_path / "people.sqlite"
    conn = sqlite3.connect(db)
    conn.executescript("CREATE TABLE person (name TEXT); INSERT INTO person VALUES ('Alice Secret');")
    conn.commit()
    conn.close()
    ValueIndex.for_database(db)
    files = _assert_private_tree(cache / "retrieve")
    assert [p.name.endswith(".json.gz") for p in files] == [True]
    reloaded = ValueIndex.for_database(db)  # the private file is read back
    assert reloaded is not None
    assert _mode(cache) == 0o700


def test_token_index_cache_is_private(cache: Path) -> None:
    from kgsql.retrieve.documents import schema_documents
    from kgsql.retrieve.index import IndexStore

    schema = DatabaseSchema(name="shop", tables=[Table("product", [Column("name", "TEXT")])])
    IndexStore(HashEncoder()).get("shop", schema_documents(schema))
    files = _assert_private_tree(cache / "retrieve")
    assert all(p.suffix == ".npz" for p in files)


def test_pool_embedding_cache_is_private(cache: Path) -> None:
    from kgsql.fewshot.embed import PoolEmbeddings
    from kgsql.fewshot.pool import ExamplePool, PoolExample

    pool = ExamplePool([PoolExample("How many pilots are older than 40?",
                                    "SELECT count(*) FROM pilot WHERE age > 40", "flight", "p1")],
                       name="tiny")
    vectors = PoolEmbeddings(pool, HashEncoder(), masked=False).vectors
    files = _assert_private_tree(cache / "examples")
    assert [p.suffix for p in files] == [".npy"]
    again = PoolEmbeddings(pool, HashEncoder(), masked=False).vectors  # read back from the cache
    assert (again == vectors).all()
