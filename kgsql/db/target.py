"""What a user names a database by: a SQLite file path, or a URL of another engine.

``python -m kgsql.ingest`` and every other place that takes a database accept
the same three forms, so the rest of kgsql asks one question of a name —
which engine, where — and never parses it again:

* a file path (``spider/concert_singer.sqlite``) or ``sqlite:///path``:
  SQLite / SpatiaLite;
* ``postgresql://user[:password]@host[:port]/dbname[?param=value...]``
  (also ``postgres://``): PostgreSQL, with PostGIS when the database has it;
  every libpq parameter works (``?host=/run/postgresql`` for a socket
  folder, ``sslmode``...), and a password may instead come from
  ``PGPASSWORD``, ``~/.pgpass`` or kgsql's own store
  (:mod:`kgsql.db.credentials`);
* ``duckdb:///path/file.duckdb`` (the path after ``duckdb://``, so
  ``duckdb:///data/x.duckdb`` is the absolute ``/data/x.duckdb``;
  ``duckdb:x.duckdb`` is relative), or a path ending in ``.duckdb``.

A target's :attr:`Target.display` is the form kgsql prints and stores (in
the graph, records, logs): the password masked. :attr:`Target.url` is the
only form with the password and goes nowhere but the driver.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from kgsql.errors import DatabaseFileError, InputError
from kgsql.secrets import MASK, redact_uri

__all__ = ["ENGINES", "Engine", "Target", "available", "engine_of", "file_engine", "header_engine", "is_url",
           "parse_target", "require_file_engine", "with_password"]

Engine = Literal["sqlite", "postgres", "duckdb"]
#: Engine names, which are also sqlglot's dialect names for them.
ENGINES: Final[tuple[str, ...]] = ("sqlite", "postgres", "duckdb")
#: What a user reads: the engine's own name.
ENGINE_LABELS: Final[dict[str, str]] = {"sqlite": "SQLite", "postgres": "PostgreSQL", "duckdb": "DuckDB"}

_SCHEME = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*):")
_POSTGRES_SCHEMES: Final = frozenset({"postgresql", "postgres", "postgresql+psycopg", "postgresql+psycopg2"})
DUCKDB_SUFFIXES: Final = frozenset({".duckdb", ".ddb"})
#: The first 16 bytes of every SQLite file.
SQLITE_HEADER: Final = b"SQLite format 3\x00"
#: Bytes 8-11 of every DuckDB file (after an 8-byte checksum).
DUCKDB_MAGIC: Final = b"DUCK"


@dataclass(frozen=True)
class Target:
    """One database: which engine, how to reach it, and how to show it.

    ``url`` holds the password when one was given (never print it);
    ``display`` masks it. ``path`` is the file of SQLite and DuckDB targets.
    ``name`` is the database's default name in the graph: the file stem, or
    PostgreSQL's database name.
    """

    engine: Engine
    url: str = field(repr=False)
    display: str
    name: str
    path: Path | None = None
    password: str | None = field(default=None, repr=False)

    @property
    def is_file(self) -> bool:
        return self.engine in ("sqlite", "duckdb")

    @property
    def label(self) -> str:
        return ENGINE_LABELS[self.engine]

    def __str__(self) -> str:  # never the password
        return self.display


def is_url(text: str | object) -> bool:
    """True when ``text`` names a database by URL (``scheme:...``) rather than by file path.

    A Windows drive letter (``C:\\data``) is a path; so is anything without a
    scheme of two or more letters.
    """
    if not isinstance(text, str):
        return False
    match = _SCHEME.match(text)
    return bool(match) and len(match.group("scheme")) > 1


def available(path: str | os.PathLike[str] | None) -> str | None:
    """A stored database name kgsql can run SQL on: a URL (its engine says at connect time whether
    it answers) or an existing file; None for an empty name or a file that is gone."""
    if not path:
        return None
    text = os.fspath(path)
    return text if is_url(text) or os.path.isfile(text) else None


def parse_target(text: str | Path) -> Target:
    """The :class:`Target` a user's database name stands for; InputError names what is wrong.

    Paths are not checked for existence here (the reader says "not found").
    """
    if isinstance(text, Path) or not is_url(text):
        path = Path(text)
        if path.suffix.lower() in DUCKDB_SUFFIXES:
            return _file_target("duckdb", path)
        return _file_target("sqlite", path)
    scheme = _SCHEME.match(str(text)).group("scheme").lower()  # type: ignore[union-attr]
    rest = str(text)[len(scheme) + 1:]
    if scheme in _POSTGRES_SCHEMES:
        return _postgres_target(str(text))
    if scheme == "duckdb":
        return _file_target("duckdb", _url_path(rest, text))
    if scheme in ("sqlite", "spatialite"):
        return _file_target("sqlite", _url_path(rest, text))
    raise InputError(f"{redact_uri(str(text))}: unsupported database URL scheme '{scheme}'; "
                     f"use a SQLite file path, postgresql://... or duckdb:///path.duckdb")


def _url_path(rest: str, text: str | Path) -> Path:
    """The file of ``duckdb:``/``sqlite:`` URLs: ``///abs`` is ``/abs``, ``x.duckdb`` relative."""
    if rest.startswith("//"):
        rest = rest[2:]  # the empty authority
        if rest and not rest.startswith("/"):
            raise InputError(f"{redact_uri(str(text))}: a file URL has no host; "
                             f"write three slashes before an absolute path (duckdb:///data/x.duckdb)")
    path = unquote(rest.split("?", 1)[0])
    if not path:
        raise InputError(f"{redact_uri(str(text))}: the URL names no file")
    return Path(path)


def _file_target(engine: Engine, path: Path) -> Target:
    resolved = path.expanduser()
    try:
        resolved = resolved.resolve()
    except OSError:  # pragma: no cover - a path resolve() cannot follow
        pass
    display = str(resolved) if engine == "sqlite" else f"duckdb://{resolved}"
    return Target(engine=engine, url=display, display=display, name=resolved.stem, path=resolved)


def _postgres_target(text: str) -> Target:
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise InputError(f"{redact_uri(text)}: not a valid PostgreSQL URL ({exc})") from exc
    dbname = unquote(parts.path.lstrip("/"))
    if not dbname:
        query = dict(p.split("=", 1) for p in parts.query.split("&") if "=" in p)
        dbname = unquote(query.get("dbname", ""))
    if not dbname:
        raise InputError(f"{redact_uri(text)}: the URL names no database; write postgresql://user@host/dbname")
    if port is not None and not 0 < port < 65536:
        raise InputError(f"{redact_uri(text)}: port {port} is out of range")
    url = "postgresql" + text[text.index(":"):]  # psycopg's libpq wants the plain scheme
    password = unquote(parts.password) if parts.password else None
    return Target(engine="postgres", url=url, display=redact_uri(url), name=dbname,
                  password=None if password == MASK else password)


def engine_of(db: object) -> str:
    """"sqlite", "postgres" or "duckdb" for a database name (cheap: no file system access)."""
    if isinstance(db, (str, os.PathLike)):
        text = os.fspath(db)
        if is_url(text):
            return parse_target(text).engine
        return "duckdb" if Path(text).suffix.lower() in DUCKDB_SUFFIXES else "sqlite"
    return "sqlite"  # an open SQLite connection


def file_engine(path: str | os.PathLike[str]) -> Engine | None:
    """The engine whose file format ``path`` holds, read from its header: "sqlite", "duckdb",
    or None (neither, or not a readable file). The suffix picks the engine; this checks it."""
    try:
        with open(path, "rb") as fh:
            return header_engine(fh.read(16))
    except OSError:
        return None


def header_engine(header: bytes) -> Engine | None:
    """The engine whose file format begins with ``header`` (a file's first 16 bytes), or None."""
    if header == SQLITE_HEADER:
        return "sqlite"
    if header[8:12] == DUCKDB_MAGIC:
        return "duckdb"
    return None


def require_file_engine(target: Target) -> None:
    """Refuse a file whose header names another engine than its name does (a SQLite file called
    ``x.duckdb``), in one line saying how to name it, instead of the other engine's confusing error.

    Renaming is the fix rather than opening it with the right engine: every later command picks
    the engine from the stored name again (:func:`parse_target`, no file access).
    """
    if target.path is None:
        return
    found = file_engine(target.path)
    if found is None or found == target.engine:
        return
    fix = (f"rename it to {target.path.stem}.sqlite" if found == "sqlite"
           else f"ingest it as duckdb://{target.path} or rename it to {target.path.stem}.duckdb")
    raise DatabaseFileError(f"{target.path} is a {ENGINE_LABELS[found]} database, not {target.label} "
                            f"(its header says so); {fix}")


def with_password(target: Target, password: str) -> Target:
    """``target`` (a PostgreSQL URL without a password) with ``password`` given apart from it, e.g. read
    from the environment, so that it is never on a command line; it is then kept like a URL's password."""
    if target.engine != "postgres":
        raise InputError(f"{target.display}: only a PostgreSQL URL takes a password")
    if target.password:
        raise InputError(f"{target.display}: the URL already has a password; give it once")
    parts = urlsplit(target.url)
    if "@" not in parts.netloc or not parts.netloc.split("@", 1)[0]:
        raise InputError(f"{target.display}: a password needs a user; write postgresql://USER@host/db")
    userinfo, host = parts.netloc.rsplit("@", 1)
    netloc = f"{userinfo.split(':', 1)[0]}:{quote(password, safe='')}@{host}"
    return _postgres_target(urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment)))
