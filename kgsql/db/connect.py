"""Opening SQLite / SpatiaLite files: the one place connections are made.

Python 3.11's stdlib ``sqlite3`` often cannot load extensions, so kgsql uses
``pysqlite3`` (from ``pysqlite3-binary``) when installed and falls back to the
stdlib module. SpatiaLite is loaded only here, never by user SQL.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from kgsql.errors import DatabaseFileError, SpatialExtensionError

try:  # pragma: no cover - which branch runs depends on the platform
    import pysqlite3.dbapi2 as sqlite3  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover
    import sqlite3  # type: ignore[no-redef]

SQLITE_MAGIC = b"SQLite format 3\x00"
SPATIALITE_MODULE = os.environ.get("KGSQL_SPATIALITE", "mod_spatialite")

Connection = Any  # sqlite3.Connection of whichever sqlite3 module is in use


def check_sqlite_file(path: str | os.PathLike[str]) -> Path:
    """Return ``path`` as a Path if it is an existing, readable SQLite file.

    Raises DatabaseFileError naming the problem (missing, a directory, not
    SQLite, unreadable) so callers fail before touching anything else.
    """
    p = Path(path)
    if not p.exists():
        raise DatabaseFileError(f"database file not found: {p}")
    if p.is_dir():
        raise DatabaseFileError(f"expected a SQLite file but got a directory: {p}")
    try:
        with open(p, "rb") as fh:
            header = fh.read(16)
    except OSError as exc:
        raise DatabaseFileError(f"cannot read database file {p}: {exc.strerror}") from exc
    if p.stat().st_size == 0:
        raise DatabaseFileError(f"database file is empty: {p}")
    if header != SQLITE_MAGIC:
        raise DatabaseFileError(f"not a SQLite database (bad header): {p}")
    return p


def has_geometry_columns(conn: Connection) -> bool:
    """True when the database carries SpatiaLite metadata (``geometry_columns``)."""
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND lower(name)='geometry_columns'"
    ).fetchone()
    return row is not None


def load_spatialite(conn: Connection) -> None:
    """Load mod_spatialite into ``conn`` and switch extension loading off again."""
    try:
        conn.enable_load_extension(True)
        conn.load_extension(SPATIALITE_MODULE)
    except AttributeError as exc:
        raise SpatialExtensionError(
            "this Python's sqlite3 cannot load extensions; install pysqlite3-binary"
        ) from exc
    except Exception as exc:  # sqlite3.OperationalError from either module
        raise SpatialExtensionError(
            f"cannot load SpatiaLite ({SPATIALITE_MODULE}): {exc}; "
            "install it with: apt-get install -y libsqlite3-mod-spatialite"
        ) from exc
    finally:
        try:
            conn.enable_load_extension(False)
        except Exception:  # pragma: no cover - connection without the method
            pass


def open_database(
    path: str | os.PathLike[str],
    *,
    read_only: bool = True,
    spatial: bool | None = None,
    check: bool = True,
) -> Connection:
    """Open a SQLite file, loading SpatiaLite when the file is spatial.

    ``spatial=None`` detects it from ``geometry_columns``; ``True`` forces it,
    ``False`` never loads it. Read-only connections use a ``mode=ro`` URI and
    ``PRAGMA query_only`` so nothing can write through them. A corrupt file
    raises DatabaseFileError here rather than at the first query.
    """
    p = check_sqlite_file(path) if check else Path(path)
    uri = f"file:{p.resolve().as_posix()}?mode={'ro' if read_only else 'rw'}"
    try:
        conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        if read_only:
            conn.execute("PRAGMA query_only = ON")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        is_spatial = has_geometry_columns(conn) if spatial is None else spatial
    except sqlite3.DatabaseError as exc:
        raise DatabaseFileError(f"corrupt or unreadable SQLite database {p}: {exc}") from exc
    if is_spatial:
        try:
            load_spatialite(conn)
        except SpatialExtensionError:
            conn.close()
            raise
    return conn


def is_spatial_database(path: str | os.PathLike[str]) -> bool:
    """True when the file is a SpatiaLite database (has ``geometry_columns``)."""
    conn = open_database(path, spatial=False)
    try:
        return has_geometry_columns(conn)
    finally:
        conn.close()
