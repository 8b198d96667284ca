"""Copy a SQLite/SpatiaLite file into PostgreSQL (PostGIS) or a new DuckDB file, keys and all.

    python -m kgsql.lab.load_engine SQLITE_FILE TARGET_URL [--replace] [--keep-case] [--text-dates] [--json OUT]
    python -m kgsql.lab.load_engine --spatial [SPATIALITE_FILE] [--json OUT]

Why: kgsql reads PostgreSQL and DuckDB databases as well as SQLite ones, and
the only way to know it answers the same on each is the same data in each.
Spider and the spatial benchmark ship as SQLite files, so this copies one
into the other engines (:mod:`kgsql.lab.cross_engine` then compares schemas
and query results; the engine tests build their databases with it).

This module is the command line; the copy itself (types from the declared
type *and* the stored values, keys and foreign keys the data satisfies,
SpatiaLite geometry as PostGIS ``geometry(<Type>, <SRID>)``, PostgreSQL
names folded to lower case unless ``--keep-case``) is the package
:mod:`kgsql.ingest.copy`, whose docstring lists the rules. Its names are
importable from here as before.

``--spatial`` starts a throwaway PostGIS server (:mod:`kgsql.lab.pg_cluster`),
loads a SpatiaLite file (default: the spatial benchmark's traffic database)
and checks that every geometry column comes back from
:func:`kgsql.ingest.reader.read_database` with the SQLite reader's geometry
type and SRID.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from kgsql.errors import InputError, KgsqlError
from kgsql.ingest.copy import (  # noqa: F401 - the copy's names, importable from here as before
    DUCKDB_BATCH,
    PG_MAX_IDENTIFIER,
    ColumnPlan,
    ForeignKeyPlan,
    LoadError,
    LoadReport,
    Logical,
    SourceColumn,
    SourceTable,
    TablePlan,
    load,
    plan_foreign_keys,
    plan_tables,
    plan_type,
    read_source,
    sqlite_affinity,
)
from kgsql.secrets import redact

__all__ = ["DEFAULT_SPATIAL_FILE", "LoadError", "LoadReport", "check_spatial", "load", "main", "plan_type",
           "sqlite_affinity"]

#: The spatial benchmark's traffic database (dataset1), relative to the repository's parent folder.
DEFAULT_SPATIAL_FILE: Final = Path(__file__).resolve().parents[3] / "shared" / "data" / "spatial" / "dataset1" / \
    "traffic" / "traffic.sqlite"


def check_spatial(sqlite_file: str | os.PathLike[str] = DEFAULT_SPATIAL_FILE, *, cluster: Any = None,
                  database: str = "traffic") -> dict[str, Any]:
    """Load a SpatiaLite file into a fresh PostGIS database and compare its geometry columns with SQLite's.

    ``cluster`` is a started :class:`~kgsql.lab.pg_cluster.TempCluster`
    (default: one started and removed here). The result has the load report,
    every geometry column as SQLite and PostGIS read it, and ``ok``: every
    SQLite geometry column came back with the same type, SRID and extent, and
    every table with the same row count.
    """
    from kgsql.db import engines
    from kgsql.ingest.reader import read_database
    from kgsql.lab.pg_cluster import TempCluster

    source = Path(sqlite_file)
    if not source.is_file():
        raise LoadError(f"SpatiaLite file not found: {source}")
    if cluster is None:
        with TempCluster() as own:
            return check_spatial(source, cluster=own, database=database)
    if not cluster.postgis:
        raise LoadError("PostGIS is not installed for this PostgreSQL server (Debian: postgresql-15-postgis-3)")
    url = cluster.create_database(database, postgis=True)
    try:
        report = load(source, url)
        t0 = time.perf_counter()
        pg = read_database(url, with_stats=False)
        read_s = time.perf_counter() - t0
    finally:
        engines.close_all()
    lite = read_database(source, with_stats=False)

    def geometry(schema: Any) -> dict[tuple[str, str], dict[str, Any]]:
        return {(t.name.lower(), c.name.lower()): {"table": t.name, "column": c.name, "type": c.spatial.geometry_type,
                                                   "srid": c.spatial.srid, "db_type": c.type,
                                                   "extent": c.spatial.extent}
                for t in schema.tables for c in t.columns if c.spatial is not None}

    before, after = geometry(lite), geometry(pg)
    columns = []
    for key, a in sorted(before.items()):
        b = after.get(key)
        same = b is not None and (a["type"].split()[0], a["srid"]) == (str(b["type"]).split()[0], b["srid"])
        extent_same = b is not None and (a["extent"] is None) == (b["extent"] is None) and all(
            abs(x - y) <= 1e-9 * max(1.0, abs(x)) for x, y in zip(a["extent"] or [], b["extent"] or []))
        columns.append({"table": a["table"], "column": a["column"], "sqlite": [a["type"], a["srid"]],
                        "postgis": [b["type"], b["srid"]] if b else None, "postgis_type": b["db_type"] if b else None,
                        "extent": a["extent"], "extent_same": extent_same, "same": same and extent_same})
    counts = {t.name.lower(): t.row_count for t in lite.tables}
    rows_same = all(counts.get(t.name.lower()) == t.row_count for t in pg.tables) and len(pg.tables) == len(lite.tables)
    gist = cluster.sql("SELECT count(*) FROM pg_indexes WHERE indexdef ILIKE '%USING gist%' "
                       "AND schemaname = 'public'", database=database)[0][0]
    return {"source": str(source), "load": report.as_dict(), "tables": len(pg.tables), "rows_same": rows_same,
            "geometry_columns": columns, "gist_indexes": int(gist), "read_seconds": round(read_s, 3),
            "extra_in_postgis": sorted(f"{t}.{c}" for t, c in set(after) - set(before)),
            "ok": rows_same and bool(columns) and all(c["same"] for c in columns)}


def _print_report(report: LoadReport) -> None:
    print(f"{report.source} -> {report.target}: {len(report.tables)} tables, {report.rows} rows "
          f"in {report.seconds:.2f} s (names {report.names})")
    print(f"  keys: {report.primary_keys} primary, {report.unique_constraints} unique; foreign keys: "
          f"{len(report.foreign_keys)} declared, {len(report.foreign_keys_not_valid)} NOT VALID, "
          f"{len(report.skipped_foreign_keys)} skipped")
    for f in report.fallbacks:
        print(f"  type: {f['table']}.{f['column']} declared {f['declared'] or '(none)'} -> {f['type']}: {f['reason']}")
    for k in report.skipped_keys:
        print(f"  skipped {k['kind']} {k['table']}({k['columns']}): {k['reason']}")
    for fk in report.foreign_keys_not_valid:
        print(f"  foreign key {fk}")
    for s in report.skipped_foreign_keys:
        print(f"  skipped foreign key {s['fk']}: {s['reason']}")
    for g in report.geometry:
        srid = g["srid"] if g["srid"] is not None else "none"
        print(f"  geometry {g['table']}.{g['column']}: {g['type']}, SRID {srid} ({g['stored_as']})")
    for note in report.notes:
        print(f"  note: {note}")


def _print_spatial(result: dict[str, Any]) -> None:
    _print_report(LoadReport(**{k: v for k, v in result["load"].items() if k != "rows"}))
    print(f"read back {result['tables']} tables in {result['read_seconds']:.2f} s; "
          f"row counts {'match' if result['rows_same'] else 'DIFFER'}; {result['gist_indexes']} GiST indexes")
    for c in result["geometry_columns"]:
        print(f"  {c['table']}.{c['column']}: SQLite {c['sqlite'][0]}/{c['sqlite'][1]}  "
              f"PostGIS {c['postgis_type']}, extent {'same' if c['extent_same'] else 'DIFFERENT'} "
              f"-> {'same' if c['same'] else 'DIFFERENT'}")
    if result["extra_in_postgis"]:
        print(f"  geometry the SQLite reader does not see (values are geometries, type is not): "
              f"{', '.join(result['extra_in_postgis'])}")
    print("spatial check: " + ("ok" if result["ok"] else "FAILED"))


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m kgsql.lab.load_engine", description=__doc__.splitlines()[0],
                                epilog="Targets: postgresql://user[:password]@host[:port]/db, "
                                       "duckdb:///abs/path.duckdb")
    p.add_argument("sqlite_file", nargs="?", type=Path, help="the SQLite/SpatiaLite file to copy")
    p.add_argument("target_url", nargs="?", help="postgresql://... (an existing database) or duckdb:///new.duckdb")
    p.add_argument("--replace", action="store_true", help="drop the target's tables of the same names "
                                                          "(DuckDB: overwrite the file)")
    p.add_argument("--keep-case", action="store_true", help="keep SQLite's spelling of names in PostgreSQL "
                                                            "(default: lower case, as PostgreSQL folds unquoted names)")
    p.add_argument("--text-dates", action="store_true", help="keep DATE/DATETIME columns as text")
    p.add_argument("--spatial", action="store_true",
                   help="start a throwaway PostGIS server, load SQLITE_FILE (default: the spatial benchmark's "
                        "traffic database) and check its geometry columns read back")
    p.add_argument("--json", type=Path, help="write the report here")
    args = p.parse_args(argv)
    prog = "kgsql.lab.load_engine"
    try:
        if args.spatial:
            if args.target_url:
                raise InputError("--spatial loads into its own throwaway server; give no TARGET_URL")
            result = check_spatial(args.sqlite_file or DEFAULT_SPATIAL_FILE)
            _print_spatial(result)
            out: dict[str, Any] = result
            code = 0 if result["ok"] else 1
        else:
            if not args.sqlite_file or not args.target_url:
                raise InputError("give SQLITE_FILE and TARGET_URL (or --spatial)")
            report = load(args.sqlite_file, args.target_url, replace=args.replace,
                          keep_case=True if args.keep_case else None, text_dates=args.text_dates)
            _print_report(report)
            out, code = report.as_dict(), 0
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(out, indent=1, default=str) + "\n", encoding="utf-8")
    except (KgsqlError, OSError) as exc:
        print(f"{prog}: error: {redact(str(exc))}", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
