"""``kgsql ask`` on a question the database cannot answer: one "Cannot answer" line naming what is
missing and the closest columns, the query tried, no rows; ``--json`` carries the refusal."""
from __future__ import annotations

import json

TRIED = "SELECT avg(depth) FROM rivers"
QUESTION = "What is the average depth of the rivers?"  # the example database holds no depth anywhere


def test_a_refusal_instead_of_sql_on_the_cli(geo_ask) -> None:  # type: ignore[no-untyped-def]
    with geo_ask(TRIED, "refuse_geo") as ask:
        plain = ask(QUESTION)
        as_json = ask(QUESTION, "--json")
    assert plain.returncode == 0, plain.stderr
    lines = plain.stdout.splitlines()
    refusal = next(line for line in lines if line.startswith("Cannot answer:"))
    assert refusal.startswith("Cannot answer: the database has nothing for 'depth' (closest: rivers.")
    assert f"(the query tried: {TRIED})" in lines and not any(line.startswith("SQL:") for line in lines)
    data = json.loads(as_json.stdout)
    assert data["refusal"].startswith("cannot answer: the database has nothing for 'depth'")
    assert data["sql"] == "" and data["rows"] == [] and data["candidates"][0] == TRIED
