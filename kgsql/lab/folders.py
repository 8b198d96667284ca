"""A lab set is written whole or not at all: built in ``<out>.partial``, renamed to ``out`` when done."""
from __future__ import annotations

import argparse
import shutil
import sqlite3
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from kgsql.errors import KgsqlError

__all__ = ["new_folder", "spider_set_parser", "write_spider_set"]


@contextmanager
def new_folder(out: Path) -> Iterator[Path]:
    """Yield the folder to build into; ``out`` appears only if the body finished (an error, or Ctrl-C, leaves
    nothing behind). An existing ``out`` is one error line: a set is never written over."""
    if out.exists():
        raise KgsqlError(f"{out} exists: give a new folder")
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    try:
        yield partial
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    partial.rename(out)


def spider_set_parser(prog: str, description: str | None) -> argparse.ArgumentParser:
    """The options every Spider-derived set takes: the Spider folder, ``--out`` (a new folder), ``--seed``."""
    from kgsql.cli_types import OneLineParser

    parser = OneLineParser(prog=prog, description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("spider_dir", type=Path, help="Spider folder: dev.json and database/")
    parser.add_argument("--out", type=Path, required=True, help="new folder for the set (dev.json, database/)")
    parser.add_argument("--seed", type=int, default=0)
    return parser


def write_spider_set(prog: str, spider_dir: Path, out: Path, build: Callable[[Path], str], **counts: int) -> int:
    """A set built from a Spider folder, as a command: ``build`` fills the new folder and returns the line to
    print. A folder without ``dev.json``, a count below 1 (``counts``: option name -> value), an existing
    ``out`` or a failed build is one error line and exit 1, leaving nothing."""
    try:
        if not (spider_dir / "dev.json").is_file():
            raise KgsqlError(f"no Spider dev.json in {spider_dir}")
        for name, value in counts.items():
            if value < 1:
                raise KgsqlError(f"--{name} must be at least 1, not {value}")
        with new_folder(out) as partial:
            line = build(partial)
    except (KgsqlError, OSError, ValueError, sqlite3.Error) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1
    print(line)
    return 0
