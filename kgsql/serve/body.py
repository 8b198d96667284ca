"""A request body read as the service's input: one JSON object of plain values, or one clear InputError.

``json.loads`` accepts more than the service can use: nesting deep enough to
exhaust the interpreter's stack (a 3 KB body of ``[`` raised RecursionError
inside the handler), ``NaN`` and ``Infinity``, and strings with lone
surrogates (``"\\ud800"``), which no database driver can encode. Each is
refused here, before any route sees the body.
"""
from __future__ import annotations

import json
from typing import Any, Final

from kgsql.errors import InputError

MAX_DEPTH: Final = 32  # objects and arrays inside each other (the API's own bodies need 3)


def parse_body(raw: bytes) -> dict[str, Any]:
    """The JSON object in ``raw`` (empty: ``{}``); InputError says what is wrong with anything else."""
    try:
        body = json.loads(raw or b"{}", parse_constant=_refuse_constant)
    except RecursionError:
        raise InputError(f"not JSON the service reads: nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:
        raise InputError(f"not JSON: {exc}") from None
    _check_values(body)
    if not isinstance(body, dict):
        raise InputError("the request body must be a JSON object")
    return body


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _check_values(body: Any) -> None:
    """Walk the parsed body without recursion: bounded depth, text that encodes as UTF-8."""
    pending: list[tuple[Any, int]] = [(body, 0)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, str):
            _check_text(value)
        elif isinstance(value, (dict, list)):
            if depth >= MAX_DEPTH:
                raise InputError(f"not JSON the service reads: nested deeper than {MAX_DEPTH} levels")
            if isinstance(value, dict):
                pending.extend((key, depth + 1) for key in value)
                pending.extend((item, depth + 1) for item in value.values())
            else:
                pending.extend((item, depth + 1) for item in value)


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[exc.start:exc.end].encode("unicode_escape").decode("ascii")
        raise InputError(f"the request holds a lone surrogate ({bad}), which is not valid Unicode text") from None
