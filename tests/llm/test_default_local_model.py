"""After ``./run demo`` (which pulls only the 0.5B) ``ask`` uses that model instead of failing."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from kgsql.llm import factory
from kgsql.llm.models import MODELS


def fake_pull(folder: Path, name: str) -> None:
    spec = MODELS[name]
    with open(folder / spec.filename, "wb") as fh:
        fh.truncate(spec.size)  # sparse: only the size is checked


def test_the_pulled_model_is_used_when_the_default_is_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("KGSQL_MODELS_DIR", str(tmp_path))
    monkeypatch.setattr(factory, "_said_fallback", False)
    assert factory.default_local_model() == "qwen2.5-coder-1.5b"  # nothing pulled: the server says how to pull
    fake_pull(tmp_path, "qwen2.5-coder-0.5b")
    assert factory.default_local_model() == "qwen2.5-coder-0.5b"
    assert factory.default_local_model() == "qwen2.5-coder-0.5b"
    err = capsys.readouterr().err
    assert err.count("using the pulled local model qwen2.5-coder-0.5b") == 1
    assert "python -m kgsql.llm pull qwen2.5-coder-1.5b" in err
    fake_pull(tmp_path, "qwen2.5-coder-1.5b")
    assert factory.default_local_model() == "qwen2.5-coder-1.5b"
    monkeypatch.setenv("KGSQL_LOCAL_MODEL", "qwen2.5-coder-0.5b")
    assert factory.default_local_model() == "qwen2.5-coder-0.5b"
    assert os.path.getsize(tmp_path / MODELS["qwen2.5-coder-0.5b"].filename) == MODELS["qwen2.5-coder-0.5b"].size
