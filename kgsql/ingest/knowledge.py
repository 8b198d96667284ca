"""Gather the knowledge that sits beside a database file and merge it in.

Sources, in increasing precedence: files found next to the database (BIRD's
``database_description/*.csv``, the spatial dataset's ``<db>.table.csv`` region
descriptions), an explicit ``--descriptions`` folder or ``--regions`` file (what a
PostgreSQL database, which has no folder beside it, is given), and a YAML profile
(explicit, or ``<db>.yaml`` among the shipped profiles in ``kgsql.profiles``).
A shipped profile is used only when the tables and columns it names exist in
the database; otherwise it is skipped with a one-line warning (Spider's
``geo`` is not the shipped example's ``geo``). An explicit profile must match.
"""
from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from pathlib import Path

from kgsql.schema.model import DatabaseSchema

log = logging.getLogger("kgsql.ingest")


def sibling_descriptions_dir(db_path: Path) -> Path | None:
    """BIRD layout: ``<db>/database_description/`` beside ``<db>/<db>.sqlite``."""
    candidate = db_path.parent / "database_description"
    return candidate if candidate.is_dir() else None


def sibling_region_csv(db_path: Path) -> Path | None:
    """Spatial dataset layout: ``<db>.table.csv`` beside ``<db>.sqlite``."""
    candidate = db_path.with_name(f"{db_path.stem}.table.csv")
    return candidate if candidate.is_file() else None


def enrich(
    schema: DatabaseSchema,
    db_path: Path | None,
    *,
    descriptions_dir: Path | None = None,
    region_csv: Path | None = None,
    profile_path: Path | None = None,
    use_shipped_profiles: bool = True,
    warn: Callable[[str], None] | None = None,
    source_name: str | None = None,
) -> DatabaseSchema:
    """Merge descriptions, region descriptions and profile knowledge into ``schema``.

    ``warn`` receives one line per skipped shipped profile (default: the
    ``kgsql.ingest`` logger). ``source_name`` is the database's own name
    (default: the file stem; a PostgreSQL database's name), under which a
    shipped profile is also looked up when ``schema`` was renamed. ``region_csv``:
    a ``<db>.table.csv`` of region descriptions given explicitly (default: the one beside the file).
    """
    source_name = source_name or (db_path.stem if db_path is not None else None)
    from kgsql.ingest.profile_apply import find_bundled_profile, profile_mismatch

    desc_dir = descriptions_dir or (sibling_descriptions_dir(db_path) if db_path else None)
    region_csv = region_csv or (sibling_region_csv(db_path) if db_path else None)
    renamed = shipped = False
    if profile_path is None and use_shipped_profiles:
        profile_path = find_bundled_profile(schema.name)
        if profile_path is None and source_name and source_name != schema.name:
            # ``--name traffic_d1`` on traffic.sqlite still gets traffic's shipped profile
            profile_path = find_bundled_profile(source_name)
            renamed = profile_path is not None
        shipped = profile_path is not None
    if desc_dir is None and region_csv is None and profile_path is None:
        return schema
    from kgsql.ingest.descriptions import load_description_dir, load_table_region_csv
    from kgsql.ingest.profile import load_profile
    from kgsql.ingest.profile_apply import apply_profile

    descriptions = load_description_dir(desc_dir, on_error=warn or log.warning) if desc_dir else None
    regions = load_table_region_csv(region_csv) if region_csv else None
    profile = load_profile(profile_path) if profile_path else None
    if profile is not None and renamed:
        profile = dataclasses.replace(profile, database=schema.name)
    problem = profile_mismatch(schema, profile) if profile is not None and shipped else None
    if problem is not None:
        (warn or log.warning)(f"shipped profile {Path(profile_path).name} skipped for database "
                              f"'{schema.name}' ({db_path or schema.path}): {problem}")
        profile = None
    enriched = apply_profile(schema, profile, descriptions=descriptions, regions=regions)
    if enriched.dialect == "postgres" and enriched.derived:  # a SpatiaLite profile on a PostGIS copy
        from kgsql.sql.to_postgis import to_postgis

        enriched.derived = [dataclasses.replace(d, expression=to_postgis(d.expression)) for d in enriched.derived]
    return enriched
