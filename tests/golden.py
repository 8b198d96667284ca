"""Golden-file assertions for prompt text.

``assert_golden(path, text)`` compares ``text`` with the file; with
``KGSQL_UPDATE_GOLDEN=1`` it (re)writes the file instead, so a deliberate
prompt change is one command and the diff shows up in review.
Importable from any test folder (pytest puts tests/ on sys.path for conftest.py).
"""
from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import pytest

UPDATE = os.environ.get("KGSQL_UPDATE_GOLDEN") == "1"


def messages_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """Chat messages as reviewable text: ``=== role ===`` then the content."""
    return "\n".join(f"=== {m['role']} ===\n{m['content']}" for m in messages) + "\n"


def assert_golden(path: Path, text: str) -> None:
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    if not path.exists():
        pytest.fail(f"golden file {path} is missing; create it with KGSQL_UPDATE_GOLDEN=1")
    expected = path.read_text(encoding="utf-8")
    if text != expected:
        diff = "\n".join(difflib.unified_diff(expected.splitlines(), text.splitlines(),
                                              "golden", "actual", lineterm="", n=2))
        pytest.fail(f"{path.name} differs from its golden file (KGSQL_UPDATE_GOLDEN=1 to accept):\n{diff}")
