"""``python -m kgsql.fewshot precompute POOL``: fill the example caches ahead of a run.

    python -m kgsql.fewshot precompute spider/train_7000.json          # masked + plain embeddings
    python -m kgsql.fewshot precompute log.jsonl --db-dir dbs/ --cot   # and auto-CoT for every example

Embeddings of a 7000-question pool take a few CPU minutes; auto-CoT of a
whole pool far longer (every phrase of every question is encoded), which is
why runs otherwise explain only the examples they pick.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from kgsql.errors import KgsqlError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kgsql.fewshot", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    pre = sub.add_parser("precompute", help="embed a pool (and optionally explain it) into the cache")
    pre.add_argument("pool", type=Path, help="Spider-format JSON or a JSONL query log")
    pre.add_argument("--db-dir", type=Path, default=None, help="SQLite files of the pool's databases")
    pre.add_argument("--encoder", default=None, help="encoder name (default minilm)")
    pre.add_argument("--cot", action="store_true", help="also compute auto-CoT for every example (slow)")
    args = parser.parse_args(argv)
    try:
        from kgsql.fewshot.cot import AutoCoT
        from kgsql.fewshot.embed import PoolEmbeddings
        from kgsql.fewshot.pool import ExamplePool, SqliteSchemas

        schemas = SqliteSchemas(args.db_dir) if args.db_dir else None
        if args.pool.suffix == ".jsonl":
            pool = ExamplePool.from_jsonl(args.pool, schemas=schemas)
        else:
            pool = ExamplePool.from_spider(args.pool, db_dir=args.db_dir)
        for masked in (True, False):
            t0 = time.perf_counter()
            emb = PoolEmbeddings(pool, args.encoder, masked=masked)
            print(f"{'masked' if masked else 'plain'}: {emb.vectors.shape[0]} vectors in "
                  f"{time.perf_counter() - t0:.1f}s -> {emb.cache_path}")
        if args.cot:
            t0 = time.perf_counter()
            cot = AutoCoT(pool, args.encoder)
            print(f"auto-CoT: {cot.precompute()} new in {time.perf_counter() - t0:.1f}s -> {cot.cache_path}")
    except KgsqlError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
