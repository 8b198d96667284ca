"""tables.json (+ BIRD description CSVs) -> DatabaseSchema -> empty SQLite -> read back."""
from __future__ import annotations

import json
from pathlib import Path

from kgsql.ingest.tables_json import load_schemas, schema_from_entry, write_empty_sqlite

ENTRY = {
    "db_id": "shop",
    "table_names_original": ["customer", "orders", "sqlite_sequence"],
    "table_names": ["customer", "orders", "sqlite sequence"],
    "column_names_original": [[-1, "*"], [0, "cust_id"], [0, "Cust Name"], [1, "order_id"], [1, "cust_id"],
                              [1, "amt"], [2, "name"], [2, "seq"]],
    "column_names": [[-1, "*"], [0, "customer id"], [0, "customer name"], [1, "order id"], [1, "customer id"],
                     [1, "amount"], [2, "name"], [2, "seq"]],
    "column_types": ["text", "number", "text", "number", "number", "number", "text", "text"],
    "primary_keys": [1, 3],
    "foreign_keys": [[4, 1]],
}


def test_schema_from_entry() -> None:
    s = schema_from_entry(ENTRY)
    assert [t.name for t in s.tables] == ["customer", "orders", "sqlite_sequence"]
    assert s.table("customer").primary_key == ["cust_id"]
    assert s.table("orders").column("amt").description == "amount"  # Spider's readable name kept
    assert s.table("orders").column("amt").type == "REAL"
    assert [(f.table, f.column, f.ref_table, f.ref_column) for f in s.foreign_keys] == [
        ("orders", "cust_id", "customer", "cust_id")]


def test_empty_sqlite_round_trip(tmp_path: Path) -> None:
    from kgsql.ingest.reader import read_database

    s = schema_from_entry(ENTRY)
    path = write_empty_sqlite(s, tmp_path / "shop" / "shop.sqlite")
    back = read_database(path, "shop")
    assert [t.name for t in back.tables] == ["customer", "orders"]  # SQLite's own table is not created
    for t in back.tables:
        orig = s.table(t.name)
        assert [c.name for c in t.columns] == [c.name for c in orig.columns]
        assert [c.type for c in t.columns] == [c.type for c in orig.columns]
        assert t.primary_key == orig.primary_key
        assert t.row_count == 0
    assert back.foreign_keys == s.foreign_keys


def test_bird_descriptions_merged(tmp_path: Path) -> None:
    (tmp_path / "tables.json").write_text(json.dumps([ENTRY]), encoding="utf-8")
    desc = tmp_path / "desc" / "shop" / "database_description"
    desc.mkdir(parents=True)
    (desc / "orders.csv").write_bytes(
        "original_column_name,column_name,column_description,data_format,value_description\n"
        "amt,order amount,total paid in \u20ac,real,\"0 means a free order\"\n".encode("cp1252"))
    s = load_schemas(tmp_path / "tables.json", tmp_path / "desc")["shop"]
    amt = s.table("orders").column("amt")
    assert "order amount" in amt.description and "total paid" in amt.description
    assert amt.value_explanation == "0 means a free order"


def test_column_meanings(tmp_path: Path) -> None:
    from kgsql.ingest.tables_json import apply_column_meanings, load_column_meanings

    (tmp_path / "m.json").write_text(json.dumps({
        "shop|orders|amt": '#"The amount paid, in euro."', "shop|orders|nope": "x", "bad key": "y"}))
    meanings = load_column_meanings(tmp_path / "m.json")
    s = schema_from_entry(ENTRY)
    assert apply_column_meanings(s, meanings) == 1
    assert s.table("orders").column("amt").value_explanation == "The amount paid, in euro."
