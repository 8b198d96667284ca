"""Token log-probabilities: read from a real HTTP endpoint, asked again without them where refused, kept
by the response cache, the records and their replay."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from llm_stub import SECRET_KEY, Reply, StubServer, chat_body

from kgsql.eval.replay import ReplayLM
from kgsql.eval.runner import call_record
from kgsql.llm import LLMBadRequestError, OpenAIChatLM
from kgsql.llm.base import Completion
from kgsql.llm.cache import ResponseCache
from kgsql.llm.trace import Trace

MSGS = [{"role": "user", "content": "How many singers?"}]
TOKENS = [("SELECT", -0.01), (" count", -0.7), ("(*)", -0.02), (" FROM", 0.0), (" singer", -0.3)]


def with_logprobs(request: dict[str, Any]) -> Reply:
    body = chat_body("".join(t for t, _ in TOKENS))
    if request["json"].get("logprobs"):
        body["choices"][0]["logprobs"] = {"content": [
            {"token": t, "logprob": lp, "bytes": list(t.encode()), "top_logprobs": []} for t, lp in TOKENS]}
    return Reply(body=body)


def test_the_same_call_brings_each_tokens_log_probability(stub: StubServer) -> None:
    stub.always(with_logprobs)
    lm = OpenAIChatLM("m", base_url=stub.base_url, api_key=SECRET_KEY, cache=None)
    done = lm.complete(MSGS, logprobs=True)
    assert stub.requests[-1]["json"]["logprobs"] is True
    assert done.token_logprobs == tuple(TOKENS) and done.text == "SELECT count(*) FROM singer"
    assert lm.complete(MSGS).token_logprobs == ()  # not asked, not sent


def test_an_endpoint_that_refuses_them_is_asked_again_without(stub: StubServer) -> None:
    def refuses(request: dict[str, Any]) -> Reply:
        if "logprobs" in request["json"]:
            return Reply(status=400, body={"error": {"message": "logprobs is not supported"}})
        return Reply(body=chat_body("SELECT 1"))

    stub.always(refuses)
    lm = OpenAIChatLM("m", base_url=stub.base_url, api_key=SECRET_KEY, cache=None)
    assert lm.complete(MSGS, logprobs=True, top_logprobs=2).text == "SELECT 1"
    assert ["logprobs" in r["json"] for r in stub.requests] == [True, False]
    assert lm.complete(MSGS, logprobs=True).text == "SELECT 1"  # remembered: one request, without them
    assert ["logprobs" in r["json"] for r in stub.requests] == [True, False, False]


def test_a_request_refused_for_another_reason_keeps_asking_for_them(stub: StubServer) -> None:
    stub.script(Reply(status=400, body={"error": {"message": "prompt too long"}}),
                Reply(status=400, body={"error": {"message": "prompt too long"}}))
    stub.always(with_logprobs)
    lm = OpenAIChatLM("m", base_url=stub.base_url, api_key=SECRET_KEY, cache=None)
    with pytest.raises(LLMBadRequestError):
        lm.complete(MSGS, logprobs=True)
    assert lm.complete(MSGS, logprobs=True).token_logprobs == tuple(TOKENS)  # still asked for them
    assert ["logprobs" in r["json"] for r in stub.requests] == [True, False, True]


def test_the_cache_keeps_them_and_an_older_cache_file_gains_the_column(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:  # the responses table as releases before this one wrote it
        conn.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, text TEXT NOT NULL, "
                     "prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, cached_tokens INTEGER NOT "
                     "NULL, finish_reason TEXT, usage_estimated INTEGER NOT NULL, latency_s REAL NOT NULL, "
                     "created_at REAL NOT NULL)")
        conn.execute("INSERT INTO responses VALUES ('old', 'm', 'SELECT 1', 1, 1, 0, 'stop', 0, 0.1, 0)")
    cache = ResponseCache(path)
    assert cache.get("old") is not None and cache.get("old").token_logprobs == ()  # type: ignore[union-attr]
    cache.put("new", Completion(text="SELECT count(*) FROM singer", prompt_tokens=3, completion_tokens=5,
                                token_logprobs=tuple(TOKENS)))
    again = ResponseCache(path).get("new")
    assert again is not None and again.from_cache and again.token_logprobs == tuple(TOKENS)


class _TokensLM:
    model = "m"

    def complete(self, messages: Any, *, step: str | None = None, **params: Any) -> Completion:
        return Completion(text="SELECT 1", prompt_tokens=1, completion_tokens=1, step=step,
                          token_logprobs=(("SELECT", -0.1), (" 1", -1.25)))


def test_records_keep_them_and_a_replay_answers_them() -> None:
    trace = Trace()
    trace.complete(_TokensLM(), "sql", MSGS)  # type: ignore[arg-type]
    record = call_record(trace.to_list()[0])
    assert record["logprobs"] == [["SELECT", -0.1], [" 1", -1.25]]
    replay = ReplayLM({"q1": [json.loads(json.dumps(record))]})  # as a records file reads back
    replay.begin("q1")
    assert replay.complete(MSGS, step="sql").token_logprobs == (("SELECT", -0.1), (" 1", -1.25))
