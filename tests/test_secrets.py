"""Secrets redaction (kgsql.secrets): known values and credential-looking patterns."""
from __future__ import annotations

import pytest

from kgsql.secrets import MASK, SECRET_ENV_VARS, known_secrets, redact, redact_uri


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SECRET_ENV_VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("var", SECRET_ENV_VARS)
def test_env_secret_values_are_masked(monkeypatch: pytest.MonkeyPatch, var: str) -> None:
    monkeypatch.setenv(var, "Tr0ub4dor&3")
    text = "connect failed with credential Tr0ub4dor&3 (retry Tr0ub4dor&3)"
    assert redact(text) == f"connect failed with credential {MASK} (retry {MASK})"


def test_passed_in_secrets_and_longest_first() -> None:
    assert redact("token abcdef and abcdefXYZ", secrets=["abcdef", "abcdefXYZ"]) == f"token {MASK} and {MASK}"
    assert redact("nothing here", secrets=[None, ""]) == "nothing here"


def test_short_values_are_not_replaced_verbatim(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEO4J_PASSWORD", "abc")
    assert redact("abc is too short to mask") == "abc is too short to mask"
    assert known_secrets() == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("key sk-proj-AbC123_def-456ghi used", f"key {MASK} used"),
        ("OPENAI said: invalid key sk-abcdefgh12345678", f"OPENAI said: invalid key {MASK}"),
        ("bolt://neo4j:hunter2@localhost:7687", f"bolt://neo4j:{MASK}@localhost:7687"),
        ("uri neo4j+s://admin:p%40ss!@db.example.com end", f"uri neo4j+s://admin:{MASK}@db.example.com end"),
        ("password=hunter2", f"password={MASK}"),
        ("KGSQL_GRAPH_PASSWORD=hunter2 next", f"KGSQL_GRAPH_PASSWORD={MASK} next"),
        ("neo4j.password: hunter2", f"neo4j.password: {MASK}"),
        ('{"api_key": "abc def"}', f'{{"api_key": "{MASK}"}}'),
        ("?user=a&password=x1&db=b", f"?user=a&password={MASK}&db=b"),
        ("Authorization: Bearer eyJhbGciOi.x-y_z", f"Authorization: Bearer {MASK}"),
        ("auth_name=EPSG srid=4326", "auth_name=EPSG srid=4326"),
        ("bolt://localhost:7687", "bolt://localhost:7687"),
        ("no secrets in this sentence", "no secrets in this sentence"),
    ],
)
def test_patterns(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_redact_is_idempotent() -> None:
    once = redact("bolt://u:pw@h password=x sk-abcdefghijklmnop")
    assert redact(once) == once


def test_empty_text() -> None:
    assert redact("") == ""


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("bolt://neo4j:hunter2@localhost:7687", f"bolt://neo4j:{MASK}@localhost:7687"),
        ("neo4j://user:pa:ss@host/db", f"neo4j://user:{MASK}@host/db"),
        ("bolt://localhost:7687", "bolt://localhost:7687"),
        ("bolt://user@host:7687", "bolt://user@host:7687"),
        ("http://h/v1?api_key=zzz&model=m", f"http://h/v1?api_key={MASK}&model=m"),
        ("http://h/v1?model=a b", "http://h/v1?model=a b"),
        ("http://[::1", "http://[::1"),
    ],
)
def test_redact_uri(uri: str, expected: str) -> None:
    assert redact_uri(uri) == expected


def test_redact_uri_masks_env_secret_anywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KGSQL_GRAPH_PASSWORD", "hunter22")
    assert "hunter22" not in redact_uri("bolt://localhost:7687/hunter22")
