"""A throwaway PostgreSQL server: its own data folder, a private port, removed when done.

The tests, the cross-engine check and the PostGIS example need a real
server without touching any the machine already runs. ``initdb`` refuses to
run as root, so as root the cluster belongs to the ``postgres`` user (the
Debian package's) and its commands run through ``runuser``; otherwise it
belongs to whoever runs it. The superuser's password and a SELECT-only role
(:meth:`TempCluster.create_reader`) let tests use password logins, as users
do. The superuser sets up; generated SQL runs as the reader, since kgsql
refuses a privileged role (docs/engines.md, "The role kgsql runs as").

``python -m kgsql.lab.pg_cluster`` starts one and prints its URL until
Ctrl-C (for trying kgsql against PostgreSQL by hand).
"""
from __future__ import annotations

import glob
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from kgsql.errors import KgsqlError

__all__ = ["ClusterError", "TempCluster", "postgres_bindir"]


class ClusterError(KgsqlError):
    """The throwaway server could not be set up (binaries missing, initdb or start failed)."""


def postgres_bindir() -> Path | None:
    """The folder of ``initdb``/``pg_ctl``: ``pg_config --bindir``, else Debian's layout, else None."""
    candidates: list[str] = []
    try:
        out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, timeout=10)
        if out.returncode == 0:
            candidates.append(out.stdout.strip())
    except (OSError, subprocess.SubprocessError):
        pass
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for folder in candidates:
        if folder and (Path(folder) / "initdb").is_file() and (Path(folder) / "pg_ctl").is_file():
            return Path(folder)
    return None


def has_postgis(bindir: Path) -> bool:
    """True when PostGIS's extension files are installed for this server version."""
    return Path(f"/usr/share/postgresql/{bindir.parent.name}/extension/postgis.control").is_file()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class TempCluster:
    """One PostgreSQL server under a temp folder, on 127.0.0.1 and a free port.

    Use as a context manager; ``url(db, user, password)`` names a database on
    it; :meth:`sql` runs statements as the superuser.
    """

    superuser = "postgres"

    def __init__(self, bindir: Path | None = None) -> None:
        found = bindir or postgres_bindir()
        if found is None:
            raise ClusterError("PostgreSQL server binaries not found (pg_config --bindir; Debian: postgresql-15)")
        self.bindir = found
        self.password = secrets.token_urlsafe(12)
        self.port = _free_port()
        self.root = Path(tempfile.mkdtemp(prefix="kgsql-pg-"))
        self.data = self.root / "data"
        self._as_root = os.geteuid() == 0
        self.postgis = has_postgis(found)

    # ------------------------------------------------------------------ lifecycle

    def _command(self, *args: str) -> list[str]:
        return (["runuser", "-u", "postgres", "--"] if self._as_root else []) + list(args)

    def _run(self, *args: str, timeout: float = 120) -> None:
        done = subprocess.run(self._command(*args), capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            raise ClusterError(f"{Path(args[0]).name} failed: {' | '.join(tail)}")

    def start(self) -> TempCluster:
        pwfile = self.root / "pw"
        pwfile.write_text(self.password + "\n", encoding="utf-8")
        if self._as_root:
            shutil.chown(self.root, "postgres", "postgres")
            shutil.chown(pwfile, "postgres", "postgres")
        pwfile.chmod(0o600)
        self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-U", self.superuser, "--auth=scram-sha-256",
                  f"--pwfile={pwfile}", "--no-sync", "-E", "UTF8", "--locale=C")
        pwfile.unlink()
        options = (f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
                   f"-c synchronous_commit=off -c full_page_writes=off -c max_connections=40")
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.root / "log"),
                  "-w", "-t", "60", "start")
        return self

    def stop(self) -> None:
        if self.data.is_dir():
            try:
                self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop",
                          timeout=60)
            except (ClusterError, subprocess.SubprocessError):
                pass
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> TempCluster:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ use

    def url(self, database: str = "postgres", user: str | None = None, password: str | None = None) -> str:
        """``postgresql://user:password@127.0.0.1:port/database`` (the superuser by default)."""
        user = user or self.superuser
        password = self.password if password is None and user == self.superuser else password
        auth = f"{user}:{password}" if password else user
        return f"postgresql://{auth}@127.0.0.1:{self.port}/{database}"

    def sql(self, *statements: str, database: str = "postgres") -> list[Any]:
        """Run statements as the superuser (autocommit); the rows of the last one, if any."""
        import psycopg

        rows: list[Any] = []
        with psycopg.connect(self.url(database), autocommit=True) as conn:
            for statement in statements:
                cursor = conn.execute(statement)
                rows = cursor.fetchall() if cursor.description else []
        return rows

    def create_database(self, name: str, *, postgis: bool = False) -> str:
        """A new database (with the PostGIS extension when asked); its superuser URL."""
        self.sql(f'CREATE DATABASE "{name}"')
        if postgis:
            self.sql("CREATE EXTENSION postgis", database=name)
        return self.url(name)

    def create_reader(self, database: str, user: str = "kg_reader", password: str | None = None,
                      schemas: tuple[str, ...] = ("public",)) -> str:
        """A login role that may only read the tables of ``database``'s ``schemas`` (docs/engines.md's
        recipe); its URL."""
        password = password or secrets.token_urlsafe(12)
        self.sql(f"DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{user}') THEN "
                 f"CREATE ROLE {user} LOGIN PASSWORD '{password}'; ELSE ALTER ROLE {user} PASSWORD '{password}'; "
                 f"END IF; END $$")
        grants = [statement for schema in schemas for statement in (
            f'GRANT USAGE ON SCHEMA "{schema}" TO {user}',
            f'GRANT SELECT ON ALL TABLES IN SCHEMA "{schema}" TO {user}',
            f'ALTER DEFAULT PRIVILEGES IN SCHEMA "{schema}" GRANT SELECT ON TABLES TO {user}')]
        self.sql(f'GRANT CONNECT ON DATABASE "{database}" TO {user}', *grants,
                 f"ALTER ROLE {user} SET default_transaction_read_only = on", database=database)
        return self.url(database, user, password)


def main() -> int:  # pragma: no cover - an interactive helper
    import signal

    def stop(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt  # `kill` (SIGTERM) removes the server as Ctrl-C does

    signal.signal(signal.SIGTERM, stop)
    try:
        with TempCluster() as cluster:
            print(f"PostgreSQL on {cluster.url()} (PostGIS {'available' if cluster.postgis else 'missing'}); "
                  f"Ctrl-C or kill stops and removes it", flush=True)
            print(f"SELECT-only role for kgsql: {cluster.create_reader('postgres')}", flush=True)
            while True:
                time.sleep(3600)
    except KeyboardInterrupt:
        return 0
    except ClusterError as exc:
        print(f"kgsql.lab.pg_cluster: error: {exc}")
        return 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
