"""Where kgsql keeps LLM state on disk, how secrets are kept out of output, and
what an endpoint URL must look like.

Paths come from environment variables first so CI and tests can point them at
a scratch folder without touching the user's real cache.
"""
from __future__ import annotations

import os
import urllib.parse
from pathlib import Path

from kgsql.paths import ENV_CACHE_DIR, cache_root
from kgsql.secrets import redact_uri

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


def validate_base_url(url: str, *, source: str = ENV_BASE_URL) -> str:
    """``url`` when it is an absolute http(s) URL with a host, else LLMConfigError in one line.

    A malformed endpoint (``htp:/x``, ``http//x``, ``http://:8080``) can never
    answer, so it fails here at once instead of after the client's retries.
    ``source`` names where the URL came from in the message.
    """
    from kgsql.llm.errors import LLMConfigError

    text = url.strip()
    parts = urllib.parse.urlsplit(text)
    if parts.scheme.lower() not in ("http", "https"):
        problem = (f"scheme '{parts.scheme}' is not http or https" if parts.scheme and parts.netloc
                   else "it does not start with http:// or https://")
    elif not parts.hostname:
        problem = "it names no host"
    else:
        try:
            parts.port  # noqa: B018 - raises ValueError for a port out of range or not a number
            problem = ""
        except ValueError:
            problem = "its port is not a number from 0 to 65535"
    if problem:
        shown = one_line(strip_userinfo(text), 120)
        raise LLMConfigError(f"{source} '{shown}' is not a valid endpoint URL: {problem} "
                             f"(expected e.g. http://127.0.0.1:8080/v1)")
    return text


def strip_userinfo(url: str) -> str:
    """``url`` without any ``user:password@`` and with credential query values (``?key=``,
    ``?token=``...) masked: safe to put into a message."""
    parts = urllib.parse.urlsplit(url)
    if "@" in parts.netloc:
        parts = parts._replace(netloc=parts.netloc.rpartition("@")[2])
    return redact_uri(urllib.parse.urlunsplit(parts))


def one_line(text: str, limit: int = 200) -> str:
    """Collapse whitespace and cut long server text so errors stay one line."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
