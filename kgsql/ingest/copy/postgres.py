"""Writing a planned copy into PostgreSQL (PostGIS for geometry columns).

Why: PostgreSQL can take the whole copy in one transaction, so a failed load
leaves the database as it was. Rows go through ``COPY`` (psycopg), the
fastest path in; geometry columns go through a staging table of WKB and
SRID, then ``ST_GeomFromWKB`` into ``geometry(<Type>, <SRID>)`` columns with
a GiST index. Keys and foreign keys are added after the rows, each in its
own savepoint: one PostgreSQL refuses is reported and skipped, not fatal.
"""
from __future__ import annotations

from typing import Any

from kgsql.db.engines.base import first_line
from kgsql.db.engines.base import quote_identifier as _q
from kgsql.ingest.copy.plan import TablePlan
from kgsql.ingest.copy.report import LoadReport
from kgsql.ingest.copy.source import LoadError

__all__ = ["write_postgres"]


def write_postgres(target: Any, plans: list[TablePlan], *, replace: bool, report: LoadReport) -> None:
    """Create the planned tables in the PostgreSQL database ``target`` names, in one transaction."""
    import psycopg

    from kgsql.db.credentials import connect_url

    try:
        conn = psycopg.connect(connect_url(target), autocommit=False, connect_timeout=10, application_name="kgsql-load")
    except psycopg.Error as exc:
        raise LoadError(f"cannot connect to {target.display}: {first_line(exc)}") from exc
    try:
        with conn:
            names = [p.name for p in plans]
            existing = [r[0] for r in conn.execute(
                "SELECT c.relname FROM pg_class c WHERE c.relname = ANY(%s) AND pg_table_is_visible(c.oid) "
                "AND c.relkind IN ('r', 'p', 'v', 'm', 'f')", (names,)).fetchall()]
            if existing and not replace:
                raise LoadError(f"{target.display} already has table(s) {', '.join(sorted(existing))}; "
                                f"--replace drops them first")
            for name in existing:
                conn.execute(f"DROP TABLE IF EXISTS {_q(name)} CASCADE")
            if any(c.logical.kind == "geometry" for p in plans for c in p.columns):
                _ensure_postgis(conn, target)
            for plan in plans:
                _pg_table(conn, plan)
                _pg_keys(conn, plan, report)
            _pg_foreign_keys(conn, plans, report)
    except psycopg.Error as exc:
        raise LoadError(f"{target.display}: {first_line(exc)}") from exc
    finally:
        conn.close()


def _pg_foreign_keys(conn: Any, plans: list[TablePlan], report: LoadReport) -> None:
    """Every planned foreign key, each in its own savepoint; one PostgreSQL refuses moves to the skipped ones."""
    import psycopg

    parent_of = {p.source.name: p for p in plans}
    for plan in plans:
        for fk in plan.foreign_keys:
            parent = parent_of[fk.ref_table]
            stmt = (f"ALTER TABLE {_q(plan.name)} ADD FOREIGN KEY "
                    f"({', '.join(_q(c) for c in plan.target_names(fk.columns))}) REFERENCES {_q(parent.name)} "
                    f"({', '.join(_q(c) for c in parent.target_names(fk.ref_columns))})"
                    + (" NOT VALID" if fk.not_valid else ""))
            try:
                with conn.transaction():
                    conn.execute(stmt)
            except psycopg.Error as exc:
                _drop_fk(report, str(fk), f"PostgreSQL refused it: {first_line(exc)}")


def _ensure_postgis(conn: Any, target: Any) -> None:
    import psycopg

    if conn.execute("SELECT count(*) FROM pg_extension WHERE extname = 'postgis'").fetchone()[0]:
        return
    try:
        with conn.transaction():
            conn.execute("CREATE EXTENSION IF NOT EXISTS postgis")
    except psycopg.Error as exc:
        raise LoadError(f"{target.display} has no PostGIS and cannot create it ({first_line(exc)}); "
                        f"the geometry columns need it: CREATE EXTENSION postgis") from exc


def _pg_table(conn: Any, plan: TablePlan) -> None:
    cols = ", ".join(f"{_q(c.name)} {c.logical.pg()}{' NOT NULL' if c.not_null else ''}" for c in plan.columns)
    conn.execute(f"CREATE TABLE {_q(plan.name)} ({cols})")
    geometry = [i for i, c in enumerate(plan.columns) if c.logical.kind == "geometry"]
    n_rows = len(plan.values[0]) if plan.values else 0
    if not n_rows:
        return
    if not geometry:
        names = ", ".join(_q(c.name) for c in plan.columns)
        with conn.cursor() as cur, cur.copy(f"COPY {_q(plan.name)} ({names}) FROM STDIN") as copy:
            for row in zip(*plan.values):
                copy.write_row(row)
        return
    # geometry: COPY WKB and SRID into a staging table, then ST_GeomFromWKB(wkb, srid) into the table
    staging = "kgsql_load_staging"
    spec, select, expanded = [], [], []
    for i, c in enumerate(plan.columns):
        if i in geometry:
            spec += [f"c{i} bytea", f"s{i} integer"]
            srid = c.logical.srid if c.logical.srid is not None else 0
            select.append(f"ST_GeomFromWKB(c{i}, coalesce(s{i}, {int(srid)}))")
        else:
            spec.append(f"c{i} {c.logical.pg()}")
            select.append(f"c{i}")
    conn.execute(f"CREATE TEMP TABLE {staging} ({', '.join(spec)}) ON COMMIT DROP")
    with conn.cursor() as cur, cur.copy(f"COPY {staging} FROM STDIN") as copy:
        for row in zip(*plan.values):
            expanded.clear()
            for i, v in enumerate(row):
                if i in geometry:
                    expanded.extend(v if v is not None else (None, None))
                else:
                    expanded.append(v)
            copy.write_row(expanded)
    conn.execute(f"INSERT INTO {_q(plan.name)} SELECT {', '.join(select)} FROM {staging}")
    conn.execute(f"DROP TABLE {staging}")
    for i in geometry:
        conn.execute(f"CREATE INDEX ON {_q(plan.name)} USING gist ({_q(plan.columns[i].name)})")


def _pg_keys(conn: Any, plan: TablePlan, report: LoadReport) -> None:
    import psycopg

    for cols, kind in [(plan.primary_key, "PRIMARY KEY")] + [(u, "UNIQUE") for u in plan.unique]:
        if not cols:
            continue
        try:
            with conn.transaction():
                conn.execute(f"ALTER TABLE {_q(plan.name)} ADD {kind} "
                             f"({', '.join(_q(c) for c in plan.target_names(cols))})")
        except psycopg.Error as exc:
            report.skipped_keys.append({"table": plan.source.name, "columns": ", ".join(cols), "kind": kind.lower(),
                                        "reason": f"PostgreSQL refused it: {first_line(exc)}"})
            if kind == "PRIMARY KEY":
                plan.primary_key = []
            else:
                plan.unique.remove(cols)


def _drop_fk(report: LoadReport, label: str, reason: str) -> None:
    for bucket in (report.foreign_keys, report.foreign_keys_not_valid):
        for item in list(bucket):
            if item.startswith(label):
                bucket.remove(item)
    report.skipped_foreign_keys.append({"fk": label, "reason": reason})
