"""Kill the real embedded graph server in the middle of an ingest transaction.

The previous version of the database must survive intact, and after the
server comes back the next ingest must succeed. This uses its own server so
the session's shared server is not disturbed.
"""
from __future__ import annotations

import os
import signal
import sqlite3
import threading

import pytest

from kgsql.errors import GraphUnavailableError, IngestInProgressError
from kgsql.graph import writer
from kgsql.graph.embedded import ensure_server, stop_server
from kgsql.graph.queries import load_schema
from kgsql.graph.store import GraphStore, Tx
from kgsql.ingest.reader import read_database


def wide_database(path, tables: int, columns: int) -> None:
    conn = sqlite3.connect(path)
    for t in range(tables):
        cols = ", ".join(f"c{c} TEXT" for c in range(columns))
        conn.execute(f"CREATE TABLE t{t} (id INTEGER PRIMARY KEY, {cols})")
        conn.execute(f"INSERT INTO t{t} (id, c0) VALUES (1, 'v{t}')")
    conn.commit()
    conn.close()


@pytest.fixture
def private_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("graph_fault")
    ensure_server(root)
    yield root
    stop_server(root)


def test_kill_server_mid_ingest_keeps_previous_version(private_server, tmp_path, monkeypatch):
    db_path = tmp_path / "victim.sqlite"
    wide_database(db_path, tables=30, columns=12)
    store = GraphStore.open(embedded_root=private_server)
    v1 = read_database(db_path)
    writer.write_schema(store, v1)
    assert load_schema(store, "victim").to_dict() == v1.to_dict()

    conn = sqlite3.connect(db_path)
    conn.executescript("DROP TABLE t3; DROP TABLE t4; ALTER TABLE t0 ADD COLUMN extra TEXT;")
    conn.close()
    v2 = read_database(db_path)

    pid = store.embedded.pid
    real_run = Tx.run
    calls = {"n": 0}

    def run_then_kill(self, name, /, **params):
        result = real_run(self, name, **params)
        calls["n"] += 1
        if name == "columns_upsert":  # tables and columns written, not yet committed
            os.kill(pid, signal.SIGKILL)
        return result

    monkeypatch.setattr(Tx, "run", run_then_kill)
    with pytest.raises(GraphUnavailableError):
        writer.write_schema(store, v2)
    monkeypatch.setattr(Tx, "run", real_run)
    store.close()

    store = GraphStore.open(embedded_root=private_server)  # starts a fresh server on the same files
    assert store.embedded.pid != pid
    assert load_schema(store, "victim").to_dict() == v1.to_dict()
    result = writer.write_schema(store, v2)  # the dead ingest's lock is broken, not waited on
    assert result.changed
    assert load_schema(store, "victim").to_dict() == v2.to_dict()
    store.close()


def test_concurrent_ingest_of_same_database_is_rejected(private_server, tmp_path, monkeypatch):
    db_path = tmp_path / "shared.sqlite"
    wide_database(db_path, tables=3, columns=2)
    schema = read_database(db_path)
    store = GraphStore.open(embedded_root=private_server)
    inside = threading.Event()
    release = threading.Event()
    real_write_all = writer._write_all

    def slow_write_all(tx, schema, digest):
        inside.set()
        release.wait(30)
        return real_write_all(tx, schema, digest)

    monkeypatch.setattr(writer, "_write_all", slow_write_all)
    errors: list[BaseException] = []
    first = threading.Thread(target=lambda: writer.write_schema(store, schema))
    first.start()
    assert inside.wait(30)
    try:
        with pytest.raises(IngestInProgressError, match="another ingest of database 'shared'"):
            writer.write_schema(GraphStore.open(embedded_root=private_server), schema, force=True)
    finally:
        release.set()
        first.join(60)
    assert not errors
    assert load_schema(store, "shared").to_dict() == schema.to_dict()
    store.close()
