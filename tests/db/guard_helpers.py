"""Helpers building small real SQLite / SpatiaLite files for the guard tests."""
from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Self

from kgsql.db.connect import open_database, sqlite3


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def dir_state(directory: Path) -> dict[str, str]:
    """Name -> sha256 of every file in ``directory``: catches writes and new files (ATTACH, -journal)."""
    return {p.name: sha256_of(p) for p in sorted(directory.iterdir()) if p.is_file()}


def build_plain_db(path: Path) -> Path:
    conn = sqlite3.connect(str(path))
    conn.executescript(
        """
        CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT);
        CREATE INDEX t_b ON t(b);
        INSERT INTO t VALUES (1, 'x;y'), (2, 'semi; colon'), (3, '--not a comment'), (4, '/* nor this */');
        CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, city TEXT);
        CREATE TABLE orders (id INTEGER PRIMARY KEY, user_id INTEGER REFERENCES users(id), amount REAL);
        INSERT INTO users VALUES (1, 'ann', 'Oslo'), (2, 'bob', 'Rome');
        INSERT INTO orders VALUES (1, 1, 9.5), (2, 1, 3.0), (3, 2, 7.25);
        CREATE TABLE many (n INTEGER);
        WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 25)
        INSERT INTO many SELECT n FROM c;
        CREATE VIEW big_orders AS SELECT * FROM orders WHERE amount > 5;
        """
    )
    conn.commit()
    conn.close()
    return path


def build_spatial_db(path: Path) -> Path:
    """A tiny SpatiaLite file made the way kgsql's own setup code would make one."""
    seed = sqlite3.connect(str(path))
    seed.execute("CREATE TABLE seed (x)")
    seed.commit()
    seed.close()
    conn = open_database(path, read_only=False, spatial=True)
    # 'WGS84' keeps spatial_ref_sys to the WGS84 family (~0.3 MB instead of ~6 MB)
    conn.execute("SELECT InitSpatialMetadata(1, 'WGS84')")
    conn.execute("CREATE TABLE parks (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("SELECT AddGeometryColumn('parks', 'geom', 4326, 'POLYGON', 'XY')")
    conn.execute(
        "INSERT INTO parks (name, geom) VALUES "
        "('square', GeomFromText('POLYGON((118 32, 118.01 32, 118.01 32.01, 118 32.01, 118 32))', 4326))"
    )
    conn.commit()
    conn.close()
    return path


def rss_bytes() -> int:
    """Resident memory of this process (Linux)."""
    with open("/proc/self/statm", "rb") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class PeakRSS:
    """Samples this process's resident memory every ``every_s`` inside a ``with`` block.

    ``growth`` is the peak minus the value on entry: how much more memory the
    block needed than the process already held.
    """

    def __init__(self, every_s: float = 0.002) -> None:
        self.every_s = every_s
        self.base = self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            self.peak = max(self.peak, rss_bytes())

    def __enter__(self) -> Self:
        self.base = self.peak = rss_bytes()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_bytes())

    @property
    def growth(self) -> int:
        return self.peak - self.base
