"""Routing benchmark: which database is a Spider question about, among all of them?

``python -m kgsql.lab.route_bench [--data-dir DIR] [--out FILE.json] [--graph-dir DIR]``

Ingests every Spider database in ``DIR/spider/database`` into one throwaway embedded graph
(a temporary folder unless ``--graph-dir``; only a server this script started is stopped at
the end; the user's default graph is never touched), builds the database index
(``kgsql.route``), then routes every dev question whose database was ingested and prints
top-1 / top-3 accuracy, p50 / p95 wall-clock milliseconds and mean CPU milliseconds per question for each mode: ``dense``,
``bm25``, ``exact`` and the default ``fused``. ``--history first|second`` first teaches every database a
question log (the other half of dev, split as ``ingest --history-half`` splits it, and train_7000) and
routes the named half with the log and without it. ``--sweep`` also scores a grid of fusion
weights and reciprocal-rank fusion (one encoding per question: signals are computed once),
and the accuracy of the top database with the call close or clear at several margins.
``misses`` lists the default routing's misses (with the log, when there is one) and counts those the
chosen database could answer as asked: the gold query runs there unchanged.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from kgsql.route.router import HISTORY_WEIGHT, MODES, DatabaseRouter, Routing

MARGINS = (0.25, 0.5, 0.75, 1.0, 1.5)


def _data_dir(given: str | None) -> Path:
    if given:
        return Path(given)
    env = os.environ.get("KGSQL_DATA_DIR", "").strip()
    return Path(env) if env else Path(__file__).resolve().parents[3] / "shared" / "data"


def _accuracy(ranked: list[list[str]], gold: list[str]) -> dict[str, float]:
    n = max(1, len(gold))
    return {"top1": sum(r[0] == g for r, g in zip(ranked, gold)) / n,
            "top3": sum(g in r[:3] for r, g in zip(ranked, gold)) / n}


def _timed(router: DatabaseRouter, questions: list[str], mode: str) -> tuple[list[Routing], list[float], float]:
    """Routings, wall-clock ms per question, and mean process CPU ms per question."""
    router.mode = mode
    out, ms = [], []
    cpu = time.process_time()
    for q in questions:
        t = time.perf_counter()
        out.append(router.route(q, top=5))
        ms.append((time.perf_counter() - t) * 1000)
    return out, ms, (time.process_time() - cpu) * 1000 / max(1, len(questions))


def evaluate(router: DatabaseRouter, questions: list[str], gold: list[str]) -> dict[str, Any]:
    """Per mode: accuracy and latency (each mode routes every question itself, encoding included)."""
    results: dict[str, Any] = {}
    for mode in MODES:
        if mode == "history" and router.history is None:
            continue
        routings, ms, cpu_ms = _timed(router, questions, mode)
        acc = _accuracy([[r.db for r in x.ranked] for x in routings], gold)
        results[mode] = {**acc, "p50_ms": round(float(np.percentile(ms, 50)), 2),
                         "p95_ms": round(float(np.percentile(ms, 95)), 2), "cpu_ms": round(cpu_ms, 2)}
        if mode == "fused":
            results["close_calls"] = _margins(routings, gold)
    router.mode = "fused"
    return results


def _margins(routings: list[Routing], gold: list[str]) -> list[dict[str, Any]]:
    """At each margin: how many calls are close, and top-1 accuracy among close and clear ones."""
    rows = []
    for m in MARGINS:
        close = [x.gap < m and not x.named for x in routings]  # a stored name settled it: not close
        right = [x.db == g for x, g in zip(routings, gold)]
        in_top2 = [g in (x.ranked[0].db, x.ranked[1].db) for x, g in zip(routings, gold)]
        n_close = sum(close)
        rows.append({"margin": m, "close": n_close,
                     "top1_close": sum(r for r, c in zip(right, close) if c) / max(1, n_close),
                     "top2_close": sum(r for r, c in zip(in_top2, close) if c) / max(1, n_close),
                     "top1_clear": sum(r for r, c in zip(right, close) if not c) / max(1, len(gold) - n_close)})
    return rows


def sweep(router: DatabaseRouter, questions: list[str], gold: list[str]) -> list[dict[str, Any]]:
    """Top-1/top-3 of fusion weight settings and of reciprocal-rank fusion, from signals computed once."""
    signals = [router.signals(q) for q in questions]
    names = router.index.names
    rows = []
    for wd, wb, we in itertools.product((0.0, 0.5, 1.0, 1.5), (0.0, 0.5, 1.0, 1.5), (0.0, 0.5, 1.0, 1.5)):
        if wd == wb == we == 0:
            continue
        router.weights = {"dense": wd, "bm25": wb, "exact": we}
        ranked = _top3(names, [router.combine(s, "fused") for s in signals])
        rows.append({"fusion": "z", "dense": wd, "bm25": wb, "exact": we, **_accuracy(ranked, gold)})
    for k in (10, 60):
        ranked = _top3(names, [_rrf(s, k) for s in signals])
        rows.append({"fusion": f"rrf{k}", **_accuracy(ranked, gold)})
    router.weights = {"dense": 1.0, "bm25": 1.0, "exact": 1.0}
    return sorted(rows, key=lambda r: (-r["top1"], -r["top3"]))


def _top3(names: list[str], scores: list[np.ndarray]) -> list[list[str]]:
    """The three best databases by each question's scores (ties in index order)."""
    return [[names[i] for i in np.argsort(-s, kind="stable")[:3]] for s in scores]


def _rrf(signals: dict[str, np.ndarray], k: int) -> np.ndarray:
    total = np.zeros(len(next(iter(signals.values()))))
    for values in signals.values():
        ranks = np.empty(len(values))
        ranks[np.argsort(-values, kind="stable")] = np.arange(1, len(values) + 1)
        total += 1.0 / (k + ranks)
    return total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kgsql.lab.route_bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default=None, help="benchmark data folder (default: $KGSQL_DATA_DIR or ../shared/data)")
    ap.add_argument("--graph-dir", default=None, help="embedded graph folder to use (default: a temporary one)")
    ap.add_argument("--out", default=None, help="write the results as JSON here")
    ap.add_argument("--sweep", action="store_true", help="also score fusion weight settings and RRF")
    ap.add_argument("--history", choices=("first", "second"), default=None,
                    help="teach every database a question log first: the other half of each dev database's "
                         "questions (split as ingest --history-half splits them) and train_7000's questions of "
                         "the training databases; route only this half of dev, with the log and without it")
    ap.add_argument("--threads", type=int, default=1,
                    help="encoder threads (default 1: on a shared machine wall time then measures one core)")
    args = ap.parse_args(argv)
    if args.history and args.graph_dir:
        print("route_bench: error: --history teaches the graph a log; give it a fresh temporary graph "
              "(leave out --graph-dir)", file=sys.stderr)
        return 1
    import torch

    torch.set_num_threads(max(1, args.threads))
    spider = _data_dir(args.data_dir) / "spider"
    if not (spider / "database").is_dir() or not (spider / "dev.json").is_file():
        print(f"route_bench: error: no Spider database/ and dev.json under {spider}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="kgsql-route-") as tmp:
        root = Path(args.graph_dir) if args.graph_dir else Path(tmp) / "graph"
        results = _run(spider, root, Path(tmp) / "cache", sweep_too=args.sweep, history=args.history)
    print(json.dumps(results, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


def _run(spider: Path, root: Path, cache: Path, *, sweep_too: bool, history: str | None = None) -> dict[str, Any]:
    from kgsql.route.history import build_log, graph_questions
    from kgsql.route.index import build_index, graph_databases
    from kgsql.schema_graph import SchemaGraph
    from kgsql.text.encoder import get_encoder

    with SchemaGraph.of_own(root) as graph:
        t = time.perf_counter()
        graph.ingest(spider / "database")
        ingest_s = time.perf_counter() - t
        encoder = get_encoder()
        encoder.encode_pooled(["warm up"], is_query=True)
        t = time.perf_counter()
        index = build_index(encoder, graph_databases(graph.store),
                            lambda name: graph.schema(name, knowledge=False), cache_dir=cache)
        index_s = time.perf_counter() - t
        present = set(index.names)
        dev = [q for q in json.loads((spider / "dev.json").read_text(encoding="utf-8")) if q["db_id"] in present]
        if history is not None:
            dev = _teach_log(graph, spider, dev, present, history)
            log = build_log(encoder, index.names, graph_questions(graph.store), cache_dir=cache)
    questions, gold = [q["question"] for q in dev], [q["db_id"] for q in dev]
    router = DatabaseRouter(index, encoder)
    results: dict[str, Any] = {"databases": len(index.names), "tables": int(len(index.table_vectors)),
                               "questions": len(questions), "ingest_s": round(ingest_s, 1),
                               "index_s": round(index_s, 1), "modes": evaluate(router, questions, gold)}
    if history is not None:
        logged = DatabaseRouter(index, encoder, history=log)
        results["history"] = {"tested_half": history, "logged_questions": len(log),
                              "modes": evaluate(logged, questions, gold),
                              "weights": _history_weights(logged, questions, gold)}
    if sweep_too:
        results["sweep"] = sweep(router, questions, gold)[:15]
    results["misses"] = misses(logged if history is not None else router, dev, spider / "database")
    return results


def misses(router: DatabaseRouter, dev: list[dict[str, Any]], databases: Path) -> dict[str, Any]:
    """The default routing's misses, and how many of them the chosen database could answer as asked: the
    question's gold query runs there unchanged ("How many singers do we have?" is ``SELECT count(*) FROM
    singer`` on singer and on concert_singer), a miss no router can tell from a hit by the schema alone."""
    from kgsql.db.isolate import execute_isolated
    from kgsql.errors import KgsqlError

    router.mode = "fused"
    rows = []
    for q in dev:
        chosen = router.route(q["question"], top=3).ranked[0].db
        if chosen == q["db_id"]:
            continue
        try:
            execute_isolated(databases / chosen / f"{chosen}.sqlite", q["query"], timeout_s=10.0, max_rows=1,
                             lenient_text=True)
            runs = True
        except KgsqlError:
            runs = False
        rows.append({"question": q["question"], "gold": q["db_id"], "chosen": chosen, "gold_sql_runs": runs})
    return {"count": len(rows), "gold_sql_runs_on_chosen": sum(r["gold_sql_runs"] for r in rows), "rows": rows}


def _teach_log(graph: Any, spider: Path, dev: list[dict[str, Any]], present: set[str],
               tested: str) -> list[dict[str, Any]]:
    """Store the question log (see ``--history``) as the databases' examples; returns the dev questions to route.
    A tested question whose very question and SQL are also in the log (a duplicate in dev) is left out."""
    from kgsql.graph.examples import save_examples
    from kgsql.mining.history import Pair, pair_id, split_halves

    def pair(q: dict[str, Any]) -> Pair:
        question = " ".join(q["question"].split())
        return Pair(pair_id(q["db_id"], q["question"], q["query"]), q["db_id"], question, q["query"])

    dev_pairs = [pair(q) for q in dev]
    halves = split_halves(dev_pairs)
    test_half, log_half = (halves[0], halves[1]) if tested == "first" else (halves[1], halves[0])
    train_log = json.loads((spider / "train_7000.json").read_text(encoding="utf-8"))
    train = [pair(q) for q in train_log if q["db_id"] in present]
    by_db: dict[str, list[Pair]] = {}
    for p in log_half + train:
        by_db.setdefault(p.db_id, []).append(p)
    for db, pairs in by_db.items():
        save_examples(graph.store, db, pairs, "route_bench")
    logged = {p.id for p in log_half}
    wanted = {p.id for p in test_half if p.id not in logged}
    return [q for q, p in zip(dev, dev_pairs) if p.id in wanted]


def _history_weights(router: DatabaseRouter, questions: list[str], gold: list[str]) -> list[dict[str, Any]]:
    """Top-1/top-3 of the fused routing at several weights of the question log (signals computed once)."""
    signals = [router.signals(q) for q in questions]
    names, rows = router.index.names, []
    for weight in (0.0, 0.5, 1.0, 1.5, 2.0, 3.0):
        router.weights["history"] = weight
        ranked = _top3(names, [router.combine(s, "fused") for s in signals])
        rows.append({"history": weight, **_accuracy(ranked, gold)})
    router.weights["history"] = HISTORY_WEIGHT
    return rows


if __name__ == "__main__":
    sys.exit(main())
