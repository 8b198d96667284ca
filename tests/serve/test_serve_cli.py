"""``kgsql serve`` as a user runs it: ask goes to the warm service; a repeated question reaches no model."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from llm_stub import Reply, StubServer, chat_body
from serve_process import serve_process

LONGEST = "SELECT name FROM rivers ORDER BY length_km DESC LIMIT 1"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_ask_uses_the_running_service(cli_env, example_db: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    stub = StubServer().always(Reply(body=chat_body(LONGEST)))
    env = dict(cli_env, KGSQL_CACHE_DIR=str(tmp_path / "cache"), KGSQL_LLM_MODEL="stub-model")
    env.pop("KGSQL_NO_SERVICE")
    serve_env = dict(env, KGSQL_LLM_BASE_URL=stub.base_url)
    ingest = subprocess.run([sys.executable, "-m", "kgsql", "ingest", str(example_db), "--name", "serve_geo"],
                            capture_output=True, text=True, env=serve_env, timeout=300)
    assert ingest.returncode == 0, ingest.stderr
    state = tmp_path / "cache" / "service.json"
    try:
        with serve_process(["--port", "0"], serve_env, tmp_path / "serve.log") as (_server, url):
            assert url.startswith("http://127.0.0.1:") and (state.stat().st_mode & 0o077) == 0
            ask = [sys.executable, "-m", "kgsql", "ask", "--db", "serve_geo", "Which river is the longest?"]
            first = subprocess.run(ask, capture_output=True, text=True, env=serve_env, timeout=300)
            calls_after_first = stub.hits
            stub.close()  # the model endpoint is gone: in-process, ask would fail at its endpoint check
            second = subprocess.run([*ask, "--json"], capture_output=True, text=True, env=serve_env, timeout=300)
            missing = subprocess.run([sys.executable, "-m", "kgsql", "ask", "--db", "nope", "q?"], capture_output=True,
                                     text=True, env=serve_env, timeout=300)
            # a caller with another model endpoint is not answered by this service's model
            other_env = dict(serve_env, KGSQL_LLM_BASE_URL=f"http://127.0.0.1:{closed_port()}/v1",
                             KGSQL_SERVICE_IDLE="0")
            other = subprocess.run(ask, capture_output=True, text=True, env=other_env, timeout=300)
    finally:
        stub.close()
    assert first.returncode == 0, first.stderr
    assert f"SQL: {LONGEST}" in first.stdout and "Silver River" in first.stdout
    assert second.returncode == 0 and json.loads(second.stdout)["rows"] == [["Silver River"]]
    assert stub.hits == calls_after_first >= 1  # the repeat was answered from the service's response cache
    assert other.returncode == 1 and "cannot connect to LLM endpoint" in other.stderr
    assert missing.returncode == 1 and "database 'nope' is not in the graph" in missing.stderr
    assert not state.exists()  # removed when the service stopped


def test_bad_options_are_one_line(cli_env) -> None:  # type: ignore[no-untyped-def]
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for args, message in [(["--host", "0.0.0.0"], "loopback only unless --allow-remote"),
                              (["--port", "99999"], "--port must be 0-65535"),
                              (["--port", str(port), "--lazy"], "Address already in use")]:
            run = subprocess.run([sys.executable, "-m", "kgsql", "serve", *args], capture_output=True, text=True,
                                 env=cli_env, timeout=120)
            lines = [ln for ln in run.stderr.splitlines() if ln.strip()]
            assert run.returncode == 1 and len(lines) == 1 and message in lines[0], run.stderr
