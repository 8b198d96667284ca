"""``ask --examples FILE``: few-shot examples outside the eval harness, shown in the prompt."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "llm"))
from llm_stub import Reply, StubServer, chat_body  # noqa: E402


def test_examples_reach_the_prompt_and_a_missing_file_is_one_line(cli_env, example_db: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"db_id": "ask_geo", "question": "How many rivers are there?",
                               "sql": "SELECT count(*) FROM rivers"}) + "\n")
    stub = StubServer().always(Reply(body=chat_body("SELECT name FROM rivers ORDER BY length_km DESC LIMIT 1")))
    env = dict(cli_env, KGSQL_LLM_BASE_URL=stub.base_url, KGSQL_LLM_MODEL="stub-model", KGSQL_LLM_CACHE="off",
               KGSQL_CACHE_DIR=str(tmp_path / "cache"))
    try:
        ingest = subprocess.run([sys.executable, "-m", "kgsql.ingest", str(example_db), "--name", "ask_geo"],
                                capture_output=True, text=True, env=env, timeout=300)
        assert ingest.returncode == 0, ingest.stderr
        ask = [sys.executable, "-m", "kgsql.ask", "Which river is the longest?", "--db", "ask_geo"]
        with_examples = subprocess.run([*ask, "--examples", str(log)], capture_output=True, text=True, env=env,
                                       timeout=300)
        first_run = len(stub.requests)
        without = subprocess.run(ask, capture_output=True, text=True, env=env, timeout=300)
        missing = subprocess.run([*ask, "--examples", str(tmp_path / "nope.jsonl")], capture_output=True,
                                 text=True, env=env, timeout=300)
    finally:
        stub.close()
    assert with_examples.returncode == 0, with_examples.stderr
    assert "Silver River" in with_examples.stdout and "zero-shot" not in with_examples.stderr
    prompt = json.dumps(stub.requests[0]["json"]["messages"])
    assert "How many rivers are there?" in prompt and "SELECT count(*) FROM rivers" in prompt
    assert without.returncode == 0 and "no examples given (--examples FILE)" in without.stderr
    assert all("How many rivers are there?" not in json.dumps(r["json"]["messages"])
               for r in stub.requests[first_run:])
    assert missing.returncode == 1 and missing.stderr.strip() == \
        f"kgsql.ask: error: examples file not found: {tmp_path / 'nope.jsonl'}"
