"""Generated SQL in a child process that can be killed: the one execution path, for every engine.

The guard (:mod:`kgsql.db.guard`) stops a query between VM instructions and
caps SQLite's heap, but one C call that never returns to SQLite's VM -- the
final step of a GEOS ``GUnion`` over thousands of rows, which SQLite runs
even after an interrupt; ``FrechetDistance`` with a tiny densify fraction,
which grows to gigabytes and crashes inside GEOS; ``instr``/``LIKE`` on
megabyte strings -- can outlast any in-process timeout, allocate past the
budget with malloc, or kill the process it runs in. A DuckDB query runs in
DuckDB's own threads, where no Python watchdog reaches. So every surface
that runs generated SQL (the correction loop, eval scoring, the service's
``/api/sql``, the agent's tools, the MCP server) calls
:func:`execute_isolated`, which runs the same guarded query in a worker
process and waits for it with two bounds of its own: the query's timeout
plus a grace (half the timeout, at least :data:`GRACE_S`), and the worker's
resident-memory growth against the query's memory budget. Past either, or
when the worker dies, the worker is killed (SIGKILL) and the guard's own
error is raised (:class:`~kgsql.db.guard.QueryTimeoutError`,
:class:`~kgsql.db.guard.QueryResourceError`), so every query returns within
about 1.5x its timeout whatever C code it reaches, and only the worker dies.

Workers are fresh interpreters (``python -m kgsql.db.isolate``: no inherited
threads, connections or ``__main__`` re-import), keep one read-only
connection per SQLite file (PostgreSQL and DuckDB: one engine per URL, see
:mod:`kgsql.db.engines`), serve one query at a time over a pair of pipes,
and are reused: a query costs a pipe round trip, not a process start (about
a second, paid again only after a kill). At most :func:`max_workers` run at
once (``KGSQL_SQL_WORKERS``, default :data:`MAX_WORKERS`): a query that finds
them all busy waits up to ``wait_s`` and then raises
:class:`~kgsql.errors.BusyError` (the service answers 503), so a flood of
slow queries holds a bounded number of processes, never the caller.
``KGSQL_SQL_ISOLATION=0`` runs queries in-process instead (where child
processes cannot be started; debugging), with the guard's in-process limits
only.
"""
from __future__ import annotations

import atexit
import os
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from multiprocessing.connection import Connection as Pipe
from pathlib import Path
from typing import Any, Final

from kgsql.db import guard
from kgsql.db.guard import QueryResourceError, QueryResult, QueryTimeoutError, execute_query
from kgsql.errors import BusyError, InputError, KgsqlError, QueryExecutionError

ENV_ISOLATION: Final = "KGSQL_SQL_ISOLATION"
ENV_WORKERS: Final = "KGSQL_SQL_WORKERS"
MAX_WORKERS: Final = 4           # worker processes running queries at once (default of KGSQL_SQL_WORKERS)
WAIT_S: Final = 10.0             # how long a query waits for a free worker before BusyError
GRACE_S: Final = 0.25            # the least a worker gets past its timeout before it is killed
POLL_S: Final = 0.02             # how often the parent checks the clock and the worker's memory
MAX_CONNECTIONS: Final = 8       # open database files per worker
STARTUP_S: Final = 60.0          # a worker that has not said "ready" by then is broken
_PAGE: Final = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def isolation_enabled() -> bool:
    return os.environ.get(ENV_ISOLATION, "1").strip().lower() not in {"0", "false", "no", "off"}


def max_workers() -> int:
    """Worker processes allowed at once: ``KGSQL_SQL_WORKERS`` (a positive integer), else :data:`MAX_WORKERS`."""
    text = os.environ.get(ENV_WORKERS, "").strip()
    return int(text) if text.isdigit() and int(text) > 0 else MAX_WORKERS


def execute_on(database: str, path: str | os.PathLike[str] | None, sql: str, **limits: Any) -> QueryResult:
    """:func:`execute_isolated` on the stored file or URL ``path`` of the ingested ``database``; one clear
    InputError when it is gone (what the service's SQL route and ``kgsql sql`` both run)."""
    from kgsql.db.target import available

    where = available(path)
    if where is None:
        raise InputError(f"the file of database '{database}' is not available to run SQL")
    return execute_isolated(where, sql, **limits)


def execute_isolated(db: str | os.PathLike[str], sql: str, *, timeout_s: float = 30.0, max_rows: int = 10_000,
                     memory_mb: float | None = None, max_bytes: int | None = None,
                     lenient_text: bool = False, wait_s: float = WAIT_S) -> QueryResult:
    """:func:`~kgsql.db.guard.execute_query` on ``db`` (a SQLite/SpatiaLite path, a DuckDB file or a
    PostgreSQL/DuckDB URL), in a killable worker process.

    Same arguments, result and errors as the guard's; in addition a worker
    that outlasts ``timeout_s`` plus the grace raises QueryTimeoutError, one
    that grows past ``memory_mb`` or dies raises QueryResourceError (the
    worker is killed either way), and when every worker stays busy for
    ``wait_s`` seconds BusyError is raised. In-process when isolation is off
    (``KGSQL_SQL_ISOLATION=0``).
    """
    if not isolation_enabled():
        return execute_query(db, sql, timeout_s=timeout_s, max_rows=max_rows, memory_mb=memory_mb,
                             max_bytes=max_bytes, lenient_text=lenient_text)
    if timeout_s <= 0:
        raise ValueError("timeout_s must be positive")
    worker = _POOL.take(wait_s)
    kwargs = dict(timeout_s=timeout_s, max_rows=max_rows, memory_mb=memory_mb, max_bytes=max_bytes,
                  lenient_text=lenient_text)
    try:
        outcome = worker.ask(_reference(db), sql, kwargs)
    except BaseException:
        worker.kill()
        _POOL.give_back(worker)
        raise
    _POOL.give_back(worker)
    status, value = outcome
    if status == "ok":
        return value
    raise value


def _reference(db: str | os.PathLike[str]) -> str:
    """``db`` as the worker opens it: a URL unchanged (``Path`` would fold its ``//``), a path normalised."""
    from kgsql.db.target import is_url

    text = os.fspath(db)
    return text if is_url(text) else str(Path(text))


def prestart() -> None:
    """Start a worker now when none is idle, so the first query does not wait for one to start."""
    if isolation_enabled():
        _POOL.prestart()


class _Worker:
    """One child process and the parent's end of its pipe."""

    def __init__(self) -> None:
        parent_r, child_w = os.pipe()
        child_r, parent_w = os.pipe()
        package_root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH"))
                                                            if p))
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "kgsql.db.isolate", str(child_r), str(child_w)], pass_fds=(child_r, child_w),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, env=env)
        except BaseException:
            os.close(parent_r)
            os.close(parent_w)
            raise
        finally:
            os.close(child_r)
            os.close(child_w)
        self.requests = Pipe(parent_w, readable=False)
        self.replies = Pipe(parent_r, writable=False)
        self.ready = False

    def wait_ready(self) -> None:
        """Wait for the worker's "ready" (its imports done), so start-up memory is not the query's."""
        if self.ready:
            return
        if not self.replies.poll(STARTUP_S):
            self.kill()
            raise QueryExecutionError(f"the SQL worker process did not start within {STARTUP_S:g} s")
        try:
            self.replies.recv()
        except (EOFError, OSError) as exc:
            code = self.process.poll()
            self.kill()
            raise QueryExecutionError(f"the SQL worker process failed to start (exit status {code}): {exc}") from exc
        self.ready = True

    def alive(self) -> bool:
        return self.process.poll() is None

    def ask(self, path: str, sql: str, kwargs: dict[str, Any]) -> tuple[str, Any]:
        """Send one query and wait for its outcome within the time and memory bounds."""
        timeout_s = float(kwargs["timeout_s"])
        budget = int((kwargs["memory_mb"] or guard.MEMORY_MB) * 2**20)
        self.wait_ready()
        base = self.rss()
        self.requests.send((path, sql, kwargs))
        deadline = time.monotonic() + timeout_s + max(GRACE_S, timeout_s / 2)
        while not self.replies.poll(POLL_S):
            if not self.alive():
                code = self.process.poll()
                self.kill()
                raise QueryResourceError(f"the query's worker process died (exit status {code}: out of memory "
                                         "or a crash in C code)", budget_bytes=budget, sql=sql)
            if time.monotonic() >= deadline:
                self.kill()
                raise QueryTimeoutError(timeout_s, sql=sql)
            rss = self.rss()
            if base is not None and rss is not None and rss - base > budget:
                self.kill()
                raise QueryResourceError("out of memory: the query's worker grew past the budget",
                                         budget_bytes=budget, sql=sql)
        try:
            return self.replies.recv()
        except (EOFError, OSError) as exc:
            self.kill()
            raise QueryExecutionError(f"the query's worker process failed: {exc}") from exc

    def rss(self) -> int | None:
        try:
            with open(f"/proc/{self.process.pid}/statm", "rb") as fh:
                return int(fh.read().split()[1]) * _PAGE
        except (OSError, ValueError, IndexError):
            return None

    def kill(self) -> None:
        if self.alive():
            self.process.kill()
        self.process.wait(timeout=5)
        self.requests.close()
        self.replies.close()


class _Pool:
    """At most :func:`max_workers` workers; idle ones are reused, a busy or killed one is never handed out."""

    def __init__(self) -> None:
        self._idle: list[_Worker] = []
        self._busy = 0  # workers handed out and not yet given back
        self._free = threading.Condition()

    def take(self, wait_s: float = WAIT_S) -> _Worker:
        """An idle worker, else a new one while under the cap, else wait ``wait_s`` for one (BusyError)."""
        deadline = time.monotonic() + max(0.0, wait_s)
        with self._free:
            while True:
                while self._idle:
                    worker = self._idle.pop()
                    if worker.alive():
                        self._busy += 1
                        return worker
                    worker.kill()
                if self._busy < max_workers():
                    self._busy += 1
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise BusyError(f"all {max_workers()} SQL workers are busy with other queries; try again "
                                    f"shortly (more with {ENV_WORKERS})")
                self._free.wait(left)
        try:
            return _Worker()
        except BaseException:
            self._release()
            raise

    def _release(self) -> None:
        with self._free:
            self._busy -= 1
            self._free.notify()

    def prestart(self) -> None:
        with self._free:
            if self._idle or self._busy >= max_workers():
                return
            self._busy += 1
        self.give_back(_Worker())

    def give_back(self, worker: _Worker) -> None:
        """Return a taken worker: kept when alive (it stays one of the cap), else dropped."""
        with self._free:
            self._busy -= 1
            if worker.alive() and len(self._idle) < max_workers():
                self._idle.append(worker)
                self._free.notify()
                return
            self._free.notify()
        worker.kill()

    def close(self) -> None:
        with self._free:
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.kill()


_POOL = _Pool()
atexit.register(_POOL.close)

def _serve(requests: Pipe, replies: Pipe) -> None:
    """The worker's loop: run each query on a kept connection, send back rows or the error."""
    from kgsql.db.connect import open_database
    from kgsql.db.target import engine_class

    conns: OrderedDict[str, Any] = OrderedDict()
    replies.send(("ready", None))
    while True:
        try:
            path, sql, kwargs = requests.recv()
        except (EOFError, OSError):
            return
        try:
            db: Any = conns.get(path)
            if db is not None:
                conns.move_to_end(path)
            elif not engine_class(path).in_process:
                db = path  # PostgreSQL/DuckDB: the guard runs it on this process's engine for the URL
            else:
                try:
                    db = open_database(path, read_only=True)
                except KgsqlError:
                    db = path  # the guard checks the SQL first, then raises the file's error
                else:
                    conns[path] = db
                    while len(conns) > MAX_CONNECTIONS:
                        conns.popitem(last=False)[1].close()
            outcome: tuple[str, Any] = ("ok", execute_query(db, sql, **kwargs))
        except KgsqlError as exc:
            outcome = ("error", exc)
        except Exception as exc:  # noqa: BLE001 - anything else crosses the pipe as one clear error
            outcome = ("error", QueryExecutionError(f"{type(exc).__name__}: {exc}"))
        try:
            replies.send(outcome)
        except Exception as exc:  # noqa: BLE001 - e.g. a value that does not pickle
            replies.send(("error", QueryExecutionError(f"the result could not be sent back: {exc}")))


if __name__ == "__main__":  # a worker: python -m kgsql.db.isolate READ_FD WRITE_FD
    _serve(Pipe(int(sys.argv[1]), writable=False), Pipe(int(sys.argv[2]), readable=False))
