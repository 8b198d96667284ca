"""When a service was last used, so that one nobody uses stops itself (``kgsql serve --idle-stop S``).

``kgsql ask`` starts a service on first use (``kgsql.serve.autostart``); it must
not keep a model in memory for ever after the user has gone. A request in flight
counts as use for as long as it runs, however long that is.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator


class IdleClock:
    """Seconds since the last request ended (0 while one runs)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._in_flight = 0
        self._since = time.monotonic()

    @contextmanager
    def working(self) -> Iterator[None]:
        with self._lock:
            self._in_flight += 1
        try:
            yield
        finally:
            with self._lock:
                self._in_flight -= 1
                self._since = time.monotonic()

    def idle_s(self) -> float:
        with self._lock:
            return 0.0 if self._in_flight else time.monotonic() - self._since


def stop_when_idle(clock: IdleClock, idle_s: float, stop: Callable[[], None]) -> threading.Thread:
    """A daemon thread calling ``stop`` once ``clock`` has been idle ``idle_s`` seconds."""
    def watch() -> None:
        while True:
            left = idle_s - clock.idle_s()
            if left <= 0:
                stop()
                return
            time.sleep(min(max(left, 0.1), 5.0))

    thread = threading.Thread(target=watch, name="kgsql-idle-stop", daemon=True)
    thread.start()
    return thread
