"""The shop database both engines' tests use, and how to tell that nothing in it changed."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kgsql.lab.pg_cluster import TempCluster


SHOP_TABLES = [
    "CREATE TABLE customer (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, city VARCHAR, joined DATE)",
    "CREATE TABLE product (code VARCHAR PRIMARY KEY, title VARCHAR, price DECIMAL(8, 2))",
    "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customer (id), "
    "product_code VARCHAR REFERENCES product (code), quantity INTEGER)",
]
SHOP_ROWS = [
    "INSERT INTO customer VALUES (1, 'Ann Lee', 'Oslo', '2021-03-01'), (2, 'Bob Stone', 'Rome', '2022-07-15'), "
    "(3, 'Cai Wu', 'Oslo', NULL)",
    "INSERT INTO product VALUES ('P1', 'Green Tea', 3.50), ('P2', 'Black Coffee', 4.25), ('P3', 'Oat Milk', 2.00)",
    "INSERT INTO orders VALUES (1, 1, 'P1', 2), (2, 1, 'P2', 1), (3, 2, 'P2', 5), (4, 3, 'P3', 1)",
]
#: What a hostile query must never change: one statement that fingerprints every table.
FINGERPRINT = ("SELECT (SELECT count(*) FROM customer), (SELECT count(*) FROM product), (SELECT count(*) FROM orders), "
               "(SELECT sum(quantity) FROM orders), (SELECT string_agg(name, ',' ORDER BY id) FROM customer)")


@dataclass
class PgShop:
    cluster: TempCluster
    database: str
    superuser_url: str
    reader_url: str
    reader_password: str




def file_digest(path: Path) -> str:
    """The bytes of a DuckDB file (and its WAL, if any): a read-only run leaves both as they were."""
    import hashlib

    h = hashlib.sha256(path.read_bytes())
    wal = path.with_name(path.name + ".wal")
    h.update(wal.read_bytes() if wal.exists() else b"-")
    return h.hexdigest()
