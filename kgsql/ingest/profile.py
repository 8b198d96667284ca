"""Declarative ingestion profiles: per-database knowledge kept in YAML.

A profile says what a database's tables and columns mean when the file
itself cannot: descriptions, geographic scope, value explanations, derived
expressions (``eligible free rate = frpm."Free Meal Count (K-12)" /
frpm."Enrollment (K-12)"``), and where BIRD-style description CSVs live. The
format is documented in ``profiles/README.md`` (shipped as ``kgsql.profiles``).

:func:`load_profile` validates the YAML strictly (types, unknown keys,
duplicate keys) and reports problems as ``file:line: key.path: problem`` so a
typo is fixed in one go. Applying a profile to a schema is
:mod:`kgsql.ingest.profile_apply`.
"""
from __future__ import annotations

import dataclasses
import difflib
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlglot
import yaml
from sqlglot.errors import SqlglotError

from kgsql.errors import ProfileError
from kgsql.schema.model import DerivedExpression

__all__ = [
    "ColumnProfile",
    "DerivedExpression",
    "Profile",
    "TableProfile",
    "load_profile",
    "parse_profile",
]

log = logging.getLogger(__name__)

LANGUAGES = ("en", "zh")
FORMAT_VERSION = 1


@dataclass(frozen=True)
class ColumnProfile:
    name: str
    description: str = ""
    value_explanation: str = ""
    data_format: str = ""
    value_examples: tuple[str, ...] = ()


@dataclass(frozen=True)
class TableProfile:
    name: str
    description: str = ""
    geo_description: str = ""
    columns: dict[str, ColumnProfile] = field(default_factory=dict)


@dataclass(frozen=True)
class Profile:
    """One database's declared knowledge; paths are already resolved."""

    database: str
    description: str = ""
    descriptions_dir: Path | None = None
    region_csv: Path | None = None
    language: str = "en"
    tables: dict[str, TableProfile] = field(default_factory=dict)
    derived: tuple[DerivedExpression, ...] = ()
    path: Path | None = None


# --------------------------------------------------------------------------
# YAML with line numbers and duplicate-key detection
# --------------------------------------------------------------------------


class _Map(dict):  # type: ignore[type-arg]
    """A YAML mapping that remembers the line of itself and of each key."""

    line: int = 0
    key_lines: dict[Any, int]


class _Loader(yaml.SafeLoader):
    pass


def _construct_map(loader: _Loader, node: yaml.MappingNode) -> _Map:
    loader.flatten_mapping(node)
    mapping = _Map()
    mapping.line = node.start_mark.line + 1
    mapping.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        try:
            hash(key)
        except TypeError:
            raise ProfileError(f"{loader.name}:{line}: a mapping key must be a plain value") from None
        if key in mapping:
            raise ProfileError(
                f"{loader.name}:{line}: duplicate key '{key}' (first at line {mapping.key_lines[key]})"
            )
        mapping[key] = loader.construct_object(value_node, deep=True)
        mapping.key_lines[key] = line
    return mapping


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_map)


# --------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------


class _Checker:
    """Type checks that report ``file:line: key.path: problem``."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: _Map | None, key: Any, keypath: str, problem: str) -> ProfileError:
        line = where.key_lines.get(key, where.line) if isinstance(where, _Map) else 0
        loc = f"{self.source}:{line}" if line else self.source
        return ProfileError(f"{loc}: {keypath}: {problem}" if keypath else f"{loc}: {problem}")

    def mapping(self, value: Any, parent: _Map | None, key: Any, keypath: str) -> _Map:
        if value is None:
            empty = _Map()
            empty.key_lines = {}
            return empty
        if not isinstance(value, _Map):
            raise self.fail(parent, key, keypath, f"expected a mapping, got {_kind(value)}")
        return value

    def keys(self, mapping: _Map, allowed: tuple[str, ...], keypath: str, required: tuple[str, ...] = ()) -> None:
        for key in mapping:
            if not isinstance(key, str) or key not in allowed:
                close = difflib.get_close_matches(str(key), allowed, n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else f" (allowed: {', '.join(allowed)})"
                raise self.fail(mapping, key, _join(keypath, str(key)), f"unknown key{hint}")
        for key in required:
            if mapping.get(key) in (None, ""):
                raise self.fail(mapping, None, keypath, f"missing required key '{key}'")

    def text(self, mapping: _Map, key: str, keypath: str) -> str:
        value = mapping.get(key)
        if value is None:
            return ""
        if not isinstance(value, str):
            raise self.fail(mapping, key, _join(keypath, key), f"expected a string, got {_kind(value)} (quote it)")
        return value.strip()

    def name(self, key: Any, mapping: _Map, keypath: str) -> str:
        """A table/column name used as a key: YAML may read ``2020`` as a number."""
        if isinstance(key, bool) or not isinstance(key, (str, int, float)) or not str(key).strip():
            raise self.fail(mapping, key, _join(keypath, str(key)), "expected a table/column name")
        return str(key).strip()


def _as_map(value: Any) -> Any:
    """Plain dicts (e.g. from ``yaml.safe_load``) as line-less _Maps, recursively."""
    if isinstance(value, dict) and not isinstance(value, _Map):
        mapping = _Map({k: _as_map(v) for k, v in value.items()})
        mapping.key_lines = {}
        return mapping
    if isinstance(value, list):
        return [_as_map(v) for v in value]
    return value


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return f"a boolean ({value})"
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    return type(value).__name__


def _join(keypath: str, key: str) -> str:
    return f"{keypath}.{key}" if keypath else key


_TOP_KEYS = ("version", "database", "description", "descriptions_dir", "region_csv", "language", "tables", "derived")
_TABLE_KEYS = ("description", "geo_description", "columns")
_COLUMN_KEYS = ("description", "value_explanation", "data_format", "value_examples")
_DERIVED_KEYS = ("name", "expression", "description")


def _resolve_path(raw: str, base: Path) -> Path:
    expanded = Path(os.path.expandvars(os.path.expanduser(raw)))
    return expanded if expanded.is_absolute() else (base / expanded)


def parse_profile(data: Any, *, source: str = "<profile>", base_dir: str | os.PathLike[str] = ".") -> Profile:
    """Validate already-loaded YAML data (from :func:`load_profile`) into a Profile."""
    check = _Checker(source)
    data = _as_map(data)
    if not isinstance(data, _Map):
        got = _kind(data) if data is not None else "nothing"
        raise ProfileError(f"{source}: a profile must be a YAML mapping, got {got}")
    check.keys(data, _TOP_KEYS, "", required=("database",))
    version = data.get("version", FORMAT_VERSION)
    if version != FORMAT_VERSION:
        problem = f"unsupported profile version {version!r} (this kgsql reads {FORMAT_VERSION})"
        raise check.fail(data, "version", "version", problem)
    database = check.text(data, "database", "")
    language = check.text(data, "language", "") or "en"
    if language not in LANGUAGES:
        raise check.fail(data, "language", "language", f"must be one of {', '.join(LANGUAGES)}, got '{language}'")
    paths = _parse_paths(check, data, Path(base_dir))
    tables = _parse_tables(check, data)
    derived = _parse_derived(check, data)
    return Profile(
        database=database,
        description=check.text(data, "description", ""),
        descriptions_dir=paths["descriptions_dir"],
        region_csv=paths["region_csv"],
        language=language,
        tables=tables,
        derived=derived,
        path=None,
    )


def _parse_paths(check: _Checker, data: _Map, base: Path) -> dict[str, Path | None]:
    """``descriptions_dir`` (a folder) and ``region_csv`` (a file), resolved against ``base``; each must exist."""
    paths: dict[str, Path | None] = {}
    for key, want_dir in (("descriptions_dir", True), ("region_csv", False)):
        raw = check.text(data, key, "")
        if not raw:
            paths[key] = None
            continue
        resolved = _resolve_path(raw, base)
        ok = resolved.is_dir() if want_dir else resolved.is_file()
        if not ok:
            what = "folder" if want_dir else "file"
            raise check.fail(data, key, key, f"{what} not found: {resolved}")
        paths[key] = resolved
    return paths


def _parse_tables(check: _Checker, data: _Map) -> dict[str, TableProfile]:
    """The ``tables`` section: one TableProfile per table, names unique ignoring case."""
    tables: dict[str, TableProfile] = {}
    tables_map = check.mapping(data.get("tables"), data, "tables", "tables")
    seen_tables: dict[str, str] = {}
    for raw_table, body in tables_map.items():
        tname = check.name(raw_table, tables_map, "tables")
        kp = f"tables.{tname}"
        if tname.lower() in seen_tables:
            problem = f"same table as '{seen_tables[tname.lower()]}' (names ignore case)"
            raise check.fail(tables_map, raw_table, kp, problem)
        seen_tables[tname.lower()] = tname
        tbody = check.mapping(body, tables_map, raw_table, kp)
        check.keys(tbody, _TABLE_KEYS, kp)
        tables[tname] = TableProfile(
            name=tname,
            description=check.text(tbody, "description", kp),
            geo_description=check.text(tbody, "geo_description", kp),
            columns=_parse_columns(check, tbody, kp),
        )
    return tables


def _parse_derived(check: _Checker, data: _Map) -> tuple[DerivedExpression, ...]:
    """The ``derived`` list: named expressions, names unique ignoring case, each parsing as SQL."""
    derived_raw = data.get("derived")
    if derived_raw is not None and not isinstance(derived_raw, list):
        raise check.fail(data, "derived", "derived", f"expected a list, got {_kind(derived_raw)}")
    derived: list[DerivedExpression] = []
    seen_derived: set[str] = set()
    for i, item in enumerate(derived_raw or []):
        kp = f"derived[{i}]"
        body = check.mapping(item, data, "derived", kp)
        check.keys(body, _DERIVED_KEYS, kp, required=("name", "expression"))
        entry = DerivedExpression(
            name=check.text(body, "name", kp),
            expression=check.text(body, "expression", kp),
            description=check.text(body, "description", kp),
        )
        if entry.name.lower() in seen_derived:
            raise check.fail(body, "name", f"{kp}.name", f"derived name '{entry.name}' is used twice")
        seen_derived.add(entry.name.lower())
        try:
            sqlglot.parse_one(entry.expression, read="sqlite")
        except (SqlglotError, RecursionError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise check.fail(body, "expression", f"{kp}.expression", f"not a valid SQL expression: {first}") from exc
        derived.append(entry)
    return tuple(derived)


def _parse_columns(check: _Checker, table_body: _Map, table_kp: str) -> dict[str, ColumnProfile]:
    columns: dict[str, ColumnProfile] = {}
    cmap = check.mapping(table_body.get("columns"), table_body, "columns", f"{table_kp}.columns")
    seen: dict[str, str] = {}
    for raw_col, body in cmap.items():
        cname = check.name(raw_col, cmap, f"{table_kp}.columns")
        kp = f"{table_kp}.columns.{cname}"
        if cname.lower() in seen:
            raise check.fail(cmap, raw_col, kp, f"same column as '{seen[cname.lower()]}' (names ignore case)")
        seen[cname.lower()] = cname
        if isinstance(body, str):  # shorthand: `name: "description"`
            columns[cname] = ColumnProfile(name=cname, description=body.strip())
            continue
        cbody = check.mapping(body, cmap, raw_col, kp)
        check.keys(cbody, _COLUMN_KEYS, kp)
        examples = cbody.get("value_examples")
        if examples is None:
            examples = []
        if not isinstance(examples, list) or any(isinstance(v, (dict, list)) or v is None for v in examples):
            raise check.fail(cbody, "value_examples", f"{kp}.value_examples", "expected a list of plain values")
        columns[cname] = ColumnProfile(
            name=cname,
            description=check.text(cbody, "description", kp),
            value_explanation=check.text(cbody, "value_explanation", kp),
            data_format=check.text(cbody, "data_format", kp),
            value_examples=tuple(str(v) for v in examples),
        )
    return columns


def load_profile(path: str | os.PathLike[str]) -> Profile:
    """Read and validate a YAML profile; relative paths in it are relative to the file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ProfileError(f"{p}: profile not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ProfileError(f"{p}: cannot read profile: {exc}") from exc
    loader = _Loader(text)
    loader.name = str(p)
    try:
        data = loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{p}:{mark.line + 1}:{mark.column + 1}" if mark else str(p)
        problem = " ".join(x for x in (exc.context, exc.problem) if x)
        if exc.context_mark and mark and exc.context_mark.line != mark.line:
            problem += f" (started at line {exc.context_mark.line + 1})"
        raise ProfileError(f"{where}: invalid YAML: {problem}") from exc
    except yaml.YAMLError as exc:
        raise ProfileError(f"{p}: invalid YAML: {exc}") from exc
    finally:
        loader.dispose()
    return dataclasses.replace(parse_profile(data, source=str(p), base_dir=p.parent), path=p)
