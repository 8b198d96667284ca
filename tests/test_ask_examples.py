"""``ask --examples FILE``: few-shot examples outside the eval harness, shown in the prompt; without the
file, the spatial example database's own derived examples (a plain database: the shipped examples the
default was measured with); either way a note says which."""
from __future__ import annotations

import json
from pathlib import Path


def test_examples_reach_the_prompt_and_a_missing_file_is_one_line(geo_ask, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"db_id": "ask_geo", "question": "How many rivers are there?",
                               "sql": "SELECT count(*) FROM rivers"}) + "\n")
    with geo_ask("SELECT name FROM rivers ORDER BY length_km DESC LIMIT 1", "ask_geo") as ask:
        with_examples = ask("Which river is the longest?", "--examples", str(log))
        first_run = len(ask.stub.requests)
        without = ask("Which river is the longest?")
        missing = ask("Which river is the longest?", "--examples", str(tmp_path / "nope.jsonl"))
    assert with_examples.returncode == 0, with_examples.stderr
    assert "Silver River" in with_examples.stdout and "zero-shot" not in with_examples.stderr
    prompt = json.dumps(ask.stub.requests[0]["json"]["messages"])
    assert "How many rivers are there?" in prompt and "SELECT count(*) FROM rivers" in prompt
    assert "1 example(s) from the examples given shown" in with_examples.stderr
    assert without.returncode == 0 and "written from ask_geo's own geometry tables shown" in without.stderr
    later = [json.dumps(r["json"]["messages"]) for r in ask.stub.requests[first_run:]]
    assert all("How many rivers are there?" not in prompt for prompt in later)
    assert all("Who directed Avatar?" not in prompt and "Within(cities.Location, provinces.Shape) = 1" in prompt
               for prompt in later)  # examples derived from the database's geometry tables
    assert missing.returncode == 1 and missing.stderr.strip() == \
        f"kgsql.ask: error: examples file not found: {tmp_path / 'nope.jsonl'}"
