"""Gather the knowledge that sits beside a database file and merge it in.

Sources, in increasing precedence: files found next to the database (BIRD's
``database_description/*.csv``, the spatial dataset's ``<db>.table.csv`` region
descriptions), an explicit ``--descriptions`` folder, and a YAML profile
(explicit, or ``<db>.yaml`` among the shipped profiles in ``kgsql.profiles``).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from kgsql.schema.model import DatabaseSchema


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
    db_path: Path,
    *,
    descriptions_dir: Path | None = None,
    profile_path: Path | None = None,
    use_shipped_profiles: bool = True,
) -> DatabaseSchema:
    """Merge descriptions, region descriptions and profile knowledge into ``schema``."""
    from kgsql.ingest.profile import find_bundled_profile

    desc_dir = descriptions_dir or sibling_descriptions_dir(db_path)
    region_csv = sibling_region_csv(db_path)
    renamed = False
    if profile_path is None and use_shipped_profiles:
        profile_path = find_bundled_profile(schema.name)
        if profile_path is None and db_path.stem != schema.name:
            # ``--name traffic_d1`` on traffic.sqlite still gets traffic's shipped profile
            profile_path = find_bundled_profile(db_path.stem)
            renamed = profile_path is not None
    if desc_dir is None and region_csv is None and profile_path is None:
        return schema
    from kgsql.ingest.descriptions import load_description_dir, load_table_region_csv
    from kgsql.ingest.profile import apply_profile, load_profile

    descriptions = load_description_dir(desc_dir) if desc_dir else None
    regions = load_table_region_csv(region_csv) if region_csv else None
    profile = load_profile(profile_path) if profile_path else None
    if profile is not None and renamed:
        profile = dataclasses.replace(profile, database=schema.name)
    return apply_profile(schema, profile, descriptions=descriptions, regions=regions)
