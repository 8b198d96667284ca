"""Do PostgreSQL and DuckDB answer Spider's gold SQL as SQLite does, once the data is copied and sqlglot translates?

    python -m kgsql.lab.cross_engine [--data-dir ../shared/data/spider] [--databases a,b,...] [--out cross_engine.json]
                                     [--timeout S] [--raw-quotes] [--text-dates]

Why: kgsql reads a database's schema and runs its SQL on three engines. This
measures what changes when a SQLite benchmark moves to another engine: each
chosen Spider database is copied (:mod:`kgsql.lab.load_engine`) into a
throwaway PostgreSQL server (:mod:`kgsql.lab.pg_cluster`) and a DuckDB file;
the three schemas :func:`kgsql.ingest.reader.read_database` reads are
compared (tables, columns, primary keys, foreign keys, row counts; names
case-insensitively, types not at all since they differ by design); then
every ``dev.json`` gold query of those databases is translated by
``sqlglot.transpile(sql, read="sqlite", write=...)`` and run through
:func:`kgsql.db.guard.execute_query` on each engine, and its rows compared
with SQLite's.

Rows compare as a multiset, or as a list when the query's outer SELECT has
ORDER BY; numbers compare by value (int, float and Decimal alike, to 9
significant digits), text as text. An ordered result that differs only among
rows whose ORDER BY keys tie (including which tied rows a LIMIT keeps) counts
as equal ("equal up to ties"): SQLite itself could return either.

Before translating, a double-quoted name that is no column of the database
(``WHERE name = "Alice"``) becomes a string literal, as SQLite reads it;
sqlglot keeps it an identifier, which no other engine accepts. How many
queries needed that, and how many of them fail without it, is reported
(``--raw-quotes`` switches the rewrite off).

Every query that fails or differs gets one cause: from the error (GROUP BY
strictness, type mismatch from SQLite's dynamic typing, a function sqlglot
did not translate...), or from a rerun that removes one known difference
(LIKE as ILIKE: SQLite's LIKE ignores case; DuckDB's ``/`` as SQLite's
integer division). Prints a summary table and writes the whole report as
JSON (each cause with one example).

This module runs the check and prints it; the comparison rules (values,
SQL rewrites, causes, schemas) are :mod:`kgsql.lab.cross_engine_compare`,
whose names are importable from here as before.
"""
from __future__ import annotations

import argparse
import json
import re
import secrets
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any, Final

from kgsql.errors import KgsqlError
from kgsql.lab.cross_engine_compare import (  # noqa: F401 - the comparison's names, importable from here as before
    BUILTIN_FUNCTIONS,
    SIGNIFICANT,
    as_text,
    compare_rows,
    compare_schemas,
    error_cause,
    explain_fk,
    has_order_by,
    likes_to_ilike,
    normalise,
    normalised_rows,
    parse_sqlite,
    sqlite_division,
    tie_blocks,
    tie_equivalent,
    unquote_strings,
)
from kgsql.lab.cross_engine_compare import parse_sqlite as _parse  # noqa: F401 - the names tests import
from kgsql.lab.cross_engine_compare import tie_equivalent as _tie_equivalent  # noqa: F401

__all__ = ["DEFAULT_DATABASES", "compare_rows", "compare_schemas", "main", "normalise", "run_check"]

DEFAULT_DATABASES: Final = ("concert_singer", "pets_1", "car_1", "world_1", "employee_hire_evaluation", "flight_2",
                            "dog_kennels", "student_transcripts_tracking")
ENGINES: Final = ("postgres", "duckdb")
LABELS: Final = {"postgres": "PostgreSQL", "duckdb": "DuckDB"}
MAX_ROWS: Final = 100_000


# --------------------------------------------------------------------------- the check


def _execute(db: str, sql: str, timeout_s: float) -> list[tuple[Any, ...]]:
    from kgsql.db.guard import execute_query

    return [tuple(r) for r in execute_query(db, sql, timeout_s=timeout_s, max_rows=MAX_ROWS, lenient_text=True).rows]


def _judge(engine: str, url: str, item: dict[str, Any], tree: Any, expected: list[tuple[Any, ...]],
           blocks_of: Callable[[], list[Counter] | None], timeout_s: float, dq: bool) -> dict[str, Any]:
    """One query on one engine: status equal / different / failed, with its cause."""
    import sqlglot

    out: dict[str, Any] = {}
    try:
        sql = tree.sql(dialect=engine) if dq else sqlglot.transpile(item["query"], read="sqlite", write=engine)[0]
    except sqlglot.errors.SqlglotError as exc:
        return {"status": "failed", "cause": "sqlglot transpile problem", "error": str(exc).splitlines()[0][:200]}
    out["sql"] = sql
    try:
        got = _execute(url, sql, timeout_s)
    except KgsqlError as exc:
        message = str(exc)
        out.update(status="failed", cause=error_cause(message, double_quoted='"' in item["query"] and not dq),
                   error=message.splitlines()[0][:300])
        return out
    ordered = has_order_by(tree)
    if compare_rows(expected, got, ordered=ordered):
        out["status"] = "equal"
        return out
    a, b = normalised_rows(expected), normalised_rows(got)
    if ordered:
        blocks = blocks_of()
        if blocks is not None and len(a) == len(b) and tie_equivalent(b, blocks):
            out.update(status="equal", ties=True)
            return out
    out.update(status="different", sample_sqlite=[list(r) for r in expected[:3]],
               sample_engine=[list(r) for r in got[:3]])
    if ordered and Counter(a) == Counter(b):
        out["cause"] = "same rows, other order (NULL or text sort order)"
        return out
    retries: list[tuple[str, Any]] = [("LIKE is case-insensitive in SQLite", likes_to_ilike(tree))]
    if engine == "duckdb":
        retries.append(("integer division (SQLite truncates, DuckDB's / does not)", sqlite_division(tree)))
    for cause, variant in retries:
        if variant is None:
            continue
        try:
            again = _execute(url, variant.sql(dialect=engine), timeout_s)
        except (KgsqlError, Exception):  # noqa: BLE001 - the variant is only a probe
            continue
        if compare_rows(expected, again, ordered=ordered):
            out["cause"] = cause
            return out
    from sqlglot import exp

    text_a = [tuple(as_text(v) for v in r) for r in a]
    text_b = [tuple(as_text(v) for v in r) for r in b]
    iso = re.compile(r"^\d{4}-\d{2}-\d{2}")
    dates_b = {v for r in got for v in r if isinstance(v, str) and iso.match(v)}
    dates_a = {v for r in expected for v in r if isinstance(v, str) and iso.match(v)}
    if dates_b - dates_a and any(isinstance(v, (int, float)) for r in expected for v in r):
        out["cause"] = "typed dates (SQLite computes on the date text)"
    elif (text_a == text_b) if ordered else (Counter(text_a) == Counter(text_b)):
        out["cause"] = "value types differ (text vs number) from SQLite's dynamic typing"
    elif list(tree.find_all(exp.Div)) and engine == "postgres":
        out["cause"] = "division: numeric vs SQLite's integer/real arithmetic"
    elif any(isinstance(v, float) for r in expected for v in r) or any(isinstance(v, Decimal) for r in got for v in r):
        out["cause"] = "numeric result differs (precision or aggregate type)"
    elif tree.find(exp.Limit) is not None:
        out["cause"] = "LIMIT picks other rows (ties in a subquery or without ORDER BY)"
    else:
        out["cause"] = "other difference"
    return out


def run_check(data_dir: Path, databases: Sequence[str], *, split: str = "dev.json", timeout_s: float = 10.0,
              rewrite_quotes: bool = True, text_dates: bool = False,
              progress: Callable[[str], None] = lambda _m: None) -> dict[str, Any]:
    """Load, compare schemas, compare every gold query's rows; the report as a dict."""
    from kgsql.db import engines
    from kgsql.lab.pg_cluster import TempCluster

    started = time.perf_counter()
    questions_file = data_dir / split
    if not questions_file.is_file():
        raise KgsqlError(f"questions file not found: {questions_file}")
    questions = json.loads(questions_file.read_text(encoding="utf-8"))
    chosen = [d for d in databases if (data_dir / "database" / d / f"{d}.sqlite").is_file()]
    missing = [d for d in databases if d not in chosen]
    if not chosen:
        raise KgsqlError(f"none of the databases exist under {data_dir / 'database'}: {', '.join(databases)}")
    report: dict[str, Any] = {"data_dir": str(data_dir), "split": split, "databases": chosen, "missing": missing,
                              "rewrite_double_quoted_strings": rewrite_quotes, "text_dates": text_dates,
                              "loads": {}, "schemas": {},
                              "queries": []}
    with TempCluster() as cluster, tempfile.TemporaryDirectory(prefix="kgsql-cross-") as tmp:
        try:
            t0 = time.perf_counter()
            urls, load_reports = _load_all(cluster, Path(tmp), data_dir, chosen, text_dates, report)
            report["load_seconds"] = round(time.perf_counter() - t0, 2)
            progress(f"loaded {len(chosen)} databases into PostgreSQL and DuckDB in {report['load_seconds']:.1f} s")
            t0 = time.perf_counter()
            columns = _compare_all_schemas(urls, load_reports, report)
            report["schema_seconds"] = round(time.perf_counter() - t0, 2)
            t0 = time.perf_counter()
            for index, item in enumerate(questions):
                db = item.get("db_id")
                if db in urls:
                    report["queries"].append(_check_query(index, item, urls[db], columns[db], timeout_s,
                                                          rewrite_quotes))
            report["query_seconds"] = round(time.perf_counter() - t0, 2)
        finally:
            engines.close_all()
    report["summary"] = summarise(report["queries"])
    report["seconds"] = round(time.perf_counter() - started, 2)
    return report


def _load_all(cluster: Any, tmp: Path, data_dir: Path, chosen: list[str], text_dates: bool,
              report: dict[str, Any]) -> tuple[dict[str, dict[str, str]], dict[tuple[str, str], Any]]:
    """Copy each database into the server and a DuckDB file under ``tmp``: each one's URLs, and the load reports."""
    from kgsql.ingest.copy import load

    urls: dict[str, dict[str, str]] = {}
    reader_password = secrets.token_urlsafe(12)  # one reader role for every database: one password
    load_reports: dict[tuple[str, str], Any] = {}
    for db in chosen:
        sqlite_path = str(data_dir / "database" / db / f"{db}.sqlite")
        urls[db] = {"sqlite": sqlite_path, "postgres": cluster.create_database(db.lower()),
                    "duckdb": f"duckdb://{tmp / (db + '.duckdb')}"}
        for engine in ENGINES:
            r = load(sqlite_path, urls[db][engine], text_dates=text_dates)
            load_reports[(db, engine)] = r
            report["loads"].setdefault(db, {})[engine] = {
                "seconds": r.seconds, "rows": r.rows, "fallbacks": r.fallbacks,
                "foreign_keys": len(r.foreign_keys), "foreign_keys_not_valid": r.foreign_keys_not_valid,
                "skipped_foreign_keys": r.skipped_foreign_keys, "notes": r.notes}
        # read and query as a SELECT-only role, as kgsql requires (the superuser only loads)
        urls[db]["postgres"] = cluster.create_reader(db.lower(), password=reader_password)
    return urls, load_reports


def _compare_all_schemas(urls: dict[str, dict[str, str]], load_reports: dict[tuple[str, str], Any],
                         report: dict[str, Any]) -> dict[str, set[str]]:
    """Each engine's schema against SQLite's, into ``report``; each database's column names (lower case)."""
    from kgsql.ingest.reader import read_database

    columns: dict[str, set[str]] = {}
    for db in urls:
        lite = read_database(urls[db]["sqlite"], with_stats=False)
        columns[db] = {c.name.lower() for t in lite.tables for c in t.columns}
        for engine in ENGINES:
            other = read_database(urls[db][engine], with_stats=False)
            cmp = compare_schemas(lite, other)
            cmp["foreign_keys_missing"] = [{"fk": fk, "reason": explain_fk(fk, load_reports[(db, engine)])}
                                           for fk in cmp["foreign_keys_missing"]]
            report["schemas"].setdefault(db, {})[engine] = cmp
    return columns


def _check_query(index: int, item: dict[str, Any], urls: dict[str, str], columns: set[str], timeout_s: float,
                 rewrite_quotes: bool) -> dict[str, Any]:
    """One gold query: SQLite's rows, then each engine's verdict (and, after a rewrite, the verdict without it)."""
    entry: dict[str, Any] = {"index": index, "db_id": item.get("db_id"), "question": item.get("question", ""),
                             "sqlite_sql": item["query"]}
    try:
        expected = _execute(urls["sqlite"], item["query"], timeout_s)
    except KgsqlError as exc:
        entry["sqlite_error"] = str(exc).splitlines()[0][:300]
        return entry
    try:
        tree = parse_sqlite(item["query"])
    except Exception as exc:  # noqa: BLE001 - sqlglot's parse errors
        for engine in ENGINES:
            entry[engine] = {"status": "failed", "cause": "sqlglot transpile problem",
                             "error": str(exc).splitlines()[0][:200]}
        return entry
    dq = unquote_strings(tree, columns) if rewrite_quotes else 0
    if dq:
        entry["double_quoted_strings"] = dq
    cache: dict[str, Any] = {}

    def blocks() -> list[Counter] | None:
        if "b" not in cache:
            cache["b"] = tie_blocks(tree, lambda sql: _execute(urls["sqlite"], sql, timeout_s))
        return cache["b"]

    for engine in ENGINES:
        entry[engine] = _judge(engine, urls[engine], item, tree, expected, blocks, timeout_s, dq > 0)
        if dq:  # would it have run without the rewrite?
            raw = _judge(engine, urls[engine], item, parse_sqlite(item["query"]), expected, blocks, timeout_s, False)
            entry[engine]["without_rewrite"] = raw["status"]
    return entry


def summarise(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """Per engine: compared, equal (and up to ties), different, failed, and the causes with one example each."""
    summary: dict[str, Any] = {"questions": len(entries),
                               "sqlite_failed": sum(1 for e in entries if "sqlite_error" in e),
                               "double_quoted_rewritten": sum(1 for e in entries if e.get("double_quoted_strings"))}
    for engine in ENGINES:
        judged = [e for e in entries if engine in e]
        s: dict[str, Any] = {"compared": len(judged), "equal": 0, "equal_up_to_ties": 0, "different": 0, "failed": 0,
                             "causes": {}}
        for e in judged:
            r = e[engine]
            s[r["status"]] += 1
            if r.get("ties"):
                s["equal_up_to_ties"] += 1
            if r["status"] != "equal":
                cause = s["causes"].setdefault(r["cause"], {"failed": 0, "different": 0, "example": None})
                cause[r["status"]] += 1
                if cause["example"] is None:
                    cause["example"] = {"db_id": e["db_id"], "index": e["index"], "question": e["question"],
                                        "sqlite_sql": e["sqlite_sql"], "engine_sql": r.get("sql"),
                                        **({"error": r["error"]} if "error" in r else
                                           {"sqlite_rows": r.get("sample_sqlite"),
                                            "engine_rows": r.get("sample_engine")})}
        s["causes"] = dict(sorted(s["causes"].items(), key=lambda kv: -(kv[1]["failed"] + kv[1]["different"])))
        s["without_rewrite_failed"] = sum(1 for e in judged if e[engine].get("without_rewrite") == "failed")
        summary[engine] = s
    return summary


def _print(report: dict[str, Any]) -> None:
    print(f"{len(report['databases'])} Spider databases ({', '.join(report['databases'])})"
          + (f"; missing: {', '.join(report['missing'])}" if report["missing"] else ""))
    print(f"load {report['load_seconds']:.1f} s, schemas {report['schema_seconds']:.1f} s, "
          f"queries {report['query_seconds']:.1f} s, total {report['seconds']:.1f} s")
    print("\nschemas (vs SQLite; names case-insensitive, types not compared):")
    for db, per in report["schemas"].items():
        cells = []
        for engine in ENGINES:
            c = per[engine]
            if c["same"]:
                cells.append(f"{LABELS[engine]} same")
            else:
                parts = c["differences"][:2] + [f"FK {m['fk']} missing ({m['reason'][:60]})"
                                                for m in c["foreign_keys_missing"][:2]]
                parts += [f"FK {x} extra" for x in c["foreign_keys_extra"][:2]]
                n = len(c["differences"]) + len(c["foreign_keys_missing"]) + len(c["foreign_keys_extra"])
                cells.append(f"{LABELS[engine]} {n} difference(s): " + "; ".join(parts))
        print(f"  {db}: " + " | ".join(cells))
    s = report["summary"]
    print(f"\n{s['questions']} gold queries; SQLite failed on {s['sqlite_failed']}; "
          f"{s['double_quoted_rewritten']} had double-quoted strings rewritten as literals")
    print(f"{'engine':<12}{'compared':>9}{'equal':>7}{'(ties)':>8}{'different':>11}{'failed':>8}")
    for engine in ENGINES:
        e = s[engine]
        print(f"{LABELS[engine]:<12}{e['compared']:>9}{e['equal']:>7}{e['equal_up_to_ties']:>8}"
              f"{e['different']:>11}{e['failed']:>8}")
    for engine in ENGINES:
        e = s[engine]
        print(f"\n{LABELS[engine]}: causes (failed/different)"
              + (f"; {e['without_rewrite_failed']} of the queries with double-quoted strings fail without the rewrite"
                 if e["without_rewrite_failed"] else ""))
        for cause, c in e["causes"].items():
            ex = c["example"]
            detail = ex.get("error") or f"SQLite {ex.get('sqlite_rows')} vs {ex.get('engine_rows')}"
            print(f"  {c['failed']:>3}/{c['different']:<3} {cause}")
            print(f"          e.g. {ex['db_id']}#{ex['index']}: {ex['sqlite_sql'][:110]}")
            print(f"               -> {str(detail)[:150]}")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m kgsql.lab.cross_engine", description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data-dir", type=Path, default=Path(__file__).resolve().parents[3] / "shared" / "data" / "spider",
                   help="Spider folder (dev.json, database/); default ../shared/data/spider")
    p.add_argument("--split", default="dev.json", help="questions file in --data-dir (default dev.json)")
    p.add_argument("--databases", default=",".join(DEFAULT_DATABASES), help="comma-separated db_ids")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds per query (default 10)")
    p.add_argument("--raw-quotes", action="store_true", help="do not rewrite SQLite's double-quoted strings")
    p.add_argument("--text-dates", action="store_true", help="load DATE/DATETIME columns as text, as SQLite holds them")
    p.add_argument("--out", type=Path, default=Path("cross_engine.json"),
                   help="JSON report (default ./cross_engine.json)")
    args = p.parse_args(argv)
    try:
        databases = [d.strip() for d in args.databases.split(",") if d.strip()]
        if not databases:
            raise KgsqlError("--databases names no database")
        report = run_check(args.data_dir, databases, split=args.split, timeout_s=args.timeout,
                           rewrite_quotes=not args.raw_quotes, text_dates=args.text_dates,
                           progress=lambda m: print(m, flush=True))
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1, default=str) + "\n", encoding="utf-8")
    except (KgsqlError, OSError, ValueError) as exc:
        from kgsql.secrets import redact

        print(f"kgsql.lab.cross_engine: error: {redact(str(exc))}", file=sys.stderr)
        return 1
    _print(report)
    print(f"\nreport: {args.out}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
