"""Selected pool examples -> ``Shot``s the question formats place.

Organisation (DAIL-SQL §4.2 / ACT-SQL): ``full`` shows each example with its
own database's schema, rendered in the same style (and with the same number
of example rows) as the target's, as ACT-SQL does; ``sql-only`` shows just
question and SQL (DAIL-SQL's "SQL only" organisation, the cheapest). With
auto-CoT the answer is the example's chain of thought ending in its SQL.
"""
from __future__ import annotations

from typing import Any, Sequence

from kgsql.errors import UnknownNameError
from kgsql.fewshot.pool import ExamplePool, PoolExample
from kgsql.generate.formats import Shot
from kgsql.generate.styles import render_schema

ORGANISATIONS = ("sql-only", "full")


def make_shots(examples: Sequence[PoolExample], pool: ExamplePool, *, organisation: str = "sql-only",
               style: str = "code", example_rows: int = 0, cot: Any = None) -> tuple[Shot, ...]:
    """Shots for ``examples``; ``cot`` is an ``AutoCoT`` (or None for plain SQL answers)."""
    if organisation not in ORGANISATIONS:
        raise UnknownNameError(f"unknown example organisation '{organisation}'; known: {', '.join(ORGANISATIONS)}")
    shots = []
    schemas: dict[str, str] = {}
    for ex in examples:
        schema_text = ""
        if organisation == "full":
            if ex.db_id not in schemas:
                try:
                    schemas[ex.db_id] = render_schema(style, pool.schema(ex.db_id), example_rows=example_rows)
                except Exception:  # noqa: BLE001 - no schema for this example: show it SQL-only
                    schemas[ex.db_id] = ""
            schema_text = schemas[ex.db_id]
        answer = cot.cot(ex) if cot is not None else " ".join(ex.sql.strip().rstrip(";").split())
        shots.append(Shot(ex.question, answer, schema_text))
    return tuple(shots)
