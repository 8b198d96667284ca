"""``python -m kgsql.eval linking``: schema-linking benchmark of retrieval methods.

For every question the gold tables/columns come from its gold SQL
(``kgsql.sql.gold_schema``; queries that cannot be resolved are reported and
left out). Methods:

* ``full``  - the whole schema (the token baseline);
* ``kgsql`` - ``SchemaRetriever.select`` (late interaction + values + joins);
* ``bm25``, ``dense`` - BM25 / pooled-MiniLM column rankings cut per question
  at the token count kgsql used for that question ("equal token budget");
* ``bm25_top10``, ``dense_top10`` - the same rankings at a fixed k = 10.

Each selection is rendered as plain ``CREATE TABLE`` text
(``kgsql.retrieve.budget``) and counted with the MiniLM WordPiece tokenizer
(``kgsql.lab.stats.TokenMeter``).
BIRD ships no SQLite files: schemas come from ``dev_tables.json`` plus the
description CSVs, and empty SQLite files are written to the cache so the
same code path runs (no values to find there).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from kgsql.cli_types import non_negative_int
from kgsql.errors import InputError
from kgsql.eval.datasets import available_benchmarks, get_benchmark
from kgsql.eval.datasets.registry import split_help
from kgsql.lab.stats import MethodStats, TokenMeter, collect, selection_stats
from kgsql.schema.model import DatabaseSchema
from kgsql.sql.gold_schema import GoldSchema, gold_schema

METHODS = ("full", "bm25", "dense", "kgsql", "bm25_top10", "dense_top10")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", required=True, choices=available_benchmarks())
    parser.add_argument("--data-dir", required=True, help="dataset folder (Spider root, BIRD dev_2024, spatial root)")
    parser.add_argument("--split", default=None, help=split_help())
    parser.add_argument("--limit", type=int, default=None, help="first N questions only")
    parser.add_argument("--db", dest="dbs", default=None, metavar="NAME[,NAME...]",
                        help="only the questions of these databases (BIRD: the ones whose SQLite files are here)")
    parser.add_argument("--json", dest="json_out", default=None, help="write metrics per method to this file")
    parser.add_argument("--encoder", default="minilm")
    parser.add_argument("--cache-dir", default=None, help="index cache (default: user cache dir)")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (1 on a shared machine)")
    parser.add_argument("--table-threshold", type=float, default=None)
    parser.add_argument("--column-threshold", type=float, default=None)
    parser.add_argument("--no-values", action="store_true", help="do not index database values")
    parser.add_argument("--details", default=None, help="write per-question selections (JSON lines)")
    parser.add_argument("--sweep", default=None, metavar="T:C,...",
                        help="also trace kgsql's recall/token curve over (table, column) threshold pairs, "
                             "e.g. 0.1:0.02,0.05:0.01,0.02:0.002 (one retrieval per question, reused)")
    parser.add_argument("--with-evidence", action="store_true",
                        help="append each question's evidence (BIRD's oracle knowledge) to it before retrieval")
    parser.add_argument("--half", choices=("first", "second"), default=None,
                        help="score one half of each database's questions only (fixed by --seed; "
                             "kgsql.mining.history.split_halves)")
    parser.add_argument("--learn", action="store_true",
                        help="with --half: first mine the other half's gold SQL with the rules "
                             "(joins, values, expressions) into the schemas, as a team's query log would")
    parser.add_argument("--seed", type=non_negative_int, default=0, help="seed of --half (default 0)")
    parser.add_argument("--pool-databases", action="store_true",
                        help="also kgsql_pooled: each question first routed among all the dataset's databases "
                             "(kgsql.route), then selected on the routed one; a wrong route selects nothing right")
    parser.add_argument("--column-meanings", default=None,
                        help="extra column notes {'db|table|column': text} (BIRD: dev_2024/column_meaning_tasql.json)")


# --------------------------------------------------------------------------- data


@dataclass
class Item:
    qid: str
    db_id: str
    question: str
    gold: GoldSchema


@dataclass
class Bench:
    schemas: dict[str, DatabaseSchema]
    db_paths: dict[str, str | None]
    items: list[Item]
    unresolved: list[tuple[str, str, list[str]]] = field(default_factory=list)
    pool: dict[str, DatabaseSchema] = field(default_factory=dict)  # every database, to route among (--pool-databases)


def load_bench(dataset: str, data_dir: str, split: str | None, limit: int | None,
               cache_dir: Path, column_meanings: str | None = None, *, with_evidence: bool = False,
               half: str | None = None, learn: bool = False, seed: int = 0,
               dbs: list[str] | None = None, pool: bool = False) -> Bench:
    """Questions, schemas, database files and resolved gold schemas of a dataset.

    ``with_evidence``: each question is followed by its evidence (BIRD's hints), as a system given
    that knowledge would see it. ``half``: keep one half of each database's questions; ``learn``:
    mine the other half's gold SQL into the schemas first (no question is both learnt and tested).
    ``dbs``: only these databases' questions (before ``limit``); ``pool``: also every database's schema, to
    route each question among them."""
    from kgsql.ingest.sources import SqliteSchemas, TablesJsonSchemas
    from kgsql.ingest.tables_json import apply_column_meanings, load_column_meanings, write_empty_sqlite

    if learn and half is None:
        raise InputError("--learn needs --half (mine one half, test the other)")

    benchmark = get_benchmark(dataset)
    ds = benchmark.load(data_dir, split)
    examples = ds.questions
    if dbs:
        unknown = sorted(set(dbs) - {e.db_id for e in examples})
        if unknown:
            raise InputError(f"--db: no questions of database {', '.join(unknown)} in {data_dir}")
        examples = [e for e in examples if e.db_id in set(dbs)]
    examples = examples[:limit] if limit else examples
    db_ids = sorted({e.db_id for e in examples})
    schemas: dict[str, DatabaseSchema] = {}
    paths: dict[str, str | None] = {}
    if benchmark.schema_source == "sqlite":
        files = SqliteSchemas(files={db: ds.db_path(db) for db in db_ids}, enrich=True)
        for db in db_ids:
            p = files.path(db)
            if p is not None:
                schemas[db] = files(db)
                paths[db] = str(p)
    else:
        if ds.tables_file is None:
            raise InputError(f"no tables.json next to the {dataset} questions in {data_dir}")
        find_descriptions = benchmark.descriptions_dir
        desc_root = find_descriptions(Path(data_dir), ds.split) if find_descriptions is not None else None
        source = TablesJsonSchemas(ds.tables_file, desc_root)
        schemas = {db: source(db) for db in db_ids if db in source}
        for db in db_ids:
            p = ds.db_path(db)
            if p is None and db in schemas:  # BIRD dev: build an empty SQLite from the schema
                p = cache_dir / "empty_sqlite" / dataset / db / f"{db}.sqlite"
                if not p.exists():
                    write_empty_sqlite(schemas[db], p)
            paths[db] = str(p) if p is not None else None
    if column_meanings:
        meanings = load_column_meanings(column_meanings)
        for schema in schemas.values():
            apply_column_meanings(schema, meanings)
    if half is not None:
        from kgsql.mining.history import split_examples

        tested, learnt = split_examples(examples, half, seed)
        if learn:
            _learn_into(schemas, learnt)
        examples = tested
    bench = Bench(schemas, paths, [])
    if pool:
        every = sorted(ds.db_files) if benchmark.schema_source == "sqlite" else sorted(source.entries())
        read = SqliteSchemas(files={db: ds.db_path(db) for db in every}, enrich=True) \
            if benchmark.schema_source == "sqlite" else source
        bench.pool = {db: schemas.get(db) or read(db) for db in every}
    _add_items(bench, examples, schemas, with_evidence)
    return bench


def _add_items(bench: Bench, examples: list[Any], schemas: dict[str, DatabaseSchema], with_evidence: bool) -> None:
    """Each question with the first gold alternative that resolves on its schema; the rest as unresolved."""
    for e in examples:
        schema = schemas.get(e.db_id)
        if schema is None:
            bench.unresolved.append((e.id, e.db_id, ["no schema for database"]))
            continue
        chosen: GoldSchema | None = None
        problems: list[str] = []
        for sql in e.gold:  # first alternative that resolves
            g = gold_schema(sql, schema)
            if g.ok and g.tables:
                chosen = g
                break
            problems.extend(g.unresolved or ["no table"])
        if chosen is None:
            bench.unresolved.append((e.id, e.db_id, problems))
            continue
        question = f"{e.question} {e.evidence}".strip() if with_evidence and e.evidence else e.question
        bench.items.append(Item(e.id, e.db_id, question, chosen))


def _learn_into(schemas: dict[str, DatabaseSchema], examples: list[Any]) -> None:
    """Rule-mine the examples' gold SQL and merge the facts into their schemas."""
    from kgsql.mining.rules import Pair, mine_pair
    from kgsql.schema.facts import apply_facts

    facts: dict[str, list[Any]] = {}
    for e in examples:
        schema = schemas.get(e.db_id)
        if schema is not None:
            facts.setdefault(e.db_id, []).extend(mine_pair(Pair(e.id, e.db_id, e.question, e.gold[0]), schema) or [])
    for db, found in facts.items():
        apply_facts(schemas[db], found)


# --------------------------------------------------------------------------- equal token budget


def cut_at_budget(ranking: list[tuple[str, str]], budget: int, meter: TokenMeter, full: DatabaseSchema) -> list[tuple[str, str]]:
    """The prefix of ``ranking`` whose rendered size is closest to ``budget`` tokens (binary search)."""
    lo, hi = 1, len(ranking)
    while lo < hi:  # smallest k with tokens >= budget
        mid = (lo + hi) // 2
        if meter(full, ranking[:mid]) >= budget:
            hi = mid
        else:
            lo = mid + 1
    k = lo
    if k > 1 and abs(meter(full, ranking[: k - 1]) - budget) <= abs(meter(full, ranking[:k]) - budget):
        k -= 1
    return ranking[:k]


# --------------------------------------------------------------------------- run


def run_benchmark(bench: Bench, *, encoder: str = "minilm", cache_dir: Path | None = None,
                  config_changes: dict[str, Any] | None = None, use_values: bool = True,
                  details: Callable[[dict[str, Any]], None] | None = None,
                  progress: bool = True) -> dict[str, dict[str, float]]:
    """Metrics per method (see module doc) over ``bench.items``; with ``bench.pool`` also ``kgsql_pooled``."""
    from kgsql.retrieve.baselines import BM25Ranker, DenseRanker
    from kgsql.retrieve.retriever import SchemaRetriever

    retriever = SchemaRetriever(encoder, cache_dir=cache_dir)
    if config_changes:
        retriever = retriever.with_config(**config_changes)
    meter = TokenMeter()
    stats = {m: MethodStats() for m in METHODS}
    prepared, bm25, dense, full_tokens, all_cols = {}, {}, {}, {}, {}
    for db in sorted({it.db_id for it in bench.items}):
        schema = bench.schemas[db]
        t = time.perf_counter()
        prepared[db] = retriever.prepare(schema, db_path=bench.db_paths.get(db) if use_values else None)
        stats["kgsql"].index_s += time.perf_counter() - t
        t = time.perf_counter()
        bm25[db] = BM25Ranker(prepared[db].docs)
        stats["bm25"].index_s += time.perf_counter() - t
        stats["bm25_top10"].index_s = stats["bm25"].index_s
        dense[db] = DenseRanker(retriever.encoder, prepared[db].index)  # pooled vectors come with the index
        all_cols[db] = [(t.name, c.name) for t in schema.tables for c in t.columns]
        full_tokens[db] = meter(schema, all_cols[db])
    stats["dense"].index_s = stats["dense_top10"].index_s = stats["kgsql"].index_s
    route = _pool_router(bench, retriever.encoder, stats, cache_dir / "route" if cache_dir is not None else None)
    n = len(bench.items)
    for i, it in enumerate(bench.items):
        schema, ft = bench.schemas[it.db_id], full_tokens[it.db_id]
        stats["full"].add(it.gold, set(all_cols[it.db_id]), {t.name for t in schema.tables}, ft, ft, 0.0)
        t = time.perf_counter()
        sel = retriever.select(schema, it.question, db_path=bench.db_paths.get(it.db_id) if use_values else None)
        ms = (time.perf_counter() - t) * 1000
        cols = sel.column_keys()
        budget = meter(schema, cols)
        stats["kgsql"].add(it.gold, cols, set(sel.tables), budget, ft, ms)
        if route is not None:  # routed elsewhere: nothing of the question's own database is selected
            right, route_ms = route(it)
            stats["kgsql_pooled"].add(it.gold, cols if right else set(), set(sel.tables) if right else set(),
                                      budget, ft, ms + route_ms)
        for name, ranker in (("bm25", bm25[it.db_id]), ("dense", dense[it.db_id])):
            t = time.perf_counter()
            ranking = ranker.rank(it.question)
            ms = (time.perf_counter() - t) * 1000
            for label, chosen in ((name, cut_at_budget(ranking, budget, meter, schema)), (f"{name}_top10", ranking[:10])):
                cset = set(chosen)
                stats[label].add(it.gold, cset, {t for t, _ in cset}, meter(schema, cset), ft, ms)
        if details is not None:
            details({"id": it.qid, "db_id": it.db_id, "question": it.question,
                     "gold_columns": sorted(map(list, it.gold.columns)), "missed": sorted(map(list, it.gold.columns - cols)),
                     "selection": sel.to_dict(), "tokens": budget, "full_tokens": ft})
        if progress and (i + 1) % 100 == 0:
            print(f"  {i + 1}/{n} questions", file=sys.stderr, flush=True)
    return {m: s.summary() for m, s in stats.items()}


def _pool_router(bench: Bench, encoder: Any, stats: dict[str, MethodStats],
                 cache_dir: Path | None) -> Callable[[Item], tuple[bool, float]] | None:
    """With ``bench.pool``: item -> (routed to its own database?, routing ms); the index build counts as index time
    (its cache: ``cache_dir``, else kgsql's)."""
    if not bench.pool:
        return None
    from kgsql.graph.writer import content_hash
    from kgsql.route.index import build_index
    from kgsql.route.router import DatabaseRouter

    t = time.perf_counter()
    index = build_index(encoder, [(db, content_hash(s)) for db, s in bench.pool.items()], bench.pool.__getitem__,
                        cache_dir=cache_dir)
    router = DatabaseRouter(index, encoder)
    stats["kgsql_pooled"] = MethodStats()
    stats["kgsql_pooled"].index_s = stats["kgsql"].index_s + time.perf_counter() - t

    def route(it: Item) -> tuple[bool, float]:
        t0 = time.perf_counter()
        return router.route(it.question).db == it.db_id, (time.perf_counter() - t0) * 1000

    return route


def parse_sweep(text: str) -> list[tuple[float, float]]:
    """``"0.1:0.02,0.05:0.01"`` -> [(0.1, 0.02), (0.05, 0.01)]; a clear error for anything else."""
    pairs = []
    for part in text.split(","):
        try:
            t, c = (float(x) for x in part.strip().split(":"))
        except ValueError:
            raise InputError(f"--sweep: expected TABLE:COLUMN threshold pairs like 0.1:0.02, got {part.strip()!r}")
        if not (0.0 <= t <= 1.0 and 0.0 <= c <= 1.0):
            raise InputError(f"--sweep: thresholds are probabilities in [0, 1], got {part.strip()!r}")
        pairs.append((t, c))
    return pairs


def threshold_sweep(bench: Bench, pairs: list[tuple[float, float]], *, encoder: str = "minilm",
                    cache_dir: Path | None = None, use_values: bool = True) -> list[dict[str, float]]:
    """kgsql's perfect recall, column recall and token ratio at each threshold pair.

    Retrieval evidence (encoding, MaxSim, values, probabilities) is computed once per question;
    only the selection step runs per pair, so a curve costs little more than one run.
    """
    from kgsql.retrieve.retriever import SchemaRetriever

    retriever = SchemaRetriever(encoder, cache_dir=cache_dir)
    meter = TokenMeter()
    scored = [(row, row.evidence) for row in collect(bench, bench.items, retriever, use_values=use_values)]
    curve = []
    for table_t, column_t in pairs:
        chooser = retriever.with_config(table_threshold=table_t, column_threshold=column_t)
        summary = selection_stats(chooser, scored, meter).summary()
        curve.append({"table_threshold": table_t, "column_threshold": column_t,
                      **{k: summary[k] for k in ("perfect_recall_rate", "column_recall", "table_recall",
                                                 "mean_selected_columns", "token_ratio", "token_ratio_per_question")}})
    return curve


def format_sweep(curve: list[dict[str, float]]) -> str:
    lines = ["kgsql threshold sweep:", f"{'table_thr':>10}{'column_thr':>11}{'perfect':>9}{'col_rec':>9}{'n_cols':>8}"
             f"{'ratio':>8}{'ratio_q':>9}"]
    for r in curve:
        lines.append(f"{r['table_threshold']:>10}{r['column_threshold']:>11}{r['perfect_recall_rate']:>9}"
                     f"{r['column_recall']:>9}{r['mean_selected_columns']:>8}{r['token_ratio']:>8}"
                     f"{r['token_ratio_per_question']:>9}")
    return "\n".join(lines)


def format_table(results: dict[str, dict[str, float]]) -> str:
    cols = ["column_recall", "perfect_recall_rate", "table_recall", "mean_selected_columns", "mean_tokens",
            "token_ratio", "token_ratio_per_question", "ms_p50", "ms_p95", "index_s"]
    heads = ["col_rec", "perfect", "tab_rec", "n_cols", "tokens", "ratio", "ratio_q", "ms_p50", "ms_p95", "index_s"]
    lines = [f"{'method':<12}" + "".join(f"{h:>9}" for h in heads)]
    for m, r in results.items():
        lines.append(f"{m:<12}" + "".join(f"{r[c]:>9}" for c in cols))
    return "\n".join(lines)


def format_misses(misses: dict[str, int], n: int) -> str:
    """One line on why kgsql's selection missed: whole tables, columns of chosen tables, value-only."""
    missed = misses["whole_table"] + misses["column_of_selected_table"]
    if not n or not missed:
        return "kgsql misses: none"
    return (f"kgsql misses: {missed} questions ({missed / n:.1%}): a whole gold table {misses['whole_table']}, "
            f"only columns of selected tables {misses['column_of_selected_table']}; "
            f"{misses['value_only']} ({misses['value_only'] / n:.1%} of all) miss only columns the gold SQL "
            "compares with a text literal (findable by the value index when the database file has the values)")


def main(args: argparse.Namespace) -> int:
    from kgsql.retrieve.index import default_cache_dir

    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    cache_dir = Path(args.cache_dir) if args.cache_dir else default_cache_dir()
    t0 = time.perf_counter()
    bench = load_bench(args.dataset, args.data_dir, args.split, args.limit, cache_dir, args.column_meanings,
                       with_evidence=args.with_evidence, half=args.half, learn=args.learn, seed=args.seed,
                       dbs=[d.strip() for d in args.dbs.split(",") if d.strip()] if args.dbs else None,
                       pool=getattr(args, "pool_databases", False))
    print(f"{args.dataset}: {len(bench.items)} questions with resolved gold, "
          f"{len(bench.unresolved)} unresolved, {len(bench.schemas)} databases ({time.perf_counter() - t0:.1f}s)")
    for qid, db, problems in bench.unresolved[:10]:
        print(f"  unresolved {qid} ({db}): {'; '.join(problems)[:160]}")
    pairs = parse_sweep(args.sweep) if args.sweep else None  # bad input fails before the long run
    changes = {k: v for k, v in (("table_threshold", args.table_threshold),
                                 ("column_threshold", args.column_threshold)) if v is not None}
    detail_fh = open(args.details, "w", encoding="utf-8") if args.details else None
    try:
        results = run_benchmark(
            bench, encoder=args.encoder, cache_dir=cache_dir, config_changes=changes, use_values=not args.no_values,
            details=(lambda d: detail_fh.write(json.dumps(d) + "\n")) if detail_fh else None,
        )
    finally:
        if detail_fh:
            detail_fh.close()
    print(format_table(results))
    print(format_misses(results["kgsql"]["misses"], len(bench.items)))
    curve = None
    if pairs:
        curve = threshold_sweep(bench, pairs, encoder=args.encoder, cache_dir=cache_dir,
                                use_values=not args.no_values)
        print(format_sweep(curve))
    print("bm25/dense: cut per question at kgsql's token count; *_top10: fixed k=10. "
          "Tokens: MiniLM WordPiece of CREATE TABLE text; ratio = mean tokens / mean full-schema tokens, "
          "ratio_q = mean of per-question ratios.")
    if args.json_out:
        out: dict[str, Any] = dict(results)
        if curve is not None:
            out["kgsql_sweep"] = curve
        out["meta"] = {"dataset": args.dataset, "split": args.split, "questions": len(bench.items),
                       "unresolved": len(bench.unresolved), "encoder": args.encoder, "thresholds": changes,
                       "column_meanings": args.column_meanings, "with_evidence": args.with_evidence}
        Path(args.json_out).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0
