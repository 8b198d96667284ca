"""The copy itself: read a SQLite/SpatiaLite file, plan it, write it into PostgreSQL or DuckDB, report.

Why: one entry point that checks its input (a SQLite file, a target that is
not one) and runs the steps in order, each in its own module:
:mod:`~kgsql.ingest.copy.source` reads, :mod:`~kgsql.ingest.copy.plan`
decides names, types and keys, :mod:`~kgsql.ingest.copy.postgres` or
:mod:`~kgsql.ingest.copy.duckdb` writes, and the
:class:`~kgsql.ingest.copy.report.LoadReport` says what changed on the way.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from kgsql.ingest.copy.duckdb import write_duckdb
from kgsql.ingest.copy.plan import TablePlan, plan_foreign_keys, plan_tables
from kgsql.ingest.copy.postgres import write_postgres
from kgsql.ingest.copy.report import LoadReport
from kgsql.ingest.copy.source import LoadError, SourceTable, read_source

__all__ = ["load"]


def load(sqlite_file: str | os.PathLike[str], target_url: str, *, replace: bool = False,
         keep_case: bool | None = None, text_dates: bool = False) -> LoadReport:
    """Copy a SQLite/SpatiaLite file into the PostgreSQL database or new DuckDB file ``target_url`` names.

    ``keep_case`` None folds names to lower case for PostgreSQL and keeps them
    for DuckDB. Raises LoadError (or another KgsqlError) with one line that
    never holds the password.
    """
    from kgsql.db.connect import check_sqlite_file
    from kgsql.db.target import parse_target

    started = time.perf_counter()
    source = Path(sqlite_file)
    if not source.is_file():
        raise LoadError(f"SQLite file not found: {source}")
    check_sqlite_file(source)
    target = parse_target(target_url)
    if target.engine == "sqlite":
        raise LoadError(f"{target.display} is a SQLite file; the target must be postgresql://... or duckdb:///path")
    fold = (target.engine == "postgres") if keep_case is None else not keep_case
    report = LoadReport(source=str(source.resolve()), target=target.display, engine=target.engine,
                        names="lower case" if fold else "as in SQLite")
    tables, views = read_source(source)
    if not tables:
        raise LoadError(f"{source} has no tables")
    if views:
        report.notes.append(f"views not copied: {', '.join(views)}")
    plans = plan_tables(tables, target.engine, fold=fold, text_dates=text_dates, report=report)
    plans = plan_foreign_keys(plans, target.engine, report)
    if target.engine == "postgres":
        write_postgres(target, plans, replace=replace, report=report)
    else:
        write_duckdb(Path(target.path or ""), plans, replace=replace, report=report)
    _report_tables(report, tables, plans, target.engine)
    report.primary_keys = sum(1 for p in plans if p.primary_key)
    report.unique_constraints = sum(len(p.unique) for p in plans)
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def _report_tables(report: LoadReport, tables: list[SourceTable], plans: list[TablePlan], engine: str) -> None:
    """Each table's rows and column types, and each geometry column, in SQLite's table order."""
    for plan in sorted(plans, key=lambda p: [t.name for t in tables].index(p.source.name)):
        report.tables.append({
            "name": plan.source.name, "target": plan.name, "rows": len(plan.source.rows),
            "columns": [{"name": c.name, "declared": c.declared,
                         "type": c.logical.pg() if engine == "postgres" else c.logical.duckdb()}
                        for c in plan.columns]})
        for c in plan.columns:
            if c.logical.kind == "geometry":
                report.geometry.append({"table": plan.name, "column": c.name, "type": c.logical.geometry,
                                        "srid": c.logical.srid,
                                        "stored_as": "geometry" if engine == "postgres" else "WKB BLOB"})
