"""A metric is one object: how it scores a prediction, how it adds up, where it applies.

Modelled on sqlglot's dialects and DSPy's metrics. A :class:`Metric` says
everything the evaluation needs to know of one way to score a prediction
against gold on a database: how two executed results compare (``compare``,
per gold alternative), the text both queries run as when the metric rewrites
them first (Spider's test-suite removes DISTINCT), whether a question is
simply right or wrong (``binary``: McNemar, ✓/✗ and interaction EX apply),
how per-question values add up over questions (``aggregate``), its column
label in reports and the benchmarks it applies to. The evaluator
(:mod:`kgsql.eval.verdict`) executes each query once and hands every
registered metric the same :class:`Results`; records, reports, ``eval
compare`` and the question table iterate over the registry
(:mod:`kgsql.eval.metric_registry`) and never name a metric.
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Row = tuple[Any, ...]


@dataclass(frozen=True)
class Results:
    """What a metric compares for one gold alternative: both queries as they ran, and their rows.

    ``options`` are the scoring options of the run (``score --distinct``,
    ``--soft-f1-digits``): each metric reads the ones it knows."""

    gold_sql: str
    pred_sql: str
    gold: Sequence[Row]
    pred: Sequence[Row]
    options: Mapping[str, Any] = field(default_factory=dict)


def mean(values: Sequence[float]) -> float:
    """The plain mean, each question counting once (every built-in metric adds up this way)."""
    return sum(values) / len(values)


@dataclass(frozen=True)
class Metric:
    """One way to score a prediction against gold.

    ``name`` is the record field and the ``--metric`` value; ``compare``
    gives the value of one gold alternative (a bool or a number); the best
    alternative counts (``best``). A binary metric's value is 0 or 1 (an int
    in records); another's is a float. ``rewrite(sql, options)``: the text a
    query runs as for this metric (None: as written); a rewritten query that
    fails scores 0. ``marks_match``: a 1 names the gold alternative that
    matched (the record's ``matched_gold``). ``datasets``: the benchmarks whose
    questions it scores (None: every one); a benchmark's headline metric is
    its own field (``Benchmark.metric``)."""

    name: str
    compare: Callable[[Results], float | bool]
    description: str = ""
    label: str = ""
    binary: bool = True
    rewrite: Callable[[str, Mapping[str, Any]], str] | None = None
    best: Callable[[Sequence[float]], float] = max
    aggregate: Callable[[Sequence[float]], float] = mean
    marks_match: bool = False
    datasets: Collection[str] | None = None

    @property
    def column(self) -> str:
        """The metric's column header in reports."""
        return self.label or self.name

    @property
    def zero(self) -> int | float:
        """The value of a prediction that did not run (0, or 0.0 for a graded metric)."""
        return 0 if self.binary else 0.0

    def value(self, raw: float | bool) -> int | float:
        """``compare``'s answer as a record keeps it: 0/1 for a binary metric, a float otherwise."""
        return int(bool(raw)) if self.binary else float(raw)

    def applies_to(self, benchmark: str | None) -> bool:
        return self.datasets is None or benchmark is None or benchmark in self.datasets

    def statement(self, sql: str, options: Mapping[str, Any]) -> str:
        """The text a query runs as for this metric."""
        return sql if self.rewrite is None else self.rewrite(sql, options)
