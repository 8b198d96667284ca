"""Read a ReAct step (``Thought: ...`` / ``Action: Tool(args)``) out of a model's text.

Small models write actions loosely: SQL without quotes, keyword arguments,
code fences, a trailing period, an ``Observation:`` they made up. The parser
takes what is unambiguous and otherwise raises :class:`ActionError` with a
one-line correction the loop sends back, so a malformed step costs a round,
never the episode.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from kgsql.agent.tools import TOOL_SPECS, ToolArgumentError

_ACTION = re.compile(r"^\s*\**Action\**\s*(?:\d+\s*)?:\**\s*", re.IGNORECASE | re.MULTILINE)
_THOUGHT = re.compile(r"^\s*\**Thought\**\s*(?:\d+\s*)?:\**\s*", re.IGNORECASE | re.MULTILINE)
_OBSERVATION = re.compile(r"^\s*\**Observation\**\s*(?:\d+\s*)?:", re.IGNORECASE | re.MULTILINE)
_FENCE = re.compile(r"```[a-zA-Z]*")
_CALL = re.compile(r"([A-Za-z_]\w*)\s*\(")


class ActionError(ValueError):
    """The step has no usable action; ``str(self)`` is the correction to send the model."""


@dataclass
class Step:
    """One parsed step: the thought, the tool, its bound arguments, and the action text as written."""

    thought: str
    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    action: str = ""


def usage() -> str:
    """How an action must look, for corrections."""
    return "Write 'Action: Tool(arguments)' with one of: " + ", ".join(
        TOOL_SPECS[n].signature for n in ("SearchColumn", "SearchValue", "FindShortestPath", "ExecuteSQL", "Done"))


_STEP_START = re.compile(r"^\s*\**(?:Thought|Action)\**\s*(?:\d+\s*)?:", re.IGNORECASE | re.MULTILINE)


def _without_leading_observation(text: str) -> str:
    """``text`` from its first Thought/Action when it opens with a made-up ``Observation:`` (small models
    repeat the last turn's label before their own step); otherwise ``text`` itself."""
    opening = _OBSERVATION.match(text)
    if opening is None:
        return text
    start = _STEP_START.search(text, opening.end())
    return text[start.start():] if start else ""


def parse_step(text: str, tools: tuple[str, ...]) -> Step:
    """The first action of ``text`` (a made-up ``Observation:`` before it is skipped, anything after one
    ignored)."""
    text = _without_leading_observation(text)
    cut = _OBSERVATION.search(text)
    body = text[: cut.start()] if cut else text
    body = _FENCE.sub("", body)
    match = _ACTION.search(body)
    thought_end = match.start() if match else len(body)
    thought = _THOUGHT.sub("", body[:thought_end], count=1).strip()
    action = body[match.end():].strip() if match else ""
    if not action:  # no "Action:" line: accept a bare call of a known tool
        bare = [m for m in _CALL.finditer(body) if m.group(1) in tools]
        if not bare:
            raise ActionError(f"No action found. {usage()}")
        action = body[bare[0].start():].strip()
        thought = body[: bare[0].start()].strip()
    name_match = _CALL.match(action)
    if name_match is None:
        raise ActionError(f"Cannot read the action '{_short(action)}'. {usage()}")
    name = name_match.group(1)
    if name not in tools:
        close = [t for t in tools if t.lower() == name.lower()]
        if not close:
            raise ActionError(f"There is no tool '{name}'. {usage()}")
        name = close[0]
    inside = _arguments_text(action[name_match.end():])
    args, kwargs = _literal_arguments(inside, name)
    try:
        bound = TOOL_SPECS[name].bind(args, kwargs)
    except ToolArgumentError as exc:
        raise ActionError(str(exc)) from None
    except Exception:  # noqa: BLE001 - an argument no string can hold (a 4,000-digit number): a correction
        raise ActionError(f"Cannot read the arguments of {name}: {TOOL_SPECS[name].signature}") from None
    return Step(thought=thought, tool=name, arguments=bound, action=f"{name}({inside})")


def _arguments_text(rest: str) -> str:
    """The text between the call's parentheses: up to the matching one, quotes respected."""
    depth, quote, i = 1, "", 0
    while i < len(rest):
        ch = rest[i]
        if quote:
            if rest.startswith(quote, i) and rest[i - 1] != "\\":
                i += len(quote) - 1
                quote = ""
        elif rest.startswith(('"""', "'''"), i):
            quote = rest[i:i + 3]
            i += 2
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return rest[:i].strip()
        i += 1
    return rest.rstrip().rstrip(".").rstrip(")").strip()  # unclosed: take the rest


def _literal_arguments(inside: str, tool: str) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Python-literal arguments (a bare word is its own text); a one-argument tool also takes the raw
    text (unquoted SQL)."""
    if not inside:
        return (), {}
    try:
        call = ast.parse(f"f({inside})", mode="eval").body
        assert isinstance(call, ast.Call)
        args = tuple(_literal(a) for a in call.args)
        kwargs = {k.arg: _literal(k.value) for k in call.keywords if k.arg}
        return args, kwargs
    except (SyntaxError, ValueError, AssertionError, TypeError):
        spec = TOOL_SPECS[tool]
        if len(spec.params) == 1:
            text = inside
            prefix = f"{spec.params[0].name}="
            if text.startswith(prefix):
                text = text[len(prefix):]
            return (_unquote(text),), {}
        raise ActionError(f"Cannot read the arguments of {tool}: quote each text argument, "
                          f"e.g. {spec.signature}") from None


def _literal(node: ast.expr) -> Any:
    return node.id if isinstance(node, ast.Name) else ast.literal_eval(node)


def _unquote(text: str) -> str:
    text = text.strip()
    for q in ('"""', "'''", '"', "'"):
        if len(text) >= 2 * len(q) and text.startswith(q) and text.endswith(q):
            return text[len(q):-len(q)].strip()
    return text


def _short(text: str, limit: int = 60) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 3] + "..."
