"""Persistent response cache so re-running a question or an eval does not pay twice.

A SQLite file (stdlib ``sqlite3``, WAL mode so several processes can share it)
maps sha256(model + messages + parameters) to the completion. The key never
includes the endpoint URL or credentials: a local server's port changes every
start, and API keys must never be written to disk. Prompts and completions
quote cell values, so the file is private: 0600 in a 0700 folder (SQLite gives
its ``-wal``/``-shm`` files the database file's mode).
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kgsql.llm.base import Completion, Messages
from kgsql.llm.config import response_cache_path
from kgsql.paths import open_private, private_dir

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cached_tokens INTEGER NOT NULL,
    finish_reason TEXT,
    usage_estimated INTEGER NOT NULL,
    latency_s REAL NOT NULL,
    created_at REAL NOT NULL,
    token_logprobs TEXT
)
"""
#: Columns added since the first release: an older file gains them when opened.
_ADDED_COLUMNS = {"token_logprobs": "TEXT"}


def cache_key(model: str, messages: Messages, params: Mapping[str, Any]) -> str | None:
    """Stable hash of a request, or None when params are not JSON (then skip caching)."""
    try:
        blob = json.dumps(
            {"model": model, "messages": list(messages), "params": dict(params)},
            sort_keys=True, ensure_ascii=False, separators=(",", ":"),
        )
    except (TypeError, ValueError):
        return None
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """SQLite-backed completion store, safe to share between threads."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else response_cache_path()
        private_dir(self.path.parent)
        open_private(self.path, "ab").close()  # created 0600 (or tightened) before SQLite opens it
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(self.path), timeout=30.0, check_same_thread=False)
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(_SCHEMA)
            have = {row[1] for row in self._conn.execute("PRAGMA table_info(responses)")}
            for name, kind in _ADDED_COLUMNS.items():
                if name not in have:
                    self._conn.execute(f"ALTER TABLE responses ADD COLUMN {name} {kind}")
            self._conn.commit()

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r})"

    def get(self, key: str) -> Completion | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT model, text, prompt_tokens, completion_tokens, cached_tokens, finish_reason,"
                " usage_estimated, token_logprobs FROM responses WHERE key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        model, text, pt, ct, cached, finish, est, logprobs = row
        return Completion(
            text=text, prompt_tokens=pt, completion_tokens=ct, cached_tokens=cached, latency_s=0.0,
            model=model, finish_reason=finish, from_cache=True, usage_estimated=bool(est),
            token_logprobs=tuple((str(t), float(lp)) for t, lp in json.loads(logprobs)) if logprobs else (),
        )

    def put(self, key: str, c: Completion) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO responses (key, model, text, prompt_tokens, completion_tokens,"
                " cached_tokens, finish_reason, usage_estimated, latency_s, created_at, token_logprobs)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (key, c.model, c.text, c.prompt_tokens, c.completion_tokens, c.cached_tokens,
                 c.finish_reason, int(c.usage_estimated), c.latency_s, time.time(),
                 json.dumps(c.token_logprobs) if c.token_logprobs else None),
            )
            self._conn.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def clear(self) -> None:
        with self._lock:
            self._conn.execute("DELETE FROM responses")
            self._conn.commit()

    def close(self) -> None:
        with self._lock:
            self._conn.close()
