"""SParC: one example per turn with its history, interaction EX from records, and a run end to end.

The fixture is written here (a few lines of JSON, two tiny SQLite files in a
Spider folder beside the SParC one, one interaction on a database that is
absent), so nothing depends on ../shared.
"""
from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from kgsql.errors import InputError
from kgsql.eval.datasets import get_benchmark, load_dataset
from kgsql.eval.datasets.sparc import load_sparc, turn_depth
from kgsql.eval.interactions import interaction_summary, without_interaction_breaks
from kgsql.eval.aggregate import aggregate
from kgsql.eval.records import read_records
from kgsql.eval.report import summarize, to_markdown
from kgsql.eval.run import run_eval
from kgsql.eval.score import format_table, score_file
from kgsql.llm.scripted import ScriptedLM
from tests.eval.test_run import LEAN, MUSIC, SHOP, make_db, parse

INTERACTIONS = [
    {"database_id": "music", "interaction": [
        {"utterance": "How many singers are there?", "query": "SELECT count(*) FROM singer"},
        {"utterance": "Which of them are older than 25?", "query": "SELECT name FROM singer WHERE age > 25"},
        {"utterance": "Order them by age.", "query": "SELECT name FROM singer WHERE age > 25 ORDER BY age"}],
     "final": {"utterance": "Names of singers older than 25 by age.", "query": "..."}},
    {"database_id": "shop", "interaction": [
        {"utterance": "List all items.", "query": "SELECT name FROM item"},
        {"utterance": "Which cost more than 5?", "query": "SELECT name FROM item WHERE price > 5"}]},
    {"database_id": "wta_1", "interaction": [
        {"utterance": "How many players?", "query": "SELECT count(*) FROM players"}]},
]
IDS = ["0-0", "0-1", "0-2", "1-0", "1-1", "2-0"]


@pytest.fixture()
def sparc_dir(tmp_path: Path) -> Path:
    """``data/sparc/{dev,tables}.json`` and Spider's databases in ``data/spider/database`` (no wta_1)."""
    root = tmp_path / "data" / "sparc"
    root.mkdir(parents=True)
    (root / "dev.json").write_text(json.dumps(INTERACTIONS), encoding="utf-8")
    (root / "tables.json").write_text("[]", encoding="utf-8")
    make_db(tmp_path / "data" / "spider" / "database" / "music" / "music.sqlite", MUSIC)
    make_db(tmp_path / "data" / "spider" / "database" / "shop" / "shop.sqlite", SHOP)
    return root


# --------------------------------------------------------------------------- the loader


def test_each_turn_is_an_example_with_its_history(sparc_dir: Path) -> None:
    ds = load_dataset("sparc", sparc_dir)  # the default split: dev
    assert ds.name == "sparc" and ds.split == "dev" and [e.id for e in ds.questions] == IDS
    assert [e.difficulty for e in ds.questions] == ["turn 1", "turn 2", "turn 3", "turn 1", "turn 2", "turn 1"]
    third = ds.questions[2]
    assert (third.db_id, third.question, third.gold) == (
        "music", "Order them by age.", ["SELECT name FROM singer WHERE age > 25 ORDER BY age"])
    assert third.history == ["How many singers are there?", "Which of them are older than 25?"]
    assert third.extra["history_sql"] == ["SELECT count(*) FROM singer", "SELECT name FROM singer WHERE age > 25"]
    assert third.extra["interaction_id"] == "0" and third.extra["turn_index"] == 2
    assert third.turn == {"interaction_id": "0", "turn_index": 2, "history": third.history}
    assert ds.questions[0].history == [] and ds.questions[3].history == [] and ds.questions[4].history == [
        "List all items."]
    # the databases are Spider's, found beside the SParC folder; a missing one stays, unscored
    assert ds.db_path("music") == sparc_dir.parent / "spider" / "database" / "music" / "music.sqlite"
    assert ds.missing_db_ids == ["wta_1"] and [e.id for e in ds.missing_db] == ["2-0"]
    assert ds.tables_file == sparc_dir / "tables.json"


def test_db_dir_and_turn_depths(sparc_dir: Path, tmp_path: Path) -> None:
    ds = load_sparc(sparc_dir, db_dir=tmp_path / "elsewhere")
    assert ds.missing_db_ids == ["music", "shop", "wta_1"]
    assert get_benchmark("sparc").loader_options(db_dir=tmp_path, lang="zh") == {"db_dir": tmp_path}
    assert [turn_depth(i) for i in range(6)] == ["turn 1", "turn 2", "turn 3", "turn 4+", "turn 4+", "turn 4+"]
    assert get_benchmark("sparc").metric == "spider_ex" and get_benchmark("sparc").default_split == "dev"


def test_bad_files_are_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no SParC interactions file"):
        load_sparc(tmp_path)
    (tmp_path / "dev.json").write_text(json.dumps([{"database_id": "music", "interaction": [{"query": "x"}]}]))
    with pytest.raises(InputError, match="interaction 0 turn 0 has no utterance"):
        load_sparc(tmp_path)
    (tmp_path / "dev.json").write_text(json.dumps([{"interaction": []}]))
    with pytest.raises(InputError, match="interaction 0 has no database_id"):
        load_sparc(tmp_path)
    (tmp_path / "dev.json").write_text(json.dumps([{"database_id": "music"}]))
    with pytest.raises(InputError, match="interaction 0 has no list of turns"):
        load_sparc(tmp_path)


# --------------------------------------------------------------------------- interaction EX on hand-made records


def turn(iid: str | None, depth: int, right: int | None, method: str = "m") -> dict[str, Any]:
    extra = {} if iid is None else {"interaction_id": iid, "turn_index": depth - 1}
    return {"id": f"{iid}-{depth - 1}", "db_id": "db", "spider_ex": right, "bird_ex": right,
            "soft_f1": None if right is None else float(right), "difficulty": f"turn {depth}", "method": method,
            "error_kind": "missing_db" if right is None else None, "extra": extra}


# 3 scored interactions, 5 scored turns, 4 right: A right (2/2), B wrong (1/2), C right (1/1);
# D's database is missing (counted, not scored).
HAND = [turn("A", 1, 1), turn("A", 2, 1), turn("B", 1, 1), turn("B", 2, 0), turn("C", 1, 1), turn("D", 1, None)]


def test_interaction_ex_and_the_per_depth_table_by_hand() -> None:
    s = aggregate(HAND)
    assert (s["n"], s["n_scored"], s["n_missing_db"]) == (6, 5, 1)
    assert s["spider_ex"] == pytest.approx(4 / 5)  # per turn
    assert s["interaction"] == {"n": 4, "n_scored": 3, "n_turns_scored": 5,
                                "spider_ex": pytest.approx(2 / 3), "bird_ex": pytest.approx(2 / 3)}
    depth = s["by_difficulty"]
    assert list(depth) == ["turn 1", "turn 2"]
    assert (depth["turn 1"]["n"], depth["turn 1"]["n_scored"], depth["turn 1"]["spider_ex"]) == (4, 3, 1.0)
    assert (depth["turn 2"]["n_scored"], depth["turn 2"]["spider_ex"]) == (2, 0.5)


def test_interactions_are_counted_per_run_and_standalone_questions_have_none() -> None:
    other = [turn("A", 1, 1, "n"), turn("A", 2, 0, "n")]  # the same interaction A, another method
    s = summarize(HAND + other)
    assert s["interaction"]["n_scored"] == 4 and s["interaction"]["spider_ex"] == pytest.approx(2 / 4)
    assert s["by_run"]["m"]["interaction"]["spider_ex"] == pytest.approx(2 / 3)
    assert s["by_run"]["n"]["interaction"]["spider_ex"] == 0.0
    md = to_markdown(s)
    assert "### Interactions" in md and "| m | 4 | 3 | 5 | 66.67 | 66.67 |" in md
    assert "By difficulty (turn depth)" in md
    standalone = [turn(None, 1, 1), turn(None, 1, 0)]
    assert interaction_summary(standalone) is None and "interaction" not in aggregate(standalone)
    assert "Interactions" not in to_markdown(summarize(standalone))


# --------------------------------------------------------------------------- score: the official file form


def test_official_prediction_files_lose_their_interaction_breaks(sparc_dir: Path) -> None:
    ds = load_sparc(sparc_dir)
    gold = [(t["query"], None) for i in INTERACTIONS for t in i["interaction"]]
    official = []
    for inter in INTERACTIONS:
        official += [(t["query"], inter["database_id"]) for t in inter["interaction"]] + [("", None)]
    flat = without_interaction_breaks(official, ds.questions)
    assert [sql for sql, _ in flat] == [sql for sql, _ in gold]
    assert without_interaction_breaks(gold, ds.questions) == gold  # no blank line: as is
    odd = gold[:2] + [("", None)] + gold[2:]  # a blank inside interaction 0: an empty prediction
    assert without_interaction_breaks(odd, ds.questions) == odd
    summary = score_file(ds, official)
    assert summary["spider_ex"] == 1.0 and summary["n_scored"] == 5 and summary["n_missing_db"] == 1
    assert summary["interaction"]["n_scored"] == 2 and summary["interaction"]["spider_ex"] == 1.0
    assert summary["records"][1]["extra"]["interaction_id"] == "0"
    assert "interactions: 3 (2 scored): interaction spider_ex 100.00" in format_table(summary)


# --------------------------------------------------------------------------- a run end to end


STANDALONE = {"Which of them are older than 25?": "Which singers are older than 25?",
              "Order them by age.": "Names of singers older than 25, ordered by age.",
              "Which cost more than 5?": "Which items cost more than 5?"}
ANSWERS = {"How many singers are there?": "SELECT count(*) FROM singer",
           "Which singers are older than 25?": "SELECT name FROM singer WHERE age > 25",
           "Names of singers older than 25, ordered by age.": "SELECT name FROM singer WHERE age > 25 ORDER BY age",
           "List all items.": "SELECT name FROM item",
           "Which items cost more than 5?": "SELECT name FROM item"}  # wrong: interaction 1 fails


def scripted_model(rewrites: list[str]) -> ScriptedLM:
    """Rewrites a numbered conversation to standalone questions; answers SQL by the (rewritten) question."""
    def reply(messages: list[dict[str, Any]], step: str | None, params: dict[str, Any]) -> str:
        text = messages[-1]["content"]
        if step == "rewrite":
            rewrites.append(text)
            lines = [line.split(". ", 1) for line in text.splitlines()]
            return "\n".join(f"{n}. {STANDALONE.get(q, q)}" for n, q in lines)
        asked = max((q for q in ANSWERS if q in text), key=text.rfind)
        return f"```sql\n{ANSWERS[asked]}\n```"

    return ScriptedLM(reply)


def test_sparc_runs_end_to_end_with_history_and_interaction_ex(sparc_dir: Path, tmp_path: Path,
                                                               schema_graph) -> None:
    out, rewrites, said = tmp_path / "run", [], []
    args = parse(["--dataset", "sparc", "--data-dir", str(sparc_dir), "--method", "kgsql", "--shots", "0",
                  "--out", str(out), "--graph-prefix", f"t{uuid.uuid4().hex[:6]}_", "--no-progress",
                  "--no-plots", "--set", "context=rewrite", *LEAN])  # the default, history: test_sparc_history
    meta = run_eval(args, lm=scripted_model(rewrites), graph=schema_graph, say=said.append)
    records = {r.id: r for r in read_records(out / "records.jsonl")}
    assert sorted(records) == IDS
    assert [records[i].spider_ex for i in IDS] == [1, 1, 1, 1, 0, None]
    assert records["2-0"].error_kind == "missing_db" and records["2-0"].extra["interaction_id"] == "2"
    # follow-ups reach the method with their history, and context=rewrite rewrites them to stand alone
    assert sorted(rewrites) == sorted([
        "1. How many singers are there?\n2. Which of them are older than 25?",
        "1. How many singers are there?\n2. Which of them are older than 25?\n3. Order them by age.",
        "1. List all items.\n2. Which cost more than 5?"])
    assert records["0-2"].extra["history"] == ["How many singers are there?", "Which of them are older than 25?"]
    assert records["0-1"].extra["turn_index"] == 1 and records["0-0"].extra["llm_calls"] == 1
    assert records["0-1"].extra["llm_calls"] == 2  # the rewrite, then the SQL
    summary = json.loads((out / "summary.json").read_text())
    assert summary["spider_ex"] == pytest.approx(4 / 5) and summary["n_missing_db"] == 1
    assert summary["interaction"]["n"] == 3 and summary["interaction"]["n_scored"] == 2
    assert summary["interaction"]["spider_ex"] == pytest.approx(1 / 2)
    assert summary["by_difficulty"]["turn 2"]["spider_ex"] == pytest.approx(1 / 2)
    assert "### Interactions" in (out / "summary.md").read_text()
    assert meta["cells"][0]["interaction"]["spider_ex"] == pytest.approx(1 / 2)


def test_a_replay_asks_a_follow_up_with_its_history() -> None:
    from kgsql.eval.replay import ReplayLM, Replaying

    seen: list[Any] = []

    class Method:
        def ask(self, question: str, db: str, evidence: str | None = None, history: Any = None) -> str:
            seen.append(history)
            return "answer"

    replaying = Replaying(Method(), ReplayLM({"0-0": [], "0-1": []}))
    replaying.ask_example("0-1", "Which of them?", db="music", history=["How many singers are there?"])
    replaying.ask_example("0-0", "How many singers are there?", db="music")
    assert seen == [["How many singers are there?"], None]
