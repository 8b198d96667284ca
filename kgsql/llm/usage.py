"""Token and latency accounting, scoped per question and per eval run.

Every LM call is recorded into the LM's own meter (if any) and into every meter
activated in the calling context. Contexts nest, so an eval run meter and a
per-question meter both see the question's calls::

    with usage_scope("run") as run:
        for q in questions:
            with usage_scope(q.id) as per_q:
                pipeline(q)          # every lm.complete() lands in per_q and run
            print(per_q.totals())
"""
from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

from kgsql.llm.base import Completion

_ACTIVE: contextvars.ContextVar[tuple["UsageMeter", ...]] = contextvars.ContextVar(
    "kgsql_llm_active_meters", default=()
)


@dataclass
class UsageTotals:
    """Sums over a set of calls. Cache hits are counted but cost no tokens in ``paid_*``."""

    calls: int = 0
    cache_hits: int = 0
    estimated_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    paid_prompt_tokens: int = 0
    paid_completion_tokens: int = 0
    latency_s: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, c: Completion) -> None:
        self.calls += 1
        self.prompt_tokens += c.prompt_tokens
        self.completion_tokens += c.completion_tokens
        self.latency_s += c.latency_s
        if c.usage_estimated:
            self.estimated_calls += 1
        if c.from_cache:
            self.cache_hits += 1
        else:
            self.cached_tokens += c.cached_tokens
            self.paid_prompt_tokens += c.prompt_tokens
            self.paid_completion_tokens += c.completion_tokens

    def as_dict(self) -> dict[str, float | int]:
        d = dict(self.__dict__)
        d["total_tokens"] = self.total_tokens
        return d


@dataclass
class UsageMeter:
    """Thread-safe ledger of completions. Create one per run, question, or LM."""

    name: str = ""
    records: list[Completion] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def record(self, completion: Completion) -> None:
        with self._lock:
            self.records.append(completion)

    def totals(self) -> UsageTotals:
        t = UsageTotals()
        with self._lock:
            for c in self.records:
                t.add(c)
        return t

    def by_step(self) -> dict[str, UsageTotals]:
        """Totals per pipeline step name (``None`` steps under ``"-"``)."""
        out: dict[str, UsageTotals] = {}
        with self._lock:
            for c in self.records:
                out.setdefault(c.step or "-", UsageTotals()).add(c)
        return out

    def reset(self) -> None:
        with self._lock:
            self.records.clear()

    @contextlib.contextmanager
    def activate(self) -> Iterator["UsageMeter"]:
        """Route every completion made in this context (and threads started via
        ``complete_many``) into this meter, in addition to outer active meters."""
        token = _ACTIVE.set(_ACTIVE.get() + (self,))
        try:
            yield self
        finally:
            _ACTIVE.reset(token)


def usage_scope(name: str = "") -> contextlib.AbstractContextManager[UsageMeter]:
    """A fresh meter, active for the ``with`` block: ``with usage_scope("q17") as m:``."""
    return UsageMeter(name).activate()


def record_usage(completion: Completion, own: UsageMeter | None = None) -> None:
    """Record into ``own`` and every meter active in the current context (each once)."""
    seen: set[int] = set()
    for m in ((own,) if own is not None else ()) + _ACTIVE.get():
        if id(m) not in seen:
            seen.add(id(m))
            m.record(completion)
