"""Every stage's cache nests under the one root that KGSQL_CACHE_DIR moves."""
from __future__ import annotations

from pathlib import Path

import pytest


def test_stage_caches_share_the_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kgsql.examples.cache import cache_dir as examples_dir
    from kgsql.llm.config import cache_dir as llm_dir
    from kgsql.paths import cache_root
    from kgsql.retrieve.index import default_cache_dir as retrieve_dir

    monkeypatch.setenv("KGSQL_CACHE_DIR", str(tmp_path / "c"))
    assert cache_root() == llm_dir() == tmp_path / "c"
    assert retrieve_dir() == tmp_path / "c" / "retrieve"
    assert examples_dir() == tmp_path / "c" / "examples"


def test_root_expands_home_and_defaults_to_the_user_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    from kgsql.paths import cache_root

    monkeypatch.setenv("KGSQL_CACHE_DIR", "~/kgsql-cache")
    assert cache_root() == Path.home() / "kgsql-cache"
    monkeypatch.delenv("KGSQL_CACHE_DIR")
    assert cache_root().name == "kgsql"
