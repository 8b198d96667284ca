"""Property-based attack on the SQL guard: thousands of hostile statements, no write.

Each generated statement is thrown at the guard on a real SQLite file; the
file's bytes (and the folder around it, for ATTACH / VACUUM INTO / journals)
must be identical afterwards, and only the guard's typed errors may escape.
A second property drives SQLite's authorizer alone on a *writable*
connection, so the authoritative layer is shown to hold without the others.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from guard_helpers import build_plain_db, build_spatial_db, dir_state
from kgsql.db.connect import sqlite3
from kgsql.db.guard import execute_query, make_authorizer, split_statements, validate_query
from kgsql.errors import QueryExecutionError, UnsafeSQLError

WRITES = [
    "INSERT INTO t VALUES (99, 'pwned')",
    "INSERT OR REPLACE INTO t VALUES (1, 'pwned')",
    "INSERT INTO t SELECT a + 100, b FROM t",
    "INSERT INTO t DEFAULT VALUES",
    "INSERT INTO t VALUES (98, 'x') RETURNING *",
    "REPLACE INTO t VALUES (1, 'pwned')",
    "UPDATE t SET b = 'pwned'",
    "UPDATE t SET b = 'x' RETURNING a",
    "UPDATE sqlite_master SET sql = 'x'",
    "DELETE FROM t",
    "DELETE FROM t RETURNING *",
    "DROP TABLE t",
    "DROP INDEX t_b",
    "DROP VIEW big_orders",
    "ALTER TABLE t ADD COLUMN c",
    "ALTER TABLE t RENAME TO t2",
    "ALTER TABLE t RENAME COLUMN b TO c",
    "CREATE TABLE pwn (x)",
    "CREATE TEMP TABLE pwn (x)",
    "CREATE TABLE pwn AS SELECT * FROM t",
    "CREATE INDEX pwn ON t(a)",
    "CREATE VIEW pwn AS SELECT 1",
    "CREATE TRIGGER pwn AFTER INSERT ON t BEGIN DELETE FROM t; END",
    "CREATE VIRTUAL TABLE pwn USING fts5(x)",
    "ATTACH DATABASE '{dir}/pwn.db' AS pwn",
    "ATTACH '{dir}/pwn.db' AS pwn",
    "ATTACH ':memory:' AS pwn",
    "DETACH pwn",
    "PRAGMA writable_schema = 1",
    "PRAGMA writable_schema=ON",
    "PRAGMA query_only = 0",
    "PRAGMA journal_mode = DELETE",
    "PRAGMA journal_mode = WAL",
    "PRAGMA user_version = 7",
    "PRAGMA main.application_id = 1",
    "VACUUM",
    "VACUUM INTO '{dir}/pwn.db'",
    "REINDEX",
    "REINDEX t",
    "ANALYZE",
    "BEGIN",
    "BEGIN IMMEDIATE",
    "COMMIT",
    "END",
    "ROLLBACK",
    "SAVEPOINT s",
    "RELEASE s",
    "SELECT load_extension('mod_spatialite')",
    "SELECT load_extension('{dir}/pwn')",
    "SELECT writefile('{dir}/pwn.txt', 'x')",
    "SELECT readfile('/etc/passwd')",
    "SELECT fts3_tokenizer('simple')",
    "SELECT edit('x')",
    "SELECT * INTO pwn FROM t",
]
CTE_WRITES = [w for w in WRITES if w.split()[0] in ("INSERT", "REPLACE", "UPDATE", "DELETE")]
BENIGN = [
    "SELECT 1",
    "SELECT * FROM t",
    "SELECT ';'",
    "SELECT 'x;y' AS s",
    "SELECT a FROM t WHERE b = 'semi; colon'",
    "SELECT count(*) FROM users",
    "WITH c AS (SELECT 1 AS n) SELECT n FROM c",
    "SELECT 1 UNION SELECT 2",
]
WHITESPACE = [" ", "  ", "\t", "\n", "\r\n", " /**/ ", "/* ; */", " -- ;\n", "\x0c"]


def _case(draw: st.DrawFn, text: str) -> str:
    mode = draw(st.sampled_from(["keep", "upper", "lower", "random"]))
    if mode == "upper":
        return text.upper()
    if mode == "lower":
        return text.lower()
    if mode == "random":
        flips = draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
        return "".join(c.swapcase() if f else c for c, f in zip(text, flips))
    return text


def _spaces(draw: st.DrawFn, text: str) -> str:
    """Replace each single space by some whitespace or an inline comment."""
    parts = text.split(" ")
    out = parts[0]
    for part in parts[1:]:
        out += draw(st.sampled_from(WHITESPACE)) + part
    return out


@st.composite
def hostile_sql(draw: st.DrawFn) -> tuple[str, bool]:
    """A statement and whether its write part is live code (not inside a string or comment).

    Case and whitespace are varied inside the write and the benign part; the
    glue between them is fixed so the ``live`` flag stays true.
    """
    write = _spaces(draw, _case(draw, draw(st.sampled_from(WRITES))))
    benign = _spaces(draw, _case(draw, draw(st.sampled_from(BENIGN))))
    cte_write = _spaces(draw, _case(draw, draw(st.sampled_from(CTE_WRITES))))
    shape = draw(
        st.sampled_from(
            [
                "plain", "stacked", "stacked_rev", "cte", "block_comment_hides_select",
                "line_comment_hides_select", "comment_then_stack", "backslash_string",
                "string_holds_write", "comment_holds_write", "subquery", "many_semicolons",
                "stack_three", "trailing_comment_stack", "unterminated_comment",
            ]
        )
    )
    live = True
    if shape == "plain":
        sql = write
    elif shape == "stacked":
        sql = f"{benign}; {write}"
    elif shape == "stacked_rev":
        sql = f"{write}; {benign}"
    elif shape == "cte":
        sql = f"WITH x AS ({benign}) {cte_write}"
    elif shape == "block_comment_hides_select":
        sql = f"/* {benign} */ {write}"
    elif shape == "line_comment_hides_select":
        # the comment must hide all of the benign query: a multi-line one would leave e.g. "SELECT 2" before
        # the write, and "SELECT 2\nVACUUM" is a harmless query with the alias VACUUM
        sql = f"-- {' '.join(benign.split())}\n{write}"
    elif shape == "comment_then_stack":
        sql = f"{benign} /* ; */ ; {write}"
    elif shape == "backslash_string":
        sql = f"SELECT 'a\\'; {write}; --'"
    elif shape == "string_holds_write":
        sql, live = f"SELECT '{write.replace(chr(39), chr(39) * 2)}; x'", False
    elif shape == "comment_holds_write":
        sql, live = f"{benign} -- ; {write}", False
    elif shape == "subquery":
        # keywords such as VACUUM are valid names in a FROM clause: not always a write
        sql, live = f"SELECT * FROM ({write})", False
    elif shape == "many_semicolons":
        sql = f";;{benign};;;{write};;"
    elif shape == "stack_three":
        sql = f"{benign}; {benign}; {write}"
    elif shape == "trailing_comment_stack":
        sql = f"{benign} --\n; {write}"
    else:  # unterminated_comment: everything after /* is a comment in SQLite
        sql, live = f"{benign} /* {write}", False
    return sql, live


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_plain_db(tmp_path_factory.mktemp("victim") / "victim.sqlite")


@pytest.fixture(scope="module")
def spatial_target(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_spatial_db(tmp_path_factory.mktemp("spatial_victim") / "victim.sqlite")


def _attack(db: Path, sql: str) -> None:
    before = dir_state(db.parent)
    try:
        execute_query(db, sql.replace("{dir}", str(db.parent)), timeout_s=2.0, max_rows=20)
    except (UnsafeSQLError, QueryExecutionError):
        pass
    assert dir_state(db.parent) == before, f"guard let a write through: {sql!r}"


PROPERTY = settings(
    max_examples=1500,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@PROPERTY
@given(hostile_sql())
def test_hostile_sql_never_writes(target: Path, case: tuple[str, bool]) -> None:
    sql, live = case
    if live:
        with pytest.raises(UnsafeSQLError):
            validate_query(sql.replace("{dir}", str(target.parent)))
    _attack(target, sql)


@settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_sql())
def test_hostile_sql_never_writes_spatialite(spatial_target: Path, case: tuple[str, bool]) -> None:
    _attack(spatial_target, case[0])


@settings(max_examples=1000, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_sql())
def test_authorizer_alone_never_writes(target: Path, case: tuple[str, bool]) -> None:
    """Layer 3 only: no static checks, a writable autocommit connection, every piece run."""
    before = dir_state(target.parent)
    conn = sqlite3.connect(str(target), isolation_level=None)
    conn.set_authorizer(make_authorizer())
    try:
        for piece in split_statements(case[0].replace("{dir}", str(target.parent))):
            try:
                conn.execute(piece).fetchmany(5)
            except (sqlite3.Error, sqlite3.Warning):
                pass
    finally:
        conn.close()
    assert dir_state(target.parent) == before, f"authorizer let a write through: {case[0]!r}"


@settings(max_examples=500, deadline=None, database=None)
@given(st.text(max_size=80), st.sampled_from(["", "SELECT ", "WITH x AS (SELECT 1) ", "SELECT 1; "]))
def test_garbage_only_raises_typed_errors(target: Path, text: str, prefix: str) -> None:
    _attack(target, prefix + text)
