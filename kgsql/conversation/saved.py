"""Named conversations on disk, so ``kgsql ask --conversation NAME`` continues one across invocations.

Each is ``<cache>/conversations/NAME.json`` (``{"db", "turns"}``), private like
the rest of kgsql's state (0600 in a 0700 folder) since it holds the user's
questions and SQL, and replaced atomically, so a crash never leaves half a
file. A conversation belongs to the database it started on: asking it about
another one is refused (``--new-conversation`` starts it over there). Two
``ask`` writing the same name at once: the later one's turns win.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from kgsql.conversation.turns import Conversation, Turn
from kgsql.errors import InputError
from kgsql.paths import cache_root, private_file, write_private

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def conversation_file(name: str) -> Path:
    """Where conversation ``name`` is kept (a bad name is one InputError, never a path outside the folder)."""
    if not _NAME.match(name or ""):
        raise InputError(f"--conversation {name!r}: a name is 1-64 letters, digits or _ . - "
                         f"(starting with a letter or digit)")
    return cache_root() / "conversations" / f"{name}.json"


def _read(path: Path) -> tuple[Any, list[Turn]]:
    """(database, turns) of a saved conversation file; OSError, ValueError, KeyError, TypeError or
    InputError when it is not one."""
    data = json.loads(private_file(path).read_text(encoding="utf-8"))
    return data["db"], [Turn.from_dict(t) for t in data["turns"]]


_UNREADABLE = (OSError, ValueError, KeyError, TypeError, InputError)


def load(name: str, db: str, *, new: bool = False) -> Conversation:
    """Conversation ``name`` over ``db`` as saved (empty when new, or with ``new``)."""
    path = conversation_file(name)
    if new or not path.exists():
        return Conversation(None, db)
    try:
        saved_db, turns = _read(path)
    except _UNREADABLE as exc:
        raise InputError(f"conversation {name} cannot be read ({path}: {exc}); --new-conversation starts "
                         f"it over") from None
    if saved_db != db:
        raise InputError(f"conversation {name} is about database {saved_db!r}, not {db!r}; "
                         f"--new-conversation starts it over on {db!r}")
    return Conversation(None, db, turns=turns)


def save(name: str, conversation: Conversation) -> Path:
    """Write ``conversation`` as ``name`` (atomically, 0600)."""
    path = conversation_file(name)
    write_private(path, json.dumps(conversation.to_dict(), ensure_ascii=False, indent=1).encode("utf-8"))
    return path


def saved_conversations() -> list[tuple[str, str, list[Turn]]]:
    """Every saved conversation as (name, database, turns), by name; one that cannot be read is listed
    with no turns and its database as ``?`` (``--new-conversation`` starts it over)."""
    folder = cache_root() / "conversations"
    found = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            db, turns = _read(path)
            found.append((path.stem, str(db), turns))
        except _UNREADABLE:
            found.append((path.stem, "?", []))
    return found
