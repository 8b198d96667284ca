"""The one switch that lets generated SQL run on a role that could do more than read.

kgsql refuses to run generated SQL on a PostgreSQL role that is a superuser
or can write (the guard's last layer is a role with SELECT only; see
docs/engines.md). People who insist say so with ``--allow-privileged`` on
any command, which sets :data:`ENV_ALLOW_PRIVILEGED` so that the SQL worker
processes started afterwards inherit the choice.
"""
from __future__ import annotations

import argparse
import os
from typing import Final

__all__ = ["ENV_ALLOW_PRIVILEGED", "add_privileged_flag", "apply_privileged_flag", "privileged_allowed"]

ENV_ALLOW_PRIVILEGED: Final = "KGSQL_ALLOW_PRIVILEGED"


def privileged_allowed() -> bool:
    """True when the user asked to run generated SQL on a privileged role anyway."""
    return os.environ.get(ENV_ALLOW_PRIVILEGED, "").strip().lower() in {"1", "true", "yes", "on"}


def add_privileged_flag(parser: argparse.ArgumentParser) -> None:
    """``--allow-privileged`` on a command that opens databases."""
    parser.add_argument("--allow-privileged", action="store_true",
                        help="run generated SQL even on a PostgreSQL superuser or a role that can write "
                             "(not recommended: use a SELECT-only role, docs/engines.md)")


def apply_privileged_flag(args: argparse.Namespace) -> None:
    """Carry a parsed ``--allow-privileged`` into the environment (for this process and its workers)."""
    if getattr(args, "allow_privileged", False):
        os.environ[ENV_ALLOW_PRIVILEGED] = "1"
