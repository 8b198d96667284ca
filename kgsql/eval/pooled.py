"""The pooled setting (``eval run --pool-databases``): no question is told its database. Each is routed among
all of the run's databases, asked where routed (and on the next database while an answer says nothing:
``kgsql.route.fallback``), and scored on its own database, so a wrong route costs the answer; its record
notes where it went."""
from __future__ import annotations

from typing import Any, Callable

from kgsql.route.fallback import answer_routed

__all__ = ["ask_pooled", "route_fields"]


def ask_pooled(route: Callable[[str], Any] | None, question: str, own: str, ask: Callable[[str], Any],
               tries: int) -> tuple[Any, Any]:
    """(the answer, its ``Routing``): ``ask(own)`` and no routing outside the pooled setting (``route`` None)."""
    if route is None:
        return ask(own), None
    return answer_routed(route(question), ask, tries)


def route_fields(routed: Any, own: str) -> dict[str, Any]:
    """What a record notes of a routed question (nothing when it was not routed): where it was answered,
    whether that is its own database, whether the call was close, and the likelier databases passed over
    with the SQL they tried (scored, that SQL says what the fallback changed)."""
    if routed is None:
        return {}
    return {"routed_db": routed.db, "routed_right": routed.db == own, "routed_close": routed.close,
            "routed_passed_over": [p.to_dict() for p in routed.passed_over]}
