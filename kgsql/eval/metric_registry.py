"""The registered metrics, in one place: every table, record and ``--metric`` choice reads them here.

    from kgsql.eval.metric_registry import get_metric, metric_names
    metric_names()                  # ['spider_ex', 'bird_ex', 'soft_f1']: the report's columns, in order
    get_metric("soft_f1").binary    # False: compare gives no McNemar p, the question table no ✓/✗

A metric is a :class:`~kgsql.eval.metric.Metric`. The built-in ones are
declared in :mod:`kgsql.eval.metrics` and registered below; adding one is a
module declaring ``METRIC = Metric(...)`` plus one entry in ``BUILT_IN``
(docs/architecture.md, "Adding a metric"), and a metric registered at run
time with :func:`register_metric` (a script, a test) is scored, logged,
summarized and compared like the built-in ones.

Records keep a metric's value at the top level under its name (the format
of every earlier ``records.jsonl``); :class:`ScoresByName` lets code read
``record.spider_ex`` as it always could.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kgsql.eval.metric import Metric
from kgsql.eval.metrics import BIRD_EX, SOFT_F1, SPIDER_EX
from kgsql.registry import Registry

__all__ = ["BUILT_IN", "METRICS", "Metric", "ScoresByName", "default_metric", "get_metric", "interaction_metrics",
           "is_scored", "metric_names", "metrics_for", "register_metric", "unregister_metric", "zero_scores"]

METRICS: Registry[Metric] = Registry("metric")

#: The built-in metrics, in their column order.
BUILT_IN: tuple[Metric, ...] = (SPIDER_EX, BIRD_EX, SOFT_F1)


def register_metric(metric: Metric) -> Metric:
    """Register ``metric`` (its name must be new, and not a field of a record)."""
    if metric.name in METRICS:
        raise ValueError(f"metric {metric.name!r} is registered already")
    if not metric.name.isidentifier() or metric.name in _RESERVED:
        raise ValueError(f"metric name {metric.name!r}: use an identifier that is not a record field")
    return METRICS.register(metric.name, metric)


def unregister_metric(name: str) -> Metric | None:
    """Forget a metric (tests register and remove their own)."""
    return METRICS.unregister(name)


def get_metric(name: str) -> Metric:
    """The metric called ``name``; UnknownNameError (with the closest name) for an unknown one."""
    return METRICS.get(name)


def metric_names() -> list[str]:
    """Names of the registered metrics, in registration order (report columns, ``--metric`` choices)."""
    return METRICS.names()


def default_metric() -> str:
    """The metric a command uses when none is named: the first registered (Spider's test-suite EX)."""
    return METRICS.names()[0]


def metrics_for(benchmark: str | None = None) -> list[Metric]:
    """The metrics that score ``benchmark``'s questions (every one when None)."""
    return [m for m in METRICS.values() if m.applies_to(benchmark)]


def interaction_metrics() -> list[Metric]:
    """The metrics an interaction is scored on: the binary ones (a graded value has no "every turn right")."""
    return [m for m in METRICS.values() if m.binary]


def zero_scores(benchmark: str | None = None) -> dict[str, int | float]:
    """Every metric's value for a question answered with nothing that ran."""
    return {m.name: m.zero for m in metrics_for(benchmark)}


def is_scored(row: Mapping[str, Any]) -> bool:
    """A record (dict form) has a value for some registered metric (None for all: its database is missing)."""
    return any(row.get(name) is not None for name in METRICS)


class ScoresByName:
    """Read and write a registered metric's value as an attribute (``record.spider_ex``), kept in ``scores``.

    Earlier code and records name the built-in metrics as fields; this keeps
    them readable while the values live in one dict keyed by metric name."""

    scores: dict[str, Any]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name == "scores" or name not in METRICS:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return self.scores.get(name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in METRICS and not name.startswith("_"):
            self.scores[name] = value
        else:
            object.__setattr__(self, name, value)


#: Names a metric may not take: fields of a record line.
_RESERVED = frozenset({
    "id", "db_id", "question", "gold", "pred", "scores", "verdicts", "error", "error_kind", "matched_gold",
    "difficulty", "label", "method", "shots", "tokens", "latency_s", "rounds", "extra"})

for _metric in BUILT_IN:
    register_metric(_metric)
