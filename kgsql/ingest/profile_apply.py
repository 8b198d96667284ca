"""Applying ingestion profiles: find the shipped one for a database, check its names, merge it.

:func:`apply_profile` merges description CSVs, region descriptions and the
profile (:mod:`kgsql.ingest.profile`) into a copy of a ``DatabaseSchema``;
:func:`profile_mismatch` says why a shipped profile found by name does not
describe a database after all (ingest then skips it with a warning).
Precedence, lowest first: what the schema already holds, description CSVs,
region CSV, the profile itself. Names in the profile must exist (ProfileError
with a did-you-mean); names in third-party CSVs that do not exist are logged
and skipped, since BIRD's CSVs describe a few columns the databases lack.
"""
from __future__ import annotations

import copy
import difflib
import logging
from importlib import resources
from pathlib import Path

import sqlglot
from sqlglot import exp

from kgsql.errors import ProfileError
from kgsql.ingest.descriptions import (
    ColumnDescription,
    load_description_dir,
    load_table_region_csv,
)
from kgsql.ingest.profile import Profile, load_profile
from kgsql.schema.model import Column, DatabaseSchema, Table

__all__ = ["apply_profile", "bundled_profiles", "find_bundled_profile", "profile_mismatch"]

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------
# Bundled profiles (package kgsql.profiles = repo folder profiles/)
# --------------------------------------------------------------------------


def bundled_profiles() -> list[Path]:
    """Every ``*.yaml`` profile shipped inside ``kgsql.profiles``."""
    root = Path(str(resources.files("kgsql.profiles")))
    return sorted(p for pattern in ("*.yaml", "*.yml") for p in root.rglob(pattern))


def find_bundled_profile(database: str) -> Path | None:
    """The shipped profile whose ``database:`` is ``database`` (case-insensitive), if any."""
    for path in bundled_profiles():
        if load_profile(path).database.lower() == database.lower():
            return path
    return None


# --------------------------------------------------------------------------
# Merging into a DatabaseSchema
# --------------------------------------------------------------------------


def _did_you_mean(name: str, options: list[str]) -> str:
    lowered = {o.lower(): o for o in options}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.6)
    return f"; did you mean '{lowered[close[0]]}'?" if close else ""


def _find_table(schema: DatabaseSchema, name: str) -> Table | None:
    return next((t for t in schema.tables if t.name.lower() == name.lower()), None)


def _find_column(table: Table, name: str) -> Column | None:
    return next((c for c in table.columns if c.name.lower() == name.lower()), None)


def _where(profile: Profile) -> str:
    return str(profile.path) if profile.path else f"profile for '{profile.database}'"


def _check_profile_names(schema: DatabaseSchema, profile: Profile) -> None:
    """Every table/column the profile names exists; else ProfileError with a did-you-mean."""
    table_names = [t.name for t in schema.tables]
    for tp in profile.tables.values():
        table = _find_table(schema, tp.name)
        if table is None:
            raise ProfileError(
                f"{_where(profile)}: tables.{tp.name}: no table '{tp.name}' in database "
                f"'{schema.name}'{_did_you_mean(tp.name, table_names)}"
            )
        for cp in tp.columns.values():
            if _find_column(table, cp.name) is None:
                raise ProfileError(
                    f"{_where(profile)}: tables.{tp.name}.columns.{cp.name}: no column '{cp.name}' in table "
                    f"'{table.name}'{_did_you_mean(cp.name, [c.name for c in table.columns])}"
                )
    all_columns = sorted({c.name for t in schema.tables for c in t.columns})
    for i, d in enumerate(profile.derived):
        tree = sqlglot.parse_one(d.expression, read="sqlite")
        aliases = {a.name.lower() for a in tree.find_all(exp.TableAlias) if a.name}
        ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
        column_aliases = {a.alias.lower() for a in tree.find_all(exp.Alias) if a.alias}
        for col in tree.find_all(exp.Column):
            qualifier = col.table
            where = f"{_where(profile)}: derived[{i}] '{d.name}'"
            if qualifier and qualifier.lower() not in aliases | ctes:
                table = _find_table(schema, qualifier)
                if table is None:
                    raise ProfileError(
                        f"{where}: no table '{qualifier}' in database '{schema.name}'"
                        f"{_did_you_mean(qualifier, table_names)}"
                    )
                if _find_column(table, col.name) is None:
                    raise ProfileError(
                        f"{where}: no column '{col.name}' in table '{table.name}'"
                        f"{_did_you_mean(col.name, [c.name for c in table.columns])}"
                    )
            elif not qualifier and col.name.lower() not in {c.lower() for c in all_columns}:
                if col.name.lower() in column_aliases:  # defined inside the expression
                    continue
                raise ProfileError(
                    f"{where}: no column '{col.name}' in any table of '{schema.name}'"
                    f"{_did_you_mean(col.name, all_columns)}"
                )


def profile_mismatch(schema: DatabaseSchema, profile: Profile) -> str | None:
    """Why ``profile`` does not describe ``schema``, or None when it does.

    A shipped profile is chosen by database name, and names collide (Spider
    has its own ``geo``), so it must also name at least one table or derived
    expression, and every table, column and expression name in it must exist.
    """
    if not profile.tables and not profile.derived:
        return "it names no tables to recognise the database by"
    try:
        _check_profile_names(schema, profile)
    except ProfileError as exc:
        text = str(exc)
        prefix = f"{_where(profile)}: "
        return text[len(prefix):] if text.startswith(prefix) else text
    return None


def _pick(desc: ColumnDescription, language: str) -> tuple[str, str]:
    """(description, value explanation) in ``language``, falling back to English."""
    text = desc.description
    values = desc.value_description
    if language == "zh":
        text = desc.description_zh or text
        values = desc.value_description_zh or values
    if not text and desc.readable_name and desc.readable_name.lower() != desc.original_name.lower():
        text = desc.readable_name  # BIRD's expanded name is the only description some columns get
    return text, values


def _merge_descriptions(
    schema: DatabaseSchema, descriptions: dict[str, dict[str, ColumnDescription]], language: str
) -> None:
    for table_key, columns in descriptions.items():
        table = _find_table(schema, table_key)
        if table is None:
            log.warning("description CSV for unknown table '%s' in database '%s' skipped", table_key, schema.name)
            continue
        for column_key, desc in columns.items():
            column = _find_column(table, column_key)
            if column is None:
                log.warning("description of unknown column '%s.%s' skipped", table.name, desc.original_name)
                continue
            text, values = _pick(desc, language)
            column.description = text or column.description
            column.value_explanation = values or column.value_explanation
            column.data_format = desc.data_format or column.data_format
            if desc.readable_name and desc.readable_name.lower() != column.name.lower():
                column.readable_name = desc.readable_name


def _merge_regions(schema: DatabaseSchema, regions: dict[str, dict[str, str]], language: str) -> None:
    for table_key, texts in regions.items():
        table = _find_table(schema, table_key)
        if table is None:
            log.warning("region description for unknown table '%s' in database '%s' skipped", table_key, schema.name)
            continue
        text = texts.get(language) or texts.get("en") or next(iter(texts.values()), "")
        table.geo_description = text or table.geo_description


def _merge_profile(schema: DatabaseSchema, profile: Profile) -> None:
    schema.description = profile.description or schema.description
    known = {d.name.lower() for d in schema.derived}
    schema.derived.extend(d for d in profile.derived if d.name.lower() not in known)
    for tp in profile.tables.values():
        table = _find_table(schema, tp.name)
        assert table is not None  # checked by _check_profile_names
        table.description = tp.description or table.description
        table.geo_description = tp.geo_description or table.geo_description
        for cp in tp.columns.values():
            column = _find_column(table, cp.name)
            assert column is not None
            column.description = cp.description or column.description
            column.value_explanation = cp.value_explanation or column.value_explanation
            column.data_format = cp.data_format or column.data_format
            if cp.value_examples:
                column.value_examples = list(cp.value_examples)


def apply_profile(
    schema: DatabaseSchema,
    profile: Profile | None,
    *,
    descriptions: dict[str, dict[str, ColumnDescription]] | None = None,
    regions: dict[str, dict[str, str]] | None = None,
) -> DatabaseSchema:
    """A copy of ``schema`` enriched by description CSVs, region texts and ``profile``.

    ``descriptions`` / ``regions`` default to loading the profile's
    ``descriptions_dir`` / ``region_csv``. The input schema is not modified.
    With no profile, only the description CSVs and region texts are merged.
    """
    if profile is None:
        merged = copy.deepcopy(schema)
        if descriptions:
            _merge_descriptions(merged, descriptions, "en")
        if regions:
            _merge_regions(merged, regions, "en")
        return merged
    if profile.database.lower() != schema.name.lower():
        raise ProfileError(
            f"{_where(profile)}: profile is for database '{profile.database}', not '{schema.name}'"
        )
    _check_profile_names(schema, profile)
    if descriptions is None and profile.descriptions_dir is not None:
        descriptions = load_description_dir(profile.descriptions_dir)
    if regions is None and profile.region_csv is not None:
        regions = load_table_region_csv(profile.region_csv)
    merged = copy.deepcopy(schema)
    if descriptions:
        _merge_descriptions(merged, descriptions, profile.language)
    if regions:
        _merge_regions(merged, regions, profile.language)
    _merge_profile(merged, profile)
    return merged
