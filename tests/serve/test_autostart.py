"""Warm by default (issue 30, item 6): the first ``kgsql ask`` starts a service, the next one uses it, and
a service nobody uses stops itself."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from llm_stub import Reply, StubServer, chat_body
from serve_process import serve_process

LONGEST = "SELECT name FROM rivers ORDER BY length_km DESC LIMIT 1"
#: Seconds a stopping service may take to go (a liveness bound, not a speed claim).
STOP_S = 120


def wait_gone(pid: int, state: Path) -> bool:
    deadline = time.monotonic() + STOP_S
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return not state.exists()
        time.sleep(0.3)
    return False


def test_the_first_ask_starts_a_service_and_the_next_is_answered_by_it(cli_env, example_db: Path,
                                                                        tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    stub = StubServer().always(Reply(body=chat_body(LONGEST)))
    env = dict(cli_env, KGSQL_CACHE_DIR=str(tmp_path / "cache"), KGSQL_LLM_MODEL="stub-model",
               KGSQL_LLM_BASE_URL=stub.base_url, KGSQL_SERVICE_IDLE="600")
    env.pop("KGSQL_NO_SERVICE")
    state = tmp_path / "cache" / "service.json"
    ingest = subprocess.run([sys.executable, "-m", "kgsql", "ingest", str(example_db), "--name", "auto_geo"],
                            capture_output=True, text=True, env=env, timeout=300)
    assert ingest.returncode == 0, ingest.stderr
    ask = [sys.executable, "-m", "kgsql", "ask", "--db", "auto_geo", "Which river is the longest?"]
    pid = None
    try:
        here = subprocess.run(ask, capture_output=True, text=True, env=dict(env, KGSQL_SERVICE_IDLE="0"), timeout=300)
        assert here.returncode == 0 and not state.exists(), here.stderr  # turned off: answered in-process
        first = subprocess.run(ask, capture_output=True, text=True, env=env, timeout=600)
        assert first.returncode == 0, first.stderr
        assert "starting kgsql serve in the background" in first.stderr and "Silver River" in first.stdout
        pid = json.loads(state.read_text())["pid"]
        hits = stub.hits
        stub.close()  # the endpoint is gone: only the warm service, with its response cache, can answer
        second = subprocess.run([*ask, "--json"], capture_output=True, text=True, env=env, timeout=300)
    finally:
        stub.close()
        if pid is None and state.exists():
            pid = json.loads(state.read_text())["pid"]
        if pid is not None:
            os.kill(pid, signal.SIGTERM)
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["rows"] == [["Silver River"]] and "starting" not in second.stderr
    assert stub.hits == hits
    assert wait_gone(pid, state)  # stopped cleanly: its state file went with it


def test_a_service_nobody_uses_stops_itself(cli_env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    env = dict(cli_env, KGSQL_CACHE_DIR=str(tmp_path / "cache"), KGSQL_LLM_MODEL="stub-model",
               KGSQL_LLM_BASE_URL="http://127.0.0.1:9/v1")
    state = tmp_path / "cache" / "service.json"
    with serve_process(["--port", "0", "--lazy", "--idle-stop", "1"], env, tmp_path / "serve.log") as (process, _url):
        assert process.wait(timeout=STOP_S) == 0
    assert not state.exists()
    assert "or 1 s unused" in (tmp_path / "serve.log").read_text()
