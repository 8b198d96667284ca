"""``python -m kgsql.eval run``: predict with a named method, score, log, report.

    python -m kgsql.eval run --dataset spider --data-dir /data/spider --method kgsql \\
        --limit 30 --seed 0 --out runs/spider-kgsql
    python -m kgsql.eval run --dataset spatial --data-dir /data/spatial --protocol cross-fold \\
        --ablation sspa --shots 0,1,3,5 --out runs/sspa-table3

One *cell* is (split, method, shots); each cell has its own append-only
``records.jsonl`` (re-running skips the ids already in it) and report
(``summary.json``, ``summary.md``, PNG plots). A run of one cell writes into
``--out`` itself; several cells go to ``OUT/<split>/<method>/<k>-shot/`` with
a combined report and a Table-3-shaped ``table.md`` in ``OUT``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from kgsql.cli_types import non_negative_int
from kgsql.db.privilege import add_privileged_flag, apply_privileged_flag
from kgsql.errors import InputError
from kgsql.eval.datasets import Dataset, GoldQuestion, available_benchmarks, get_benchmark, per_benchmark
from kgsql.eval.datasets.registry import cross_fold_benchmarks, language_help, languages, split_help, taking
from kgsql.eval.interactions import interaction_line
from kgsql.eval.method import default_shots, lead_shots, make_method, parse_sets, registry
from kgsql.eval.metric_registry import get_metric, metric_names
from kgsql.eval.pooled import add_pool_arguments
from kgsql.eval.protocols import PAPER_SHOTS, cross_fold_groups, load_pool, paper_table, parse_folds, single_groups
from kgsql.eval.records import Record, RecordLog
from kgsql.eval.report import summarize, write_report
from kgsql.eval.replay import ReplayLM, Replaying
from kgsql.eval.runner import RunSpec, check_no_leakage, ingest_databases, run_group, select_questions
from kgsql.eval.timing import format_breakdown, time_breakdown
from kgsql.route.fallback import DEFAULT_TRIES

def _csv(text: str | None) -> list[str]:
    return [p.strip() for p in (text or "").split(",") if p.strip()]


def _ablation_sets() -> dict[str, tuple[str, ...]]:
    """``--ablation`` choices: the method registry's sets."""
    return dict(getattr(registry(), "ABLATION_SETS", {}))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", required=True, choices=available_benchmarks())
    parser.add_argument("--data-dir", required=True, type=Path, help="benchmark folder")
    parser.add_argument("--split", default=None,
                        help=f"{split_help()} (comma list; cross-fold default: every split present)")
    parser.add_argument("--method", default="kgsql", help="method name, or a comma list (default kgsql)")
    sets = _ablation_sets()
    parser.add_argument("--ablation", choices=sorted(sets), default=None,
                        help="run a set of methods together: " + "; ".join(
                            f"{k} = {', '.join(v)}" for k, v in sets.items()))
    parser.add_argument("--shots", default=None,
                        help="examples per prompt, or a comma list (e.g. 0,1,3,5; default: the method's own, "
                             "with --ablation 0,1,3,5)")
    parser.add_argument("--protocol", choices=("single", "cross-fold"), default="single",
                        help="cross-fold: SSpa's spatial protocol (train on one fold's databases, test on the "
                             "other, swap)")
    parser.add_argument("--folds", default=None,
                        help="cross-fold folds, e.g. 'ada,edu;tourism,traffic' (default: SSpa's folds "
                             "restricted to the databases present, else one per database)")
    parser.add_argument("--db", action="append", default=None,
                        help="only questions of these databases (comma list; repeatable)")
    parser.add_argument("--ids", action="append", default=None,
                        help="only these question ids (comma list; repeatable): rerun the questions a rule "
                             "can change, with the split's whole example pool")
    parser.add_argument("--limit", type=int, default=None,
                        help="N questions (per split); on a multi-turn benchmark (sparc) N whole interactions")
    parser.add_argument("--db-dir", type=Path, default=None,
                        help=f"folder of <db>/<db>.sqlite where the benchmark's loader takes one "
                             f"({taking('db_dir')}; default: in or beside --data-dir)")
    parser.add_argument("--no-evidence", action="store_true",
                        help="ask without the benchmark's evidence (BIRD's hand-written hints): the knowledge "
                             "an answer needs must come from the graph")
    parser.add_argument("--skip-missing-db", action="store_true",
                        help="sample only questions whose database file exists (default: sample all, "
                             "log the others unscored)")
    parser.add_argument("--seed", type=int, default=None,
                        help="with --limit: a fixed random sample of N (default: the first N)")
    parser.add_argument("--half", choices=("first", "second"), default=None,
                        help="only this half of each database's questions, split as `ingest --history "
                             "--history-half` splits them (fixed by --half-seed): mine one half, test the other")
    parser.add_argument("--half-seed", type=non_negative_int, default=0, help="seed of --half (default 0, as ingest's --seed)")
    parser.add_argument("--questions-lang", choices=languages(), default="en",
                        help=language_help())
    parser.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                        help="override a field of the method's options, e.g. --set correction=false (repeatable)")
    parser.add_argument("--pool", default=None,
                        help="few-shot pool: Spider-format JSON or JSONL query log, 'none', or 'own' (what a user "
                             "without one gets: taught, else a spatial database's derived, else shipped examples; "
                             "with --protocol single) (default: "
                             + (per_benchmark(lambda b: b.pool_note or None) or "none") + ")")
    parser.add_argument("--model", default=None,
                        help="local model (default KGSQL_LOCAL_MODEL or qwen2.5-coder-1.5b); with "
                             "KGSQL_LLM_BASE_URL set: the endpoint's model name")
    parser.add_argument("--n-ctx", type=int, default=8192, help="local model context length")
    parser.add_argument("--graph", default=None, help="Bolt URI of the schema graph (default: embedded)")
    parser.add_argument("--graph-prefix", default="", help="prefix for database names in the graph")
    parser.add_argument("--no-profiles", action="store_true",
                        help="ingest without the profiles shipped with kgsql (profiles/: hand-written knowledge "
                             "of two spatial benchmark databases), as a user's own database is; graph names "
                             "start with bare_")
    parser.add_argument("--out", type=Path, default=None, help="run folder (default runs/<dataset>-<method>)")
    parser.add_argument("--timeout", type=float, default=None,
                        help="SQL timeout in seconds, for scoring and the method's own execution (default "
                             + per_benchmark(lambda b: f"{b.timeout_s:.0f}") + ")")
    parser.add_argument("--concurrency", type=int, default=1,
                        help="questions in flight (default 1: the local model serves one request at a time)")
    parser.add_argument("--metric", choices=metric_names(), default=None,
                        help="headline metric (default " + per_benchmark(lambda b: b.metric) + ")")
    parser.add_argument("--replay", type=Path, default=None, metavar="RECORDS",
                        help="answer model calls from this records.jsonl of an earlier run (same questions) "
                             "instead of a model: exact ablations of what happens after the model answered; "
                             "a call the records lack is logged unscored as not replayable")
    parser.add_argument("--no-plots", action="store_true")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    add_pool_arguments(parser)
    add_privileged_flag(parser)


# --------------------------------------------------------------------------- planning


@dataclass
class Cell:
    """One (split, method, shots) combination with its own log and report."""

    split: str
    method: str
    shots: int
    dir: Path
    records: list[Record] = field(default_factory=list)
    wall_s: float = 0.0

    @property
    def log_path(self) -> Path:
        return self.dir / "records.jsonl"


def _methods(args: argparse.Namespace) -> list[str]:
    methods = list(_ablation_sets()[args.ablation]) if args.ablation else _csv(args.method)
    if not methods:
        raise InputError("--method: give a method name")
    return methods


def _shots(args: argparse.Namespace, method: str, overrides: dict[str, Any]) -> list[int]:
    """The cell's example counts: ``--shots``, else ``--set shots=N``, else the method's own."""
    if "shots" in overrides and args.shots not in (None, ""):
        raise InputError("--shots and --set shots=...: give the number of examples once")
    if args.shots in (None, ""):
        if "shots" in overrides:
            return [overrides["shots"]]
        return list(PAPER_SHOTS) if args.ablation else [default_shots(method)]
    try:
        values = [int(s) for s in _csv(args.shots)]
    except ValueError as exc:
        raise InputError(f"--shots {args.shots!r}: expected integers such as 0,1,3,5") from exc
    if any(v < 0 for v in values):
        raise InputError("--shots must not be negative")
    return values


def _splits(args: argparse.Namespace) -> list[str | None]:
    if args.split:
        return list(_csv(args.split))
    find = get_benchmark(args.dataset).find_splits
    if args.protocol == "cross-fold" and find is not None:
        return list(find(args.data_dir)) or [None]
    return [None]


def load_split(args: argparse.Namespace, split: str | None) -> Dataset:
    benchmark = get_benchmark(args.dataset)
    return benchmark.load(args.data_dir, split, **benchmark.loader_options(
        lang=args.questions_lang, db_dir=getattr(args, "db_dir", None)))


def open_lm(model: str | None, n_ctx: int = 8192) -> Any:
    """The configured endpoint (``KGSQL_LLM_BASE_URL``), else the local server of ``model``."""
    from kgsql.llm.factory import default_lm

    return default_lm(model, n_ctx=n_ctx)


# --------------------------------------------------------------------------- running


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _cost_minutes(records: list[Record]) -> float:
    """Model + scoring time of the cell's questions (summed over resumed sessions)."""
    return sum((r.latency_s or 0.0) + float(r.extra.get("score_s") or 0.0) for r in records) / 60.0


def run_eval(args: argparse.Namespace, *, lm: Any = None, graph: Any = None, encoder: Any = None,
             say: Callable[[str], None] = _say) -> dict[str, Any]:
    """The whole ``run`` subcommand; ``lm``/``graph``/``encoder`` injected by tests (else opened here).

    Returns the run summary also written to ``OUT/run.json``."""
    methods = _methods(args)
    if getattr(args, "replay", None) is not None and getattr(args, "pool_databases", False) \
            and getattr(args, "route_tries", DEFAULT_TRIES) > 1:  # a try's calls replay per question, not per database
        raise InputError("--replay with --pool-databases needs --route-tries 1")
    if getattr(args, "replay", None) is not None and lm is None:
        lm = ReplayLM.from_records(args.replay)
    overrides = parse_sets(args.sets)
    plan = [(m, k) for m in methods for k in _shots(args, m, overrides)]
    benchmark = get_benchmark(args.dataset)
    metric = args.metric or benchmark.metric
    if not get_metric(metric).applies_to(args.dataset):
        raise InputError(f"--metric {metric} does not score {args.dataset} questions")
    timeout = args.timeout or benchmark.timeout_s
    overrides.setdefault("timeout_s", timeout)
    folds = parse_folds(args.folds)
    dbs = [d for item in (args.db or []) for d in _csv(item)] or None
    ids = [i for item in (getattr(args, "ids", None) or []) for i in _csv(item)] or None
    out = args.out or Path("runs") / f"{args.dataset}-{'-'.join(methods) if len(methods) < 3 else 'methods'}"
    splits = _splits(args)
    many = len(splits) * len(plan) > 1
    if args.protocol == "cross-fold" and not benchmark.cross_fold:
        raise InputError(f"--protocol cross-fold (SSpa's protocol) is for --dataset "
                         f"{'|'.join(cross_fold_benchmarks())}; {args.dataset} has no folds")
    datasets = [load_split(args, s) for s in splits]
    own_graph = graph is None
    if own_graph:
        from kgsql.schema_graph import SchemaGraph

        graph = SchemaGraph.open(args.graph)
    started = time.time()
    cells: list[Cell] = []
    try:
        for dataset in datasets:
            eligible = _with_database(args, dataset, benchmark.skip_missing_db, say)
            if getattr(args, "half", None):
                from kgsql.mining.history import split_examples

                eligible = split_examples(eligible, args.half, args.half_seed)[0]
            questions = select_questions(eligible, limit=args.limit, seed=args.seed, dbs=dbs, ids=ids)
            if not questions:
                raise InputError(f"{dataset.name} {dataset.split}: no questions selected")
            missing = [e for e in questions if dataset.db_path(e.db_id) is None]
            if missing:
                say(f"{dataset.name} {dataset.split}: {len(missing)} of {len(questions)} selected questions "
                    f"have no database file ({', '.join(sorted({e.db_id for e in missing})[:8])}"
                    f"{', ...' if len({e.db_id for e in missing}) > 8 else ''}); they are logged unscored")
            names = ingest_databases(graph, dataset, {e.db_id for e in questions}, prefix=args.graph_prefix, log=say,
                                     shipped_profiles=not args.no_profiles)
            check_no_leakage(graph, names, questions)
            route = _pooled_router(args, graph, dataset, encoder, say)
            fixed_pool = load_pool(args.pool, dataset, args.data_dir) if args.protocol == "single" else None
            for method, shots in plan:
                wants_pool = shots + overrides.get("lead_shots", lead_shots(method)) > 0
                if (wants_pool and args.protocol == "single" and not benchmark.pool_from_other_databases
                        and fixed_pool is None):
                    say(f"{method}: no example pool for {dataset.name} (--pool); running 0-shot")
                    shots, wants_pool = 0, False
                cell_dir = out / (dataset.split or "dev") / method / f"{shots}-shot" if many else out
                cell = Cell(dataset.split, method, shots, cell_dir)
                cells.append(cell)
                groups = (cross_fold_groups(dataset, questions, folds, with_pool=wants_pool)
                          if args.protocol == "cross-fold"
                          else single_groups(dataset, questions, fixed_pool, with_pool=wants_pool))
                spec = RunSpec(method, shots, overrides, timeout, max(1, args.concurrency), metric,
                               with_evidence=not getattr(args, "no_evidence", False), route=route,
                               route_tries=getattr(args, "route_tries", DEFAULT_TRIES))
                run_cell(cell, dataset, groups, spec, names, args, graph=graph, lm=lm, encoder=encoder)
    finally:
        if own_graph:
            graph.close()
    return _finish(args, out, cells, methods, metric, started, many, overrides)


def _with_database(args: argparse.Namespace, dataset: Dataset, skip_by_default: bool,
                   say: Callable[[str], None]) -> list[GoldQuestion]:
    """The split's questions, less those whose database file is absent where the run or benchmark skips them."""
    eligible = dataset.questions
    if getattr(args, "skip_missing_db", False) or skip_by_default:
        eligible = [e for e in dataset.questions if dataset.db_path(e.db_id) is not None]
        if not eligible:
            raise InputError(f"{dataset.name} {dataset.split}: no question has its database file "
                             f"(looked for <db>/<db>.sqlite under the databases folder beside "
                             f"{dataset.root}; give it with --db-dir)")
        if len(eligible) < len(dataset.questions) and not getattr(args, "skip_missing_db", False):
            absent = sorted({e.db_id for e in dataset.questions} - {e.db_id for e in eligible})
            say(f"{dataset.name} {dataset.split}: {len(dataset.questions) - len(eligible)} questions "
                f"skipped: no database file for {len(absent)} of its databases "
                f"({', '.join(absent[:6])}{', ...' if len(absent) > 6 else ''})")
    return eligible


def _pooled_router(args: argparse.Namespace, graph: Any, dataset: Dataset, encoder: Any,
                   say: Callable[[str], None]) -> Callable[[str], Any] | None:
    """With ``--pool-databases``: every database of the dataset (and of its FOLDER) ingested, and a router
    over just those."""
    pool = getattr(args, "pool_databases", False)
    if not pool:
        return None
    from dataclasses import replace

    from kgsql.ingest.reader import require_databases
    from kgsql.route.graph_router import GraphRouter

    files = dict(dataset.db_files)
    if pool is not True:  # a folder: its databases, by file name, beside the dataset's own
        for path in require_databases(pool):
            files.setdefault(path.stem, path)
    pooled = ingest_databases(graph, replace(dataset, db_files=files), files, prefix=args.graph_prefix, log=say,
                              shipped_profiles=not args.no_profiles)
    say(f"{dataset.name} {dataset.split}: questions routed among {len(pooled)} databases")
    return GraphRouter(graph, encoder, only=set(pooled.values())).route


def run_cell(cell: Cell, dataset: Dataset, groups: list[Any], spec: RunSpec, names: dict[str, str],
             args: argparse.Namespace, *, graph: Any, lm: Any = None, encoder: Any = None) -> None:
    """Answer every group of one cell into its log, then write the cell's report.

    The method (and the model behind it) is built only for a group with a
    question still to ask, so re-running a finished cell costs nothing."""
    log = RecordLog(cell.log_path)
    t0 = time.perf_counter()
    for group in groups:
        needs_model = any(e.id not in log.done and e.db_id in names for e in group.questions)
        asker = make_method(spec.method, graph, lm if lm is not None else _lazy_lm(args), spec.shots,
                            group.pool, spec.overrides, encoder=encoder) if needs_model else None
        if asker is not None and isinstance(lm, ReplayLM):
            asker = Replaying(asker, lm)
        desc = f"{dataset.split or ''} {spec.method} {cell.shots}-shot {group.tag.get('fold', '')}".strip()
        cell.records += run_group(group, dataset, asker, log, spec, names=names, shots=cell.shots,
                                  progress=not args.no_progress, desc=desc)
    cell.wall_s = time.perf_counter() - t0
    write_report(cell.records, cell.dir, title=f"{dataset.name} {dataset.split} {spec.method} {cell.shots}-shot",
                 metric=spec.metric, plots=not args.no_plots)


_LM: dict[str, Any] = {}


def _lazy_lm(args: argparse.Namespace) -> Any:
    """Start the model only when a question needs it (a run with everything logged starts none)."""
    key = f"{args.model}:{args.n_ctx}"
    if key not in _LM:
        _LM[key] = open_lm(args.model, args.n_ctx)
    return _LM[key]


def _cell_summary(cell: Cell, metric: str) -> dict[str, Any]:
    s = summarize(cell.records)
    return {"split": cell.split, "method": cell.method, "shots": cell.shots, "dir": str(cell.dir),
            "n": s["n"], "n_scored": s["n_scored"], "n_missing_db": s["n_missing_db"],
            "n_pred_error": s["n_pred_error"], metric: s[metric], **{m: s[m] for m in metric_names()},
            "tokens_mean": s["tokens_mean"],
            "tokens_total": s["tokens_total"], "latency_mean_s": s["latency_mean_s"],
            "rounds_mean": s["rounds_mean"], "minutes": round(_cost_minutes(cell.records), 2),
            "wall_s_this_session": round(cell.wall_s, 1), "time": time_breakdown(cell.records),
            **({"interaction": s["interaction"]} if s.get("interaction") else {})}


def _finish(args: argparse.Namespace, out: Path, cells: list[Cell], methods: list[str], metric: str,
            started: float, many: bool, overrides: dict[str, Any]) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    results = [_cell_summary(c, metric) for c in cells]
    table = None
    if many:
        splits = list(dict.fromkeys(c.split or "dev" for c in cells))
        per_method = {m: sorted({c.shots for c in cells if c.method == m}) for m in methods}
        own_shots = args.shots in (None, "") and not args.ablation and all(len(v) == 1 for v in per_method.values())
        rows = [f"{m} ({per_method[m][0]}-shot)" if own_shots else m for m in methods]
        row_of = dict(zip(methods, rows))
        shots: list[int | None] = [None] if own_shots else sorted({c.shots for c in cells})
        key = {id(c): (row_of[c.method], c.split or "dev", None if own_shots else c.shots) for c in cells}
        values = {key[id(c)]: r[metric] for c, r in zip(cells, results)}
        counts = {key[id(c)]: r["n_scored"] for c, r in zip(cells, results)}
        table = paper_table(values, rows, splits, shots, counts=counts)
        if any(r.get("interaction") for r in results):  # a multi-turn benchmark: its interactions too
            per_interaction = {key[id(c)]: (r.get("interaction") or {}).get(metric) for c, r in zip(cells, results)}
            table += (f"\nInteractions, {metric} of every scored turn (%):\n\n"
                      + paper_table(per_interaction, rows, splits, shots))
        (out / "table.md").write_text(f"# {metric} (%)\n\n{table}", encoding="utf-8")
        write_report([r for c in cells for r in c.records], out, title=f"{args.dataset}: all cells",
                     metric=metric, plots=not args.no_plots)
    meta_path = out / "run.json"
    sessions = []
    if meta_path.exists():
        try:
            sessions = json.loads(meta_path.read_text(encoding="utf-8")).get("sessions", [])
        except (OSError, ValueError):
            sessions = []
    sessions.append({"started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(started)),
                     "wall_s": round(time.time() - started, 1)})
    meta = {"argv": sys.argv[1:], "dataset": args.dataset, "data_dir": str(args.data_dir),
            "protocol": args.protocol, "limit": args.limit, "seed": args.seed,
            "half": getattr(args, "half", None), "half_seed": getattr(args, "half_seed", 0), "dbs": args.db,
            "evidence": "none" if getattr(args, "no_evidence", False) else "given",
            "model": args.model or os.environ.get("KGSQL_LOCAL_MODEL") or "default",
            "overrides": overrides, "metric": metric, "method_registry": True,
            "cells": results, "table": table, "sessions": sessions}
    meta_path.write_text(json.dumps(meta, indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    return meta


def print_results(meta: dict[str, Any]) -> None:
    """The per-cell lines and the table on stdout."""
    metric = meta["metric"]
    for c in meta["cells"]:
        value = "–" if c[metric] is None else f"{100 * c[metric]:.1f}%"
        tokens = "–" if c["tokens_mean"] is None else f"{c['tokens_mean']:,.0f}"
        print(f"{c['split'] or 'dev'} {c['method']} {c['shots']}-shot: {metric} {value} "
              f"({c['n_scored']} scored of {c['n']}; {c['n_pred_error']} prediction errors) · "
              f"{tokens} tokens/question · {c['minutes']:.1f} min · {c['dir']}")
        if c.get("interaction"):
            print(f"  {interaction_line(c)}")
        if c.get("time"):
            print(format_breakdown(c["time"]))
        if c["n_missing_db"]:
            print(f"  {c['n_missing_db']} question(s) not scored: database file missing"
                  + (" (all of them)" if c["n_missing_db"] == c["n"] else ""))
    if meta.get("table"):
        print()
        print(meta["table"])


def main(args: argparse.Namespace) -> int:
    apply_privileged_flag(args)
    meta = run_eval(args)
    print_results(meta)
    return 0
