"""What a load did: the report every step of a copy adds to, and the command line prints.

Why: a copy changes things on purpose (types that fall back to text, keys
and foreign keys the data or the target cannot hold, geometry stored as
WKB in DuckDB); each change is listed with its reason, so a difference
between engines can be traced to the load rather than to the query.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["LoadReport"]


@dataclass
class LoadReport:
    """What a load did: the target, per-table rows and types, keys declared and skipped, and why."""

    source: str
    target: str
    engine: str
    names: str
    seconds: float = 0.0
    tables: list[dict[str, Any]] = field(default_factory=list)
    primary_keys: int = 0
    unique_constraints: int = 0
    foreign_keys: list[str] = field(default_factory=list)
    foreign_keys_not_valid: list[str] = field(default_factory=list)
    skipped_foreign_keys: list[dict[str, str]] = field(default_factory=list)
    skipped_keys: list[dict[str, str]] = field(default_factory=list)
    fallbacks: list[dict[str, str]] = field(default_factory=list)
    geometry: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return sum(int(t["rows"]) for t in self.tables)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "rows": self.rows}
