"""Fixtures for the LLM layer: an isolated environment and a misbehaving HTTP stub."""
from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_stub import StubServer

from kgsql.llm.config import models_dir

# Resolve where pulled models live *before* tests sandbox the cache dir, so the
# integration tests still find a model pulled into the real cache.
REAL_MODELS_DIR = models_dir()

_ENV_TO_CLEAR = [
    "KGSQL_LLM_BASE_URL", "KGSQL_LLM_MODEL", "KGSQL_LLM_API_KEY", "OPENAI_API_KEY",
    "OPENAI_BASE_URL", "KGSQL_LOCAL_MODEL", "KGSQL_LLM_CACHE", "HF_ENDPOINT",
]


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never touch the user's response cache or pick up their endpoint/keys."""
    for name in _ENV_TO_CLEAR:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KGSQL_CACHE_DIR", str(tmp_path / "kgsql-cache"))
    monkeypatch.setenv("KGSQL_MODELS_DIR", str(REAL_MODELS_DIR))


@pytest.fixture
def stub() -> Iterator[StubServer]:
    server = StubServer()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def closed_port() -> int:
    """A port on 127.0.0.1 with nothing listening (connection refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
