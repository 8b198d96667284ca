"""Score issue 34's refusals on a refusal set's records (a benchmark: prints numbers, writes a report).

    python -m kgsql.lab.refusal_score RECORDS.jsonl --set DIR [--replay [--words]] [--out REPORT.json]
    python -m kgsql.lab.refusal_score RECORDS.jsonl --databases DIR --replay     # any run: all answerable

``DIR`` is a folder :mod:`kgsql.lab.refusal_set` wrote (``dev.json`` says which questions lost a column).
A record counts as refused when its answer refused (``extra.refusal``); with ``--replay`` the refusal is
decided again from the record's own queries (``extra.candidates``) by :func:`kgsql.generate.refusal.refusal_for`
on ``DIR/database`` (no model call), which is how a run made before the rule existed is scored.
``--databases`` scores any eval run's records (Spider, BIRD: every question answerable) for the share
refused. Prints the share refused among the hidden-column questions and among the untouched ones (issue
34's goals: >= 80 % and <= 5 %), and EX on the untouched ones with refused answers counted wrong.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable

from kgsql.errors import KgsqlError
from kgsql.lab.flag_rate import read_records

GOALS = {"hidden_refused": 0.80, "untouched_refused": 0.05}


def read_set(directory: Path) -> dict[tuple[str, str], dict[str, Any] | None]:
    """(db_id, question) -> the hidden column (``None``: untouched), from the set's ``dev.json``."""
    path = directory / "dev.json"
    if not path.is_file():
        raise KgsqlError(f"no refusal set in {directory} (dev.json missing): build one with kgsql.lab.refusal_set")
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise KgsqlError(f"{path}: not JSON ({exc})") from None
    if not isinstance(rows, list) or not all(isinstance(r, dict) and "refusal_case" in r for r in rows):
        raise KgsqlError(f"{path} is not a refusal set: its rows have no 'refusal_case'")
    return {(r["db_id"], r["question"]): r["refusal_case"] for r in rows}


def replayed_refusal(databases: Path, *, words: bool = False,
                     unsure_words: bool = True) -> Callable[[dict[str, Any]], str]:
    """A function: record -> the refusal its queries earn now as ``"signal: text"`` ("" for none). Each database
    (``databases/<db>/<db>.sqlite``) is read once as ingest reads it; the retriever runs again on the
    question (and the record's evidence, as the method reads it) for the words' support; ``words``: the
    method's ``refuse_words``; ``unsure_words``: its ``refuse_unsure_words`` (the answer, the record's last
    query when it was refused, run again read-only for its rows; its readings judged again). No model call."""
    from kgsql.generate.refusal import refusal_for
    from kgsql.ingest.pipeline import read_sources
    from kgsql.retrieve.retriever import SchemaRetriever

    schemas: dict[str, Any] = {}
    retriever = SchemaRetriever()

    def refusal(record: dict[str, Any]) -> str:
        db = record["db_id"]
        path = databases / db / f"{db}.sqlite"
        if db not in schemas:
            if not path.is_file():
                raise KgsqlError(f"database {db} not found: {path}")
            schemas[db] = read_sources(path, name=db)[0]  # as ingest reads it: descriptions beside it too
        extra = record.get("extra") or {}
        queries = extra.get("candidates") or [record.get("pred") or ""]
        query = " ".join(p for p in (record["question"], extra.get("evidence") or "") if p)
        selection = retriever.select(schemas[db], query, db_path=path)
        signal = words or (unsure_words and _unsure(record, schemas[db]))
        found = refusal_for(record["question"], schemas[db], queries, word_support=selection.word_support,
                            values=[v.value for v in selection.values], words_signal=signal)
        return f"{found.signal}: {found.text}" if found else ""

    return refusal


def _unsure(record: dict[str, Any], schema: Any) -> bool:
    """Whether the record's answer was unsure (:func:`kgsql.generate.refusal.unsure`): its query (the last one
    tried, when the answer was refused and so cleared) failed or returned no rows, or its readings, judged
    again by this code (:func:`kgsql.lab.flag_rate.reread_opinions`), doubt it."""
    from types import SimpleNamespace

    from kgsql.generate.refusal import unsure
    from kgsql.lab.flag_rate import reread_opinions, rerun

    extra = record.get("extra") or {}
    sql = (extra.get("candidates") or [""])[-1] if extra.get("refusal") else record.get("pred") or ""
    rows: list[Any] = []
    error: str | None = "no SQL"
    if sql:
        result, error = rerun(schema, sql)
        rows = result.rows if result is not None else []
    opinions = reread_opinions(schema, sql, rows if error is None else None, extra.get("opinions") or [])
    return unsure(SimpleNamespace(error=error, rows=rows, opinions=opinions))


def recorded_refusal(record: dict[str, Any]) -> str:
    return str((record.get("extra") or {}).get("refusal") or "")


def _share(k: int, n: int) -> float | None:
    return round(k / n, 4) if n else None


def score(records: list[dict[str, Any]], cases: dict[tuple[str, str], dict[str, Any] | None],
          refusal: Callable[[dict[str, Any]], str]) -> dict[str, Any]:
    """Refused shares on both halves, EX on the untouched half (a refusal counts wrong), and the texts."""
    hidden = untouched = hidden_refused = untouched_refused = right = 0
    examples: list[dict[str, Any]] = []
    by_signal: dict[str, dict[str, int]] = {}
    for record in records:
        key = (record["db_id"], record["question"])
        if cases and key not in cases:
            raise KgsqlError(f"record {record.get('id')} ({record['db_id']}) is not a question of this refusal set")
        text = refusal(record)
        case = cases.get(key)
        if case is not None:
            hidden += 1
            hidden_refused += bool(text)
        else:
            untouched += 1
            untouched_refused += bool(text)
            right += bool(not text and record.get("spider_ex"))
        if text:
            signal = text.split(":", 1)[0] if text.startswith(("query:", "words:")) else "recorded"
            counts = by_signal.setdefault(signal, {"hidden": 0, "untouched": 0})
            counts["hidden" if case is not None else "untouched"] += 1
            examples.append({"id": record.get("id"), "db_id": record["db_id"], "hidden": case,
                             "question": record["question"], "refusal": text})
    return {"hidden": hidden, "hidden_refused": hidden_refused, "hidden_refused_share": _share(hidden_refused, hidden),
            "untouched": untouched, "untouched_refused": untouched_refused,
            "untouched_refused_share": _share(untouched_refused, untouched),
            "untouched_ex": _share(right, untouched), "by_signal": by_signal, "goals": GOALS, "refusals": examples}


def main(argv: list[str] | None = None) -> int:
    from kgsql.cli_types import OneLineParser

    parser = OneLineParser(prog="python -m kgsql.lab.refusal_score", description=__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("records", type=Path, help="an eval run's records.jsonl on the refusal set")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--set", dest="set_dir", type=Path, help="the refusal set's folder")
    where.add_argument("--databases", type=Path, help="DIR/<db>/<db>.sqlite for another run (all answerable)")
    parser.add_argument("--replay", action="store_true", help="decide each refusal again from the record's queries")
    parser.add_argument("--words", action="store_true",
                        help="with --replay: the word-support signal always (the method's refuse_words)")
    parser.add_argument("--no-unsure-words", dest="unsure_words", action="store_false",
                        help="with --replay: no word-support signal where the answer is unsure (the method's "
                             "refuse_unsure_words=false, the default before session 34)")
    parser.add_argument("--out", type=Path, help="write the report here (JSON)")
    args = parser.parse_args(argv)
    try:
        cases = read_set(args.set_dir) if args.set_dir else {}
        databases = args.set_dir / "database" if args.set_dir else args.databases
        refusal = replayed_refusal(databases, words=args.words, unsure_words=args.unsure_words) \
            if args.replay else recorded_refusal
        report = score(read_records(args.records), cases, refusal)
    except KgsqlError as exc:
        print(f"kgsql.lab.refusal_score: error: {exc}", file=sys.stderr)
        return 1
    for half in ("hidden", "untouched"):
        if not report[half]:
            continue
        print(f"{half:9s}: {report[half + '_refused']}/{report[half]} refused "
              f"({report[half + '_refused_share']}; goal {'>=' if half == 'hidden' else '<='} "
              f"{GOALS[half + '_refused']})")
    print(f"untouched EX (a refusal counts wrong): {report['untouched_ex']}")
    for signal, counts in sorted(report["by_signal"].items()):
        print(f"  refused by {signal}: {counts['hidden']} hidden, {counts['untouched']} untouched")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
