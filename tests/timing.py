"""Wall-clock bounds that stretch with the machine's load (issue 31: bounds that load can break are defects).

A few tests must bound time (a timeout that kills, a retry loop that must not retry).
``scaled(seconds)`` multiplies such a bound by the load factor measured once per
test session: a CPU-bound probe's wall time over its CPU time, which is 1 on an
idle core and grows when other processes take the cores. ``KGSQL_TIMING_FACTOR``
sets the factor by hand (never below 1). Speed itself is measured in benchmarks.
"""
from __future__ import annotations

import os
import time
from functools import lru_cache

ENV_FACTOR = "KGSQL_TIMING_FACTOR"


def _probe() -> float:
    """Wall seconds per CPU second of a short pure-Python loop."""
    wall, cpu = time.perf_counter(), time.process_time()
    total = 0
    for i in range(300_000):
        total += i * i % 7
    cpu_s = max(time.process_time() - cpu, 1e-6)
    return (time.perf_counter() - wall) / cpu_s


@lru_cache(maxsize=1)
def load_factor() -> float:
    """How much slower than on an idle machine wall-clock time runs now (>= 1)."""
    given = os.environ.get(ENV_FACTOR, "").strip()
    if given:
        return max(1.0, float(given))
    return max(1.0, sorted(_probe() for _ in range(5))[2])  # the median of five


def scaled(seconds: float) -> float:
    """``seconds`` stretched by the session's load factor."""
    return seconds * load_factor()
