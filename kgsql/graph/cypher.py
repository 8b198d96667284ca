"""Load the Cypher statements kgsql runs from the shipped ``.cypher`` files.

All Cypher lives in ``cypher/`` (package ``kgsql.cypher``) so it can be read,
linted with Neo4j's own parser and reviewed in one place. A file holds one
statement, or several separated by ``;`` at line ends (e.g. constraints).
Lines starting with ``//`` are comments.
"""
from __future__ import annotations

import functools
import importlib.resources

from kgsql.errors import GraphError


@functools.cache
def statements(name: str) -> tuple[str, ...]:
    """The statements of ``cypher/<name>.cypher`` (comments stripped)."""
    resource = importlib.resources.files("kgsql.cypher") / f"{name}.cypher"
    try:
        text = resource.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise GraphError(f"no Cypher file named '{name}.cypher' in kgsql.cypher") from exc
    body = "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("//"))
    parts = [p.strip() for p in body.split(";\n")]
    return tuple(p.rstrip(";").strip() for p in parts if p.strip())


def statement(name: str) -> str:
    """The single statement of ``cypher/<name>.cypher``."""
    found = statements(name)
    if len(found) != 1:
        raise GraphError(f"'{name}.cypher' holds {len(found)} statements; expected one")
    return found[0]


def all_files() -> dict[str, str]:
    """Every shipped ``.cypher`` file by name, for linting."""
    root = importlib.resources.files("kgsql.cypher")
    return {
        entry.name.removesuffix(".cypher"): entry.read_text(encoding="utf-8")
        for entry in root.iterdir()
        if entry.name.endswith(".cypher")
    }
