"""Whole agent episodes driven by a scripted model over the real graph and database."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kgsql.agent import AgentMethod, AgentOptions
from kgsql.errors import InputError
from kgsql.agent.transports import RETRY_STOP, STOP
from kgsql.llm.scripted import ScriptedLM
from kgsql.methods import build

LONGEST = "SELECT name FROM rivers ORDER BY length_km DESC LIMIT 1"


@pytest.fixture(scope="module")
def graph(schema_graph, example_db: Path):  # type: ignore[no-untyped-def]
    schema_graph.ingest(example_db, name="episode_geo")
    return schema_graph


def test_an_episode_calls_every_tool_recovers_a_malformed_action_and_finishes(graph) -> None:  # type: ignore[no-untyped-def]
    lm = ScriptedLM([
        'Thought: which column is a length?\nAction: SearchColumn("length of a river")',
        'Action: SearchValue("Silver River", table="rivers")',
        "Thought: I will just answer.\nThe longest river is the Silver River.",  # no action
        'Action: FindShortestPath("rivers.name", "provinces.name")',
        f'Action: ExecuteSQL("{LONGEST}")',
        f'Thought: that is it\nAction: Done("{LONGEST}")\nObservation: Silver River',
    ])
    answer = build("agent", graph, lm, draft=False).ask("Which river is the longest?", "episode_geo")  # the paper's
    assert answer.error is None and answer.sql == LONGEST and answer.rows == [("Silver River",)]
    assert answer.rounds == 6 and len(lm.calls) == 6
    assert [s.get("action", "").split("(")[0] for s in answer.steps] == [
        "SearchColumn", "SearchValue", "", "FindShortestPath", "ExecuteSQL", "Done"]
    assert answer.steps[2]["error"].startswith("No action found")
    # the correction reached the model as the next observation, and the conversation kept the cleaned steps
    third = lm.calls[3].messages
    assert third[-1] == {"role": "user", "content": f"Observation: Error: {answer.steps[2]['error']}"}
    assert third[2] == {"role": "assistant",
                        "content": 'Thought: which column is a length?\nAction: SearchColumn("length of a river")'}
    assert third[3]["content"].startswith("Observation: 1. rivers.length_km (REAL)")
    # one system turn for every question (cached by the server), tables only in the question turn
    system, user = lm.calls[0].messages[0]["content"], lm.calls[0].messages[1]["content"]
    assert "- FindShortestPath(start, end):" in system and "Example 2:" in system and "rivers" not in system
    assert user == ("Question: Which river is the longest?\n"
                    "Database: episode_geo (tables: provinces, cities, rivers, river_cities)")
    assert lm.calls[0].params["stop"][0] == "\nObservation" and lm.calls[0].params["temperature"] == 0.0
    assert answer.tokens["total"] > 0 and len(answer.prompts) == 6
    assert answer.candidates == [LONGEST]
    # reviewed like every answer (issue 34): no flag, and what the query does
    assert answer.warnings == [] and answer.explanation["lines"][-1] == \
        "Keeps the 1 row(s) with the highest rivers.length_km"


def test_the_round_limit_returns_the_best_query_it_ran(graph) -> None:  # type: ignore[no-untyped-def]
    lm = ScriptedLM([
        'Action: ExecuteSQL("SELECT name FROM rivers WHERE length_km > 9999")',  # runs, empty
        f'Action: ExecuteSQL("{LONGEST}")',  # rows
        'Action: ExecuteSQL("SELECT nope FROM rivers")',  # fails
        'Action: SearchColumn("river")',
    ])
    method = AgentMethod(graph, lm, AgentOptions(max_rounds=4))
    answer = method.ask("Which river is the longest?", "episode_geo")
    assert answer.rounds == 4 and len(lm.calls) == 4
    assert answer.sql == LONGEST and answer.rows == [("Silver River",)] and answer.error is None

    nothing = AgentMethod(graph, ScriptedLM(['Action: ExecuteSQL("SELECT nope FROM rivers")',
                                            'Action: ExecuteSQL("SELECT nope2 FROM rivers")']),
                          AgentOptions(max_rounds=2)).ask("Longest river?", "episode_geo")
    assert nothing.error == "no working query after 2 rounds" and nothing.sql == "SELECT nope2 FROM rivers"


def test_a_repeated_step_is_not_run_again_and_the_last_round_asks_for_done(graph) -> None:  # type: ignore[no-untyped-def]
    lm = ScriptedLM(['Action: SearchColumn("river length")', "Action: SearchColumn('river length')",
                     f'Action: ExecuteSQL("{LONGEST}")', f'Action: ExecuteSQL("{LONGEST}")'])
    answer = AgentMethod(graph, lm, AgentOptions(max_rounds=4)).ask("Longest river?", "episode_geo")
    assert answer.steps[1]["repeated"] == 1 and answer.steps[3]["repeated"] == 3
    assert answer.steps[1]["observation"].startswith("You already did this in round 1")
    assert lm.calls[3].messages[-1]["content"].endswith("One step left: finish now with Done(sql).")
    assert answer.candidates == [LONGEST] and answer.sql == LONGEST and answer.rows == [("Silver River",)]

    stuck = ScriptedLM(['Action: SearchColumn("river length")'] * 4 + ['Action: Done("SELECT 1")'])
    looped = AgentMethod(graph, stuck).ask("Longest river?", "episode_geo")
    assert looped.rounds == 4 and len(stuck.calls) == 4 and looped.steps[-1]["observation"].startswith("(stopped")
    assert looped.error == "no working query after 4 rounds"


def test_a_failing_final_query_gets_one_chance_and_evidence_reaches_the_model(graph) -> None:  # type: ignore[no-untyped-def]
    lm = ScriptedLM(['Action: Done("SELECT lenght FROM rivers")', f'Action: Done("{LONGEST}")'])
    answer = AgentMethod(graph, lm).ask("Longest river?", "episode_geo", evidence="longest refers to length_km")
    assert answer.sql == LONGEST and answer.rounds == 2
    assert "The final query failed; fix it" in lm.calls[1].messages[-1]["content"]
    assert "Evidence: longest refers to length_km" in lm.calls[0].messages[1]["content"]

    twice = AgentMethod(graph, ScriptedLM(['Action: Done("SELECT x FROM rivers")'] * 2))
    failed = twice.ask("Longest river?", "episode_geo")
    assert failed.rounds == 2 and failed.error is not None and failed.sql == "SELECT x FROM rivers"


def test_function_calling_transport_with_scripted_calls(graph) -> None:  # type: ignore[no-untyped-def]
    from kgsql.llm.base import ToolCall

    lm = ScriptedLM([ToolCall("c1", "SearchColumn", '{"semantic": "river length"}'),
                     ToolCall("c2", "SearchColumn", '{"colour": "red"}'),
                     ToolCall("c3", "Done", json.dumps({"sql": LONGEST}))])
    answer = AgentMethod(graph, lm, AgentOptions(transport="functions")).ask("Longest river?", "episode_geo")
    assert answer.sql == LONGEST and answer.rounds == 3
    assert [t["function"]["name"] for t in lm.calls[0].params["tools"]] == [
        "SearchColumn", "SearchValue", "FindShortestPath", "ExecuteSQL", "Done"]
    second = lm.calls[1].messages
    assert second[-2]["tool_calls"][0]["id"] == "c1"
    assert second[-1]["role"] == "tool" and second[-1]["tool_call_id"] == "c1"
    assert "no argument 'colour'" in lm.calls[2].messages[-1]["content"]


def test_a_model_failing_mid_episode_keeps_the_query_that_worked(graph) -> None:  # type: ignore[no-untyped-def]
    from kgsql.llm.errors import LLMTimeoutError

    lm = ScriptedLM([f'Action: ExecuteSQL("{LONGEST}")', LLMTimeoutError("endpoint timed out")])
    answer = AgentMethod(graph, lm).ask("Longest river?", "episode_geo")
    assert answer.sql == LONGEST and answer.rows == [("Silver River",)] and answer.error is None
    assert answer.steps[-1]["error"] == "model: endpoint timed out"
    down = AgentMethod(graph, ScriptedLM([LLMTimeoutError("endpoint timed out")])).ask("Longest?", "episode_geo")
    assert down.error == "endpoint timed out" and down.sql == ""


class StoppingLM(ScriptedLM):
    """A scripted model that applies stop sequences as a server does: text cut at the first one, and an
    empty cut an empty-completion error (what llama.cpp's server answered the 0.5B)."""

    def complete(self, messages, *, step=None, **params):  # type: ignore[no-untyped-def]
        import dataclasses

        from kgsql.llm.errors import LLMEmptyResponseError

        completion = super().complete(messages, step=step, **params)
        text = completion.text
        for stop in params.get("stop") or []:
            at = text.find(stop)
            if at >= 0:
                text = text[:at]
        if not text.strip():
            raise LLMEmptyResponseError("LLM endpoint returned an empty completion (finish_reason=stop)")
        return dataclasses.replace(completion, text=text)


def test_a_turn_opening_with_a_made_up_observation_is_read_not_fatal(graph) -> None:  # type: ignore[no-untyped-def]
    """Issue 30, item 1: the 0.5B starts its turn with 'Observation:'; the stop sequences cut it to nothing,
    which ended the episode. The turn is asked again without them and the made-up part skipped."""
    made_up = ("Observation: the rivers table has a length_km column.\nThought: order by length\n"
               f'Action: Done("{LONGEST}")\nObservation: Silver River')
    lm = StoppingLM(['Action: SearchColumn("river length")', made_up, made_up])
    answer = AgentMethod(graph, lm).ask("Which river is the longest?", "episode_geo")
    assert answer.error is None and answer.sql == LONGEST and answer.rows == [("Silver River",)]
    assert [c.params["stop"] for c in lm.calls][1:] == [STOP, RETRY_STOP]  # asked again, without the stops


def test_unknown_database_and_bad_options_are_one_clear_error(graph) -> None:  # type: ignore[no-untyped-def]
    answer = AgentMethod(graph, ScriptedLM([])).ask("Longest river?", "no_such_db")
    assert answer.error and "no_such_db" in answer.error and answer.rounds == 0
    for kwargs, message in [({"transport": "smoke"}, "expected one of text, functions"),
                            ({"max_rounds": 0}, "at least 1"), ({"demos": ("nope",)}, "no demonstration"),
                            ({"timeout_s": 0}, "positive number of seconds"),
                            ({"timeout_s": float("inf")}, "positive number of seconds"),
                            ({"schema": "tables"}, "expected names or a schema style"),
                            ({"schema_tokens": 0}, "at least 1")]:
        with pytest.raises(InputError, match=message):
            AgentOptions(**kwargs)


def test_ask_cli_runs_the_agent_method(stub_env, cli_ingest, example_db: Path) -> None:  # type: ignore[no-untyped-def]
    """``python -m kgsql.ask --method agent`` end to end, the model being a real HTTP endpoint."""
    from llm_stub import Reply, StubServer, chat_body

    stub = StubServer().script(Reply(body=chat_body('Action: SearchColumn("length")')),
                               Reply(body=chat_body(f'Action: Done("{LONGEST}")')))
    try:
        env = stub_env(stub)
        cli_ingest(env, example_db, "episode_geo")
        run = subprocess.run([sys.executable, "-m", "kgsql.ask", "Which river is longest?", "--db", "episode_geo",
                              "--method", "agent", "--set", "draft=false", "--trace"], capture_output=True, text=True, env=env, timeout=300)
    finally:
        stub.close()
    assert run.returncode == 0, run.stderr
    assert f"SQL: {LONGEST}" in run.stdout and "Silver River" in run.stdout
    assert 'Action: SearchColumn("length")' in run.stdout and "Observation: 1. rivers.length_km" in run.stdout
    assert stub.requests[0]["json"]["stop"][0] == "\nObservation"


def test_the_question_turn_can_show_the_columns_within_a_budget(graph) -> None:  # type: ignore[no-untyped-def]
    lm = ScriptedLM([f'Action: Done("{LONGEST}")'])
    answer = AgentMethod(graph, lm, AgentOptions(schema="table-column")).ask("Longest river?", "episode_geo")
    assert answer.rows == [("Silver River",)]
    assert lm.calls[0].messages[1]["content"] == (
        "Question: Longest river?\nDatabase: episode_geo, tables and columns:\n"
        "# provinces(province_id, name, capital_city_id, population, Shape)\n"
        "# cities(city_id, name, province_id, population, is_capital, founded, Location)\n"
        "# rivers(river_id, name, length_km, Shape)\n"
        "# river_cities(river_id, city_id)")
    # over the budget: the table names only, as a wide database needs
    lm = ScriptedLM([f'Action: Done("{LONGEST}")'])
    AgentMethod(graph, lm, AgentOptions(schema="table-column", schema_tokens=10)).ask("Longest river?", "episode_geo")
    assert lm.calls[0].messages[1]["content"].endswith("(tables: provinces, cities, rivers, river_cities)")


def _drafter(sql: str):  # type: ignore[no-untyped-def]
    from kgsql.generate.answer import Answer

    def draft(question: str, db: str, evidence: str | None = None) -> Answer:
        answer = Answer(question=question, db=db, sql=sql)
        answer.tokens = {"prompt": 100, "completion": 10, "cached": 0, "total": 110}
        answer.prompts = [{"step": "sql"}]
        return answer
    return draft


def test_a_draft_from_the_default_method_opens_the_episode(graph) -> None:  # type: ignore[no-untyped-def]
    lm = ScriptedLM([f'Thought: the first query is right.\nAction: Done("{LONGEST}")'])
    method = AgentMethod(graph, lm, AgentOptions(draft=True), drafter=_drafter(LONGEST))
    answer = method.ask("Which river is the longest?", "episode_geo")
    assert answer.rows == [("Silver River",)] and answer.rounds == 1
    turn = lm.calls[0].messages[1]["content"]
    assert f"A first query, written from the schema:\n{LONGEST}\nIts result:\nname" in turn
    assert "Silver River" in turn and turn.endswith("(the same query if it is right).")
    assert answer.tokens["prompt"] >= 100 and answer.prompts[0] == {"step": "sql"}  # the draft's cost counts


def test_without_a_done_the_draft_is_the_answer(graph) -> None:  # type: ignore[no-untyped-def]
    lm = ScriptedLM(['Action: ExecuteSQL("SELECT nope FROM rivers")'] * 2)
    answer = AgentMethod(graph, lm, AgentOptions(draft=True, max_rounds=2),
                         drafter=_drafter(LONGEST)).ask("Longest river?", "episode_geo")
    assert answer.sql == LONGEST and answer.rows == [("Silver River",)]
    # off: no draft is asked for, the question turn is the paper's
    lm = ScriptedLM([f'Action: Done("{LONGEST}")'])
    AgentMethod(graph, lm, AgentOptions(draft=False), drafter=_drafter("SELECT 1")).ask("Longest river?", "episode_geo")
    assert "A first query" not in lm.calls[0].messages[1]["content"]


def test_build_gives_the_agent_the_default_method_as_its_drafter(graph) -> None:  # type: ignore[no-untyped-def]
    assert build("agent", graph, ScriptedLM([]), draft=False).drafter is None
    drafter = build("agent", graph, ScriptedLM([])).drafter  # on by default
    assert drafter is not None and getattr(drafter, "__self__").__class__.__name__ == "StagedMethod"
