"""``python -m kgsql.ask --db NAME "question"``: answer a question with SQL.

Uses the schema graph (embedded unless ``--graph``/``KGSQL_GRAPH_URI``) and the
LLM configured by ``KGSQL_LLM_BASE_URL``/``KGSQL_LLM_MODEL`` or, with none, the
local model (``python -m kgsql.llm pull qwen2.5-coder-1.5b`` first). Each
``--no-*`` flag switches one method component off, for ablations.
``--conversation NAME`` continues a conversation across invocations: the earlier
questions go with this one, which is rewritten to stand alone first.
Without ``--db`` the question is routed: the likeliest database of the graph answers it, and
when a second one was nearly as likely both are named (``kgsql.route``).
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

from kgsql.cli_types import OneLineParser, positive_float, positive_int
from kgsql.db.cells import shown as shown_cell
from kgsql.db.privilege import add_privileged_flag, apply_privileged_flag
from kgsql.errors import InputError, KgsqlError
from kgsql.secrets import redact

OFF_FLAGS = {
    "--no-kg-schema": (("kg_schema",), "plain CREATE TABLE of the whole database instead of the KG-based schema"),
    "--no-selection": (("selection",), "no knowledge selection (the whole database in the KG-based schema)"),
    "--no-evidence": (("evidence",), "no generated evidence"),
    "--no-tips": (("correction",), "no self-correction (one generation, no checks)"),
    "--no-sdbms": (("sdbms",), "no SpatiaLite knowledge"),
    "--no-geo": (("geo",), "no geographic table descriptions"),
    "--no-least-to-most": (("least_to_most",), "direct SQL instead of least-to-most (kgsql-classic)"),
    "--no-hints": (("value_hints", "join_hints"), "no graph-derived hints (kgsql)"),
}


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="python -m kgsql.ask", description=__doc__,
                      formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("question")
    p.add_argument("--db", help="database name in the graph (without: the question is routed to the likeliest "
                                 "database, and a close second is named)")
    p.add_argument("--method", default="kgsql",
                   help="named method (kgsql, dail-sql, act-sql, sspa, sspa-*, kgsql-*; see docs/methods.md); "
                        "the --no-* flags apply on top of it")
    p.add_argument("--evidence", help="evidence to use (BIRD's oracle knowledge)")
    p.add_argument("--examples", type=Path, metavar="FILE",
                   help="few-shot examples: Spider-format JSON or a JSONL query log of {question, sql, db_id}; "
                        "their schemas come from the graph, or database/ beside the file")
    p.add_argument("--user-evidence", choices=["add", "replace", "ignore"], default="add",
                   help="how user evidence combines with generated evidence")
    p.add_argument("--graph", help="Bolt URI (default: embedded)")
    p.add_argument("--model", default=None,
                   help="local model (default KGSQL_LOCAL_MODEL or qwen2.5-coder-1.5b); with KGSQL_LLM_BASE_URL "
                        "set: the endpoint's model name. Answered in this process, not by a running service")
    p.add_argument("--max-rounds", type=positive_int, default=None, help="generations at most (self-correction)")
    p.add_argument("--timeout", type=positive_float, default=30.0, help="SQL execution timeout, seconds")
    p.add_argument("--max-rows", type=positive_int, default=1000, help="result rows kept at most")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                   help="set a method option, e.g. --set shots=3 (repeatable; docs/methods.md lists them)")
    p.add_argument("--json", action="store_true", help="print the whole answer as JSON")
    p.add_argument("--trace", action="store_true", help="also print every prompt and response")
    p.add_argument("--explain", action="store_true",
                   help="also print what the query does: tables, joins with their graph edges, filters, aggregation "
                        "(from the SQL and the graph, no model call; --json always carries it)")
    p.add_argument("--conversation", metavar="NAME",
                   help="continue conversation NAME: its earlier questions (the last 6) give this one its context; "
                        "kept in kgsql's private state folder")
    p.add_argument("--new-conversation", action="store_true",
                   help="with --conversation: forget its earlier questions, this one starts it over")
    p.add_argument("--conversations", action=ListConversations,
                   help="list the saved conversations (name, database, turns, last question) and exit")
    for flag, (_fields, help_text) in OFF_FLAGS.items():
        p.add_argument(flag, action="store_true", help=help_text)
    add_privileged_flag(p)
    return p


def overrides_from(args: argparse.Namespace, known: set[str] | None = None) -> dict[str, Any]:
    """Method option fields set on the command line (ablation flags, limits, ``--set``).

    ``known``: the method's option names; a flag for an option the method lacks is an error,
    limits it lacks are left out."""
    from kgsql.methods import parse_sets

    overrides = limits_from(args)
    if known is not None:
        overrides = {k: v for k, v in overrides.items() if k in known}
    for flag, names in switched_off(args).items():
        if known is not None and not set(names) <= known:
            raise InputError(f"{flag}: method '{args.method}' has no such component")
        overrides.update({f: False for f in names})
    overrides.update(parse_sets(args.sets))
    return overrides


def limits_from(args: argparse.Namespace) -> dict[str, Any]:
    """The limits ``ask`` always passes (a method lacking one ignores it)."""
    limits: dict[str, Any] = {"timeout_s": args.timeout, "max_rows": args.max_rows,
                              "user_evidence": args.user_evidence}
    if args.max_rounds is not None:
        limits["max_rounds"] = args.max_rounds
    return limits


def switched_off(args: argparse.Namespace) -> dict[str, tuple[str, ...]]:
    """The ``--no-*`` flags given: flag -> the option fields it turns off."""
    return {flag: names for flag, (names, _help) in OFF_FLAGS.items()
            if getattr(args, flag.lstrip("-").replace("-", "_"))}


def load_examples(path: Path, graph: Any) -> Any:
    """The few-shot pool of ``--examples``: schemas from the graph, else from SQLite files beside it."""
    from kgsql.fewshot.pool import ExamplePool
    from kgsql.ingest.sources import SqliteSchemas
    from kgsql.schema.sources import FirstOf, GraphSchemas

    if not path.is_file():
        raise InputError(f"examples file not found: {path}")
    schemas = FirstOf(GraphSchemas(graph), SqliteSchemas(path.parent / "database"), SqliteSchemas(path.parent))
    if path.suffix == ".jsonl":
        return ExamplePool.from_jsonl(path, schemas=schemas)
    return ExamplePool.from_spider(path, schemas=schemas)


class ListConversations(argparse.Action):
    """``--conversations``: print each saved conversation on a line and exit; no question is needed."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        from kgsql.conversation.saved import saved_conversations

        saved = saved_conversations()
        for name, db, turns in saved:
            last = f"\tlast: {turns[-1].question}" if turns else ""
            print(f"{name}\t{db}\t{len(turns)} turn(s){last}")
        if not saved:
            print("no saved conversations (kgsql ask --conversation NAME starts one)")
        parser.exit(0)


def warning_lines(warnings: list[dict[str, str]]) -> list[str]:
    """An answer's flags (``{code, text}``, kgsql.generate.flags) as a person reads them under its SQL."""
    return [f"Warning [{flag['code']}]: {flag['text']}" for flag in warnings]


def format_table(columns: list[str], rows: list[tuple[Any, ...]], limit: int = 20) -> str:
    if not columns:
        return "(no columns)"
    cells = [[shown_cell(v)[:40] for v in row] for row in rows[:limit]]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    line = " | ".join(c.ljust(w) for c, w in zip(columns, widths))
    out = [line, "-+-".join("-" * w for w in widths)]
    out += [" | ".join(v.ljust(w) for v, w in zip(r, widths)) for r in cells]
    if len(rows) > limit:
        out.append(f"... {len(rows) - limit} more row(s)")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.new_conversation and args.conversation is None:
        parser.error("--new-conversation needs --conversation NAME")
    if args.conversation is not None and args.db is None:
        parser.error("--conversation needs --db: a conversation belongs to one database")
    apply_privileged_flag(args)
    try:
        conversation = _conversation(args)
        history = conversation.history if conversation is not None else []
        history_sql = conversation.history_sql if conversation is not None else []  # read under context=history
        data = _via_service(args, history, history_sql)
        if data is None:
            data = _here(args, history, history_sql)
        data["history"] = history
        if conversation is not None:  # a failed answer is a turn too: the question still sets the context
            from kgsql.conversation.saved import save

            conversation.record(args.question, data)
            save(args.conversation, conversation)
    except KgsqlError as exc:
        print(f"kgsql.ask: error: {redact(str(exc))}", file=sys.stderr)
        return 1
    if data["error"] and not data["sql"]:  # nothing to show: the model never produced SQL
        print(f"kgsql.ask: error: {redact(data['error'])}", file=sys.stderr)
        return 1
    if args.json:
        if not args.trace:
            data.pop("prompts", None)
        print(json.dumps(data, indent=2, ensure_ascii=False, default=str))
    else:
        show(data, trace=args.trace, explain=args.explain)
        note = examples_note(data)
        if note:
            print(f"kgsql.ask: {note}", file=sys.stderr)
    return 0 if data["error"] is None else 2


def examples_note(data: dict[str, Any]) -> str:
    """Which few-shot examples the answer was written with: a number means little without its source."""
    shown = len(data.get("examples") or ())
    source = data.get("example_source") or ""
    if not shown:
        return "" if data.get("steps") else "no examples shown: zero-shot"
    if source == "taught":
        return f"{shown} example(s) taught to {data['db']} shown"
    if source == "derived":
        return (f"{shown} example(s) written from {data['db']}'s own geometry tables shown (teach it real ones "
                f"with ingest --history)")
    if source == "shipped":
        return (f"{shown} of kgsql's shipped examples shown (the measured default; a database's own, taught "
                f"with ingest --history or the page's 'keep as an example', replace them)")
    return f"{shown} example(s) from the examples given shown"


def routing_line(routing: dict[str, Any]) -> str:
    """Which database a routed question went to; a close second is named (answered on the first)."""
    line = f"{routing['db']} (routed: no --db given)"
    line += "".join(f"; {note}" for note in routing.get("notes") or ())  # the name that chose it, the fallback
    if routing.get("tied_with"):
        line += (f"; close call: '{routing['tied_with']}' was nearly as likely, answered on '{routing['db']}' "
                 f"(give --db {routing['tied_with']} for the other)")
    if routing.get("matched") is False:
        line += "; no database's words, names or values are in the question: routed by meaning alone"
    return line


def _conversation(args: argparse.Namespace) -> Any:
    """The saved conversation ``--conversation`` names (None without one)."""
    if args.conversation is None:
        return None
    from kgsql.conversation.saved import load

    return load(args.conversation, args.db, new=args.new_conversation)


def _via_service(args: argparse.Namespace, history: list[str], history_sql: list[str]) -> dict[str, Any] | None:
    """The answer from a running ``kgsql serve`` (nothing to load here; started now when none runs:
    ``kgsql.serve.autostart``), or None to answer in-process.

    ``--graph``, ``--examples`` and ``--model`` are answered here: the service has its own graph, examples and
    model."""
    if args.graph is not None or args.examples is not None or args.model is not None:
        return None
    from kgsql.serve.client import call, find_service, service_lookup_off

    url = find_service()
    if url is None and not service_lookup_off():
        from kgsql.generate.answer import check_question
        from kgsql.llm.openai_lm import check_endpoint
        from kgsql.methods import get_method
        from kgsql.serve.autostart import start_service

        check_question(args.question)  # bad input and a dead endpoint fail here, before a service starts
        get_method(args.method)
        check_endpoint()
        url = start_service()
    if url is None:
        return None
    sets: dict[str, Any] = {f: False for names in switched_off(args).values() for f in names}
    sets.update({k: v for k, v in (item.split("=", 1) for item in args.sets if "=" in item)})
    bad = [item for item in args.sets if "=" not in item]
    if bad:
        raise InputError(f"--set {bad[0]}: expected KEY=VALUE")
    body = {"db": args.db, "question": args.question, "method": args.method, "evidence": args.evidence,
            "sets": sets, "limits": limits_from(args), "trace": args.trace, "history": history}
    if history:
        body["history_sql"] = history_sql
    data = call(url, "POST", "/api/ask", body)
    if history and "history" not in data:  # a service older than conversations ignored them: answer here
        return None
    return data


def _here(args: argparse.Namespace, history: list[str], history_sql: list[str]) -> dict[str, Any]:
    """Answer in this process: open the graph, build the method, start the model."""
    from kgsql.fewshot.shipped import SHIPPED_EXAMPLES
    from kgsql.generate.answer import check_question
    from kgsql.llm.factory import default_lm
    from kgsql.llm.openai_lm import check_endpoint
    from kgsql.methods import build, get_method
    from kgsql.schema_graph import SchemaGraph

    check_question(args.question)
    spec = get_method(args.method)  # unknown method: fail before starting anything
    overrides = overrides_from(args, {f.name for f in fields(spec.options)})
    check_endpoint()  # KGSQL_LLM_BASE_URL malformed or down: fail now, before graph and retrieval work
    with SchemaGraph.open(args.graph) as graph:
        routing = None
        if args.db is None:
            from kgsql.route.graph_router import route_question

            routing = route_question(graph, args.question)
        db = args.db or routing.db  # type: ignore[union-attr]
        graph.database_info(db)  # unknown database: fail before starting a model
        pool = load_examples(args.examples, graph) if args.examples is not None else SHIPPED_EXAMPLES
        t2s = build(args.method, graph, default_lm(args.model), pool=pool, **overrides)
        more = {"history_sql": history_sql} if history and getattr(t2s, "wants_history_sql", False) else {}

        def ask_on(name: str) -> Any:
            return t2s.ask(args.question, db=name, evidence=args.evidence, history=history or None, **more)

        from kgsql.route.fallback import answer_turn

        answer, routing = answer_turn(routing, db, history, ask_on)  # the next database if this one says nothing
        data = answer.to_dict()
        if routing is not None:
            data["routing"] = routing.to_dict()
        return data


def show(data: dict[str, Any], *, trace: bool = False, explain: bool = False) -> None:
    """The answer for a person: (the episode or the prompts,) the SQL, the table, the cost."""
    if trace and data.get("steps"):  # agent mode: the episode, step by step
        for step in data["steps"]:
            for key in ("thought", "action", "error", "observation"):
                if step.get(key):
                    print(f"{key.capitalize()}: {step[key]}")
            print()
    elif trace:
        for step in data.get("prompts") or []:
            print(f"----- {step['step']} prompt -----\n{step['messages'][-1]['content']}\n"
                  f"----- {step['step']} response -----\n{step['response']}\n")
    if data.get("history"):
        print("Earlier questions: " + " ".join(f"{i}. {q}" for i, q in enumerate(data["history"], 1)))
        if data.get("standalone") and data["standalone"] != data["question"]:  # rewritten (context=rewrite)
            print(f"Understood as: {data['standalone']}")
    if data.get("routing"):
        print(f"Database: {routing_line(data['routing'])}")
    if data.get("evidence"):
        print(f"Evidence: {data['evidence']}")
    if data.get("refusal"):  # the database lacks what the question needs: say so, show no rows
        print(data["refusal"][:1].upper() + data["refusal"][1:])
        tried = data.get("candidates") or []
        if tried:
            print(f"(the query tried: {tried[-1]})")
        return
    print(f"SQL: {data['sql'] or '(none)'}")
    for line in warning_lines(data.get("warnings") or []):
        print(line)
    if explain:
        lines = (data.get("explanation") or {}).get("lines") or ["(no explanation: no SQL)"]
        print("Explanation:\n" + "\n".join(f"  - {line}" for line in lines))
    if data["error"]:
        print(f"Error: {data['error']}")
    else:
        print(format_table(data["columns"], [tuple(r) for r in data["rows"]]))
    tokens = (data.get("tokens") or {}).get("total", 0)
    print(f"({data.get('rounds', 0)} round(s), {tokens} tokens, {float(data.get('latency_s') or 0):.1f}s)")


if __name__ == "__main__":
    sys.exit(main())
