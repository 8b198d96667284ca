"""``ScriptedLM``: a deterministic LM for unit tests (in the spirit of DSPy's DummyLM).

Pipeline tests script what each step answers and then assert on what the
pipeline asked. Usage is estimated (~4 chars/token) and recorded like a real
call so accounting code is exercised too.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

from kgsql.llm.base import LM, Completion, Messages, ToolCall, estimate_tokens, messages_text, validate_messages
from kgsql.llm.errors import ScriptExhaustedError
from kgsql.llm.usage import UsageMeter, record_usage

Responder = Callable[[list[dict[str, Any]], "str | None", dict[str, Any]], str]
"""``fn(messages, step, params) -> text``."""

Reply = Union[str, ToolCall, Completion, BaseException, Responder]
"""A text answer, a function call (answered as ``tool_calls``), a whole completion (its text and token
log-probabilities as they are), an exception to raise, or a responder."""
Script = Union[Mapping[str, Union[Reply, Sequence[Reply]]], Sequence[Reply], Responder, None]


@dataclass(frozen=True)
class ScriptedCall:
    """What the pipeline sent: for assertions like ``lm.calls[0].messages[-1]['content']``."""

    step: str | None
    messages: list[dict[str, Any]]
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def prompt(self) -> str:
        """All message contents joined, handy for ``'schema' in call.prompt``."""
        return messages_text(self.messages)


class ScriptedLM(LM):
    """Answers from a script instead of a model.

    ``script`` may be:

    * a mapping ``step -> reply`` where reply is a string (answered every time),
      a list of replies (consumed in order), or a callable;
    * a list of replies consumed in order whatever the step;
    * a callable ``fn(messages, step, params) -> str`` used for every call.

    A reply that is an exception instance is raised, to test error paths.
    ``default`` answers steps the mapping does not name; without it such a step
    raises ``ScriptExhaustedError`` naming the step.
    """

    def __init__(
        self,
        script: Script = None,
        *,
        default: Reply | None = None,
        model: str = "scripted",
        meter: UsageMeter | None = None,
    ) -> None:
        self.model = model
        self.meter = meter
        self.default = default
        self.calls: list[ScriptedCall] = []
        self._lock = threading.Lock()
        self._by_step: dict[str, Reply | deque[Reply]] = {}
        self._queue: deque[Reply] | None = None
        self._fn: Responder | None = None
        if script is None:
            pass
        elif callable(script) and not isinstance(script, Mapping):
            self._fn = script
        elif isinstance(script, Mapping):
            for step, reply in script.items():
                self._by_step[step] = (
                    deque(reply) if isinstance(reply, Sequence) and not isinstance(reply, str) else reply
                )
        elif isinstance(script, Sequence) and not isinstance(script, str):
            self._queue = deque(script)
        else:
            raise TypeError("script must be a mapping, a list of replies, or a callable")

    def __repr__(self) -> str:
        return f"ScriptedLM(model={self.model!r}, calls={len(self.calls)})"

    def steps(self) -> list[str | None]:
        """Step names in call order."""
        return [c.step for c in self.calls]

    def calls_for(self, step: str) -> list[ScriptedCall]:
        return [c for c in self.calls if c.step == step]

    def _next_reply(self, step: str | None) -> Reply:
        if self._fn is not None:
            return self._fn
        if self._queue is not None:
            if self._queue:
                return self._queue.popleft()
            if self.default is not None:
                return self.default
            raise ScriptExhaustedError(
                f"ScriptedLM ran out of scripted replies at call {len(self.calls)} (step {step!r})"
            )
        entry = self._by_step.get(step) if step is not None else None
        if isinstance(entry, deque):
            if entry:
                return entry.popleft()
            if self.default is not None:
                return self.default
            raise ScriptExhaustedError(f"ScriptedLM has no replies left for step {step!r}")
        if entry is not None:
            return entry
        if self.default is not None:
            return self.default
        known = ", ".join(sorted(self._by_step)) or "none"
        raise ScriptExhaustedError(f"ScriptedLM has no response scripted for step {step!r} (scripted: {known})")

    def complete(self, messages: Messages, *, step: str | None = None, **params: Any) -> Completion:
        msgs = validate_messages(messages)
        t0 = time.perf_counter()
        with self._lock:
            self.calls.append(ScriptedCall(step, msgs, dict(params)))
            reply = self._next_reply(step)
        if isinstance(reply, BaseException):
            raise reply
        text = reply(msgs, step, dict(params)) if callable(reply) and not isinstance(reply, ToolCall) else reply
        logprobs: tuple[tuple[str, float], ...] = ()
        if isinstance(text, Completion):
            text, logprobs = text.text, text.token_logprobs
        calls: tuple[ToolCall, ...] = ()
        if isinstance(text, ToolCall):
            calls, text = (text,), ""
        if not isinstance(text, str):
            raise TypeError(f"scripted reply for step {step!r} must be a str, got {type(text).__name__}")
        completion = Completion(
            text=text, prompt_tokens=estimate_tokens(messages_text(msgs)),
            completion_tokens=estimate_tokens(text or str(calls)), latency_s=time.perf_counter() - t0,
            model=self.model, step=step, finish_reason="tool_calls" if calls else "stop", usage_estimated=True,
            tool_calls=calls, token_logprobs=logprobs,
        )
        record_usage(completion, self.meter)
        return completion
