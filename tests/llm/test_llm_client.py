"""OpenAIChatLM against a stub endpoint: config from env, usage, cache, concurrency."""
from __future__ import annotations

import threading

import pytest
from llm_stub import SECRET_KEY, Reply, StubServer, chat_body

from kgsql.errors import InputError
from kgsql.llm import (
    LLMBadRequestError, LLMConfigError, OpenAIChatLM, ResponseCache, RetryPolicy, UsageMeter, complete_many,
    usage_scope,
)
from kgsql.llm.config import response_cache_path
from timing import scaled

pytestmark = pytest.mark.timeout(30)

MSGS = [{"role": "system", "content": "You write SQL."}, {"role": "user", "content": "How many users?"}]


def echo(req: dict) -> Reply:
    """Answer with the last user message, so order can be checked."""
    return Reply(body=chat_body("echo:" + req["json"]["messages"][-1]["content"]))


# -- configuration ---------------------------------------------------------------------------
def test_config_from_env(stub: StubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KGSQL_LLM_BASE_URL", stub.base_url)
    monkeypatch.setenv("KGSQL_LLM_MODEL", "env-model")
    monkeypatch.setenv("KGSQL_LLM_API_KEY", SECRET_KEY)
    lm = OpenAIChatLM(cache=None)
    assert lm.model == "env-model" and lm.base_url == stub.base_url
    lm.complete(MSGS)
    req = stub.requests[0]
    assert req["path"] == "/v1/chat/completions"
    assert req["headers"]["authorization"] == f"Bearer {SECRET_KEY}"
    assert req["json"]["model"] == "env-model"
    assert req["json"]["temperature"] == 0  # deterministic by default
    assert req["json"]["messages"] == MSGS


def test_openai_api_key_is_the_fallback(stub: StubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fallback-key-1234")
    OpenAIChatLM("m", base_url=stub.base_url, cache=None).complete(MSGS)
    assert stub.requests[0]["headers"]["authorization"] == "Bearer sk-fallback-key-1234"


def test_args_beat_env(stub: StubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KGSQL_LLM_MODEL", "env-model")
    monkeypatch.setenv("KGSQL_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    lm = OpenAIChatLM("arg-model", base_url=stub.base_url, cache=None)
    lm.complete(MSGS)
    assert stub.requests[0]["json"]["model"] == "arg-model"


def test_local_endpoint_needs_no_key(stub: StubServer) -> None:
    OpenAIChatLM("m", base_url=stub.base_url, cache=None).complete(MSGS)
    assert stub.hits == 1


def test_missing_model_and_missing_key_are_config_errors() -> None:
    with pytest.raises(LLMConfigError, match="KGSQL_LLM_MODEL"):
        OpenAIChatLM(base_url="http://127.0.0.1:9/v1")
    with pytest.raises(LLMConfigError, match="OPENAI_API_KEY"):
        OpenAIChatLM("gpt-4o-mini")  # hosted OpenAI without any key


def test_bad_messages_are_input_errors(stub: StubServer) -> None:
    lm = OpenAIChatLM("m", base_url=stub.base_url, cache=None)
    for bad in ([], "hi", [{"content": "no role"}]):
        with pytest.raises(InputError):
            lm.complete(bad)  # type: ignore[arg-type]
    assert stub.hits == 0


def test_params_pass_through_and_override_temperature(stub: StubServer) -> None:
    lm = OpenAIChatLM("m", base_url=stub.base_url, cache=None, default_params={"max_tokens": 50})
    lm.complete(MSGS, temperature=0.7, stop=[";"], extra_body={"cache_prompt": False})
    body = stub.requests[0]["json"]
    assert body["temperature"] == 0.7 and body["max_tokens"] == 50 and body["stop"] == [";"]
    assert body["cache_prompt"] is False


# -- usage -----------------------------------------------------------------------------------
def test_usage_recorded_from_response(stub: StubServer) -> None:
    meter = UsageMeter("lm")
    lm = OpenAIChatLM("m", base_url=stub.base_url, cache=None, meter=meter)
    c = lm.complete(MSGS, step="sql")
    assert (c.prompt_tokens, c.completion_tokens, c.cached_tokens) == (12, 3, 8)
    assert not c.usage_estimated and c.latency_s > 0 and c.model == "stub-model" and c.step == "sql"
    t = meter.totals()
    assert (t.calls, t.prompt_tokens, t.completion_tokens, t.cached_tokens) == (1, 12, 3, 8)
    assert set(meter.by_step()) == {"sql"}


def test_usage_estimated_when_absent(stub: StubServer) -> None:
    stub.always(Reply(body=chat_body("x" * 40, usage=None)))
    c = OpenAIChatLM("m", base_url=stub.base_url, cache=None).complete(
        [{"role": "user", "content": "y" * 400}])
    assert c.usage_estimated
    assert (c.prompt_tokens, c.completion_tokens, c.cached_tokens) == (100, 10, 0)


def test_usage_scopes_nest_per_run_and_per_question(stub: StubServer) -> None:
    lm = OpenAIChatLM("m", base_url=stub.base_url, cache=None)
    with usage_scope("run") as run:
        with usage_scope("q1") as q1:
            lm.complete(MSGS, step="evidence")
            lm.complete(MSGS, step="sql")
        with usage_scope("q2") as q2:
            lm.complete(MSGS, step="sql")
    lm.complete(MSGS)  # outside every scope
    assert q1.totals().calls == 2 and q2.totals().calls == 1 and run.totals().calls == 3
    assert run.totals().prompt_tokens == 36
    assert {k: v.calls for k, v in run.by_step().items()} == {"evidence": 1, "sql": 2}


# -- cache -----------------------------------------------------------------------------------
def test_second_identical_call_is_served_from_cache(stub: StubServer, tmp_path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    lm = OpenAIChatLM("m", base_url=stub.base_url, api_key=SECRET_KEY, cache=cache)
    first = lm.complete(MSGS, step="sql")
    assert stub.hits == 1 and not first.from_cache
    with usage_scope() as meter:
        second = lm.complete(MSGS, step="sql")
    assert stub.hits == 1, "the cached call must not reach the server"
    assert second.from_cache and second.text == first.text
    assert (second.prompt_tokens, second.completion_tokens) == (12, 3)
    t = meter.totals()
    assert t.cache_hits == 1 and t.paid_prompt_tokens == 0

    # any parameter change is a different request
    lm.complete(MSGS, step="sql", max_tokens=5)
    assert stub.hits == 2
    # the step name is bookkeeping, not part of the request
    lm.complete(MSGS, step="other")
    assert stub.hits == 2
    # bypass on demand
    lm.complete(MSGS, use_cache=False)
    assert stub.hits == 3


def test_trace_records_which_calls_the_cache_served(stub: StubServer, tmp_path) -> None:
    """Eval records count cache hits: they take no model time, so run times would otherwise mislead."""
    from kgsql.llm.trace import Trace

    lm = OpenAIChatLM("m", base_url=stub.base_url, cache=ResponseCache(tmp_path / "c.sqlite"))
    trace = Trace()
    trace.call(lm, "sql", MSGS)
    trace.call(lm, "sql", MSGS)
    assert [s["from_cache"] for s in trace.to_list()] == [False, True]
    assert trace.steps[1].latency_s < scaled(0.5)  # a lookup, not a generation


def test_cache_persists_across_processes_worth_of_objects(stub: StubServer, tmp_path) -> None:
    path = tmp_path / "c.sqlite"
    OpenAIChatLM("m", base_url=stub.base_url, cache=ResponseCache(path)).complete(MSGS)
    # a new client on a new port-less cache object (as in a re-run) still hits the file
    c = OpenAIChatLM("m", base_url=stub.base_url, cache=ResponseCache(path)).complete(MSGS)
    assert c.from_cache and stub.hits == 1
    assert len(ResponseCache(path)) == 1


def test_cache_key_depends_on_model(stub: StubServer, tmp_path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    OpenAIChatLM("a", base_url=stub.base_url, cache=cache).complete(MSGS)
    OpenAIChatLM("b", base_url=stub.base_url, cache=cache).complete(MSGS)
    assert stub.hits == 2


def test_default_cache_lives_under_kgsql_cache_dir(stub: StubServer, tmp_path) -> None:
    lm = OpenAIChatLM("m", base_url=stub.base_url, api_key=SECRET_KEY)  # cache=True: default file
    lm.complete(MSGS)
    lm.complete(MSGS)
    assert stub.hits == 1
    path = response_cache_path()
    assert path.is_file() and str(path).startswith(str(tmp_path))
    for f in path.parent.iterdir():  # db, -wal, -shm
        assert SECRET_KEY.encode() not in f.read_bytes()


def test_cache_can_be_disabled_by_env(stub: StubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KGSQL_LLM_CACHE", "0")
    lm = OpenAIChatLM("m", base_url=stub.base_url)
    lm.complete(MSGS)
    lm.complete(MSGS)
    assert lm.cache is None and stub.hits == 2


def test_errors_are_not_cached(stub: StubServer, tmp_path) -> None:
    stub.script(Reply(400, {"error": {"message": "nope"}}))
    lm = OpenAIChatLM("m", base_url=stub.base_url, cache=ResponseCache(tmp_path / "c.sqlite"),
                      retry=RetryPolicy(0))
    with pytest.raises(LLMBadRequestError):
        lm.complete(MSGS)
    assert lm.complete(MSGS).text == "SELECT 1;"
    assert stub.hits == 2


# -- concurrency -----------------------------------------------------------------------------
def batch(n: int) -> list[list[dict]]:
    return [[{"role": "user", "content": f"q{i}"}] for i in range(n)]


def test_complete_many_bounds_concurrency_and_keeps_order(stub: StubServer) -> None:
    stub.always(lambda req: Reply(body=echo(req).body, delay_s=0.15))
    lm = OpenAIChatLM("m", base_url=stub.base_url, cache=None)
    with usage_scope("run") as run:  # scopes follow work onto pool threads
        out = complete_many(lm, batch(8), max_workers=3, step="sql")
    assert [c.text for c in out] == [f"echo:q{i}" for i in range(8)]
    assert 1 < stub.max_in_flight <= 3
    assert run.totals().calls == 8


def test_lm_semaphore_bounds_concurrency_across_callers(stub: StubServer) -> None:
    stub.always(lambda req: Reply(body=echo(req).body, delay_s=0.1))
    lm = OpenAIChatLM("m", base_url=stub.base_url, cache=None, max_concurrency=2)
    threads = [threading.Thread(target=lm.complete_many, args=(batch(4),), kwargs={"max_workers": 4})
               for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert stub.hits == 8 and stub.max_in_flight <= 2


def test_complete_many_errors_raise_or_are_returned(stub: StubServer) -> None:
    stub.always(lambda req: Reply(400, {"error": {"message": "bad"}})
                if req["json"]["messages"][0]["content"] == "q1" else echo(req))
    lm = OpenAIChatLM("m", base_url=stub.base_url, cache=None)
    out = lm.complete_many(batch(3), max_workers=2, return_exceptions=True)
    assert out[0].text == "echo:q0" and isinstance(out[1], Exception) and out[2].text == "echo:q2"
    with pytest.raises(Exception, match="HTTP 400"):
        lm.complete_many(batch(3), max_workers=2)
