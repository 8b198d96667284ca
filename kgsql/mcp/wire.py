"""One line of MCP's stdio wire, read and written so that no request goes unanswered.

The SDK's own stdio transport drops a line it cannot parse (no reply, the
client waits forever) and dies on a reply it cannot encode (a lone surrogate
in a tool's text). Here every line becomes either a message for the SDK or
the JSON-RPC error the spec asks for:

- not JSON: ``-32700`` with ``id: null``;
- JSON but no JSON-RPC message, or nested deeper than :data:`MAX_DEPTH`:
  ``-32600`` with the request's ``id`` where it can be read, else ``null``;
- a request whose ``id`` is neither a string nor an integer: ``-32600`` with
  ``id: null`` (the SDK would take it for a notification and stay silent);
- a malformed notification (``method`` without ``id``): nothing, as the
  spec says a notification is never answered.

Lone surrogates (``"\\ud800"`` is valid JSON, not valid UTF-8) become U+FFFD
on the way in and on the way out.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from mcp_types import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCResponse,
    RequestId,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

__all__ = ["MAX_DEPTH", "MAX_LINE_BYTES", "Incoming", "encode", "read_line", "too_long", "without_surrogates"]

#: Deepest nesting of arrays and objects a message may have (MCP's own messages need under 10).
MAX_DEPTH = 64
#: Longest line read; a longer one is skipped to its end and answered -32600.
MAX_LINE_BYTES = 4 * 1024 * 1024

_SURROGATE = re.compile("[\ud800-\udfff]")
# JSON's tokens, enough to follow nesting and find the top-level "id" in a text too deep to parse
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}:,]|[^\s\[\]{}:,"]+')


@dataclass(frozen=True)
class Incoming:
    """What one line is: a message for the SDK, an error to answer it with, or neither (a blank line)."""

    message: JSONRPCMessage | None = None
    reply: JSONRPCError | None = None


def without_surrogates(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (UTF-8 cannot carry them)."""
    return _SURROGATE.sub("\ufffd", text)


def _clean(value: Any) -> Any:
    """``value`` (parsed JSON, at most :data:`MAX_DEPTH` deep) without surrogates in any key or string."""
    if isinstance(value, str):
        return without_surrogates(value)
    if isinstance(value, dict):
        return {without_surrogates(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _depth(value: Any) -> int:
    """How deeply arrays and objects nest in ``value`` (iterative: any depth is safe to measure)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is not None:
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in children)
    return deepest


def _as_id(value: Any) -> RequestId | None:
    """A JSON-RPC id (a string or an integer, never a boolean), else None."""
    if isinstance(value, str):
        return without_surrogates(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def _top_level_id(text: str) -> RequestId | None:
    """The ``id`` member of the top-level object in ``text``, read without parsing the rest."""
    depth, before = 0, ("", "")
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in ("{", "["):
            depth += 1
        elif token in ("}", "]"):
            depth -= 1
        elif depth == 1 and before == ('"id"', ":"):
            try:
                return _as_id(json.loads(token))
            except ValueError:
                return None
        before = (before[1], token)
    return None


def _error(code: int, message: str, request_id: RequestId | None = None) -> Incoming:
    return Incoming(reply=JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message)))


def too_long() -> Incoming:
    """The answer to a line over :data:`MAX_LINE_BYTES` (its id is not read: the line is not kept)."""
    return _error(INVALID_REQUEST, f"Invalid Request: a line is limited to {MAX_LINE_BYTES} bytes")


def read_line(raw: bytes) -> Incoming:
    """One line of the wire as a message, or the error reply it gets (see the module's doc)."""
    text = raw.decode("utf-8", errors="replace").strip()
    if not text:
        return Incoming()
    try:
        value = json.loads(text)
    except RecursionError:
        return _error(INVALID_REQUEST, f"Invalid Request: nested deeper than {MAX_DEPTH} levels", _top_level_id(text))
    except ValueError:
        return _error(PARSE_ERROR, "Parse error: a line must be one JSON-RPC message")
    if _depth(value) > MAX_DEPTH:
        request_id = _as_id(value.get("id")) if isinstance(value, dict) else None
        return _error(INVALID_REQUEST, f"Invalid Request: nested deeper than {MAX_DEPTH} levels", request_id)
    value = _clean(value)
    if not isinstance(value, dict):
        return _error(INVALID_REQUEST, "Invalid Request: a message is a JSON object (batches are not supported)")
    try:
        message = jsonrpc_message_adapter.validate_python(value, by_name=False)
    except ValidationError:
        if "method" in value and "id" not in value:
            return Incoming()  # a notification is never answered, even a broken one
        return _error(INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 request, notification or response",
                      _as_id(value.get("id")))
    if isinstance(message, JSONRPCNotification) and "id" in value:  # a request whose id the SDK would ignore
        return _error(INVALID_REQUEST, "Invalid Request: an id is a string or an integer")
    return Incoming(message=message)


def encode(message: JSONRPCMessage) -> bytes:
    """``message`` as one line of UTF-8. A reply that cannot be encoded still answers its request
    (-32603); any other message that cannot be is left out (``b""``) rather than end the connection."""
    try:
        text = message.model_dump_json(by_alias=True, exclude_unset=True)
    except PydanticSerializationError:
        try:
            data = _clean(message.model_dump(mode="json", by_alias=True, exclude_unset=True))
            text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        except (PydanticSerializationError, TypeError, ValueError, RecursionError):
            if not isinstance(message, JSONRPCResponse | JSONRPCError):
                return b""
            failed = JSONRPCError(jsonrpc="2.0", id=message.id,
                                  error=ErrorData(code=INTERNAL_ERROR, message="the reply could not be encoded"))
            text = failed.model_dump_json(by_alias=True, exclude_unset=True)
    return (text + "\n").encode("utf-8")
