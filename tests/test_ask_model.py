"""``ask --model NAME``: the model asked is the one named (the endpoint's model name when
``KGSQL_LLM_BASE_URL`` is set, as ``eval run --model``), else ``KGSQL_LLM_MODEL``."""
from __future__ import annotations


def test_the_named_model_is_the_one_asked(geo_ask) -> None:  # type: ignore[no-untyped-def]
    with geo_ask("SELECT name FROM rivers ORDER BY length_km DESC LIMIT 1", "ask_geo_model") as ask:
        named = ask("Which river is the longest?", "--model", "other-coder")
        asked_named = [r["json"]["model"] for r in ask.stub.requests]
        plain = ask("Which river is the longest?")
        asked_plain = [r["json"]["model"] for r in ask.stub.requests[len(asked_named):]]
    assert named.returncode == 0 and plain.returncode == 0, named.stderr + plain.stderr
    assert "Silver River" in named.stdout
    assert asked_named and set(asked_named) == {"other-coder"}
    assert asked_plain and "other-coder" not in asked_plain and set(asked_plain) == {ask.env["KGSQL_LLM_MODEL"]}
