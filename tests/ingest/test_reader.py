"""Reading SQLite/SpatiaLite files into DatabaseSchema: counts, keys, stats, geometry."""
from __future__ import annotations

import pytest

from kgsql.errors import DatabaseFileError, InputError
from kgsql.ingest.reader import find_databases, read_database, require_databases

SHOP = """
CREATE TABLE Customer (id INTEGER PRIMARY KEY, name TEXT, city TEXT, joined DATE);
CREATE TABLE orders (
    order_id INTEGER PRIMARY KEY,
    customer_id INTEGER REFERENCES customer(ID),      -- case differs from the target
    item_id INTEGER REFERENCES item,                  -- no column: the target's PK
    ghost_id INTEGER REFERENCES missing_table(id),    -- dangling: table absent
    amount REAL
);
CREATE TABLE item (item_id INTEGER PRIMARY KEY, label TEXT);
INSERT INTO Customer VALUES (1, 'Ann', 'Oslo', '2020-01-05'), (2, 'Bo', 'Oslo', '2021-03-01'),
                            (3, 'Cy', 'Rome', NULL);
INSERT INTO item VALUES (1, 'pen'), (2, 'ink');
INSERT INTO orders VALUES (1, 1, 1, NULL, 9.5), (2, 1, 2, NULL, 3.0), (3, 2, 1, NULL, 12.25);
"""


def test_tables_columns_and_keys(make_sqlite):
    schema = read_database(make_sqlite("shop", SHOP))
    assert schema.name == "shop"
    assert [t.name for t in schema.tables] == ["Customer", "orders", "item"]
    orders = schema.table("ORDERS")  # case-insensitive like SQLite
    assert [c.name for c in orders.columns] == ["order_id", "customer_id", "item_id", "ghost_id", "amount"]
    assert orders.primary_key == ["order_id"]
    assert orders.row_count == 3
    fks = {(fk.table, fk.column, fk.ref_table, fk.ref_column) for fk in schema.foreign_keys}
    assert fks == {("orders", "customer_id", "Customer", "id"), ("orders", "item_id", "item", "item_id")}
    assert [(fk.table, fk.ref_table) for fk in schema.dangling_foreign_keys] == [("orders", "missing_table")]


def test_statistics_and_value_examples(make_sqlite):
    schema = read_database(make_sqlite("shop", SHOP))
    city = schema.table("Customer").column("city")
    assert city.value_examples[0] == "Oslo"  # most frequent first
    assert city.stats.distinct_count == 2
    assert city.stats.null_fraction == 0.0
    amount = schema.table("orders").column("amount")
    assert (amount.stats.min, amount.stats.max) == (3.0, 12.25)
    joined = schema.table("Customer").column("joined")
    assert (joined.stats.min, joined.stats.max) == ("2020-01-05", "2021-03-01")
    assert joined.stats.null_fraction == pytest.approx(1 / 3)
    assert schema.table("orders").column("ghost_id").stats.null_fraction == 1.0


def test_blank_strings_are_not_value_examples(make_sqlite):
    schema = read_database(make_sqlite("blank", "CREATE TABLE t (kind TEXT);"
                                       "INSERT INTO t VALUES (''), (''), (''), ('  '), ('river'), (NULL);"))
    assert schema.table("t").column("kind").value_examples == ["river"]


def test_spatial_database_geometry_columns(example_db):
    schema = read_database(example_db)
    assert schema.is_spatial
    names = {t.name for t in schema.tables}
    assert names == {"provinces", "cities", "rivers", "river_cities"}  # no SpatiaLite internals
    shape = schema.table("provinces").column("Shape")
    assert shape.spatial is not None
    assert (shape.spatial.geometry_type, shape.spatial.srid) == ("POLYGON", 4326)
    assert shape.spatial.extent == [8.0, 50.0, 14.0, 53.5]
    assert schema.table("cities").column("Location").spatial.geometry_type == "POINT"
    assert schema.table("rivers").column("Shape").spatial.geometry_type == "LINESTRING"
    assert not schema.table("cities").column("name").is_spatial


def test_bad_files_raise_clear_errors(tmp_path):
    with pytest.raises(DatabaseFileError, match="not found"):
        read_database(tmp_path / "nope.sqlite")
    text = tmp_path / "notes.sqlite"
    text.write_text("hello, I am not a database")
    with pytest.raises(DatabaseFileError, match="not a SQLite database"):
        read_database(text)
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    with pytest.raises(DatabaseFileError, match="empty"):
        read_database(empty)


def test_truncated_database_is_reported_corrupt(make_sqlite):
    path = make_sqlite("big", "CREATE TABLE t (a TEXT);" + "".join(
        f"INSERT INTO t VALUES ('{'x' * 200}{i}');" for i in range(400)))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    with pytest.raises(DatabaseFileError, match="corrupt|malformed|not a database"):
        read_database(path)


def test_find_databases_spider_layout(tmp_path, make_sqlite):
    for db in ("b_db", "a_db"):
        (tmp_path / "database" / db).mkdir(parents=True)
        src = make_sqlite(db, "CREATE TABLE t (x INT);")
        src.rename(tmp_path / "database" / db / f"{db}.sqlite")
    found = find_databases(tmp_path / "database")
    assert [p.stem for p in found] == ["a_db", "b_db"]


def test_database_corrupt_past_its_header_is_a_database_file_error(make_corrupt_sqlite):
    path = make_corrupt_sqlite("deepcorrupt")
    with pytest.raises(DatabaseFileError, match="deepcorrupt.sqlite.*malformed"):
        read_database(path)


def test_sample_rows_must_be_positive(make_sqlite):
    with pytest.raises(InputError, match="sample_rows"):
        read_database(make_sqlite("shop", SHOP), sample_rows=-5)


def test_find_databases_follows_symlinked_folders(tmp_path, make_sqlite):
    real = tmp_path / "real"
    for db in ("a_db", "b_db"):
        (real / db).mkdir(parents=True)
        make_sqlite(db, "CREATE TABLE t (x INT);").rename(real / db / f"{db}.sqlite")
    (tmp_path / "root_link").symlink_to(real, target_is_directory=True)
    assert [p.stem for p in find_databases(tmp_path / "root_link")] == ["a_db", "b_db"]
    mixed = tmp_path / "mixed"  # a folder of links to database folders (a hand-picked Spider subset)
    mixed.mkdir()
    (mixed / "a_db").symlink_to(real / "a_db", target_is_directory=True)
    (mixed / "b_db").symlink_to(real / "b_db", target_is_directory=True)
    (real / "a_db" / "loop").symlink_to(real, target_is_directory=True)  # a cycle must not hang or repeat
    found = find_databases(mixed)
    assert [p.stem for p in found] == ["a_db", "b_db"]
    assert found[0] == mixed / "a_db" / "a_db.sqlite"


def test_require_databases_refuses_missing_and_empty(tmp_path):
    with pytest.raises(DatabaseFileError, match="path not found"):
        require_databases(tmp_path / "missing")
    with pytest.raises(DatabaseFileError, match=r"no databases \(\*\.sqlite"):
        require_databases(tmp_path)
