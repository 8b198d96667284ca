"""``python -m kgsql.lab.hostile``: the hardening probe's runaway queries, rerun through the one execution path.

Each query of :data:`HOSTILE` once killed, stalled or bloated the process that
ran it in-process (issue 35). Through :func:`kgsql.db.isolate.execute_isolated`
each must end within 2x its time limit with a one-line error while this
process's resident memory stays within 64 MB of where it started. With
``--service URL --db NAME`` the SQLite queries also go to a running
``kgsql serve`` (``POST /api/sql``), and ``/api/health`` is asked while each
runs: the service must keep answering. Prints a table, writes JSON with
``--out``, exits 1 when a bound is broken.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from kgsql.cli_types import OneLineParser, positive_float
from kgsql.db.budget import rss_bytes
from kgsql.db.isolate import execute_isolated
from kgsql.errors import KgsqlError

#: (engine, label, SQL): SQLite queries need SpatiaLite where they call GEOS.
HOSTILE: Final[tuple[tuple[str, str, str], ...]] = (
    ("sqlite", "FrechetDistance densified 1e-4 (GEOS segfault)",
     "SELECT FrechetDistance(MakeLine(MakePoint(0,0),MakePoint(1,1)), MakeLine(MakePoint(0,1),MakePoint(1,0)), 0.0001)"),
    ("sqlite", "GUnion of 20,000 buffers (uninterruptible final step)",
     "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 20000) "
     "SELECT Area(GUnion(Buffer(MakePoint(n % 100, n / 100), 1, 30))) FROM r"),
    ("sqlite", "instr of 40 KB in 20 MB (one long C call)",
     "SELECT instr(replace(hex(zeroblob(10000000)), '0', 'a'), replace(hex(zeroblob(20000)), '0', 'a') || 'b')"),
    ("sqlite", "LIKE of a 10,000-character pattern on 2 MB",
     "SELECT replace(hex(zeroblob(1000000)), '0', 'ab') LIKE replace(hex(zeroblob(5000)), '0', '%a') || 'c'"),
    ("sqlite", "endless recursive CTE",
     "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"),
    ("duckdb", "string_agg of 6 GB", "SELECT length(string_agg(repeat('x', 1000), ',')) FROM range(6000000)"),
    ("duckdb", "list() of 300 M numbers", "SELECT len(list(range)) FROM range(300000000)"),
    ("duckdb", "cross join of 1e13 rows", "SELECT count(*) FROM range(100000000) a, range(100000) b"),
)
RSS_BOUND: Final = 64 * 2**20


@dataclass
class Outcome:
    surface: str
    label: str
    seconds: float
    limit_s: float
    error: str
    rss_growth_mb: float | None
    health_ok: bool | None = None

    @property
    def within(self) -> bool:
        grew = self.rss_growth_mb is not None and self.rss_growth_mb * 2**20 > RSS_BOUND
        return self.seconds <= 2 * self.limit_s and "\n" not in self.error and not grew and self.health_ok is not False


def _databases(folder: Path) -> dict[str, str]:
    """A small SpatiaLite file and a small DuckDB file to run the queries on."""
    from kgsql.db.connect import load_spatialite, sqlite3

    spatial = folder / "hostile.sqlite"
    conn = sqlite3.connect(str(spatial))
    load_spatialite(conn)
    conn.execute("SELECT InitSpatialMetadata(1)")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
    conn.commit()
    conn.close()
    found = {"sqlite": str(spatial)}
    try:
        import duckdb
    except ImportError:
        return found
    duck = folder / "hostile.duckdb"
    con = duckdb.connect(str(duck))
    con.execute("CREATE TABLE t (id INTEGER)")
    con.close()
    found["duckdb"] = f"duckdb://{duck}"
    return found


def _direct(db: str, sql: str, timeout_s: float) -> str:
    try:
        execute_isolated(db, sql, timeout_s=timeout_s)
    except KgsqlError as exc:
        return str(exc)
    return "(answered)"


def _post(url: str, body: dict[str, Any], timeout_s: float) -> str:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as reply:
            return f"{reply.status} (answered)"
    except urllib.error.HTTPError as exc:
        return f"{exc.code} {json.loads(exc.read() or b'{}').get('error', '')}"
    except OSError as exc:
        return f"no answer: {exc}"


def _healthy_meanwhile(base: str, busy: threading.Event) -> bool:
    """``/api/health`` answers 200 within 2 s, asked every half second while the query runs."""
    while not busy.wait(0.5):
        try:
            with urllib.request.urlopen(base + "/api/health", timeout=2) as reply:
                if reply.status != 200:
                    return False
        except OSError:
            return False
    return True


def run(timeout_s: float, service: str | None, service_db: str | None) -> list[Outcome]:
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="kgsql-hostile-") as tmp:
        dbs = _databases(Path(tmp))
        for engine, label, sql in HOSTILE:
            if engine not in dbs:
                continue
            _direct(dbs[engine], "SELECT 1", timeout_s)  # a worker is up: time the query, not the start
            before, started = rss_bytes(), time.monotonic()
            error = _direct(dbs[engine], sql, timeout_s)
            after = rss_bytes()
            growth = (after - before) / 2**20 if before is not None and after is not None else None
            outcomes.append(Outcome("execute_isolated", f"{engine}: {label}", time.monotonic() - started,
                                    timeout_s, error, growth))
        if service and service_db:
            for engine, label, sql in HOSTILE:
                if engine != "sqlite":
                    continue
                done, health = threading.Event(), {"ok": True}
                watcher = threading.Thread(target=lambda: health.update(ok=_healthy_meanwhile(service, done)))
                watcher.start()
                started = time.monotonic()
                error = _post(service + "/api/sql", {"db": service_db, "sql": sql}, 120)
                done.set()
                watcher.join()
                outcomes.append(Outcome("POST /api/sql", label, time.monotonic() - started, 30.0, error, None,
                                        health["ok"]))
    return outcomes


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m kgsql.lab.hostile", description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeout", type=positive_float, default=5.0, help="each query's time limit (s)")
    parser.add_argument("--service", help="a running kgsql serve, e.g. http://127.0.0.1:8766")
    parser.add_argument("--db", help="an ingested SpatiaLite database of that service")
    parser.add_argument("--out", type=Path, help="write the outcomes as JSON here")
    args = parser.parse_args(argv)
    if bool(args.service) != bool(args.db):
        parser.error("--service and --db go together")
    outcomes = run(args.timeout, args.service, args.db)
    for o in outcomes:
        grew = "" if o.rss_growth_mb is None else f" rss {o.rss_growth_mb:+.0f} MB"
        health = "" if o.health_ok is None else f" health {'ok' if o.health_ok else 'LOST'}"
        print(f"{'ok ' if o.within else 'BAD'} {o.surface:17} {o.seconds:6.2f}s/{o.limit_s:g}s{grew}{health}  "
              f"{o.label}: {o.error[:90]}")
    if args.out:
        args.out.write_text(json.dumps([asdict(o) | {"within": o.within} for o in outcomes], indent=1) + "\n")
    return 0 if all(o.within for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
