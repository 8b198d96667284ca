"""Fit the selector's logistic models and thresholds on training questions.

``python -m kgsql.lab.calibrate --data-dir SPIDER --out calibration.json [--split train_7000] [--limit 2000]``

Uses Spider *train* by default (never the dev sets the benchmark reports on):
questions are shuffled with a fixed seed, models are fitted on the first
70%, and the thresholds are chosen on the other 30% as the most recall
(perfect-recall rate) whose mean rendered-token ratio stays within
``--budget``. The result is written to ``--out`` only (default
``calibration.json`` in the current directory; never inside the installed
package). ``SchemaRetriever`` reads the shipped
``kgsql/retrieve/calibration.json`` unless given another file
(``calibration=PATH`` or ``KGSQL_CALIBRATION=PATH``); to ship a new default,
copy the file there deliberately.

``--leave-one-database-out`` answers a different question: how good could a
calibration fitted *in the target domain* be? For each database of the
dataset it fits models and thresholds on the other databases' questions only,
selects for the held-out database's questions, and reports the held-out
perfect recall and token ratio (nothing is written but ``--json``). On BIRD
dev, which has no train split here, this is the honest way to calibrate on
BIRD-like schemas.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from kgsql.eval.datasets import available_benchmarks, get_benchmark, per_benchmark
from kgsql.lab.linking import load_bench
from kgsql.lab.stats import MethodStats, Row, TokenMeter, collect, selection_stats
from kgsql.retrieve.features import COLUMN_FEATURES, TABLE_FEATURES, LogisticModel, table_features
from kgsql.retrieve.retriever import Calibration, SelectionScores, SchemaRetriever, SelectionConfig

#: Threshold pairs (table, column) searched, strictest first.
TABLE_THRESHOLDS = (0.5, 0.4, 0.3, 0.2, 0.15, 0.1, 0.07, 0.05, 0.03)
COLUMN_THRESHOLDS = (0.2, 0.1, 0.05, 0.03, 0.02, 0.01, 0.005)


def _placeholder(n: int) -> LogisticModel:
    return LogisticModel((0.0,) * (n + 1), (0.0,) * n, (1.0,) * n)


def uncalibrated_retriever(cache_dir: Path | None) -> SchemaRetriever:
    """A retriever whose models are placeholders: features do not depend on them."""
    base = Calibration(_placeholder(len(COLUMN_FEATURES)), _placeholder(len(TABLE_FEATURES)), SelectionConfig())
    return SchemaRetriever("minilm", calibration=base, cache_dir=cache_dir)


def fit_models(rows: Sequence[Row]) -> tuple[LogisticModel, LogisticModel]:
    """The column model on every column of every question, then the table model on its outputs."""
    cm = LogisticModel.fit(np.concatenate([r.evidence.features for r in rows]),
                           np.concatenate([r.y_column for r in rows]))
    tx = [table_features(r.evidence.features, cm.predict(r.evidence.features), r.prep.facts) for r in rows]
    tm = LogisticModel.fit(np.concatenate(tx), np.concatenate([r.y_table for r in rows]))
    return cm, tm


def _with_models(rows: Sequence[Row], cm: LogisticModel, tm: LogisticModel) -> list[tuple[Row, SelectionScores]]:
    out = []
    for r in rows:
        p = cm.predict(r.evidence.features)
        out.append((r, replace(r.evidence, p_column=p, p_table=tm.predict(table_features(r.evidence.features, p,
                                                                                           r.prep.facts)))))
    return out


def token_ratio(stats: MethodStats, *, pooled: bool) -> float:
    """Total selected / total full tokens (``pooled``), else the mean of per-question ratios."""
    if pooled:
        return sum(stats.tokens) / max(1, sum(stats.full_tokens))
    return float(np.mean(stats.ratio))


def score_selection(retriever: SchemaRetriever, scored: Sequence[tuple[Row, SelectionScores]], meter: TokenMeter,
                    *, pooled: bool) -> tuple[float, float]:
    """(perfect-recall rate, token ratio) of ``retriever``'s thresholds on ``scored`` questions."""
    stats = selection_stats(retriever, scored, meter)
    return float(np.mean(stats.perfect)), token_ratio(stats, pooled=pooled)


def choose_thresholds(retriever: SchemaRetriever, scored: Sequence[tuple[Row, SelectionScores]], budget: float,
                      meter: TokenMeter, *, pooled: bool = False,
                      verbose: bool = False) -> tuple[float, float, SelectionConfig] | None:
    """The threshold pair with the best perfect recall whose token ratio is within ``budget``."""
    best: tuple[float, float, SelectionConfig] | None = None
    for tt in TABLE_THRESHOLDS:
        for tc in COLUMN_THRESHOLDS:
            r = retriever.with_config(table_threshold=tt, column_threshold=tc)
            pr, ra = score_selection(r, scored, meter, pooled=pooled)
            if verbose:
                print(f"{tt:9} {tc:10} {pr:7.3f} {ra:5.3f}")
            if ra <= budget and (best is None or pr > best[0] or (pr == best[0] and ra < best[1])):
                best = (pr, ra, r.config)
    return best


def leave_one_database_out(rows: Sequence[Row], retriever: SchemaRetriever, budget: float, meter: TokenMeter,
                           *, pooled: bool, threshold_sample: int = 3) -> dict[str, Any]:
    """Held-out results per database, each calibrated on the other databases only."""
    per_db: dict[str, Any] = {}
    overall = MethodStats()
    for db in sorted({r.item.db_id for r in rows}):
        train = [r for r in rows if r.item.db_id != db]
        test = [r for r in rows if r.item.db_id == db]
        cm, tm = fit_models(train)
        chosen = choose_thresholds(retriever, _with_models(train[::threshold_sample], cm, tm), budget, meter,
                                   pooled=pooled)
        config = chosen[2] if chosen else retriever.config
        r = retriever.with_config(table_threshold=config.table_threshold, column_threshold=config.column_threshold)
        stats = selection_stats(r, _with_models(test, cm, tm), meter)
        overall.merge(stats)
        pr, ra = float(np.mean(stats.perfect)), token_ratio(stats, pooled=True)
        per_db[db] = {"questions": len(test), "table_threshold": config.table_threshold,
                      "column_threshold": config.column_threshold, "perfect_recall_rate": round(pr, 4),
                      "token_ratio": round(ra, 4)}
        print(f"  {db:<28} n={len(test):>4} thresholds=({config.table_threshold}, {config.column_threshold}) "
              f"held-out perfect {pr:.3f} ratio {ra:.3f}", flush=True)
    return {"per_database": per_db, "questions": len(overall.perfect),
            "perfect_recall_rate": round(float(np.mean(overall.perfect)), 4),
            "token_ratio": round(token_ratio(overall, pooled=True), 4),
            "token_ratio_per_question": round(token_ratio(overall, pooled=False), 4),
            "budget": budget,
            "budget_measure": "pooled" if pooled else "per-question mean"}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kgsql.lab.calibrate", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--dataset", choices=available_benchmarks(), default="spider")
    ap.add_argument("--split", default=None, help="default: the benchmark's training split ("
                    + per_benchmark(lambda b: b.train_split) + "), else its default split")
    ap.add_argument("--limit", type=int, default=2000)
    ap.add_argument("--budget", type=float, default=0.45, help="max token ratio on the validation part")
    ap.add_argument("--pooled-ratio", action="store_true",
                    help="budget on total selected / total full tokens (the benchmark's token_ratio) instead of "
                         "the mean of per-question ratios")
    ap.add_argument("--leave-one-database-out", action="store_true",
                    help="report held-out results per database instead of writing a calibration")
    ap.add_argument("--json", dest="json_out", default=None, help="with --leave-one-database-out: write results")
    ap.add_argument("--out", default="calibration.json",
                    help="where to write the calibration (default: calibration.json in the current directory)")
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    from kgsql.retrieve.index import default_cache_dir

    cache_dir = Path(args.cache_dir) if args.cache_dir else default_cache_dir()
    split = args.split or get_benchmark(args.dataset).train_split
    bench = load_bench(args.dataset, args.data_dir, split, None, cache_dir)
    items = [it for it in bench.items if it.gold.columns]
    random.Random(args.seed).shuffle(items)
    items = items[: args.limit]
    retriever = uncalibrated_retriever(cache_dir)
    meter = TokenMeter()
    rows = collect(bench, items, retriever)
    if args.leave_one_database_out:
        result = leave_one_database_out(rows, retriever, args.budget, meter, pooled=args.pooled_ratio)
        result.update(dataset=args.dataset, split=split, encoder=retriever.encoder.name)
        print(f"leave-one-database-out: perfect recall {result['perfect_recall_rate']:.3f} at token ratio "
              f"{result['token_ratio']:.3f} ({result['questions']} questions)")
        if args.json_out:
            Path(args.json_out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        return 0
    cut = int(len(rows) * 0.7)
    cm, tm = fit_models(rows[:cut])
    print("table_thr column_thr perfect ratio")
    best = choose_thresholds(retriever, _with_models(rows[cut:], cm, tm), args.budget, meter,
                             pooled=args.pooled_ratio, verbose=True)
    if best is None:
        print("no threshold pair within the budget; keeping defaults", file=sys.stderr)
        best = (float("nan"), float("nan"), SelectionConfig())
    calib = Calibration(cm, tm, best[2])
    calib.info = {
        "trained_on": f"{args.dataset} {split}, {len(rows)} questions (seed {args.seed}): models on {cut}, "
                      f"thresholds on {len(rows) - cut}",
        "encoder": retriever.encoder.name,
        "budget": args.budget,
        "validation_perfect_recall": round(best[0], 4),
        "validation_token_ratio": round(best[1], 4),
        "column_features": list(COLUMN_FEATURES),
        "table_features": list(TABLE_FEATURES),
    }
    calib.save(args.out)
    print(f"chosen: {best[2]} -> perfect {best[0]:.3f} at ratio {best[1]:.3f}; wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
