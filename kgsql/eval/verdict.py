"""One prediction scored on every registered metric: each query executed once, each metric handed the rows.

The prediction runs once as written; a metric that rewrites queries
(:attr:`~kgsql.eval.metric.Metric.rewrite`) gets its text run once more only
when the text differs, so the built-in metrics cost what they cost when they
were hand-wired. The rules of each metric are in :mod:`kgsql.eval.metrics`
and ``docs/eval.md``.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kgsql.eval.metric import Metric, Results
from kgsql.eval.metric_registry import ScoresByName, metrics_for
from kgsql.eval.metrics import DEFAULT_TIMEOUT_S, Execution, execute_sql


@dataclass
class Verdict(ScoresByName):
    """Every metric's value for one prediction (``scores``), with why it failed when it did."""

    scores: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    error_kind: str | None = None  # pred_error, pred_timeout, gold_error, ...
    matched_gold: int | None = None  # index of the gold alternative that matched
    pred_elapsed_s: float | None = None
    gold_errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


Executor = Callable[..., Execution]


def evaluate_prediction(
    db_path: str | Path,
    gold_sqls: Sequence[str],
    pred_sql: str | None,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    execute: Executor = execute_sql,
    metrics: Sequence[Metric] | None = None,
    **options: Any,
) -> Verdict:
    """Execute ``pred_sql`` and each gold alternative on ``db_path`` and score on ``metrics``
    (default: every registered one).

    ``options`` go to the metrics (``distinct``: Spider EX's DISTINCT removal,
    ``soft_f1_digits``: Soft-F1's rounding). With several gold alternatives each
    metric takes its best value over the alternatives that execute. Errors and
    timeouts of the prediction score 0; a gold query that fails on every
    alternative scores 0 with ``error_kind="gold_error"``.
    """
    chosen = list(metrics_for() if metrics is None else metrics)
    verdict = Verdict(scores={m.name: m.zero for m in chosen})
    if not pred_sql or not pred_sql.strip():
        verdict.error, verdict.error_kind = "no prediction", "no_prediction"
        return verdict
    pred = execute(db_path, pred_sql, timeout_s=timeout_s)
    verdict.pred_elapsed_s = pred.elapsed_s
    if not pred.ok:
        verdict.error = f"prediction failed: {pred.error}"
        verdict.error_kind = "pred_timeout" if pred.kind == "timeout" else f"pred_{pred.kind}"
        return verdict
    pred_runs = {pred_sql: pred}
    best: dict[str, list[float]] = {m.name: [] for m in chosen}
    scored = False
    for i, gold_sql in enumerate(gold_sqls):
        gold = execute(db_path, gold_sql, timeout_s=timeout_s)
        if not gold.ok:
            verdict.gold_errors.append(f"gold {i}: {gold.error}")
            continue
        scored = True
        gold_runs = {gold_sql: gold}
        matched = False
        for metric in chosen:
            value = _one_alternative(metric, db_path, (gold_sql, gold_runs), (pred_sql, pred_runs),
                                     timeout_s, execute, options)
            best[metric.name].append(value)
            matched = matched or (metric.marks_match and bool(value))
        if verdict.matched_gold is None and matched:
            verdict.matched_gold = i
    if not scored:
        verdict.error = "gold query failed: " + "; ".join(verdict.gold_errors)
        verdict.error_kind = "gold_error"
    for metric in chosen:
        if best[metric.name]:
            verdict.scores[metric.name] = metric.value(metric.best(best[metric.name]))
    return verdict


def _one_alternative(metric: Metric, db_path: str | Path, gold: tuple[str, dict[str, Execution]],
                     pred: tuple[str, dict[str, Execution]], timeout_s: float, execute: Executor,
                     options: dict[str, Any]) -> int | float:
    """``metric``'s value on one gold alternative; each distinct query text runs once per side."""
    texts = []
    for sql, runs in (gold, pred):
        text = metric.statement(sql, options)
        if text not in runs:
            runs[text] = execute(db_path, text, timeout_s=timeout_s)
        texts.append(text)
    gold_run, pred_run = gold[1][texts[0]], pred[1][texts[1]]
    if not (gold_run.ok and pred_run.ok):
        return metric.zero
    return metric.value(metric.compare(Results(texts[0], texts[1], gold_run.rows or [], pred_run.rows or [],
                                               options)))
