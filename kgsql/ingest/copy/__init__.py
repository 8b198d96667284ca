"""Copying a SQLite/SpatiaLite file into PostgreSQL (PostGIS) or a new DuckDB file, keys and all.

Why: kgsql reads PostgreSQL and DuckDB databases as well as SQLite ones, and
the only way to know it answers the same on each is the same data in each.
Spider and the spatial benchmark ship as SQLite files, so this copies one
into the other engines (``python -m kgsql.lab.load_engine`` is its command
line; :mod:`kgsql.lab.cross_engine` then compares schemas and query results;
the engine tests build their databases with it).

What it does, table by table in SQLite's order, one module a step:

* :mod:`~kgsql.ingest.copy.source` reads every user table whole (rows, unique
  indexes, foreign keys, SpatiaLite geometry as WKB and SRID);
* :mod:`~kgsql.ingest.copy.types` gives each column a type from the declared
  type's SQLite affinity *and* the values actually stored: INTEGER affinity
  holding only integers -> ``bigint``; REAL -> ``double precision``;
  ``DECIMAL(p,s)`` whose values fit -> ``numeric(p,s)``; ``varchar(n)`` whose
  values fit -> ``varchar(n)`` (``char(n)`` too: PostgreSQL's blank-padded
  ``char`` would change the values); DATE/DATETIME/TIME columns holding ISO
  text -> ``date``/``timestamp``/``time`` (``text_dates`` keeps them text);
  an empty or unknown declared type follows its values; values that do not
  fit fall back to ``text`` (:mod:`~kgsql.ingest.copy.values`: with SQLite's
  own text for its numbers), reported. Geometry columns become PostGIS
  ``geometry(<Type>, <SRID>)``;
* :mod:`~kgsql.ingest.copy.plan` folds names (PostgreSQL: lower case by
  default) and keeps the primary keys, UNIQUE constraints and foreign keys
  the converted data and the target can hold;
* :mod:`~kgsql.ingest.copy.postgres` writes through ``COPY`` in one
  transaction, :mod:`~kgsql.ingest.copy.duckdb` through ``INSERT ... SELECT
  unnest(list)`` batches into a new file;
* :mod:`~kgsql.ingest.copy.load` runs the steps; the
  :class:`~kgsql.ingest.copy.report.LoadReport` lists everything that changed
  on the way, with the reason.

It lives with ``ingest`` (not ``db``) because it reads SQLite's user tables
the way :mod:`kgsql.ingest.reader` does (``user_tables``).
"""
from kgsql.ingest.copy.duckdb import DUCKDB_BATCH
from kgsql.ingest.copy.load import load
from kgsql.ingest.copy.plan import (
    PG_MAX_IDENTIFIER,
    ColumnPlan,
    ForeignKeyPlan,
    TablePlan,
    plan_foreign_keys,
    plan_tables,
)
from kgsql.ingest.copy.report import LoadReport
from kgsql.ingest.copy.source import LoadError, SourceColumn, SourceTable, read_source
from kgsql.ingest.copy.types import Logical, plan_type, sqlite_affinity

__all__ = ["DUCKDB_BATCH", "PG_MAX_IDENTIFIER", "ColumnPlan", "ForeignKeyPlan", "LoadError", "LoadReport", "Logical",
           "SourceColumn", "SourceTable", "TablePlan", "load", "plan_foreign_keys", "plan_tables", "plan_type",
           "read_source", "sqlite_affinity"]
