"""The LLM response cache (prompts quote cell values) is private: 0600 in a 0700 folder."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from kgsql.llm.base import Completion
from kgsql.llm.cache import ResponseCache


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_default_cache_file_and_folder_are_private(tmp_path: Path) -> None:
    old_umask = os.umask(0o022)  # under which sqlite3 and mkdir alone give 0644 / 0755
    try:
        cache = ResponseCache()  # KGSQL_CACHE_DIR points at tmp_path / "kgsql-cache" (conftest)
    finally:
        os.umask(old_umask)
    assert cache.path.parent == tmp_path / "kgsql-cache"
    cache.put("k", Completion(text="SELECT 'Alice'", prompt_tokens=1, completion_tokens=1, cached_tokens=0,
                              latency_s=0.1, model="m"))
    assert cache.get("k") is not None and cache.get("k").text == "SELECT 'Alice'"
    assert _mode(cache.path.parent) == 0o700
    written = sorted(p for p in cache.path.parent.iterdir())
    assert cache.path in written
    for p in written:  # the database and SQLite's -wal / -shm
        assert _mode(p) == 0o600, (p.name, oct(_mode(p)))
    cache.close()


def test_an_existing_open_cache_is_tightened(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import sqlite3

    folder = tmp_path / "kgsql-cache"  # as an older kgsql left it: 0755 folder, 0644 file
    folder.mkdir()
    folder.chmod(0o755)
    path = folder / "llm-cache.sqlite"
    sqlite3.connect(path).close()
    path.chmod(0o644)
    ResponseCache(path).close()
    assert _mode(folder) == 0o700 and _mode(path) == 0o600
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "made it private (0700)" in err[0] and "(mode 0755)" in err[0]
