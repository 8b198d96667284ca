"""Replay a run's recorded model outputs under other options: exact ablations of the loop, no model.

An evaluation record keeps every LLM call's step, cost and raw output. Many
questions about a method are about what it does *after* the model answered:
how many sampled candidates the vote needs, what the correction loop adds.
``eval run --replay RECORDS`` answers them exactly: the method runs as
usual (retrieval, prompts, checks, the database), but each model call is
answered with the recorded output of the same question's same call, in
order per step, and costs the recorded seconds and tokens. A call the
recording does not hold (the new options ask for more), or whose prompt
differs from the recorded one (records carry a prompt fingerprint), makes
the question *not replayable*: it is logged unscored, never guessed.
"""
from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any, Sequence

from kgsql.errors import InputError, KgsqlError
from kgsql.llm.base import LM, Completion, Messages

NOT_REPLAYABLE = "not_replayable"


class NotReplayable(KgsqlError):
    """The recording cannot answer a call the replayed method makes."""


def prompt_fingerprint(messages: Messages) -> str:
    """A short hash of the messages sent (sampled calls of one step differ by seed, i.e. by their order)."""
    blob = json.dumps([dict(m) for m in messages], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


class ReplayLM(LM):
    """Answers each question's calls from its record; ``begin`` names the question first."""

    def __init__(self, calls: dict[str, list[dict[str, Any]]], model: str = "replay") -> None:
        self.model = model
        self._calls = calls
        self._lock = threading.Lock()
        self._current: str | None = None
        self._used: dict[str, int] = {}
        self.problem: str | None = None

    @classmethod
    def from_records(cls, path: str | Path) -> "ReplayLM":
        from kgsql.eval.records import read_records

        p = Path(path)
        if not p.is_file():
            raise InputError(f"--replay: no records file at {p}")
        calls: dict[str, list[dict[str, Any]]] = {}
        for rec in read_records(p):
            recorded = rec.extra.get("calls")
            if isinstance(recorded, list):
                calls[rec.id] = recorded
        if not calls:
            raise InputError(f"--replay: {p} holds no records with model calls")
        return cls(calls)

    def knows(self, question_id: str) -> bool:
        return question_id in self._calls

    def begin(self, question_id: str) -> None:
        """The next calls belong to this question (one question at a time)."""
        with self._lock:
            self._current, self._used, self.problem = question_id, {}, None

    def complete(self, messages: Messages, *, step: str | None = None, **params: Any) -> Completion:
        with self._lock:
            key = step or "?"
            index = self._used.get(key, 0)
            self._used[key] = index + 1
            recorded = [c for c in self._calls.get(self._current or "", []) if (c.get("step") or "?") == key]
            if index >= len(recorded):
                self.problem = f"the recording has no call {index + 1} of step {key}"
                raise NotReplayable(self.problem)
            call = recorded[index]
            sha = call.get("prompt_sha")
            if sha and sha != prompt_fingerprint(messages):
                self.problem = f"call {index + 1} of step {key} has another prompt than the recorded one"
                raise NotReplayable(self.problem)
        return Completion(text=str(call.get("output") or ""), prompt_tokens=int(call.get("prompt_tokens") or 0),
                          completion_tokens=int(call.get("completion_tokens") or 0),
                          cached_tokens=int(call.get("cached_tokens") or 0),
                          latency_s=float(call.get("seconds") or 0.0), model=self.model, step=step,
                          finish_reason="stop",
                          token_logprobs=tuple((str(t[0]), float(t[1])) for t in call.get("logprobs") or ()))


class Replaying:
    """A method whose model calls ``lm`` answers from the records of the question being asked."""

    def __init__(self, method: Any, lm: ReplayLM) -> None:
        self.method = method
        self.lm = lm

    def __getattr__(self, name: str) -> Any:  # schema(), options...: the method's own
        return getattr(self.method, name)

    def ask_example(self, question_id: str, question: str, db: str, evidence: str | None = None,
                    history: Sequence[str] | None = None, history_sql: Sequence[str] | None = None) -> Any:
        if not self.lm.knows(question_id):
            raise NotReplayable("the recording does not hold this question")
        self.lm.begin(question_id)
        more: dict[str, Any] = {"history": list(history)} if history else {}  # a conversation's turn: as asked
        if history and history_sql is not None:  # context=history: the SQL of the earlier turns too
            more["history_sql"] = list(history_sql)
        answer = self.method.ask(question, db=db, evidence=evidence, **more)
        if self.lm.problem:
            raise NotReplayable(self.lm.problem)
        return answer

