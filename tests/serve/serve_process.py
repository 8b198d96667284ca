"""``kgsql serve`` as a real process for the tests: started, waited for (its state file), stopped."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

#: Seconds a service may take to start (loading the encoder and a model on a busy machine).
START_S = 120


@contextmanager
def serve_process(args: list[str], env: dict[str, str], log: Path) -> Iterator[tuple[subprocess.Popen, str]]:
    """(the process, its URL) of ``kgsql serve ARGS`` under ``env`` (whose ``KGSQL_CACHE_DIR`` holds the
    state file), its stderr in ``log``; terminated on exit."""
    state = Path(env["KGSQL_CACHE_DIR"]) / "service.json"
    with log.open("wb") as err:
        process = subprocess.Popen([sys.executable, "-m", "kgsql", "serve", *args], env=env,
                                   stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.monotonic() + START_S
        while not state.exists():
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        yield process, json.loads(state.read_text())["url"]
    finally:
        process.terminate()
        process.wait(timeout=60)
