"""The default method's exact prompt on a BIRD-shaped database: documentation from description CSVs
(one cp1252 with bullets, one UTF-8 with a BOM), a question with BIRD's evidence and one without.

What the graph adds is asserted line by line beside the golden files: units, date formats, codes and
missing markers in their structured form next to their columns, the value the question names with
its column, and a coded column whose documented meaning the question uses. Regenerate the golden
files after an intended change with ``KGSQL_UPDATE_GOLDEN=1``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from golden import assert_golden
from kgsql.llm.scripted import ScriptedLM
from kgsql.methods import build
from kgsql.text.encoder import HashEncoder

FIXTURES = Path(__file__).parent / "fixtures"
CLUB = """
CREATE TABLE event (event_id TEXT PRIMARY KEY, event_name TEXT, status TEXT, attendees INTEGER);
CREATE TABLE expense (expense_id TEXT PRIMARY KEY, expense_description TEXT, expense_date TEXT, cost REAL,
                      approved INTEGER, link_to_event TEXT REFERENCES event(event_id));
INSERT INTO event VALUES ('e1', 'April Meeting', 'Closed', 20), ('e2', 'Laugh Out Loud', 'Open', 0),
                         ('e3', 'Spring Picnic', 'Planning', NULL);
INSERT INTO expense VALUES ('x1', 'Pizza', '2019-04-02', 51.81, 1, 'e1'), ('x2', 'Posters', '2019-04-01', 67.81, 0, 'e1'),
                           ('x3', 'Water, chips', '2019-10-08', 20.2, 1, 'e2');
"""
SQL = "SELECT SUM(cost) FROM expense JOIN event ON expense.link_to_event = event.event_id"


@pytest.fixture(scope="module")
def club(schema_graph, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    import sqlite3

    path = tmp_path_factory.mktemp("club") / "club.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(CLUB)
    conn.commit()
    conn.close()
    schema_graph.ingest(path, name="club", descriptions=FIXTURES / "club_descriptions", force=True)
    return schema_graph


def ask(graph: Any, question: str, evidence: str | None) -> tuple[str, Any]:
    lm = ScriptedLM({"sql": [f" {SQL[len('SELECT '):]}"]})
    t2s = build("kgsql", graph, lm, encoder=HashEncoder(), shots=0)
    answer = t2s.ask(question, db="club", evidence=evidence)
    prompt = "\n".join(m["content"] for call in lm.calls for m in call.messages)
    return prompt, answer


def test_bird_prompt_with_evidence(club) -> None:  # type: ignore[no-untyped-def]
    prompt, answer = ask(club, "What was spent on approved expenses of the April Meeting?",
                         "approved expenses refers to approved = 1")
    assert_golden(FIXTURES / "bird-kgsql-evidence.txt", prompt + "\n")
    lines = {line.strip().split()[0]: line for line in prompt.splitlines() if " -- " in line}
    assert lines["cost"].endswith("-- The dollar amount of the expense; unit: dollar")
    assert lines["expense_date"].endswith("; format: YYYY-MM-DD")            # not "e.g" left behind
    assert "1 = approved, 0 = not approved" in lines["approved"]              # the cp1252 bullets read right
    assert "NULL or 0 = missing" in lines["attendees"]
    assert "approved expenses refers to approved = 1" in prompt               # BIRD's evidence is kept
    assert "'April Meeting' is a value of event.event_name." in prompt        # and the graph's hints added
    assert answer.error is None


def test_bird_prompt_without_evidence_gets_the_meaning_from_the_graph(club) -> None:  # type: ignore[no-untyped-def]
    prompt, _ = ask(club, "What was spent on approved expenses of the April Meeting?", None)
    assert_golden(FIXTURES / "bird-kgsql-no-evidence.txt", prompt + "\n")
    assert "expense.approved: 1 = approved, 0 = not approved." in prompt      # the meaning hint
    assert "'April Meeting' is a value of event.event_name." in prompt


def test_no_meaning_hint_when_the_question_does_not_use_the_meaning(club) -> None:  # type: ignore[no-untyped-def]
    prompt, _ = ask(club, "How many events are there?", None)
    assert "expense.approved:" not in prompt


def test_value_meanings_are_properties_of_the_column_nodes(club) -> None:  # type: ignore[no-untyped-def]
    """A user's Cypher can ask the graph which columns hold dollars, or what a code stands for."""
    rows = club.store.run_text(
        "MATCH (c:Column) WHERE c.database = 'club' AND (c.unit IS NOT NULL OR c.value_codes IS NOT NULL "
        "OR c.missing_values IS NOT NULL OR c.value_format IS NOT NULL OR c.value_list IS NOT NULL) "
        "RETURN c.qualified_name AS name, c.unit AS unit, c.value_codes AS codes, c.missing_values AS missing, "
        "c.value_format AS format, c.value_list AS listed ORDER BY name")
    got = {r["name"]: {k: v for k, v in r.items() if k != "name" and v is not None} for r in rows}
    assert got == {
        "event.attendees": {"missing": ["NULL", "0"]},
        "event.status": {"listed": ["Open", "Closed", "Planning"]},
        "expense.approved": {"codes": ["1 = approved", "0 = not approved"]},
        "expense.cost": {"unit": "dollar"},
        "expense.expense_date": {"format": "YYYY-MM-DD"},
    }
