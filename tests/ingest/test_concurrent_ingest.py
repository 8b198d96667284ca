"""Two ingests at once: transient graph conflicts are retried, a held lock is the clear lock error.

ArcadeDB refuses a commit that raced another writer with "concurrent change
to the same record. Please retry"; kgsql must retry it, and never show it.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from neo4j.exceptions import Neo4jError

from kgsql.errors import IngestInProgressError
from kgsql.graph import store as store_module
from kgsql.graph import writer
from kgsql.graph.store import is_transient_conflict
from kgsql.ingest.reader import read_database

ARCADE_CONFLICT = ("Slot rebase not possible on page PageId(kgsql/20/0) slot 16 "
                   "(concurrent change to the same record). Please retry the operation")


def conflict(code: str = "Neo.TransientError.Transaction.DeadlockDetected", message: str = ARCADE_CONFLICT) -> Neo4jError:
    return Neo4jError._hydrate_neo4j(code=code, message=message)


@pytest.fixture
def no_backoff(monkeypatch):
    monkeypatch.setattr(store_module.time, "sleep", lambda s: None)


def test_conflicts_are_recognised():
    assert is_transient_conflict(conflict())
    assert is_transient_conflict(conflict("Neo.DatabaseError.General.UnknownError"))  # how some servers wrap it
    assert not is_transient_conflict(conflict("Neo.ClientError.Statement.SyntaxError", "Invalid input 'MTCH'"))
    assert not is_transient_conflict(ValueError("concurrent change"))
    # two ingests MERGE the same new lock node: the loser hits the unique key; run again, it matches
    assert is_transient_conflict(conflict("Neo.DatabaseError.General.UnknownError",
                                          "Error executing Cypher command: MERGE (l:IngestLock ...): Duplicated key "
                                          "[conc_1] found on index 'IngestLock[database]'"))
    assert is_transient_conflict(conflict("Neo.ClientError.Schema.ConstraintValidationFailed",
                                          "Node(12) already exists with label `IngestLock`"))


def test_write_is_retried_after_a_transient_conflict(schema_graph, make_sqlite, unique_name, monkeypatch, no_backoff):
    schema = read_database(make_sqlite(unique_name("retry"), "CREATE TABLE a (id INTEGER PRIMARY KEY);"))
    real = writer._write_all
    calls = {"n": 0}

    def flaky(tx, schema, digest):
        calls["n"] += 1
        if calls["n"] <= 2:
            raise conflict()
        return real(tx, schema, digest)

    monkeypatch.setattr(writer, "_write_all", flaky)
    result = writer.write_schema(schema_graph.store, schema, force=True)
    assert result.changed and calls["n"] == 3
    assert schema_graph.schema(schema.name).table("a") is not None


def test_statement_is_retried_after_a_transient_conflict(schema_graph, monkeypatch, no_backoff):
    store = schema_graph.store
    real_driver = store._driver
    left = {"n": 2}

    class FlakySession:
        def __init__(self, session):
            self._session = session

        def __enter__(self):
            self._session.__enter__()
            return self

        def __exit__(self, *exc):
            return self._session.__exit__(*exc)

        def run(self, query, **params):
            if left["n"]:
                left["n"] -= 1
                raise conflict()
            return self._session.run(query, **params)

    class FlakyDriver:
        def session(self, **kw):
            return FlakySession(real_driver.session(**kw))

    monkeypatch.setattr(store, "_driver", FlakyDriver())
    assert store.run_text("RETURN 1 AS one") == [{"one": 1}]
    assert left["n"] == 0


def test_a_conflict_that_outlasts_the_retries_is_the_lock_error(schema_graph, make_sqlite, unique_name,
                                                               monkeypatch, no_backoff):
    schema = read_database(make_sqlite(unique_name("busy"), "CREATE TABLE a (id INTEGER PRIMARY KEY);"))
    calls = {"n": 0}

    def always(tx, schema, digest):
        calls["n"] += 1
        raise conflict()

    monkeypatch.setattr(writer, "_write_all", always)
    with pytest.raises(IngestInProgressError) as info:
        writer.write_schema(schema_graph.store, schema, force=True)
    assert calls["n"] == store_module.CONFLICT_ATTEMPTS
    text = str(info.value)
    assert "another ingest" in text and "retry when it finishes" in text and "\n" not in text
    assert "Please retry" not in text  # the server's own words stay in the log, not the message
    monkeypatch.undo()  # the lock was released: the next ingest of the database goes through
    assert writer.write_schema(schema_graph.store, schema).changed


def test_three_folder_ingests_at_once(cli_env, make_sqlite, tmp_path, unique_name):
    root = tmp_path / "database"
    names = [unique_name("conc") for _ in range(6)]
    script = "".join(f"CREATE TABLE t{t} (id INTEGER PRIMARY KEY, a TEXT, p_id INTEGER REFERENCES t0(id));"
                     for t in range(5))
    for name in names:
        (root / name).mkdir(parents=True)
        make_sqlite(name, script).rename(root / name / f"{name}.sqlite")
    ingested: set[str] = set()
    for _round in range(2):
        procs = [subprocess.Popen([sys.executable, "-m", "kgsql.ingest", str(root), "--force", "--json"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env)
                 for _ in range(3)]
        for proc in procs:
            out, err = proc.communicate(timeout=300)
            assert "Please retry" not in err and "concurrent change" not in err and "Traceback" not in err, err
            for line in (ln for ln in err.splitlines() if ln.strip()):
                assert line.startswith("kgsql.ingest: error:") and "another ingest of database" in line, err
            summary = json.loads(out)
            assert proc.returncode == (1 if summary["errors"] else 0)
            assert summary["databases"] + len(summary["errors"]) == len(names)
            ingested.update(d["database"] for d in summary["per_database"])
    assert ingested == set(names)


class _RacingStore:
    """A store whose lock statement fails ``failures`` times (another ingest's MERGE won the race)."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0

    def run(self, name, **params):  # type: ignore[no-untyped-def]
        from kgsql.errors import GraphError

        self.calls += 1
        if self.calls <= self.failures:
            raise GraphError("graph query failed: Error executing Cypher command: MERGE (l:IngestLock ...)")
        return [{"token": params["token"], "host": params["host"], "pid": params["pid"]}]


def test_a_raced_lock_statement_is_run_again(monkeypatch):
    from kgsql.graph import writer

    monkeypatch.setattr(writer.time, "sleep", lambda s: None)
    store = _RacingStore(failures=2)
    assert writer._take_lock(store, "db", "tok")["token"] == "tok" and store.calls == 3  # type: ignore[arg-type]
    with pytest.raises(IngestInProgressError, match="another ingest of database 'db'"):
        writer._take_lock(_RacingStore(failures=99), "db", "tok")  # type: ignore[arg-type]
