"""How well do the answer flags separate wrong answers from right ones? A benchmark over an eval's records.

    python -m kgsql.lab.flag_rate RECORDS.jsonl --databases DIR [--graph-root TMP] [--out REPORT.json]

For every record (``db_id``, ``question``, ``pred``, ``spider_ex``, ``extra.candidates``, ``extra.repaired``,
``extra.opinions``, ``error``) the flags of :mod:`kgsql.generate.flags` are computed as the answer would have
carried them, with no model call: the predicted SQL is run read-only on
``DIR/<db_id>/<db_id>.sqlite`` for its rows, and the join edges come from the schema graph, the way
the methods read them: each database is ingested into a throwaway embedded graph (``--graph-root``,
default a temporary folder), discovered joins included. Prints and writes (``--out``) the share of wrong
answers (``spider_ex == 0``) with at least one flag and the share of right answers with none (issue 34's
goals: >= 60 % and >= 90 %), and how often each flag fires on each.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from kgsql.errors import KgsqlError

GOALS = {"wrong_flagged": 0.60, "right_clean": 0.90}
#: How a recorded query is run again: read-only, at most this long, for at most this many rows.
RERUN_TIMEOUT_S = 30.0
RERUN_ROWS = 1000


def read_records(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise KgsqlError(f"records file not found: {path}")
    try:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise KgsqlError(f"{path}: not JSON lines ({exc.msg}, line {exc.lineno})") from None


def rerun(schema: Any, sql: str) -> tuple[Any, str | None]:
    """(the result, None) of a recorded query run again read-only on the schema's database, or (None, the
    error it met)."""
    from kgsql.db.isolate import execute_isolated

    try:
        return execute_isolated(schema.path, sql, timeout_s=RERUN_TIMEOUT_S, max_rows=RERUN_ROWS), None
    except KgsqlError as exc:
        return None, str(exc)


def record_flags(record: dict[str, Any], schema: Any) -> list[str]:
    """The flag codes of one record's answer (its SQL run read-only again for the rows)."""
    from kgsql.correct.context import CheckContext
    from kgsql.generate.explain import explain_sql
    from kgsql.generate.flags import answer_flags
    from kgsql.generate.review import row_probe, value_probe

    sql, error = record.get("pred") or "", None
    extra = record.get("extra") or {}
    rows: list[Any] = []
    if record.get("error") or not sql:
        error = record.get("error") or "no SQL"
    else:
        result, error = rerun(schema, sql)
        rows = result.rows if result is not None else []
    candidates = extra.get("candidates") or []
    opinions = reread_opinions(schema, sql, rows if error is None else None, extra.get("opinions") or [])
    with CheckContext(schema) as ctx:  # the database probed as the review probes it
        explanation = explain_sql(sql, schema, probe=value_probe(ctx) if schema.path else None)
        flags = answer_flags(question=record["question"], sql=sql, schema=schema, explanation=explanation,
                             rows=rows, error=error, first_sql=candidates[0] if candidates else "",
                             rounds=int(record.get("rounds") or 1), exists=row_probe(ctx) if schema.path else None,
                             opinions=opinions)
    return [f.code for f in flags]


def reread_opinions(schema: Any, sql: str, rows: list[Any] | None,
                    opinions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The record's opinions (``kgsql.correct.opinions``) judged again, each run read-only, so what they say
    of the answer is this code's, whatever code recorded them."""
    from functools import lru_cache

    from kgsql.correct.opinions import opinion_of
    from kgsql.correct.rules import Checked
    from kgsql.db.result import QueryResult
    from kgsql.sql.dialects import dialect_of, sqlglot_name
    from kgsql.sql.names import parse_sql

    if rows is None or not opinions:
        return opinions
    dialect = sqlglot_name(dialect_of(schema))
    tree = lru_cache(maxsize=None)(lambda text: parse_sql(text, dialect))
    answer = Checked(sql, QueryResult([], [tuple(r) for r in rows]), None, [])
    out = []
    for recorded in opinions:
        said = recorded.get("sql") or ""
        other = Checked(said, *rerun(schema, said), []) if said else None
        out.append({**recorded, "agrees": opinion_of(answer, other, tree).agrees})
    return out


def gated(records: list[dict[str, Any]], below: float) -> list[dict[str, Any]]:
    """The records as ``opinions_below=below`` would have left them: an answer whose least sure name
    (``extra.least_sure``) was written with a probability of ``below`` or more loses its readings (the
    option would not have asked them); an answer without a least sure name keeps them, as the option does."""
    out = []
    for record in records:
        extra = record.get("extra") or {}
        probability = (extra.get("least_sure") or {}).get("probability")
        if probability is not None and float(probability) >= below and extra.get("opinions"):
            record = {**record, "extra": {**extra, "opinions": []}}
        out.append(record)
    return out


def score(records: list[dict[str, Any]], flags: list[list[str]]) -> dict[str, Any]:
    """The two shares and each flag's count on wrong and on right answers."""
    wrong = [f for r, f in zip(records, flags) if not r.get("spider_ex")]
    right = [f for r, f in zip(records, flags) if r.get("spider_ex")]
    by_code: dict[str, dict[str, int]] = {}
    for name, group in (("wrong", wrong), ("right", right)):
        for code, n in Counter(c for f in group for c in set(f)).items():
            by_code.setdefault(code, {"wrong": 0, "right": 0})[name] = n
    checked = sum(1 for r in records if (r.get("extra") or {}).get("opinions"))
    return {"records": len(records), "wrong": len(wrong), "right": len(right), "with_readings": checked,
            "wrong_flagged": sum(1 for f in wrong if f) / len(wrong) if wrong else None,
            "right_clean": sum(1 for f in right if not f) / len(right) if right else None,
            "goals": GOALS, "by_flag": dict(sorted(by_code.items()))}


def measure(records: list[dict[str, Any]], databases: Path, graph_root: Path) -> dict[str, Any]:
    from kgsql.schema_graph import SchemaGraph

    names = sorted({r["db_id"] for r in records})
    missing = [n for n in names if not (databases / n / f"{n}.sqlite").is_file()]
    if missing:
        raise KgsqlError(f"no database file for {missing[0]} under {databases}")
    with SchemaGraph.of_own(graph_root) as graph:
        for name in names:
            graph.ingest(databases / name / f"{name}.sqlite", name=name)
        schemas = {name: graph.schema(name) for name in names}
    flags = [record_flags(r, schemas[r["db_id"]]) for r in records]
    report = score(records, flags)
    report["per_record"] = [{"id": r.get("id"), "db_id": r["db_id"], "spider_ex": r.get("spider_ex"), "flags": f}
                            for r, f in zip(records, flags)]
    return report


def summary(report: dict[str, Any]) -> str:
    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{100 * x:.1f} %"

    lines = [f"{report['records']} answers: {report['wrong']} wrong, {report['right']} right",
             f"wrong answers with >= 1 flag: {pct(report['wrong_flagged'])} (goal >= 60 %)",
             f"right answers with no flag:   {pct(report['right_clean'])} (goal >= 90 %)",
             f"answers with readings (opinions): {report['with_readings']}",
             "flag               on wrong  on right"]
    lines += [f"{code:<18} {n['wrong']:>8}  {n['right']:>8}" for code, n in report["by_flag"].items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from kgsql.cli_types import OneLineParser

    p = OneLineParser(prog="python -m kgsql.lab.flag_rate", description=__doc__,
                      formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("records", type=Path, help="an eval's records.jsonl")
    p.add_argument("--databases", type=Path, required=True, help="folder of <db_id>/<db_id>.sqlite")
    p.add_argument("--graph-root", type=Path, help="embedded graph folder to ingest into (default: a temporary one)")
    p.add_argument("--opinions-below", type=float, metavar="P",
                   help="score the readings only of answers whose least sure name was below probability P "
                        "(the method's opinions_below)")
    p.add_argument("--out", type=Path, help="write the report (with each record's flags) as JSON here")
    args = p.parse_args(argv)
    try:
        records = read_records(args.records)
        if args.opinions_below is not None:
            records = gated(records, args.opinions_below)
        with tempfile.TemporaryDirectory(prefix="kgsql-flags-") as tmp:
            report = measure(records, args.databases, args.graph_root or Path(tmp))
    except KgsqlError as exc:
        print(f"kgsql.lab.flag_rate: error: {exc}", file=sys.stderr)
        return 1
    print(summary(report))
    if args.out is not None:
        args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
