"""Bounded concurrency for eval runs: many chats, at most N in flight, input order kept.

Each worker runs in a copy of the caller's context so active usage meters
(``usage_scope``) still see the calls made on pool threads.
"""
from __future__ import annotations

import contextvars
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kgsql.llm.base import LM, Completion, Messages


def complete_many(
    lm: "LM",
    batch: Sequence["Messages"],
    *,
    max_workers: int = 4,
    step: str | None = None,
    return_exceptions: bool = False,
    **params: Any,
) -> list["Completion | BaseException"]:
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
        results: list[Completion | BaseException] = []
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
