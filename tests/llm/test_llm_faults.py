"""Faults from a real (stub) HTTP endpoint: each gives a clear error or a bounded retry,
and the API key never shows up in errors, logs or reprs."""
from __future__ import annotations

import logging
import time
import traceback

import pytest
from llm_stub import SECRET_KEY, Reply, StubServer, chat_body
from timing import scaled

from kgsql.errors import LLMError
from kgsql.llm import (
    LLMAuthError, LLMBadRequestError, LLMBadResponseError, LLMConnectionError, LLMEmptyResponseError,
    LLMModelNotFoundError, LLMRateLimitError, LLMServerError, LLMTimeoutError, OpenAIChatLM, RetryPolicy,
)

pytestmark = pytest.mark.timeout(30)

MSGS = [{"role": "user", "content": "How many users?"}]
FAST = RetryPolicy(max_retries=2, base_delay_s=0.001, max_delay_s=0.01, jitter=False)


def make_lm(base_url: str, **kw) -> OpenAIChatLM:
    kw.setdefault("retry", FAST)
    kw.setdefault("timeout_s", 5.0)
    kw.setdefault("cache", None)
    return OpenAIChatLM(model="stub-model", base_url=base_url, api_key=SECRET_KEY, **kw)


def assert_clean(err: BaseException, *needles: str) -> None:
    """One line, names the problem, and no key anywhere in message or traceback."""
    msg = str(err)
    assert "\n" not in msg, msg
    for n in needles:
        assert n.lower() in msg.lower(), f"{n!r} not in {msg!r}"
    full = "".join(traceback.format_exception(err))
    assert SECRET_KEY not in full
    assert SECRET_KEY not in repr(err.args)
    assert isinstance(err, LLMError)


def test_endpoint_down_fails_fast_with_clear_error(closed_port: int) -> None:
    lm = make_lm(f"http://127.0.0.1:{closed_port}/v1")
    t0 = time.monotonic()
    with pytest.raises(LLMConnectionError) as ei:
        lm.complete(MSGS)
    assert time.monotonic() - t0 < scaled(5)
    assert_clean(ei.value, "cannot connect", f"127.0.0.1:{closed_port}", "down")


def test_timeout_retries_then_gives_up(stub: StubServer) -> None:
    stub.always(Reply(body=chat_body(), delay_s=1.5))
    lm = make_lm(stub.base_url, timeout_s=0.2, retry=RetryPolicy(1, 0.001, 0.01, jitter=False))
    t0 = time.monotonic()
    with pytest.raises(LLMTimeoutError) as ei:
        lm.complete(MSGS)
    assert time.monotonic() - t0 < scaled(3)
    assert stub.hits == 2  # first try + 1 retry, no more
    assert_clean(ei.value, "timed out", "0.2s", "2 attempt")


def test_429_then_success_is_retried(stub: StubServer) -> None:
    stub.script(Reply(429, {"error": {"message": "slow down"}}), Reply(429, {"error": {"message": "slow down"}}))
    delays: list[float] = []
    lm = make_lm(stub.base_url, retry=RetryPolicy(3, 0.01, 1.0, jitter=False), sleep=delays.append)
    c = lm.complete(MSGS)
    assert c.text == "SELECT 1;"
    assert c.attempts == 3
    assert stub.hits == 3
    assert delays == [0.01, 0.02]  # exponential backoff


def test_429_forever_gives_clear_error_after_bounded_retries(stub: StubServer) -> None:
    stub.always(Reply(429, {"error": {"message": "Rate limit reached"}}))
    with pytest.raises(LLMRateLimitError) as ei:
        make_lm(stub.base_url).complete(MSGS)
    assert stub.hits == 3  # 1 + max_retries
    assert_clean(ei.value, "429", "rate-limited", "3 attempt")


def test_retry_after_header_is_honoured_but_capped(stub: StubServer) -> None:
    stub.script(Reply(429, {"error": {"message": "wait"}}, headers={"Retry-After": "120"}))
    delays: list[float] = []
    lm = make_lm(stub.base_url, retry=RetryPolicy(2, 0.001, 0.05, jitter=False), sleep=delays.append)
    assert lm.complete(MSGS).text == "SELECT 1;"
    assert delays == [0.05]


def test_500_retried_then_clear_error(stub: StubServer) -> None:
    stub.always(Reply(500, {"error": {"message": "internal boom"}}))
    with pytest.raises(LLMServerError) as ei:
        make_lm(stub.base_url).complete(MSGS)
    assert stub.hits == 3
    assert_clean(ei.value, "HTTP 500", "server error", "3 attempt")


def test_503_then_success(stub: StubServer) -> None:
    stub.script(Reply(503, {"error": {"message": "loading model"}}))
    c = make_lm(stub.base_url).complete(MSGS)
    assert c.attempts == 2 and stub.hits == 2


def test_dropped_connection_is_retried_then_reported(stub: StubServer) -> None:
    stub.always(Reply(drop=True))
    with pytest.raises(LLMConnectionError) as ei:
        make_lm(stub.base_url).complete(MSGS)
    assert stub.hits == 3
    assert_clean(ei.value, "connection", "3 attempt")


def test_malformed_json_body(stub: StubServer) -> None:
    stub.always(Reply(200, b'{"id": "x", "choices": [ {"mess'))
    with pytest.raises(LLMBadResponseError) as ei:
        make_lm(stub.base_url).complete(MSGS)
    assert stub.hits == 1  # not retried
    assert_clean(ei.value, "malformed")


def test_non_json_content_type(stub: StubServer) -> None:
    stub.always(Reply(200, "<html>proxy login</html>", content_type="text/html"))
    with pytest.raises(LLMBadResponseError) as ei:
        make_lm(stub.base_url).complete(MSGS)
    assert_clean(ei.value, "malformed")


def test_json_of_the_wrong_shape(stub: StubServer) -> None:
    stub.always(Reply(200, {"hello": "world"}))
    with pytest.raises(LLMBadResponseError):
        make_lm(stub.base_url).complete(MSGS)


@pytest.mark.parametrize("body", [chat_body(""), chat_body(None), chat_body("  \n"),
                                  {**chat_body(), "choices": []}])
def test_empty_content(stub: StubServer, body: dict) -> None:
    stub.always(Reply(200, body))
    with pytest.raises(LLMEmptyResponseError) as ei:
        make_lm(stub.base_url).complete(MSGS)
    assert_clean(ei.value, "empty completion", "stub-model")


def test_empty_content_at_length_limit_says_so(stub: StubServer) -> None:
    stub.always(Reply(200, chat_body("", finish_reason="length")))
    with pytest.raises(LLMEmptyResponseError, match="max_tokens"):
        make_lm(stub.base_url).complete(MSGS)


def test_401_auth_failure_not_retried_and_key_redacted(stub: StubServer) -> None:
    # Real endpoints echo (part of) the key; we must not pass it on.
    stub.always(Reply(401, {"error": {"message": f"Incorrect API key provided: {SECRET_KEY}",
                                      "type": "invalid_request_error", "code": "invalid_api_key"}}))
    with pytest.raises(LLMAuthError) as ei:
        make_lm(stub.base_url).complete(MSGS)
    assert stub.hits == 1
    assert_clean(ei.value, "HTTP 401", "credentials", "KGSQL_LLM_API_KEY")
    assert "***" in str(ei.value)


def test_403_is_an_auth_failure(stub: StubServer) -> None:
    stub.always(Reply(403, {"error": {"message": "forbidden"}}))
    with pytest.raises(LLMAuthError, match="HTTP 403"):
        make_lm(stub.base_url).complete(MSGS)


def test_404_unknown_model(stub: StubServer) -> None:
    stub.always(Reply(404, {"error": {"message": "The model `stub-model` does not exist"}}))
    with pytest.raises(LLMModelNotFoundError) as ei:
        make_lm(stub.base_url).complete(MSGS)
    assert stub.hits == 1
    assert_clean(ei.value, "stub-model", "404")


def test_400_bad_request_is_not_retried(stub: StubServer) -> None:
    stub.always(Reply(400, {"error": {"message": "context length exceeded"}}))
    with pytest.raises(LLMBadRequestError) as ei:
        make_lm(stub.base_url).complete(MSGS)
    assert stub.hits == 1
    assert_clean(ei.value, "HTTP 400", "context length")


def test_key_never_in_logs_or_repr(stub: StubServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)  # includes the openai/httpx loggers
    stub.script(Reply(500, {"error": {"message": f"echo {SECRET_KEY}"}}))
    lm = make_lm(stub.base_url)
    lm.complete(MSGS)
    assert SECRET_KEY not in caplog.text
    assert "retry 1/2" in caplog.text  # the retry itself was logged
    assert SECRET_KEY not in repr(lm) and SECRET_KEY not in str(lm)
    assert SECRET_KEY not in repr(vars(lm))
    # ...but it was sent to the endpoint, as it must be
    assert stub.requests[0]["headers"]["authorization"] == f"Bearer {SECRET_KEY}"


def test_credentials_in_base_url_are_not_echoed(closed_port: int) -> None:
    lm = make_lm(f"http://user:{SECRET_KEY}@127.0.0.1:{closed_port}/v1")
    with pytest.raises(LLMConnectionError) as ei:
        lm.complete(MSGS)
    assert_clean(ei.value)
    assert SECRET_KEY not in repr(lm)
