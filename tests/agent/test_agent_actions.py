"""Reading ``Thought:`` / ``Action: Tool(args)`` as small models write it."""
from __future__ import annotations

import pytest

from kgsql.agent.actions import ActionError, parse_step
from kgsql.agent.tools import AGENT_TOOLS


@pytest.mark.parametrize("text,tool,arguments", [
    ('Thought: the age\nAction: SearchColumn("age of a singer")', "SearchColumn", {"semantic": "age of a singer"}),
    ("Action: ExecuteSQL(SELECT count(*) FROM t WHERE a = 'x (y)')", "ExecuteSQL",
     {"sql": "SELECT count(*) FROM t WHERE a = 'x (y)'"}),  # unquoted SQL with a parenthesis in a string
    ('Action: SearchValue("France", table="singer")\nObservation: made up', "SearchValue",
     {"value": "France", "table": "singer"}),
    ('I am sure now. Done("SELECT 1")', "Done", {"sql": "SELECT 1"}),  # no Action: line
    ('```\nAction: ExecuteSQL("""SELECT *\nFROM t""")\n```', "ExecuteSQL", {"sql": "SELECT *\nFROM t"}),
    ('**Action:** done(sql="SELECT 2").', "Done", {"sql": "SELECT 2"}),  # markdown, lower case, keyword
    ("Action: FindShortestPath('a.x', 'b.y')", "FindShortestPath", {"start": "a.x", "end": "b.y"}),
    ("Action: SearchValue(value=France, table=singer)", "SearchValue", {"value": "France", "table": "singer"}),
    ('Action: ExecuteSQL("SELECT 3"', "ExecuteSQL", {"sql": "SELECT 3"}),  # unclosed
])
def test_actions_small_models_write(text: str, tool: str, arguments: dict) -> None:
    step = parse_step(text, AGENT_TOOLS)
    assert (step.tool, step.arguments) == (tool, arguments)


def test_thought_and_action_text_are_kept() -> None:
    step = parse_step('Thought: find it\nAction: SearchColumn("x")', AGENT_TOOLS)
    assert (step.thought, step.action) == ("find it", 'SearchColumn("x")')


@pytest.mark.parametrize("text,message", [
    ("I think the answer is 4.", "No action found"),
    ("Action: Bogus(1)", "There is no tool 'Bogus'"),
    ('Action: FindShortestPath("a.b")', "FindShortestPath needs 'end'"),
    ("Action: FindShortestPath(singer name, concert)", "quote each text argument"),
    ("Action: ", "No action found"),
    ("Action: ExecuteSQL(0x" + "f" * 5000 + ")", "Cannot read the arguments of ExecuteSQL"),  # no str() for it
])
def test_malformed_actions_get_a_one_line_correction(text: str, message: str) -> None:
    with pytest.raises(ActionError, match=message) as info:
        parse_step(text, AGENT_TOOLS)
    assert "\n" not in str(info.value)


def test_a_made_up_observation_before_the_step_is_skipped() -> None:
    step = parse_step('Observation: 3 rows\nThought: done\nAction: Done("SELECT 1")\nObservation: more', AGENT_TOOLS)
    assert (step.tool, step.arguments, step.thought) == ("Done", {"sql": "SELECT 1"}, "done")
    with pytest.raises(ActionError, match="No action found"):
        parse_step("Observation: only a made-up observation, no step", AGENT_TOOLS)
