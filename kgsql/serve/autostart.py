"""``kgsql ask`` starts a ``kgsql serve`` in the background when none runs, so the next question is warm.

Answered in-process, every ``ask`` starts the model server and loads the encoder
again (13-34 s a question on two cores, issue 30); the service keeps both. The
first ``ask`` starts one (``kgsql serve --port 0 --idle-stop S``, detached, its
stderr in ``<cache>/service.log``) and waits for it, later ones find it
(``kgsql.serve.client.find_service``); it stops itself after ``S`` seconds
unused (``KGSQL_SERVICE_IDLE``, default 900; ``0`` turns the start off, as
``KGSQL_NO_SERVICE=1`` turns off the service altogether). It inherits the
caller's environment, so it answers with the caller's graph and model. A lock
keeps two ``ask`` started together from starting two services. If it does not
come up, ``ask`` says so in one line and answers in-process.
"""
from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

from kgsql.paths import cache_root, open_private, private_dir

ENV_IDLE = "KGSQL_SERVICE_IDLE"
DEFAULT_IDLE_S = 900
#: Seconds the started service may take to load the encoder and the model on a busy machine.
START_TIMEOUT_S = float(os.environ.get("KGSQL_SERVICE_START_TIMEOUT", "300"))


def idle_s() -> int:
    """Seconds a started service stays up unused; 0: ``ask`` starts none."""
    raw = os.environ.get(ENV_IDLE, "").strip()
    try:
        return max(0, int(raw)) if raw else DEFAULT_IDLE_S
    except ValueError:
        return DEFAULT_IDLE_S


def log_file() -> Path:
    return cache_root() / "service.log"


def start_service() -> str | None:
    """The URL of a service for this caller: one another caller just started, or one started now.
    None when starting is turned off or the service did not come up (the caller answers in-process)."""
    from kgsql.serve.client import find_service

    idle = idle_s()
    if idle <= 0:
        return None
    private_dir(cache_root())
    with open_private(cache_root() / "service.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second ask started together waits here, then finds the first's
        url = find_service()
        if url is not None:
            return url
        print(f"kgsql.ask: starting kgsql serve in the background, so the next question is warm (it stops "
              f"after {idle} s unused; {ENV_IDLE}=0 answers here instead)", file=sys.stderr, flush=True)
        with open_private(log_file(), "wb") as err:
            process = subprocess.Popen([sys.executable, "-m", "kgsql", "serve", "--port", "0", "--idle-stop", str(idle)],
                                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                       start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT_S
        while process.poll() is None and time.monotonic() < deadline:
            url = find_service()
            if url is not None:
                return url
            time.sleep(0.3)
        if process.poll() is None:
            process.terminate()
            reason = f"not up after {START_TIMEOUT_S:.0f} s; its log: {log_file()}"
        else:
            lines = [ln for ln in log_file().read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
            reason = lines[-1] if lines else f"it exited with status {process.returncode}"
        print(f"kgsql.ask: the background service did not start ({reason}); answering here", file=sys.stderr,
              flush=True)
        return None
