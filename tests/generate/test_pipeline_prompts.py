"""Golden prompts of the first kgsql pipeline (``kgsql-classic``, stages of
``kgsql.stages.classic``), driven by a scripted LM.

Each case answers one question on the shipped example database with a
scripted model and compares every prompt the method sent with a golden
file in fixtures/prompts/ (written when the pipeline was one class: the
stages must send the same bytes). Regenerate after an intended change with
``KGSQL_UPDATE_GOLDEN=1 pytest tests/generate/test_pipeline_prompts.py``.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from typing import Any

from kgsql.errors import InputError, LLMError
from kgsql.llm.scripted import ScriptedLM
from kgsql.methods import build

GOLDEN = Path(__file__).parent / "fixtures" / "prompts"
QUESTION = "Which river is the longest?"

SCRIPT = {
    "evidence_terms": "- river\n- longest",
    "evidence_mapping": "- river refers to the table rivers\n- longest refers to MAX(length_km)",
    "evidence_summary": "longest river refers to MAX(length_km) in the table rivers",
    "decompose": "- What is the length of each river?\n- Which river is the longest?",
    "sql": [
        "```sql\nSELECT nme FROM rivers ORDER BY length_km DESC LIMIT 1\n```",
        "```sql\nSELECT name FROM rivers ORDER BY length_km DESC LIMIT 1\n```",
    ],
}

CASES: dict[str, tuple[dict[str, Any], str | None]] = {
    "kgsql_full": (dict(selection=False), None),
    "kgsql_direct_no_evidence": (dict(selection=False, least_to_most=False, evidence=False), None),
    "no_kg_schema": (dict(kg_schema=False, evidence=False), None),
    "no_sdbms_no_geo_no_tips": (dict(selection=False, sdbms=False, geo=False, correction=False, evidence=False), None),
    "user_evidence_replace": (dict(selection=False, user_evidence="replace"),
                              "longest refers to the largest length_km"),
}


def classic(graph: Any, lm: ScriptedLM, **options: Any) -> Any:
    """kgsql-classic without a pool (zero-shot), ``options`` overriding its defaults."""
    return build("kgsql-classic", graph, lm, pool=None, **options)


@pytest.fixture(scope="module")
def geo_graph(schema_graph, example_db):
    schema_graph.ingest(example_db, name="geo")
    return schema_graph


def render_calls(lm: ScriptedLM) -> str:
    out = []
    for i, call in enumerate(lm.calls, 1):
        for message in call.messages:
            out.append(f"===== call {i}: {call.step} ({message['role']}) =====\n{message['content']}")
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_prompts(geo_graph, case):
    options, user_evidence = CASES[case]
    lm = ScriptedLM({k: list(v) if isinstance(v, list) else v for k, v in SCRIPT.items()})
    answer = classic(geo_graph, lm, **options).ask(QUESTION, db="geo", evidence=user_evidence)
    if options.get("correction", True):  # the scripted first SQL is wrong; the tip round fixes it
        assert answer.error is None and answer.rows == [("Silver River",)], answer.error
    else:
        assert "no such column: nme" in answer.error and answer.rounds == 1
    got = render_calls(lm)
    path = GOLDEN / f"{case}.txt"
    if os.environ.get("KGSQL_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(got, encoding="utf-8")
    assert got == path.read_text(encoding="utf-8")


def test_tips_round_fixes_the_query(geo_graph):
    lm = ScriptedLM({k: list(v) if isinstance(v, list) else v for k, v in SCRIPT.items()})
    answer = classic(geo_graph, lm, selection=False).ask(QUESTION, db="geo")
    assert answer.rounds == 2
    assert answer.candidates == ["SELECT nme FROM rivers ORDER BY length_km DESC LIMIT 1",
                                 "SELECT name FROM rivers ORDER BY length_km DESC LIMIT 1"]
    assert answer.tips[0] == "The column 'nme' does not exist in the table 'rivers' and should not be used."
    assert lm.steps() == ["evidence_terms", "evidence_mapping", "evidence_summary", "decompose", "sql", "sql"]
    assert "### Schema tips" in lm.calls_for("sql")[1].messages[-1]["content"]
    assert answer.tokens["total"] > 0 and answer.records() == [{"name": "Silver River"}]


def test_without_tips_one_round_and_the_error_is_reported(geo_graph):
    lm = ScriptedLM({"sql": SCRIPT["sql"][0]})
    options = dict(selection=False, correction=False, evidence=False, least_to_most=False)
    answer = classic(geo_graph, lm, **options).ask(QUESTION, db="geo")
    assert answer.rounds == 1 and answer.rows == []
    assert "no such column: nme" in answer.error


def test_rounds_stop_at_max_rounds_and_last_prediction_is_final(geo_graph):
    bad = [f"SELECT nme{i} FROM rivers" for i in range(10)]
    lm = ScriptedLM({"sql": bad})
    options = dict(selection=False, evidence=False, least_to_most=False, max_rounds=3)
    answer = classic(geo_graph, lm, **options).ask(QUESTION, db="geo")
    assert answer.rounds == 3 and answer.sql == "SELECT nme2 FROM rivers"
    assert "no such column: nme2" in answer.error


def test_model_failure_and_garbage_become_answer_errors(geo_graph):
    options = dict(selection=False, evidence=False, least_to_most=False, max_rounds=2)
    down = ScriptedLM({"sql": LLMError("LLM endpoint http://127.0.0.1:9 is down")})
    answer = classic(geo_graph, down, **options).ask(QUESTION, db="geo")
    assert answer.sql == "" and "is down" in answer.error
    garbage = ScriptedLM({"sql": ["I cannot help with that.", "Still no."]})
    answer = classic(geo_graph, garbage, **options).ask(QUESTION, db="geo")
    assert answer.rounds == 2 and "no SQL" in answer.error


def test_unsafe_sql_is_never_run(geo_graph, example_db):
    before = example_db.read_bytes()
    lm = ScriptedLM({"sql": ["DROP TABLE rivers", "DELETE FROM rivers"]})
    options = dict(selection=False, evidence=False, least_to_most=False, max_rounds=2)
    answer = classic(geo_graph, lm, **options).ask(QUESTION, db="geo")
    assert answer.error and example_db.read_bytes() == before


@pytest.mark.parametrize("question", ["", "   ", "x" * 5000])
def test_bad_questions_are_refused(geo_graph, question):
    with pytest.raises(InputError, match="empty|characters long"):
        classic(geo_graph, ScriptedLM({})).ask(question, db="geo")


def test_least_to_most_answer_is_the_last_step_query(geo_graph):
    """A model that writes one query per sub-question: the pipeline runs the last, combined one."""
    stepwise = ("### Sub-question 1: What is the length of each river?\n"
                "```sql\nSELECT name, length_km FROM rivers\n```\n"
                "### Sub-question 2: Which river is the longest?\n"
                "```sql\nSELECT name FROM rivers ORDER BY length_km DESC LIMIT 1\n```")
    lm = ScriptedLM({"decompose": SCRIPT["decompose"], "sql": stepwise})
    options = dict(selection=False, evidence=False, correction=False)
    answer = classic(geo_graph, lm, **options).ask(QUESTION, db="geo")
    assert answer.sql == "SELECT name FROM rivers ORDER BY length_km DESC LIMIT 1"
    assert answer.rows == [("Silver River",)]


def test_a_later_failing_candidate_does_not_replace_one_that_ran(geo_graph):
    """Round 1 runs but finds nothing (a value tip follows), round 2 fails: the answer is round 1's."""
    first = "SELECT name FROM rivers WHERE name = 'Silver Rivr'"
    lm = ScriptedLM({"sql": [first, "SELECT nme FROM rivers", "SELECT nme FROM rivers"]})
    options = dict(selection=False, evidence=False, least_to_most=False, max_rounds=3)
    answer = classic(geo_graph, lm, **options).ask(QUESTION, db="geo")
    assert answer.rounds >= 2 and answer.candidates[1] == "SELECT nme FROM rivers"
    assert answer.sql == first and answer.error is None and answer.rows == []
    # The correction prompt showed the query that found nothing, and why.
    second = lm.calls_for("sql")[1].messages[-1]["content"]
    assert "The previous query did not work:\n```sql\n" + first in second and "It returned no rows." in second


def test_sspa_tips_rounds_show_tips_only(geo_graph):
    """SSpa's schema tips are sentences added to the original prompt: no previous query."""
    lm = ScriptedLM({"sql": ["SELECT nme FROM rivers", "SELECT name FROM rivers"]})
    options = dict(selection=False, evidence=False, least_to_most=False, show_failed_query=False)
    answer = classic(geo_graph, lm, **options).ask(QUESTION, db="geo")
    assert answer.rounds == 2 and answer.error is None
    second = lm.calls_for("sql")[1].messages[-1]["content"]
    assert "### Schema tips" in second and "previous query" not in second
