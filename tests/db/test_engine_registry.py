"""An engine is one object: a toy engine, one class registered here, is found and used everywhere kgsql looks.

The places that once compared engine names (reference parsing, file headers,
folder search, identifier quoting, dialect names, the function deny-list,
error kinds, code fences, the open-engine cache) all ask the registered
class, so this one class is all it takes.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kgsql.db import engines
from kgsql.db.engine import ENGINES, Engine, engine_for_dialect, register_engine, unregister_engine
from kgsql.db.functions import is_denied_function
from kgsql.db.target import engine_class, engine_of, file_engine, parse_target, require_file_engine
from kgsql.errors import DatabaseFileError, InputError
from kgsql.generate.render import identifier_quoting, quote_column, table_ref
from kgsql.ingest.reader import find_databases
from kgsql.sql.dialects import expert_line, label, sqlglot_name
from kgsql.sql.extract import extract_sql

TOY_HEADER = b"TOYDB format 1\x00\x00"


class ToyEngine(Engine):
    """A file engine that quotes with brackets and keeps bare only lower-case names."""

    name = "toydb"
    label = "ToyDB"
    schemes = ("toy",)
    suffixes = (".toy",)
    fence_names = frozenset({"toysql"})
    example = "toy:///path.toy"
    plain_identifier = re.compile(r"^[a-z]+$")
    denied_prefixes = ("toy_admin_",)
    error_patterns = (("no_such_table", re.compile(r"toy has no table (?P<name>\w+)")),)

    @classmethod
    def quote(cls, identifier: str) -> str:
        return "[" + identifier.replace("]", "]]") + "]"

    @classmethod
    def matches_header(cls, header: bytes) -> bool:
        return header == TOY_HEADER

    def text_values(self, table: str, column: str, *, scan_rows: int, max_chars: int, limit: int) -> list[str]:
        return [f"{self.target.name}.{table}.{column}"]


@pytest.fixture
def toy() -> Iterator[type[Engine]]:
    register_engine(ToyEngine)
    try:
        yield ToyEngine
    finally:
        engines.close_all()
        unregister_engine(ToyEngine.name)


def test_built_in_engines_are_registered_in_order() -> None:
    assert ENGINES.names()[:3] == ["sqlite", "postgres", "duckdb"]
    sqlite = ENGINES.get("sqlite")
    assert sqlite.in_process and sqlite.label == "SQLite" and sqlite.quote("a`b") == "`a``b`"


def test_found_by_url_scheme_and_by_file_suffix(toy: type[Engine], tmp_path: Path) -> None:
    by_url = parse_target(f"toy://{tmp_path}/shop.toy")
    assert (by_url.engine, by_url.name, by_url.path, by_url.display) == (
        "toydb", "shop", tmp_path / "shop.toy", f"toy://{tmp_path}/shop.toy")
    assert by_url.engine_class is toy and by_url.label == "ToyDB" and by_url.is_file
    by_path = parse_target(tmp_path / "shop.toy")
    assert by_path.engine == "toydb" and by_path.url == by_url.url
    assert engine_of("x.toy") == "toydb" and engine_class("toy:x.toy") is toy
    assert engine_of("x.sqlite") == "sqlite"  # the others are untouched


def test_an_unknown_scheme_lists_the_new_engine(toy: type[Engine]) -> None:
    with pytest.raises(InputError, match=r"or toy:///path\.toy$"):
        parse_target("nosuch://h/x")


def test_header_and_folder_search(toy: type[Engine], tmp_path: Path) -> None:
    (tmp_path / "a.toy").write_bytes(TOY_HEADER + b"rest")
    (tmp_path / "notes.txt").write_text("not a database")
    assert [p.name for p in find_databases(tmp_path)] == ["a.toy"]
    assert file_engine(tmp_path / "a.toy") == "toydb"
    misnamed = tmp_path / "b.sqlite"
    misnamed.write_bytes(TOY_HEADER)
    with pytest.raises(DatabaseFileError) as err:
        require_file_engine(parse_target(misnamed))
    assert str(err.value) == (f"{misnamed} is a ToyDB database, not SQLite (its header says so); "
                              f"ingest it as toy://{misnamed} or rename it to b.toy")


def test_labels_and_quotes_identifiers_its_way(toy: type[Engine]) -> None:
    assert engine_for_dialect("TOYDB") is toy
    assert (label("toydb"), sqlglot_name("toydb")) == ("ToyDB", "toydb")
    assert expert_line("toydb").startswith("You are an expert in ToyDB ")
    with identifier_quoting("toydb"):
        assert [table_ref("orders"), table_ref("Orders"), quote_column("a]b")] == ["orders", "[Orders]", "[a]]b]"]
    assert table_ref("Orders") == "Orders"  # outside the block: SQLite's rules again


def test_deny_list_error_kinds_and_fences(toy: type[Engine]) -> None:
    assert is_denied_function("TOY_ADMIN_reset", "toydb") and not is_denied_function("toy_admin_reset", "sqlite")
    assert is_denied_function("load_extension", "toydb")  # the list every engine refuses still applies
    assert toy.classify_error(" toy has no table orders ") == ("no_such_table", "orders")
    assert toy.classify_error("something else") == ("other", None)
    answer = "```text\nSELECT a FROM draft\n```\n```toysql\nSELECT b FROM final\n```"
    assert extract_sql(answer) == "SELECT b FROM final"


def test_opened_as_one_shared_object(toy: type[Engine], tmp_path: Path) -> None:
    url = f"toy://{tmp_path}/shop.toy"
    opened: Any = engines.engine_for(url)
    assert isinstance(opened, ToyEngine) and opened is engines.engine_for(parse_target(url))
    assert engines.text_values(url, "t", "c", scan_rows=10, max_chars=10, limit=3) == ["shop.t.c"]
    with pytest.raises(ValueError, match="SQLite database; it has no engine object"):
        engines.engine_for(tmp_path / "x.sqlite")
