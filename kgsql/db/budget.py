"""Memory and time enforcement for one guarded query (defaults in ``docs/limits.md``).

SQLite stops a statement only between VM instructions, and SpatiaLite/GEOS
allocate outside SQLite's heap, so no single mechanism bounds a query: this
module holds the ones :func:`kgsql.db.guard.execute_query` combines.

* **time** -- ``timeout_s``: a progress handler checks the deadline every
  :data:`kgsql.db.guard.PROGRESS_STEPS` VM instructions, and a
  :class:`Watchdog` thread calls ``conn.interrupt()`` at the deadline; values
  are capped in size (:func:`harden_for_query`), so a single
  ``randomblob``/``zeroblob``/``printf`` call cannot run long, and
  ``ST_Buffer``'s segment count is bounded at validation.
* **memory** -- ``memory_mb`` (default :data:`kgsql.db.guard.MEMORY_MB`, split
  by the ``*_SHARE`` constants into a :class:`Budget`): SQLite's heap may
  grow by an eighth of it (``sqlite3_hard_heap_limit64``; this limit is
  PROCESS-WIDE in SQLite, so :func:`heap_acquire` raises it by each running
  guarded query's share and :func:`heap_release` restores it when the last
  one ends: other SQLite work in the process at the same time counts
  against it); no value may exceed a sixteenth of it (``SQLITE_LIMIT_LENGTH``,
  per connection); the fetched rows (:func:`row_bytes`) may take
  ``max_bytes`` (default an eighth of it) before fetching stops and the
  result is marked truncated; and the watchdog interrupts the query when the
  process's memory has grown by a quarter of it (memory SpatiaLite/GEOS take
  with malloc, outside SQLite's heap; :class:`MemoryGrowth` measures the whole
  process, so concurrent work counts too), leaving the rest for what C code
  allocates before it stops.

Exhaustion (SQLite's "out of memory", "string or blob too big", Python's
MemoryError, the watchdog) is raised as
:class:`~kgsql.db.sql_errors.QueryResourceError`.

Limits: one C call that never returns to SQLite's VM (a GEOS union or
buffer over a large input, e.g. the final step of ``GUnion`` over thousands
of rows, which SQLite runs even after an interrupt; RTTOPO and PROJ calls;
``instr``/``LIKE`` on megabyte strings, which are quadratic) can still
outlast the timeout and, for GEOS, allocate past the budget in-process;
:mod:`kgsql.db.isolate` runs generated SQL in a worker process that is
killed past either bound. GEOS's own
interrupt flag is deliberately not used: GEOS 3.11's robust overlay catches
the interrupt and retries with snap-rounding, which turned a 1.8 s union
into 240 s. PRAGMA temp_store=FILE is ignored by SQLite builds with
SQLITE_TEMP_STORE=3 (pysqlite3-binary), where large sorts and temporary
b-trees stay in memory and fail against the heap limit instead of spilling.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Literal

from kgsql.db.connect import (
    SQLITE_LIMIT_LENGTH,
    SQLITE_LIMIT_LIKE_PATTERN_LENGTH,
    Connection,
    set_defensive,
    set_limit,
    sqlite3,
    sqlite_heap_limits,
    sqlite_memory_used,
)

__all__ = [
    "HEAP_SHARE",
    "LIKE_PATTERN_LIMIT",
    "RESULT_SHARE",
    "VALUE_SHARE",
    "WATCHDOG_POLL_S",
    "WATCH_SHARE",
    "Budget",
    "MemoryGrowth",
    "Watchdog",
    "harden_for_query",
    "heap_acquire",
    "heap_release",
    "malloc_in_use",
    "row_bytes",
    "rss_bytes",
]

#: Shares of the budget. The watchdog interrupts a query once the process's
#: resident memory has grown by WATCH_SHARE of it; the rest is headroom for what
#: C code allocates before it returns to SQLite's VM (SQLite runs an interrupted
#: aggregate's final step, which for SpatiaLite's Collect/GUnion copies all it
#: gathered, ~3x; a GEOS call runs to its end). SQLite's heap and
#: the fetched rows each get an eighth (together the watchdog's share), one
#: value a sixteenth.
WATCH_SHARE: Final = 1 / 4
HEAP_SHARE: Final = 1 / 8
RESULT_SHARE: Final = 1 / 8
VALUE_SHARE: Final = 1 / 16
#: Longest LIKE/GLOB pattern (SQLITE_LIMIT_LIKE_PATTERN_LENGTH; SQLite's default is 50,000).
LIKE_PATTERN_LIMIT: Final = 10_000
#: How often the watchdog thread looks at the clock and the process's memory.
WATCHDOG_POLL_S: Final = 0.01


@dataclass(frozen=True)
class Budget:
    """One query's memory budget, split into the parts each mechanism enforces (bytes)."""

    total: int   # the budget
    watch: int   # growth of the process's resident memory that trips the watchdog
    heap: int    # growth of SQLite's heap (hard heap limit)
    result: int  # fetched rows (Python objects)
    value: int   # one string or blob (SQLITE_LIMIT_LENGTH)

    @classmethod
    def of(cls, memory_mb: float, max_bytes: int | None) -> Budget:
        total = int(memory_mb * 2**20)

        def share(x: float) -> int:
            return max(1, int(total * x))
        result = share(RESULT_SHARE) if max_bytes is None else max_bytes
        return cls(total, share(WATCH_SHARE), share(HEAP_SHARE), result, share(VALUE_SHARE))


_heap_lock = threading.Lock()
_heap_shares: dict[int, int] = {}  # id of a running query -> its SQLite heap allowance
_heap_saved: tuple[int, int] | None = None  # (hard, soft) limits before the first of them
_heap_base = 0  # sqlite3_memory_used() when the first of them started


def _heap_set(limit: int) -> None:
    saved_hard = _heap_saved[0] if _heap_saved else 0
    sqlite_heap_limits(min(limit, saved_hard) if saved_hard > 0 else limit)


def heap_acquire(token: int, allowance: int) -> bool:
    """Raise SQLite's process-wide hard heap limit by ``allowance`` for one query.

    The limit is the memory SQLite held when the first of the queries running
    now started, plus the allowances of all of them; a stricter limit the
    application set itself is kept. False when the limit cannot be set.
    """
    global _heap_saved, _heap_base
    with _heap_lock:
        if not _heap_shares:
            base = sqlite_memory_used()
            if base is None:
                return False
            _heap_base = base
            _heap_saved = sqlite_heap_limits()
        _heap_shares[token] = allowance
        _heap_set(_heap_base + sum(_heap_shares.values()))
        return True


def heap_release(token: int) -> None:
    global _heap_saved
    with _heap_lock:
        if _heap_shares.pop(token, None) is None:
            return
        if _heap_shares:
            _heap_set(_heap_base + sum(_heap_shares.values()))
        elif _heap_saved is not None:
            sqlite_heap_limits(*_heap_saved)
            _heap_saved = None


_PAGE_SIZE: Final = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def rss_bytes() -> int | None:
    """Resident memory of this process (Linux /proc), or None where unknown."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE_SIZE
    except (OSError, ValueError, IndexError):
        return None


class _MallInfo2(ctypes.Structure):
    """glibc's ``struct mallinfo2`` (glibc 2.33+)."""

    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]


def _load_mallinfo2() -> Callable[[], _MallInfo2] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        fn = libc.mallinfo2
    except (OSError, AttributeError):  # not glibc, or a glibc older than 2.33
        return None
    fn.restype = _MallInfo2
    fn.argtypes = []
    return fn


_mallinfo2 = _load_mallinfo2()


def malloc_in_use() -> int | None:
    """Bytes C code holds from malloc now (glibc: chunks in use plus mmapped blocks), or None off glibc.

    Resident memory misses a query that reuses memory freed earlier: the
    allocator keeps freed pages resident, so the query can gather a lot before
    the RSS grows. malloc's own count grows with every byte it hands out.
    """
    if _mallinfo2 is None:
        return None
    info = _mallinfo2()
    return int(info.uordblks + info.hblkhd)


class MemoryGrowth:
    """How much more memory the process holds than when this was made (bytes).

    The larger of two growths: resident memory (every allocator, Python's
    included) and malloc's bytes in use (exact for C code, blind to memory
    freed and reused). ``available`` is False where neither can be read.
    """

    def __init__(self) -> None:
        self._rss0 = rss_bytes()
        self._malloc0 = malloc_in_use()

    @property
    def available(self) -> bool:
        return self._rss0 is not None or self._malloc0 is not None

    def __call__(self) -> int:
        grown = 0
        if self._rss0 is not None and (rss := rss_bytes()) is not None:
            grown = rss - self._rss0
        if self._malloc0 is not None and (used := malloc_in_use()) is not None:
            grown = max(grown, used - self._malloc0)
        return grown


class Watchdog:
    """A thread that interrupts the query at its deadline or when memory grows past ``limit`` bytes.

    ``conn.interrupt()`` is safe from another thread; it stops the VM at its
    next instruction. It fires once, and never after :meth:`stop`.
    """

    def __init__(self, conn: Connection, deadline: float, growth: MemoryGrowth, limit: int) -> None:
        self.conn = conn
        self.deadline = deadline
        self.growth = growth if growth.available else None  # None: only the deadline is watched
        self.limit = limit
        self.fired: Literal["timeout", "memory"] | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="kgsql-query-watchdog", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        while True:
            left = self.deadline - time.monotonic()
            wait = min(WATCHDOG_POLL_S, left) if self.growth is not None else left
            if self._stop.wait(max(0.0, wait)):
                return
            reason: Literal["timeout", "memory"] | None = None
            if time.monotonic() >= self.deadline:
                reason = "timeout"
            elif self.growth is not None and self.growth() > self.limit:
                reason = "memory"
            if reason is None:
                continue
            with self._lock:
                if self._stop.is_set():
                    return
                self.fired = reason
                try:
                    self.conn.interrupt()
                except sqlite3.ProgrammingError:  # pragma: no cover - connection closed under us
                    return
            return

    def stop(self) -> None:
        """Stop for good (idempotent): once this returns, no interrupt will come."""
        with self._lock:
            self._stop.set()
        if self._thread.ident is not None:
            self._thread.join()


def row_bytes(row: tuple[Any, ...]) -> int:
    """Memory one fetched row holds in Python (the tuple and each value)."""
    return sys.getsizeof(row) + sum(map(sys.getsizeof, row))


def harden_for_query(conn: Connection, budget: Budget, trust_schema: bool) -> Callable[[], None]:
    """Per-query connection settings; returns the function that restores them."""
    trusted = conn.execute("PRAGMA trusted_schema").fetchone()[0]
    conn.execute(f"PRAGMA trusted_schema = {'ON' if trust_schema else 'OFF'}")
    defensive = set_defensive(conn, True)
    length = set_limit(conn, SQLITE_LIMIT_LENGTH, budget.value)
    like = set_limit(conn, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, LIKE_PATTERN_LIMIT)

    def restore() -> None:
        if like is not None:
            set_limit(conn, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, like)
        if length is not None:
            set_limit(conn, SQLITE_LIMIT_LENGTH, length)
        if defensive is False:
            set_defensive(conn, False)
        if bool(trusted) != trust_schema:
            conn.execute(f"PRAGMA trusted_schema = {'ON' if trusted else 'OFF'}")

    return restore
