"""``kgsql ask --conversation NAME``: two invocations form one conversation (the second's prompt carries the
first question and its SQL: the default context=history); ``--new-conversation`` starts over; bad use is one line. Through a running ``kgsql serve``:
tests/serve/test_conversations.py."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conversation_stub import FIRST, FOLLOW, SQL, answer, ask, rewrites, sql_prompts
from llm_stub import StubServer


def test_two_invocations_form_one_conversation(stub_env, cli_ingest, example_db: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    stub = StubServer().always(answer)
    env = stub_env(stub)
    try:
        cli_ingest(env, example_db, "conv_cli")
        first = ask(env, "conv_cli", FIRST, "--conversation", "trip")
        second = ask(env, "conv_cli", FOLLOW, "--conversation", "trip", "--json")
        again = ask(env, "conv_cli", FIRST, "--conversation", "trip", "--new-conversation")
        other_db = ask(env, "geo_elsewhere", FIRST, "--conversation", "trip")
        bad_name = ask(env, "conv_cli", FIRST, "--conversation", "../up")
        lone_reset = ask(env, "conv_cli", FIRST, "--new-conversation")
    finally:
        stub.close()
    assert first.returncode == 0, first.stderr
    assert "Earlier questions" not in first.stdout and "Understood as" not in first.stdout
    assert second.returncode == 0, second.stderr
    data = json.loads(second.stdout)
    assert data["history"] == [FIRST] and data["standalone"] == "" and rewrites(stub) == []
    assert f"Question 1: {FIRST}\nSQL 1: {SQL}" in [p for p in sql_prompts(stub) if FOLLOW in p][0]
    assert again.returncode == 0 and "Earlier questions" not in again.stdout
    saved = json.loads((tmp_path / "cache" / "conversations" / "trip.json").read_text())
    assert [t["question"] for t in saved["turns"]] == [FIRST] and saved["db"] == "conv_cli"
    assert saved["turns"][0]["rows"] == 5  # the stub's SQL: the five cities over 100000 people
    listed = subprocess.run([sys.executable, "-m", "kgsql", "ask", "--conversations"], capture_output=True,
                            text=True, env=env, timeout=120)
    assert listed.returncode == 0 and listed.stdout == f"trip\tconv_cli\t1 turn(s)\tlast: {FIRST}\n"
    assert other_db.returncode == 1 and other_db.stderr.strip() == (
        "kgsql.ask: error: conversation trip is about database 'conv_cli', not 'geo_elsewhere'; "
        "--new-conversation starts it over on 'geo_elsewhere'")
    assert bad_name.returncode == 1 and "a name is 1-64 letters" in bad_name.stderr
    assert lone_reset.returncode == 2 and "--new-conversation needs --conversation NAME" in lone_reset.stderr
    for run in (other_db, bad_name, lone_reset):
        assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr
