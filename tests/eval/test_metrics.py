"""Metric rules on hand-made results and on real (tiny) SQLite files."""
from __future__ import annotations

import itertools
import random
import sqlite3
import time
from collections import Counter
from pathlib import Path

import pytest
from timing import scaled

from kgsql.eval.aggregate import aggregate
from kgsql.eval.metrics import (
    bird_rows_match,
    execute_sql,
    order_matters,
    remove_distinct,
    soft_f1,
    spider_rows_match,
)
from kgsql.eval.verdict import evaluate_prediction


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    """t(id, name, score, grp): duplicates in grp, a NULL score, float scores."""
    path = tmp_path / "toy.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, score REAL, grp TEXT);
        INSERT INTO t VALUES (1, 'ann', 1.5, 'x'), (2, 'bob', 2.5, 'x'),
                             (3, 'cid', NULL, 'y'), (4, 'dee', 0.1, 'z');
    """)
    conn.commit()
    conn.close()
    return path


# --------------------------------------------------------------------------- pure rules


def test_both_empty_match_one_empty_does_not() -> None:
    assert spider_rows_match([], [], ordered=False)
    assert spider_rows_match([], [], ordered=True)
    assert not spider_rows_match([(1,)], [], ordered=False)
    assert not spider_rows_match([], [(1,)], ordered=False)


def test_row_order_matters_only_when_ordered() -> None:
    gold, pred = [(1,), (2,)], [(2,), (1,)]
    assert spider_rows_match(gold, pred, ordered=False)
    assert not spider_rows_match(gold, pred, ordered=True)


def test_duplicates_are_a_multiset_for_spider_but_a_set_for_bird() -> None:
    gold, pred = [(1,), (1,), (2,)], [(1,), (2,), (2,)]
    assert not spider_rows_match(gold, pred, ordered=False)
    assert bird_rows_match(gold, pred)
    assert not spider_rows_match([(1,), (1,)], [(1,)], ordered=False)  # row counts differ


def test_column_permutation_is_accepted() -> None:
    gold = [(1, "a", 10.0), (2, "b", 20.0)]
    pred = [("a", 10.0, 1), ("b", 20.0, 2)]
    assert spider_rows_match(gold, pred, ordered=False)
    assert spider_rows_match(gold, pred, ordered=True)
    assert not bird_rows_match(gold, pred)  # BIRD compares whole tuples


def test_permutation_needs_rows_to_align_not_just_columns() -> None:
    # Each column holds {1, 2} on both sides, but the rows pair them differently.
    assert not spider_rows_match([(1, 2), (2, 1)], [(1, 1), (2, 2)], ordered=False)


def test_permutation_search_backtracks_between_equal_signatures() -> None:
    gold = [(1, 2, 1), (2, 1, 2)]
    pred = [(1, 1, 2), (2, 2, 1)]  # gold col 1 is pred col 2
    assert spider_rows_match(gold, pred, ordered=False)
    assert spider_rows_match(gold, pred, ordered=True)


def test_column_and_row_count_mismatch() -> None:
    assert not spider_rows_match([(1, 2)], [(1,)], ordered=False)
    assert not spider_rows_match([(1,)], [(1,), (2,)], ordered=False)


def test_nulls_compare_equal_to_nulls_only() -> None:
    assert spider_rows_match([(None, 1)], [(1, None)], ordered=False)
    assert not spider_rows_match([(None,)], [(0,)], ordered=False)
    assert bird_rows_match([(None,)], [(None,)])


def test_floats_compare_exactly_and_ints_equal_floats() -> None:
    assert spider_rows_match([(1,)], [(1.0,)], ordered=False)
    assert not spider_rows_match([(0.1 + 0.2,)], [(0.3,)], ordered=False)
    assert bird_rows_match([(2,)], [(2.0,)])


# The official test-suite's quick reject sorts each row's values by
# str(value) + str(type(value)) and compares the sorted rows with ==, so an int
# and an equal float may or may not match depending on the other values.


@pytest.mark.parametrize(("gold", "pred", "ordered", "expected"), [
    # "10<class 'int'>" sorts before "1<class 'int'>" ('0' < '<') but after
    # "1.0<class 'float'>" ('.' < '0'): (10, 1) vs (1.0, 10) -> rejected
    ([(1, 10)], [(1.0, 10)], False, False),
    ([(1, 10)], [(1.0, 10)], True, False),
    ([(1, 10)], [(10, 1.0)], False, False),
    # "10..." sorts before "2..." and before "2.0...": (10, 2) vs (10, 2.0) -> equal
    ([(2, 10)], [(2.0, 10)], False, True),
    ([(2, 10)], [(10, 2.0)], True, True),
    ([(1,)], [(1.0,)], False, True),                      # one column: nothing to reorder
    ([(1, 1)], [(1.0, 1.0)], False, True),
    ([(1, 1)], [(1, 1.0)], False, True),                  # (1, 1) vs (1.0, 1): equal cell by cell
    ([(3, 1.5)], [(3.0, 1.5)], False, True),              # "1.5..." < "3..." and < "3.0..."
    ([(1, "1.5")], [(1.0, "1.5")], False, False),         # ('1.5', 1) vs (1.0, '1.5')
    ([(1, "a")], [(1.0, "a")], False, True),
    ([("1", 1)], [(1, "1")], False, True),                # a string never equals a number
    ([("1",)], [(1,)], False, False),
    ([(None, 1)], [(1.0, None)], False, True),            # "1..." < "None..."
    ([(None, 10)], [(None, 10.0)], False, True),
    ([(None,)], [(0,)], False, False),
    # duplicates: the quick reject compares *sets* of sorted rows, the final test bags
    ([(1, 10), (1, 10)], [(1, 10), (1.0, 10)], False, False),
    ([(2, 10), (2, 10)], [(2, 10), (2.0, 10)], False, True),
    ([(2, 10), (2, 10)], [(2.0, 10), (2, 10)], True, True),
    ([(2, 10), (2, 10), (3, 10)], [(2, 10), (3, 10), (3, 10)], False, False),
    # ORDER BY: sorted rows compared position by position
    ([(1, 20), (2, 10)], [(2.0, 10), (1, 20)], False, True),
    ([(1, 20), (2, 10)], [(2.0, 10), (1, 20)], True, False),
    ([(1, 10), (2, 20)], [(1.0, 10), (2, 20)], True, False),
    ([(2, 10), (3, 10)], [(10, 2.0), (10, 3)], True, True),
    ([(2, 20)], [(20, 2.0)], True, False),                # (20, 2) vs (2.0, 20)
])
def test_int_float_mix_follows_the_type_aware_row_sort(gold: list, pred: list, ordered: bool,
                                                       expected: bool) -> None:
    assert spider_rows_match(gold, pred, ordered=ordered) is expected
    assert _reference_result_eq(gold, pred, ordered) is expected


def _reference_result_eq(gold: list, pred: list, ordered: bool) -> bool:
    """Brute-force statement of the test-suite's rule (every column permutation)."""
    if not gold and not pred:
        return True
    if len(gold) != len(pred) or len(gold[0]) != len(pred[0]):
        return False

    def sorted_row(row: tuple) -> tuple:
        return tuple(sorted(row, key=lambda v: str(v) + str(type(v))))

    g_sorted, p_sorted = list(map(sorted_row, gold)), list(map(sorted_row, pred))
    if (g_sorted != p_sorted) if ordered else (set(g_sorted) != set(p_sorted)):
        return False
    for perm in itertools.permutations(range(len(gold[0]))):
        moved = [tuple(row[i] for i in perm) for row in pred]
        if (moved == list(gold)) if ordered else (Counter(moved) == Counter(gold)):
            return True
    return False


def test_agrees_with_the_reference_rule_on_random_mixed_results() -> None:
    rng = random.Random(13)
    pool = [0, 1, 1.0, 2, 2.0, 10, 10.0, -1, -1.0, 0.5, 1e16, 10 ** 16, None, "1", "1.0", "10", "a",
            "", b"1"]

    def twin(v: object) -> object:  # an int as the equal float and back, sometimes
        if rng.random() < 0.5 and isinstance(v, (int, float)) and float(v).is_integer():
            return float(v) if isinstance(v, int) else int(v)
        return v

    disagreements = []
    for _ in range(4000):
        ncols, nrows = rng.randint(1, 4), rng.randint(1, 4)
        gold = [tuple(rng.choice(pool) for _ in range(ncols)) for _ in range(nrows)]
        perm = list(range(ncols))
        rng.shuffle(perm)
        pred = [tuple(twin(r[i]) for i in perm) for r in gold]
        if rng.random() < 0.5:
            rng.shuffle(pred)
        if rng.random() < 0.2:
            pred[0] = tuple(rng.choice(pool) for _ in range(ncols))
        for ordered in (False, True):
            if spider_rows_match(gold, pred, ordered) != _reference_result_eq(gold, pred, ordered):
                disagreements.append((gold, pred, ordered))
    assert disagreements == []


def test_int_float_mix_on_sqlite(db: Path) -> None:
    # BIRD compares whole rows with Python equality; the test-suite's row sort does not.
    assert _ex(db, "SELECT 1, 10", "SELECT 1.0, 10")[:2] == (0, 1)
    assert _ex(db, "SELECT 2, 10", "SELECT 2.0, 10")[:2] == (1, 1)
    assert _ex(db, "SELECT id, 10 FROM t WHERE id = 1", "SELECT id * 1.0, 10 FROM t WHERE id = 1")[:2] == (0, 1)


def test_many_columns_are_fast() -> None:
    rng = random.Random(0)
    gold = [tuple(rng.randint(0, 3) for _ in range(12)) for _ in range(300)]
    perm = list(range(12))
    rng.shuffle(perm)
    pred = [tuple(r[i] for i in perm) for r in gold]
    rng.shuffle(pred)
    start = time.monotonic()
    assert spider_rows_match(gold, pred, ordered=False)
    wrong = pred[:-1] + [tuple(9 for _ in range(12))]
    assert not spider_rows_match(gold, wrong, ordered=False)
    same = [(None,) * 10] * 50  # ten interchangeable columns: tried once, not 10! times
    assert spider_rows_match(same, same, ordered=False)
    assert time.monotonic() - start < scaled(2.0)


def test_remove_distinct_modes() -> None:
    sql = "SELECT DISTINCT a, count(DISTINCT b) FROM t WHERE c = 'distinct' AND \"distinct\" = 1"
    assert remove_distinct(sql) == (
        "SELECT  a, count( b) FROM t WHERE c = 'distinct' AND \"distinct\" = 1")
    assert remove_distinct(sql, "select") == (
        "SELECT  a, count(DISTINCT b) FROM t WHERE c = 'distinct' AND \"distinct\" = 1")
    assert remove_distinct(sql, "keep") == sql
    nested = "SELECT a FROM t WHERE a IN (select distinct b FROM s)"
    assert remove_distinct(nested) == "SELECT a FROM t WHERE a IN (select  b FROM s)"


def test_order_matters_uses_the_keyword_not_strings() -> None:
    assert order_matters("SELECT a FROM t ORDER BY a")
    assert order_matters("select a from t order\n  by a")
    assert order_matters("SELECT a FROM (SELECT a FROM t ORDER BY a LIMIT 3)")
    assert not order_matters("SELECT a FROM t WHERE b = 'order by'")
    assert not order_matters("SELECT a FROM t")


# --------------------------------------------------------------------------- soft F1


@pytest.mark.parametrize(("gold", "pred", "expected"), [
    # row 1 matches fully; row 2: tp 1/2, fp 1/2, fn 1/2 -> P = R = 1.5/2
    ([(1, "a"), (2, "b")], [(1, "a"), (2, "c")], 0.75),
    ([(1,)], [(1,), (2,)], 2 / 3),          # extra predicted row: fp += 1
    ([(1,), (2,)], [(1,)], 2 / 3),          # missing row: fn += 1
    ([(1,), (1,)], [(1,)], 1.0),            # duplicates dropped first
    ([], [], 1.0),
    ([(1,)], [], 0.0),
    ([], [(1,)], 0.0),
    ([(1,), (2,)], [(2,), (1,)], 0.0),      # rows are paired by position
    ([(1, 2)], [(2, 1)], 1.0),              # cells matched by membership
    ([(1, 2)], [(1, 2, 3)], 0.8),           # tp 1, fp 1/2 -> P 2/3, R 1
    ([(None, 1)], [(None, 2)], 0.5),        # NULL matches NULL
])
def test_soft_f1_hand_computed(gold: list, pred: list, expected: float) -> None:
    assert soft_f1(gold, pred) == pytest.approx(expected)


def test_soft_f1_optional_rounding() -> None:
    assert soft_f1([(0.1 + 0.2,)], [(0.3,)]) == 0.0
    assert soft_f1([(0.1 + 0.2,)], [(0.3,)], digits=6) == 1.0


# --------------------------------------------------------------------------- on SQLite


def test_execute_sql_rows_errors_timeout_and_missing(db: Path, tmp_path: Path) -> None:
    ok = execute_sql(db, "SELECT id FROM t ORDER BY id")
    assert ok.ok and ok.rows == [(1,), (2,), (3,), (4,)]
    bad = execute_sql(db, "SELECT nope FROM t")
    assert not bad.ok and bad.kind == "error"
    slow = execute_sql(db, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                           "SELECT count(*) FROM c", timeout_s=0.3)
    assert slow.kind == "timeout" and slow.elapsed_s < scaled(5)
    assert execute_sql(tmp_path / "absent.sqlite", "SELECT 1").kind == "missing_db"
    assert execute_sql(db, "  ").kind == "error"


def test_writes_are_refused_and_leave_the_file_alone(db: Path) -> None:
    v = evaluate_prediction(db, ["SELECT count(*) FROM t"], "DELETE FROM t")
    assert (v.spider_ex, v.bird_ex, v.soft_f1) == (0, 0, 0.0)
    assert v.error_kind and v.error_kind.startswith("pred_")
    assert execute_sql(db, "SELECT count(*) FROM t").rows == [(4,)]


def _ex(db: Path, gold: str | list[str], pred: str, **kw: object) -> tuple[int, int, float]:
    v = evaluate_prediction(db, [gold] if isinstance(gold, str) else gold, pred, **kw)
    return v.spider_ex, v.bird_ex, v.soft_f1


def test_order_ignored_without_gold_order_by(db: Path) -> None:
    # Soft-F1 pairs rows by position, so the reversed order shares no cell.
    assert _ex(db, "SELECT name FROM t", "SELECT name FROM t ORDER BY name DESC") == (1, 1, 0.0)


def test_order_enforced_with_gold_order_by(db: Path) -> None:
    spider, bird, _ = _ex(db, "SELECT name FROM t ORDER BY id", "SELECT name FROM t ORDER BY id DESC")
    assert (spider, bird) == (0, 1)


def test_distinct_removed_by_default(db: Path) -> None:
    gold, pred = "SELECT grp FROM t", "SELECT DISTINCT grp FROM t"
    assert _ex(db, gold, pred)[:2] == (1, 1)
    assert _ex(db, gold, pred, distinct="keep")[:2] == (0, 1)


def test_count_distinct_follows_the_mode(db: Path) -> None:
    gold, pred = "SELECT count(DISTINCT grp) FROM t", "SELECT count(grp) FROM t"
    assert _ex(db, gold, pred)[0] == 1  # test-suite: every DISTINCT keyword removed
    assert _ex(db, gold, pred, distinct="select")[0] == 0
    assert _ex(db, gold, pred)[1] == 0  # BIRD runs the SQL as written: 3 vs 4


def test_column_permutation_on_sqlite(db: Path) -> None:
    assert _ex(db, "SELECT id, name FROM t", "SELECT name, id FROM t") == (1, 0, 1.0)


def test_empty_results_match(db: Path) -> None:
    assert _ex(db, "SELECT name FROM t WHERE id > 100", "SELECT id FROM t WHERE id < 0") == (1, 1, 1.0)
    assert _ex(db, "SELECT name FROM t WHERE id > 100", "SELECT name FROM t")[:2] == (0, 0)


def test_nulls_and_floats_on_sqlite(db: Path) -> None:
    assert _ex(db, "SELECT score FROM t WHERE id = 3", "SELECT NULL") == (1, 1, 1.0)
    assert _ex(db, "SELECT 1", "SELECT 1.0")[:2] == (1, 1)
    assert _ex(db, "SELECT sum(score) FROM t", "SELECT 4.1")[:2] == (1, 1)
    assert _ex(db, "SELECT 0.1 + 0.2", "SELECT 0.3")[:2] == (0, 0)
    assert _ex(db, "SELECT 0.1 + 0.2", "SELECT 0.3", soft_f1_digits=9)[2] == 1.0


def test_prediction_error_and_timeout_score_zero(db: Path) -> None:
    v = evaluate_prediction(db, ["SELECT 1"], "SELECT nope FROM t")
    assert (v.spider_ex, v.bird_ex, v.soft_f1, v.error_kind) == (0, 0, 0.0, "pred_error")
    v = evaluate_prediction(db, ["SELECT 1"], "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
                            "SELECT x + 1 FROM c) SELECT max(x) FROM c", timeout_s=0.3)
    assert (v.spider_ex, v.error_kind) == (0, "pred_timeout")
    v = evaluate_prediction(db, ["SELECT 1"], "")
    assert v.error_kind == "no_prediction"


def test_gold_failure_is_reported(db: Path) -> None:
    v = evaluate_prediction(db, ["SELECT nope FROM t"], "SELECT 1")
    assert v.error_kind == "gold_error" and v.spider_ex == 0


def test_any_gold_alternative_counts(db: Path) -> None:
    v = evaluate_prediction(db, ["SELECT nope", "SELECT name FROM t WHERE id = 9",
                                 "SELECT name FROM t WHERE id = 1"], "SELECT 'ann'")
    assert (v.spider_ex, v.bird_ex, v.soft_f1, v.matched_gold) == (1, 1, 1.0, 2)
    assert v.error is None and len(v.gold_errors) == 1


# --------------------------------------------------------------------------- aggregation


def test_aggregate_excludes_missing_db_from_means() -> None:
    rows = [
        {"spider_ex": 1, "bird_ex": 1, "soft_f1": 1.0, "difficulty": "easy", "label": "G S"},
        {"spider_ex": 0, "bird_ex": 1, "soft_f1": 0.5, "difficulty": "hard", "label": "S",
         "error_kind": "pred_error"},
        {"spider_ex": None, "bird_ex": None, "soft_f1": None, "difficulty": "easy",
         "error_kind": "missing_db"},
    ]
    out = aggregate(rows)
    assert (out["n"], out["n_scored"], out["n_missing_db"], out["n_pred_error"]) == (3, 2, 1, 1)
    assert out["spider_ex"] == 0.5 and out["bird_ex"] == 1.0 and out["soft_f1"] == 0.75
    assert list(out["by_difficulty"]) == ["easy", "hard"]
    assert out["by_difficulty"]["easy"]["n"] == 2 and out["by_difficulty"]["easy"]["spider_ex"] == 1.0
    assert out["by_label"]["G S"]["n"] == 1
    assert out["by_tag"]["S"]["n"] == 2 and out["by_tag"]["S"]["spider_ex"] == 0.5


def test_in_process_executor_follows_the_same_rules(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """KGSQL_SQL_ISOLATION=0 runs scoring in-process: same rows, kinds and verdicts as the worker."""
    monkeypatch.setenv("KGSQL_SQL_ISOLATION", "0")
    assert execute_sql(db, "SELECT name FROM t WHERE id = 1").rows == [("ann",)]
    assert execute_sql(db, "SELECT nope FROM t").kind == "error"
    slow = execute_sql(db, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                           "SELECT count(*) FROM c", timeout_s=0.3)
    assert slow.kind == "timeout"
    assert execute_sql(db, "DELETE FROM t").kind == "unsafe"
    assert execute_sql(db, "SELECT count(*) FROM t").rows == [(4,)]
    assert _ex(db, "SELECT id, name FROM t", "SELECT name, id FROM t") == (1, 0, 1.0)
