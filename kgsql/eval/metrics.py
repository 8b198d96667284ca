"""The built-in execution metrics: Spider test-suite EX, BIRD EX and BIRD Soft-F1.

The comparison functions are pure (result rows in, verdict out) so they can be
unit-tested on hand-made results; each is declared as a
:class:`~kgsql.eval.metric.Metric` at the end (registered in
:mod:`kgsql.eval.metric_registry`), and :func:`kgsql.eval.verdict.evaluate_prediction`
executes the predicted and gold SQL once and applies every registered metric.
Running a query for scoring (:func:`execute_sql`) lives here too. Exact rules,
with their sources, are in ``docs/eval.md``.
"""
from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import sqlglot
from sqlglot.tokens import TokenType

from kgsql.db.connect import check_sqlite_file
from kgsql.db.isolate import execute_isolated
from kgsql.errors import DatabaseFileError, KgsqlError, QueryExecutionError, UnsafeSQLError
from kgsql.eval.metric import Metric, Results

DEFAULT_TIMEOUT_S = 30.0
MAX_ROWS = 1_000_000  # a result this large is reported as "truncated", not compared
Row = tuple[Any, ...]
DistinctMode = Literal["all", "select", "keep"]


# --------------------------------------------------------------------------- execution


@dataclass
class Execution:
    """Outcome of running one query: rows, or an error with its kind."""

    rows: list[Row] | None
    error: str | None = None
    kind: str | None = None  # "error", "timeout", "unsafe", "truncated", "missing_db"
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None


def execute_sql(db_path: str | Path, sql: str, *, timeout_s: float = DEFAULT_TIMEOUT_S,
                max_rows: int = MAX_ROWS) -> Execution:
    """Run one read-only query; never raises for SQL problems (they become ``error``).

    The query runs through the guard in a killable worker process
    (:func:`kgsql.db.isolate.execute_isolated`: read-only, SpatiaLite when the
    file is spatial, bounded in time and memory) with TEXT decoded as Spider's
    test-suite does (``errors="ignore"``: a few Spider databases hold
    non-UTF-8 bytes that would otherwise fail the fetch).
    """
    if not sql or not sql.strip():
        return Execution(None, "empty SQL", "error")
    start = time.monotonic()
    try:
        check_sqlite_file(db_path)
        res = execute_isolated(db_path, sql, timeout_s=timeout_s, max_rows=max_rows, lenient_text=True)
    except UnsafeSQLError as exc:
        return Execution(None, str(exc), "unsafe", time.monotonic() - start)
    except QueryExecutionError as exc:
        kind = "timeout" if getattr(exc, "kind", None) == "timeout" else "error"
        return Execution(None, str(exc), kind, time.monotonic() - start)
    except KgsqlError as exc:
        kind = "missing_db" if isinstance(exc, DatabaseFileError) else "error"
        return Execution(None, str(exc), kind, time.monotonic() - start)
    if res.truncated:
        return Execution(None, f"result has more than {max_rows} rows", "truncated", time.monotonic() - start)
    return Execution([tuple(r) for r in res.rows], elapsed_s=time.monotonic() - start)


# --------------------------------------------------------------------------- SQL text rules


def _tokens(sql: str) -> list[Any] | None:
    try:
        return sqlglot.Dialect.get_or_raise("sqlite").tokenize(sql)
    except Exception:  # sqlglot TokenError and friends: keep the text as is
        return None


def remove_distinct(sql: str, mode: DistinctMode = "all") -> str:
    """Drop DISTINCT keywords as Spider's test-suite does before executing.

    ``all`` (the official default) removes every DISTINCT keyword token:
    ``SELECT DISTINCT`` at any nesting level and ``COUNT(DISTINCT x)`` /
    ``SUM(DISTINCT x)``. ``select`` removes only those right after SELECT;
    ``keep`` removes none. Strings and quoted identifiers are never touched.
    """
    if mode == "keep" or "distinct" not in sql.lower():
        return sql
    toks = _tokens(sql)
    if toks is None:
        return sql
    spans = [
        (t.start, t.end + 1) for i, t in enumerate(toks)
        if t.token_type == TokenType.DISTINCT
        and (mode == "all" or (i > 0 and toks[i - 1].token_type == TokenType.SELECT))
    ]
    for start, end in reversed(spans):
        sql = sql[:start] + sql[end:]
    return sql


def order_matters(gold_sql: str) -> bool:
    """Row order counts when the gold query has ORDER BY anywhere (test-suite rule).

    The reference tests ``'order by' in gold.lower()``; the ORDER BY keyword
    token is used here so that string literals and odd spacing do not matter.
    """
    toks = _tokens(gold_sql)
    if toks is None:
        return re.search(r"\border\s+by\b", gold_sql, re.IGNORECASE) is not None
    return any(t.token_type == TokenType.ORDER_BY for t in toks)


# --------------------------------------------------------------------------- comparisons


def _type_aware_key(value: Any) -> str:
    """Sort key of a cell inside a row: its text, then its type's text.

    ``1`` gives ``"1<class 'int'>"`` and ``1.0`` gives ``"1.0<class 'float'>"``,
    so an int and an equal float can land at different places of a sorted row.
    """
    return f"{value!s}{type(value)!s}"


def _row_bag_key(row: Row) -> Row:
    """The row's values sorted by :func:`_type_aware_key`: a column-order-free
    form of the row that still compares its values with Python equality."""
    return tuple(sorted(row, key=_type_aware_key))


def _sorted_rows_agree(gold: Sequence[Row], pred: Sequence[Row], ordered: bool) -> bool:
    """The test-suite's quick reject: rows with their values sorted by type-aware
    key must be equal in sequence (``ordered``) or as *sets* (otherwise).

    Meant as a necessary condition, it is stricter than the permutation test
    when ints and floats mix: ``(1, 10)`` sorts to ``(10, 1)`` but ``(1.0, 10)``
    to ``(1.0, 10)``, and ``10 != 1.0``, so that pair is rejected although
    ``(1, 10) == (1.0, 10)``. The official verdict includes this, so it is kept.
    """
    g = [_row_bag_key(r) for r in gold]
    p = [_row_bag_key(r) for r in pred]
    return g == p if ordered else set(g) == set(p)


def spider_rows_match(gold: Sequence[Row], pred: Sequence[Row], ordered: bool) -> bool:
    """Spider test-suite denotation equality (the verdict of ``result_eq``).

    Both empty: match. Otherwise the row and column counts must agree, the
    rows with their values sorted by a type-aware key (text of the value, then
    of its type) must agree — as lists when ``ordered`` (gold has ORDER BY), as
    sets otherwise — and some permutation of the predicted columns must make
    the results equal: as lists when ``ordered``, as multisets otherwise.
    Values compare with Python equality (1 == 1.0, NULL == NULL), but the
    sorted-row test can tell an int from an equal float: ``[(1, 10)]`` vs
    ``[(1.0, 10)]`` does not match, ``[(2, 10)]`` vs ``[(2.0, 10)]`` does.
    """
    if not gold and not pred:
        return True
    if len(gold) != len(pred):
        return False
    ncols = len(gold[0])
    if any(len(r) != ncols for r in gold) or any(len(r) != ncols for r in pred):
        return False
    if not _sorted_rows_agree(gold, pred, ordered):
        return False
    gold_cols = [tuple(r[i] for r in gold) for i in range(ncols)]
    pred_cols = [tuple(r[i] for r in pred) for i in range(ncols)]
    if ordered:
        # Rows line up one to one, so a column permutation exists exactly when
        # the two results have the same multiset of column vectors.
        return Counter(gold_cols) == Counter(pred_cols)
    return _unordered_permutation_exists(gold, pred, gold_cols, pred_cols)


def _unordered_permutation_exists(gold: Sequence[Row], pred: Sequence[Row],
                                  gold_cols: list[Row], pred_cols: list[Row]) -> bool:
    """Search column assignments, pruned by per-column value multisets.

    Gold column i may only take a predicted column with the same multiset of
    values; predicted columns with identical value vectors are interchangeable
    and tried once; after each assignment the row multisets projected on the
    assigned columns must agree, which cuts most dead branches early.
    """
    gold_sig = [Counter(c) for c in gold_cols]
    groups: dict[Row, list[int]] = {}
    for j, col in enumerate(pred_cols):
        groups.setdefault(col, []).append(j)
    group_keys = list(groups)
    group_sig = [Counter(k) for k in group_keys]
    capacity = [len(groups[k]) for k in group_keys]
    candidates = [[g for g, sig in enumerate(group_sig) if sig == gold_sig[i]]
                  for i in range(len(gold_cols))]
    if any(not c for c in candidates):
        return False
    order = sorted(range(len(gold_cols)), key=lambda i: len(candidates[i]))
    chosen: list[int] = []

    def projected_equal(depth: int) -> bool:
        cols = order[:depth]
        g = Counter(tuple(row[i] for i in cols) for row in gold)
        vecs = [group_keys[chosen[k]] for k in range(depth)]
        p = Counter(zip(*vecs))
        return g == p

    def search(depth: int) -> bool:
        if depth == len(order):
            return True
        for g in candidates[order[depth]]:
            if capacity[g] == 0:
                continue
            capacity[g] -= 1
            chosen.append(g)
            if projected_equal(depth + 1) and search(depth + 1):
                return True
            chosen.pop()
            capacity[g] += 1
        return False

    return search(0)


def bird_rows_match(gold: Sequence[Row], pred: Sequence[Row]) -> bool:
    """BIRD EX: the two results are equal as sets of rows (order, duplicates ignored)."""
    return set(map(tuple, pred)) == set(map(tuple, gold))


def round_floats(rows: Iterable[Row], digits: int) -> list[Row]:
    """Rows with every float rounded to ``digits`` (opt-in tolerance for Soft-F1)."""
    return [tuple(round(v, digits) if isinstance(v, float) else v for v in r) for r in rows]


def soft_f1(gold: Sequence[Row], pred: Sequence[Row], *, digits: int | None = None) -> float:
    """BIRD Mini-Dev Soft-F1 (evaluation_f1.py semantics).

    Both empty: 1.0. Duplicate rows are dropped keeping first occurrences,
    then rows are paired by position. For a pair, each predicted cell found
    in the gold row adds 1/len(gold row) to TP, each one not found adds
    1/len(gold row) to FP, and each gold cell missing from the predicted row
    adds 1/len(gold row) to FN. An unpaired gold row adds 1 to FN, an
    unpaired predicted row 1 to FP. F1 = 2PR/(P+R), 0 when undefined.
    """
    if digits is not None:
        gold, pred = round_floats(gold, digits), round_floats(pred, digits)
    if not gold and not pred:
        return 1.0
    gold_rows = list(dict.fromkeys(map(tuple, gold)))
    pred_rows = list(dict.fromkeys(map(tuple, pred)))
    tp = fp = fn = 0.0
    for i, g in enumerate(gold_rows):
        if i >= len(pred_rows):
            fn += 1
            continue
        p = pred_rows[i]
        width = len(g)
        tp += sum(v in g for v in p) / width
        fp += sum(v not in g for v in p) / width
        fn += sum(v not in p for v in g) / width
    fp += max(len(pred_rows) - len(gold_rows), 0)
    precision = tp / (tp + fp) if tp + fp > 0 else 0.0
    recall = tp / (tp + fn) if tp + fn > 0 else 0.0
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


# --------------------------------------------------------------------------- the metrics


def _spider_statement(sql: str, options: Mapping[str, Any]) -> str:
    return remove_distinct(sql, options.get("distinct") or "all")


def _spider_compare(r: Results) -> bool:
    return spider_rows_match(r.gold, r.pred, order_matters(r.gold_sql))


def _bird_compare(r: Results) -> bool:
    return bird_rows_match(r.gold, r.pred)


def _soft_f1_compare(r: Results) -> float:
    return soft_f1(r.gold, r.pred, digits=r.options.get("soft_f1_digits"))


SPIDER_EX = Metric(
    "spider_ex", _spider_compare, rewrite=_spider_statement, marks_match=True,
    description="Spider test-suite execution match (DISTINCT removed; order counts when the gold has ORDER BY)")
BIRD_EX = Metric(
    "bird_ex", _bird_compare, marks_match=True,
    description="BIRD execution match: the two results are equal as sets of rows")
SOFT_F1 = Metric(
    "soft_f1", _soft_f1_compare, binary=False,
    description="BIRD Mini-Dev Soft-F1: cell overlap of the results, row by row")
