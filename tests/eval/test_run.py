"""``python -m kgsql.eval run`` end to end on tiny datasets, with a scripted LM (no model).

The LM answers by looking the question up in a table, so tests control which
predictions are right; the graph is the test session's embedded server, with
a per-test name prefix so tests never share databases.
"""
from __future__ import annotations

import argparse
import json
import re
import sqlite3
import uuid
from pathlib import Path
from typing import Any, Callable

import pytest

from kgsql.errors import InputError, KgsqlError, UnknownNameError
from kgsql.eval.records import read_records
from kgsql.eval.run import add_arguments, run_eval
from kgsql.llm.errors import LLMConnectionError
from kgsql.llm.scripted import ScriptedLM

# Options that make kgsql one SQL call per question with no retriever model (no hints: nothing to retrieve for).
LEAN = ["--set", "value_hints=false", "--set", "join_hints=false", "--set", "spatial_hints=false"]

SPIDER_ROWS = [
    {"db_id": "music", "question": "How many singers are there?", "query": "SELECT count(*) FROM singer"},
    {"db_id": "music", "question": "List singer names by age.", "query": "SELECT name FROM singer ORDER BY age"},
    {"db_id": "wta_1", "question": "How many players?", "query": "SELECT count(*) FROM players"},
    {"db_id": "shop", "question": "What is the most expensive item?",
     "query": "SELECT name FROM item ORDER BY price DESC LIMIT 1"},
    {"db_id": "shop", "question": "How many items cost more than 5?", "query": "SELECT count(*) FROM item WHERE price > 5"},
]
# What the scripted model answers: right for 0, 1 and 3, wrong for 4.
ANSWERS = {
    "How many singers are there?": "SELECT count(*) FROM singer",
    "List singer names by age.": "SELECT name FROM singer ORDER BY age",
    "What is the most expensive item?": "SELECT name FROM item ORDER BY price DESC LIMIT 1",
    "How many items cost more than 5?": "SELECT count(*) FROM item",
}


def make_db(path: Path, script: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(script)
    conn.commit()
    conn.close()


MUSIC = """CREATE TABLE singer (id INTEGER PRIMARY KEY, name TEXT, age INTEGER);
           INSERT INTO singer VALUES (1, 'ann', 30), (2, 'bob', 20), (3, 'cid', 50);"""
SHOP = """CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT, price REAL);
          INSERT INTO item VALUES (1, 'pen', 2.5), (2, 'lamp', 30.0), (3, 'mug', 7.0);"""


@pytest.fixture()
def spider_dir(tmp_path: Path) -> Path:
    root = tmp_path / "spider"
    root.mkdir()
    (root / "dev.json").write_text(json.dumps(SPIDER_ROWS), encoding="utf-8")
    make_db(root / "database" / "music" / "music.sqlite", MUSIC)
    make_db(root / "database" / "shop" / "shop.sqlite", SHOP)
    return root


def question_of(messages: list[dict[str, Any]]) -> str:
    text = messages[-1]["content"]
    found = [q for q in ANSWERS if q in text]
    return max(found, key=len) if found else ""


def answering_lm(answers: dict[str, str] = ANSWERS) -> ScriptedLM:
    def reply(messages: list[dict[str, Any]], step: str | None, params: dict[str, Any]) -> str:
        sql = answers.get(question_of(messages), "SELECT 1")
        return f"```sql\n{sql}\n```"

    return ScriptedLM(reply)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(argv)


def spider_args(spider_dir: Path, out: Path, *extra: str) -> argparse.Namespace:
    prefix = f"t{uuid.uuid4().hex[:6]}_"
    return parse(["--dataset", "spider", "--data-dir", str(spider_dir), "--method", "kgsql", "--shots", "0",
                  "--out", str(out), "--graph-prefix", prefix, "--no-progress", *LEAN, *extra])


def test_run_end_to_end_scores_logs_and_reports(spider_dir: Path, tmp_path: Path, schema_graph) -> None:
    out = tmp_path / "run"
    lm = answering_lm()
    meta = run_eval(spider_args(spider_dir, out), lm=lm, graph=schema_graph, say=lambda s: None)
    records = {r.id: r for r in read_records(out / "records.jsonl")}
    assert sorted(records) == ["0", "1", "2", "3", "4"]
    assert [records[i].spider_ex for i in ("0", "1", "3", "4")] == [1, 1, 1, 0]
    assert records["4"].pred == "SELECT count(*) FROM item"
    # the question without a database file: logged, unscored, no model call for it
    assert records["2"].spider_ex is None and records["2"].error_kind == "missing_db"
    assert len(lm.calls) == 4
    rec = records["0"]
    assert rec.method == "kgsql" and rec.shots == 0 and rec.rounds == 1
    assert rec.tokens and rec.tokens > 0 and rec.latency_s is not None
    assert rec.extra["llm_calls"] == 1 and "score_s" in rec.extra
    assert rec.extra["llm_cache_hits"] == 0
    cell = meta["cells"][0]
    assert cell["n"] == 5 and cell["n_scored"] == 4 and cell["n_missing_db"] == 1
    assert cell["spider_ex"] == pytest.approx(0.75)
    assert cell["tokens_mean"] > 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_missing_db"] == 1 and summary["spider_ex"] == pytest.approx(0.75)
    assert "Missing database: 1" in (out / "summary.md").read_text()
    assert (out / "run.json").is_file()
    pytest.importorskip("matplotlib")
    assert (out / "ex_by_method_shots.png").is_file()


def test_pool_databases_routes_each_question_first(spider_dir: Path, tmp_path: Path, schema_graph) -> None:
    """Issue 33: with --pool-databases no question is told its database; each is routed among the dataset's
    databases, answered there and scored on its own, and the record says where it went."""
    out = tmp_path / "run"
    said: list[str] = []
    run_eval(spider_args(spider_dir, out, "--pool-databases"), lm=answering_lm(), graph=schema_graph, say=said.append)
    records = {r.id: r for r in read_records(out / "records.jsonl")}
    assert any("routed among 2 databases" in line for line in said)
    for i, own in (("0", "music"), ("1", "music"), ("3", "shop"), ("4", "shop")):
        assert records[i].extra["routed_db"].endswith(f"_{own}") and records[i].extra["routed_right"] is True
        assert isinstance(records[i].extra["routed_close"], bool) and records[i].extra["routed_named"] == ""
    assert [records[i].spider_ex for i in ("0", "1", "3", "4")] == [1, 1, 1, 0]
    assert records["2"].error_kind == "missing_db" and "routed_db" not in records["2"].extra


def test_pool_databases_with_a_folder_routes_among_its_databases_too(spider_dir: Path, tmp_path: Path,
                                                                      schema_graph) -> None:  # type: ignore[no-untyped-def]
    """Issue 33's EX at scale: ``--pool-databases FOLDER`` adds every database under FOLDER (a warehouse)
    to the dataset's own; a folder without databases is one clear error before any question."""
    warehouse = tmp_path / "warehouse"
    make_db(warehouse / "garden.sqlite", "CREATE TABLE plant (id INTEGER PRIMARY KEY, species TEXT, height REAL);")
    make_db(warehouse / "music" / "music.sqlite", MUSIC)  # the dataset's own database is not pooled twice
    out = tmp_path / "run"
    said: list[str] = []
    run_eval(spider_args(spider_dir, out, "--pool-databases", str(warehouse)), lm=answering_lm(), graph=schema_graph,
             say=said.append)
    assert any("routed among 3 databases" in line for line in said)
    records = {r.id: r for r in read_records(out / "records.jsonl")}
    assert [records[i].extra["routed_right"] for i in ("0", "1", "3", "4")] == [True] * 4
    with pytest.raises(KgsqlError, match="no databases"):
        run_eval(spider_args(spider_dir, tmp_path / "run2", "--pool-databases", str(tmp_path / "run")),
                 lm=answering_lm(), graph=schema_graph, say=said.append)


def test_pool_own_asks_as_a_user_without_a_pool_would(spider_dir: Path, tmp_path: Path, schema_graph) -> None:  # type: ignore[no-untyped-def]
    """``--pool own``: no pool given, so the method shows what `kgsql ask` would: the database's taught
    examples, else a spatial database's derived ones, else kgsql's shipped examples (not 0-shot)."""
    lm = answering_lm()
    out = tmp_path / "run"
    run_eval(spider_args(spider_dir, out, "--pool", "own", "--shots", "5", "--limit", "1"), lm=lm,
             graph=schema_graph, say=lambda s: None)
    record = read_records(out / "records.jsonl")[0]
    assert record.shots == 5 and record.spider_ex == 1
    assert "Who directed Avatar?" in lm.calls[0].prompt  # a plain database: the shipped examples


def test_second_run_skips_done_questions(spider_dir: Path, tmp_path: Path, schema_graph) -> None:
    out = tmp_path / "run"
    args = spider_args(spider_dir, out, "--limit", "2")
    run_eval(args, lm=answering_lm(), graph=schema_graph, say=lambda s: None)
    assert len(read_records(out / "records.jsonl")) == 2
    silent = ScriptedLM(lambda *a: pytest.fail("a finished question was asked again"))
    run_eval(args, lm=silent, graph=schema_graph, say=lambda s: None)
    assert silent.calls == []
    # a larger limit asks only the new questions
    more = spider_args(spider_dir, out, "--limit", "4")
    more.graph_prefix = args.graph_prefix
    lm = answering_lm()
    meta = run_eval(more, lm=lm, graph=schema_graph, say=lambda s: None)
    assert len(lm.calls) == 1  # question 3; question 2 has no database
    lines = (out / "records.jsonl").read_text().splitlines()
    assert len(lines) == 4 and meta["cells"][0]["n"] == 4
    assert len(json.loads((out / "run.json").read_text())["sessions"]) == 3


def test_ids_ask_only_those_questions(spider_dir: Path, tmp_path: Path, schema_graph) -> None:
    out = tmp_path / "run"
    lm = answering_lm()
    run_eval(spider_args(spider_dir, out, "--ids", "3,0", "--ids", "4"), lm=lm, graph=schema_graph,
             say=lambda s: None)
    assert sorted(r.id for r in read_records(out / "records.jsonl")) == ["0", "3", "4"]
    assert len(lm.calls) == 3
    with pytest.raises(InputError, match="no questions selected"):
        run_eval(spider_args(spider_dir, tmp_path / "none", "--ids", "nope"), lm=answering_lm(), graph=schema_graph,
                 say=lambda s: None)


def test_model_failures_are_not_logged_and_stop_the_run(spider_dir: Path, tmp_path: Path, schema_graph) -> None:
    from kgsql.eval.runner import RunAborted

    out = tmp_path / "run"
    down = ScriptedLM(lambda *a: (_ for _ in ()).throw(LLMConnectionError("connection refused")))
    with pytest.raises(RunAborted, match="in a row"):
        run_eval(spider_args(spider_dir, out), lm=down, graph=schema_graph, say=lambda s: None)
    logged = read_records(out / "records.jsonl")
    assert [r.error_kind for r in logged] == ["missing_db"]  # failed questions stay to be retried


def test_a_bug_on_one_question_costs_that_question_not_the_run(spider_dir: Path, tmp_path: Path,
                                                              schema_graph) -> None:
    """An unexpected exception (not a kgsql error) while answering one question once ended a whole
    BIRD run at 284 of 287; now that question stays unlogged (retried on resume) and the run goes on."""
    first = sorted(ANSWERS)[0]

    def reply(messages: list[dict[str, Any]], step: str | None, params: dict[str, Any]) -> str:
        if question_of(messages) == first:
            raise RuntimeError("a bug somewhere below the method")
        return f"```sql\n{ANSWERS.get(question_of(messages), 'SELECT 1')}\n```"

    out = tmp_path / "run"
    meta = run_eval(spider_args(spider_dir, out), lm=ScriptedLM(reply), graph=schema_graph, say=lambda s: None)
    logged = {r.question for r in read_records(out / "records.jsonl")}
    assert first not in logged and len(logged) == meta["cells"][0]["n"] == 4


def test_all_databases_missing_is_reported(tmp_path: Path, schema_graph) -> None:
    root = tmp_path / "spider"
    root.mkdir()
    rows = [{"db_id": "financial", "question": f"q{i}?", "query": "SELECT 1"} for i in range(3)]
    (root / "dev.json").write_text(json.dumps(rows), encoding="utf-8")
    out = tmp_path / "run"
    args = parse(["--dataset", "spider", "--data-dir", str(root), "--method", "kgsql", "--shots", "0",
                  "--out", str(out), "--no-progress", "--pool", "none"])
    messages: list[str] = []
    lm = ScriptedLM(lambda *a: pytest.fail("no question can be asked without its database"))
    meta = run_eval(args, lm=lm, graph=schema_graph, say=messages.append)
    cell = meta["cells"][0]
    assert cell["n"] == 3 and cell["n_scored"] == 0 and cell["n_missing_db"] == 3 and cell["spider_ex"] is None
    assert any("3 of 3 selected questions have no database file" in m for m in messages)


def test_set_overrides_reach_the_method(spider_dir: Path, tmp_path: Path, schema_graph) -> None:
    out = tmp_path / "run"
    lm = ScriptedLM({"sql": "```sql\nSELECT nme FROM singer\n```"}, default="```sql\nSELECT 1\n```")
    args = spider_args(spider_dir, out, "--limit", "1", "--set", "correction=false")
    run_eval(args, lm=lm, graph=schema_graph, say=lambda s: None)
    (rec,) = read_records(out / "records.jsonl")
    assert rec.rounds == 1 and rec.error_kind == "pred_error"  # no self-correction round
    assert json.loads((out / "run.json").read_text())["overrides"]["correction"] is False


# --------------------------------------------------------------------------- pure parts


def test_sample_is_fixed_and_in_dataset_order() -> None:
    from kgsql.eval.datasets import GoldQuestion
    from kgsql.eval.runner import select_questions

    examples = [GoldQuestion(str(i), "db" if i % 2 else "other", f"q{i}", ["SELECT 1"]) for i in range(50)]
    a = select_questions(examples, limit=7, seed=3)
    assert a == select_questions(examples, limit=7, seed=3)
    assert [int(e.id) for e in a] == sorted(int(e.id) for e in a)
    assert a != select_questions(examples, limit=7, seed=4)
    assert [e.id for e in select_questions(examples, limit=3)] == ["0", "1", "2"]
    assert {e.db_id for e in select_questions(examples, dbs=["db"])} == {"db"}
    assert len(select_questions(examples, limit=100, seed=1)) == 50
    # a larger limit with the same seed extends the sample (resuming a run asks only the new questions)
    small = {e.id for e in select_questions(examples, limit=10, seed=5)}
    assert small < {e.id for e in select_questions(examples, limit=45, seed=5)}


def test_parse_sets_types_and_unknown_names() -> None:
    from kgsql.eval.method import parse_sets

    got = parse_sets(["correction=false", "max_rounds=3", "timeout_s=12.5", "user_evidence=replace", "geo=1"])
    assert got == {"correction": False, "max_rounds": 3, "timeout_s": 12.5, "user_evidence": "replace", "geo": True}
    assert parse_sets(["tips=false"]) == {"correction": False}  # the option's earlier name, in recorded commands
    with pytest.raises(UnknownNameError, match="known"):
        parse_sets(["tipz=false"])
    with pytest.raises(InputError):
        parse_sets(["correction=maybe"])
    with pytest.raises(InputError):
        parse_sets(["correction"])
    for bad in ("inf", "nan", "-inf"):  # a query without a deadline would hold the service's model forever
        with pytest.raises(InputError, match="finite"):
            parse_sets([f"timeout_s={bad}"])


def test_spatial_graph_names_carry_the_split(tmp_path: Path) -> None:
    from kgsql.eval.datasets import Dataset
    from kgsql.eval.runner import graph_name

    d1 = Dataset("spatial", "dataset1", tmp_path, [], {})
    d2 = Dataset("spatial", "dataset2", tmp_path, [], {})
    assert graph_name(d1, "traffic") == "traffic_dataset1" != graph_name(d2, "traffic")
    assert graph_name(Dataset("spider", "dev", tmp_path, [], {}), "music", "x_") == "x_music"


# --------------------------------------------------------------------------- cross-fold


def spatial_dataset(tmp_path: Path, dbs: tuple[str, ...], per_db: int = 3) -> Any:
    from kgsql.eval.datasets import Dataset, GoldQuestion

    files: dict[str, Path | None] = {}
    examples = []
    for db in dbs:
        path = tmp_path / db / f"{db}.sqlite"
        make_db(path, f"CREATE TABLE {db}_t (id INTEGER, name TEXT); INSERT INTO {db}_t VALUES (1, 'a');")
        files[db] = path
        examples += [GoldQuestion(f"{db}{i:02d}", db, f"question {i} about {db}?", [f"SELECT name FROM {db}_t"])
                     for i in range(per_db)]
    return Dataset("spatial", "dataset1", tmp_path, examples, files)


def test_cross_fold_never_puts_a_test_database_in_the_pool(tmp_path: Path) -> None:
    from kgsql.eval.protocols import cross_fold_groups, cross_folds, default_folds

    ds = spatial_dataset(tmp_path, ("ada", "edu", "tourism", "traffic"))
    assert default_folds(ds.db_files) == [("ada", "edu"), ("tourism", "traffic")]
    groups = cross_fold_groups(ds, ds.questions)
    assert [g.tag["fold"] for g in groups] == ["ada+edu", "tourism+traffic"]
    tested = [e.id for g in groups for e in g.questions]
    assert sorted(tested) == sorted(e.id for e in ds.questions)  # every question tested exactly once
    for g in groups:
        test_dbs = {e.db_id for e in g.questions}
        pool_dbs = {e.db_id for e in g.pool}
        assert not test_dbs & pool_dbs
        assert pool_dbs == set(ds.db_files) - test_dbs
        assert len(g.pool) == 6  # the whole training side, whatever was selected for testing
    # two databases: one fold each, the paper's swap
    two = spatial_dataset(tmp_path / "two", ("tourism", "traffic"))
    folds = cross_folds(two.db_files)
    assert [(f.test_dbs, f.train_dbs) for f in folds] == [(("tourism",), ("traffic",)),
                                                          (("traffic",), ("tourism",))]
    with pytest.raises(InputError):
        cross_folds(two.db_files, [("tourism",)])
    with pytest.raises(InputError):
        cross_folds(two.db_files, [("tourism",), ("traffic", "ada")])


def test_single_spatial_run_uses_the_other_databases_as_pool(tmp_path: Path) -> None:
    from kgsql.eval.protocols import single_groups

    ds = spatial_dataset(tmp_path, ("tourism", "traffic"))
    groups = single_groups(ds, [e for e in ds.questions if e.db_id == "traffic"])
    assert len(groups) == 1 and {e.db_id for e in groups[0].pool} == {"tourism"}
    assert single_groups(ds, ds.questions, with_pool=False)[0].pool is None


def test_paper_table_shape() -> None:
    from kgsql.eval.protocols import paper_table

    cells = {("sspa", "dataset1", 0): 0.85, ("dail-sql", "dataset1", 0): 0.445, ("sspa", "dataset2", 0): 0.78}
    table = paper_table(cells, ["dail-sql", "sspa"], ["dataset1", "dataset2"], [0])
    lines = table.splitlines()
    assert lines[0] == "| Method | dataset1 0-shot | dataset2 0-shot |"
    assert lines[2] == "| dail-sql | 44.5 | – |" and lines[3] == "| sspa | 85.0 | 78.0 |"


def write_qa(folder: Path, db: str, questions: list[tuple[str, str, str]]) -> None:
    """A spatial QA file (CRLF, key:value records separated by blank lines)."""
    records = []
    for qid, question, sql in questions:
        records.append("\r\n".join([f"label:G", f"question:{question}", "evidence:", "name:",
                                    f"SQL:{sql}", f"Eval:{sql}", f"id:{qid}"]))
    (folder / f"QA-{db}-{len(questions)}.txt").write_text("\r\n\r\n".join(records) + "\r\n", encoding="utf-8")


@pytest.fixture()
def spatial_dir(tmp_path: Path) -> Path:
    root = tmp_path / "spatial"
    for split in ("dataset1", "dataset2"):
        for db, script, qs in (
            ("parks", "CREATE TABLE spots (id INTEGER, name TEXT); INSERT INTO spots VALUES (1, 'Lake');",
             [("parks01", "How many spots are there?", "SELECT count(*) FROM spots")]),
            ("streets", "CREATE TABLE roads (id INTEGER, name TEXT, len REAL); INSERT INTO roads VALUES (1, 'A1', 3);",
             [("streets01", "Which roads exist?", "SELECT name FROM roads"),
              ("streets02", "How long are the roads in total?", "SELECT sum(len) FROM roads")]),
        ):
            folder = root / split / db
            folder.mkdir(parents=True)
            make_db(folder / f"{db}.sqlite", script)
            write_qa(folder, db, qs)
    return root


def test_cross_fold_run_with_examples_from_the_training_side(spatial_dir: Path, tmp_path: Path, schema_graph,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from kgsql.text.encoder import HashEncoder

    monkeypatch.setenv("KGSQL_CACHE_DIR", str(tmp_path / "cache"))
    answers = {"How many spots are there?": "SELECT count(*) FROM spots",
               "Which roads exist?": "SELECT name FROM roads",
               "How long are the roads in total?": "SELECT max(len) + 1 FROM roads"}
    seen: list[str] = []

    def reply(messages: list[dict[str, Any]], step: str | None, params: dict[str, Any]) -> str:
        text = messages[-1]["content"]
        seen.append(text)
        q = max(answers, key=text.rfind)  # the question asked comes after any example question
        return f"```sql\n{answers.get(q, 'SELECT 1')}\n```"

    out = tmp_path / "xfold"
    args = parse(["--dataset", "spatial", "--data-dir", str(spatial_dir), "--protocol", "cross-fold",
                  "--method", "kgsql", "--shots", "0,1", "--out", str(out), "--no-progress", "--no-plots",
                  "--graph-prefix", f"t{uuid.uuid4().hex[:6]}_", *LEAN])
    meta = run_eval(args, lm=ScriptedLM(reply), graph=schema_graph, encoder=HashEncoder(), say=lambda s: None)
    cells = {(c["split"], c["shots"]): c for c in meta["cells"]}
    assert set(cells) == {("dataset1", 0), ("dataset1", 1), ("dataset2", 0), ("dataset2", 1)}
    assert all(c["n"] == 3 and c["n_scored"] == 3 for c in cells.values())
    records = read_records(out / "dataset1" / "kgsql" / "1-shot" / "records.jsonl")
    assert {r.extra["fold"]: r.extra["train"] for r in records} == {"parks": "streets", "streets": "parks"}
    # with one shot, a streets question's prompt shows a parks example and never a streets one
    one_shot_prompts = [p for p in seen if "Which roads exist?" in p]
    assert any("How many spots are there?" in p for p in one_shot_prompts)
    assert not any("How long are the roads in total?" in p for p in one_shot_prompts)
    table = (out / "table.md").read_text()
    assert "| kgsql |" in table and "dataset2 1-shot" in table
    assert re.search(r"\| kgsql \| 66\.7 \| 66\.7 \| 66\.7 \| 66\.7 \|", table)


def test_set_shots_and_lead_shots_decide_the_cell_and_its_pool(spatial_dir: Path, tmp_path: Path, schema_graph,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """``--set shots=N`` names the cell like ``--shots N``; lead examples alone still get the training pool."""
    from kgsql.errors import InputError
    from kgsql.text.encoder import HashEncoder

    monkeypatch.setenv("KGSQL_CACHE_DIR", str(tmp_path / "cache"))
    seen: list[str] = []

    def reply(messages: list[dict[str, Any]], step: str | None, params: dict[str, Any]) -> str:
        seen.append(messages[-1]["content"])
        return "```sql\nSELECT 1\n```"

    def run(out: Path, *sets: str) -> dict[str, Any]:
        args = parse(["--dataset", "spatial", "--data-dir", str(spatial_dir), "--protocol", "cross-fold",
                      "--split", "dataset1", "--method", "kgsql", "--out", str(out), "--no-progress", "--no-plots",
                      "--graph-prefix", f"t{uuid.uuid4().hex[:6]}_", *LEAN, *sets])
        return run_eval(args, lm=ScriptedLM(reply), graph=schema_graph, encoder=HashEncoder(), say=lambda s: None)

    assert [c["shots"] for c in run(tmp_path / "one", "--set", "shots=1")["cells"]] == [1]
    lead = run(tmp_path / "lead", "--set", "shots=0", "--set", "lead_shots=1")
    assert [c["shots"] for c in lead["cells"]] == [0]
    assert any("How many spots are there?" in p for p in seen if "Which roads exist?" in p)  # a parks example
    with pytest.raises(InputError, match="give the number of examples once"):
        run(tmp_path / "both", "--shots", "1", "--set", "shots=2")


def test_question_table_marks_and_totals() -> None:
    from kgsql.eval.question_table import question_table
    from kgsql.eval.records import Record

    a = [Record("q1", "db", "Q one?", ["SELECT 1"], "SELECT 1", {"spider_ex": 1}, latency_s=12.0, tokens=100, rounds=1),
         Record("q2", "db", "Q two?", ["SELECT 2"], "SELECT 3", {"spider_ex": 0}, error_kind=None, latency_s=8.0,
                tokens=50, rounds=2)]
    b = [Record("q1", "db", "Q one?", ["SELECT 1"], "SELECT 4", {"spider_ex": 0}, latency_s=3.0, tokens=10, rounds=1)]
    text = question_table({"full": a, "ablated": b})
    assert "| q1 | ✓ | 12 | 100 | 1 | ✗ | 3 | 10 | 1 |" in text
    assert "| q2 | ✗ | 8 | 50 | 2 | · |" in text
    assert "| **total** | 1/2 | 20 | 150 | 1.5 | 0/1 | 3 | 10 | 1.0 |" in text
    assert "- ablated ✗: `SELECT 4`" in text


def test_sspa_ablation_runs_every_method_into_one_table(spatial_dir: Path, tmp_path: Path, schema_graph) -> None:
    out = tmp_path / "ablation"
    args = parse(["--dataset", "spatial", "--data-dir", str(spatial_dir), "--protocol", "cross-fold",
                  "--split", "dataset1", "--ablation", "sspa", "--shots", "0", "--out", str(out), "--no-progress",
                  "--no-plots", "--graph-prefix", f"t{uuid.uuid4().hex[:6]}_"])
    lm = ScriptedLM(lambda *a: "```sql\nSELECT name FROM roads\n```")
    meta = run_eval(args, lm=lm, graph=schema_graph, say=lambda s: None)
    assert [c["method"] for c in meta["cells"]] == ["dail-sql", "sspa", "sspa-sdbms", "sspa-geo", "sspa-tips"]
    rows = [line.split(" | ")[0].lstrip("| ") for line in (out / "table.md").read_text().splitlines()
            if line.startswith("| ") and "Method" not in line]
    assert rows == ["dail-sql", "sspa", "sspa-sdbms", "sspa-geo", "sspa-tips"]
    assert all(c["n"] == 3 and abs(c["spider_ex"] - 1 / 3) < 1e-9 for c in meta["cells"])


def test_concurrent_questions_give_the_same_records(spider_dir: Path, tmp_path: Path, schema_graph) -> None:
    serial, parallel = tmp_path / "serial", tmp_path / "parallel"
    run_eval(spider_args(spider_dir, serial), lm=answering_lm(), graph=schema_graph, say=lambda s: None)
    run_eval(spider_args(spider_dir, parallel, "--concurrency", "3"), lm=answering_lm(), graph=schema_graph,
             say=lambda s: None)
    verdicts = [{r.id: (r.pred, r.spider_ex) for r in read_records(d / "records.jsonl")} for d in (serial, parallel)]
    assert verdicts[0] == verdicts[1] and len(verdicts[0]) == 5


def test_records_log_every_call_and_runs_group_by_database(spider_dir: Path, tmp_path: Path, schema_graph) -> None:
    """Issue 12's instrumentation: per call purpose, tokens, seconds and raw output; questions grouped by
    database (a prefix-caching server then reads each schema once); the time breakdown per step."""
    rows = [SPIDER_ROWS[3], SPIDER_ROWS[0], SPIDER_ROWS[4], SPIDER_ROWS[1]]  # shop, music, shop, music
    (spider_dir / "dev.json").write_text(json.dumps(rows), encoding="utf-8")
    out = tmp_path / "run"
    lm = answering_lm()
    meta = run_eval(spider_args(spider_dir, out), lm=lm, graph=schema_graph, say=lambda s: None)
    asked = [question_of(c.messages) for c in lm.calls]
    assert asked == [rows[0]["question"], rows[2]["question"], rows[1]["question"], rows[3]["question"]]
    rec = {r.id: r for r in read_records(out / "records.jsonl")}["0"]
    (call,) = rec.extra["calls"]
    assert call["step"] == "sql" and call["output"] == "```sql\nSELECT name FROM item ORDER BY price DESC LIMIT 1\n```"
    assert call["prompt_tokens"] > 0 and call["completion_tokens"] > 0 and call["seconds"] >= 0
    time = meta["cells"][0]["time"]
    assert time["n"] == 4 and time["steps"]["sql"]["calls"] == 1.0


def test_by_database_keeps_dataset_order_inside_a_database() -> None:
    from kgsql.eval.datasets import GoldQuestion
    from kgsql.eval.runner import by_database

    ex = [GoldQuestion(id=str(i), db_id=db, question="q", gold=["SELECT 1"]) for i, db in enumerate("abacb")]
    assert [e.id for e in by_database(ex)] == ["0", "2", "1", "4", "3"]


def test_questions_the_graph_learnt_are_refused(spider_dir: Path, tmp_path: Path, schema_graph) -> None:
    """Mining a question's SQL into the graph and then testing it would score memory: one clear error."""
    from kgsql.errors import InputError
    from kgsql.mining.history import pair_id
    from kgsql.mining.learn import learn
    from kgsql.mining.rules import Pair

    args = spider_args(spider_dir, tmp_path / "run", "--limit", "2")
    run_eval(args, lm=answering_lm(), graph=schema_graph, say=lambda s: None)  # ingests under the prefix
    row = next(r for r in SPIDER_ROWS if r["db_id"] == "music")
    name = f"{args.graph_prefix}music"
    learn(schema_graph.store, [Pair(pair_id(name, row["question"], row["query"]), name, row["question"], row["query"])])
    again = spider_args(spider_dir, tmp_path / "run2")
    again.graph_prefix = args.graph_prefix
    with pytest.raises(InputError, match="has learnt 1 of the questions under test"):
        run_eval(again, lm=answering_lm(), graph=schema_graph, say=lambda s: None)


# --------------------------------------------------------------------------- BIRD on the shared layout (issue 28)

#: A description CSV as BIRD ships some: cp1252 (a 0x92 apostrophe), a value description with codes.
CLUB_CSV = ("original_column_name,column_name,column_description,data_format,value_description\r\n"
            "member_id,member id,the member\u2019s unique id,integer,\r\n"
            "position,position,the member\u2019s role in the club,text,\"Member, President, Treasurer\"\r\n"
            ).encode("cp1252")


@pytest.fixture()
def bird_shared(tmp_path: Path) -> Path:
    """``bird/dev_2024/dev.json`` beside ``bird/dev_databases/`` and ``bird/dev_databases_descriptions/``,
    with one of the two databases absent (as in ../shared/data/bird)."""
    root = tmp_path / "bird"
    rows = [{"question_id": 1, "db_id": "club", "question": "How many members are there?",
             "SQL": "SELECT count(*) FROM member", "evidence": "members are rows of member",
             "difficulty": "simple"},
            {"question_id": 2, "db_id": "club", "question": "Who is the president?",
             "SQL": "SELECT member_id FROM member WHERE position = 'President'",
             "evidence": "president refers to position = 'President'", "difficulty": "moderate"},
            {"question_id": 3, "db_id": "financial", "question": "How many loans?", "SQL": "SELECT 1",
             "evidence": "", "difficulty": "simple"}]
    (root / "dev_2024").mkdir(parents=True)
    (root / "dev_2024" / "dev.json").write_text(json.dumps(rows), encoding="utf-8")
    make_db(root / "dev_databases" / "club" / "club.sqlite",
            "CREATE TABLE member (member_id INTEGER PRIMARY KEY, position TEXT);"
            "INSERT INTO member VALUES (1, 'President'), (2, 'Member'), (3, 'Member');")
    desc = root / "dev_databases_descriptions" / "club" / "database_description"
    desc.mkdir(parents=True)
    (desc / "member.csv").write_bytes(CLUB_CSV)
    return root


def test_bird_finds_the_databases_beside_the_questions_and_skips_the_absent_ones(
        bird_shared: Path, tmp_path: Path, schema_graph, unique_name) -> None:
    prefix = unique_name("b") + "_"
    prompts: list[str] = []

    def answer(messages: Any, *rest: Any) -> str:
        text = str(messages)
        prompts.append(text)
        return "```sql\nSELECT count(*) FROM member\n```"

    messages: list[str] = []
    args = parse(["--dataset", "bird", "--data-dir", str(bird_shared / "dev_2024"), "--method", "kgsql",
                  "--shots", "0", "--out", str(tmp_path / "run"), "--no-progress", "--graph-prefix", prefix, *LEAN])
    meta = run_eval(args, lm=ScriptedLM(answer), graph=schema_graph, say=messages.append)
    cell = meta["cells"][0]
    assert cell["n"] == 2 and cell["n_scored"] == 2 and cell["n_missing_db"] == 0  # financial's question skipped
    assert any("1 questions skipped: no database file for 1 of its databases (financial)" in m for m in messages)
    column = {c.name: c for c in schema_graph.table(prefix + "club", "member").columns}["position"]
    assert column.description == "the member\u2019s role in the club"  # read from the cp1252 CSV beside
    assert any("president refers to position = 'President'" in p for p in prompts)
    assert meta["evidence"] == "given"


def test_no_evidence_asks_the_question_alone(bird_shared: Path, tmp_path: Path, schema_graph, unique_name) -> None:
    prompts: list[str] = []

    def answer(messages: Any, *rest: Any) -> str:
        prompts.append(str(messages))
        return "```sql\nSELECT count(*) FROM member\n```"

    args = parse(["--dataset", "bird", "--data-dir", str(bird_shared / "dev_2024"), "--method", "kgsql",
                  "--shots", "0", "--out", str(tmp_path / "run"), "--no-progress", "--no-evidence",
                  "--graph-prefix", unique_name("b") + "_", *LEAN])
    meta = run_eval(args, lm=ScriptedLM(answer), graph=schema_graph, say=lambda s: None)
    assert prompts and not any("refers to position" in p or "members are rows" in p for p in prompts)
    assert meta["evidence"] == "none" and meta["cells"][0]["n_scored"] == 2


def test_bird_with_no_database_at_all_is_one_clear_error(tmp_path: Path, schema_graph) -> None:
    root = tmp_path / "bird"
    root.mkdir()
    (root / "dev.json").write_text(json.dumps([{"question_id": 0, "db_id": "financial", "question": "q?",
                                                "SQL": "SELECT 1", "evidence": ""}]), encoding="utf-8")
    args = parse(["--dataset", "bird", "--data-dir", str(root), "--method", "kgsql", "--shots", "0",
                  "--out", str(tmp_path / "run"), "--no-progress"])
    with pytest.raises(InputError, match="no question has its database file"):
        run_eval(args, lm=ScriptedLM(lambda *a: pytest.fail("nothing to ask")), graph=schema_graph,
                 say=lambda s: None)
