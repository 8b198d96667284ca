"""``python -m kgsql.eval score``: score an existing prediction file.

Predictions from any system are scored by the same code as kgsql's own runs:
one SQL per line aligned with the dataset (Spider/BIRD style; ``SQL<TAB>db_id``
and BIRD's ``SQL<TAB>----- bird -----<TAB>db_id`` lines are accepted, as is
BIRD's JSON ``{"0": "SQL\\t----- bird -----\\tdb_id", ...}``).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kgsql.errors import InputError
from kgsql.eval.datasets import Dataset, GoldQuestion, available_benchmarks, get_benchmark
from kgsql.eval.datasets.registry import language_help, languages, split_help, taking
from kgsql.eval.interactions import interaction_line, without_interaction_breaks
from kgsql.eval.aggregate import aggregate
from kgsql.eval.metric_registry import METRICS, metrics_for
from kgsql.eval.metrics import DEFAULT_TIMEOUT_S, DistinctMode
from kgsql.eval.records import Record, RecordLog
from kgsql.eval.verdict import evaluate_prediction

BIRD_SEPARATOR = "\t----- bird -----\t"
_DB_ID = re.compile(r"[A-Za-z0-9_\-]+")


def parse_prediction_line(line: str) -> tuple[str, str | None]:
    """(SQL, db_id or None) from one prediction line.

    A trailing ``<TAB>db_id`` (Spider gold files) or BIRD's
    ``<TAB>----- bird -----<TAB>db_id`` is split off; other tabs stay in the SQL.
    """
    line = line.rstrip("\r\n")
    if BIRD_SEPARATOR in line:
        sql, _, db_id = line.rpartition(BIRD_SEPARATOR)
        return sql.strip(), db_id.strip() or None
    if "\t" in line:
        sql, _, tail = line.rpartition("\t")
        if _DB_ID.fullmatch(tail.strip()):
            return sql.strip(), tail.strip()
    return line.strip(), None


def read_predictions(path: str | Path) -> list[tuple[str, str | None]]:
    """Predictions of a file, in order: text lines or a BIRD-style JSON dict/list."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read predictions {p}: {exc.strerror}") from exc
    if p.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{p}: not JSON: {exc}") from exc
        if isinstance(data, dict):
            try:
                items = [data[k] for k in sorted(data, key=int)]
            except ValueError as exc:
                raise InputError(f"{p}: JSON keys must be question indexes") from exc
        elif isinstance(data, list):
            items = data
        else:
            raise InputError(f"{p}: expected a JSON object or list of SQL strings")
        return [parse_prediction_line(s) if isinstance(s, str) else ("", None) for s in items]
    return [parse_prediction_line(line) for line in text.splitlines()]


def score_example(
    dataset: Dataset, example: GoldQuestion, pred: str | None, *,
    timeout_s: float = DEFAULT_TIMEOUT_S, distinct: DistinctMode = "all",
    soft_f1_digits: int | None = None,
) -> Record:
    """Record for one question: verdicts, or None verdicts when its DB is missing."""
    rec = Record(id=example.id, db_id=example.db_id, question=example.question,
                 gold=list(example.gold), pred=pred, difficulty=example.difficulty,
                 label=example.label)
    rec.extra.update(example.turn)  # a conversation's turn: its interaction, for interaction EX
    db = dataset.db_path(example.db_id)
    if db is None:
        rec.error, rec.error_kind = "database file missing", "missing_db"
        return rec
    v = evaluate_prediction(db, example.gold, pred, timeout_s=timeout_s, metrics=metrics_for(dataset.name),
                            distinct=distinct, soft_f1_digits=soft_f1_digits)
    rec.scores = dict(v.scores)
    rec.error, rec.error_kind, rec.matched_gold = v.error, v.error_kind, v.matched_gold
    if v.pred_elapsed_s is not None:
        rec.extra["pred_exec_s"] = round(v.pred_elapsed_s, 4)
    if v.gold_errors and v.error_kind != "gold_error":
        rec.extra["gold_errors"] = v.gold_errors
    return rec


def _progress(items: list[Any], enabled: bool) -> Iterable[Any]:
    if not enabled:
        return items
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a core dependency
        return items
    return tqdm(items, file=sys.stderr, unit="q", dynamic_ncols=True)


def format_table(summary: dict[str, Any]) -> str:
    """Readable text table: overall row then one row per difficulty / label / tag; a column per metric."""
    def fmt(v: Any) -> str:
        return "   -  " if v is None else f"{100 * v:6.2f}"

    columns = [(m.name, m.column, max(len(m.column) + 2, 9)) for m in METRICS.values()]
    lines = [f"{'group':<28}{'n':>6}{'scored':>8}" + "".join(f"{label:>{w}}" for _, label, w in columns)]

    def row(name: str, m: dict[str, Any]) -> None:
        lines.append(f"{name[:27]:<28}{m['n']:>6}{m['n_scored']:>8}"
                     + "".join(f"{fmt(m.get(metric)):>{w}}" for metric, _, w in columns))

    row("all", summary)
    for section in ("by_difficulty", "by_label", "by_tag"):
        for name, m in (summary.get(section) or {}).items():
            row(f"{section[3:]}: {name}", m)
    lines.append(f"missing database: {summary['n_missing_db']} question(s)"
                 + (f" ({', '.join(summary.get('missing_db_ids') or [])})"
                    if summary.get("missing_db_ids") else "")
                 + f"; prediction errors: {summary['n_pred_error']}"
                 + f"; gold errors: {summary['n_gold_error']}")
    interactions = interaction_line(summary)
    if interactions:
        lines.append(interactions)
    return "\n".join(lines)


def score_file(
    dataset: Dataset, predictions: list[tuple[str, str | None]], *, limit: int | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S, distinct: DistinctMode = "all",
    soft_f1_digits: int | None = None, progress: bool = False, log: RecordLog | None = None,
) -> dict[str, Any]:
    """Score aligned predictions; returns totals plus ``records`` in dataset order.

    A multi-turn benchmark's file may hold a blank line after each interaction
    (SParC's official form); those breaks are dropped first."""
    predictions = without_interaction_breaks(predictions, dataset.questions)
    questions = dataset.questions[:limit] if limit is not None else dataset.questions
    if len(predictions) > len(dataset.questions):
        raise InputError(f"{len(predictions)} predictions for {len(dataset.questions)} questions: "
                         "the file is not aligned with this dataset/split")
    warnings: list[str] = []
    if len(predictions) < len(questions):
        warnings.append(f"only {len(predictions)} predictions for {len(questions)} questions; "
                        "the rest score 0 (no prediction)")
    mismatched = [ex.id for ex, (_, db) in zip(questions, predictions) if db and db != ex.db_id]
    if mismatched:
        warnings.append(f"{len(mismatched)} prediction line(s) name another db_id than the "
                        f"question (first: id {mismatched[0]}); check the file's alignment")
    done = {r.id: r for r in log.records()} if log else {}
    start = time.monotonic()
    records: list[Record] = []
    for i, ex in enumerate(_progress(questions, progress)):
        if ex.id in done:
            records.append(done[ex.id])
            continue
        pred = predictions[i][0] if i < len(predictions) else None
        rec = score_example(dataset, ex, pred, timeout_s=timeout_s, distinct=distinct,
                            soft_f1_digits=soft_f1_digits)
        if log:
            log.append(rec)
        records.append(rec)
    rows = [r.to_dict() for r in records]
    summary = {
        "dataset": dataset.name, "split": dataset.split, "data_dir": str(dataset.root),
        "timeout_s": timeout_s, "distinct": distinct, "soft_f1_digits": soft_f1_digits,
        **aggregate(rows),
        "missing_db_ids": sorted({r.db_id for r in records if r.error_kind == "missing_db"}),
        "elapsed_s": round(time.monotonic() - start, 3),
        "warnings": warnings,
        "records": rows,
    }
    return summary


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", required=True, choices=available_benchmarks())
    parser.add_argument("--data-dir", required=True, type=Path, help="benchmark folder")
    parser.add_argument("--split", default=None,
                        help=split_help())
    parser.add_argument("--predictions", required=True, type=Path,
                        help="one SQL per line aligned with the questions (or BIRD JSON)")
    parser.add_argument("--json", type=Path, default=None, help="write totals + records here")
    parser.add_argument("--records", type=Path, default=None,
                        help="also append records to this JSONL log (resumes: done ids skipped)")
    parser.add_argument("--limit", type=int, default=None, help="score only the first N questions")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                        help="per-query timeout in seconds (default 30)")
    parser.add_argument("--distinct", choices=("all", "select", "keep"), default="all",
                        help="DISTINCT removal for spider_ex (default all, as the test-suite)")
    parser.add_argument("--soft-f1-digits", type=int, default=None,
                        help="round floats to N digits before Soft-F1 (default: exact)")
    parser.add_argument("--question-field", default=None,
                        help=f"{taking('question_field')}: JSON field with the question (e.g. SpiderSynQuestion)")
    parser.add_argument("--questions-file", type=Path, default=None,
                        help=f"{taking('questions_file')}: questions JSON other than <split>.json")
    parser.add_argument("--db-dir", type=Path, default=None,
                        help=f"{taking('db_dir')}: folder of <db>/<db>.sqlite (default under --data-dir)")
    parser.add_argument("--lang", choices=languages(), default=None, help=language_help())
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def main(args: argparse.Namespace) -> int:
    benchmark = get_benchmark(args.dataset)
    options = benchmark.loader_options(lang=args.lang, questions_file=args.questions_file, db_dir=args.db_dir,
                                       question_field=args.question_field)
    dataset = benchmark.load(args.data_dir, args.split, **options)
    predictions = read_predictions(args.predictions)
    log = RecordLog(args.records) if args.records else None
    summary = score_file(dataset, predictions, limit=args.limit, timeout_s=args.timeout,
                         distinct=args.distinct, soft_f1_digits=args.soft_f1_digits,
                         progress=not args.no_progress, log=log)
    summary["predictions"] = str(args.predictions)
    for warning in summary["warnings"]:
        print(f"warning: {warning}", file=sys.stderr)
    print(f"{dataset.name} {dataset.split}: {args.predictions}")
    print(format_table(summary))
    print(f"elapsed: {summary['elapsed_s']:.1f} s")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(summary, indent=1, ensure_ascii=False) + "\n",
                             encoding="utf-8")
    return 0
