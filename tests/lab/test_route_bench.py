"""The routing benchmark's miss list: which misses the chosen database could answer as asked (the gold query
runs there unchanged), on real SQLite files; the routing itself is scripted so each case is a known miss."""
from __future__ import annotations

import sqlite3
from pathlib import Path
from types import SimpleNamespace

from kgsql.lab.route_bench import misses

DATABASES = {
    "singer": """CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT);
                 INSERT INTO singer VALUES (1, 'Liliane');""",
    "concert_singer": """CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, country TEXT);
                         CREATE TABLE concert (concert_id INTEGER PRIMARY KEY, year INTEGER);
                         INSERT INTO singer VALUES (1, 'Bo', 'France'), (2, 'Ann', 'Peru');""",
}
DEV = [
    {"db_id": "concert_singer", "question": "How many singers do we have?", "query": "SELECT count(*) FROM singer"},
    {"db_id": "concert_singer", "question": "How many concerts were there in 2014?",
     "query": "SELECT count(*) FROM concert WHERE year = 2014"},
    {"db_id": "concert_singer", "question": "Which countries are singers from?",
     "query": "SELECT DISTINCT country FROM singer"},
    {"db_id": "singer", "question": "List the singers' names.", "query": "SELECT name FROM singer"},
]


class ScriptedRouter:
    """Routes each question to the database the test names (the miss analysis reads nothing else)."""

    def __init__(self, choices: dict[str, str]) -> None:
        self.choices = choices
        self.mode = "dense"

    def route(self, question: str, top: int = 3) -> SimpleNamespace:
        return SimpleNamespace(ranked=[SimpleNamespace(db=self.choices[question])])


def _databases(folder: Path) -> Path:
    for db, script in DATABASES.items():
        (folder / db).mkdir(parents=True)
        with sqlite3.connect(folder / db / f"{db}.sqlite") as conn:
            conn.executescript(script)
    return folder


def test_misses_count_those_the_chosen_database_answers_as_asked(tmp_path: Path) -> None:
    router = ScriptedRouter({DEV[0]["question"]: "singer", DEV[1]["question"]: "singer",
                             DEV[2]["question"]: "singer", DEV[3]["question"]: "singer"})
    found = misses(router, DEV, _databases(tmp_path))  # type: ignore[arg-type]
    assert router.mode == "fused"  # the default routing is the one analysed
    assert found["count"] == 3  # the fourth question was routed right
    runs = {r["question"]: r["gold_sql_runs"] for r in found["rows"]}
    assert runs == {"How many singers do we have?": True,  # singer has the table the query reads
                    "How many concerts were there in 2014?": False,  # no concert table there
                    "Which countries are singers from?": False}  # singer has no country column
    assert found["gold_sql_runs_on_chosen"] == 1
    assert {r["chosen"] for r in found["rows"]} == {"singer"}


def test_no_misses_when_every_question_is_routed_right(tmp_path: Path) -> None:
    router = ScriptedRouter({q["question"]: q["db_id"] for q in DEV})
    assert misses(router, DEV, _databases(tmp_path)) == {"count": 0, "gold_sql_runs_on_chosen": 0, "rows": []}
