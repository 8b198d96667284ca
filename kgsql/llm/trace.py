"""What happened while answering: every prompt, response, token and second."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from kgsql.llm.base import LM, Completion, Messages


@dataclass
class StepTrace:
    """One LLM call of the pipeline."""

    step: str
    messages: list[dict[str, Any]]
    response: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    latency_s: float = 0.0
    from_cache: bool = False  # served by the response cache: no model time spent (latency 0)
    token_logprobs: list[tuple[str, float]] = field(default_factory=list)  # where the call asked for them

    @classmethod
    def of(cls, step: str, messages: Messages, completion: Completion) -> "StepTrace":
        return cls(
            step=step,
            messages=[dict(m) for m in messages],
            response=completion.text + "".join(f"\n[call] {c.name}({c.arguments})" for c in completion.tool_calls),
            prompt_tokens=completion.prompt_tokens,
            completion_tokens=completion.completion_tokens,
            cached_tokens=completion.cached_tokens,
            latency_s=completion.latency_s,
            from_cache=completion.from_cache,
            token_logprobs=list(completion.token_logprobs),
        )


@dataclass
class Trace:
    steps: list[StepTrace] = field(default_factory=list)

    def call(self, lm: LM, step: str, messages: Messages, **params: Any) -> str:
        """Ask ``lm`` and record the exchange; returns the response text."""
        return self.complete(lm, step, messages, **params).text

    def complete(self, lm: LM, step: str, messages: Messages, **params: Any) -> Completion:
        """Ask ``lm`` and record the exchange; returns the whole completion (function calls too)."""
        completion = lm.complete(messages, step=step, **params)
        self.steps.append(StepTrace.of(step, messages, completion))
        return completion

    @property
    def prompt_tokens(self) -> int:
        return sum(s.prompt_tokens for s in self.steps)

    @property
    def completion_tokens(self) -> int:
        return sum(s.completion_tokens for s in self.steps)

    @property
    def cached_tokens(self) -> int:
        return sum(s.cached_tokens for s in self.steps)

    @property
    def llm_seconds(self) -> float:
        return sum(s.latency_s for s in self.steps)

    def to_list(self) -> list[dict[str, Any]]:
        return [asdict(s) for s in self.steps]
