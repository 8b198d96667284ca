"""Where kgsql keeps LLM state on disk, and how secrets are kept out of output.

Paths come from environment variables first so CI and tests can point them at
a scratch folder without touching the user's real cache.
"""
from __future__ import annotations

import os
from pathlib import Path

from kgsql.paths import ENV_CACHE_DIR, cache_root

ENV_BASE_URL = "KGSQL_LLM_BASE_URL"
ENV_MODEL = "KGSQL_LLM_MODEL"
ENV_API_KEY = "KGSQL_LLM_API_KEY"
ENV_OPENAI_API_KEY = "OPENAI_API_KEY"
ENV_MODELS_DIR = "KGSQL_MODELS_DIR"
ENV_LOCAL_MODEL = "KGSQL_LOCAL_MODEL"
ENV_LLM_CACHE = "KGSQL_LLM_CACHE"  # "0"/"off" disables the response cache

DEFAULT_LOCAL_MODEL = "qwen2.5-coder-1.5b"


def cache_dir() -> Path:
    """Root of kgsql's cache: ``$KGSQL_CACHE_DIR`` or the per-user cache dir (~/.cache/kgsql)."""
    return cache_root()


def models_dir() -> Path:
    """Where pulled GGUF files live: ``$KGSQL_MODELS_DIR`` or ``<cache_dir>/models``.

    Separate from the cache dir so tests can sandbox the response cache while
    still finding a model pulled once into the real cache.
    """
    env = os.environ.get(ENV_MODELS_DIR)
    return Path(env).expanduser() if env else cache_dir() / "models"


def response_cache_path() -> Path:
    """The SQLite file that stores LLM responses."""
    return cache_dir() / "llm-cache.sqlite"


def response_cache_enabled() -> bool:
    """False when ``KGSQL_LLM_CACHE`` is 0/off/false/no."""
    return os.environ.get(ENV_LLM_CACHE, "1").strip().lower() not in {"0", "off", "false", "no"}


class Secret:
    """Holds an API key so that repr/str/format never show it.

    Call ``reveal()`` only at the point of handing it to the HTTP client.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return "***"

    def __reduce__(self) -> tuple:  # pragma: no cover - refuse to pickle the key
        raise TypeError("Secret values cannot be pickled")


def redact(text: str, *secrets: Secret | str | None) -> str:
    """Replace every occurrence of each secret in ``text`` with ``***``."""
    for s in secrets:
        raw = s.reveal() if isinstance(s, Secret) else s
        if raw and len(raw) >= 4:
            text = text.replace(raw, "***")
    return text


def one_line(text: str, limit: int = 200) -> str:
    """Collapse whitespace and cut long server text so errors stay one line."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
