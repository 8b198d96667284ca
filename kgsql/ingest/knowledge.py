"""Gather the knowledge that sits beside a database file and merge it in.

Sources, in increasing precedence: files found next to the database (BIRD's
``database_description/*.csv``, the spatial dataset's ``<db>.table.csv`` region
descriptions), an explicit ``--descriptions`` folder, and a YAML profile
(explicit, or ``<db>.yaml`` among the shipped profiles in ``kgsql.profiles``).
"""
from __future__ import annotations

import importlib.resources
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


def shipped_profile(database: str) -> Path | None:
    """A profile for ``database`` shipped in ``kgsql.profiles`` (any subfolder)."""
    root = importlib.resources.files("kgsql.profiles")
    stack = [root]
    while stack:
        folder = stack.pop()
        for entry in folder.iterdir():
            if entry.is_dir():
                stack.append(entry)
            elif entry.name in (f"{database}.yaml", f"{database}.yml"):
                return Path(str(entry))
    return None


def enrich(
    schema: DatabaseSchema,
    db_path: Path,
    *,
    descriptions_dir: Path | None = None,
    profile_path: Path | None = None,
    use_shipped_profiles: bool = True,
) -> DatabaseSchema:
    """Merge descriptions, region descriptions and profile knowledge into ``schema``."""
    desc_dir = descriptions_dir or sibling_descriptions_dir(db_path)
    region_csv = sibling_region_csv(db_path)
    if profile_path is None and use_shipped_profiles:
        profile_path = shipped_profile(schema.name)
    if desc_dir is None and region_csv is None and profile_path is None:
        return schema
    from kgsql.ingest.descriptions import load_description_dir, load_table_region_csv
    from kgsql.ingest.profile import apply_profile, load_profile

    descriptions = load_description_dir(desc_dir) if desc_dir else None
    regions = load_table_region_csv(region_csv) if region_csv else None
    profile = load_profile(profile_path) if profile_path else None
    return apply_profile(schema, profile, descriptions=descriptions, regions=regions)
