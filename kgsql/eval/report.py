"""Summaries of evaluation records: JSON, Markdown and PNG plots.

One summary covers any mix of runs: overall figures, breakdowns by
difficulty / label, token and time totals, and the same per run
(``method`` x ``shots``) so the plots can compare methods; runs of a
multi-turn benchmark also get interaction EX (``kgsql.eval.interactions``).

``python -m kgsql.eval.report RECORDS.jsonl... --out DIR`` writes
``summary.json``, ``summary.md`` and the plots into DIR.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from kgsql.eval.aggregate import aggregate
from kgsql.eval.interactions import interaction_markdown
from kgsql.eval.metric_registry import METRICS, default_metric, metric_names
from kgsql.eval.records import Record


def _rows(records: Iterable[Record | Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [r.to_dict() if isinstance(r, Record) else dict(r) for r in records]


def _costs(rows: list[dict[str, Any]]) -> dict[str, Any]:
    tokens = [r["tokens"] for r in rows if r.get("tokens") is not None]
    latency = [r["latency_s"] for r in rows if r.get("latency_s") is not None]
    rounds = [r["rounds"] for r in rows if r.get("rounds") is not None]
    return {
        "tokens_total": sum(tokens) if tokens else None,
        "tokens_mean": sum(tokens) / len(tokens) if tokens else None,
        "latency_total_s": round(sum(latency), 3) if latency else None,
        "latency_mean_s": sum(latency) / len(latency) if latency else None,
        "rounds_mean": sum(rounds) / len(rounds) if rounds else None,
    }


def run_key(row: Mapping[str, Any]) -> str:
    """Name of the run a record belongs to: ``method`` or ``method/N-shot``."""
    method = row.get("method") or "default"
    shots = row.get("shots")
    return method if shots is None else f"{method}/{shots}-shot"


def summarize(records: Iterable[Record | Mapping[str, Any]]) -> dict[str, Any]:
    """Overall metrics, breakdowns, costs, and the same for each run."""
    rows = _rows(records)
    out = {**aggregate(rows), **_costs(rows)}
    runs: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        runs.setdefault(run_key(r), []).append(r)
    if len(runs) > 1 or any(r.get("method") for r in rows):
        out["by_run"] = {}
        for key, rs in runs.items():
            out["by_run"][key] = {"method": rs[0].get("method"), "shots": rs[0].get("shots"),
                                  **aggregate(rs), **_costs(rs)}
    return out


def _pct(v: Any) -> str:
    return "–" if v is None else f"{100 * v:.2f}"


def _num(v: Any) -> str:
    if v is None:
        return "–"
    return f"{v:,.0f}" if isinstance(v, int) or float(v).is_integer() else f"{v:,.2f}"


def _table(title: str, groups: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """A group per row, a column per registered metric."""
    metrics = METRICS.values()
    lines = [f"### {title}", "", "| group | n | scored | " + " | ".join(m.column for m in metrics) + " |",
             "|---|---:|---:|" + "---:|" * len(metrics)]
    for name, m in groups.items():
        lines.append(f"| {name} | {m['n']} | {m['n_scored']} | "
                     + " | ".join(_pct(m.get(metric.name)) for metric in metrics) + " |")
    return lines + [""]


def to_markdown(summary: Mapping[str, Any], title: str = "Evaluation summary") -> str:
    """Markdown tables of a :func:`summarize` result (metrics in percent)."""
    lines = [f"# {title}", ""]
    lines += _table("Overall", {"all": summary})
    lines += [f"Missing database: {summary['n_missing_db']} · prediction errors: "
              f"{summary['n_pred_error']} · gold errors: {summary['n_gold_error']}", ""]
    depth = " (turn depth)" if summary.get("interaction") else ""  # a conversation's turns: depth as difficulty
    for key, name in (("by_difficulty", f"By difficulty{depth}"), ("by_label", "By label"),
                      ("by_tag", "By label tag")):
        if summary.get(key):
            lines += _table(name, summary[key])
    lines += interaction_markdown(summary)
    lines += ["### Cost", "", "| run | tokens total | tokens/question | time total (s) | "
              "s/question | rounds/question |", "|---|---:|---:|---:|---:|---:|"]
    runs = summary.get("by_run") or {"all": summary}
    for name, m in runs.items():
        lines.append(f"| {name} | {_num(m['tokens_total'])} | {_num(m['tokens_mean'])} | "
                     f"{_num(m['latency_total_s'])} | {_num(m['latency_mean_s'])} | "
                     f"{_num(m['rounds_mean'])} |")
    lines.append("")
    if summary.get("by_run"):
        lines += _table("By run", summary["by_run"])
    return "\n".join(lines)


# --------------------------------------------------------------------------- plots


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # files only; never needs a display
    import matplotlib.pyplot as plt

    return plt


def plot_ex_by_method_shots(summary: Mapping[str, Any], path: str | Path,
                            metric: str | None = None) -> Path | None:
    """Grouped bars: one group per method, one bar per shot count."""
    metric = metric or default_metric()
    label = METRICS.get(metric).column
    runs = summary.get("by_run") or {}
    table: dict[str, dict[str, float]] = {}
    for m in runs.values():
        if m.get(metric) is not None:
            shots = "-" if m.get("shots") is None else str(m["shots"])
            table.setdefault(m.get("method") or "default", {})[shots] = 100 * m[metric]
    if not table:
        return None
    plt = _pyplot()
    methods = list(table)
    shots = sorted({s for v in table.values() for s in v}, key=lambda s: (not s.isdigit(), s.zfill(4)))
    width = 0.8 / len(shots)
    fig, ax = plt.subplots(figsize=(max(5, 1.4 * len(methods) + 2), 4))
    for k, s in enumerate(shots):
        xs = [i + (k - (len(shots) - 1) / 2) * width for i in range(len(methods))]
        ax.bar(xs, [table[m].get(s, 0) for m in methods], width,
               label=f"{s}-shot" if s != "-" else "n/a")
    ax.set_xticks(range(len(methods)), methods, rotation=20, ha="right")
    ax.set_ylabel(f"{label} (%)")
    ax.set_ylim(0, 100)
    ax.set_title(f"{label} by method and shots")
    ax.legend(fontsize="small")
    return _save(fig, plt, path)


def plot_ex_by_difficulty(summary: Mapping[str, Any], path: str | Path,
                          metric: str | None = None) -> Path | None:
    """Grouped bars: one group per difficulty (or label tag), one bar per run."""
    metric = metric or default_metric()
    label = METRICS.get(metric).column
    runs = summary.get("by_run") or {"all": summary}
    key = "by_difficulty" if any(m.get("by_difficulty") for m in runs.values()) else "by_tag"
    levels: list[str] = []
    for m in runs.values():
        levels += [k for k in (m.get(key) or {}) if k not in levels]
    if not levels:
        return None
    plt = _pyplot()
    width = 0.8 / len(runs)
    fig, ax = plt.subplots(figsize=(max(5, 1.2 * len(levels) + 2), 4))
    for k, (name, m) in enumerate(runs.items()):
        groups = m.get(key) or {}
        vals = [100 * (groups.get(lv, {}).get(metric) or 0) for lv in levels]
        xs = [i + (k - (len(runs) - 1) / 2) * width for i in range(len(levels))]
        ax.bar(xs, vals, width, label=name)
    ax.set_xticks(range(len(levels)), levels)
    ax.set_ylabel(f"{label} (%)")
    ax.set_ylim(0, 100)
    ax.set_title(f"{label} by {'difficulty' if key == 'by_difficulty' else 'label tag'}")
    if len(runs) > 1:
        ax.legend(fontsize="small")
    return _save(fig, plt, path)


def plot_tokens_vs_ex(summary: Mapping[str, Any], path: str | Path,
                      metric: str | None = None) -> Path | None:
    """Scatter of mean tokens per question against the metric, one colour per method."""
    metric = metric or default_metric()
    label = METRICS.get(metric).column
    runs = summary.get("by_run") or {"all": summary}
    points = [(m.get("method") or name, name, m["tokens_mean"], 100 * m[metric])
              for name, m in runs.items()
              if m.get("tokens_mean") is not None and m.get(metric) is not None]
    if not points:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for method in dict.fromkeys(p[0] for p in points):
        pts = [p for p in points if p[0] == method]
        ax.scatter([p[2] for p in pts], [p[3] for p in pts], label=method)
        for _, name, x, y in pts:
            ax.annotate(name.split("/")[-1], (x, y), fontsize="x-small",
                        textcoords="offset points", xytext=(3, 3))
    ax.set_xlabel("tokens per question (mean)")
    ax.set_ylabel(f"{label} (%)")
    ax.set_title(f"tokens vs {label}")
    ax.legend(fontsize="small")
    return _save(fig, plt, path)


def _save(fig: Any, plt: Any, path: str | Path) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(p, dpi=120)
    plt.close(fig)
    return p


def write_report(records: Iterable[Record | Mapping[str, Any]], out_dir: str | Path, *,
                 title: str = "Evaluation summary", metric: str | None = None,
                 plots: bool = True) -> dict[str, Path]:
    """Write summary.json, summary.md and (with matplotlib) the PNG plots."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary = summarize(records)
    written = {"json": out / "summary.json", "markdown": out / "summary.md"}
    written["json"].write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    written["markdown"].write_text(to_markdown(summary, title), encoding="utf-8")
    if plots:
        try:
            _pyplot()
        except ImportError:
            print("warning: matplotlib not installed; no plots (pip install 'kgsql[viz]')",
                  file=sys.stderr)
            return written
        for name, fn in (("ex_by_method_shots", plot_ex_by_method_shots),
                         ("ex_by_difficulty", plot_ex_by_difficulty),
                         ("tokens_vs_ex", plot_tokens_vs_ex)):
            p = fn(summary, out / f"{name}.png", metric)
            if p is not None:
                written[name] = p
    return written


def main(argv: list[str] | None = None) -> int:
    from kgsql.eval.compare import load_run

    parser = argparse.ArgumentParser(prog="python -m kgsql.eval.report", description=__doc__)
    parser.add_argument("runs", nargs="+", type=Path, help="records JSONL or score JSON files")
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    parser.add_argument("--title", default="Evaluation summary")
    parser.add_argument("--metric", choices=metric_names(), default=default_metric())
    args = parser.parse_args(argv)
    records = [r for path in args.runs for r in load_run(path)]
    for name, path in write_report(records, args.out, title=args.title, metric=args.metric).items():
        print(f"{name}: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
