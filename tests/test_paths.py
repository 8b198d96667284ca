"""Every stage's cache nests under the one root that KGSQL_CACHE_DIR moves."""
from __future__ import annotations

from pathlib import Path

import pytest


def test_stage_caches_share_the_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kgsql.fewshot.cache import cache_dir as examples_dir
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


# --------------------------------------------------------------------------- private state


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


@pytest.fixture()
def loose_umask() -> object:
    """umask 0: what kgsql creates must be private whatever the user's umask."""
    import os

    old = os.umask(0)
    yield
    os.umask(old)


def test_private_dir_creates_every_missing_level_0700(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loose_umask: object) -> None:
    from kgsql.paths import private_dir

    monkeypatch.setenv("KGSQL_CACHE_DIR", str(tmp_path / "root"))
    leaf = private_dir(tmp_path / "root" / "a" / "b")
    assert leaf == tmp_path / "root" / "a" / "b"
    for folder in (tmp_path / "root", tmp_path / "root" / "a", leaf):
        assert _mode(folder) == 0o700
    assert private_dir(leaf) == leaf  # existing and private: nothing to do


def test_private_dir_tightens_an_open_folder_and_says_so_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from kgsql.paths import private_dir

    root = tmp_path / "cache"
    (root / "retrieve").mkdir(parents=True)
    root.chmod(0o755)
    (root / "retrieve").chmod(0o775)
    monkeypatch.setenv("KGSQL_CACHE_DIR", str(root))
    private_dir(root / "retrieve")
    private_dir(root / "retrieve")
    assert _mode(root / "retrieve") == 0o700
    assert _mode(root) == 0o700  # the cache root above a stage folder is checked too
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2, lines
    assert all("made it private (0700)" in ln for ln in lines)
    assert any("(mode 0775)" in ln and str(root / "retrieve") in ln for ln in lines)


def test_private_dir_refuses_a_folder_it_cannot_tighten(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from kgsql.paths import PrivateStateError, private_dir

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)

    def refuse(*_args: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "chmod", refuse)  # another user's folder
    with pytest.raises(PrivateStateError) as err:
        private_dir(shared)
    message = str(err.value)
    assert "\n" not in message and "mode 0777" in message and "chmod 700" in message
    (tmp_path / "file").write_text("x")
    with pytest.raises(PrivateStateError, match="not a folder"):
        private_dir(tmp_path / "file")


def test_open_private_creates_0600_and_tightens_an_existing_file(
        tmp_path: Path, loose_umask: object) -> None:
    from kgsql.paths import open_private

    new = tmp_path / "new.log"
    with open_private(new, "w") as fh:
        fh.write("one\n")
    assert _mode(new) == 0o600
    old = tmp_path / "old.log"
    old.write_text("kept\n")
    old.chmod(0o644)
    with open_private(old, "a") as fh:
        fh.write("two\n")
    assert _mode(old) == 0o600 and old.read_text() == "kept\ntwo\n"
    with pytest.raises(ValueError):
        open_private(old, "r")


def test_write_private_is_atomic_and_0600(tmp_path: Path, loose_umask: object) -> None:
    from kgsql.paths import write_private

    target = tmp_path / "state" / "server.json"
    write_private(target, b'{"a": 1}')
    assert target.read_bytes() == b'{"a": 1}'
    assert _mode(target) == 0o600 and _mode(target.parent) == 0o700
    target.chmod(0o644)
    write_private(target, lambda fh: fh.write(b"second"))
    assert target.read_bytes() == b"second" and _mode(target) == 0o600

    def boom(fh: object) -> None:
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_private(target, boom)
    assert target.read_bytes() == b"second"
    assert sorted(p.name for p in target.parent.iterdir()) == ["server.json"]  # no temp left
