"""What a user names a database by: a SQLite file path, or a URL of another engine.

``python -m kgsql.ingest`` and every other place that takes a database accept
the same forms, so the rest of kgsql asks one question of a name — which
engine, where — and never parses it again. Which engine a name means is
the registered engine classes' to say (:mod:`kgsql.db.engine`: schemes,
suffixes); the built-in ones read:

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
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

from kgsql.db.engine import (
    ENGINES,
    Engine,
    Target,
    default_engine,
    engine_for_header,
    engine_for_path,
    engine_for_scheme,
    engine_named,
)
from kgsql.errors import DatabaseFileError, InputError
from kgsql.secrets import redact_uri

__all__ = ["Target", "available", "engine_class", "engine_of", "file_engine", "header_engine", "is_url",
           "parse_target", "require_file_engine", "with_password", "wrong_engine"]

_SCHEME = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*):")


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
        return engine_for_path(path).target_for_path(path)
    scheme = _SCHEME.match(str(text)).group("scheme").lower()  # type: ignore[union-attr]
    engine = engine_for_scheme(scheme)
    if engine is None:
        known = [e.example for e in ENGINES.values() if e.example]
        ways = ", ".join(known[:-1]) + (" or " if len(known) > 1 else "") + known[-1]
        raise InputError(f"{redact_uri(str(text))}: unsupported database URL scheme '{scheme}'; use {ways}")
    return engine.target_for_url(str(text))


def engine_class(db: object) -> type[Engine]:
    """The engine of a database name, :class:`Target` or open SQLite connection (cheap: no file access)."""
    if isinstance(db, Target):
        return db.engine_class
    if isinstance(db, (str, os.PathLike)):
        text = os.fspath(db)
        return parse_target(text).engine_class if is_url(text) else engine_for_path(text)
    return default_engine()  # an open SQLite connection


def engine_of(db: object) -> str:
    """The engine's name ("sqlite", "postgres", "duckdb"...) for a database name; see :func:`engine_class`."""
    return engine_class(db).name


def file_engine(path: str | os.PathLike[str]) -> str | None:
    """The engine whose file format ``path`` holds, read from its header, or None (no engine's,
    or not a readable file). The suffix picks the engine; this checks it."""
    try:
        with open(path, "rb") as fh:
            return header_engine(fh.read(16))
    except OSError:
        return None


def header_engine(header: bytes) -> str | None:
    """The name of the engine whose file format begins with ``header`` (a file's first 16 bytes), or None."""
    found = engine_for_header(header)
    return found.name if found is not None else None


def wrong_engine(path: Path, found: str, expected_label: str) -> str:
    """The one line for a file whose header names engine ``found`` where ``expected_label``'s was wanted."""
    engine = engine_named(found)
    return f"{path} is a {engine.label} database, not {expected_label} (its header says so); {engine.rename_hint(path)}"


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
    raise DatabaseFileError(wrong_engine(target.path, found, target.label))


def with_password(target: Target, password: str) -> Target:
    """``target`` (a PostgreSQL URL without a password) with ``password`` given apart from it, e.g. read
    from the environment, so that it is never on a command line; it is then kept like a URL's password."""
    if not target.engine_class.takes_password:
        takers = " or ".join(e.label for e in ENGINES.values() if e.takes_password)
        raise InputError(f"{target.display}: only a {takers} URL takes a password")
    if target.password:
        raise InputError(f"{target.display}: the URL already has a password; give it once")
    parts = urlsplit(target.url)
    if "@" not in parts.netloc or not parts.netloc.split("@", 1)[0]:
        raise InputError(f"{target.display}: a password needs a user; write postgresql://USER@host/db")
    userinfo, host = parts.netloc.rsplit("@", 1)
    netloc = f"{userinfo.split(':', 1)[0]}:{quote(password, safe='')}@{host}"
    return target.engine_class.target_for_url(urlunsplit((parts.scheme, netloc, parts.path, parts.query,
                                                          parts.fragment)))
