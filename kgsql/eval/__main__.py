"""``python -m kgsql.eval SUBCOMMAND``: evaluation protocols.

Each subcommand lives in its own module exposing ``add_arguments(parser)`` and
``main(args) -> int``; modules are imported only when their subcommand runs so
``--help`` stays fast and a missing optional dependency affects one command.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from kgsql.errors import KgsqlError

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "linking": ("kgsql.eval.linking", "schema-linking benchmark of retrieval methods"),
    "score": ("kgsql.eval.score", "score an existing prediction file"),
    "run": ("kgsql.eval.run", "predict and score with a named method"),
    "compare": ("kgsql.eval.compare", "per-question wins/losses between two runs"),
}


def build_parser(argv: list[str]) -> tuple[argparse.ArgumentParser, object]:
    parser = argparse.ArgumentParser(prog="python -m kgsql.eval", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    chosen = argv[0] if argv and argv[0] in SUBCOMMANDS else None
    module = None
    for name, (mod_name, help_text) in SUBCOMMANDS.items():
        sp = sub.add_parser(name, help=help_text)
        if name == chosen:
            module = importlib.import_module(mod_name)
            module.add_arguments(sp)
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
