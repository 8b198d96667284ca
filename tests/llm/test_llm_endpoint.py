"""A malformed or down endpoint fails at once, in one line, before any retry or request."""
from __future__ import annotations

import time

import pytest
from llm_stub import SECRET_KEY, StubServer

from kgsql.llm import LLMConfigError, LLMConnectionError, OpenAIChatLM
from kgsql.llm.config import strip_userinfo, validate_base_url
from kgsql.llm.openai_lm import check_endpoint
from timing import scaled

pytestmark = pytest.mark.timeout(30)

MALFORMED = ["htp:/x", "http//x", "http://", "http:///v1", "http://:8080/v1", "localhost:8080/v1",
             "ftp://host/v1", "http://host:99999/v1"]


@pytest.mark.parametrize("url", MALFORMED)
def test_malformed_base_url_fails_when_the_client_is_built(url: str, monkeypatch) -> None:
    with pytest.raises(LLMConfigError) as info:
        OpenAIChatLM("m", base_url=url, api_key=SECRET_KEY, cache=None)
    text = str(info.value)
    assert "not a valid endpoint URL" in text and "\n" not in text and SECRET_KEY not in text
    monkeypatch.setenv("KGSQL_LLM_BASE_URL", url)
    with pytest.raises(LLMConfigError, match="KGSQL_LLM_BASE_URL"):
        OpenAIChatLM("m", cache=None)


def test_malformed_url_is_not_retried(monkeypatch) -> None:
    """Before: 5 attempts with backoff (17.7 s) for a URL that can never answer."""
    monkeypatch.setenv("KGSQL_LLM_BASE_URL", "htp:/x")
    t0 = time.monotonic()
    with pytest.raises(LLMConfigError):
        OpenAIChatLM("m", cache=None).complete([{"role": "user", "content": "hi"}])
    assert time.monotonic() - t0 < scaled(2)


def test_valid_urls_pass_and_credentials_never_show() -> None:
    for url in ("http://127.0.0.1:8080/v1", "https://api.openai.com/v1", "http://[::1]:8080/v1", " http://h/v1 "):
        assert validate_base_url(url) == url.strip()
    assert strip_userinfo("http://user:pw-123456@host:81/v1") == "http://host:81/v1"
    with pytest.raises(LLMConfigError) as info:
        validate_base_url("htp://user:pw-123456@host/v1")
    assert "pw-123456" not in str(info.value)


def test_check_endpoint_finds_a_down_endpoint_in_a_second(closed_port: int, monkeypatch) -> None:
    monkeypatch.setenv("KGSQL_LLM_BASE_URL", f"http://127.0.0.1:{closed_port}/v1")
    t0 = time.monotonic()
    with pytest.raises(LLMConnectionError) as info:
        check_endpoint()
    assert time.monotonic() - t0 < scaled(2.5)
    assert f"127.0.0.1:{closed_port}" in str(info.value) and "endpoint down" in str(info.value)


def test_check_endpoint_passes_a_listening_endpoint_without_a_request(stub: StubServer) -> None:
    check_endpoint(stub.base_url)
    assert stub.hits == 0


def test_check_endpoint_without_configuration_does_nothing(monkeypatch) -> None:
    monkeypatch.delenv("KGSQL_LLM_BASE_URL", raising=False)
    check_endpoint()  # the local model is used then; nothing to check


def test_check_endpoint_refuses_a_malformed_url(monkeypatch) -> None:
    monkeypatch.setenv("KGSQL_LLM_BASE_URL", "http//x")
    with pytest.raises(LLMConfigError, match="KGSQL_LLM_BASE_URL 'http//x'"):
        check_endpoint()


def test_check_endpoint_leaves_a_proxied_endpoint_to_the_proxy(closed_port: int, monkeypatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{closed_port}")
    monkeypatch.setenv("NO_PROXY", "")
    check_endpoint("http://some-remote-host.invalid/v1")  # the proxy decides, not a direct connect


def test_a_key_in_the_url_query_never_shows() -> None:
    from kgsql.llm.config import strip_userinfo

    shown = strip_userinfo("https://user:pw@example.test/v1?key=SECRET123&x=1")
    assert "SECRET123" not in shown and "pw" not in shown and "example.test/v1" in shown and "x=1" in shown
