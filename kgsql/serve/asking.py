"""``POST /api/ask``'s body read into ``Service.ask``'s arguments, each field checked with a one-line error.

A follow-up question comes with its conversation in one of two ways: ``history``,
the earlier questions themselves (oldest first; the caller keeps them, as
``kgsql ask --conversation`` does; ``history_sql``, optional, the SQL answered for
each, which a method with ``context=history`` shows), or ``conversation``, an id the caller chose
for a thread the service keeps (the page, an API client; ``reset: true``
starts that thread over with this question). Not both.
With no ``db`` the question is routed to the likeliest database (``kgsql.route``); the answer's
``routing`` says which, and names a close second.
"""
from __future__ import annotations

from typing import Any

from kgsql.errors import InputError

MAX_HISTORY = 20  # earlier questions one request may carry (the rewrite prompt stays bounded)


def text_field(body: dict[str, Any], key: str, *, required: bool = True) -> str | None:
    """``body[key]`` as a non-empty string (None when absent and not required)."""
    value = body.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"'{key}' must be a non-empty string")
    return value


def ask_arguments(body: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of ``Service.ask`` for this body."""
    sets, limits = body.get("sets") or {}, body.get("limits") or {}
    if not isinstance(sets, dict) or not isinstance(limits, dict):
        raise InputError("'sets' and 'limits' must be objects of method options")
    evidence = body.get("evidence")
    if evidence is not None and not isinstance(evidence, str):
        raise InputError("'evidence' must be a string")
    history = body.get("history")
    if history is not None and (not isinstance(history, list)
                                or not all(isinstance(q, str) and q.strip() for q in history)):
        raise InputError("'history' must be a list of the earlier questions (non-empty strings), oldest first")
    if history and len(history) > MAX_HISTORY:
        raise InputError(f"'history' holds {len(history)} questions; at most {MAX_HISTORY} are read")
    history_sql = body.get("history_sql")
    if history_sql is not None and (not isinstance(history_sql, list) or len(history_sql) != len(history or [])
                                    or not all(isinstance(q, str) for q in history_sql)):
        raise InputError("'history_sql' must be a list of the SQL answered for each earlier question ('' for none), "
                         "as long as 'history'")
    conversation = text_field(body, "conversation", required=False)
    if conversation is not None and history:
        raise InputError("give 'history' (the earlier questions) or 'conversation' (a thread the service keeps), "
                         "not both")
    reset = body.get("reset", False)
    if not isinstance(reset, bool):
        raise InputError("'reset' must be true or false")
    return {"db": text_field(body, "db", required=False), "question": text_field(body, "question"),
            "method": text_field(body, "method", required=False) or "kgsql", "evidence": evidence or None,
            "sets": sets, "limits": limits, "trace": bool(body.get("trace")), "history": history or None,
            "history_sql": history_sql or None,
            "conversation": conversation, "reset": reset}
