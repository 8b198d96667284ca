"""Records added up: counts, each registered metric's value over the scored questions, and breakdowns.

Works on records in dict form (``Record.to_dict()``, or a row of a ``score
--json`` output), so the report, ``score`` and ``run`` share one rule:
questions whose database is missing count in ``n`` but in no mean.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kgsql.eval.interactions import interaction_summary
from kgsql.eval.metric_registry import METRICS, is_scored

#: Difficulty levels in reading order (Spider's, then BIRD's); others follow alphabetically.
DIFFICULTY_ORDER = ("easy", "medium", "hard", "extra", "simple", "moderate", "challenging")


def mean_metrics(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Counts, and every registered metric added up its way, over rows that carry values.

    Rows without any value (database missing) count in ``n`` and
    ``n_missing_db`` but not in the means, so the denominator is ``n_scored``
    (a metric without a value on a scored row, e.g. one registered after the
    run, leaves that row out of its own mean only).
    """
    rows = list(rows)
    scored = [r for r in rows if is_scored(r)]
    out: dict[str, Any] = {
        "n": len(rows),
        "n_scored": len(scored),
        "n_missing_db": sum(r.get("error_kind") == "missing_db" for r in rows),
        "n_pred_error": sum(str(r.get("error_kind") or "").startswith("pred_")
                            or r.get("error_kind") == "no_prediction" for r in scored),
        "n_gold_error": sum(r.get("error_kind") == "gold_error" for r in scored),
    }
    for metric in METRICS.values():
        values = [float(r[metric.name]) for r in scored if r.get(metric.name) is not None]
        out[metric.name] = metric.aggregate(values) if values else None
    return out


def aggregate(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Overall means plus breakdowns by difficulty, by full label and by label tag; for turns of
    conversations (records with an interaction id), ``interaction``: interaction EX."""
    rows = list(rows)
    out = mean_metrics(rows)
    interactions = interaction_summary(rows)
    if interactions is not None:
        out["interaction"] = interactions
    by_difficulty: dict[str, list[Mapping[str, Any]]] = {}
    by_label: dict[str, list[Mapping[str, Any]]] = {}
    by_tag: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        if r.get("difficulty"):
            by_difficulty.setdefault(str(r["difficulty"]), []).append(r)
        if r.get("label"):
            by_label.setdefault(str(r["label"]), []).append(r)
            for tag in str(r["label"]).split():
                by_tag.setdefault(tag, []).append(r)
    order = {k: i for i, k in enumerate(DIFFICULTY_ORDER)}
    if by_difficulty:
        out["by_difficulty"] = {k: mean_metrics(by_difficulty[k]) for k in sorted(
            by_difficulty, key=lambda k: (order.get(k, len(order)), k))}
    if by_label:
        out["by_label"] = {k: mean_metrics(v) for k, v in sorted(by_label.items())}
        out["by_tag"] = {k: mean_metrics(v) for k, v in sorted(by_tag.items())}
    return out
