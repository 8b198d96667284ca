"""The pooled setting (``eval run --pool-databases``): no question is told its database. Each is routed among
all of the run's databases, asked where routed (and on the next database while an answer says nothing:
``kgsql.route.fallback``), and scored on its own database, so a wrong route costs the answer; its record
notes where it went."""
from __future__ import annotations

import argparse
from typing import Any, Callable

from kgsql.cli_types import bounded_int
from kgsql.route.fallback import DEFAULT_TRIES, answer_routed

__all__ = ["add_pool_arguments", "ask_pooled", "route_fields"]


def add_pool_arguments(parser: argparse.ArgumentParser) -> None:
    """``eval run``'s flags of the pooled setting."""
    parser.add_argument("--pool-databases", nargs="?", const=True, default=False, metavar="FOLDER",
                        help="ingest every database of the dataset and route each question among them (no database "
                             "named; records note routed_db and routed_right; kgsql.route); with FOLDER, every "
                             "database under it joins the pool too (a warehouse: every Spider database)")
    parser.add_argument("--route-tries", type=bounded_int(1, 20), default=DEFAULT_TRIES, metavar="N",
                        help="with --pool-databases: ask the next routed database while an answer says nothing (no "
                             "rows, failed, refused), N at most (1: the first choice only; kgsql.route.fallback)")


def ask_pooled(route: Callable[[str], Any] | None, question: str, own: str, ask: Callable[[str], Any],
               tries: int) -> tuple[Any, Any]:
    """(the answer, its ``Routing``): ``ask(own)`` and no routing outside the pooled setting (``route`` None)."""
    if route is None:
        return ask(own), None
    asked: list[Any] = []

    def ask_on(db: str) -> Any:
        asked.append(ask(db))
        return asked[-1]

    answer, routing = answer_routed(route(question), ask_on, tries)
    _add_costs(answer, [a for a in asked if a is not answer])
    return answer, routing


def _add_costs(answer: Any, others: list[Any]) -> None:
    """The answers asked before ``answer`` cost too: their tokens, time and model calls are added to it (the
    record's cost fields and its ``calls`` list then count every try, the passed-over ones first)."""
    for other in others:
        for key, n in (getattr(other, "tokens", None) or {}).items():
            answer.tokens[key] = answer.tokens.get(key, 0) + n
        answer.latency_s = float(answer.latency_s or 0.0) + float(getattr(other, "latency_s", 0.0) or 0.0)
        answer.prompts = list(getattr(other, "prompts", None) or []) + list(answer.prompts or [])


def route_fields(routed: Any, own: str) -> dict[str, Any]:
    """What a record notes of a routed question (nothing when it was not routed): where it was answered,
    whether that is its own database, whether the call was close, the name that chose it (``kgsql.route.named``)
    and the likelier databases passed over with the SQL they tried (scored, that SQL says what the fallback
    changed)."""
    if routed is None:
        return {}
    return {"routed_db": routed.db, "routed_right": routed.db == own, "routed_close": routed.close,
            "routed_named": routed.chosen_by, "routed_passed_over": [p.to_dict() for p in routed.passed_over]}
