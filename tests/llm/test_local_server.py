"""Integration: the in-process llama.cpp server with the 0.5B model, over real HTTP.

Skipped (with the pull command in the reason) when the model is not pulled.
"""
from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time

import pytest

from kgsql.llm import (
    LocalModelServer, ModelNotPulledError, OpenAIChatLM, UsageMeter, default_lm, stop_local_servers,
    usage_scope,
)
from kgsql.llm.cli import main as cli_main
from kgsql.llm.models import get_model
from timing import scaled

SMALL = "qwen2.5-coder-0.5b"
pulled = get_model(SMALL).is_pulled()
has_xllamacpp = importlib.util.find_spec("xllamacpp") is not None
needs_model = pytest.mark.skipif(
    not (pulled and has_xllamacpp),
    reason=(f"local model {SMALL} not pulled; run: python -m kgsql.llm pull {SMALL}" if not pulled
            else "xllamacpp not installed; run: pip install 'kgsql[local-llm]'"),
)
pytestmark = [pytest.mark.timeout(180)]

QUESTION = [
    {"role": "system", "content": "You write SQLite SQL. Answer with SQL only."},
    {"role": "user", "content": "Table users(id, name, age). How many users are older than 30?"},
]


@pytest.fixture(scope="module")
def server():
    if not (pulled and has_xllamacpp):
        pytest.skip(f"needs {SMALL} pulled and xllamacpp installed")
    with LocalModelServer(SMALL, n_ctx=4096) as srv:
        yield srv


@pytest.mark.llm
@needs_model
def test_real_chat_completion_over_http_records_usage(server: LocalModelServer) -> None:
    assert server.base_url.startswith("http://127.0.0.1:") and server.base_url.endswith("/v1")
    meter = UsageMeter()
    lm = OpenAIChatLM(model=server.model, base_url=server.base_url, cache=None, meter=meter, timeout_s=120)
    c = lm.complete(QUESTION, step="sql", max_tokens=48)
    assert "select" in c.text.lower()
    assert c.model == SMALL and c.step == "sql" and not c.usage_estimated
    assert c.prompt_tokens > 20 and 0 < c.completion_tokens <= 48 and c.latency_s > 0
    # same prefix again: llama.cpp's prompt cache reports reused tokens
    c2 = lm.complete(QUESTION, step="sql", max_tokens=48)
    assert c2.text == c.text  # temperature 0
    assert c2.cached_tokens > 0
    t = meter.totals()
    assert t.calls == 2 and t.prompt_tokens == c.prompt_tokens + c2.prompt_tokens


@pytest.mark.llm
@needs_model
def test_response_cache_skips_the_model_entirely(server: LocalModelServer, tmp_path) -> None:
    from kgsql.llm import ResponseCache

    lm = server.lm(cache=ResponseCache(tmp_path / "c.sqlite"))
    a = lm.complete(QUESTION, max_tokens=16)
    b = lm.complete(QUESTION, max_tokens=16)
    assert not a.from_cache and b.from_cache and a.text == b.text


@pytest.mark.llm
@needs_model
def test_default_lm_starts_and_reuses_the_local_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KGSQL_LOCAL_MODEL", SMALL)
    try:
        lm1, lm2 = default_lm(cache=None), default_lm(cache=None)
        assert lm1.base_url == lm2.base_url  # one server per process
        with usage_scope() as q:
            assert lm1.complete(QUESTION, max_tokens=8).text
        assert q.totals().calls == 1
    finally:
        stop_local_servers()


@pytest.mark.llm
@needs_model
def test_serve_command_answers_and_stops_on_sigterm() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "kgsql.llm", "serve", "--model", SMALL, "--ctx", "2048"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        line = proc.stdout.readline()  # "serving <model> at <url> ..."
        assert line.startswith(f"serving {SMALL} at http://127.0.0.1:"), line + proc.stderr.read()
        url = line.split(" at ")[1].split()[0]
        lm = OpenAIChatLM(model=SMALL, base_url=url, cache=None)
        assert lm.complete(QUESTION, max_tokens=8).text
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_unpulled_model_names_the_pull_command(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KGSQL_MODELS_DIR", str(tmp_path / "empty"))
    with pytest.raises(ModelNotPulledError, match="python -m kgsql.llm pull qwen2.5-coder-1.5b"):
        default_lm()
    with pytest.raises(ModelNotPulledError, match="neither a known local model"):
        LocalModelServer("no-such-model")


def test_default_lm_uses_configured_endpoint_without_starting_a_server(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("KGSQL_MODELS_DIR", str(tmp_path / "empty"))  # would fail if it tried local
    monkeypatch.setenv("KGSQL_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("KGSQL_LLM_MODEL", "remote-model")
    lm = default_lm(cache=None)
    assert lm.base_url == "http://127.0.0.1:9/v1" and lm.model == "remote-model"


def test_cli_pull_of_a_present_model_is_a_no_op(capsys) -> None:
    if not pulled:
        pytest.skip(f"local model {SMALL} not pulled; run: python -m kgsql.llm pull {SMALL}")
    t0 = time.monotonic()
    assert cli_main(["pull", SMALL]) == 0
    assert time.monotonic() - t0 < scaled(5)  # sha verified once at pull time, not again
    assert capsys.readouterr().out.strip() == str(get_model(SMALL).path)


def test_cli_reports_errors_in_one_line(capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("KGSQL_MODELS_DIR", str(tmp_path / "empty"))
    assert cli_main(["serve", "--model", "qwen2.5-coder-1.5b"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: local model qwen2.5-coder-1.5b is not pulled") and "\n" not in err
    assert os.environ.get("KGSQL_LLM_BASE_URL") is None
