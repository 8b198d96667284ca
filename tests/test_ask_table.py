"""The result table `kgsql ask` and `kgsql sql` print: cells as the sqlite3 shell shows them (a real to 15
significant digits, so an AVG reads 11.35 and not its binary float's 11.350000000000001)."""
from __future__ import annotations

import sqlite3

from kgsql.ask import format_table
from kgsql.db.cells import shown as shown_value


def test_reals_are_shown_to_15_significant_digits() -> None:
    with sqlite3.connect(":memory:") as conn:
        conn.executescript("CREATE TABLE pets (weight REAL); INSERT INTO pets VALUES (13.4), (9.3);")
        (average,) = conn.execute("SELECT AVG(weight) FROM pets").fetchone()
    assert str(average) == "11.350000000000001"  # what the database hands back
    assert shown_value(average) == "11.35"
    assert [shown_value(v) for v in (3.0, 0.1 + 0.2, 1e21, 2.5e-7, float("inf"))] == \
        ["3.0", "0.3", "1e+21", "2.5e-07", "inf"]
    assert [shown_value(v) for v in (None, 7, "Rex", b"\x00")] == ["NULL", "7", "Rex", "b'\\x00'"]
    assert format_table(["AVG(weight)", "name"], [(average, None)]).splitlines() == \
        ["AVG(weight) | name", "------------+-----", "11.35       | NULL"]
