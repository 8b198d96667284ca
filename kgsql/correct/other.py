"""Other rule: any failure no other rule answers gets SQLite's own message."""
from __future__ import annotations

from kgsql.correct.tip import Tip

__all__ = ["OTHER_TIP", "other_tips"]

OTHER_TIP = "SQLite reported an error: {message}; fix the query so that it runs."


def other_tips(message: str) -> list[Tip]:
    """One generic tip quoting ``message``."""
    return [Tip("other", OTHER_TIP.format(message=message.strip().rstrip(".")))]
