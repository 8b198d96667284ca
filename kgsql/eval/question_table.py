"""Per-question Markdown tables of one or more runs: SQL, correct or not, time, tokens.

For reading a small run question by question (e.g. an ablation on ten
questions), where a mean hides which questions moved.

    python -m kgsql.eval.question_table full=runs/a/records.jsonl ablated=runs/b/records.jsonl
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Mapping, Sequence

from kgsql.eval.metric_registry import default_metric, get_metric, metric_names
from kgsql.eval.records import Record, read_records


def _mark(rec: Record | None, metric: str) -> str:
    """✓/✗ for a binary metric, the value in percent for a graded one."""
    if rec is None:
        return "·"
    value = rec.value(metric)
    if value is None:
        return "n/a"
    if not get_metric(metric).binary:
        return f"{100 * value:.0f}%"
    return "✓" if value else "✗"


def _sql(text: str | None, width: int) -> str:
    one = " ".join((text or "").split()).replace("|", "\\|")
    return one if len(one) <= width else one[: width - 1] + "…"


def question_table(runs: Mapping[str, Sequence[Record]], *, metric: str | None = None,
                   sql_width: int = 160) -> str:
    """One row per question (first run's order, then the rest): per run ✓/✗ on ``metric`` (default: the
    first registered), seconds, tokens, rounds, SQL; a totals row per run underneath."""
    metric = metric or default_metric()
    names = list(runs)
    by_run = {n: {r.id: r for r in runs[n]} for n in names}
    ids = list(dict.fromkeys(r.id for n in names for r in runs[n]))
    header = ["id"] + [f"{n} {h}" for n in names for h in ("ok", "s", "tokens", "rounds")]
    lines = ["| " + " | ".join(header) + " |", "|---" + "|---:" * (len(header) - 1) + "|"]
    for qid in ids:
        row = [qid]
        for n in names:
            rec = by_run[n].get(qid)
            row += [_mark(rec, metric),
                    "" if rec is None or rec.latency_s is None else f"{rec.latency_s:.0f}",
                    "" if rec is None or rec.tokens is None else f"{rec.tokens:,}",
                    "" if rec is None or rec.rounds is None else str(rec.rounds)]
        lines.append("| " + " | ".join(row) + " |")
    total = ["**total**"]
    for n in names:
        recs = list(by_run[n].values())
        scored = [r for r in recs if r.value(metric) is not None]
        right = sum(float(r.value(metric) or 0) for r in scored)  # a graded metric: the sum of its values
        secs = sum(r.latency_s or 0.0 for r in recs)
        toks = sum(r.tokens or 0 for r in recs)
        rounds = [r.rounds for r in recs if r.rounds is not None]
        right_text = f"{right:.0f}" if get_metric(metric).binary else f"{right:.1f}"
        total += [f"{right_text}/{len(scored)}", f"{secs:.0f}", f"{toks:,}",
                  f"{sum(rounds) / len(rounds):.1f}" if rounds else ""]
    lines.append("| " + " | ".join(total) + " |")
    lines += ["", "SQL per question (✓ correct, ✗ wrong; the gold is the first alternative):", ""]
    for qid in ids:
        first = next(by_run[n][qid] for n in names if qid in by_run[n])
        lines.append(f"**{qid}** {first.question}")
        lines.append(f"- gold: `{_sql(first.gold[0] if first.gold else '', sql_width)}`")
        for n in names:
            rec = by_run[n].get(qid)
            if rec is not None:
                why = f" ({rec.error_kind})" if rec.error_kind and not rec.value(metric) else ""
                lines.append(f"- {n} {_mark(rec, metric)}{why}: `{_sql(rec.pred, sql_width) or '(none)'}`")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kgsql.eval.question_table", description=__doc__)
    parser.add_argument("runs", nargs="+", help="NAME=records.jsonl (or just the path: its folder names it)")
    parser.add_argument("--metric", choices=metric_names(), default=default_metric())
    args = parser.parse_args(argv)
    runs: dict[str, list[Record]] = {}
    for item in args.runs:
        name, sep, path = item.partition("=")
        if not sep:
            path, name = item, Path(item).parent.name
        runs[name] = read_records(path)
    print(question_table(runs, metric=args.metric))
    return 0


if __name__ == "__main__":
    sys.exit(main())
