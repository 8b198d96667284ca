"""Joins nobody declared: inclusion dependencies found in real SQLite files, and their way into the graph."""
from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from kgsql.ingest.discover import add_discovered_joins, discover_in_file, few_declared, name_score
from kgsql.ingest.reader import read_database


def shop_db(path: Path) -> Path:
    """A shop with no declared foreign keys, a decoy small-integer column and an empty table."""
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE orders (order_id INTEGER PRIMARY KEY, customer_id INTEGER, amount REAL);
        CREATE TABLE products (id INTEGER PRIMARY KEY, title TEXT);
        CREATE TABLE order_items (order_id INTEGER, product_id INTEGER, quantity INTEGER);
        CREATE TABLE reviews (review_id INTEGER PRIMARY KEY, product_id INTEGER, stars INTEGER);
    """)
    con.executemany("INSERT INTO customers VALUES (?, ?)", [(i, f"c{i}") for i in range(1, 41)])
    con.executemany("INSERT INTO products VALUES (?, ?)", [(i, f"p{i}") for i in range(1, 31)])
    con.executemany("INSERT INTO orders VALUES (?, ?, ?)", [(i, 1 + i % 40, i * 1.5) for i in range(1, 101)])
    # quantity holds 1..5: contained in products.id and customers.customer_id, yet no join
    con.executemany("INSERT INTO order_items VALUES (?, ?, ?)",
                    [(1 + i % 100, 1 + i % 30, 1 + i % 5) for i in range(300)])
    con.commit()
    con.close()
    return path


def edges(joins) -> set[str]:  # type: ignore[no-untyped-def]
    return {f"{j.table}.{j.column}->{j.ref_table}.{j.ref_column}" for j in joins}


def test_discovers_the_joins_and_not_the_coincidences(tmp_path: Path) -> None:
    path = shop_db(tmp_path / "shop.sqlite")
    joins = discover_in_file(path, read_database(path, with_stats=False))
    assert edges(joins) == {
        "orders.customer_id->customers.customer_id",
        "order_items.order_id->orders.order_id",
        "order_items.product_id->products.id",
        "reviews.product_id->products.id",  # reviews is empty: the name alone, to a primary key
    }
    by_edge = {f"{j.table}.{j.column}": j for j in joins}
    assert by_edge["orders.customer_id"].coverage == 1.0
    assert by_edge["reviews.product_id"].coverage is None


def test_coverage_below_the_threshold_is_no_join(tmp_path: Path) -> None:
    path = shop_db(tmp_path / "shop.sqlite")
    con = sqlite3.connect(path)
    con.executemany("INSERT INTO orders VALUES (?, ?, ?)", [(1000 + i, 500 + i, 0.0) for i in range(20)])
    con.commit()
    con.close()
    joins = discover_in_file(path, read_database(path, with_stats=False))
    assert "orders.customer_id->customers.customer_id" not in edges(joins)  # 40 of 60 values: not contained


def test_composite_keys_and_one_to_one_direction(tmp_path: Path) -> None:
    path = tmp_path / "college.sqlite"
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE section (course_id TEXT, sec_id INTEGER, semester TEXT, room TEXT,
                              PRIMARY KEY (course_id, sec_id, semester));
        CREATE TABLE takes (student TEXT, course_id TEXT, sec_id INTEGER, semester TEXT, grade TEXT,
                            PRIMARY KEY (student, course_id, sec_id, semester));
        CREATE TABLE school (school_id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE school_details (school_id INTEGER PRIMARY KEY, nickname TEXT);
    """)
    secs = [(f"C{c}", s, sem) for c in range(5) for s in (1, 2) for sem in ("Fall", "Spring")]
    con.executemany("INSERT INTO section VALUES (?, ?, ?, 'r')", secs)
    con.executemany("INSERT INTO takes VALUES (?, ?, ?, ?, 'A')", [(f"s{i}", *secs[i % len(secs)]) for i in range(50)])
    con.executemany("INSERT INTO school VALUES (?, ?)", [(i, f"n{i}") for i in range(1, 7)])
    con.executemany("INSERT INTO school_details VALUES (?, ?)", [(i, f"k{i}") for i in range(1, 7)])
    con.commit()
    con.close()
    found = edges(discover_in_file(path, read_database(path, with_stats=False)))
    assert {"takes.course_id->section.course_id", "takes.sec_id->section.sec_id",
            "takes.semester->section.semester"} <= found
    assert "school_details.school_id->school.school_id" in found
    assert "school.school_id->school_details.school_id" not in found


@pytest.mark.parametrize("column,table,ref,score", [
    ("Singer_ID", "singer", "Singer_ID", 3.0),
    ("stuid", "Student", "StuID", 3.0),
    ("singer_id", "singers", "id", 3.0),
    ("campus", "Campuses", "Id", 2.5),
    ("home_team_id", "team", "id", 2.0),
    ("dst_apid", "airports", "apid", 2.0),
    ("channel", "TV_Channel", "id", 2.0),
    ("product_quantity", "products", "product_id", 0.0),
    ("id", "other", "id", 0.0),  # a bare "id" names nothing in particular
])
def test_name_score(column: str, table: str, ref: str, score: float) -> None:
    assert name_score(column, table, ref) == score


def test_auto_runs_only_where_declared_keys_cannot_connect_the_tables(tmp_path: Path) -> None:
    path = shop_db(tmp_path / "shop.sqlite")
    schema = read_database(path, with_stats=False)
    assert few_declared(schema)
    assert add_discovered_joins(schema, path, "off") == [] and schema.foreign_keys == []
    joins = add_discovered_joins(schema, path, "auto")
    assert len(schema.foreign_keys) == len(joins) == 4
    assert {f.origin for f in schema.foreign_keys} == {"discovered"}
    declared = tmp_path / "declared.sqlite"
    con = sqlite3.connect(declared)
    con.executescript("CREATE TABLE a (id INTEGER PRIMARY KEY);"
                      "CREATE TABLE c (c_id INTEGER PRIMARY KEY);"
                      "CREATE TABLE b (id INTEGER PRIMARY KEY, a_id INTEGER REFERENCES a(id),"
                      "                c_id INTEGER REFERENCES c(c_id));"
                      "CREATE TABLE d (d_id INTEGER PRIMARY KEY, c_id INTEGER REFERENCES c(c_id), a_id INTEGER);"
                      "INSERT INTO a VALUES (1), (2); INSERT INTO c VALUES (1); INSERT INTO b VALUES (1, 1, 1);"
                      "INSERT INTO d VALUES (1, 1, 2);")
    con.close()
    connected = read_database(declared, with_stats=False)
    assert not few_declared(connected)  # 4 tables, 3 declared keys
    assert add_discovered_joins(connected, declared, "auto") == []
    again = read_database(declared, with_stats=False)
    assert edges(add_discovered_joins(again, declared, "on")) == {"d.a_id->a.id"}  # declared ones not repeated


def test_ingest_json_lists_discovered_joins_and_the_graph_keeps_them(cli_env, tmp_path: Path, unique_name) -> None:
    """A user ingests a database without foreign keys: the joins are found, reported and stored."""
    path = shop_db(tmp_path / "shop.sqlite")
    name = unique_name("shop")
    proc = subprocess.run([sys.executable, "-m", "kgsql.ingest", str(path), "--name", name, "--json"],
                          capture_output=True, text=True, env=cli_env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    listed = summary["discovered_joins"][name]
    assert {"from": "orders.customer_id", "to": "customers.customer_id", "coverage": 1.0} in listed
    assert summary["foreign_keys"] == 4
    read_back = subprocess.run(
        [sys.executable, "-c",
         "import json, sys; from kgsql.graph.store import GraphStore; from kgsql.graph.queries import load_schema\n"
         f"with GraphStore.open() as s: print(json.dumps([vars(f) for f in load_schema(s, {name!r}).foreign_keys]))"],
        capture_output=True, text=True, env=cli_env, timeout=300)
    assert read_back.returncode == 0, read_back.stderr
    fks = json.loads(read_back.stdout)
    assert {(f["table"], f["column"], f["origin"]) for f in fks} >= {("orders", "customer_id", "discovered")}
    assert all(f["origin"] == "discovered" for f in fks)
    off = subprocess.run([sys.executable, "-m", "kgsql.ingest", str(path), "--name", name, "--json",
                          "--discover-joins", "off"], capture_output=True, text=True, env=cli_env, timeout=300)
    assert off.returncode == 0, off.stderr
    assert json.loads(off.stdout)["foreign_keys"] == 0


def test_verify_counts_only_the_files_own_keys(cli_env, tmp_path: Path, unique_name) -> None:
    """Discovered joins are kgsql's additions: verifying the graph against the file still matches."""
    path = shop_db(tmp_path / f"{unique_name('shop')}.sqlite")
    ingested = subprocess.run([sys.executable, "-m", "kgsql.ingest", str(path), "--json"],
                              capture_output=True, text=True, env=cli_env, timeout=300)
    assert ingested.returncode == 0, ingested.stderr
    assert json.loads(ingested.stdout)["foreign_keys"] == 4  # all discovered
    verify = subprocess.run([sys.executable, "-m", "kgsql.ingest.verify", str(path)],
                            capture_output=True, text=True, env=cli_env, timeout=300)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "0 mismatch" in verify.stdout
