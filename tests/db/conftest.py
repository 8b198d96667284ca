"""Fixtures: small real SQLite / SpatiaLite files for the guard tests."""
from __future__ import annotations

from pathlib import Path

import pytest

from guard_helpers import build_plain_db, build_spatial_db


@pytest.fixture
def plain_db(tmp_path: Path) -> Path:
    return build_plain_db(tmp_path / "plain.sqlite")


@pytest.fixture(scope="module")
def spatial_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_spatial_db(tmp_path_factory.mktemp("spatial") / "spatial.sqlite")
