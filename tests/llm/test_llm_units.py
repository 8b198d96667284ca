"""Small pure pieces: cache keys, backoff, token estimates, secret handling."""
from __future__ import annotations

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kgsql.llm import Completion, RetryPolicy, UsageMeter, estimate_tokens
from kgsql.llm.cache import ResponseCache, cache_key
from kgsql.llm.config import Secret, one_line, redact

params_st = st.dictionaries(st.sampled_from(["temperature", "max_tokens", "stop", "seed"]),
                            st.one_of(st.integers(0, 100), st.floats(0, 2), st.text(max_size=5)))


@given(params_st)
def test_cache_key_ignores_dict_order(params: dict) -> None:
    msgs = [{"role": "user", "content": "q"}]
    reordered = dict(reversed(list(params.items())))
    assert cache_key("m", msgs, params) == cache_key("m", msgs, reordered)
    assert cache_key("m", msgs, params) != cache_key("m2", msgs, params)


def test_cache_key_skips_unserialisable_params() -> None:
    assert cache_key("m", [{"role": "user", "content": "q"}], {"x": object()}) is None


@given(st.integers(0, 20), st.floats(0, 1), st.floats(0, 10))
def test_backoff_is_bounded(i: int, base: float, cap: float) -> None:
    p = RetryPolicy(max_retries=3, base_delay_s=base, max_delay_s=cap)
    assert 0 <= p.delay(i) <= cap * 1.5 + 1e-9
    assert RetryPolicy(jitter=False, base_delay_s=0.1, max_delay_s=1).delay(i) == min(0.1 * 2 ** i, 1)


def test_retry_policy_rejects_negative_values() -> None:
    with pytest.raises(ValueError):
        RetryPolicy(max_retries=-1)


def test_estimate_tokens() -> None:
    assert estimate_tokens("") == 0 and estimate_tokens("abcd") == 1 and estimate_tokens("abcde") == 2


def test_secret_never_shows() -> None:
    s = Secret("sk-very-secret-123")
    assert "sk-very" not in f"{s!r} {s} {s:>20}"
    assert s.reveal() == "sk-very-secret-123"
    with pytest.raises(TypeError):
        pickle.dumps(s)
    assert redact("key=sk-very-secret-123!", s) == "key=***!"
    assert one_line("a\n  b\tc") == "a b c" and len(one_line("x" * 500)) == 200


def test_cache_round_trip(tmp_path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    assert len(cache) == 0 and cache.get("k") is None
    cache.put("k", Completion("SELECT 1", 10, 2, cached_tokens=4, latency_s=0.5, model="m",
                              finish_reason="stop"))
    hit = cache.get("k")
    assert hit is not None and hit.from_cache and hit.text == "SELECT 1"
    assert (hit.prompt_tokens, hit.completion_tokens, hit.cached_tokens, hit.model) == (10, 2, 4, "m")
    cache.clear()
    assert len(cache) == 0


def test_usage_meter_totals_and_reset() -> None:
    m = UsageMeter("x")
    m.record(Completion("a", 10, 2, cached_tokens=5, latency_s=1.0, step="sql"))
    m.record(Completion("a", 10, 2, from_cache=True, step="sql"))
    t = m.totals()
    assert (t.calls, t.cache_hits, t.prompt_tokens, t.paid_prompt_tokens, t.cached_tokens) == (2, 1, 20, 10, 5)
    assert t.as_dict()["total_tokens"] == 24
    m.reset()
    assert m.totals().calls == 0
