"""A lab set is written whole or not at all: built in ``<out>.partial``, renamed to ``out`` when done."""
from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kgsql.errors import KgsqlError

__all__ = ["new_folder"]


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
