"""A model endpoint for conversation tests: the rewrite call gets a numbered standalone list, the rest SQL;
and ``kgsql ask`` as a user runs it."""
from __future__ import annotations

import subprocess
import sys
from typing import Any

from llm_stub import Reply, StubServer, chat_body

from kgsql.generate.rewrite import REWRITE_SYSTEM

SQL = "SELECT name FROM cities WHERE population > 100000"
FIRST, FOLLOW = "Which cities are in Eastvale?", "Only those with more than 100000 people"
ALONE = "Which cities in Eastvale have more than 100000 people?"


def answer(request: dict[str, Any]) -> Reply:
    """The rewrite call gets the numbered standalone list, every other call the SQL."""
    messages = request["json"].get("messages") or []
    if messages and messages[0]["content"] == REWRITE_SYSTEM:
        return Reply(body=chat_body(f"1. {FIRST}\n2. {ALONE}"))
    return Reply(body=chat_body(SQL))


def rewrites(stub: StubServer) -> list[str]:
    """The last message of every rewrite call the stub was sent."""
    return [r["json"]["messages"][-1]["content"] for r in stub.requests
            if (r["json"].get("messages") or [{}])[0].get("content") == REWRITE_SYSTEM]


def ask(env: dict[str, str], db: str, question: str, *more: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kgsql", "ask", "--db", db, question, *more], capture_output=True,
                          text=True, env=env, timeout=600)


def sql_prompts(stub: StubServer) -> list[str]:
    """The last message of every other call (the SQL calls): under the default ``context=history`` a
    follow-up's carries the earlier turns."""
    return [r["json"]["messages"][-1]["content"] for r in stub.requests
            if (r["json"].get("messages") or [{}])[0].get("content") != REWRITE_SYSTEM]
