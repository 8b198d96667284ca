"""Empty-result rule: a soft tip when the query found nothing but the question expects rows."""
from __future__ import annotations

import re
from typing import Any

from kgsql.correct.context import CheckContext, EmptyRule
from kgsql.correct.tip import Tip
from kgsql.db.guard import QueryResult

__all__ = ["EMPTY_RESULT_TIP", "ON_EMPTY", "empty_result_tip"]

EMPTY_RESULT_TIP = ("The query returned no rows; check the filter values against the value examples "
                    "(spelling, case, full names) and check that the join conditions are right.")

_YES_NO = re.compile(r"^\s*(is|are|was|were|does|do|did|has|have|had|can|could|will)\b|\bwhether\b", re.I)


def empty_result_tip(question: str, sql: str = "", result: Any = None) -> Tip | None:
    """A soft tip when the query found nothing but the question expects rows.

    ``result`` (a QueryResult or a list of rows) is optional; one row of only
    NULLs (an aggregate over no rows) counts as empty. Yes/no questions ("Is
    there ...", "Does ...") may rightly have an empty answer, so they get none.
    ``sql`` is accepted for callers that pass it; the tip does not depend on it.
    """
    if result is not None:
        rows = getattr(result, "rows", result)
        if any(any(v is not None for v in row) for row in rows):
            return None
    if _YES_NO.search(question or ""):
        return None
    return Tip("empty_result", EMPTY_RESULT_TIP)


def _on_empty(ctx: CheckContext, sql: str, result: QueryResult) -> list[Tip]:
    tip = empty_result_tip(ctx.question, sql)
    return [tip] if tip else []


#: Runs when a query returned no rows (see kgsql.correct.rules.EMPTY_RULES).
ON_EMPTY: EmptyRule = _on_empty
