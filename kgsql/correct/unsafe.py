"""Unsafe rule: SQL the guard rejected (a write, several statements, a denied function)."""
from __future__ import annotations

from kgsql.correct.tip import Tip

__all__ = ["CANDIDATE_UNSAFE_TIP", "UNSAFE_TIP", "candidate_tips", "unsafe_tips"]

#: For :func:`kgsql.correct.tips_from_error`: names the guard's reason.
UNSAFE_TIP = "The query was rejected ({reason}); write exactly one read-only SQLite SELECT statement."
#: For a rejected candidate in :func:`kgsql.correct.check_candidate`.
CANDIDATE_UNSAFE_TIP = "Write exactly one read-only SELECT query."


def unsafe_tips(error: BaseException) -> list[Tip]:
    """The tip for an UnsafeSQLError, with its ``reason``."""
    return [Tip("unsafe", UNSAFE_TIP.format(reason=getattr(error, "reason", str(error))))]


def candidate_tips() -> list[Tip]:
    """The tip a rejected candidate gets for the next round."""
    return [Tip("unsafe", CANDIDATE_UNSAFE_TIP)]
