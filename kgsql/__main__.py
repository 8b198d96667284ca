"""``python -m kgsql VERB ...`` (or the ``kgsql`` command): every command of the project behind one name.

    kgsql ingest DB.sqlite             build the schema graph of a database
    kgsql ask --db NAME "question"     answer a question with SQL
    kgsql eval run|score|compare ...   benchmarks
    kgsql demo                         the shipped example, end to end

Each verb is its own module's ``main(argv) -> int`` (``python -m kgsql.ask``
and friends keep working); modules are imported only when their verb runs,
so ``kgsql --help`` is instant. A kgsql error that a verb does not catch
itself ends here as one line and exit status 1, never a traceback.
"""
from __future__ import annotations

import importlib
import sys
from typing import Sequence

from kgsql.errors import KgsqlError

#: verb -> (module with ``main(argv) -> int``, one line of help)
VERBS: dict[str, tuple[str, str]] = {
    "ingest": ("kgsql.ingest.cli", "build a database's schema knowledge graph"),
    "ask": ("kgsql.ask", "answer a question over an ingested database"),
    "eval": ("kgsql.eval.__main__", "run, score and compare benchmarks (run, score, compare, linking)"),
    "demo": ("kgsql.demo", "ingest the shipped example database and answer two questions"),
    "llm": ("kgsql.llm.cli", "fetch and serve the local models (pull, serve)"),
    "graph": ("kgsql.graph.__main__", "the graph: ingested databases, the embedded server, exports, knowledge"),
    "sql": ("kgsql.sql_cli", "run a read-only query on an ingested database, through the guard"),
    "fewshot": ("kgsql.fewshot.__main__", "few-shot example pools"),
    "serve": ("kgsql.serve.__main__", "keep graph, encoder and model warm behind a local HTTP API (ask uses it)"),
    "mcp": ("kgsql.mcp.__main__", "serve the graph's tools to MCP clients (stdio, or --http on loopback)"),
}


def usage() -> str:
    width = max(map(len, VERBS))
    lines = [f"  {verb:<{width}}  {help_text}" for verb, (_module, help_text) in VERBS.items()]
    return "usage: kgsql VERB [ARGS...]   (kgsql VERB --help for a verb's options)\n\nverbs:\n" + "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in {"-h", "--help", "help"}:
        print(usage())
        return 0 if args else 2
    verb, rest = args[0], args[1:]
    if verb not in VERBS:
        print(f"kgsql: unknown verb '{verb}'; known: {', '.join(VERBS)}", file=sys.stderr)
        return 2
    module = importlib.import_module(VERBS[verb][0])
    try:
        return int(module.main(rest) or 0)
    except KgsqlError as exc:
        print(f"kgsql {verb}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"kgsql {verb}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
