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
