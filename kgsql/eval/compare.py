"""``python -m kgsql.eval compare RUN_A RUN_B``: per-question wins and losses.

Accepts records JSONL logs and ``score --json`` outputs alike. Only questions
scored in both runs are compared; questions present in one run only, or
unscored in either (missing database), are counted and listed apart so a
difference in coverage cannot pass for a difference in accuracy.

A file that is neither (binary, another JSON, a metric that is not a number)
is one ``error:`` line naming it; ``--json`` writes only into an existing
folder.
"""
from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from kgsql.errors import InputError
from kgsql.eval.metric_registry import METRICS, default_metric, metric_names
from kgsql.eval.records import Record, read_records


def load_run(path: str | Path) -> list[Record]:
    """Records of a run: a JSONL log or a JSON object with a ``records`` list.

    InputError names the file when it is missing or not such a log (binary, not UTF-8, records
    that are not objects).
    """
    p = Path(path)
    if not p.is_file():
        raise InputError(f"run file not found: {p}")
    try:
        return _read_run(p)
    except UnicodeDecodeError:
        raise InputError(f"{p}: not a records JSONL or score JSON file (not UTF-8 text)") from None
    except (TypeError, ValueError) as exc:  # JSON values where records (objects) belong
        raise InputError(f"{p}: not a records JSONL or score JSON file ({exc})") from None
    except OSError as exc:
        raise InputError(f"cannot read run file {p}: {exc.strerror or exc}") from None


def _read_run(p: Path) -> list[Record]:
    head = p.read_text(encoding="utf-8").lstrip()[:1]
    if head == "{":
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            data = None  # a JSONL log also starts with "{"
        if isinstance(data, dict) and "id" not in data:  # with an id: a log of one record
            if not isinstance(data.get("records"), list):
                raise InputError(f"{p}: JSON without a 'records' list (not a score output)")
            return [Record.from_dict(r) for r in data["records"]]
    return read_records(p)


def mcnemar_p(wins: int, losses: int) -> float | None:
    """Exact two-sided McNemar (binomial) p-value on the discordant pairs."""
    n = wins + losses
    if n == 0:
        return None
    tail = sum(math.comb(n, k) for k in range(min(wins, losses) + 1))
    return min(1.0, 2 * tail / 2**n)


def compare_runs(a: list[Record], b: list[Record], metric: str | None = None) -> dict[str, Any]:
    """Wins (A better), losses (A worse) and ties per question on ``metric`` (default: the first
    registered); a binary metric gets the exact McNemar p-value."""
    metric = metric or default_metric()
    if metric not in METRICS:
        raise InputError(f"unknown metric {metric!r}: expected one of {', '.join(metric_names())}")
    by_a = {r.id: r for r in a}
    by_b = {r.id: r for r in b}
    common = [i for i in by_a if i in by_b]
    out: dict[str, Any] = {
        "metric": metric, "wins": [], "losses": [], "ties_correct": [], "ties_wrong": [],
        "only_a": [i for i in by_a if i not in by_b],
        "only_b": [i for i in by_b if i not in by_a],
        "unscored": [],
    }
    sum_a = sum_b = 0.0
    for qid in common:
        va = _score(by_a[qid], metric, "A")
        vb = _score(by_b[qid], metric, "B")
        if va is None or vb is None:
            out["unscored"].append(qid)
            continue
        sum_a += va
        sum_b += vb
        if va > vb:
            out["wins"].append(qid)
        elif va < vb:
            out["losses"].append(qid)
        else:
            out["ties_correct" if va >= 1 else "ties_wrong"].append(qid)
    n = len(common) - len(out["unscored"])
    out["n_compared"] = n
    out["a_mean"] = sum_a / n if n else None
    out["b_mean"] = sum_b / n if n else None
    out["delta"] = (sum_a - sum_b) / n if n else None
    out["mcnemar_p"] = (mcnemar_p(len(out["wins"]), len(out["losses"]))
                        if METRICS.get(metric).binary else None)
    out["questions"] = {qid: {"question": by_a[qid].question, "db_id": by_a[qid].db_id,
                              "a": by_a[qid].value(metric), "b": by_b[qid].value(metric)}
                        for qid in out["wins"] + out["losses"]}
    return out


def _score(record: Record, metric: str, run: str) -> float | None:
    """``record``'s value of ``metric``: a number or None (unscored); InputError for anything else."""
    value = record.value(metric)
    if value is None:
        return None
    if isinstance(value, (int, float)) and math.isfinite(value):  # a bool is an int: True scores 1
        return float(value)
    raise InputError(f"run {run}, question {record.id}: {metric} is {str(value)[:40]!r}, not a number")


def format_comparison(result: dict[str, Any], name_a: str, name_b: str, *,
                      list_questions: bool = True) -> str:
    """Readable report: each win and loss, then the totals."""
    lines = [f"A = {name_a}", f"B = {name_b}", f"metric: {result['metric']}"]
    if list_questions:
        for kind, sign in (("wins", "+"), ("losses", "-")):
            if result[kind]:
                lines.append(f"{kind} of A ({len(result[kind])}):")
            for qid in result[kind]:
                q = result["questions"][qid]
                lines.append(f"  {sign} {qid:>10}  {q['db_id']:<22} A={q['a']:.3g} B={q['b']:.3g}  "
                             f"{q['question'][:70]}")

    def pct(v: float | None) -> str:
        return "-" if v is None else f"{100 * v:.2f}"

    lines += [
        f"compared: {result['n_compared']}   A: {pct(result['a_mean'])}   B: {pct(result['b_mean'])}"
        f"   A-B: {pct(result['delta'])} points",
        f"wins: {len(result['wins'])}   losses: {len(result['losses'])}   "
        f"both right: {len(result['ties_correct'])}   both wrong/equal: {len(result['ties_wrong'])}",
    ]
    if result["mcnemar_p"] is not None:
        lines.append(f"exact McNemar p = {result['mcnemar_p']:.4g}")
    extra = [f"{k}: {len(result[k])}" for k in ("only_a", "only_b", "unscored") if result[k]]
    if extra:
        lines.append("not compared: " + ", ".join(extra))
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_a", type=Path, help="records JSONL or score JSON")
    parser.add_argument("run_b", type=Path, help="records JSONL or score JSON")
    parser.add_argument("--metric", choices=metric_names(), default=default_metric())
    parser.add_argument("--json", type=Path, default=None, help="write the comparison here")
    parser.add_argument("--totals-only", action="store_true", help="do not list each question")


def main(args: argparse.Namespace) -> int:
    if args.json and not args.json.parent.is_dir():
        raise InputError(f"--json {args.json}: the folder {args.json.parent} does not exist; create it first")
    result = compare_runs(load_run(args.run_a), load_run(args.run_b), args.metric)
    print(format_comparison(result, str(args.run_a), str(args.run_b),
                            list_questions=not args.totals_only))
    if args.json:
        try:
            args.json.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n",
                                 encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot write --json {args.json}: {exc.strerror or exc}") from None
    return 0
