"""A small shop database whose joins have every origin the graph knows: declared, discovered, mined."""
from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

SCRIPT = """
CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, name TEXT, city TEXT);
CREATE TABLE orders (order_id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(customer_id),
                     status TEXT);
CREATE TABLE payments (payment_id INTEGER PRIMARY KEY, order_id INTEGER, amount REAL);
CREATE TABLE performers (performer_id INTEGER PRIMARY KEY, name TEXT, city TEXT);
INSERT INTO customers VALUES (1, 'Ann', 'Oslo'), (2, 'Bo', 'Rome'), (3, 'Cy', 'Oslo'), (4, 'Di', 'Lima');
INSERT INTO orders VALUES (10, 1, 'shipped'), (11, 1, 'open'), (12, 2, 'shipped'), (13, 3, 'open');
INSERT INTO payments VALUES (100, 10, 5.0), (101, 11, 7.5), (102, 12, 2.0), (103, 13, 1.0), (104, 10, 3.0);
INSERT INTO performers VALUES (7, 'Pia', 'Oslo'), (8, 'Quin', 'Oslo'), (9, 'Rex', 'Rome');
INSERT INTO performers VALUES (17, 'Sam', 'Rome'), (18, 'Tia', 'Lima');
"""
#: The mined join: taught once, the rule miner keeps customers.city = performers.city.
TAUGHT = ("Which customers live where a performer lives?",
          "SELECT DISTINCT customers.name FROM customers JOIN performers ON customers.city = performers.city")


def shop_schema(schema_graph: Any, folder: Path, name: str) -> Any:
    """Ingest the shop (joins discovered from the data too), teach the mined join, and read it back."""
    path = folder / f"{name}.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(SCRIPT)
    conn.commit()
    conn.close()
    schema_graph.ingest(path, name=name, discover_joins="on")
    schema_graph.learn(*TAUGHT, db=name)
    return schema_graph.schema(name)
