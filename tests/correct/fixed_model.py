"""A generator for correction-loop tests that writes the same reply every round and counts its calls:
what a small model that will not change its query does (the repairs must fix it without another call)."""
from __future__ import annotations

from typing import Any


class FixedQuery:
    stepwise = False

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.calls = 0

    def generate(self, prompt: Any, question: str, trace: Any, **params: Any) -> tuple[str, str]:
        self.calls += 1
        return self.reply, ""
