"""The one LLM seam: pipeline code depends on ``LM`` and ``Completion`` only.

Any backend (OpenAI-compatible HTTP, scripted test double) implements
``complete``; usage accounting and concurrency come for free from here.
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kgsql.errors import InputError

Message = Mapping[str, Any]
"""A chat message: ``{"role": "system"|"user"|"assistant", "content": str}``."""

Messages = Sequence[Message]

CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class ToolCall:
    """One function call an endpoint asked for (OpenAI ``tools``); ``arguments`` is its raw JSON text."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Completion:
    """One model answer plus what it cost.

    Token counts come from the endpoint's ``usage`` block; when the endpoint
    sends none they are estimated (~4 chars/token) and ``usage_estimated`` is set.
    """

    text: str
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int = 0
    latency_s: float = 0.0
    model: str = ""
    step: str | None = None
    finish_reason: str | None = None
    from_cache: bool = False
    usage_estimated: bool = False
    attempts: int = 1
    tool_calls: tuple[ToolCall, ...] = ()  # function calls asked for (``tools`` requests only)
    #: Each generated token with its log-probability, where the request asked for them (``logprobs=True``).
    token_logprobs: tuple[tuple[str, float], ...] = ()

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def estimate_tokens(text: str) -> int:
    """Rough token count for endpoints that report no usage (~4 chars per token)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0


def messages_text(messages: Messages) -> str:
    """All message contents joined, for estimates and cache keys."""
    parts: list[str] = []
    for m in messages:
        c = m.get("content")
        if isinstance(c, str):
            parts.append(c)
        elif isinstance(c, list):  # OpenAI content parts: [{"type": "text", "text": ...}]
            parts.extend(str(p.get("text", "")) for p in c if isinstance(p, Mapping))
    return "\n".join(parts)


def validate_messages(messages: Messages) -> list[dict[str, Any]]:
    """Copy messages into plain dicts, refusing shapes every endpoint would reject."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence) or not messages:
        raise InputError("messages must be a non-empty list of {'role', 'content'} dicts")
    out: list[dict[str, Any]] = []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping) or "role" not in m or "content" not in m:
            raise InputError(f"message {i} must be a dict with 'role' and 'content'")
        out.append(dict(m))
    return out


class LM(ABC):
    """A chat model. Implement ``complete``; everything else builds on it."""

    model: str = ""

    @abstractmethod
    def complete(self, messages: Messages, *, step: str | None = None, **params: Any) -> Completion:
        """Answer one chat. ``step`` names the pipeline step (evidence, sql, ...) for
        usage accounting and scripted tests; ``params`` are OpenAI chat parameters
        (max_tokens, stop, seed, response_format, ...)."""

    def complete_many(
        self,
        batch: Sequence[Messages],
        *,
        max_workers: int = 4,
        step: str | None = None,
        return_exceptions: bool = False,
        **params: Any,
    ) -> list[Completion | BaseException]:
        """Answer many chats with at most ``max_workers`` in flight, in input order."""
        from kgsql.llm.concurrency import complete_many

        return complete_many(
            self, batch, max_workers=max_workers, step=step, return_exceptions=return_exceptions, **params
        )
