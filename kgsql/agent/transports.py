"""How an agent talks to its model: text ReAct (any chat endpoint) or OpenAI function calling.

Both keep one growing conversation whose opening (instruction, tools,
demonstrations) is the same for every question, so a local server reuses
it from its prompt cache and each round costs only its new tokens.
"""
from __future__ import annotations

import json
from typing import Any, Protocol

from kgsql.agent.actions import ActionError, Step, parse_step
from kgsql.agent.tools import AGENT_TOOLS, TOOL_SPECS
from kgsql.llm.base import LM
from kgsql.llm.errors import LLMEmptyResponseError
from kgsql.llm.trace import Trace

#: Interactive-T2S stops generation where a made-up observation or a second step would begin.
STOP = ["\nObservation", "Observation:", "\nThought", "\nQuestion:"]
#: Asked again when a turn that opened with a made-up observation was stopped before its first word.
RETRY_STOP = ["\nQuestion:"]


class Transport(Protocol):
    """One conversation: the model's next step, then what the tool answered."""

    def begin(self, system: str, user: str) -> None: ...

    def next(self, trace: Trace) -> Step | ActionError: ...

    def observe(self, text: str) -> None: ...


class TextReAct:
    """``Thought:`` / ``Action: Tool(args)`` in plain text; observations come back as user turns."""

    def __init__(self, lm: LM, *, max_tokens: int = 256, temperature: float = 0.0) -> None:
        self.lm = lm
        self.params: dict[str, Any] = {"max_tokens": max_tokens, "temperature": temperature, "stop": STOP}
        self.messages: list[dict[str, Any]] = []

    def begin(self, system: str, user: str) -> None:
        self.messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def next(self, trace: Trace) -> Step | ActionError:
        try:
            text = trace.complete(self.lm, "agent", self.messages, **self.params).text
        except LLMEmptyResponseError:
            # The model opened its turn with "Observation:" (the label of the turn before), which the stop
            # sequences cut to nothing; asked again without them, the parser skips the made-up part.
            if self.params.get("stop") != STOP:
                raise
            text = trace.complete(self.lm, "agent", self.messages, **{**self.params, "stop": RETRY_STOP}).text
        return self._read(text)

    def _read(self, text: str) -> Step | ActionError:
        try:
            step = parse_step(text, AGENT_TOOLS)
        except ActionError as exc:
            self.messages.append({"role": "assistant", "content": text.strip() or "(nothing)"})
            return exc
        thought = f"Thought: {step.thought}\n" if step.thought else ""
        self.messages.append({"role": "assistant", "content": f"{thought}Action: {step.action}"})
        return step

    def observe(self, text: str) -> None:
        self.messages.append({"role": "user", "content": f"Observation: {text}"})


class FunctionCalling(TextReAct):
    """OpenAI ``tools``: the endpoint returns structured calls; a text answer is read as ReAct."""

    def __init__(self, lm: LM, *, max_tokens: int = 256, temperature: float = 0.0) -> None:
        super().__init__(lm, max_tokens=max_tokens, temperature=temperature)
        self.params = {"max_tokens": max_tokens, "temperature": temperature,
                       "tools": [TOOL_SPECS[n].function() for n in AGENT_TOOLS]}
        self._pending: str | None = None  # id of the call awaiting its observation

    def next(self, trace: Trace) -> Step | ActionError:
        completion = trace.complete(self.lm, "agent", self.messages, **self.params)
        if not completion.tool_calls:
            self._pending = None
            return self._read(completion.text)
        call = completion.tool_calls[0]  # one tool per step, as in the text loop
        self.messages.append({"role": "assistant", "content": completion.text or "",
                              "tool_calls": [{"id": call.id, "type": "function",
                                              "function": {"name": call.name, "arguments": call.arguments}}]})
        self._pending = call.id
        if call.name not in AGENT_TOOLS:
            return ActionError(f"There is no tool '{call.name}'; use one of {', '.join(AGENT_TOOLS)}.")
        try:
            arguments = json.loads(call.arguments or "{}")
            if not isinstance(arguments, dict):
                raise ValueError("not an object")
            bound = TOOL_SPECS[call.name].bind((), arguments)
        except Exception as exc:  # noqa: BLE001 - malformed JSON or values: a correction, not a crash
            return ActionError(f"Bad arguments for {call.name}: {str(exc)[:200]}")
        shown = ", ".join(f"{k}={v!r}" for k, v in bound.items())
        return Step(thought=completion.text.strip(), tool=call.name, arguments=bound, action=f"{call.name}({shown})")

    def observe(self, text: str) -> None:
        if self._pending is None:
            super().observe(text)
            return
        self.messages.append({"role": "tool", "tool_call_id": self._pending, "content": text})
        self._pending = None


TRANSPORTS = {"text": TextReAct, "functions": FunctionCalling}
