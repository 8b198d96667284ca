"""Golden tip cases and helpers shared by the tests of kgsql.correct.

Golden cases live in fixtures/tips/*.txt:

    -- db: geo | school          examples/geo/geo.sqlite, or the small plain SQLite DB of conftest.py
    -- check: error KIND | precheck | values
    -- dialect: sqlite           optional (default: spatialite for geo, sqlite for school)
    -- timeout: 0.3              optional, seconds (for the timeout case)
    -- sql
    <the query>
    -- tips
    <expected render_tips output, one sentence per line; nothing when no tips>

``error KIND`` cases run the query through the guard, check SQLite's error
kind, then compare tips_from_error's tips.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from kgsql.db.guard import SQLQueryError, execute_query

FIXTURES = Path(__file__).parent / "fixtures" / "tips"
CASES = sorted(FIXTURES.glob("*.txt"))


@dataclass
class Case:
    db: str
    check: str
    sql: str
    tips: str
    dialect: str | None = None
    timeout: float | None = None


def read_case(path: Path) -> Case:
    header: dict[str, str] = {}
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in path.read_text(encoding="utf-8").removesuffix("\n").split("\n"):
        m = re.match(r"^-- (\w+): (.*)$", line)
        if m and current is None:
            header[m.group(1)] = m.group(2).strip()
        elif line in ("-- sql", "-- tips"):
            current = sections.setdefault(line[3:], [])
        elif current is not None:
            current.append(line)
    return Case(
        db=header["db"], check=header["check"], sql="\n".join(sections["sql"]),
        tips="\n".join(sections.get("tips", [])), dialect=header.get("dialect"),
        timeout=float(header["timeout"]) if "timeout" in header else None,
    )


def run_error(path: Path, sql: str, timeout: float | None = None) -> SQLQueryError:
    """The SQLQueryError the guard raises for ``sql``."""
    with pytest.raises(SQLQueryError) as info:
        execute_query(path, sql, timeout_s=timeout or 10.0)
    return info.value
