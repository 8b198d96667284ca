"""The wheel ships every subpackage and data file kgsql loads at run time."""
from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def listed_packages() -> set[str]:
    data = tomllib.loads((REPO / "pyproject.toml").read_text())
    return set(data["tool"]["setuptools"]["packages"])


def test_every_subpackage_is_listed():
    found = {
        ".".join(p.parent.relative_to(REPO).parts)
        for p in (REPO / "kgsql").rglob("__init__.py")
        if "__pycache__" not in p.parts
    }
    assert found - listed_packages() == set()


def test_data_folders_are_packages_with_their_files():
    listed = listed_packages()
    assert {"kgsql.cypher", "kgsql.profiles"} <= listed
    import importlib.resources

    cypher = [e.name for e in importlib.resources.files("kgsql.cypher").iterdir()]
    assert "constraints.cypher" in cypher
    prompts = [e.name for e in importlib.resources.files("kgsql.prompts").iterdir()]
    assert "sql_instructions.txt" in prompts
    knowledge = importlib.resources.files("kgsql.sql") / "knowledge" / "spatialite_functions.yaml"
    assert knowledge.is_file()
    rewrites = importlib.resources.files("kgsql.generate") / "rewrite_examples.yaml"
    assert rewrites.is_file()
