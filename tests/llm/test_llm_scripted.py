"""ScriptedLM: deterministic replies for pipeline unit tests."""
from __future__ import annotations

import pytest

from kgsql.llm import LM, ScriptedLM, ScriptExhaustedError, UsageMeter, usage_scope
from kgsql.errors import LLMError

M = [{"role": "user", "content": "schema: users(id)"}]


def test_replies_by_step_string_list_and_callable() -> None:
    lm = ScriptedLM({
        "evidence": "users are people",
        "sql": ["SELECT 1", "SELECT 2"],
        "agent": lambda msgs, step, params: f"{step}:{len(msgs)}:{params.get('max_tokens')}",
    })
    assert isinstance(lm, LM)
    assert lm.complete(M, step="evidence").text == "users are people"
    assert lm.complete(M, step="evidence").text == "users are people"
    assert lm.complete(M, step="sql").text == "SELECT 1"
    assert lm.complete(M, step="sql").text == "SELECT 2"
    assert lm.complete(M, step="agent", max_tokens=9).text == "agent:1:9"
    with pytest.raises(ScriptExhaustedError, match="'sql'"):
        lm.complete(M, step="sql")


def test_unknown_step_names_the_step_and_what_is_scripted() -> None:
    lm = ScriptedLM({"sql": "SELECT 1"})
    with pytest.raises(ScriptExhaustedError, match=r"step 'mining'.*scripted: sql") as ei:
        lm.complete(M, step="mining")
    assert isinstance(ei.value, LLMError)


def test_ordered_list_and_default() -> None:
    lm = ScriptedLM(["a", "b"])
    assert [lm.complete(M).text, lm.complete(M, step="x").text] == ["a", "b"]
    with pytest.raises(ScriptExhaustedError, match="ran out"):
        lm.complete(M)
    lm2 = ScriptedLM({"sql": "S"}, default="D")
    assert lm2.complete(M, step="other").text == "D"


def test_callable_script_and_exceptions() -> None:
    lm = ScriptedLM(lambda msgs, step, params: msgs[-1]["content"].upper())
    assert lm.complete(M).text == "SCHEMA: USERS(ID)"
    boom = ScriptedLM({"sql": LLMError("endpoint down")})
    with pytest.raises(LLMError, match="endpoint down"):
        boom.complete(M, step="sql")


def test_records_calls_and_usage() -> None:
    meter = UsageMeter()
    lm = ScriptedLM({"sql": "SELECT id FROM users"}, meter=meter)
    with usage_scope("q") as q:
        lm.complete(M, step="sql", temperature=0)
    call = lm.calls[0]
    assert call.step == "sql" and call.messages == M and call.params == {"temperature": 0}
    assert "users(id)" in call.prompt
    assert lm.steps() == ["sql"] and lm.calls_for("sql") == [call]
    assert q.totals().calls == 1 and meter.totals().calls == 1
    assert meter.totals().prompt_tokens == 5 and meter.totals().estimated_calls == 1


def test_complete_many_on_scripted() -> None:
    lm = ScriptedLM(lambda msgs, step, params: msgs[0]["content"])
    out = lm.complete_many([[{"role": "user", "content": str(i)}] for i in range(5)], max_workers=3)
    assert [c.text for c in out] == ["0", "1", "2", "3", "4"]
