"""End to end with the real local 0.5B model over HTTP (llama.cpp's OpenAI server).

Answers questions on the shipped example SpatiaLite database through the
real pipeline (graph, retrieval, prompts, guard, tips) and the ``ask`` CLI,
and checks the final SQL executes. Correctness of a 0.5B model is not
asserted. Skipped, with the pull command as the reason, when the model is
not pulled.
"""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

from kgsql.methods import build

SMALL = "qwen2.5-coder-0.5b"


def _model_ready() -> str | None:
    from kgsql.llm.models import get_model

    if importlib.util.find_spec("xllamacpp") is None:
        return "xllamacpp not installed; run: pip install 'kgsql[local-llm]'"
    if not get_model(SMALL).is_pulled():
        return f"local model {SMALL} not pulled; run: python -m kgsql.llm pull {SMALL}"
    return None


pytestmark = [
    pytest.mark.llm,
    pytest.mark.slow,
    pytest.mark.skipif(_model_ready() is not None, reason=str(_model_ready())),
    pytest.mark.timeout(1200),
]

QUESTIONS = [
    "Which river is the longest?",
    "How many cities are there in each province?",
    "List the names of the cities founded before 1200.",
]


@pytest.fixture(scope="module")
def local_server(tmp_path_factory):
    from kgsql.llm import LocalModelServer

    with LocalModelServer(SMALL, n_ctx=8192) as server:
        yield server


@pytest.fixture(scope="module")
def geo(schema_graph, example_db):
    schema_graph.ingest(example_db, name="geo")
    return schema_graph


def test_three_questions_through_the_pipeline(geo, local_server, monkeypatch, tmp_path):
    monkeypatch.setenv("KGSQL_CACHE_DIR", str(tmp_path))  # a fresh response cache: real calls
    lm = local_server.lm()
    t2s = build("kgsql", geo, lm)  # the default method, zero-shot (no pool)
    for question in QUESTIONS:
        answer = t2s.ask(question, db="geo")
        assert answer.sql.upper().startswith(("SELECT", "WITH")), answer
        assert answer.error is None, (question, answer.sql, answer.error)
        assert answer.tokens["prompt"] > 100 and answer.prompts[0]["step"] == "sql"


def test_the_first_pipeline_still_answers(geo, local_server, monkeypatch, tmp_path):
    monkeypatch.setenv("KGSQL_CACHE_DIR", str(tmp_path))
    t2s = build("kgsql-classic", geo, local_server.lm(), pool=None, evidence=False, max_rounds=3)
    answer = t2s.ask(QUESTIONS[0], db="geo")
    assert answer.error is None and answer.prompts[-1]["step"] == "sql", (answer.sql, answer.error)


def test_ask_cli_over_http(geo, local_server, cli_env, tmp_path):
    env = {**cli_env, "KGSQL_LLM_BASE_URL": local_server.base_url, "KGSQL_LLM_MODEL": local_server.model,
           "KGSQL_CACHE_DIR": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-m", "kgsql.ask", "--db", "geo", "--json", "--no-hints", "--set", "samples=2",
         "Which river is the longest?"],
        capture_output=True, text=True, env=env, timeout=900,
    )
    assert proc.returncode in (0, 2), proc.stderr
    data = json.loads(proc.stdout)
    for key in ("sql", "rows", "error", "tokens", "rounds"):
        assert key in data
    assert data["sql"].upper().startswith("SELECT") and data["rounds"] >= 1
