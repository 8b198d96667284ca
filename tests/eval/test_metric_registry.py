"""A metric registered from outside kgsql/eval is scored, logged, summarized and compared like a built-in one.

The toy metric "row count matches" is declared here, in the test, and
touches no module of kgsql/eval: it appears in a run's records, its
summary (JSON and Markdown), run.json, the question table and ``eval
compare --metric``; records of earlier versions (metric values at the top
level) still load and compare.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pytest

from kgsql.errors import UnknownNameError
from kgsql.eval.__main__ import main as eval_main
from kgsql.eval.compare import compare_runs
from kgsql.eval.metric import Metric, Results
from kgsql.eval.metric_registry import (
    BUILT_IN,
    get_metric,
    metric_names,
    metrics_for,
    register_metric,
    unregister_metric,
)
from kgsql.eval.question_table import question_table
from kgsql.eval.records import Record, read_records
from kgsql.eval.run import run_eval
from kgsql.eval.verdict import evaluate_prediction
from tests.eval.test_run import ANSWERS, answering_lm, make_db, spider_args, spider_dir  # noqa: F401 - fixture

ROW_COUNT = Metric("row_count", lambda r: len(r.gold) == len(r.pred), label="rows",
                   description="the prediction returns as many rows as the gold query")


@pytest.fixture()
def row_count() -> Iterator[Metric]:
    register_metric(ROW_COUNT)
    try:
        yield ROW_COUNT
    finally:
        unregister_metric(ROW_COUNT.name)


def test_the_built_in_metrics_are_registered_in_their_column_order() -> None:
    assert metric_names()[:3] == ["spider_ex", "bird_ex", "soft_f1"]
    assert [m.name for m in BUILT_IN] == metric_names()
    assert [get_metric(n).binary for n in metric_names()] == [True, True, False]
    with pytest.raises(UnknownNameError, match="did you mean 'bird_ex'"):
        get_metric("bird_exe")


def test_a_name_is_registered_once_and_never_a_record_field(row_count: Metric) -> None:
    with pytest.raises(ValueError, match="registered already"):
        register_metric(row_count)
    with pytest.raises(ValueError, match="not a record field"):
        register_metric(Metric("tokens", lambda r: True))
    fields = set(Record("1", "db").to_dict()) - set(metric_names())
    for name in fields:  # every field of a record line is refused as a metric name
        with pytest.raises(ValueError):
            register_metric(Metric(name, lambda r: True))


def test_every_benchmark_headline_metric_is_registered_and_scores_it() -> None:
    from kgsql.eval.datasets import BENCHMARKS

    for name in BENCHMARKS:
        metric = get_metric(BENCHMARKS.get(name).metric)
        assert metric.applies_to(name), name


def test_a_metric_of_some_benchmarks_scores_only_theirs(tmp_path: Path) -> None:
    bird_only = Metric("bird_rows", lambda r: len(r.gold) == len(r.pred), datasets=("bird",))
    register_metric(bird_only)
    try:
        assert bird_only in metrics_for("bird") and bird_only not in metrics_for("spider")
        db = tmp_path / "t.sqlite"
        make_db(db, "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2);")
        v = evaluate_prediction(db, ["SELECT x FROM t"], "SELECT x FROM t", metrics=metrics_for("spider"))
        assert v.scores == {"spider_ex": 1, "bird_ex": 1, "soft_f1": 1.0}
        rec = Record("1", "t", scores=dict(v.scores))
        assert rec.to_dict()["bird_rows"] is None and rec.bird_rows is None  # written, as unscored
    finally:
        unregister_metric("bird_rows")


def test_a_metric_sees_each_query_as_it_ran(tmp_path: Path) -> None:
    """A metric's rewrite runs its own text; the others still get the query as written."""
    seen: list[tuple[str, str]] = []

    def record(r: Results) -> bool:
        seen.append((r.gold_sql, r.pred_sql))
        return r.options.get("tolerance") == 2

    db = tmp_path / "t.sqlite"
    make_db(db, "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2);")
    upper = Metric("upper", record, rewrite=lambda sql, options: sql.upper())
    v = evaluate_prediction(db, ["select x from t", "select 1"], "select x from t where x > 0",
                            metrics=[upper, get_metric("bird_ex")], tolerance=2)
    assert seen == [("SELECT X FROM T", "SELECT X FROM T WHERE X > 0"), ("SELECT 1", "SELECT X FROM T WHERE X > 0")]
    assert v.scores == {"upper": 1, "bird_ex": 1} and v.matched_gold == 0  # bird_ex marks the match, upper does not


def test_a_toy_metric_appears_in_a_run_its_summary_and_compare(
        row_count: Metric, spider_dir: Path, tmp_path: Path, schema_graph,
        capsys: pytest.CaptureFixture[str]) -> None:
    # Run A answers as ANSWERS (question 4 is wrong but returns one row, as the gold does);
    # run B also lists one singer where the gold lists three: fewer rows.
    answers_b = {**ANSWERS, "List singer names by age.": "SELECT name FROM singer ORDER BY age LIMIT 1"}
    runs = {}
    for name, answers in (("a", ANSWERS), ("b", answers_b)):
        out = tmp_path / name
        run_eval(spider_args(spider_dir, out), lm=answering_lm(answers), graph=schema_graph, say=lambda s: None)
        runs[name] = out

    line = json.loads((runs["a"] / "records.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert list(line)[5:9] == ["spider_ex", "bird_ex", "soft_f1", "row_count"]  # after pred, as the built-ins
    records = {r.id: r for r in read_records(runs["a"] / "records.jsonl")}
    assert (records["4"].spider_ex, records["4"].row_count) == (0, 1)
    assert records["2"].row_count is None and records["2"].error_kind == "missing_db"

    summary = json.loads((runs["a"] / "summary.json").read_text(encoding="utf-8"))
    assert (summary["spider_ex"], summary["row_count"]) == (0.75, 1.0)
    assert summary["by_difficulty"]  # the per-difficulty tables carry it too
    assert all("row_count" in m for m in summary["by_difficulty"].values())
    markdown = (runs["a"] / "summary.md").read_text(encoding="utf-8")
    assert "| group | n | scored | spider_ex | bird_ex | soft_f1 | rows |" in markdown
    assert "| all | 5 | 4 | 75.00 | 75.00 | 75.00 | 100.00 |" in markdown
    meta = json.loads((runs["a"] / "run.json").read_text(encoding="utf-8"))
    assert meta["cells"][0]["row_count"] == 1.0

    result = compare_runs(read_records(runs["a"] / "records.jsonl"), read_records(runs["b"] / "records.jsonl"),
                          "row_count")
    assert (result["wins"], result["losses"], result["n_compared"]) == (["1"], [], 4)
    assert result["mcnemar_p"] == 1.0  # a binary metric: McNemar applies
    assert eval_main(["compare", str(runs["a"] / "records.jsonl"), str(runs["b"] / "records.jsonl"),
                      "--metric", "row_count", "--totals-only"]) == 0
    assert "metric: row_count" in capsys.readouterr().out

    table = question_table({"a": list(records.values())}, metric="row_count")
    assert "| 4 | ✓ |" in table and "| **total** | 4/4 |" in table


def test_records_of_earlier_versions_load_and_compare_with_a_new_metric_registered(
        row_count: Metric, tmp_path: Path) -> None:
    """A line with the three metrics at the top level (every earlier records.jsonl) loads, keeps its values,
    is written back byte for byte, and compares on a built-in metric; the new metric is unscored there."""
    line = {"id": "1", "db_id": "d", "question": "q", "gold": ["SELECT 1"], "pred": "SELECT 1", "spider_ex": 1,
            "bird_ex": 0, "soft_f1": 0.5, "error": None, "error_kind": None, "matched_gold": 0, "difficulty": "easy",
            "label": None, "method": "kgsql", "shots": 5, "tokens": 683, "latency_s": 20.7, "rounds": 1,
            "extra": {"tips": []}}
    rec = Record.from_dict(line)
    assert (rec.spider_ex, rec.bird_ex, rec.soft_f1, rec.row_count) == (1, 0, 0.5, None)
    unregister_metric("row_count")
    try:
        assert json.dumps(rec.to_dict()) == json.dumps(line)
    finally:
        register_metric(row_count)
    other = Record.from_dict({**line, "bird_ex": 1})
    result = compare_runs([rec], [other], "bird_ex")
    assert (result["losses"], result["questions"]["1"]["a"]) == (["1"], 0)
    assert compare_runs([rec], [other], "row_count")["unscored"] == ["1"]
