"""Fit the selector's logistic models and thresholds on training questions.

``python -m kgsql.retrieve.calibrate --data-dir SPIDER [--split train_7000] [--limit 2000]``

Uses Spider *train* only (never the dev sets the benchmark reports on):
questions are shuffled with a fixed seed, models are fitted on the first
70%, and the thresholds are chosen on the other 30% as the most recall
(perfect-recall rate) whose mean rendered-token ratio stays within
``--budget``. The result is written to ``calibration.json`` beside this
module, which ``SchemaRetriever`` loads by default.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from kgsql.retrieve.features import COLUMN_FEATURES, TABLE_FEATURES, LogisticModel, table_features
from kgsql.retrieve.retriever import CALIBRATION_FILE, Calibration, SchemaRetriever, SelectionConfig


def _placeholder(n: int) -> LogisticModel:
    return LogisticModel((0.0,) * (n + 1), (0.0,) * n, (1.0,) * n)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kgsql.retrieve.calibrate", description=__doc__)
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--split", default="train_7000")
    ap.add_argument("--limit", type=int, default=2000)
    ap.add_argument("--budget", type=float, default=0.45, help="max mean token ratio on the validation part")
    ap.add_argument("--out", default=str(CALIBRATION_FILE))
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    from kgsql.eval.linking import TokenMeter, load_bench
    from kgsql.retrieve.index import default_cache_dir

    cache_dir = Path(args.cache_dir) if args.cache_dir else default_cache_dir()
    bench = load_bench("spider", args.data_dir, args.split, None, cache_dir)
    items = [it for it in bench.items if it.gold.columns]
    random.Random(args.seed).shuffle(items)
    items = items[: args.limit]
    cut = int(len(items) * 0.7)
    base = Calibration(_placeholder(len(COLUMN_FEATURES)), _placeholder(len(TABLE_FEATURES)), SelectionConfig())
    retriever = SchemaRetriever("minilm", calibration=base, cache_dir=cache_dir)
    t0 = time.perf_counter()
    rows = []
    for i, it in enumerate(items):
        schema = bench.schemas[it.db_id]
        prep = retriever.prepare(schema, db_path=bench.db_paths.get(it.db_id))
        ev = retriever.evidence(schema, it.question, prepared=prep)
        y = np.array([k in it.gold.columns for k in prep.facts.column_keys], dtype=np.float64)
        yt = np.array([t in it.gold.tables for t in prep.facts.table_names], dtype=np.float64)
        rows.append((it, prep, ev, y, yt))
        if (i + 1) % 200 == 0:
            print(f"  {i + 1}/{len(items)} ({time.perf_counter() - t0:.0f}s)", file=sys.stderr, flush=True)
    fit = rows[:cut]
    cm = LogisticModel.fit(np.concatenate([r[2].features for r in fit]), np.concatenate([r[3] for r in fit]))
    tx, ty = [], []
    for _it, prep, ev, _y, yt in fit:
        tx.append(table_features(ev.features, cm.predict(ev.features), prep.facts))
        ty.append(yt)
    tm = LogisticModel.fit(np.concatenate(tx), np.concatenate(ty))
    calib = Calibration(cm, tm, SelectionConfig())
    retriever.calibration = calib
    meter = TokenMeter()
    val = []
    for it, prep, ev, _y, _yt in rows[cut:]:
        p = cm.predict(ev.features)
        val.append((it, prep, replace(ev, p_column=p, p_table=tm.predict(table_features(ev.features, p, prep.facts)))))
    best: tuple[float, float, SelectionConfig] | None = None
    print("table_thr column_thr perfect ratio")
    for tt in (0.3, 0.2, 0.15, 0.1, 0.07, 0.05, 0.03):
        for tc in (0.1, 0.05, 0.03, 0.02, 0.01, 0.005):
            cfg = replace(SelectionConfig(), table_threshold=tt, column_threshold=tc)
            r = retriever.with_config(table_threshold=tt, column_threshold=tc)
            perfect, ratio = [], []
            for it, prep, ev in val:
                sel = r._choose(prep, it.question, ev)
                cols = sel.column_keys()
                perfect.append(it.gold.columns <= cols and it.gold.tables <= set(sel.tables))
                full = prep.schema
                ratio.append(meter(full, cols) / meter(full, prep.facts.column_keys))
            pr, ra = float(np.mean(perfect)), float(np.mean(ratio))
            print(f"{tt:9} {tc:10} {pr:7.3f} {ra:5.3f}")
            if ra <= args.budget and (best is None or pr > best[0] or (pr == best[0] and ra < best[1])):
                best = (pr, ra, cfg)
    if best is None:
        print("no threshold pair within the budget; keeping defaults", file=sys.stderr)
        best = (float("nan"), float("nan"), SelectionConfig())
    calib.config = best[2]
    calib.info = {
        "trained_on": f"spider {args.split}, {len(items)} questions (seed {args.seed}): models on {cut}, thresholds on {len(items) - cut}",
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
