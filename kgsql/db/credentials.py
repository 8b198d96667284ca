"""Database passwords kept out of the graph, the records and every message.

The graph stores a database's URL with its password masked
(``postgresql://kg:***@db.example/sales``), so that whoever can read the
graph cannot read the password. Connecting later needs it back: when a URL
with a password is ingested, the password is kept here, in a 0600 file in
kgsql's private state folder, under the masked URL; :func:`connect_url`
puts it back for the driver. Without an entry the password part is dropped
and libpq finds one the usual ways (``PGPASSWORD``, ``~/.pgpass``,
``PGPASSFILE``, peer or trust authentication), which is also the way to
avoid storing it at all: ingest ``postgresql://kg@db.example/sales`` with
``~/.pgpass`` set up.
"""
from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

from kgsql.db.target import Target
from kgsql.paths import cache_root, write_private
from kgsql.secrets import MASK

__all__ = ["connect_url", "forget", "remember", "store_path"]


def store_path() -> Path:
    """The 0600 file of remembered database passwords (in kgsql's private state folder)."""
    return cache_root() / "credentials" / "databases.json"


def _load() -> dict[str, str]:
    try:
        data = json.loads(store_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def remember(target: Target) -> None:
    """Keep ``target``'s password (if its URL has one) under its masked URL."""
    if not target.password:
        return
    stored = _load()
    if stored.get(target.display) == target.password:
        return
    stored[target.display] = target.password
    write_private(store_path(), json.dumps(stored, indent=1, sort_keys=True).encode())


def forget(display: str) -> bool:
    """Drop the password kept for a masked URL; True when there was one."""
    stored = _load()
    if stored.pop(display, None) is None:
        return False
    write_private(store_path(), json.dumps(stored, indent=1, sort_keys=True).encode())
    return True


def connect_url(target: Target) -> str:
    """The URL to hand the driver: the password given, else the one kept, else none (libpq's own lookup)."""
    if target.password or MASK not in target.url:
        return target.url
    password = _load().get(target.display)
    parts = urlsplit(target.url)
    userinfo, host = parts.netloc.rsplit("@", 1)
    user = userinfo.split(":", 1)[0]
    netloc = f"{user}:{quote(password, safe='')}@{host}" if password else f"{user}@{host}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
