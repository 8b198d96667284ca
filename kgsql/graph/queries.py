"""Read knowledge back out of the graph in the shapes the pipeline uses."""
from __future__ import annotations

from typing import Any

from kgsql.errors import UnknownNameError
from kgsql.graph.facts import list_facts
from kgsql.graph.store import GraphStore
from kgsql.schema.facts import apply_facts
from kgsql.schema.model import (
    Column,
    ColumnStats,
    DatabaseSchema,
    DerivedExpression,
    ForeignKey,
    SpatialInfo,
    Table,
)
from kgsql.sql.dialects import engine_of_dialect


def list_databases(store: GraphStore) -> list[dict[str, Any]]:
    return store.run("database_list")


def require_database(store: GraphStore, name: str) -> dict[str, Any]:
    """The Database node's properties; UnknownNameError with a suggestion if absent."""
    rows = store.run("database_get", name=name)
    if rows:
        return rows[0]["props"]
    import difflib

    names = [d["name"] for d in list_databases(store)]
    close = difflib.get_close_matches(name, names, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else (" (the graph is empty; run python -m kgsql.ingest first)" if not names else "")
    raise UnknownNameError(f"database '{name}' is not in the graph{hint}")


def _column_from(props: dict[str, Any]) -> Column:
    spatial = None
    if props.get("is_spatial"):
        spatial = SpatialInfo(
            geometry_type=props.get("geometry_type", "GEOMETRY"),
            srid=props.get("srid"),
            extent=props.get("extent"),
        )
    return Column(
        name=props["name"],
        type=props.get("type", ""),
        readable_name=props.get("readable_name", ""),
        is_primary_key=bool(props.get("is_primary_key", False)),
        not_null=bool(props.get("not_null", False)),
        description=props.get("description", ""),
        value_examples=list(props.get("value_examples", [])),
        value_explanation=props.get("value_explanation", ""),
        data_format=props.get("data_format", ""),
        stats=ColumnStats(
            distinct_count=props.get("distinct_count"),
            null_fraction=props.get("null_fraction"),
            min=props.get("min"),
            max=props.get("max"),
            sample=list(props.get("sample", [])),
        ),
        spatial=spatial,
    )


def load_schema(store: GraphStore, database: str, *, knowledge: bool = True) -> DatabaseSchema:
    """The whole stored knowledge of one database as a DatabaseSchema (``knowledge=False``: without
    what was mined from past questions, to measure what it adds)."""
    db = require_database(store, database)
    tables = []
    for row in store.run("schema_tables", database=database):
        t = row["table"]
        cols = sorted((c for c in row["columns"] if c), key=lambda c: c.get("position", 0))
        tables.append(
            Table(
                name=t["name"],
                columns=[_column_from(c) for c in cols],
                description=t.get("description", ""),
                geo_description=t.get("geo_description", ""),
                row_count=t.get("row_count"),
            )
        )
    fks = [ForeignKey(**r) for r in store.run("schema_foreign_keys", database=database)]
    dangling = []
    for text in db.get("dangling_foreign_keys", []):
        left, right = text.split(" -> ")
        lt, lc = left.split(".", 1)
        rt, rc = right.split(".", 1)
        dangling.append(ForeignKey(lt, lc, rt, rc))
    schema = DatabaseSchema(
        name=database,
        tables=tables,
        foreign_keys=fks,
        path=db.get("path", ""),
        dialect=engine_of_dialect(str(db.get("dialect") or "")).name,  # "spatialite" is SQLite's flavour
        is_spatial=bool(db.get("is_spatial", False)),
        dangling_foreign_keys=dangling,
        description=db.get("description", ""),
        derived=[
            DerivedExpression(name, expression, description)
            for name, expression, description in zip(
                db.get("derived_names", []), db.get("derived_expressions", []), db.get("derived_descriptions", [])
            )
        ],
    )
    if not knowledge:
        return schema
    return apply_facts(schema, list_facts(store, database))  # knowledge mined from past questions
