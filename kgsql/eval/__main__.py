"""``python -m kgsql.eval SUBCOMMAND``: evaluation protocols.

Each subcommand lives in its own module exposing ``add_arguments(parser)`` and
``main(args) -> int``; modules are imported only when their subcommand runs so
``--help`` stays fast and a missing optional dependency affects one command.
Numeric options get validating types here (``OPTION_TYPES``), so a bad value
is one line before any dataset is read or model is called.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from typing import Any

from kgsql.cli_types import (
    OneLineParser, non_negative_int, positive_float, positive_int, probability, retype,
)
from kgsql.errors import KgsqlError

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "linking": ("kgsql.lab.linking", "schema-linking benchmark of retrieval methods"),
    "score": ("kgsql.eval.score", "score an existing prediction file"),
    "run": ("kgsql.eval.run", "predict and score with a named method"),
    "compare": ("kgsql.eval.compare", "per-question wins/losses between two runs"),
}

#: Validating types of each subcommand's numeric options, by ``dest``.
OPTION_TYPES: dict[str, dict[str, Callable[[str], Any]]] = {
    "linking": {"limit": positive_int, "threads": positive_int,
                "table_threshold": probability, "column_threshold": probability},
    "score": {"limit": positive_int, "timeout": positive_float, "soft_f1_digits": non_negative_int},
    "run": {"limit": positive_int, "seed": non_negative_int, "n_ctx": positive_int,
            "timeout": positive_float, "concurrency": positive_int},
}


def build_parser(argv: list[str]) -> tuple[argparse.ArgumentParser, object]:
    parser = OneLineParser(prog="python -m kgsql.eval", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    chosen = argv[0] if argv and argv[0] in SUBCOMMANDS else None
    module = None
    for name, (mod_name, help_text) in SUBCOMMANDS.items():
        sp = sub.add_parser(name, help=help_text)
        if name == chosen:
            module = importlib.import_module(mod_name)
            module.add_arguments(sp)
            retype(sp, OPTION_TYPES.get(name, {}))
    return parser, module


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        parser, module = build_parser(argv)
        args = parser.parse_args(argv)
        return int(module.main(args) or 0)  # type: ignore[union-attr]
    except ModuleNotFoundError as exc:
        print(f"error: subcommand unavailable: {exc}", file=sys.stderr)
        return 2
    except KgsqlError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
