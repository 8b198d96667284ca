"""Shared argparse pieces: option types that refuse bad values, and one-line errors.

Every kgsql CLI checks its options while parsing, before it opens a graph,
reads a file or calls a model, so ``--timeout 0`` costs nothing and says so in
one line::

    python -m kgsql.ask: error: argument --timeout: must be a positive number, got '0'

``OneLineParser`` prints that line (no usage block) and exits 2; the types
below raise ``argparse.ArgumentTypeError`` with the reason.
"""
from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn

__all__ = [
    "OneLineParser",
    "bounded_int",
    "non_negative_int",
    "port_number",
    "positive_float",
    "positive_int",
    "probability",
    "retype",
]


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr (``prog: error: ...``), exit 2.

    Sub-parsers made with ``add_subparsers`` inherit the class.
    """

    def error(self, message: str) -> NoReturn:
        from kgsql.secrets import redact  # argparse repeats a bad argument as typed: a URL's password too

        text = redact(" ".join(message.split())) + self._did_you_mean(message)
        self.exit(2, f"{self.prog}: error: {text} (see --help)\n")

    def _did_you_mean(self, message: str) -> str:
        """`` (did you mean --method?)`` for an unrecognised option close to one this parser has."""
        import difflib

        if not message.startswith("unrecognized arguments:"):
            return ""
        parsers = [self] + [sub for action in self._actions if isinstance(action, argparse._SubParsersAction)
                            for sub in action.choices.values()]  # the top level reports its commands' options
        known = list(dict.fromkeys(s for p in parsers for action in p._actions for s in action.option_strings
                                   if s.startswith("--")))
        hints = []
        for word in message.split(":", 1)[1].split():
            flag = word.split("=", 1)[0]
            if flag.startswith("--"):
                close = difflib.get_close_matches(flag, known, n=1, cutoff=0.7)
                if close:
                    hints.append(close[0])
        return f" (did you mean {', '.join(dict.fromkeys(hints))}?)" if hints else ""


def _number(text: str, kind: Callable[[str], Any], what: str) -> Any:
    try:
        value = kind(text.strip())
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
    return value


def _checked(kind: Callable[[str], Any], what: str, ok: Callable[[Any], bool]) -> Callable[[str], Any]:
    def convert(text: str) -> Any:
        value = _number(text, kind, what)
        if not ok(value):
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
        return value

    convert.__name__ = what.replace(" ", "_")  # argparse names the type in some messages
    return convert


#: An integer >= 1 (counts, limits, sizes).
positive_int = _checked(int, "a positive integer", lambda v: v >= 1)
#: An integer >= 0 (seeds, digits).
non_negative_int = _checked(int, "an integer >= 0", lambda v: v >= 0)
#: A finite number > 0 (timeouts in seconds).
positive_float = _checked(float, "a positive number", lambda v: v > 0)
#: A number in [0, 1] (thresholds on probabilities).
probability = _checked(float, "a number from 0 to 1", lambda v: 0 <= v <= 1)
#: A TCP port, 0 meaning "pick a free one".
port_number = _checked(int, "a port number from 0 to 65535", lambda v: 0 <= v <= 65535)


def bounded_int(low: int, high: int) -> Callable[[str], int]:
    """An integer from ``low`` to ``high``: for counts that end up in SQL or C code, where a
    value past 64 bits would fail later with a misleading error instead of here."""
    convert: Callable[[str], int] = _checked(int, f"an integer from {low} to {high}", lambda v: low <= v <= high)
    return convert


def sqlite_path(text: str) -> Path:
    """A SQLite file or folder argument: a database URL is refused in one line, its password masked
    (for commands that read SQLite files only)."""
    import re

    if re.match(r"^[A-Za-z][A-Za-z0-9+.\-]+:", text):
        from kgsql.secrets import redact_uri

        raise argparse.ArgumentTypeError(f"{redact_uri(text)}: this command reads SQLite files only, not database URLs")
    return Path(text)


def retype(parser: argparse.ArgumentParser, types: Mapping[str, Callable[[str], Any]]) -> None:
    """Give the options whose ``dest`` is in ``types`` that type (for parsers built elsewhere).

    Defaults are not converted by argparse unless they are strings, so a
    ``None`` or numeric default stays as it was.
    """
    for action in parser._actions:
        if action.dest in types:
            action.type = types[action.dest]
