"""Gold-schema resolution and the linking benchmark on a tiny Spider-format dataset."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from kgsql.schema.model import Column, DatabaseSchema, Table
from kgsql.sql.gold_schema import gold_schema

SCHEMA = DatabaseSchema("m", tables=[
    Table("singer", [Column("singer_id"), Column("Name"), Column("Country")]),
    Table("concert", [Column("concert_id"), Column("singer_id"), Column("Year")]),
])


@pytest.mark.parametrize("sql,tables,columns", [
    ("SELECT T1.name FROM singer AS T1 JOIN concert AS T2 ON T1.singer_id = T2.singer_id WHERE T2.year = \"2014\"",
     {"singer", "concert"}, {("singer", "Name"), ("singer", "singer_id"), ("concert", "singer_id"), ("concert", "Year")}),
    ("SELECT count(*) FROM singer", {"singer"}, set()),
    ("SELECT * FROM singer WHERE country = 'France'", {"singer"}, {("singer", "Country")}),
    ("SELECT name FROM singer WHERE singer_id NOT IN (SELECT singer_id FROM concert)",
     {"singer", "concert"}, {("singer", "Name"), ("singer", "singer_id"), ("concert", "singer_id")}),
    ("SELECT name FROM singer AS T1 WHERE EXISTS (SELECT 1 FROM concert AS T2 WHERE T2.singer_id = T1.singer_id)",
     {"singer", "concert"}, {("singer", "Name"), ("singer", "singer_id"), ("concert", "singer_id")}),
    ("SELECT x.n FROM (SELECT `Name` AS n FROM singer) AS x", {"singer"}, {("singer", "Name")}),
])
def test_gold_schema(sql: str, tables: set[str], columns: set[tuple[str, str]]) -> None:
    g = gold_schema(sql, SCHEMA)
    assert g.ok, g.unresolved
    assert g.tables == tables and g.columns == columns


@pytest.mark.parametrize("sql,literal", [
    ("SELECT name FROM singer WHERE country = 'France'", {("singer", "Country")}),
    ('SELECT name FROM singer WHERE country = "France"', {("singer", "Country")}),  # Spider's double quotes
    ("SELECT name FROM singer WHERE lower(Country) LIKE '%fr%' AND singer_id > 3", {("singer", "Country")}),
    ("SELECT name FROM singer WHERE country IN ('France', 'Spain')", {("singer", "Country")}),
    ("SELECT T1.name FROM singer AS T1 JOIN concert AS T2 ON T1.singer_id = T2.singer_id WHERE T2.year = 2014",
     set()),
    ("SELECT name FROM singer WHERE 'France' = country", {("singer", "Country")}),
])
def test_gold_schema_literal_columns(sql: str, literal: set[tuple[str, str]]) -> None:
    """Columns the gold SQL compares with a text literal: reachable only through a value."""
    g = gold_schema(sql, SCHEMA)
    assert g.ok, g.unresolved
    assert g.literal_columns == literal


def test_miss_kinds() -> None:
    from kgsql.lab.stats import miss_kinds

    g = gold_schema("SELECT T1.name FROM singer AS T1 JOIN concert AS T2 ON T1.singer_id = T2.singer_id "
                    "WHERE T2.year = 2014 AND T1.country = 'France'", SCHEMA)
    everything = set(g.columns)
    # missed only the literal-compared column of a selected table
    assert miss_kinds(g, everything - {("singer", "Country")}, {"singer", "concert"}) == [
        "column_of_selected_table", "value_only"]
    # missed a column the question names in words
    assert miss_kinds(g, everything - {("concert", "Year")}, {"singer", "concert"}) == ["column_of_selected_table"]
    # missed the whole concert table
    assert miss_kinds(g, {c for c in everything if c[0] == "singer"}, {"singer"}) == ["whole_table"]


def test_gold_schema_reports_unknown_names() -> None:
    assert not gold_schema("SELECT nope FROM singer", SCHEMA).ok
    assert not gold_schema("SELECT FROM WHERE", SCHEMA).ok


def _tiny_spider(root: Path) -> None:
    db = root / "database" / "m" / "m.sqlite"
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    conn.executescript(
        "CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, Name TEXT, Country TEXT);"
        "CREATE TABLE concert (concert_id INTEGER PRIMARY KEY, singer_id INTEGER REFERENCES singer(singer_id), Year TEXT);"
        "INSERT INTO singer VALUES (1, 'Joe Sharp', 'France'), (2, 'Tribal King', 'Netherlands');"
        "INSERT INTO concert VALUES (1, 1, '2014'), (2, 2, '2015');")
    conn.close()
    tables = [{
        "db_id": "m", "table_names_original": ["singer", "concert"], "table_names": ["singer", "concert"],
        "column_names_original": [[-1, "*"], [0, "singer_id"], [0, "Name"], [0, "Country"], [1, "concert_id"],
                                  [1, "singer_id"], [1, "Year"]],
        "column_names": [[-1, "*"], [0, "singer id"], [0, "name"], [0, "country"], [1, "concert id"],
                         [1, "singer id"], [1, "year"]],
        "column_types": ["text", "number", "text", "text", "number", "number", "text"],
        "primary_keys": [1, 4], "foreign_keys": [[5, 1]],
    }]
    (root / "tables.json").write_text(json.dumps(tables))
    dev = [
        {"db_id": "m", "question": "What are the names of singers from France?",
         "query": "SELECT name FROM singer WHERE country = 'France'"},
        {"db_id": "m", "question": "In which years did Joe Sharp give concerts?",
         "query": "SELECT T2.year FROM singer AS T1 JOIN concert AS T2 ON T1.singer_id = T2.singer_id WHERE T1.name = 'Joe Sharp'"},
        {"db_id": "m", "question": "broken", "query": "SELECT nothing FROM nowhere"},
    ]
    (root / "dev.json").write_text(json.dumps(dev))


def test_linking_cli_on_tiny_dataset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kgsql.eval.__main__ import main

    _tiny_spider(tmp_path / "spider")
    out = tmp_path / "res.json"
    rc = main(["linking", "--dataset", "spider", "--data-dir", str(tmp_path / "spider"), "--json", str(out),
               "--cache-dir", str(tmp_path / "cache"), "--limit", "3"])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "1 unresolved" in printed and "kgsql" in printed
    res = json.loads(out.read_text())
    for method in ("full", "bm25", "dense", "kgsql"):
        assert set(res[method]) >= {"column_recall", "perfect_recall_rate", "table_recall", "mean_selected_columns",
                                    "mean_tokens", "token_ratio", "ms_p50", "ms_p95"}
    assert res["full"]["perfect_recall_rate"] == 1.0 and res["full"]["token_ratio"] == 1.0
    assert res["kgsql"]["perfect_recall_rate"] == 1.0
    assert res["kgsql"]["misses"] == {"whole_table": 0, "column_of_selected_table": 0, "value_only": 0}
    assert "kgsql misses: none" in printed
    assert res["meta"]["questions"] == 2


def test_linking_pooled_routes_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 33: --pool-databases adds kgsql_pooled: each question routed among every database of tables.json
    (here m and an unrelated shop), then selected on the routed one."""
    from kgsql.eval.__main__ import main

    _tiny_spider(tmp_path / "spider")
    tables = json.loads((tmp_path / "spider" / "tables.json").read_text())
    tables.append({"db_id": "shop", "table_names_original": ["item"], "table_names": ["item"],
                   "column_names_original": [[-1, "*"], [0, "item_id"], [0, "label"], [0, "price"]],
                   "column_names": [[-1, "*"], [0, "item id"], [0, "label"], [0, "price"]],
                   "column_types": ["text", "number", "text", "number"], "primary_keys": [1], "foreign_keys": []})
    (tmp_path / "spider" / "tables.json").write_text(json.dumps(tables))
    out = tmp_path / "res.json"
    rc = main(["linking", "--dataset", "spider", "--data-dir", str(tmp_path / "spider"), "--json", str(out),
               "--cache-dir", str(tmp_path / "cache"), "--limit", "3", "--pool-databases"])
    assert rc == 0 and "kgsql_pooled" in capsys.readouterr().out
    res = json.loads(out.read_text())
    assert res["kgsql_pooled"]["perfect_recall_rate"] == res["kgsql"]["perfect_recall_rate"] == 1.0
    assert res["kgsql_pooled"]["index_s"] >= res["kgsql"]["index_s"]


def _tiny_bird(root: Path) -> None:
    """BIRD layout without database files (as in ../shared): dev.json + dev_tables.json."""
    root.mkdir(parents=True)
    tables = [{
        "db_id": "club", "table_names_original": ["member"], "table_names": ["member"],
        "column_names_original": [[-1, "*"], [0, "member_id"], [0, "first_name"], [0, "income"]],
        "column_names": [[-1, "*"], [0, "member id"], [0, "first name"], [0, "income"]],
        "column_types": ["text", "integer", "text", "integer"], "primary_keys": [1], "foreign_keys": [],
    }]
    (root / "dev_tables.json").write_text(json.dumps(tables))
    rows = [{"question_id": 0, "db_id": "club", "question": "Which members are rich?",
             "evidence": "rich refers to income > 100000", "SQL": "SELECT first_name FROM member WHERE income > 100000",
             "difficulty": "simple"}]
    (root / "dev.json").write_text(json.dumps(rows))


def test_linking_with_evidence_appends_it_to_the_question(tmp_path: Path) -> None:
    from kgsql.eval.__main__ import main
    from kgsql.lab.linking import load_bench

    _tiny_bird(tmp_path / "bird")
    plain = load_bench("bird", str(tmp_path / "bird"), None, None, tmp_path / "cache")
    hinted = load_bench("bird", str(tmp_path / "bird"), None, None, tmp_path / "cache", with_evidence=True)
    assert plain.items[0].question == "Which members are rich?"
    assert hinted.items[0].question == "Which members are rich? rich refers to income > 100000"
    out = tmp_path / "res.json"
    assert main(["linking", "--dataset", "bird", "--data-dir", str(tmp_path / "bird"), "--with-evidence",
                 "--json", str(out), "--cache-dir", str(tmp_path / "cache")]) == 0
    res = json.loads(out.read_text())
    assert res["meta"]["with_evidence"] is True and res["meta"]["questions"] == 1
    assert res["kgsql"]["perfect_recall_rate"] == 1.0  # a one-table schema: income is named by the evidence


def test_threshold_sweep_traces_recall_against_tokens(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kgsql.eval.__main__ import main

    _tiny_spider(tmp_path / "spider")
    out = tmp_path / "res.json"
    assert main(["linking", "--dataset", "spider", "--data-dir", str(tmp_path / "spider"), "--json", str(out),
                 "--cache-dir", str(tmp_path / "cache"), "--sweep", "0.9:0.9,0.0:0.0"]) == 0
    curve = json.loads(out.read_text())["kgsql_sweep"]
    assert [(c["table_threshold"], c["column_threshold"]) for c in curve] == [(0.9, 0.9), (0.0, 0.0)]
    strict, everything = curve
    # thresholds of 0 keep every column: the whole schema, perfect recall
    assert everything["perfect_recall_rate"] == 1.0 and everything["token_ratio"] == 1.0
    assert strict["token_ratio"] <= everything["token_ratio"]
    assert strict["mean_selected_columns"] <= everything["mean_selected_columns"]
    assert "kgsql threshold sweep:" in capsys.readouterr().out


@pytest.mark.parametrize("bad", ["0.1", "a:b", "0.1:2"])
def test_bad_sweep_is_refused_before_any_work(tmp_path: Path, bad: str) -> None:
    from kgsql.errors import InputError
    from kgsql.lab.linking import parse_sweep

    with pytest.raises(InputError, match="--sweep"):
        parse_sweep(bad)


def test_method_stats_merge_equals_adding_every_question_to_one() -> None:
    from kgsql.lab.stats import MethodStats

    g = gold_schema("SELECT name FROM singer WHERE country = 'France'", SCHEMA)
    picks = [({("singer", "Name"), ("singer", "Country")}, 30), ({("singer", "Name")}, 20), (set(), 5)]
    one, a, b = MethodStats(), MethodStats(), MethodStats()
    for i, (cols, tokens) in enumerate(picks):
        one.add(g, cols, {t for t, _ in cols}, tokens, 40, 1.0)
        (a if i < 2 else b).add(g, cols, {t for t, _ in cols}, tokens, 40, 1.0)
    a.merge(b)
    assert a.summary() == one.summary()
    assert a.misses == {"whole_table": 1, "column_of_selected_table": 1, "value_only": 1}


def test_gold_schema_sees_unqualified_having_columns() -> None:
    """sqlglot's scope.columns leaves HAVING's unqualified columns out; the shared resolver adds them."""
    g = gold_schema("SELECT singer_id FROM concert GROUP BY singer_id HAVING max(year) > 2000", SCHEMA)
    assert g.columns == {("concert", "singer_id"), ("concert", "Year")}
    alias = gold_schema("SELECT country, count(*) AS n FROM singer GROUP BY country HAVING n > 1", SCHEMA)
    assert alias.ok


def test_half_split_learns_only_from_the_other_half(tmp_path: Path) -> None:
    """--half scores one half per database; --learn mines the other half's gold SQL into the schemas."""
    from kgsql.eval.__main__ import main
    from kgsql.lab.linking import load_bench

    root = tmp_path / "bird"
    root.mkdir()
    (root / "dev_tables.json").write_text(json.dumps([{
        "db_id": "club", "table_names_original": ["member", "event"], "table_names": ["member", "event"],
        "column_names_original": [[-1, "*"], [0, "member_id"], [0, "first_name"], [0, "county"],
                                  [1, "event_id"], [1, "host"]],
        "column_names": [[-1, "*"], [0, "member id"], [0, "first name"], [0, "county"], [1, "event id"], [1, "host"]],
        "column_types": ["text", "integer", "text", "text", "integer", "integer"], "primary_keys": [1, 4],
        "foreign_keys": [],
    }]))
    rows = [{"question_id": i, "db_id": "club", "question": q, "evidence": "", "SQL": sql, "difficulty": "simple"}
            for i, (q, sql) in enumerate([
                ("Who lives in Fresno?", "SELECT first_name FROM member WHERE county = 'Fresno'"),
                ("Members from Alameda?", "SELECT first_name FROM member WHERE county = 'Alameda'"),
                ("Who hosted events?", "SELECT m.first_name FROM member m JOIN event e ON e.host = m.member_id"),
                ("Which events were hosted by Ann?",
                 "SELECT e.event_id FROM event e JOIN member m ON e.host = m.member_id WHERE m.first_name = 'Ann'"),
            ])]
    (root / "dev.json").write_text(json.dumps(rows))
    plain = load_bench("bird", str(root), None, None, tmp_path / "cache", half="second")
    learnt = load_bench("bird", str(root), None, None, tmp_path / "cache", half="second", learn=True)
    first = load_bench("bird", str(root), None, None, tmp_path / "cache", half="first")
    assert len(plain.items) == len(learnt.items) == 2 and len(first.items) == 2
    assert {i.qid for i in plain.items}.isdisjoint({i.qid for i in first.items})
    assert plain.schemas["club"].foreign_keys == []
    assert sorted(i.qid for i in first.items) == ["1", "3"]  # seed 0: the half that is learnt
    mined = learnt.schemas["club"]
    assert [(f.table, f.column, f.ref_table, f.ref_column, f.origin) for f in mined.foreign_keys] == [
        ("event", "host", "member", "member_id", "mined")]
    assert mined.table("member").column("county").value_examples == ["Alameda"]  # not the tested 'Fresno'
    assert mined.table("member").column("first_name").value_examples == ["Ann"]
    with pytest.raises(Exception, match="--learn needs --half"):
        load_bench("bird", str(root), None, None, tmp_path / "cache", learn=True)
    assert main(["linking", "--dataset", "bird", "--data-dir", str(root), "--cache-dir", str(tmp_path / "cache"),
                 "--half", "second", "--learn"]) == 0
