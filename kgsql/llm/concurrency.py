"""Bounded concurrency for eval runs: many chats, at most N in flight, input order kept.

Each worker runs in a copy of the caller's context so active usage meters
(``usage_scope``) still see the calls made on pool threads.
"""
from __future__ import annotations

import contextvars
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

_T = TypeVar("_T", covariant=True)


class Completes(Protocol[_T]):
    """What :func:`complete_many` needs of a model: :class:`kgsql.llm.base.LM`'s ``complete``. A protocol, not
    ``LM`` itself, because ``LM.complete_many`` calls this module (importing ``LM`` here would make a cycle)."""

    def complete(self, messages: Any, *, step: str | None = None, **params: Any) -> _T: ...


def complete_many(
    lm: Completes[_T],
    batch: Sequence[Any],
    *,
    max_workers: int = 4,
    step: str | None = None,
    return_exceptions: bool = False,
    **params: Any,
) -> list[_T | BaseException]:
    """Run ``lm.complete`` over ``batch`` with a thread pool of ``max_workers``.

    With ``return_exceptions=False`` the first failure (in input order) is
    raised after queued work is cancelled; with ``True`` failures are returned
    in their slots so one bad question does not sink an eval run.
    """
    if max_workers < 1:
        raise ValueError("max_workers must be >= 1")
    if not batch:
        return []
    with ThreadPoolExecutor(max_workers=min(max_workers, len(batch)), thread_name_prefix="kgsql-llm") as pool:
        futures: list[Future] = [
            pool.submit(contextvars.copy_context().run, lm.complete, msgs, step=step, **params)
            for msgs in batch
        ]
        results: list[_T | BaseException] = []
        for i, fut in enumerate(futures):
            try:
                results.append(fut.result())
            except Exception as exc:  # noqa: BLE001 - surfaced or returned below
                if not return_exceptions:
                    for f in futures[i + 1:]:
                        f.cancel()
                    raise
                results.append(exc)
        return results
