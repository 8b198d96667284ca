"""``python -m kgsql.demo``: the main job on the shipped example database.

Ingests ``examples/geo/geo.sqlite`` into the schema graph (the embedded server
unless ``KGSQL_GRAPH_URI`` is set), prints what the graph now knows, a join
path found by the graph, writes a picture of the schema graph, and answers
example questions end to end with kgsql's default method (``kgsql.methods``: one
call over the graph's schema, values and hints, corrected by execution): the LLM at
``KGSQL_LLM_BASE_URL`` if set, else the local model (``KGSQL_LOCAL_MODEL``;
the demo defaults to the 0.5B model so it finishes in minutes on 2 cores).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kgsql.errors import KgsqlError

REPO = Path(__file__).resolve().parents[1]
QUESTIONS = [
    "Which river is the longest?",
    "How many cities are there in each province?",
]
DEMO_MODEL = "qwen2.5-coder-0.5b"
EXAMPLE = REPO / "examples" / "geo" / "geo.sqlite"


def describe(graph, db: str) -> str:  # type: ignore[no-untyped-def]
    schema = graph.schema(db)
    lines = [f"Database '{db}' ({'SpatiaLite' if schema.is_spatial else 'SQLite'}):"]
    for table in schema.tables:
        lines.append(f"  {table.name} ({table.row_count} rows) - {table.geo_description or table.description}")
        for col in table.columns:
            bits = [col.type or "?"]
            if col.is_primary_key:
                bits.append("primary key")
            if col.spatial:
                bits.append(f"{col.spatial.geometry_type}, SRID {col.spatial.srid}")
            if col.value_examples:
                bits.append("e.g. " + ", ".join(col.value_examples[:3]))
            desc = f" - {col.description}" if col.description else ""
            lines.append(f"      {col.name}: {'; '.join(bits)}{desc}")
    for fk in schema.foreign_keys:
        lines.append(f"  foreign key {fk.table}.{fk.column} -> {fk.ref_table}.{fk.ref_column}")
    return "\n".join(lines)


def answer_questions(graph, db: str, questions: list[str]) -> None:  # type: ignore[no-untyped-def]
    import os
    import time

    from kgsql.ask import format_table, warning_lines
    from kgsql.llm.factory import default_lm
    from kgsql.methods import build

    os.environ.setdefault("KGSQL_LOCAL_MODEL", DEMO_MODEL)
    where = os.environ.get("KGSQL_LLM_BASE_URL") or f"local model {os.environ['KGSQL_LOCAL_MODEL']}"
    print(f"\nAnswering {len(questions)} question(s) with {where} (kgsql's default method)...")
    t2s = build("kgsql", graph, default_lm())
    for question in questions:
        t0 = time.perf_counter()
        answer = t2s.ask(question, db=db)
        print(f"\nQ: {question}")
        if answer.evidence:
            print(f"Evidence: {answer.evidence}")
        print(f"SQL: {answer.sql or '(none)'}")
        for line in warning_lines(answer.warnings):  # what a reader should check, as `ask` shows it (issue 34)
            print(line)
        print(f"Error: {answer.error}" if answer.error else format_table(answer.columns, answer.rows))
        print(f"({answer.rounds} round(s), {answer.tokens.get('total', 0)} tokens, "
              f"{time.perf_counter() - t0:.0f}s)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m kgsql.demo", description=__doc__)
    p.add_argument("--db-file", type=Path, default=EXAMPLE)
    p.add_argument("--out", type=Path, default=Path("out") / "geo-graph.html")
    p.add_argument("--questions", type=int, default=len(QUESTIONS), help="how many example questions to answer")
    p.add_argument("--question", action="append", help="ask this question instead (repeatable)")
    args = p.parse_args(argv)
    from kgsql.schema_graph import SchemaGraph

    try:
        with SchemaGraph.open() as graph:
            report = graph.ingest(args.db_file)
            db = report.per_database[0]["database"]
            server = graph.store.capabilities.server
            state = "changed" if report.changed else "already up to date"
            print(f"Ingested {args.db_file} into {graph.store.uri} ({server}): {report.tables} tables, "
                  f"{report.columns} columns, {report.foreign_keys} foreign keys, "
                  f"{report.spatial_columns} spatial columns ({state}, {report.seconds:.2f}s)\n")
            print(describe(graph, db))
            path = graph.join_path(db, "rivers", "provinces")
            if path:
                print(f"\nJoin path rivers -> provinces from the graph: {' -> '.join(path.tables)}")
                for hop in path.conditions:
                    print(f"    ON {' AND '.join(hop)}")
            print(f"\nSchema graph picture: {graph.export(db, args.out)}")
            questions = args.question or QUESTIONS[: args.questions]
            if questions:
                answer_questions(graph, db, questions)
    except KgsqlError as exc:
        print(f"kgsql.demo: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
