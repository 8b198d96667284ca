"""The embedded graph server's folder (password, logs, ArcadeDB's files) is private."""
from __future__ import annotations

import stat
from pathlib import Path

import pytest


def test_graph_state_is_private(graph_root: Path) -> None:
    from kgsql.graph.embedded import running_server

    assert running_server(graph_root) is not None
    assert stat.S_IMODE(graph_root.stat().st_mode) == 0o700
    for name in ("credentials.json", "server.json", "server.log", "start.lock"):
        assert stat.S_IMODE((graph_root / name).stat().st_mode) == 0o600, name
    opened = [str(p.relative_to(graph_root)) for p in graph_root.rglob("*")
              if stat.S_IMODE(p.stat().st_mode) & 0o077]
    assert opened == []  # ArcadeDB's databases, config and logs included (daemon umask 077)


def test_reusing_the_server_tightens_an_open_folder(
        graph_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kgsql.graph.embedded import ensure_server

    graph_root.chmod(0o755)
    info = ensure_server(graph_root)
    assert info.reused
    assert stat.S_IMODE(graph_root.stat().st_mode) == 0o700
    assert "made it private (0700)" in capsys.readouterr().err


def test_an_open_credentials_file_is_made_private_on_start(
        graph_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 35: the folder was tightened but the graph's password stayed 0644 (an older kgsql's file)."""
    from kgsql.graph.embedded import ensure_server

    secret = graph_root / "credentials.json"
    secret.chmod(0o644)
    info = ensure_server(graph_root)
    assert info.reused and info.password
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert f"state file {secret} was open to other users (mode 0644); made it private (0600)" in capsys.readouterr().err


def test_private_file_tightens_only_an_open_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kgsql.paths import private_file

    open_one, closed = tmp_path / "open.json", tmp_path / "closed.json"
    for path, mode in ((open_one, 0o644), (closed, 0o400)):
        path.write_text("{}")
        path.chmod(mode)
    assert private_file(open_one) == open_one and private_file(closed) == closed
    assert stat.S_IMODE(open_one.stat().st_mode) == 0o600
    assert stat.S_IMODE(closed.stat().st_mode) == 0o400  # already private: left as it is
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"state file {open_one} was open to other users (mode 0644)" in err
    assert private_file(tmp_path / "missing.json") == tmp_path / "missing.json"
