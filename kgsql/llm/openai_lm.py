"""``OpenAIChatLM``: any OpenAI-compatible chat endpoint through the official client.

OpenAI, DeepSeek, vLLM, Ollama, llama.cpp and kgsql's own local server all go
through this one code path. The openai client's own retries are turned off so
retry count, backoff and error messages are ours: bounded, tunable, one line,
and free of API keys.
"""
from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import openai

from kgsql.llm.base import LM, Completion, Messages, ToolCall, estimate_tokens, messages_text, validate_messages
from kgsql.llm.cache import ResponseCache, cache_key
from kgsql.llm.config import (
    ENV_API_KEY, ENV_BASE_URL, ENV_MODEL, ENV_OPENAI_API_KEY, Secret, one_line, redact,
    response_cache_enabled, strip_userinfo, validate_base_url,
)
from kgsql.llm.errors import (
    LLMAuthError, LLMBadRequestError, LLMBadResponseError, LLMConfigError, LLMConnectionError,
    LLMEmptyResponseError, LLMModelNotFoundError, LLMRateLimitError, LLMServerError, LLMTimeoutError,
)
from kgsql.llm.retry import RetryPolicy
from kgsql.llm.usage import UsageMeter, record_usage
from kgsql.errors import LLMError

log = logging.getLogger("kgsql.llm")

OPENAI_DEFAULT_URL = "https://api.openai.com/v1"
NO_KEY = "sk-no-key-required"  # local servers ignore the key, but the client insists on one
_CLIENT_ONLY_PARAMS = {"use_cache"}

CacheArg = ResponseCache | bool | None


def check_endpoint(base_url: str | None = None, *, timeout_s: float = 2.0) -> None:
    """Fail at once, in one line, when the configured endpoint is malformed or not listening.

    ``base_url`` defaults to ``KGSQL_LLM_BASE_URL``; with neither set there is
    nothing to check (the local model is used). The check is a TCP connect to
    the URL's host and port, bounded by ``timeout_s``, so a CLI finds a down
    endpoint before loading encoders or opening the graph. Skipped when a proxy
    from the environment would carry the request (the proxy decides then).
    """
    raw = base_url if base_url is not None else os.environ.get(ENV_BASE_URL, "")
    if not raw.strip():
        return
    url = validate_base_url(raw, source=ENV_BASE_URL if base_url is None else "LLM base URL")
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    proxies = urllib.request.getproxies()
    if (proxies.get(parts.scheme.lower()) or proxies.get("all")) and not urllib.request.proxy_bypass(host):
        return
    port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except socket.timeout:
        reason = f"no answer within {timeout_s:g}s"
    except socket.gaierror:
        reason = f"unknown host '{host}'"
    except OSError as exc:
        reason = one_line(exc.strerror or str(exc) or type(exc).__name__, 120).lower()
    else:
        return
    where = strip_userinfo(url.rstrip("/"))
    raise LLMConnectionError(f"cannot connect to LLM endpoint {where}: endpoint down or wrong URL ({reason})")


def _retry_after(exc: openai.APIStatusError) -> float | None:
    try:
        value = exc.response.headers.get("retry-after")
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


class _Retryable(Exception):
    """Internal: an attempt failed in a way worth retrying."""

    def __init__(self, kind: str, detail: str, retry_after: float | None = None) -> None:
        super().__init__(kind)
        self.kind, self.detail, self.retry_after = kind, detail, retry_after


class OpenAIChatLM(LM):
    """Chat completions over HTTP with retries, timeouts, caching and usage metering.

    Configuration falls back to env vars: ``KGSQL_LLM_BASE_URL``,
    ``KGSQL_LLM_MODEL``, ``KGSQL_LLM_API_KEY`` (then ``OPENAI_API_KEY``).
    ``cache=True`` uses the shared SQLite cache (unless ``KGSQL_LLM_CACHE=0``),
    ``None``/``False`` disables it, or pass a ``ResponseCache``.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float | None = 0.0,
        timeout_s: float = 120.0,
        retry: RetryPolicy | None = None,
        cache: CacheArg = True,
        meter: UsageMeter | None = None,
        max_concurrency: int = 8,
        default_params: Mapping[str, Any] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.model = model or os.environ.get(ENV_MODEL, "")
        if not self.model:
            raise LLMConfigError(f"no model name: pass model= or set {ENV_MODEL}")
        self.base_url = (base_url or os.environ.get(ENV_BASE_URL) or "").strip().rstrip("/") or None
        if self.base_url is not None:  # a malformed URL can never answer: fail now, not after retries
            validate_base_url(self.base_url, source="LLM base URL" if base_url else ENV_BASE_URL)
        key = api_key or os.environ.get(ENV_API_KEY) or os.environ.get(ENV_OPENAI_API_KEY)
        if not key:
            if self.base_url is None:
                raise LLMConfigError(
                    f"no API key for {OPENAI_DEFAULT_URL}: set {ENV_API_KEY} or {ENV_OPENAI_API_KEY}, "
                    f"or point {ENV_BASE_URL} at another endpoint"
                )
            key = NO_KEY
        self._key = Secret(key)
        self.temperature = temperature
        self.timeout_s = float(timeout_s)
        self.retry = retry or RetryPolicy()
        self.meter = meter
        self.default_params = dict(default_params or {})
        self._sleep = sleep
        self._gate = threading.BoundedSemaphore(max_concurrency)
        self._refuses_logprobs = False  # the endpoint answered HTTP 400 to ``logprobs``: not asked again
        if cache is True:
            self.cache: ResponseCache | None = ResponseCache() if response_cache_enabled() else None
        else:  # note: an empty ResponseCache is falsy (it has __len__), so test the type
            self.cache = cache if isinstance(cache, ResponseCache) else None
        self._client = openai.OpenAI(
            api_key=key, base_url=self.base_url, timeout=self.timeout_s, max_retries=0
        )

    # -- presentation: never show the key ------------------------------------------------
    @property
    def where(self) -> str:
        """The endpoint, safe to print (the client resolves OPENAI_BASE_URL when none was given)."""
        return strip_userinfo(str(self._client.base_url).rstrip("/") or OPENAI_DEFAULT_URL)

    def __repr__(self) -> str:
        return (
            f"OpenAIChatLM(model={self.model!r}, base_url={self.where!r}, api_key='***', "
            f"timeout_s={self.timeout_s}, max_retries={self.retry.max_retries})"
        )

    __str__ = __repr__

    def __reduce__(self) -> tuple:
        raise TypeError("OpenAIChatLM holds an API key and cannot be pickled; build one per process")

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> "OpenAIChatLM":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the seam --------------------------------------------------------------------------
    def complete(self, messages: Messages, *, step: str | None = None, **params: Any) -> Completion:
        """One chat completion; served from the cache when the same request was seen."""
        msgs = validate_messages(messages)
        use_cache = bool(params.pop("use_cache", True))
        request: dict[str, Any] = dict(self.default_params)
        if self.temperature is not None:
            request.setdefault("temperature", self.temperature)
        request.update(params)
        if self._refuses_logprobs:
            request = _without_logprobs(request)

        key = cache_key(self.model, msgs, request) if (self.cache is not None and use_cache) else None
        if key is not None:
            t0 = time.perf_counter()
            hit = self.cache.get(key)  # type: ignore[union-attr]
            if hit is not None:
                done = replace(hit, step=step, latency_s=time.perf_counter() - t0)
                record_usage(done, self.meter)
                return done

        with self._gate:
            t0 = time.perf_counter()
            response, attempts = self._call(msgs, request)
            latency = time.perf_counter() - t0
        completion = self._to_completion(response, msgs, step, latency, attempts)
        if key is not None and not completion.tool_calls:  # the cache keeps text answers only
            self.cache.put(key, completion)  # type: ignore[union-attr]
        record_usage(completion, self.meter)
        return completion

    # -- transport -------------------------------------------------------------------------
    def _fail(self, cls: type[LLMError], text: str) -> LLMError:
        return cls(redact(text, self._key))

    def _call(self, msgs: list[dict[str, Any]], request: dict[str, Any]) -> tuple[Any, int]:
        """The call with retries; an endpoint that refuses token log-probabilities (HTTP 400: not every
        OpenAI-compatible server has them) is asked again without them, and, when that is answered, not asked
        for them again (a 400 for another reason, a prompt too long, is raised as it is)."""
        try:
            return self._call_with_retries(msgs, request)
        except LLMBadRequestError:
            if not request.get("logprobs"):
                raise
            answered = self._call_with_retries(msgs, _without_logprobs(request))
            self._refuses_logprobs = True
            log.warning("LLM endpoint %s refused token log-probabilities; asking without them", self.where)
            return answered

    def _call_with_retries(self, msgs: list[dict[str, Any]], request: dict[str, Any]) -> tuple[Any, int]:
        attempts = 0
        while True:
            attempts += 1
            try:
                return self._attempt(msgs, request), attempts
            except _Retryable as r:
                retries_done = attempts - 1
                if retries_done >= self.retry.max_retries:
                    raise self._give_up(r, attempts) from None
                delay = self.retry.delay(retries_done, r.retry_after)
                log.warning(
                    "%s", redact(
                        f"LLM call to {self.where} failed ({r.kind}: {r.detail}); "
                        f"retry {retries_done + 1}/{self.retry.max_retries} in {delay:.2f}s", self._key)
                )
                self._sleep(delay)

    def _give_up(self, r: _Retryable, attempts: int) -> LLMError:
        tries = f"gave up after {attempts} attempt(s)"
        if r.kind == "timeout":
            return self._fail(LLMTimeoutError, f"LLM endpoint {self.where} timed out: no response within "
                                               f"{self.timeout_s:g}s; {tries}")
        if r.kind == "rate limit":
            return self._fail(LLMRateLimitError, f"LLM endpoint {self.where} rate-limited the requests "
                                                 f"(HTTP 429: {r.detail}); {tries}")
        if r.kind == "connection":
            return self._fail(LLMConnectionError, f"LLM endpoint {self.where} dropped the connection "
                                                  f"({r.detail}); {tries}")
        return self._fail(LLMServerError, f"LLM endpoint {self.where} failed with a server error "
                                          f"({r.detail}); {tries}")

    def _attempt(self, msgs: list[dict[str, Any]], request: dict[str, Any]) -> Any:
        """One HTTP call; maps client errors to ours or to ``_Retryable``."""
        try:
            return self._client.chat.completions.create(model=self.model, messages=msgs, **request)
        except openai.APITimeoutError:
            raise _Retryable("timeout", f"no response within {self.timeout_s:g}s") from None
        except openai.APIConnectionError as exc:
            cause = exc.__cause__
            if cause is not None and type(cause).__name__ == "ConnectError":
                raise self._fail(
                    LLMConnectionError,
                    f"cannot connect to LLM endpoint {self.where}: endpoint down or wrong URL "
                    f"({one_line(str(cause), 120) or 'connection refused'})",
                ) from None
            raise _Retryable("connection", one_line(str(cause or exc), 120)) from None
        except openai.APIStatusError as exc:
            raise self._status_error(exc) from None
        except (json.JSONDecodeError, openai.APIResponseValidationError) as exc:
            raise self._fail(
                LLMBadResponseError,
                f"LLM endpoint {self.where} sent a malformed response body (not valid chat-completion "
                f"JSON: {one_line(str(exc), 100)})",
            ) from None

    def _status_error(self, exc: openai.APIStatusError) -> Exception:
        status = exc.status_code
        detail = one_line(redact(str(getattr(exc, "message", "") or ""), self._key), 160)
        if status in (401, 403):
            return self._fail(
                LLMAuthError,
                f"LLM endpoint {self.where} rejected the credentials (HTTP {status}): check "
                f"{ENV_API_KEY} / {ENV_OPENAI_API_KEY} [{detail}]",
            )
        if status == 404:
            return self._fail(
                LLMModelNotFoundError,
                f"LLM endpoint {self.where} does not know model {self.model!r} or the URL path is wrong "
                f"(HTTP 404; does the base URL end in /v1?) [{detail}]",
            )
        if status == 429:
            return _Retryable("rate limit", detail, _retry_after(exc))
        if status == 408:
            return _Retryable("timeout", "HTTP 408")
        if status >= 500:
            return _Retryable("server error", f"HTTP {status}: {detail}", _retry_after(exc))
        return self._fail(LLMBadRequestError, f"LLM endpoint {self.where} refused the request (HTTP {status}) "
                                              f"[{detail}]")

    # -- parsing ---------------------------------------------------------------------------
    def _to_completion(
        self, response: Any, msgs: list[dict[str, Any]], step: str | None, latency: float, attempts: int
    ) -> Completion:
        if isinstance(response, (str, bytes)) or not hasattr(response, "choices"):
            raise self._fail(
                LLMBadResponseError,
                f"LLM endpoint {self.where} sent a malformed response body (not chat-completion JSON: "
                f"{one_line(str(response), 80)!r})",
            )
        choices = response.choices
        if choices is None:
            raise self._fail(LLMBadResponseError,
                             f"LLM endpoint {self.where} sent a response without 'choices'")
        first = choices[0] if choices else None
        message = getattr(first, "message", None)
        text = getattr(message, "content", None) if message is not None else None
        finish = getattr(first, "finish_reason", None)
        calls = _tool_calls(message)
        if calls and not isinstance(text, str):
            text = ""
        if not calls and (not isinstance(text, str) or not text.strip()):
            hint = " (hit max_tokens before any text)" if finish == "length" else ""
            raise self._fail(
                LLMEmptyResponseError,
                f"LLM endpoint {self.where} returned an empty completion for model {self.model!r} "
                f"(finish_reason={finish}){hint}",
            )
        prompt_tokens, completion_tokens, cached, estimated = self._usage(response, msgs, text)
        return Completion(
            text=text, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
            cached_tokens=cached, latency_s=latency, model=getattr(response, "model", None) or self.model,
            step=step, finish_reason=finish, usage_estimated=estimated, attempts=attempts, tool_calls=calls,
            token_logprobs=_token_logprobs(first),
        )

    @staticmethod
    def _usage(response: Any, msgs: list[dict[str, Any]], text: str) -> tuple[int, int, int, bool]:
        """(prompt, completion, cached, estimated) from ``usage``; ~4 chars/token when absent."""
        usage = getattr(response, "usage", None)
        pt = getattr(usage, "prompt_tokens", None) if usage is not None else None
        ct = getattr(usage, "completion_tokens", None) if usage is not None else None
        if not isinstance(pt, int) or not isinstance(ct, int):
            return estimate_tokens(messages_text(msgs)), estimate_tokens(text), 0, True
        details = getattr(usage, "prompt_tokens_details", None)
        cached = getattr(details, "cached_tokens", None) if details is not None else None
        if not isinstance(cached, int):
            # llama.cpp also reports reused prompt tokens as timings.cache_n
            timings = (getattr(response, "model_extra", None) or {}).get("timings") or {}
            cached = timings.get("cache_n") if isinstance(timings, dict) else None
        return pt, ct, cached if isinstance(cached, int) else 0, False


def _without_logprobs(request: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in request.items() if k not in ("logprobs", "top_logprobs")}


def _token_logprobs(choice: Any) -> tuple[tuple[str, float], ...]:
    """The choice's ``logprobs.content`` as (token, log-probability) pairs; () when the endpoint sent none."""
    content = getattr(getattr(choice, "logprobs", None), "content", None) or ()
    pairs: list[tuple[str, float]] = []
    for item in content:
        token, logprob = getattr(item, "token", None), getattr(item, "logprob", None)
        if isinstance(token, str) and isinstance(logprob, (int, float)):
            pairs.append((token, float(logprob)))
    return tuple(pairs)


def _tool_calls(message: Any) -> tuple[ToolCall, ...]:
    """The function calls of a chat message (OpenAI ``tool_calls``); malformed entries are skipped."""
    calls = []
    for i, call in enumerate(getattr(message, "tool_calls", None) or []):
        function = getattr(call, "function", None)
        name = getattr(function, "name", None)
        if isinstance(name, str) and name:
            arguments = getattr(function, "arguments", None)
            calls.append(ToolCall(str(getattr(call, "id", None) or f"call_{i}"), name,
                                  arguments if isinstance(arguments, str) else "{}"))
    return tuple(calls)
