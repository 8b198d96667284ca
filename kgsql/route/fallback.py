"""When the routed database's answer says nothing, ask the next one.

A question routed among many databases can land on a twin that shares its topic: "What region is Kabul in?"
goes to ``storm_record``, which has a ``region`` table, rather than ``world_1``. The model still writes SQL
there, and the answer says nothing: no rows, a query that fails, a refusal (the database lacks what the
question needs). Those are what the answer's own review and refusal already say (``kgsql.generate.flags``,
``kgsql.generate.refusal``), so no extra model call decides it: the runner-up is asked only then, and its
answer is kept when it says something. A question whose true answer is empty costs one more answer and keeps
its first; the routing notes every database passed over and why (``Routing.passed_over``).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

from kgsql.route.router import PassedOver, Routing

__all__ = ["DEFAULT_TRIES", "answer_routed", "says_nothing"]

#: Databases asked at most, in the router's order (the first choice and the runner-up).
DEFAULT_TRIES = 2
#: Flags of an answer that says nothing (``kgsql.generate.flags``).
_NOTHING = {"empty-result": "returned no rows", "null-result": "returned one row of NULL", "failed": "failed"}


def says_nothing(answer: Any) -> str | None:
    """Why ``answer`` says nothing (refused, failed, no rows, one NULL), or None when it says something."""
    if getattr(answer, "refusal", ""):
        return "was a refusal"
    codes = [w.get("code") for w in getattr(answer, "warnings", None) or []]
    found = next((_NOTHING[c] for c in codes if c in _NOTHING), None)
    if found is None and getattr(answer, "error", None):
        found = "failed"
    return found


def answer_routed(routing: Routing, ask: Callable[[str], Any], tries: int = DEFAULT_TRIES) -> tuple[Any, Routing]:
    """Ask ``ask(db)`` on the routing's first choice, and on the next databases (``tries`` in all) while each
    answer says nothing (:func:`says_nothing`). Returns the first answer that says something with the
    routing noting the databases passed over, else the first choice's answer and its routing unchanged."""
    first = None
    passed: list[PassedOver] = []
    for route in routing.ranked[:max(1, tries)]:
        answer = ask(route.db)
        why = says_nothing(answer)
        if why is None:
            if not passed:
                return answer, routing
            return answer, dataclasses.replace(routing, passed_over=tuple(passed), answered=route.db)
        first = answer if first is None else first
        passed.append(PassedOver(route.db, why, getattr(answer, "sql", "") or ""))
    return first, routing
