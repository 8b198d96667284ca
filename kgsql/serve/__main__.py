"""``python -m kgsql serve [--host 127.0.0.1] [--port 8766]``: keep kgsql warm for ask, notebooks and tools.

While it runs, ``kgsql ask`` sends its questions here (no model start, no
encoder load); the API is described at ``http://HOST:PORT/api/docs``.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys

from kgsql.cli_types import OneLineParser, positive_float, positive_int
from kgsql.db.privilege import add_privileged_flag, apply_privileged_flag
from kgsql.errors import KgsqlError
from kgsql.secrets import redact

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="python -m kgsql serve", description=__doc__,
                      formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8766, help="port (default 8766; 0: any free port)")
    p.add_argument("--graph", help="Bolt URI of the schema graph (default: KGSQL_GRAPH_URI or embedded)")
    p.add_argument("--allow-remote", action="store_true",
                   help="listen on a non-loopback --host (the API has no authentication: put a proxy in front)")
    p.add_argument("--max-busy", type=positive_int, default=4,
                   help="reads (databases, tables, graph) served at once, and questions (select, ask) at once "
                        "(default 4 each; more get 503)")
    p.add_argument("--max-sql", type=positive_int, default=4,
                   help="requests running SQL (sql, examples) at once, each in its own worker process "
                        "(default 4; more get 503)")
    p.add_argument("--sql-timeout", type=positive_float, default=30.0,
                   help="seconds a query of /api/sql or /api/examples may run (default 30; its worker is killed "
                        "after)")
    p.add_argument("--idle-stop", type=positive_float, default=None, metavar="SECONDS",
                   help="stop after this many seconds without a request (the service kgsql ask starts uses it)")
    p.add_argument("--lazy", action="store_true",
                   help="load the encoder and the model on the first question instead of at start")
    add_privileged_flag(p)
    return p


def _interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    apply_privileged_flag(args)
    try:
        if args.host not in LOOPBACK and not args.allow_remote:
            raise KgsqlError(f"--host {args.host}: the service listens on loopback only unless --allow-remote "
                             f"(it has no authentication)")
        if not 0 <= args.port < 65536:
            raise KgsqlError("--port must be 0-65535")
        from kgsql.llm.errors import ModelNotPulledError
        from kgsql.paths import write_private
        from kgsql.schema_graph import SchemaGraph
        from kgsql.serve.client import state_file
        from kgsql.serve.http import ApiServer
        from kgsql.serve.service import Service

        service = Service(lambda: SchemaGraph.open(args.graph), graph_uri=args.graph or os.environ.get("KGSQL_GRAPH_URI"),
                          sql_timeout_s=args.sql_timeout)
        service.graph  # noqa: B018 - connect now: a wrong graph fails here, not on the first request
        if not args.lazy:
            print("kgsql serve: loading the encoder and the model...", file=sys.stderr, flush=True)
            try:
                service.warm()
            except ModelNotPulledError as exc:  # the page, the graph and /api/sql need no model
                print(f"kgsql serve: warning: {redact(str(exc))}; the page, the graph and SQL work, questions "
                      f"will say this until a model is pulled", file=sys.stderr, flush=True)
        try:
            server = ApiServer((args.host, args.port), service, max_busy=args.max_busy, max_sql=args.max_sql,
                               allow_remote=args.allow_remote)
        except OSError as exc:
            raise KgsqlError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
    except KgsqlError as exc:
        print(f"kgsql serve: error: {redact(str(exc))}", file=sys.stderr)
        return 1
    state = state_file()
    write_private(state, json.dumps({"url": server.url, "pid": os.getpid()}).encode("utf-8"))
    signal.signal(signal.SIGTERM, _interrupt)  # a plain kill stops it cleanly too
    if args.idle_stop is not None:
        from kgsql.serve.idle import stop_when_idle

        stop_when_idle(server.clock, args.idle_stop, server.shutdown)
    stops = f"Ctrl-C stops{f', or {args.idle_stop:g} s unused' if args.idle_stop is not None else ''}"
    print(f"kgsql serve: {server.url} (API: {server.url}/api/docs); {stops}", file=sys.stderr, flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        try:
            if json.loads(state.read_text(encoding="utf-8")).get("pid") == os.getpid():
                state.unlink()
        except (OSError, ValueError):
            pass
        service.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
