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
"""
from __future__ import annotations

import argparse
import json
import math
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

__all__ = ["DEFAULT_DATABASES", "compare_rows", "compare_schemas", "main", "normalise", "run_check"]

DEFAULT_DATABASES: Final = ("concert_singer", "pets_1", "car_1", "world_1", "employee_hire_evaluation", "flight_2",
                            "dog_kennels", "student_transcripts_tracking")
ENGINES: Final = ("postgres", "duckdb")
LABELS: Final = {"postgres": "PostgreSQL", "duckdb": "DuckDB"}
SIGNIFICANT: Final = 9
MAX_ROWS: Final = 100_000


# --------------------------------------------------------------------------- values


def normalise(value: Any) -> Any:
    """A value as compared: numbers as ("n", float to 9 significant digits), text as ("s", text)."""
    if value is None:
        return None
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, (int, float, Decimal)):
        x = float(value)
        if math.isnan(x) or math.isinf(x):
            return ("n", str(x))
        return ("n", float(f"{x:.{SIGNIFICANT}g}") + 0.0)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return ("b", bytes(value).hex())
    return ("s", str(value))


def _as_text(value: Any) -> Any:
    """A normalised value as text: tells "5" from 5 apart only by kind."""
    if value is None:
        return None
    kind, v = value
    if kind == "n" and isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _rows(rows: Sequence[Sequence[Any]]) -> list[tuple[Any, ...]]:
    return [tuple(normalise(v) for v in row) for row in rows]


def compare_rows(expected: Sequence[Sequence[Any]], got: Sequence[Sequence[Any]], *, ordered: bool) -> bool:
    """Same rows (as a list when ``ordered``, else as a multiset) after :func:`normalise`."""
    a, b = _rows(expected), _rows(got)
    return a == b if ordered else Counter(a) == Counter(b)


def _tie_equivalent(got: list[tuple[Any, ...]], blocks: list[Counter]) -> bool:
    """``got`` follows SQLite's order up to ties.

    Each block of equal ORDER BY keys compares as a multiset; a LIMIT may cut the last one short.
    """
    i = 0
    for block in blocks:
        if i == len(got):
            return True
        size = sum(block.values())
        chunk = Counter(got[i:i + size])
        if i + size > len(got):
            return not (chunk - block)
        if chunk != block:
            return False
        i += size
    return i == len(got)


# --------------------------------------------------------------------------- SQL


def _parse(sql: str) -> Any:
    import sqlglot

    return sqlglot.parse_one(sql, read="sqlite")


def unquote_strings(tree: Any, column_names: set[str]) -> int:
    """Turn double-quoted names that are no column into string literals, in place; how many."""
    from sqlglot import exp

    aliases = {a.alias.lower() for a in tree.find_all(exp.Alias) if a.alias}
    known = column_names | aliases
    changed = 0
    for column in list(tree.find_all(exp.Column)):
        ident = column.this
        if column.table or not isinstance(ident, exp.Identifier) or not ident.quoted:
            continue
        if ident.name.lower() in known:
            continue
        column.replace(exp.Literal.string(ident.name))
        changed += 1
    return changed


def _ordered(tree: Any) -> bool:
    return bool(tree.args.get("order"))


def _likes_to_ilike(tree: Any) -> Any:
    from sqlglot import exp

    tree = tree.copy()
    found = False
    for like in list(tree.find_all(exp.Like)):
        like.replace(exp.ILike(this=like.this, expression=like.expression))
        found = True
    return tree if found else None


def _sqlite_division(tree: Any) -> Any:
    """DuckDB's ``/`` always divides exactly; SQLite's truncates two integers: rewrite each a / b accordingly."""
    from sqlglot import exp

    tree = tree.copy()
    found = False
    for div in list(tree.find_all(exp.Div)):
        a, b = div.this.copy(), div.expression.copy()
        ints = " AND ".join(f"typeof({x.sql('duckdb')}) IN ('BIGINT', 'INTEGER', 'SMALLINT', 'TINYINT', 'HUGEINT')"
                            for x in (a, b))
        div.replace(exp.maybe_parse(f"(CASE WHEN {ints} THEN ({a.sql('duckdb')}) // ({b.sql('duckdb')}) "
                                    f"ELSE ({a.sql('duckdb')}) / ({b.sql('duckdb')}) END)", dialect="duckdb"))
        found = True
    return tree if found else None


def _tie_blocks(tree: Any, run: Callable[[str], list[tuple[Any, ...]]]) -> list[Counter] | None:
    """SQLite's full ordered result cut into blocks of equal ORDER BY keys (None when it cannot tell)."""
    from sqlglot import exp

    if not isinstance(tree, exp.Select) or not tree.args.get("order") or tree.args.get("distinct") \
            or tree.args.get("offset"):
        return None
    sel = tree.copy()
    sel.set("limit", None)
    outputs = list(sel.expressions)
    if any(isinstance(o, exp.Star) or (isinstance(o, exp.Column) and isinstance(o.this, exp.Star)) for o in outputs):
        return None
    n = len(outputs)
    keys: list[int] = []
    extra: list[Any] = []
    for ordered in sel.args["order"].expressions:
        e = ordered.this
        idx = None
        if isinstance(e, exp.Literal) and e.is_int:
            idx = int(e.this) - 1
        for k, o in enumerate(outputs):
            if idx is not None:
                break
            if isinstance(e, exp.Column) and not e.table and o.alias and o.alias.lower() == e.name.lower():
                idx = k
            elif o.unalias().sql("sqlite").lower() == e.sql("sqlite").lower():
                idx = k
        if idx is None:
            extra.append(e.copy())
            idx = n + len(extra) - 1
        keys.append(idx)
    for j, e in enumerate(extra):
        sel.append("expressions", exp.alias_(e, f"kgsql_key_{j}"))
    try:
        rows = run(sel.sql("sqlite"))
    except Exception:  # noqa: BLE001 - the augmented query may not be valid; no tie check then
        return None
    blocks: list[Counter] = []
    last: Any = object()
    for row in rows:
        norm = tuple(normalise(v) for v in row)
        key = tuple(norm[i] for i in keys)
        if key != last:
            blocks.append(Counter())
            last = key
        blocks[-1][norm[:n]] += 1
    return blocks


# --------------------------------------------------------------------------- causes

#: Functions both engines have: "function avg(text) does not exist" is a type problem, not a missing function.
BUILTIN_FUNCTIONS: Final = ("avg", "sum", "min", "max", "count", "abs", "round", "length", "lower", "upper", "substr",
                            "substring", "trim", "ltrim", "rtrim", "replace", "coalesce", "instr", "strpos",
                            "to_char", "date_part", "extract")
_ERROR_CAUSES: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("GROUP BY strictness (a bare column SQLite accepts)",
     re.compile(r"must appear in the GROUP BY clause|must be part of an aggregate function", re.I)),
    ("ORDER BY strictness with DISTINCT / aggregates",
     re.compile(r"for SELECT DISTINCT, ORDER BY expressions must appear|ORDER BY .*(DISTINCT|aggregate)"
                r"|DISTINCT ON|ORDER BY clause of a DISTINCT", re.I)),
    ("type mismatch from SQLite's dynamic typing",
     re.compile(r"operator does not exist|invalid input syntax for type|cannot be matched|Cannot compare values"
                r"|Could not convert|Conversion Error|cannot cast|Cannot mix values|argument of \w+ must be type"
                r"|types? .* and .* cannot|No function matches the given name and argument types '(~~|like|!~~|"
                r"not_like|ilike|equals|>|<|=)", re.I)),
    ("typed dates (SQLite computes on the date text)",
     re.compile(r"function \w+\([^)]*\b(timestamp|date|time)\b[^)]*\) does not exist"
                r"|No function matches the given name and argument types '\w+\([^)]*\b(TIMESTAMP|DATE|TIME)\b", re.I)),
    ("type mismatch from SQLite's dynamic typing",
     re.compile(r"function (" + "|".join(BUILTIN_FUNCTIONS) + r")\([^)]*\) does not exist"
                r"|No function matches the given name and argument types", re.I)),
    ("sqlglot transpile problem (FROM subquery without alias: PostgreSQL < 16 needs one)",
     re.compile(r"subquery in FROM must have an alias", re.I)),
    ("function sqlglot did not translate",
     re.compile(r"function .* does not exist|Function with name .* does not exist", re.I)),
    ("name resolution (unknown column / table)",
     re.compile(r"column .* does not exist|Referenced column .* not found|relation .* does not exist"
                r"|Table with name .* does not exist|missing FROM-clause|not found in FROM clause"
                r"|Ambiguous reference|is ambiguous", re.I)),
    ("syntax the engine rejects", re.compile(r"syntax error|Parser Error", re.I)),
    ("timeout", re.compile(r"timed out|timeout|canceling statement", re.I)),
)


def error_cause(message: str, *, double_quoted: bool = False) -> str:
    """The cause of an engine's error, from its message."""
    if double_quoted and re.search(r'column "?[^"]*"? does not exist|Referenced column .* not found', message):
        return "double-quoted string literal (SQLite quirk)"
    for cause, pattern in _ERROR_CAUSES:
        if pattern.search(message):
            return cause
    return "other error: " + re.sub(r"\d+", "N", message.split("\n")[0])[:70]


# --------------------------------------------------------------------------- schemas


def compare_schemas(reference: Any, other: Any) -> dict[str, Any]:
    """What differs between two schemas (tables, columns, keys, foreign keys, row counts), names case-insensitive."""
    def tables(schema: Any) -> dict[str, Any]:
        return {t.name.lower(): t for t in schema.tables}

    a, b = tables(reference), tables(other)
    diffs: list[str] = []
    for name in sorted(set(a) - set(b)):
        diffs.append(f"table {name} missing")
    for name in sorted(set(b) - set(a)):
        diffs.append(f"extra table {name}")
    for name in sorted(set(a) & set(b)):
        ta, tb = a[name], b[name]
        ca = [c.name.lower() for c in ta.columns]
        cb = [c.name.lower() for c in tb.columns]
        if ca != cb:
            diffs.append(f"{name}: columns {ca} vs {cb}")
        pa = sorted(c.name.lower() for c in ta.columns if c.is_primary_key)
        pb = sorted(c.name.lower() for c in tb.columns if c.is_primary_key)
        if pa != pb:
            diffs.append(f"{name}: primary key {pa} vs {pb}")
        if ta.row_count != tb.row_count:
            diffs.append(f"{name}: {ta.row_count} rows vs {tb.row_count}")

    def fks(schema: Any) -> set[str]:
        return {f"{f.table}.{f.column}->{f.ref_table}.{f.ref_column}".lower() for f in schema.foreign_keys}

    missing, extra = sorted(fks(reference) - fks(other)), sorted(fks(other) - fks(reference))
    return {"same": not diffs and not missing and not extra, "differences": diffs,
            "foreign_keys_missing": missing, "foreign_keys_extra": extra,
            "tables": len(b), "columns": sum(len(t.columns) for t in other.tables),
            "foreign_keys": len(other.foreign_keys), "rows": sum(t.row_count or 0 for t in other.tables)}


def _explain_fk(fk: str, report: Any) -> str:
    """The load report's reason for a foreign key the engine lacks."""
    t, _, rest = fk.partition(".")
    col, _, ref = rest.partition("->")
    for item in report.skipped_foreign_keys:
        text = item["fk"].lower()
        if text.startswith(f"{t}(") and col in text and ref.split(".")[0] in text:
            return item["reason"]
    return "not in the load report"


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
    ordered = _ordered(tree)
    if compare_rows(expected, got, ordered=ordered):
        out["status"] = "equal"
        return out
    a, b = _rows(expected), _rows(got)
    if ordered:
        blocks = blocks_of()
        if blocks is not None and len(a) == len(b) and _tie_equivalent(b, blocks):
            out.update(status="equal", ties=True)
            return out
    out.update(status="different", sample_sqlite=[list(r) for r in expected[:3]],
               sample_engine=[list(r) for r in got[:3]])
    if ordered and Counter(a) == Counter(b):
        out["cause"] = "same rows, other order (NULL or text sort order)"
        return out
    retries: list[tuple[str, Any]] = [("LIKE is case-insensitive in SQLite", _likes_to_ilike(tree))]
    if engine == "duckdb":
        retries.append(("integer division (SQLite truncates, DuckDB's / does not)", _sqlite_division(tree)))
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

    text_a = [tuple(_as_text(v) for v in r) for r in a]
    text_b = [tuple(_as_text(v) for v in r) for r in b]
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
    from kgsql.ingest.reader import read_database
    from kgsql.lab.load_engine import load
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
            urls: dict[str, dict[str, str]] = {}
            reader_password = secrets.token_urlsafe(12)  # one reader role for every database: one password
            load_reports: dict[tuple[str, str], Any] = {}
            t0 = time.perf_counter()
            for db in chosen:
                sqlite_path = str(data_dir / "database" / db / f"{db}.sqlite")
                urls[db] = {"sqlite": sqlite_path, "postgres": cluster.create_database(db.lower()),
                            "duckdb": f"duckdb://{Path(tmp) / (db + '.duckdb')}"}
                for engine in ENGINES:
                    r = load(sqlite_path, urls[db][engine], text_dates=text_dates)
                    load_reports[(db, engine)] = r
                    report["loads"].setdefault(db, {})[engine] = {
                        "seconds": r.seconds, "rows": r.rows, "fallbacks": r.fallbacks,
                        "foreign_keys": len(r.foreign_keys), "foreign_keys_not_valid": r.foreign_keys_not_valid,
                        "skipped_foreign_keys": r.skipped_foreign_keys, "notes": r.notes}
                # read and query as a SELECT-only role, as kgsql requires (the superuser only loads)
                urls[db]["postgres"] = cluster.create_reader(db.lower(), password=reader_password)
            report["load_seconds"] = round(time.perf_counter() - t0, 2)
            progress(f"loaded {len(chosen)} databases into PostgreSQL and DuckDB in {report['load_seconds']:.1f} s")
            t0 = time.perf_counter()
            columns: dict[str, set[str]] = {}
            for db in chosen:
                lite = read_database(urls[db]["sqlite"], with_stats=False)
                columns[db] = {c.name.lower() for t in lite.tables for c in t.columns}
                for engine in ENGINES:
                    other = read_database(urls[db][engine], with_stats=False)
                    cmp = compare_schemas(lite, other)
                    cmp["foreign_keys_missing"] = [{"fk": fk, "reason": _explain_fk(fk, load_reports[(db, engine)])}
                                                   for fk in cmp["foreign_keys_missing"]]
                    report["schemas"].setdefault(db, {})[engine] = cmp
            report["schema_seconds"] = round(time.perf_counter() - t0, 2)
            t0 = time.perf_counter()
            for index, item in enumerate(questions):
                db = item.get("db_id")
                if db not in urls:
                    continue
                entry: dict[str, Any] = {"index": index, "db_id": db, "question": item.get("question", ""),
                                         "sqlite_sql": item["query"]}
                report["queries"].append(entry)
                try:
                    expected = _execute(urls[db]["sqlite"], item["query"], timeout_s)
                except KgsqlError as exc:
                    entry["sqlite_error"] = str(exc).splitlines()[0][:300]
                    continue
                try:
                    tree = _parse(item["query"])
                except Exception as exc:  # noqa: BLE001 - sqlglot's parse errors
                    for engine in ENGINES:
                        entry[engine] = {"status": "failed", "cause": "sqlglot transpile problem",
                                         "error": str(exc).splitlines()[0][:200]}
                    continue
                dq = unquote_strings(tree, columns[db]) if rewrite_quotes else 0
                if dq:
                    entry["double_quoted_strings"] = dq
                cache: dict[str, Any] = {}

                def blocks(tree: Any = tree, db: str = db, cache: dict[str, Any] = cache) -> list[Counter] | None:
                    if "b" not in cache:
                        cache["b"] = _tie_blocks(tree, lambda sql: _execute(urls[db]["sqlite"], sql, timeout_s))
                    return cache["b"]

                for engine in ENGINES:
                    entry[engine] = _judge(engine, urls[db][engine], item, tree, expected, blocks,
                                           timeout_s, dq > 0)
                    if dq:  # would it have run without the rewrite?
                        raw = _judge(engine, urls[db][engine], item, _parse(item["query"]),
                                     expected, blocks, timeout_s, False)
                        entry[engine]["without_rewrite"] = raw["status"]
            report["query_seconds"] = round(time.perf_counter() - t0, 2)
        finally:
            engines.close_all()
    report["summary"] = summarise(report["queries"])
    report["seconds"] = round(time.perf_counter() - started, 2)
    return report


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
