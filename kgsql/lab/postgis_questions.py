"""The spatial benchmark's questions answered on a PostGIS copy of their database, paired with SpatiaLite.

    python -m kgsql.lab.postgis_questions --data-dir ../shared/data/spatial [--split dataset1] [--db all]
        [--no-profiles] [--pool cross-fold|own] [--limit 20] [--ids ID,..] [--model qwen2.5-coder-1.5b]
        [--set KEY=VALUE] [--replay OLD.jsonl] [--out postgis_questions.json]

Why: kgsql claims the same method works on PostGIS as on SpatiaLite — the
graph, the PostGIS function notes, the tips in PostGIS's terms. This starts a
throwaway PostGIS server (:mod:`kgsql.lab.pg_cluster`), copies each SpatiaLite
database of the split (or those ``--db`` names) into it
(:mod:`kgsql.lab.load_engine`), ingests both copies into the graph (with the
database's shipped profile, its derived expressions rewritten for PostGIS,
unless ``--no-profiles``: what a user's own database has), and asks every
question of the database with the default method on each, with SSpa's
cross-fold examples (the split's other databases; their SQL rewritten for PostGIS by
:mod:`kgsql.sql.to_postgis` for the PostGIS run), or with ``--pool own`` none
(each copy then shows the examples it derives from its own geometry tables). Generated SQL runs on
PostGIS as a SELECT-only role, as kgsql requires; the superuser only loads.
The gold SQL (SpatiaLite) runs on the SpatiaLite file; each prediction runs on
its own engine; results compare as multisets (ordered when the gold orders),
numbers to 4 significant digits (SpatiaLite and PostGIS compute geodesic
lengths with different code). Printed and written: correct per engine (in all
and per database), paired wins/losses with the exact McNemar p, how many
PostGIS answers call a PostGIS function, and every question's SQL with its model calls. ``--replay``
answers each engine's model calls from an earlier run's records (:mod:`kgsql.eval.replay`): what a
change to the checks and rewrites does to the same generations, exactly and with no model; a question
whose prompt changed is kept out of the totals as not replayable.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from kgsql.errors import InputError, KgsqlError
from kgsql.lab.flag_rate import read_records

if TYPE_CHECKING:
    from kgsql.eval.datasets.base import Dataset, GoldQuestion
    from kgsql.eval.replay import ReplayLM

__all__ = ["ENGINES", "chosen_databases", "main", "paired_totals", "replay_lm", "same_rows"]

#: The engines every question is asked on, in order.
ENGINES = ("spatialite", "postgis")


def _value(v: Any) -> Any:
    if isinstance(v, bool):
        v = int(v)
    if isinstance(v, (int, float)):
        return f"{float(v):.4g}"
    return None if v is None else str(v)


def same_rows(gold: Sequence[Sequence[Any]], pred: Sequence[Sequence[Any]], *, ordered: bool) -> bool:
    """Equal results: numbers to 4 significant digits; as lists when ``ordered``, else as multisets."""
    a = [tuple(_value(v) for v in row) for row in gold]
    b = [tuple(_value(v) for v in row) for row in pred]
    return a == b if ordered else Counter(a) == Counter(b)


def _rows(db: str, sql: str, timeout_s: float) -> tuple[list[tuple[Any, ...]] | None, str]:
    from kgsql.db.guard import execute_query

    try:
        return [tuple(r) for r in execute_query(db, sql, timeout_s=timeout_s, max_rows=100_000).rows], ""
    except KgsqlError as exc:
        return None, str(exc).splitlines()[0][:200]


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line, apart from the run so that :func:`main` reads as the benchmark's steps."""
    p = argparse.ArgumentParser(prog="python -m kgsql.lab.postgis_questions", description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", type=Path, required=True, help="the spatial dataset's folder")
    p.add_argument("--split", default="dataset1")
    p.add_argument("--db", default="all", help="the split's databases to ask, comma-separated (default: all)")
    p.add_argument("--no-profiles", action="store_true", help="no profile shipped with kgsql (a user's database)")
    p.add_argument("--pool", choices=("cross-fold", "own"), default="cross-fold",
                   help="the examples: SSpa's cross-fold pool (default), or none given (own: what a user with a "
                        "new database has, the examples each copy derives from its own geometry tables)")
    p.add_argument("--limit", type=int, default=0, help="first N questions (0: all)")
    p.add_argument("--ids", default="", help="only these question ids, comma-separated (e.g. those a replay could "
                                             "not answer: asked live with the same --out, they replace its records)")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                   help="a method option for both engines, as in eval run (repeatable)")
    p.add_argument("--model", default=None, help="local model (default: kgsql's default)")
    p.add_argument("--replay", type=Path, default=None, metavar="OLD.jsonl",
                   help="answer the model calls from an earlier run's records (OLD.jsonl beside its report)")
    p.add_argument("--timeout", type=float, default=120.0)
    p.add_argument("--out", type=Path, default=Path("postgis_questions.json"),
                   help="the report; OUT.jsonl beside it keeps each question's record, so a stopped run resumes")
    return p.parse_args(argv)


def _load_and_ingest(graph: Any, cluster: Any, db: str, sqlite_file: Path, *,
                     profiles: bool) -> tuple[tuple[tuple[str, str, str], ...], float]:
    """Copy ``db`` into a new PostGIS database and ingest both copies: the (engine, graph name, database)
    targets, the PostGIS one a SELECT-only role's URL, and the copy's seconds."""
    from kgsql.ingest.knowledge import sibling_descriptions_dir, sibling_region_csv
    from kgsql.lab.load_engine import load

    t0 = time.perf_counter()
    load(sqlite_file, cluster.create_database(db.lower(), postgis=True))
    load_s = time.perf_counter() - t0
    reader_url = cluster.create_reader(db.lower())
    lite_name, pg_name = f"pgq_{db}_spatialite", f"pgq_{db}_postgis"
    # with profiles, both get the database's shipped one by their source's name (rewritten for PostGIS there)
    graph.ingest(sqlite_file, name=lite_name, force=True, shipped_profiles=profiles)
    # the column and region descriptions found beside the file, given to the copy as a user gives them
    # (--descriptions, --regions)
    report = graph.ingest(reader_url, name=pg_name, force=True, shipped_profiles=profiles,
                          descriptions=sibling_descriptions_dir(sqlite_file), regions=sibling_region_csv(sqlite_file))
    for line in report.warnings:
        print(f"warning: {line}", file=sys.stderr)
    return (("spatialite", lite_name, str(sqlite_file)), ("postgis", pg_name, reader_url)), load_s


def _engine_methods(data: Dataset, db: str, graph: Any, lm: Any, pool: str = "cross-fold",
                    options: dict[str, Any] | None = None) -> dict[str, Any]:
    """The default method per engine (with ``options``, the same for both), each with SSpa's cross-fold
    examples in its own SQL; with ``pool`` "own" none is given, so each engine's copy shows the examples it
    derives in its own names and forms."""
    from kgsql.fewshot.pool import ExamplePool
    from kgsql.fewshot.shipped import SHIPPED_EXAMPLES
    from kgsql.sql.to_postgis import to_postgis

    def build(pool: Any = SHIPPED_EXAMPLES) -> Any:  # the default's own examples (taught, derived, shipped)
        from kgsql.methods import build as build_method

        return build_method("kgsql", graph, lm, pool, **(options or {}))

    if pool == "own":
        return {"spatialite": build(), "postgis": build()}
    # SSpa's cross-fold examples: the split's other databases; for PostGIS their SQL rewritten for it
    lite_pool = ExamplePool.from_dataset(data, exclude_dbs=[db])
    pg_pool = ExamplePool([replace(e, sql=to_postgis(e.sql)) for e in lite_pool.examples],
                          name=f"{lite_pool.name}-postgis", schemas=lite_pool.schemas)
    return {"spatialite": build(lite_pool), "postgis": build(pg_pool)}


def _gold_rows(item: GoldQuestion, sqlite_file: Path, timeout: float) -> tuple[list[tuple[Any, ...]] | None, str, bool]:
    """The rows of the first gold SQL that runs on the SpatiaLite file, its last error, and whether order counts."""
    from kgsql.eval.metrics import order_matters

    gold_rows: list[tuple[Any, ...]] | None = None
    gold_error, ordered = "", False
    for gold in item.gold:
        gold_rows, gold_error = _rows(str(sqlite_file), gold, timeout)
        if gold_rows is not None:
            ordered = order_matters(gold)
            break
    return gold_rows, gold_error, ordered


def replay_lm(path: Path) -> ReplayLM:
    """The model calls of an earlier run's records, keyed ``engine:question id``."""
    from kgsql.eval.replay import ReplayLM

    if not path.is_file():
        raise InputError(f"--replay: no records file at {path}")
    calls = {f"{engine}:{r['id']}": r[engine]["calls"] for r in read_records(path)
             for engine in ENGINES if isinstance(r.get(engine, {}).get("calls"), list)}
    if not calls:
        raise InputError(f"--replay: {path} holds no records with model calls")
    return ReplayLM(calls)


def _question_record(item: GoldQuestion, methods: dict[str, Any], targets: Sequence[tuple[str, str, str]],
                     sqlite_file: Path, timeout: float, replay: ReplayLM | None = None) -> dict[str, Any]:
    """One question asked on every engine in ``targets`` (engine, graph name, database), scored against gold;
    with ``replay``, each engine's model calls answered from its records."""
    from kgsql.eval.runner import call_record, evidence_for

    gold_rows, gold_error, ordered = _gold_rows(item, sqlite_file, timeout)
    record: dict[str, Any] = {"id": item.id, "db": item.db_id, "question": item.question, "gold": item.gold[0],
                              "gold_error": gold_error, "gold_rows": (gold_rows or [])[:3]}
    for engine, name, db in targets:
        t1 = time.perf_counter()
        if replay is not None:
            replay.begin(f"{engine}:{item.id}")
        answer = methods[engine].ask(item.question, db=name, evidence=evidence_for(item))
        rows, error = _rows(db, answer.sql, timeout) if answer.sql else (None, answer.error or "")
        right = gold_rows is not None and rows is not None and same_rows(gold_rows, rows, ordered=ordered)
        prompts = getattr(answer, "prompts", None) or []
        record[engine] = {"sql": answer.sql, "correct": right, "error": error, "rows": (rows or [])[:3],
                          "seconds": round(time.perf_counter() - t1, 2),
                          "llm_s": round(sum(float(p.get("latency_s") or 0.0) for p in prompts), 2),
                          "calls": [call_record(p) for p in prompts]}
        if replay is not None and replay.problem:
            record.setdefault("not_replayable", f"{engine}: {replay.problem}")  # the first engine's problem
    record["postgis"]["uses_postgis"] = bool(re.search(r"\bST_\w+\s*\(|::geography",
                                                       record["postgis"]["sql"] or "", re.I))
    return record


def _answer_all(items: Sequence[GoldQuestion], methods: dict[str, Any], targets: Sequence[tuple[str, str, str]],
                sqlite_file: Path, timeout: float, progress_file: Path,
                replay: ReplayLM | None = None) -> list[dict[str, Any]]:
    """Every question's record, resumable: each is appended to ``progress_file`` as it is done; a rerun skips those."""
    asked = {item.id for item in items}
    last = {r["id"]: r for r in read_records(progress_file) if r["id"] in asked} if progress_file.is_file() else {}
    # a question a replay could not answer is asked again by a live run (--ids) with the same --out
    records = [r for r in last.values() if not (r.get("not_replayable") and replay is None)]
    done = {r["id"] for r in records}
    for n, item in enumerate(items, 1):
        if item.id in done or (replay is not None and not all(replay.knows(f"{e}:{item.id}") for e in ENGINES)):
            continue
        record = _question_record(item, methods, targets, sqlite_file, timeout, replay)
        records.append(record)
        with progress_file.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, default=str) + "\n")
        print(f"{n}/{len(items)} {item.id}: spatialite {int(record['spatialite']['correct'])} "
              f"postgis {int(record['postgis']['correct'])}", file=sys.stderr, flush=True)
    return records


def paired_totals(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Correct per engine and PostGIS's paired wins and losses against SpatiaLite, with the exact McNemar p
    (a replayed question whose prompt changed is not counted)."""
    from kgsql.eval.compare import mcnemar_p

    records = [r for r in records if not r.get("not_replayable")]
    lite = [r["spatialite"]["correct"] for r in records]
    pg = [r["postgis"]["correct"] for r in records]
    wins = sum(b and not a for a, b in zip(lite, pg))
    losses = sum(a and not b for a, b in zip(lite, pg))
    return {"questions": len(records), "correct_spatialite": sum(lite), "correct_postgis": sum(pg),
            "postgis_wins": wins, "postgis_losses": losses, "mcnemar_p": mcnemar_p(wins, losses)}


def _summary(args: argparse.Namespace, dbs: Sequence[str], records: Sequence[dict[str, Any]],
             load_s: float) -> dict[str, Any]:
    """The report's totals over the scored questions (a replayed one whose prompt changed is only counted as
    not replayable): correct per engine (all and per database), paired, PostGIS function use, failures."""
    scored = [r for r in records if not r.get("not_replayable")]
    return {
        "databases": list(dbs), "split": args.split, "profiles": not args.no_profiles, "pool": args.pool,
        "load_seconds": round(load_s, 2), **paired_totals(scored),
        "per_database": {db: paired_totals([r for r in scored if r.get("db") == db]) for db in dbs},
        "postgis_answers_with_postgis_functions": sum(r["postgis"]["uses_postgis"] for r in scored),
        "postgis_correct_with_postgis_functions": sum(r["postgis"]["uses_postgis"] and r["postgis"]["correct"]
                                                      for r in scored),
        "postgis_queries_that_fail": sum(bool(r["postgis"]["error"]) for r in scored),
        "spatialite_queries_that_fail": sum(bool(r["spatialite"]["error"]) for r in scored),
        "gold_errors": sum(bool(r["gold_error"]) for r in scored),
        "not_replayable": len(records) - len(scored),
        "llm_s_per_question": {e: round(sum(r[e].get("llm_s", 0.0) for r in scored) / max(len(scored), 1), 2)
                               for e in ENGINES},
    }


def chosen_databases(names: str, data: Dataset) -> list[str]:
    """The databases ``--db`` names (``all``: every one of the split with questions), each with a file."""
    with_questions = list(dict.fromkeys(e.db_id for e in data.questions))
    dbs = with_questions if names.strip() == "all" else [n.strip() for n in names.split(",") if n.strip()]
    missing = [db for db in dbs if db not in with_questions or data.db_files.get(db) is None]
    if not dbs or missing:
        raise KgsqlError(f"no questions or no database file for {', '.join(map(repr, missing)) or 'any database'} "
                         f"in split '{data.split}'")
    return dbs


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)

    from kgsql.eval.datasets.spatial import load_spatial
    from kgsql.lab.pg_cluster import TempCluster
    from kgsql.methods import parse_sets
    from kgsql.llm import default_lm
    from kgsql.schema_graph import SchemaGraph

    try:
        options = parse_sets(args.sets)
        if args.replay and args.replay.resolve() == args.out.with_suffix(".jsonl").resolve():
            raise InputError(f"--replay: {args.replay} is this run's own progress file; give another --out")
        replay = replay_lm(args.replay) if args.replay else None
        data = load_spatial(args.data_dir, args.split)
        ids = {i.strip() for i in args.ids.split(",") if i.strip()}
        unknown = sorted(ids - {e.id for e in data.questions})
        if unknown:
            raise InputError(f"--ids: no question {', '.join(map(repr, unknown))} in split '{data.split}'")
        dbs = chosen_databases(args.db, data)
        if args.model:
            os.environ["KGSQL_LOCAL_MODEL"] = args.model
        lm = replay or default_lm()
        records: list[dict[str, Any]] = []
        load_s = 0.0
        with TempCluster() as cluster, SchemaGraph.open() as graph:
            for db in dbs:
                items = [e for e in data.questions if e.db_id == db and (not ids or e.id in ids)][: args.limit or None]
                if not items:
                    continue  # none of its questions asked (--ids): not copied
                targets, seconds = _load_and_ingest(graph, cluster, db, data.db_files[db],
                                                    profiles=not args.no_profiles)
                load_s += seconds
                methods = _engine_methods(data, db, graph, lm, args.pool, options)
                records += _answer_all(items, methods, targets, data.db_files[db], args.timeout,
                                       args.out.with_suffix(".jsonl"), replay)
    except KgsqlError as exc:
        print(f"kgsql.lab.postgis_questions: error: {exc}", file=sys.stderr)
        return 1
    summary = _summary(args, dbs, records, load_s)
    print(json.dumps(summary, indent=2))
    args.out.write_text(json.dumps({"summary": summary, "records": records}, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
