"""Latency of retrieval on synthetic wide databases.

``python -m kgsql.lab.bench_wide [--columns 3000 30000] [--questions 50]``

Generates a SQLite database with N columns (tables of ``--per-table``
columns, a random FK tree plus extra links, a third of the columns holding
text values), prepares the retriever once (index time, cached on disk), then
times ``select`` per question: question encoding + MaxSim + value search +
features + selection + join completion, then the re-index after one table's
description changed (``reindex_one_table_s``: until the new index answers;
``reindex_written_s``: until its file is on disk too) and the peak memory. Prints
wall-clock p50/p95 overall and per stage, and the process CPU time per
question (``cpu_ms``): on a machine
shared with other jobs wall time mostly measures waiting for a core, CPU time
(with ``--threads 1`` and ``OPENBLAS_NUM_THREADS=1``) what one idle core needs.
"""
from __future__ import annotations

import argparse
import dataclasses
import random
import resource
import sqlite3
import sys
import time
from pathlib import Path

import numpy as np

from kgsql.schema.model import Column, DatabaseSchema, ForeignKey, Table

ENTITIES = ("customer order invoice product supplier shipment warehouse employee department project "
            "vehicle route station sensor reading patient visit doctor drug claim policy account loan "
            "branch school student course teacher exam flight airport airline ticket booking hotel room").split()
ATTRIBUTES = ("name code status type category amount price cost total balance rate score level count date "
              "time year month start end created updated weight height length width capacity region city "
              "country zip phone email address owner manager priority color size grade rank").split()
QUALIFIERS = "primary secondary last first max min avg net gross annual monthly daily local global".split()
VALUES = ("north south east west central alpha beta gamma delta premium basic standard gold silver bronze "
          "active closed pending open express economy red green blue black white large small medium").split()


def synthetic_schema(n_columns: int, per_table: int = 30, seed: int = 0) -> DatabaseSchema:
    """A deterministic wide schema: ``n_columns`` columns in tables of ``per_table``."""
    rng = random.Random(seed)
    n_tables = max(1, n_columns // per_table)
    tables: list[Table] = []
    fks: list[ForeignKey] = []
    for t in range(n_tables):
        ent = ENTITIES[t % len(ENTITIES)]
        tname = f"{ent}_{t}"
        cols = [Column(f"{ent}_id", "INTEGER", is_primary_key=True, description=f"identifier of the {ent}")]
        if t > 0:
            parent = tables[rng.randrange(t)]
            cols.append(Column(f"{parent.name}_ref", "INTEGER", description=f"the {parent.name} this {ent} belongs to"))
            fks.append(ForeignKey(tname, cols[-1].name, parent.name, parent.columns[0].name))
        seen = {c.name for c in cols}
        while len(cols) < per_table:
            attr, qual = rng.choice(ATTRIBUTES), rng.choice(QUALIFIERS)
            name = f"{qual}_{attr}" if rng.random() < 0.6 else attr
            if name in seen:
                name = f"{name}_{len(cols)}"
            seen.add(name)
            is_text = attr in ("name", "code", "status", "type", "category", "region", "city", "country", "color")
            cols.append(Column(name, "TEXT" if is_text else "REAL", description=f"{qual} {attr} of the {ent}"))
        tables.append(Table(tname, cols, description=f"{ent} records, part {t}"))
    return DatabaseSchema(name=f"wide_{n_columns}", tables=tables, foreign_keys=fks)


def write_database(schema: DatabaseSchema, path: Path, rows: int = 50, seed: int = 0) -> None:
    """Create the SQLite file with ``rows`` rows per table (text columns get words as values)."""
    rng = random.Random(seed)
    if path.exists():
        path.unlink()
    conn = sqlite3.connect(path)
    for t in schema.tables:
        cols = ", ".join(f'"{c.name}" {c.type}' for c in t.columns)
        conn.execute(f'CREATE TABLE "{t.name}" ({cols}, PRIMARY KEY ("{t.columns[0].name}"))')
        data = []
        for r in range(rows):
            row = []
            for c in t.columns:
                if c.is_primary_key:
                    row.append(r)
                elif c.type == "TEXT":
                    row.append(f"{rng.choice(VALUES)} {rng.choice(VALUES)}")
                else:
                    row.append(rng.random() * 100)
            data.append(row)
        conn.executemany(f'INSERT INTO "{t.name}" VALUES ({", ".join("?" * len(t.columns))})', data)
    conn.commit()
    conn.close()


def questions(schema: DatabaseSchema, n: int, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        t = rng.choice(schema.tables)
        c = rng.choice(t.columns[2:]) if len(t.columns) > 2 else t.columns[0]
        words = c.description or c.name.replace("_", " ")
        other = rng.choice(schema.tables)
        out.append(rng.choice([
            f"What is the {words} for each {other.name.split('_')[0]} in the {rng.choice(VALUES)} {rng.choice(VALUES)} group?",
            f"List the {words} of {t.name.split('_')[0]}s ordered by {rng.choice(ATTRIBUTES)}.",
            f"How many {t.name.split('_')[0]} records have a {words} above {rng.randint(1, 99)}?",
        ]))
    return out


def run(n_columns: int, n_questions: int, per_table: int, workdir: Path, encoder: str) -> dict[str, float]:
    from kgsql.retrieve.retriever import SchemaRetriever

    schema = synthetic_schema(n_columns, per_table)
    db = workdir / f"wide_{n_columns}.sqlite"
    if not db.exists():
        write_database(schema, db)
    schema.path = str(db)
    retriever = SchemaRetriever(encoder, cache_dir=workdir / "cache")
    t = time.perf_counter()
    retriever.prepare(schema, db_path=db)
    index_s = time.perf_counter() - t
    qs = questions(schema, n_questions)
    retriever.select(schema, qs[0], db_path=db)  # warm-up (lazy imports, allocator)
    totals, cpu, n_selected, stages = [], [], [], {}
    for q in qs:
        t, c = time.perf_counter(), time.process_time()
        sel = retriever.select(schema, q, db_path=db)
        totals.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
        n_selected.append(len(sel.columns))
        for k, v in sel.timings_ms.items():
            stages.setdefault(k, []).append(v)
    res = {"columns": schema.column_count, "tables": len(schema.tables), "index_s": round(index_s, 1),
           "ms_p50": round(float(np.percentile(totals, 50)), 1), "ms_p95": round(float(np.percentile(totals, 95)), 1),
           "cpu_ms_p50": round(float(np.percentile(cpu, 50)), 1), "cpu_ms_p95": round(float(np.percentile(cpu, 95)), 1),
           "selected_columns_mean": round(float(np.mean(n_selected)), 1)}
    for k in ("encode", "maxsim", "values", "features", "select"):
        res[f"{k}_p50"] = round(float(np.percentile(stages[k], 50)), 1)
    # one table's description edited, as a re-ingest after a change would give: only its documents re-encode
    first = schema.tables[0]
    changed = dataclasses.replace(schema, tables=[dataclasses.replace(first, description="edited"), *schema.tables[1:]])
    t = time.perf_counter()
    retriever.prepare(changed, db_path=db)
    res["reindex_one_table_s"] = round(time.perf_counter() - t, 2)
    retriever.store.wait()  # a wide index's file is written in the background (kgsql.retrieve.index)
    res["reindex_written_s"] = round(time.perf_counter() - t, 2)
    res["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kgsql.lab.bench_wide", description=__doc__)
    ap.add_argument("--columns", type=int, nargs="+", default=[3000, 30000])
    ap.add_argument("--questions", type=int, default=50)
    ap.add_argument("--per-table", type=int, default=30)
    ap.add_argument("--workdir", default=None, help="where the databases and index cache go (default: cache dir)")
    ap.add_argument("--encoder", default="minilm")
    ap.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    args = ap.parse_args(argv)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    from kgsql.retrieve.index import default_cache_dir

    workdir = Path(args.workdir) if args.workdir else default_cache_dir() / "bench_wide"
    workdir.mkdir(parents=True, exist_ok=True)
    for n in args.columns:
        r = run(n, args.questions, args.per_table, workdir, args.encoder)
        print(" ".join(f"{k}={v}" for k, v in r.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
