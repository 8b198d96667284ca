"""Fixtures for ingest tests: databases a careless user might hand over."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest


@pytest.fixture
def make_corrupt_sqlite(make_sqlite) -> Callable[[str], Path]:
    """A SQLite file whose header and schema page are fine but whose data pages are
    garbage: it opens, then a query fails with 'database disk image is malformed'."""

    def make(name: str) -> Path:
        path = make_sqlite(name, "CREATE TABLE t (a TEXT);" + "".join(
            f"INSERT INTO t VALUES ('{'y' * 300}{i}');" for i in range(300)))
        data = bytearray(path.read_bytes())
        page = 4096
        data[2 * page:] = b"\xff" * (len(data) - 2 * page)  # keep page 1 (header + schema)
        path.write_bytes(bytes(data))
        return path

    return make
