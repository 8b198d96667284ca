"""The guard's split into one-idea modules: the old import paths keep working, and no cycles."""
from __future__ import annotations

import ast
from pathlib import Path
from types import ModuleType

import pytest

from kgsql.db import authorizer, budget, guard, sql_errors, statement

#: Where each name re-exported by kgsql.db.guard lives.
HOMES = {
    "ERROR_KINDS": sql_errors,
    "ErrorKind": sql_errors,
    "QueryResourceError": sql_errors,
    "QueryTimeoutError": sql_errors,
    "SQLQueryError": sql_errors,
    "classify_sqlite_error": sql_errors,
    "MAX_SQL_CHARS": statement,
    "split_statements": statement,
    "validate_query": statement,
    "READ_ONLY_PRAGMAS": authorizer,
    "make_authorizer": authorizer,
}


@pytest.mark.parametrize("name", sorted(HOMES))
def test_guard_reexports_the_name_from_its_module(name: str) -> None:
    assert name in guard.__all__
    assert getattr(guard, name) is getattr(HOMES[name], name)


def test_every_public_guard_name_resolves() -> None:
    for name in guard.__all__:
        getattr(guard, name)


@pytest.mark.parametrize("module", [sql_errors, statement, authorizer, budget])
def test_layer_modules_do_not_import_the_guard(module: ModuleType) -> None:
    """The guard composes the layers; a layer importing it back would be a cycle."""
    tree = ast.parse(Path(module.__file__ or "").read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert "kgsql.db.guard" not in imported
    assert not any(a.name == "guard" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                   and n.module == "kgsql.db" for a in n.names)
