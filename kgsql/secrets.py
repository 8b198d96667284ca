"""Keep credentials out of logs, error messages, reports and prompts.

Anything kgsql prints or stores that may contain configuration (graph URIs,
LLM endpoints, exception text) goes through :func:`redact` first. Two nets:
the actual secret values kgsql knows about (environment variables plus any
the caller passes), and patterns that look like credentials whatever their
value (``sk-...`` API keys, ``user:password@`` in URIs, ``password=...``
settings, ``Bearer`` tokens).
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from typing import Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["MASK", "SECRET_ENV_VARS", "known_secrets", "redact", "redact_uri"]

MASK: Final = "***"
SECRET_ENV_VARS: Final = ("KGSQL_LLM_API_KEY", "OPENAI_API_KEY", "KGSQL_GRAPH_PASSWORD", "NEO4J_PASSWORD")
#: Values shorter than this are not replaced verbatim: masking every "neo4j"
#: or "abc" in a text would destroy it while protecting nothing.
MIN_SECRET_LENGTH: Final = 4

#: Setting names whose value is a credential, with any prefix: ``password``,
#: ``KGSQL_GRAPH_PASSWORD``, ``neo4j.password``, ``api_key``, ``auth_token``...
_SENSITIVE_KEYS = (
    r"(?:[A-Za-z0-9]+[_.\-])*(?:password|passwd|pwd|secret|token|api[_\-]?key|apikey|access[_\-]?key)"
)
_PATTERNS: Final[tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...]] = (
    # OpenAI-style keys: sk-..., sk-proj-...
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"), MASK),
    # scheme://user:password@host  (password may hold anything but '@' / whitespace)
    (re.compile(r"(?P<head>\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s/:@]*:)[^\s@/]+(?=@)"), r"\g<head>" + MASK),
    # password=..., api_key: "...", token='...'
    (
        re.compile(
            r"(?P<key>\b" + _SENSITIVE_KEYS + r"\b[\"']?\s*[=:]\s*)"
            r"(?:(?P<q>[\"'])(?!\*\*\*(?P=q))[^\"'\n]*(?P=q)|(?!\*\*\*)[^\s\"'&,;]+)",
            re.IGNORECASE,
        ),
        lambda m: m.group("key") + (m.group("q") or "") + MASK + (m.group("q") or ""),
    ),
    # Authorization: Bearer <token>
    (re.compile(r"(?P<head>\bBearer\s+)[A-Za-z0-9._~+/=\-]+", re.IGNORECASE), r"\g<head>" + MASK),
)


def known_secrets(extra: Iterable[str | None] | None = None) -> list[str]:
    """Secret values from the environment and ``extra``, longest first (so a
    secret containing another is masked whole)."""
    values = {os.environ.get(name, "") for name in SECRET_ENV_VARS}
    values.update(v for v in (extra or ()) if v)
    return sorted((v for v in values if len(v) >= MIN_SECRET_LENGTH), key=len, reverse=True)


def redact(text: str, secrets: Iterable[str | None] | None = None) -> str:
    """``text`` with known secret values and credential-looking parts replaced by ``***``."""
    if not text:
        return text
    out = str(text)
    for value in known_secrets(secrets):
        out = out.replace(value, MASK)
    for pattern, replacement in _PATTERNS:
        out = pattern.sub(replacement, out)
    return out


def redact_uri(uri: str) -> str:
    """``uri`` with the password of its user-info and sensitive query values masked.

    ``bolt://neo4j:hunter2@localhost:7687`` -> ``bolt://neo4j:***@localhost:7687``.
    Falls back to :func:`redact` for strings that are not parseable URIs.
    """
    try:
        parts = urlsplit(uri)
        _ = parts.port  # raises ValueError on a malformed port
    except ValueError:
        return redact(uri)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        if ":" in userinfo:
            user = userinfo.split(":", 1)[0]
            netloc = f"{user}:{MASK}@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        key_re = re.compile(_SENSITIVE_KEYS, re.IGNORECASE)
        if any(key_re.fullmatch(k) and v for k, v in pairs):
            query = urlencode([(k, MASK if key_re.fullmatch(k) and v else v) for k, v in pairs], safe="*")
    return redact(urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment)))
