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
from typing import Any, Callable, Sequence

from kgsql.errors import KgsqlError
from kgsql.route.router import PassedOver, Routing

__all__ = ["DEFAULT_TRIES", "answer_routed", "answer_turn", "says_nothing"]

#: Databases asked at most, in the router's order (the first choice and the runner-up).
DEFAULT_TRIES = 2
#: Flags of an answer that says nothing (``kgsql.generate.flags``).
_NOTHING = {"empty-result": "returned no rows", "null-result": "returned one row of NULL", "failed": "failed"}


def says_nothing(answer: Any) -> str | None:
    """Why ``answer`` says nothing (refused, its query failed, no rows, one NULL), or None when it says
    something (or when no query was written: a model that cannot be reached fails on every database)."""
    if getattr(answer, "refusal", ""):
        return "was a refusal"
    codes = [w.get("code") for w in getattr(answer, "warnings", None) or []]
    found = next((_NOTHING[c] for c in codes if c in _NOTHING), None)
    if found is None and getattr(answer, "error", None) and getattr(answer, "sql", ""):
        found = "failed"  # the query ran and failed; an error with no SQL (the model unreachable) is no answer at all
    return found


def answer_routed(routing: Routing, ask: Callable[[str], Any], tries: int = DEFAULT_TRIES) -> tuple[Any, Routing]:
    """Ask ``ask(db)`` on the routing's first choice, and on the next databases (``tries`` in all) while each
    answer says nothing (:func:`says_nothing`). Returns the first answer that says something with the
    routing noting the databases passed over, else the first choice's answer (its routing noting the other
    databases asked, ``also_tried``, which no longer names a close second to try)."""
    first = None
    passed: list[PassedOver] = []
    for route in routing.ranked[:max(1, tries)]:
        try:
            answer = ask(route.db)
        except KgsqlError:
            if first is None:
                raise
            break  # the runner-up could not be asked: the first choice's answer stands
        if first is not None and getattr(answer, "error", None) and not getattr(answer, "sql", ""):
            break  # no query written there (the model unreachable): not an answer to prefer to the first
        why = says_nothing(answer)
        if why is None:
            if not passed:
                return answer, routing
            return answer, dataclasses.replace(routing, passed_over=tuple(passed))
        first = answer if first is None else first
        passed.append(PassedOver(route.db, why, getattr(answer, "sql", "") or ""))
    if len(passed) > 1:  # every database asked said nothing: the first choice's answer, and the others noted
        return first, dataclasses.replace(routing, also_tried=tuple(passed[1:]))
    return first, routing


def answer_turn(routing: Routing | None, db: str, earlier: Sequence[str],
                ask: Callable[[str], Any]) -> tuple[Any, Routing | None]:
    """A question's answer where it belongs: on ``db`` when nothing was routed or the question follows
    ``earlier`` ones (its conversation is about that database), else :func:`answer_routed`."""
    if routing is None or earlier:
        return ask(db), routing
    return answer_routed(routing, ask)
